//! YCSB's `HotspotIntegerGenerator`: a fraction `hotopn` of operations go to the
//! first `hotdata` fraction of the range, uniformly; the rest to the remainder.
use crate::rng::Rng;

#[derive(Debug, Clone)]
pub(crate) struct Hotspot {
    lower: u64,
    hot: u64,
    cold: u64,
    hot_opn_fraction: f64,
}

impl Hotspot {
    pub(crate) fn new(
        lower: u64,
        upper: u64,
        hot_data_fraction: f64,
        hot_opn_fraction: f64,
    ) -> Self {
        let interval = upper - lower + 1;
        let hot = ((interval as f64) * hot_data_fraction.clamp(0.0, 1.0)) as u64;
        Hotspot {
            lower,
            hot,
            cold: interval - hot,
            hot_opn_fraction: hot_opn_fraction.clamp(0.0, 1.0),
        }
    }

    #[inline(always)]
    pub(crate) fn next(&self, rng: &mut Rng) -> u64 {
        let hot_draw = rng.next_f64() < self.hot_opn_fraction;
        if (hot_draw && self.hot > 0) || self.cold == 0 {
            self.lower + rng.below(self.hot)
        } else {
            self.lower + self.hot + rng.below(self.cold)
        }
    }

    /// Probability of one given value (for tests and documentation).
    #[cfg(test)]
    pub(crate) fn probability(&self, value: u64) -> f64 {
        let off = value - self.lower;
        let (p_hot, p_cold) = match (self.hot, self.cold) {
            (0, _) => (0.0, 1.0),
            (_, 0) => (1.0, 0.0),
            _ => (self.hot_opn_fraction, 1.0 - self.hot_opn_fraction),
        };
        if off < self.hot {
            p_hot / self.hot as f64
        } else {
            p_cold / self.cold as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::chi2::chi_squared;

    #[test]
    fn hotspot_fits_its_two_level_distribution() {
        let g = Hotspot::new(50, 149, 0.2, 0.8);
        let mut rng = Rng::new(4);
        let n = 200_000;
        let mut counts = vec![0.0; 100];
        for _ in 0..n {
            let v = g.next(&mut rng);
            assert!((50..=149).contains(&v));
            counts[(v - 50) as usize] += 1.0;
        }
        let exp: Vec<f64> = (50..150).map(|v| g.probability(v) * n as f64).collect();
        assert!(chi_squared(&counts, &exp).passes());
        assert!((g.probability(50) - 0.8 / 20.0).abs() < 1e-12);
    }

    #[test]
    fn degenerate_fractions_stay_in_range() {
        let mut rng = Rng::new(1);
        for (d, o) in [(0.0, 0.9), (1.0, 0.1), (0.5, 0.0), (0.5, 1.0)] {
            let g = Hotspot::new(0, 9, d, o);
            for _ in 0..1000 {
                assert!(g.next(&mut rng) <= 9);
            }
        }
    }
}
