//! YCSB's `ScrambledZipfianGenerator`: Zipfian popularity over ten billion ranks
//! (theta 0.99 uses YCSB's precomputed zeta), each rank hashed with FNV-1a onto
//! the key range, so popular keys are scattered rather than clustered at the
//! start of the key space. With the same range, yardstick and YCSB pick the
//! same popular keys.
use super::{fnvhash64_all, zipfian, FastMod};
use crate::rng::Rng;

/// Number of ranks YCSB draws from before scrambling.
pub(crate) const ITEM_COUNT: u64 = 10_000_000_000;
/// YCSB's zeta(ITEM_COUNT, 0.99).
pub(crate) const ZETAN: f64 = 26.46902820178302;

#[derive(Debug, Clone)]
pub(crate) struct ScrambledZipfian {
    min: u64,
    /// `% itemcount` without a division per draw.
    modulo: FastMod,
    gen: zipfian::Zipfian,
}

impl ScrambledZipfian {
    /// Over `min..=max` with Zipfian constant `theta`.
    pub(crate) fn new(min: u64, max: u64, theta: f64) -> Self {
        let gen = if theta == zipfian::DEFAULT_THETA {
            zipfian::Zipfian::with_zetan(0, ITEM_COUNT - 1, theta, ZETAN)
        } else {
            zipfian::Zipfian::new(0, ITEM_COUNT - 1, theta)
        };
        ScrambledZipfian {
            min,
            modulo: FastMod::new(max - min + 1),
            gen,
        }
    }

    /// The key that popularity rank `rank` maps to (`fill` maps a batch).
    #[cfg(test)]
    pub(crate) fn key_of_rank(&self, rank: u64) -> u64 {
        self.min + self.modulo.of(super::fnvhash64(rank))
    }

    /// One value; the runner draws them with `fill`.
    #[cfg(test)]
    pub(crate) fn next(&mut self, rng: &mut Rng) -> u64 {
        let rank = self.gen.next(rng);
        self.key_of_rank(rank)
    }

    /// `N` values, as that many `next` calls draw them, in stages.
    #[inline(always)]
    pub(crate) fn fill<const N: usize>(&mut self, rng: &mut Rng, out: &mut [u64; N]) {
        self.gen.fill(rng, out);
        fnvhash64_all(out);
        out.iter_mut()
            .for_each(|o| *o = self.min + self.modulo.of(*o));
    }

    #[cfg(test)]
    pub(crate) fn ranks(&self) -> &zipfian::Zipfian {
        &self.gen
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::chi2::chi_squared;

    /// Expected bucket probabilities: the first `head` ranks exactly, the tail's
    /// mass spread evenly (the hash scatters millions of tail ranks per bucket).
    fn expected(g: &ScrambledZipfian, buckets: u64, head: u64) -> Vec<f64> {
        let ranks = g.ranks();
        let mut p = vec![0.0; buckets as usize];
        let mut prev = 0.0;
        for r in 0..head {
            let c = ranks.cdf_rank_below(r + 1);
            p[(g.key_of_rank(r) - g.min) as usize] += c - prev;
            prev = c;
        }
        let tail = 1.0 - prev;
        for v in p.iter_mut() {
            *v += tail / buckets as f64;
        }
        p
    }

    #[test]
    fn scrambled_zipfian_fits_hashed_zipf_popularity() {
        let buckets = 500;
        let mut g = ScrambledZipfian::new(1000, 1000 + buckets - 1, 0.99);
        let mut rng = Rng::new(17);
        let n = 400_000;
        let mut counts = vec![0.0; buckets as usize];
        for _ in 0..n {
            let v = g.next(&mut rng);
            assert!((1000..1000 + buckets).contains(&v));
            counts[(v - 1000) as usize] += 1.0;
        }
        let exp: Vec<f64> = expected(&g, buckets, 2_000_000)
            .iter()
            .map(|p| p * n as f64)
            .collect();
        let t = chi_squared(&counts, &exp);
        assert!(t.passes(), "{t:?}");
        // the most popular key is the hash of rank 0, as in YCSB
        let top = counts
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(b.1))
            .map(|(i, _)| i as u64 + 1000);
        assert_eq!(top, Some(g.key_of_rank(0)));
    }

    #[test]
    fn other_theta_uses_computed_zeta() {
        let g = ScrambledZipfian::new(0, 99, 0.8);
        let z = zipfian::zeta(ITEM_COUNT, 0.8);
        assert!((g.ranks().zetan() - z).abs() < 1e-9);
    }

    #[test]
    fn a_filled_batch_is_the_values_next_draws() {
        // a whole power (theta 0.99: 100) and a real one
        for theta in [zipfian::DEFAULT_THETA, 0.7] {
            let mut a = ScrambledZipfian::new(10, 1_000_009, theta);
            let mut b = a.clone();
            let (mut ra, mut rb) = (Rng::new(3), Rng::new(3));
            let mut batch = [0u64; 16];
            for _ in 0..100 {
                a.fill(&mut ra, &mut batch);
                let one_by_one: Vec<u64> = (0..16).map(|_| b.next(&mut rb)).collect();
                assert_eq!(batch.to_vec(), one_by_one, "theta {theta}");
            }
        }
    }
}
