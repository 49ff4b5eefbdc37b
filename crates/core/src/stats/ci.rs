//! Confidence intervals of a mean over repeated runs (Student's t).
use super::welch::{effective_size_and_r1, student_t_two_sided};

/// The mean of repeated measurements with the half-width of its two-sided
/// confidence interval at `level` (0.95 for 95%).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MeanCi {
    pub n: usize,
    pub mean: f64,
    pub stdev: f64,
    /// `None` with a single measurement: one run says nothing about spread.
    pub half_width: Option<f64>,
    pub level: f64,
}

/// The t value with P(|T| > t) = 1 - level, by bisection on the tail.
pub(crate) fn t_critical(level: f64, df: f64) -> f64 {
    let alpha = 1.0 - level;
    let (mut lo, mut hi) = (0.0f64, 1e3f64);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if student_t_two_sided(mid, df) > alpha {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// Mean and confidence interval of `x`; `None` when `x` is empty.
pub fn mean_ci(x: &[f64], level: f64) -> Option<MeanCi> {
    if x.is_empty() {
        return None;
    }
    let n = x.len();
    let mean = x.iter().sum::<f64>() / n as f64;
    if n == 1 {
        return Some(MeanCi {
            n,
            mean,
            stdev: 0.0,
            half_width: None,
            level,
        });
    }
    let var = x.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (n as f64 - 1.0);
    let stdev = var.sqrt();
    let half = t_critical(level, n as f64 - 1.0) * stdev / (n as f64).sqrt();
    Some(MeanCi {
        n,
        mean,
        stdev,
        half_width: Some(half),
        level,
    })
}

/// The mean of one run's per-interval samples with the half-width of its
/// confidence interval at `level`, over the series' effective size (see
/// [`super::welch`]): what `--until` stops on and `compare` tests with.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SeriesCi {
    pub mean: f64,
    pub half_width: f64,
    pub n: usize,
    pub n_eff: f64,
    /// Lag-1 autocorrelation (clamped to [0, 0.95]).
    pub r1: f64,
}

/// `None` with fewer than 3 samples.
pub fn series_ci(x: &[f64], level: f64) -> Option<SeriesCi> {
    if x.len() < 3 {
        return None;
    }
    let n = x.len();
    let mean = x.iter().sum::<f64>() / n as f64;
    let var = x.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (n as f64 - 1.0);
    let (n_eff, r1) = effective_size_and_r1(x);
    let half_width = t_critical(level, n_eff - 1.0) * (var / n_eff).sqrt();
    Some(SeriesCi {
        mean,
        half_width,
        n,
        n_eff,
        r1,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn critical_values_match_the_tables() {
        // t(0.975; 1) = 12.706, t(0.975; 4) = 2.776, t(0.975; 30) = 2.042, t(0.995; 9) = 3.250
        assert!((t_critical(0.95, 1.0) - 12.706).abs() < 0.01);
        assert!((t_critical(0.95, 4.0) - 2.776).abs() < 0.001);
        assert!((t_critical(0.95, 30.0) - 2.042).abs() < 0.001);
        assert!((t_critical(0.99, 9.0) - 3.250).abs() < 0.001);
    }

    #[test]
    fn intervals_follow_the_spread_and_the_count() {
        let ci = mean_ci(&[10.0, 12.0, 14.0], 0.95).unwrap();
        assert_eq!(ci.mean, 12.0);
        assert!((ci.stdev - 2.0).abs() < 1e-12);
        // 4.303 * 2 / sqrt(3)
        assert!((ci.half_width.unwrap() - 4.303 * 2.0 / 3f64.sqrt()).abs() < 0.01);
        let one = mean_ci(&[5.0], 0.95).unwrap();
        assert_eq!(one.half_width, None);
        assert!(mean_ci(&[], 0.95).is_none());
        let same = mean_ci(&[3.0, 3.0, 3.0, 3.0], 0.95).unwrap();
        assert_eq!(same.half_width, Some(0.0));
    }
}
