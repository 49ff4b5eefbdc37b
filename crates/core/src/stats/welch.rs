//! Welch's t-test on per-interval samples of two runs, with standard errors
//! that account for autocorrelation: interval throughputs and latencies of one
//! run are not independent (a compaction slows several intervals in a row), so
//! each run's sample count is shrunk to its effective size
//! n (1 - r1) / (1 + r1), r1 being the lag-1 autocorrelation.

/// The test's outcome for one metric.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Welch {
    pub mean_a: f64,
    pub mean_b: f64,
    pub t: f64,
    pub df: f64,
    /// Two-sided p-value.
    pub p: f64,
    pub n_eff_a: f64,
    pub n_eff_b: f64,
}

fn mean(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len() as f64
}

fn variance(x: &[f64], m: f64) -> f64 {
    x.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (x.len() as f64 - 1.0)
}

/// Lag-1 autocorrelation, clamped to [0, 0.95] (negative correlation would
/// inflate the effective size; we never claim more than the sample count).
pub(crate) fn lag1_autocorrelation(x: &[f64]) -> f64 {
    if x.len() < 3 {
        return 0.0;
    }
    let m = mean(x);
    let den: f64 = x.iter().map(|v| (v - m) * (v - m)).sum();
    if den == 0.0 {
        return 0.0;
    }
    let num: f64 = x.windows(2).map(|w| (w[0] - m) * (w[1] - m)).sum();
    (num / den).clamp(0.0, 0.95)
}

/// Effective sample size of an autocorrelated series.
pub(crate) fn effective_size(x: &[f64]) -> f64 {
    effective_size_and_r1(x).0
}

/// The effective sample size and the lag-1 autocorrelation it comes from.
pub(crate) fn effective_size_and_r1(x: &[f64]) -> (f64, f64) {
    let r = lag1_autocorrelation(x);
    let n = (x.len() as f64 * (1.0 - r) / (1.0 + r))
        .max(2.0)
        .min(x.len() as f64);
    (n, r)
}

/// Welch's test of equal means; `None` with fewer than 3 samples on a side.
pub fn welch(a: &[f64], b: &[f64]) -> Option<Welch> {
    if a.len() < 3 || b.len() < 3 {
        return None;
    }
    let (ma, mb) = (mean(a), mean(b));
    let (na, nb) = (effective_size(a), effective_size(b));
    let (va, vb) = (variance(a, ma) / na, variance(b, mb) / nb);
    let se = (va + vb).sqrt();
    if se == 0.0 {
        let p = if ma == mb { 1.0 } else { 0.0 };
        return Some(Welch {
            mean_a: ma,
            mean_b: mb,
            t: if ma == mb { 0.0 } else { f64::INFINITY },
            df: na + nb - 2.0,
            p,
            n_eff_a: na,
            n_eff_b: nb,
        });
    }
    let t = (mb - ma) / se;
    let df = (va + vb).powi(2) / (va * va / (na - 1.0) + vb * vb / (nb - 1.0));
    Some(Welch {
        mean_a: ma,
        mean_b: mb,
        t,
        df,
        p: student_t_two_sided(t, df),
        n_eff_a: na,
        n_eff_b: nb,
    })
}

/// P(|T| >= |t|) for Student's t with `df` degrees of freedom:
/// I_{df/(df+t^2)}(df/2, 1/2).
pub(crate) fn student_t_two_sided(t: f64, df: f64) -> f64 {
    let x = df / (df + t * t);
    incomplete_beta(df / 2.0, 0.5, x).clamp(0.0, 1.0)
}

fn ln_gamma(x: f64) -> f64 {
    // Lanczos approximation (g = 7, n = 9)
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = C[0];
    let t = x + 7.5;
    for (i, c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// The regularized incomplete beta function I_x(a, b), by its continued
/// fraction (modified Lentz), using the symmetry for fast convergence.
pub(crate) fn incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front =
        (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    if x > (a + 1.0) / (a + b + 2.0) {
        return 1.0 - incomplete_beta(b, a, 1.0 - x);
    }
    const TINY: f64 = 1e-300;
    let mut c = 1.0;
    let mut d = 1.0 - (a + b) * x / (a + 1.0);
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut f = d;
    for m in 1..=300 {
        let m = m as f64;
        // even step
        let num = m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m));
        d = 1.0 + num * d;
        d = if d.abs() < TINY { TINY } else { d };
        c = 1.0 + num / c;
        c = if c.abs() < TINY { TINY } else { c };
        d = 1.0 / d;
        f *= d * c;
        // odd step
        let num = -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0));
        d = 1.0 + num * d;
        d = if d.abs() < TINY { TINY } else { d };
        c = 1.0 + num / c;
        c = if c.abs() < TINY { TINY } else { c };
        d = 1.0 / d;
        let delta = d * c;
        f *= delta;
        if (delta - 1.0).abs() < 1e-14 {
            break;
        }
    }
    front * f / a
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    #[test]
    fn t_tail_probabilities_match_tables() {
        // two-sided critical values: t(0.975, 10) = 2.228, t(0.975, 30) = 2.042, t(0.995, 5) = 4.032
        assert!((student_t_two_sided(2.228, 10.0) - 0.05).abs() < 5e-4);
        assert!((student_t_two_sided(2.042, 30.0) - 0.05).abs() < 5e-4);
        assert!((student_t_two_sided(4.032, 5.0) - 0.01).abs() < 2e-4);
        assert!((student_t_two_sided(0.0, 7.0) - 1.0).abs() < 1e-12);
    }

    fn noise(seed: u64, n: usize, mean: f64) -> Vec<f64> {
        let mut r = Rng::new(seed);
        (0..n).map(|_| mean + r.next_f64() - 0.5).collect()
    }

    #[test]
    fn equal_means_are_not_significant_and_a_shift_is() {
        let a = noise(1, 60, 100.0);
        let same = welch(&a, &noise(2, 60, 100.0)).unwrap();
        assert!(same.p > 0.01, "{same:?}");
        let shifted = welch(&a, &noise(3, 60, 100.3)).unwrap();
        assert!(shifted.p < 0.001 && shifted.t > 0.0, "{shifted:?}");
        assert!(welch(&a[..2], &a).is_none());
    }

    #[test]
    fn autocorrelation_shrinks_the_effective_sample() {
        // a slow random walk: neighbours are alike
        let mut r = Rng::new(5);
        let mut v = 0.0;
        let walk: Vec<f64> = (0..200)
            .map(|_| {
                v += r.next_f64() - 0.5;
                v
            })
            .collect();
        assert!(effective_size(&walk) < 20.0, "{}", effective_size(&walk));
        let white = noise(6, 200, 0.0);
        assert!(effective_size(&white) > 150.0, "{}", effective_size(&white));
    }
}
