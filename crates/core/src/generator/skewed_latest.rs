//! YCSB's `SkewedLatestGenerator`: the most recently acknowledged insert is the
//! most popular key, older keys Zipfian-less popular (workload D).
use super::zipfian::{Growth, Zipfian, DEFAULT_THETA};
use crate::rng::Rng;

#[derive(Debug, Clone)]
pub(crate) struct SkewedLatest {
    zipf: Zipfian,
}

impl SkewedLatest {
    /// `initial_limit`: the acknowledged limit when the run starts
    /// (recordcount - 1), the item count of YCSB's generator; `growth`: how
    /// the popularity follows the inserts (YCSB's by default).
    pub(crate) fn new(initial_limit: u64, growth: Growth) -> Self {
        SkewedLatest {
            zipf: Zipfian::new(0, initial_limit.max(1) - 1, DEFAULT_THETA).with_growth(growth),
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

    /// Ranks (distances from the newest record) drawn over `itemcount`
    /// items, `n` times, by a generator built over 999 items: counts of
    /// ranks 0..40 and the rest, with the expected counts.
    fn by_distance(growth: Growth, itemcount: u64, n: usize) -> (Vec<f64>, Vec<f64>) {
        let mut g = SkewedLatest::new(999, growth);
        let mut rng = Rng::new(11);
        let mut counts = vec![0.0; 41];
        for _ in 0..n {
            let rank = itemcount - g.next(&mut rng, itemcount);
            counts[rank.min(40) as usize] += 1.0;
        }
        let z = &g.zipf;
        let expected = (0..41u64)
            .map(|r| {
                let hi = if r == 40 {
                    1.0
                } else {
                    z.cdf_rank_below_over(r + 1, itemcount)
                };
                (hi - z.cdf_rank_below_over(r, itemcount)) * n as f64
            })
            .collect();
        (counts, expected)
    }

    #[test]
    fn draws_are_the_values_ycsbs_formulas_give_for_a_fixed_sequence() {
        // (u, item count): 999 loaded records, then inserts grow the count.
        let seq = [
            (0.05, 999),
            (0.3, 999),
            (0.5, 1500),
            (0.9, 1500),
            (0.99, 3000),
            (0.2, 6000),
            (0.6, 6000),
            (0.97, 6000),
            (0.999, 6000),
            (0.16, 6000),
            (0.17, 6000),
        ];
        // ZipfianGenerator.nextLong(itemcount) evaluated by hand (double
        // precision) for this sequence: zeta grows by the new terms while
        // eta keeps the 999 items the generator was built with...
        let ycsb = [0, 4, 34, 714, 2790, 16, 331, 4842, 5957, 12, 13];
        // ...and Gray's formula with eta of the current count.
        let textbook = [0, 4, 27, 681, 2755, 3, 146, 4563, 5945, 2, 2];
        for (growth, want) in [(Growth::Ycsb, ycsb), (Growth::Textbook, textbook)] {
            let mut z = Zipfian::new(0, 998, DEFAULT_THETA).with_growth(growth);
            let got: Vec<u64> = seq.iter().map(|&(u, n)| z.next_with(u, n)).collect();
            assert_eq!(got, want, "{growth:?}");
        }
    }

    #[test]
    fn popularity_by_distance_from_the_newest_record_fits_each_variant() {
        for growth in [Growth::Ycsb, Growth::Textbook] {
            let (obs, exp) = by_distance(growth, 5999, 300_000);
            let t = chi_squared(&obs, &exp);
            assert!(t.passes(), "{growth:?}: {t:?}");
        }
        // the variants differ where the count grew: distance 2 is rare in YCSB's
        let share = |g| {
            let (obs, _) = by_distance(g, 5999, 100_000);
            obs[2] / 100_000.0
        };
        let (ycsb, textbook) = (share(Growth::Ycsb), share(Growth::Textbook));
        assert!(ycsb < 0.01 && textbook > 0.03, "{ycsb} {textbook}");
    }

    #[test]
    fn latest_key_is_most_popular_and_follows_growth() {
        let mut g = SkewedLatest::new(999, Growth::Ycsb);
        let mut rng = Rng::new(8);
        let n = 300_000;
        let mut counts = vec![0.0; 1000];
        for _ in 0..n {
            let v = g.next(&mut rng, 999);
            assert!((1..=999).contains(&v));
            counts[v as usize] += 1.0;
        }
        // without growth, distance from the latest key is Zipfian over 999 ranks
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
            assert!(v <= limit);
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
