//! Zipfian integers by Gray et al.'s method ("Quickly generating billion-record
//! synthetic databases", SIGMOD 1994), as YCSB's `ZipfianGenerator` draws them:
//! the two most popular items exactly, the rest by a closed-form inverse.
//!
//! The normalising constant zeta(n, theta) is summed exactly for small n and by
//! Euler-Maclaurin summation for large n, so any `zipfian.constant` over ten
//! billion items costs microseconds instead of the minutes YCSB spends.
use crate::rng::Rng;

/// YCSB's default Zipfian constant.
pub(crate) const DEFAULT_THETA: f64 = 0.99;

/// Below this many items zeta is summed term by term.
const EXACT_LIMIT: u64 = 100_000;

/// sum_{i=1}^{n} i^-theta.
pub(crate) fn zeta(n: u64, theta: f64) -> f64 {
    if n <= EXACT_LIMIT {
        zeta_range(0, n, theta)
    } else {
        zeta_euler_maclaurin(n, theta)
    }
}

/// sum_{i=from+1}^{to} i^-theta.
fn zeta_range(from: u64, to: u64, theta: f64) -> f64 {
    // Summed from the small terms up, for accuracy.
    (from + 1..=to).rev().map(|i| (i as f64).powf(-theta)).sum()
}

fn zeta_euler_maclaurin(n: u64, theta: f64) -> f64 {
    const M: u64 = 1000;
    let head = zeta_range(0, M - 1, theta);
    let f = |x: f64| x.powf(-theta);
    let (m, nf) = (M as f64, n as f64);
    let integral = if (theta - 1.0).abs() < 1e-12 {
        nf.ln() - m.ln()
    } else {
        (nf.powf(1.0 - theta) - m.powf(1.0 - theta)) / (1.0 - theta)
    };
    let d1 = |x: f64| -theta * x.powf(-theta - 1.0);
    let d3 = |x: f64| -theta * (theta + 1.0) * (theta + 2.0) * x.powf(-theta - 3.0);
    let d5 = |x: f64| {
        -theta
            * (theta + 1.0)
            * (theta + 2.0)
            * (theta + 3.0)
            * (theta + 4.0)
            * x.powf(-theta - 5.0)
    };
    head + integral + (f(m) + f(nf)) / 2.0 + (d1(nf) - d1(m)) / 12.0 - (d3(nf) - d3(m)) / 720.0
        + (d5(nf) - d5(m)) / 30240.0
}

/// How a Zipfian follows a growing item count (`nextLong(itemcount)`, which
/// workload D's `latest` calls with the acknowledged insert count).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Growth {
    /// YCSB's: zeta grows with the item count (never shrinks), but eta keeps
    /// the item count the generator was built with. Past the first items the
    /// distribution is no longer Gray's; every published workload D number
    /// was made with it.
    #[default]
    Ycsb,
    /// Gray's formula for the current item count: zeta and eta both follow it.
    Textbook,
}

/// x^alpha for one alpha. YCSB's default theta 0.99 makes alpha 100 (to
/// 1e-13): powers by squaring take eight dependent multiplications where
/// libm's pow took about a fifth of an operation's client CPU. Squaring
/// differs from pow by about 1e-14 relative (and the alpha rounded by 1e-13
/// as much), which moves a draw over ten billion ranks to the neighbouring
/// rank about once in 10,000 draws, only in the tail, where neighbours are
/// equally likely.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Power {
    Whole(u32),
    Real(f64),
}

impl Power {
    fn new(alpha: f64) -> Power {
        let n = alpha.round();
        if (alpha - n).abs() < 1e-9 && (1.0..=1024.0).contains(&n) {
            Power::Whole(n as u32)
        } else {
            Power::Real(alpha)
        }
    }

    #[inline]
    fn of(self, x: f64) -> f64 {
        match self {
            Power::Whole(mut n) => {
                let (mut acc, mut sq) = (1.0, x);
                while n > 0 {
                    if n & 1 == 1 {
                        acc *= sq;
                    }
                    sq *= sq;
                    n >>= 1;
                }
                acc
            }
            Power::Real(a) => x.powf(a),
        }
    }

