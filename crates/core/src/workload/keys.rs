//! Record keys and deterministic values exactly as YCSB builds them, so data
//! loaded by YCSB and by yardstick have the same keys and the same verified
//! values.
use crate::generator::fnvhash64;

/// Writes YCSB's key for record `keynum` into `buf`: `user` followed by the
/// record number (FNV-1a hashed unless inserts are ordered), left-padded with
/// zeros to `zeropadding` digits.
#[inline]
pub(crate) fn build_key(keynum: u64, zeropadding: usize, ordered: bool, buf: &mut Vec<u8>) {
    KeyDigits::of(keynum, ordered).write_key(zeropadding, buf);
}

/// The decimal digits of a key's number, right-aligned: what a key is
/// besides its prefix and padding, cheap to compute ahead and to copy.
/// Byte 0 holds the first digit's index: a u64 has at most 20 digits, so
/// the first four bytes are never digits, and the whole is 24 bytes (a
/// drawn key's number and digits share half a cache line).
#[derive(Debug, Clone, Copy)]
pub(crate) struct KeyDigits {
    digits: [u8; 24],
}

/// The eight decimal digits of `v` (below 10^8) as bytes 0-9, the most
/// significant first (in memory order), converted in parallel lanes of one
/// register: two divisions into 4-digit lanes, then 2-digit, then digits
/// (the SWAR method of integer formatters).
#[inline]
fn eight_digits(v: u32) -> u64 {
    let (hi, lo) = (v / 10_000, v % 10_000);
    let x = hi as u64 | (lo as u64) << 32;
    // lanes below 10,000: x / 100 is (x * 10486) >> 20, with no carry between lanes
    let q = ((x * 10_486) >> 20) & 0x0000_007F_0000_007F;
    let x = q | (x - q * 100) << 16;
    // lanes below 100: x / 10 is (x * 103) >> 10
    let t = ((x * 103) >> 10) & 0x000F_000F_000F_000F;
    t | (x - t * 10) << 8
}

/// Where the first digit of 24 digit bytes (their first four zeros) is:
/// the leading zeros are the low zero bytes (after `^ '0'`) of the first
/// 8 bytes with a digit in them; 0 keeps its last digit.
#[inline(always)]
fn first_digit(digits: &[u8; 24]) -> u8 {
    let chunks: [u64; 3] = std::array::from_fn(|i| {
        let c = u64::from_le_bytes(digits[8 * i..8 * i + 8].try_into().expect("8 bytes"));
        c ^ 0x3030_3030_3030_3030
    });
    match chunks.iter().position(|&c| c != 0) {
        Some(i) => (8 * i + (chunks[i].trailing_zeros() / 8) as usize) as u8,
        None => 23,
    }
}

impl KeyDigits {
    /// The digits of record `keynum`'s number: hashed unless `ordered`.
    #[inline]
    pub(crate) fn of(keynum: u64, ordered: bool) -> KeyDigits {
        Self::of_number(Self::number(keynum, ordered))
    }

    /// The number a key prints for record `keynum`: hashed unless `ordered`.
    #[inline]
    pub(crate) fn number(keynum: u64, ordered: bool) -> u64 {
        if ordered {
            keynum
        } else {
            fnvhash64(keynum)
        }
    }

