//! YCSB's `DiscreteGenerator`: picks one of several values with given weights
//! (the operation chooser). Weights become 64-bit thresholds, so a draw is one
//! random number and a few comparisons.
use crate::rng::Rng;

#[derive(Debug, Clone)]
pub(crate) struct Discrete<T: Copy> {
    /// Cumulative thresholds scaled to 2^64; the last value takes the remainder.
    thresholds: Vec<(u64, T)>,
    /// The value when it is the only one: no draw (and no look at the
    /// thresholds) per operation, as in YCSB's workload C.
    only: Option<T>,
}

impl<T: Copy> Discrete<T> {
    /// Values with zero weight are dropped; `None` when no weight is positive.
    pub(crate) fn new(weighted: &[(f64, T)]) -> Option<Self> {
        let total: f64 = weighted
            .iter()
            .filter(|(w, _)| *w > 0.0)
            .map(|(w, _)| w)
            .sum();
        if total <= 0.0 || !total.is_finite() {
            return None;
        }
        let mut acc = 0.0;
        let mut thresholds = Vec::new();
        for &(w, v) in weighted.iter().filter(|(w, _)| *w > 0.0) {
            acc += w / total;
            let t = if acc >= 1.0 {
                u64::MAX
            } else {
                (acc * 18_446_744_073_709_551_616.0) as u64
            };
            thresholds.push((t, v));
        }
        if let Some(last) = thresholds.last_mut() {
            last.0 = u64::MAX;
        }
        let only = match thresholds[..] {
            [(_, v)] => Some(v),
            _ => None,
        };
        Some(Discrete { thresholds, only })
    }

    #[inline]
    pub(crate) fn next(&self, rng: &mut Rng) -> T {
        if let Some(v) = self.only {
            return v;
        }
        let x = rng.next_u64();
        for &(t, v) in &self.thresholds {
            if x < t {
                return v;
            }
        }
        self.thresholds[self.thresholds.len() - 1].1
    }

    /// The values with positive weight, in order.
    #[cfg(test)]
    pub(crate) fn values(&self) -> impl Iterator<Item = T> + '_ {
        self.thresholds.iter().map(|(_, v)| *v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::chi2::chi_squared;

    #[test]
    fn discrete_fits_its_weights() {
        let d = Discrete::new(&[(0.5, 0u8), (0.0, 9), (0.3, 1), (0.15, 2), (0.05, 3)]).unwrap();
        let mut rng = Rng::new(21);
        let n = 100_000;
        let mut c = [0.0; 4];
        for _ in 0..n {
            let v = d.next(&mut rng);
            assert_ne!(v, 9, "zero-weight values are never chosen");
            c[v as usize] += 1.0;
        }
        let e = [50_000.0, 30_000.0, 15_000.0, 5_000.0];
        assert!(chi_squared(&c, &e).passes());
        assert_eq!(d.values().collect::<Vec<_>>(), vec![0, 1, 2, 3]);
    }

    #[test]
    fn a_single_value_takes_no_draw() {
        let d = Discrete::new(&[(0.0, 1u8), (0.7, 2)]).unwrap();
        let (mut a, mut b) = (Rng::new(4), Rng::new(4));
        for _ in 0..10 {
            assert_eq!(d.next(&mut a), 2);
        }
        assert_eq!(a.next_u64(), b.next_u64(), "the stream is untouched");
        // two values draw once each
        let d = Discrete::new(&[(0.5, 1u8), (0.5, 2)]).unwrap();
        d.next(&mut a);
        b.next_u64();
        assert_eq!(a.next_u64(), b.next_u64());
    }

    #[test]
    fn weights_need_not_sum_to_one_but_must_be_positive() {
        assert!(Discrete::new(&[(0.0, 1u8), (0.0, 2)]).is_none());
        assert!(Discrete::<u8>::new(&[]).is_none());
        let d = Discrete::new(&[(95.0, 'u'), (5.0, 'r')]).unwrap();
        let mut rng = Rng::new(2);
        let u = (0..10_000).filter(|_| d.next(&mut rng) == 'u').count();
        assert!((9_300..9_700).contains(&u));
    }
}