    /// [`Self::of`] of every value in place, bit by bit of the exponent
    /// across all values (independent chains, run side by side); the same
    /// multiplications in the same order per value, so the same results.
    #[inline(always)]
    fn of_all<const N: usize>(self, xs: &mut [f64; N]) {
        match self {
            Power::Whole(mut n) => {
                let mut acc = [1.0; N];
                while n > 0 {
                    let odd = n & 1 == 1;
                    for (a, x) in acc.iter_mut().zip(xs.iter_mut()) {
                        if odd {
                            *a *= *x;
                        }
                        *x *= *x;
                    }
                    n >>= 1;
                }
                *xs = acc;
            }
            Power::Real(a) => xs.iter_mut().for_each(|x| *x = x.powf(a)),
        }
    }
}

#[derive(Debug, Clone)]
pub struct Zipfian {
    base: u64,
    theta: f64,
    /// 1 / (1 - theta), the exponent of every draw past the second item.
    alpha: Power,
    zeta2: f64,
    /// zeta over `count_for_zeta` items; grown incrementally as the item count grows.
    zetan: f64,
    count_for_zeta: u64,
    eta: f64,
    /// 1 + 0.5^theta: the draw threshold of the second item, constant per theta.
    second_threshold: f64,
    items: u64,
    growth: Growth,
}

impl Zipfian {
    /// Zipfian over `min..=max` with constant `theta`.
    pub fn new(min: u64, max: u64, theta: f64) -> Self {
        let items = max - min + 1;
        Self::with_zetan(min, max, theta, zeta(items, theta))
    }

    /// As `new`, with a precomputed zeta(max - min + 1, theta).
    pub(crate) fn with_zetan(min: u64, max: u64, theta: f64, zetan: f64) -> Self {
        assert!(max >= min);
        assert!(
            theta > 0.0 && theta != 1.0,
            "theta must be positive and not 1"
        );
        let items = max - min + 1;
        let zeta2 = zeta_range(0, 2, theta);
        let mut z = Zipfian {
            base: min,
            theta,
            alpha: Power::new(1.0 / (1.0 - theta)),
            zeta2,
            zetan,
            count_for_zeta: items,
            eta: 0.0,
            second_threshold: 1.0 + 0.5f64.powf(theta),
            items,
            growth: Growth::Ycsb,
        };
        z.eta = z.eta_for(items);
        z
    }

    /// How the generator follows a growing item count.
    pub(crate) fn with_growth(mut self, growth: Growth) -> Self {
        self.growth = growth;
        self
    }

    fn eta_for(&self, items: u64) -> f64 {
        (1.0 - (2.0 / items as f64).powf(1.0 - self.theta)) / (1.0 - self.zeta2 / self.zetan)
    }

    pub fn items(&self) -> u64 {
        self.items
    }

    /// The largest value over the configured item count.
    pub fn max(&self) -> u64 {
        self.base + self.items - 1
    }

    #[cfg(test)]
    pub(crate) fn zetan(&self) -> f64 {
        self.zetan
    }

    /// Next value over the configured item count: rank 0 (value `min`) is the most popular.
    #[inline]
    pub fn next(&mut self, rng: &mut Rng) -> u64 {
        self.next_over(rng, self.items)
    }

    /// `N` values over the configured item count, as that many `next` calls
    /// draw them, in stages (every uniform draw, every power, then every
    /// value) so that the values' chains of multiplications overlap.
    #[inline(always)]
    pub(crate) fn fill<const N: usize>(&mut self, rng: &mut Rng, out: &mut [u64; N]) {
        if self.items != self.count_for_zeta {
            self.resize(self.items);
        }
        let u: [f64; N] = std::array::from_fn(|_| rng.next_f64());
        let mut pow = u.map(|u| self.eta * u - self.eta + 1.0);
        self.alpha.of_all(&mut pow);
        for ((o, u), p) in out.iter_mut().zip(u).zip(pow) {
            *o = self.rank_with(u, p, self.items);
        }
    }

    /// Next value over `itemcount` items, growing zeta incrementally when the item
    /// count changed since the last call (YCSB's `nextLong(itemcount)`).
    #[inline]
    pub(crate) fn next_over(&mut self, rng: &mut Rng, itemcount: u64) -> u64 {
        if itemcount != self.count_for_zeta {
            self.resize(itemcount);
        }
        self.rank_of(rng.next_f64(), itemcount)
    }

    /// The value for the uniform draw `u` over `itemcount` items (after `resize`).
    #[inline]
    fn rank_of(&self, u: f64, itemcount: u64) -> u64 {
        self.rank_with(u, self.alpha.of(self.eta * u - self.eta + 1.0), itemcount)
    }

