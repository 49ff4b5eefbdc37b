//! Record keys and deterministic values exactly as YCSB builds them, so data
//! loaded by YCSB and by yardstick have the same keys and the same verified
//! values.
use crate::generator::fnvhash64;

/// Writes YCSB's key for record `keynum` into `buf`: `user` followed by the
/// record number (FNV-1a hashed unless inserts are ordered), left-padded with
/// zeros to `zeropadding` digits.
#[inline]
pub(crate) fn build_key(keynum: u64, zeropadding: usize, ordered: bool, buf: &mut Vec<u8>) {
    let n = if ordered { keynum } else { fnvhash64(keynum) };
    // four digits per division, as integer formatters do (half the
    // dependent divisions of two at a time)
    const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    let mut v = n;
    while v >= 10_000 {
        let quad = (v % 10_000) as usize;
        v /= 10_000;
        let (hi, lo) = (quad / 100 * 2, quad % 100 * 2);
        i -= 4;
        digits[i..i + 2].copy_from_slice(&PAIRS[hi..hi + 2]);
        digits[i + 2..i + 4].copy_from_slice(&PAIRS[lo..lo + 2]);
    }
    let mut v = v as usize;
    if v >= 100 {
        let lo = v % 100 * 2;
        v /= 100;
        i -= 2;
        digits[i..i + 2].copy_from_slice(&PAIRS[lo..lo + 2]);
    }
    if v >= 10 {
        i -= 2;
        digits[i..i + 2].copy_from_slice(&PAIRS[v * 2..v * 2 + 2]);
    } else {
        i -= 1;
        digits[i] = b'0' + v as u8;
    }
    let len = digits.len() - i;
    buf.clear();
    buf.extend_from_slice(b"user");
    for _ in len..zeropadding {
        buf.push(b'0');
    }
    buf.extend_from_slice(&digits[i..]);
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

    #[test]
    fn keys_print_every_number_as_decimal_does() {
        let mut ns = vec![0, u64::MAX, u64::MAX - 1];
        let mut p = 1u64;
        while let Some(q) = p.checked_mul(10) {
            ns.extend([p - 1, p, p + 1]);
            p = q;
        }
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..10_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            ns.extend([x, x >> 20, x >> 40]);
        }
        for n in ns {
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
