//! YCSB's `SkewedLatestGenerator`: the most recently acknowledged insert is the
//! most popular key, older keys Zipfian-less popular (workload D).
use super::zipfian::{Zipfian, DEFAULT_THETA};
use crate::rng::Rng;

#[derive(Debug, Clone)]
pub(crate) struct SkewedLatest {
    zipf: Zipfian,
}

impl SkewedLatest {
    /// `initial_limit`: the acknowledged limit when the run starts (recordcount - 1).
    pub(crate) fn new(initial_limit: u64) -> Self {
        SkewedLatest {
            zipf: Zipfian::new(0, initial_limit.max(1) - 1, DEFAULT_THETA),
        }
    }

    /// A key at most `limit`: `limit - zipf(limit)`, as YCSB computes it, so keys
    /// lie in 1..=limit with `limit` the most popular.
    #[inline]
    pub(crate) fn next(&mut self, rng: &mut Rng, limit: u64) -> u64 {
        if limit == 0 {
            return 0;
        }
        limit - self.zipf.next_over(rng, limit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::chi2::chi_squared;

    #[test]
    fn latest_key_is_most_popular_and_follows_growth() {
        let mut g = SkewedLatest::new(999);
        let mut rng = Rng::new(8);
        let n = 300_000;
        let mut counts = vec![0.0; 1000];
        for _ in 0..n {
            let v = g.next(&mut rng, 999);
            assert!((1..=999).contains(&v));
            counts[v as usize] += 1.0;
        }
        // distance from the latest key is Zipfian over 999 ranks
        let z = Zipfian::new(0, 998, DEFAULT_THETA);
        let mut obs = Vec::new();
        let mut exp = Vec::new();
        for rank in 0..999u64 {
            obs.push(counts[(999 - rank) as usize]);
            exp.push((z.cdf_rank_below(rank + 1) - z.cdf_rank_below(rank)) * n as f64);
        }
        let t = chi_squared(&obs, &exp);
        assert!(t.passes(), "{t:?}");
        // growth: new limits move the hot key
        for limit in 1000..1100 {
            let v = g.next(&mut rng, limit);
            assert!(v <= limit && v >= 1);
        }
        let hits = (0..10_000)
            .filter(|_| g.next(&mut rng, 5000) == 5000)
            .count();
        assert!(
            hits > 1000,
            "the latest key must be the most popular: {hits}"
        );
    }
}
