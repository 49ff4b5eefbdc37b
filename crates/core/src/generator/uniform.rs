//! Uniform integers in an inclusive range (YCSB `UniformLongGenerator`).
use crate::rng::Rng;

#[derive(Debug, Clone)]
pub(crate) struct Uniform {
    lower: u64,
    /// Number of values in the range; at least one.
    span: u64,
}

impl Uniform {
    /// Uniform over `lower..=upper`.
    pub(crate) fn new(lower: u64, upper: u64) -> Self {
        assert!(upper >= lower, "uniform range {lower}..={upper} is empty");
        Uniform {
            lower,
            span: upper - lower + 1,
        }
    }

    #[inline(always)]
    pub(crate) fn next(&self, rng: &mut Rng) -> u64 {
        self.lower + rng.below(self.span)
    }

    #[cfg(test)]
    pub(crate) fn upper(&self) -> u64 {
        self.lower + self.span - 1
    }

    #[cfg(test)]
    pub(crate) fn mean(&self) -> f64 {
        self.lower as f64 + (self.span as f64 - 1.0) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::chi2::chi_squared;

    #[test]
    fn uniform_fits_and_stays_in_range() {
        let g = Uniform::new(100, 149);
        let mut rng = Rng::new(11);
        let mut counts = vec![0.0; 50];
        for _ in 0..200_000 {
            let v = g.next(&mut rng);
            assert!((100..=149).contains(&v));
            counts[(v - 100) as usize] += 1.0;
        }
        let expected = vec![4000.0; 50];
        let t = chi_squared(&counts, &expected);
        assert!(t.passes(), "{t:?}");
        assert_eq!(g.mean(), 124.5);
    }
}
