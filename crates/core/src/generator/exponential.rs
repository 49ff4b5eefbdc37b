//! YCSB's `ExponentialGenerator`: exponentially distributed offsets, with
//! `exponential.percentile` percent of the draws below `range` (recordcount x
//! `exponential.frac`); the key chooser counts them back from the latest insert.
use crate::rng::Rng;

#[derive(Debug, Clone)]
pub(crate) struct Exponential {
    gamma: f64,
}

impl Exponential {
    pub(crate) fn new(percentile: f64, range: f64) -> Self {
        Exponential {
            gamma: -(1.0 - percentile / 100.0).ln() / range,
        }
    }

    #[inline]
    pub(crate) fn next(&self, rng: &mut Rng) -> u64 {
        // 1 - u is in (0, 1], so the logarithm is finite.
        (-(1.0 - rng.next_f64()).ln() / self.gamma) as u64
    }

    #[cfg(test)]
    pub(crate) fn mean(&self) -> f64 {
        1.0 / self.gamma
    }

    /// P(value < x) of the continuous draw before truncation.
    #[cfg(test)]
    pub(crate) fn cdf(&self, x: f64) -> f64 {
        1.0 - (-self.gamma * x).exp()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::chi2::chi_squared;

    #[test]
    fn exponential_fits_and_honours_the_percentile() {
        let g = Exponential::new(95.0, 1000.0);
        let mut rng = Rng::new(12);
        let n = 200_000;
        // bins of width 10 up to 3000, then one tail bin
        let mut counts = vec![0.0; 301];
        let mut below = 0usize;
        for _ in 0..n {
            let v = g.next(&mut rng);
            below += (v < 1000) as usize;
            counts[((v / 10) as usize).min(300)] += 1.0;
        }
        assert!((below as f64 / n as f64 - 0.95).abs() < 0.005);
        let exp: Vec<f64> = (0..301)
            .map(|b| {
                let hi = if b == 300 {
                    1.0
                } else {
                    g.cdf((b * 10 + 10) as f64)
                };
                (hi - g.cdf((b * 10) as f64)) * n as f64
            })
            .collect();
        let t = chi_squared(&counts, &exp);
        assert!(t.passes(), "{t:?}");
        assert!((g.mean() - 1000.0 / -(0.05f64).ln()).abs() < 1e-9);
    }
}