    /// The digits of eight numbers: in SSE2's 16-bit lanes, eight groups of
    /// four digits a step (five groups a number), where [`Self::of_number`]
    /// splits one number's three 8-digit chunks in the lanes of one
    /// register (a null:// workload C operation: 658 -> 626 instructions,
    /// -7% client CPU paired). Drawing keys ahead gives numbers eight at a
    /// time.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    pub(crate) fn of_eight(ns: &[u64; 8]) -> [KeyDigits; 8] {
        use std::arch::x86_64::*;
        const E8: u64 = 100_000_000;
        let mut groups = [0u16; 40];
        for (g, &n) in groups.chunks_exact_mut(5).zip(ns) {
            let (top, rest) = (n / (E8 * E8), n % (E8 * E8));
            let (hi, lo) = ((rest / E8) as u32, (rest % E8) as u32);
            g.copy_from_slice(
                &[
                    top as u32,
                    hi / 10_000,
                    hi % 10_000,
                    lo / 10_000,
                    lo % 10_000,
                ]
                .map(|x| x as u16),
            );
        }
        let mut text = [0u8; 160];
        for (g, t) in groups.chunks_exact(8).zip(text.chunks_exact_mut(32)) {
            // SAFETY: SSE2 is part of x86_64's baseline; the load reads the
            // 16 bytes of `g` and the stores write the 32 of `t`.
            unsafe {
                let g = _mm_loadu_si128(g.as_ptr().cast());
                // g / 100 for g below 10^4: (g * 5243) >> 19
                let hundreds = _mm_srli_epi16::<3>(_mm_mulhi_epu16(g, _mm_set1_epi16(5243)));
                let rest = _mm_sub_epi16(g, _mm_mullo_epi16(hundreds, _mm_set1_epi16(100)));
                // each group's two 2-digit halves in adjacent lanes, in order
                let pairs = [
                    _mm_unpacklo_epi16(hundreds, rest),
                    _mm_unpackhi_epi16(hundreds, rest),
                ];
                for (i, x) in pairs.into_iter().enumerate() {
                    // x / 10 for x below 100: (x * 6554) >> 16
                    let tens = _mm_mulhi_epu16(x, _mm_set1_epi16(6554));
                    let ones = _mm_sub_epi16(x, _mm_mullo_epi16(tens, _mm_set1_epi16(10)));
                    let d = _mm_or_si128(tens, _mm_slli_epi16::<8>(ones));
                    let d = _mm_or_si128(d, _mm_set1_epi8(b'0' as i8));
                    _mm_storeu_si128(t.as_mut_ptr().add(16 * i).cast(), d);
                }
            }
        }
        // a loop, not `array::from_fn`: that stayed a call where this is
        // compiled for AVX2 (`KeysAhead::refill`)
        let mut out = [KeyDigits { digits: [b'0'; 24] }; 8];
        for (k, d) in out.iter_mut().enumerate() {
            d.digits[4..].copy_from_slice(&text[20 * k..20 * k + 20]);
            d.digits[0] = first_digit(&d.digits);
        }
        out
    }

    /// The digits of eight numbers, one at a time.
    #[cfg(not(target_arch = "x86_64"))]
    #[inline]
    pub(crate) fn of_eight(ns: &[u64; 8]) -> [KeyDigits; 8] {
        ns.map(Self::of_number)
    }

    /// The digits of `n`.
    #[inline]
    pub(crate) fn of_number(n: u64) -> KeyDigits {
        const E8: u64 = 100_000_000;
        let (top, rest) = (n / (E8 * E8), n % (E8 * E8));
        let chunks = [
            eight_digits(top as u32),
            eight_digits((rest / E8) as u32),
            eight_digits((rest % E8) as u32),
        ];
        let mut digits = [0u8; 24];
        for (d, c) in digits.chunks_exact_mut(8).zip(chunks) {
            d.copy_from_slice(&(c | 0x3030_3030_3030_3030).to_le_bytes());
        }
        digits[0] = first_digit(&digits);
        KeyDigits { digits }
    }

    /// `user`, zeros up to `zeropadding` digits, the digits.
    #[inline]
    pub(crate) fn write_key(&self, zeropadding: usize, buf: &mut Vec<u8>) {
        let digits = &self.digits[self.digits[0] as usize..];
        buf.clear();
        buf.extend_from_slice(b"user");
        for _ in digits.len()..zeropadding {
            buf.push(b'0');
        }
        buf.extend_from_slice(digits);
    }
}

/// One operation's key. Keys of up to twenty digits with their padding (every
/// YCSB key unless `zeropadding` is above 20) are the digits' own 24 bytes
/// with `user` written over four of the leading zeros: a fixed copy where a
/// `Vec` took a length-dependent one and its capacity checks (837 -> 811
/// instructions a null:// workload C operation).
#[derive(Debug, Clone)]
pub struct KeyBuf {
    short: [u8; 24],
    /// Where the key starts in `short`; `LONG`: the key is `long`.
    from: u8,
    long: Vec<u8>,
}

const LONG: u8 = u8::MAX;

impl Default for KeyBuf {
    fn default() -> Self {
        KeyBuf {
            short: [0; 24],
            from: LONG,
            long: Vec::new(),
        }
    }
}

impl KeyBuf {
    /// The key of `digits`, padded to `zeropadding` digits.
    #[inline]
    pub(crate) fn set(&mut self, digits: &KeyDigits, zeropadding: usize) {
        if zeropadding > 20 {
            return self.set_long(digits, zeropadding);
        }
        // bytes 1..24 are digits, zeros before the first: the padding is
        // there already, and four of the zeros make room for `user`
        // written in place: `user` written into a copy on the stack and the
        // copy then read back stalled on the store (a partial overlap the
        // core cannot forward), 11% of a null:// read's samples
        let from = (digits.digits[0] as usize).min(24 - zeropadding) - 4;
        self.short = digits.digits;
        self.short[from..from + 4].copy_from_slice(b"user");
        self.from = from as u8;
    }

    #[cold]
    #[inline(never)]
    fn set_long(&mut self, digits: &KeyDigits, zeropadding: usize) {
        self.from = LONG;
        digits.write_key(zeropadding, &mut self.long);
    }

    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        match self.short.get(self.from as usize..) {
            Some(key) => key,
            None => &self.long,
        }
    }
}

