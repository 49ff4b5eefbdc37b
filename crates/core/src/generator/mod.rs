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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv_matches_ycsb_golden_values() {
        assert_eq!(fnvhash64(0), 6284781860667377211);
        assert_eq!(fnvhash64(42), 55488592825689361);
    }
}