    /// The value for the uniform draw `u` whose power `(eta u - eta + 1)^alpha`
    /// is `pow` (used past the first two items only).
    #[inline(always)]
    fn rank_with(&self, u: f64, pow: f64, itemcount: u64) -> u64 {
        let uz = u * self.zetan;
        let rank = scaled(itemcount, pow).min(itemcount - 1);
        // YCSB's two branches as selects: the first two items take about a
        // tenth of the draws at theta 0.99, and branches on them
        // mispredicted (cachegrind's model: 0.68 -> 0.60 mispredicts a
        // null:// workload C operation)
        let head = u64::from(uz >= 1.0);
        let r = if uz < self.second_threshold {
            head
        } else {
            rank
        };
        self.base + r
    }

    #[cold]
    fn resize(&mut self, itemcount: u64) {
        let old = self.count_for_zeta;
        let eta_items = match self.growth {
            // YCSB's allowitemcountdecrease is off: a smaller count changes nothing
            Growth::Ycsb if itemcount < old => return,
            Growth::Ycsb => self.items,
            Growth::Textbook => itemcount,
        };
        self.zetan = if itemcount > old && itemcount - old <= EXACT_LIMIT {
            self.zetan + zeta_range(old, itemcount, self.theta)
        } else {
            zeta(itemcount, self.theta)
        };
        self.count_for_zeta = itemcount;
        self.eta = self.eta_for(eta_items);
    }

    /// `next_over` with the uniform draw given: what the tests compare with
    /// values computed from YCSB's formulas.
    #[cfg(test)]
    pub(crate) fn next_with(&mut self, u: f64, itemcount: u64) -> u64 {
        if itemcount != self.count_for_zeta {
            self.resize(itemcount);
        }
        self.rank_of(u, itemcount)
    }

    /// P(rank < k) of the values this generator draws over its item count: the exact
    /// distribution of Gray's method (not of the ideal Zipf law), used by the tests.
    #[cfg(test)]
    pub(crate) fn cdf_rank_below(&self, k: u64) -> f64 {
        self.cdf_rank_below_over(k, self.items)
    }

    /// P(rank < k) over `itemcount` items with the generator's current zeta
    /// and eta (after `resize`): ranks 0 and 1 below their thresholds, the
    /// closed form above, where an eta of another item count (YCSB's) can
    /// also give ranks 0 and 1.
    #[cfg(test)]
    pub(crate) fn cdf_rank_below_over(&self, k: u64, itemcount: u64) -> f64 {
        if k == 0 {
            return 0.0;
        }
        if k >= itemcount {
            return 1.0;
        }
        let t = self.zeta2 / self.zetan;
        let below = if k == 1 { 1.0 / self.zetan } else { t };
        // u where itemcount * (eta * u - eta + 1)^alpha reaches k
        let inner = (k as f64 / itemcount as f64).powf(1.0 - self.theta);
        let u_k = (1.0 - (1.0 - inner) / self.eta).min(1.0);
        below + (u_k - t).max(0.0)
    }
}