impl std::ops::Deref for KeyBuf {
    type Target = [u8];

    #[inline]
    fn deref(&self) -> &[u8] {
        self.as_bytes()
    }
}

/// Java's `String.hashCode` over ASCII text.
fn java_hash(s: &[u8]) -> i32 {
    s.iter()
        .fold(0i32, |h, &c| h.wrapping_mul(31).wrapping_add(c as i32))
}

/// YCSB's `buildDeterministicValue`: `key:field`, then `:` followed by the Java
/// hash of everything so far (that `:` included), repeated until `size` bytes,
/// cut to `size`.
pub(crate) fn deterministic_value(key: &[u8], field: &str, size: usize, out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(key);
    out.push(b':');
    out.extend_from_slice(field.as_bytes());
    while out.len() < size {
        out.push(b':');
        let h = java_hash(out);
        out.extend_from_slice(h.to_string().as_bytes());
    }
    out.truncate(size);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(n: u64, pad: usize, ordered: bool) -> String {
        let mut b = Vec::new();
        build_key(n, pad, ordered, &mut b);
        String::from_utf8(b).unwrap()
    }

    /// Numbers at every change of digit count, and pseudo-random ones of
    /// every length.
    fn numbers() -> Vec<u64> {
        let mut ns = vec![0, 1, 9, u64::MAX, u64::MAX - 1];
        let mut p = 1u64;
        while let Some(q) = p.checked_mul(10) {
            ns.extend([p - 1, p, p + 1, p * 9, p * 5 - 1]);
            p = q;
        }
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..10_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            ns.extend([x, x >> 7, x >> 20, x >> 40, x >> 50]);
        }
        ns
    }

    #[test]
    fn keys_print_every_number_as_decimal_does() {
        for n in numbers() {
            for pad in [1, 12, 25] {
                assert_eq!(
                    key(n, pad, true),
                    format!("user{n:0pad$}"),
                    "{n} padded to {pad}"
                );
            }
        }
    }

    #[test]
    fn eight_numbers_at_once_have_the_digits_of_each_alone() {
        let mut ns = numbers();
        ns.resize(ns.len().next_multiple_of(8), 42);
        for eight in ns.chunks_exact(8) {
            let eight: &[u64; 8] = eight.try_into().unwrap();
            for (d, &n) in KeyDigits::of_eight(eight).iter().zip(eight) {
                assert_eq!(d.digits, KeyDigits::of_number(n).digits, "{n}");
                assert_eq!(&d.digits[d.digits[0] as usize..], n.to_string().as_bytes());
            }
        }
    }

    #[test]
    fn a_key_buffer_holds_the_same_key_as_a_vec() {
        let mut k = KeyBuf::default();
        assert!(k.is_empty());
        for n in [0, 7, 42, 99_999, 1 << 40, u64::MAX - 1, u64::MAX] {
            for ordered in [false, true] {
                // 20 is the last fixed-array width, 21 the first Vec one
                for pad in [0, 1, 12, 19, 20, 21, 25] {
                    k.set(&KeyDigits::of(n, ordered), pad);
                    assert_eq!(
                        String::from_utf8(k.to_vec()).unwrap(),
                        key(n, pad, ordered),
                        "{n} ordered {ordered} padded to {pad}"
                    );
                }
            }
        }
    }

    #[test]
    fn keys_match_ycsb_golden_values() {
        assert_eq!(key(0, 1, false), "user6284781860667377211");
        assert_eq!(key(42, 1, false), "user55488592825689361");
        assert_eq!(key(42, 1, true), "user42");
        assert_eq!(key(42, 8, true), "user00000042");
        assert_eq!(key(0, 0, true), "user0");
        for n in [1u64, 9, 10, 99, 100, 101, 12345, u64::MAX] {
            assert_eq!(key(n, 1, true), format!("user{n}"));
        }
        assert_eq!(key(42, 25, false), "user0000000055488592825689361");
    }

    #[test]
    fn deterministic_values_match_ycsb_golden_values() {
        // golden values printed by YCSB's buildDeterministicValue (Java 17)
        let mut v = Vec::new();
        deterministic_value(b"k", "f", 30, &mut v);
        assert_eq!(v, b"k:f:3246595:1115046893:-105599");
        deterministic_value(b"user6284781860667377211", "field3", 100, &mut v);
        assert_eq!(
            std::str::from_utf8(&v).unwrap(),
            "user6284781860667377211:field3:-56807784:-1874878672:1967282817:-1787301858:-652319809:-382740913:-6"
        );
        deterministic_value(b"user1", "field0", 8, &mut v);
        assert_eq!(v, b"user1:fi");
    }
}
