//! Number generators of the YCSB core workload, one distribution per file.
//! Each has a fixed-seed statistical test against the exact distribution it
//! draws from, plus its invariants (range, monotonicity, growth).

pub(crate) mod acknowledged_counter;
pub(crate) mod counter;
pub(crate) mod discrete;
pub mod exponential;
pub(crate) mod field_length;
pub mod hotspot;
pub(crate) mod scrambled_zipfian;
pub(crate) mod sequential;
pub(crate) mod skewed_latest;
pub mod text;
pub mod uniform;
pub mod zipfian;

pub use acknowledged_counter::AcknowledgedCounter;
pub use counter::Counter;
pub(crate) use discrete::Discrete;
pub(crate) use exponential::Exponential;
pub(crate) use field_length::LengthGenerator;
pub(crate) use hotspot::Hotspot;
pub(crate) use scrambled_zipfian::ScrambledZipfian;
pub use sequential::Sequential;
pub(crate) use skewed_latest::SkewedLatest;
pub(crate) use text::TextFiller;
pub(crate) use uniform::Uniform;
pub use zipfian::Zipfian;

const FNV_OFFSET_BASIS_64: u64 = 0xCBF2_9CE4_8422_2325;
const FNV_PRIME_64: u64 = 1_099_511_628_211;

/// YCSB's `Utils.fnvhash64`: 64-bit FNV-1a over the eight bytes of `val`, least
/// significant first, then the absolute value of the signed result (so the
/// result fits a Java `long`; `Long.MIN_VALUE` stays as it is, as in Java).
#[inline]
pub(crate) fn fnvhash64(mut val: u64) -> u64 {
    let mut hash = FNV_OFFSET_BASIS_64;
    for _ in 0..8 {
        hash ^= val & 0xff;
        hash = hash.wrapping_mul(FNV_PRIME_64);
        val >>= 8;
    }
    (hash as i64).wrapping_abs() as u64
}

/// [`fnvhash64`] of every value in place, byte by byte across all values:
/// the values' chains of multiplications are independent, and interleaved
/// the core runs them side by side instead of waiting out each in turn.
/// Bytes that are zero in every value only multiply (`h ^ 0 == h`), so
/// they are taken together as one multiplication by a power of the prime:
/// record numbers under 2^24 hash in four multiplications instead of eight.
/// Always inlined: with two callers in a key batch's draw LLVM's own
/// choice flipped with unrelated changes, and the call cost ~6
/// instructions an operation (cachegrind, null:// workload C).
#[inline(always)]
pub(crate) fn fnvhash64_all<const N: usize>(vals: &mut [u64; N]) {
    let any = vals.iter().fold(0, |a, v| a | v);
    let bytes = (64 - any.leading_zeros()).div_ceil(8);
    let rest = FNV_PRIME_POWERS[(8 - bytes) as usize];
    // four chains at a time: enough to keep the multiplier busy (latency
    // 3, one a cycle), few enough that values and hashes stay in registers
    // (sixteen at once spilled both to the stack on every byte)
    let mut chunks = vals.chunks_exact_mut(4);
    for four in &mut chunks {
        let mut hash = [FNV_OFFSET_BASIS_64; 4];
        for byte in 0..bytes {
            for (h, v) in hash.iter_mut().zip(four.iter()) {
                *h ^= (v >> (8 * byte)) & 0xff;
                *h = h.wrapping_mul(FNV_PRIME_64);
            }
        }
        for (v, h) in four.iter_mut().zip(hash) {
            *v = (h.wrapping_mul(rest) as i64).wrapping_abs() as u64;
        }
    }
    for v in chunks.into_remainder() {
        *v = fnvhash64(*v);
    }
}

/// `FNV_PRIME_64` to the powers 0 to 8, wrapping.
const FNV_PRIME_POWERS: [u64; 9] = {
    let mut p = [1u64; 9];
    let mut i = 1;
    while i < 9 {
        p[i] = p[i - 1].wrapping_mul(FNV_PRIME_64);
        i += 1;
    }
    p
};

/// `a % d` for a divisor fixed in advance, by three multiplications instead
/// of a division (Lemire, Kaser and Kurz, "Faster remainder by direct
/// computation", 2019: exact for every 64-bit `a` with a 128-bit constant).
#[derive(Debug, Clone, Copy)]
pub(crate) struct FastMod {
    m: u128,
    d: u64,
}

impl FastMod {
    /// For divisor `d` (at least 1).
    pub(crate) fn new(d: u64) -> Self {
        let d = d.max(1);
        FastMod {
            m: (u128::MAX / d as u128).wrapping_add(1),
            d,
        }
    }

    #[inline(always)]
    pub(crate) fn of(&self, a: u64) -> u64 {
        // d = 1 needs no case of its own: m wraps to 0, and so does the result
        let low = self.m.wrapping_mul(a as u128);
        // the top 64 bits of the 192-bit product low * d
        let lo = ((low as u64) as u128 * self.d as u128) >> 64;
        let hi = (low >> 64) * self.d as u128;
        ((hi + lo) >> 64) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_remainders_equal_the_division_remainders() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut divisors = vec![
            1,
            2,
            3,
            7,
            10,
            1000,
            1_000_000,
            999_999_937,
            1 << 32,
            (1 << 32) + 1,
        ];
        divisors.extend([u64::MAX, u64::MAX - 1, 1 << 63, (1 << 63) + 1]);
        divisors.extend((0..200).map(|_| next() >> (next() % 64)).filter(|&d| d > 0));
        for d in divisors {
            let f = FastMod::new(d);
            let mut values = vec![
                0,
                1,
                d - 1,
                d,
                d.wrapping_add(1),
                u64::MAX,
                u64::MAX - 1,
                1 << 63,
            ];
            values.extend((0..500).map(|_| next()));
            for a in values {
                assert_eq!(f.of(a), a % d, "{a} % {d}");
            }
        }
    }

    #[test]
    fn fnv_matches_ycsb_golden_values() {
        assert_eq!(fnvhash64(0), 6284781860667377211);
        assert_eq!(fnvhash64(42), 55488592825689361);
        let mut rng = crate::rng::Rng::new(3);
        let mut vals = [0u64; 16];
        vals.iter_mut().for_each(|v| *v = rng.next_u64());
        vals[1] = 0;
        vals[2] = u64::MAX;
        let one_by_one = vals.map(fnvhash64);
        fnvhash64_all(&mut vals);
        assert_eq!(vals, one_by_one);
        // batches that are not whole fours: the last values one by one
        let mut seven: [u64; 7] = std::array::from_fn(|i| one_by_one[i] >> (9 * i));
        let expect = seven.map(fnvhash64);
        fnvhash64_all(&mut seven);
        assert_eq!(seven, expect);
    }

    #[test]
    fn fnv_of_narrow_values_skips_only_bytes_zero_in_all() {
        let mut rng = crate::rng::Rng::new(5);
        // batches whose widest value has 0 to 8 bytes
        for width in 0..=8u32 {
            for _ in 0..50 {
                let mask = if width == 8 {
                    !0
                } else {
                    (1u64 << (8 * width)) - 1
                };
                let mut vals = [0u64; 16];
                vals.iter_mut().for_each(|v| *v = rng.next_u64() & mask);
                let one_by_one = vals.map(fnvhash64);
                fnvhash64_all(&mut vals);
                assert_eq!(vals, one_by_one, "width {width}");
            }
        }
        let mut zeros = [0u64; 4];
        fnvhash64_all(&mut zeros);
        assert_eq!(zeros, [fnvhash64(0); 4]);
    }
}
