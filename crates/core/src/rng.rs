//! The one random number generator of the harness: xoshiro256++ seeded through
//! SplitMix64. Every stream is derived from the run seed and a path (instance,
//! worker, slot), so the same seed and spec replay the same operation stream.

/// SplitMix64 step: used to expand seeds and to derive independent child seeds.
#[inline]
pub(crate) fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Derives a child seed from a parent seed and a path of indices; distinct paths
/// give statistically independent streams.
pub fn derive_seed(seed: u64, path: &[u64]) -> u64 {
    let mut state = seed;
    let mut out = splitmix64(&mut state);
    for &p in path {
        state ^= p.wrapping_mul(0xD1B5_4A32_D192_ED03);
        out ^= splitmix64(&mut state);
        state = out;
    }
    out
}

/// xoshiro256++: fast, small, and good enough for workload generation.
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    pub fn new(seed: u64) -> Self {
        let mut sm = seed;
        let s = [
            splitmix64(&mut sm),
            splitmix64(&mut sm),
            splitmix64(&mut sm),
            splitmix64(&mut sm),
        ];
        Rng { s }
    }

    #[inline(always)]
    pub(crate) fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// Uniform in [0, 1) with 53 bits of precision.
    #[inline(always)]
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in [0, n) without modulo bias (Lemire's multiply-and-reject).
    #[inline(always)]
    pub fn below(&mut self, n: u64) -> u64 {
        debug_assert!(n > 0);
        let mut m = (self.next_u64() as u128) * (n as u128);
        let mut low = m as u64;
        if low < n {
            let threshold = n.wrapping_neg() % n;
            while low < threshold {
                m = (self.next_u64() as u128) * (n as u128);
                low = m as u64;
            }
        }
        (m >> 64) as u64
    }

    /// Fills `buf` with printable ASCII (see [`Filler`]).
    pub fn fill_printable(&mut self, buf: &mut [u8]) {
        Filler::new(self).fill(buf);
    }
}

mod filler;
pub(crate) use filler::{write_bytes, Filler};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_stream_and_paths_differ() {
        let mut a = Rng::new(7);
        let mut b = Rng::new(7);
        for _ in 0..100 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
        assert_ne!(derive_seed(1, &[0, 0]), derive_seed(1, &[0, 1]));
        assert_ne!(derive_seed(1, &[0, 1]), derive_seed(1, &[1, 0]));
        assert_eq!(derive_seed(9, &[3, 4]), derive_seed(9, &[3, 4]));
    }

    #[test]
    fn below_is_in_range_and_uniform() {
        let mut r = Rng::new(1);
        let mut counts = [0u64; 10];
        for _ in 0..100_000 {
            let v = r.below(10);
            counts[v as usize] += 1;
        }
        let expected = vec![10_000.0; 10];
        let obs: Vec<f64> = counts.iter().map(|&c| c as f64).collect();
        let t = crate::stats::chi2::chi_squared(&obs, &expected);
        assert!(t.passes(), "{t:?}");
    }

    #[test]
    fn printable_fill_is_printable_and_varied() {
        let mut r = Rng::new(3);
        let mut buf = vec![0u8; 1027];
        r.fill_printable(&mut buf);
        assert!(buf.iter().all(|&b| (0x20..=0x5F).contains(&b)));
        let distinct: std::collections::HashSet<u8> = buf.iter().copied().collect();
        assert_eq!(distinct.len(), 64);
    }
}