/// `(itemcount * pow) as u64` through signed conversions, one instruction
/// each way where the unsigned ones are branchy sequences before AVX-512
/// (~5 of a null:// workload C operation's instructions). The same value:
/// below 2^62 items (not i64::MAX, which rounds to 2^63 as a double) the
/// product is below 2^63; a negative one or NaN is 0 either way.
#[inline(always)]
fn scaled(itemcount: u64, pow: f64) -> u64 {
    if itemcount < 1 << 62 {
        ((itemcount as i64 as f64 * pow) as i64).max(0) as u64
    } else {
        (itemcount as f64 * pow) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::chi2::chi_squared;

    #[test]
    fn scaled_in_signed_conversions_is_the_unsigned_product() {
        let unsigned = |n: u64, p: f64| (n as f64 * p) as u64;
        let items = [
            1,
            2,
            1_000_000,
            10_000_000_000,
            (1 << 53) + 1,
            i64::MAX as u64,
            i64::MAX as u64 + 1,
            u64::MAX,
        ];
        let pows = [0.0, 1.0, 0.5, 1e-300, -0.25, f64::NAN, 1.0 - f64::EPSILON];
        for n in items {
            for p in pows {
                assert_eq!(scaled(n, p), unsigned(n, p), "{n} * {p}");
            }
        }
        let mut rng = Rng::new(3);
        for _ in 0..100_000 {
            let n = rng.next_u64() >> (rng.next_u64() % 64);
            let p = rng.next_f64();
            assert_eq!(scaled(n, p), unsigned(n, p), "{n} * {p}");
        }
    }

    #[test]
    fn whole_powers_by_squaring_agree_with_pow() {
        let alpha = 1.0 / (1.0 - DEFAULT_THETA);
        assert_eq!(Power::new(alpha), Power::Whole(100));
        assert_eq!(Power::new(1.0 / (1.0 - 0.5)), Power::Whole(2));
        assert!(matches!(Power::new(1.0 / (1.0 - 0.7)), Power::Real(_)));
        let mut rng = Rng::new(7);
        let mut worst = 0.0f64;
        for _ in 0..100_000 {
            // the bases draws give: eta * u - eta + 1, in (1 - eta, 1]
            let x = 0.77 + 0.23 * rng.next_f64();
            let (fast, libm) = (Power::Whole(100).of(x), x.powf(alpha));
            worst = worst.max(((fast - libm) / libm).abs());
        }
        assert!(worst < 1e-13, "relative difference {worst:e}");
        assert_eq!(Power::Whole(3).of(2.0), 8.0);
        assert_eq!(Power::Real(0.5).of(4.0), 2.0);
    }

    #[test]
    fn euler_maclaurin_matches_exact_sum_and_ycsb_constant() {
        let exact = zeta_range(0, 2_000_000, 0.99);
        let approx = zeta_euler_maclaurin(2_000_000, 0.99);
        assert!(
            (exact - approx).abs() / exact < 1e-10,
            "{exact} vs {approx}"
        );
        // YCSB's precomputed ScrambledZipfianGenerator.ZETAN for 10^10 items.
        let z = zeta(10_000_000_000, 0.99);
        assert!((z - 26.46902820178302).abs() < 1e-6, "{z}");
        // other thetas, against exact sums
        for theta in [0.5, 0.8, 1.2] {
            let e = zeta_range(0, 300_000, theta);
            let a = zeta_euler_maclaurin(300_000, theta);
            assert!((e - a).abs() / e < 1e-9, "theta {theta}: {e} vs {a}");
        }
    }

    fn fit(theta: f64, items: u64, samples: usize, seed: u64) -> crate::stats::chi2::FitTest {
        let mut g = Zipfian::new(0, items - 1, theta);
        let mut rng = Rng::new(seed);
        let mut counts = vec![0.0; items as usize];
        for _ in 0..samples {
            let v = g.next(&mut rng);
            counts[v as usize] += 1.0;
        }
        let expected: Vec<f64> = (0..items)
            .map(|k| (g.cdf_rank_below(k + 1) - g.cdf_rank_below(k)) * samples as f64)
            .collect();
        chi_squared(&counts, &expected)
    }

    #[test]
    fn zipfian_fits_its_exact_distribution() {
        for theta in [0.99, 0.6, 1.3] {
            let t = fit(theta, 1000, 500_000, 5);
            assert!(t.passes(), "theta {theta}: {t:?}");
        }
    }

    #[test]
    fn zipfian_is_close_to_the_ideal_zipf_law_at_the_head() {
        let g = Zipfian::new(0, 999, 0.99);
        let z = zeta(1000, 0.99);
        for k in 0..2u64 {
            let p = g.cdf_rank_below(k + 1) - g.cdf_rank_below(k);
            let ideal = ((k + 1) as f64).powf(-0.99) / z;
            assert!((p - ideal).abs() / ideal < 1e-9);
        }
    }

    #[test]
    fn uniform_samples_fail_the_zipfian_fit() {
        let g = Zipfian::new(0, 99, 0.99);
        let mut rng = Rng::new(1);
        let mut counts = vec![0.0; 100];
        for _ in 0..100_000 {
            counts[rng.below(100) as usize] += 1.0;
        }
        let expected: Vec<f64> = (0..100)
            .map(|k| (g.cdf_rank_below(k + 1) - g.cdf_rank_below(k)) * 100_000.0)
            .collect();
        assert!(!chi_squared(&counts, &expected).passes());
    }

    #[test]
    fn growing_item_count_matches_a_fresh_generator() {
        let mut grown = Zipfian::new(0, 999, 0.99);
        let mut rng = Rng::new(3);
        for n in 1000..1500 {
            let v = grown.next_over(&mut rng, n);
            assert!(v < n);
        }
        let fresh = Zipfian::new(0, 1498, 0.99);
        assert!((grown.zetan() - fresh.zetan()).abs() < 1e-9);
    }

    #[test]
    fn values_stay_in_range_with_offset() {
        let mut g = Zipfian::new(10, 20, 0.99);
        let mut rng = Rng::new(2);
        for _ in 0..10_000 {
            let v = g.next(&mut rng);
            assert!((10..=20).contains(&v));
        }
    }
}
