//! Lengths of field values and of scans: constant, uniform or Zipfian (YCSB's
//! `fieldlengthdistribution` and `scanlengthdistribution`).
use super::{uniform::Uniform, zipfian::Zipfian, zipfian::DEFAULT_THETA};
use crate::rng::Rng;

#[derive(Debug, Clone)]
pub(crate) enum LengthGenerator {
    Constant(u64),
    Uniform(Uniform),
    /// Short lengths most likely, as YCSB's `ZipfianGenerator(min, max)`.
    Zipfian(Zipfian),
}

impl LengthGenerator {
    pub(crate) fn constant(n: u64) -> Self {
        LengthGenerator::Constant(n)
    }
    pub(crate) fn uniform(min: u64, max: u64) -> Self {
        LengthGenerator::Uniform(Uniform::new(min, max))
    }
    pub(crate) fn zipfian(min: u64, max: u64) -> Self {
        LengthGenerator::Zipfian(Zipfian::new(min, max, DEFAULT_THETA))
    }

    #[inline]
    pub(crate) fn next(&mut self, rng: &mut Rng) -> u64 {
        match self {
            LengthGenerator::Constant(n) => *n,
            LengthGenerator::Uniform(u) => u.next(rng),
            LengthGenerator::Zipfian(z) => z.next(rng),
        }
    }

    /// The largest length this generator can return (buffers are sized to it).
    #[cfg(test)]
    pub(crate) fn max(&self) -> u64 {
        match self {
            LengthGenerator::Constant(n) => *n,
            LengthGenerator::Uniform(u) => u.upper(),
            LengthGenerator::Zipfian(z) => z.max(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::chi2::chi_squared;

    #[test]
    fn constant_uniform_and_zipfian_lengths() {
        let mut rng = Rng::new(9);
        let mut c = LengthGenerator::constant(100);
        assert!((0..100).all(|_| c.next(&mut rng) == 100));
        assert_eq!(c.max(), 100);

        let mut u = LengthGenerator::uniform(1, 100);
        let mut counts = vec![0.0; 100];
        for _ in 0..100_000 {
            let v = u.next(&mut rng);
            assert!((1..=100).contains(&v));
            counts[(v - 1) as usize] += 1.0;
        }
        assert!(chi_squared(&counts, &vec![1000.0; 100]).passes());

        let mut z = LengthGenerator::zipfian(1, 100);
        let reference = Zipfian::new(1, 100, DEFAULT_THETA);
        let mut counts = vec![0.0; 100];
        for _ in 0..100_000 {
            let v = z.next(&mut rng);
            assert!((1..=100).contains(&v));
            counts[(v - 1) as usize] += 1.0;
        }
        let exp: Vec<f64> = (0..100)
            .map(|k| (reference.cdf_rank_below(k + 1) - reference.cdf_rank_below(k)) * 100_000.0)
            .collect();
        assert!(chi_squared(&counts, &exp).passes());
        assert_eq!(z.max(), 100);
    }
}
