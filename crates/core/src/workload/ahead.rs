//! Keys drawn ahead, sixteen at a time. A key costs two chains of dependent
//! multiplications (the Zipfian's power and FNV-1a for the rank, FNV-1a
//! again and the decimal digits for the key's text) that one operation
//! alone waits out in full; drawn in a batch, the chains of sixteen keys
//! overlap in the core. Only for distributions that do not follow the
//! insert count: a key drawn ahead is checked against the acknowledged limit
//! when it is used, exactly as a key drawn then would be.
use super::config::CoreConfig;
use super::keys::KeyDigits;
use super::stream::key_numbers;
use crate::generator::{Hotspot, ScrambledZipfian, Uniform};
use crate::rng::Rng;

const AHEAD: usize = 16;
// the digits are made eight numbers at a time
const _: () = assert!(AHEAD.is_multiple_of(8));

/// The distributions whose draws do not depend on the insert count.
#[derive(Debug, Clone)]
pub(super) enum Fixed {
    Uniform(Uniform),
    Zipfian(ScrambledZipfian),
    Hotspot(Hotspot),
}

/// A key drawn ahead: its record number and its digits, in one half of a
/// cache line. With a thread's many slots their state outgrows the L2
/// cache; kept in two arrays, an operation missed on both.
#[derive(Debug, Clone, Copy)]
#[repr(C, align(32))]
struct Drawn {
    num: u64,
    digits: KeyDigits,
}

const _: () = assert!(std::mem::size_of::<Drawn>() == 32);

#[derive(Debug, Clone)]
pub(super) struct KeysAhead {
    /// The keys' own generator: drawing ahead does not shift the draws of
    /// operation kinds, fields and values.
    rng: Rng,
    dist: Fixed,
    keys: [Drawn; AHEAD],
    /// The next key to hand out; AHEAD when all are used.
    next: usize,
    /// The key handed out last, whose digits `digits_of` gives.
    last: usize,
}

impl KeysAhead {
    pub(super) fn new(dist: Fixed, seed: u64, c: &CoreConfig) -> Self {
        let mut a = KeysAhead {
            rng: Rng::new(seed),
            dist,
            keys: [Drawn {
                num: 0,
                digits: KeyDigits::of(0, true),
            }; AHEAD],
            next: 0,
            last: 0,
        };
        a.refill(c);
        a
    }

    /// The next key at or below `limit` (YCSB redraws keys not yet inserted).
    #[inline]
    pub(super) fn next(&mut self, c: &CoreConfig, limit: u64) -> u64 {
        loop {
            if self.next == AHEAD {
                self.refill(c);
            }
            let i = self.next;
            self.next += 1;
            let num = self.keys[i].num;
            if num <= limit {
                self.last = i;
                return num;
            }
        }
    }

    /// The digits of `keynum`'s key when it is the key handed out last.
    #[inline]
    pub(super) fn digits_of(&self, keynum: u64) -> Option<&KeyDigits> {
        let k = &self.keys[self.last];
        (k.num == keynum).then_some(&k.digits)
    }

    /// Draws the next batch, compiled for AVX2 and BMI2 where the CPU has
    /// them: the batch's sixteen-wide loops take 256-bit registers, and the
    /// digits' divisions by constants `mulx` (null:// workload C: 554 ->
    /// 519 instructions an operation, client CPU -4% paired on a Zen 1
    /// core). The same operations on the same values either way, so the
    /// same keys (no multiplication and addition are fused into one
    /// rounding). What the batch calls is `#[inline(always)]`: a call out
    /// of the AVX2 build runs the baseline one.
    #[inline(never)]
    fn refill(&mut self, c: &CoreConfig) {
        #[cfg(target_arch = "x86_64")]
        if avx2_bmi2() {
            // SAFETY: the CPU has AVX2, BMI1, BMI2 and LZCNT (checked above).
            return unsafe { self.refill_avx2(c) };
        }
        self.refill_any(c)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,bmi1,bmi2,lzcnt")]
    fn refill_avx2(&mut self, c: &CoreConfig) {
        self.refill_any(c)
    }

    /// Draws the next batch: the draws first (the generator's state is one
    /// short chain), then the digits, whose sixteen chains are independent.
    #[inline(always)]
    fn refill_any(&mut self, c: &CoreConfig) {
        let rng = &mut self.rng;
        let mut nums = [0u64; AHEAD];
        match &mut self.dist {
            Fixed::Uniform(g) => nums.iter_mut().for_each(|n| *n = g.next(rng)),
            Fixed::Zipfian(g) => g.fill(rng, &mut nums),
            Fixed::Hotspot(g) => nums.iter_mut().for_each(|n| *n = g.next(rng)),
        }
        let mut hashed = nums;
        key_numbers(c, &mut hashed);
        let eights = self.keys.chunks_exact_mut(8).zip(nums.chunks_exact(8));
        for ((keys, nums), hashed) in eights.zip(hashed.chunks_exact(8)) {
            let digits = KeyDigits::of_eight(hashed.try_into().expect("8 numbers"));
            for ((k, &num), digits) in keys.iter_mut().zip(nums).zip(digits) {
                *k = Drawn { num, digits };
            }
        }
        self.next = 0;
        self.last = 0;
    }
}

/// Whether the CPU has what [`KeysAhead::refill_avx2`] is compiled for;
/// std caches the answers (a load and a test each per batch of keys).
#[cfg(target_arch = "x86_64")]
#[inline]
fn avx2_bmi2() -> bool {
    std::is_x86_feature_detected!("avx2")
        && std::is_x86_feature_detected!("bmi1")
        && std::is_x86_feature_detected!("bmi2")
        && std::is_x86_feature_detected!("lzcnt")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::keys::build_key;
    use crate::workload::Properties;

    fn config(kv: &[&str]) -> CoreConfig {
        let mut p = Properties::new();
        for o in kv {
            p.set_override(o).unwrap();
        }
        CoreConfig::from_properties(&p).unwrap()
    }

    fn key(d: &KeyDigits, pad: usize) -> String {
        let mut b = Vec::new();
        d.write_key(pad, &mut b);
        String::from_utf8(b).unwrap()
    }

    #[test]
    fn keys_drawn_ahead_are_checked_against_the_limit_when_used() {
        let c = config(&["recordcount=1000"]);
        let mut a = KeysAhead::new(Fixed::Uniform(Uniform::new(0, 999)), 7, &c);
        let mut b = a.clone();
        // the limit moves between draws: each key is checked as it is used
        for limit in (0..2000).map(|i| i % 1000) {
            let k = a.next(&c, limit);
            assert!(k <= limit, "{k} above {limit}");
        }
        // the same seed draws the same keys
        let mut a = KeysAhead::new(Fixed::Uniform(Uniform::new(0, 999)), 7, &c);
        for _ in 0..100 {
            assert_eq!(a.next(&c, 999), b.next(&c, 999));
        }
    }

    /// The batch compiled for AVX2 and BMI2 draws the keys and digits the
    /// baseline build does, for each distribution and both insert orders.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_avx2_batch_draws_the_baseline_batch() {
        if !avx2_bmi2() {
            eprintln!("skipped: this CPU lacks AVX2 or BMI2");
            return;
        }
        for order in ["insertorder=hashed", "insertorder=ordered"] {
            let c = config(&["recordcount=100000", order]);
            let dists = [
                Fixed::Uniform(Uniform::new(0, 99_999)),
                Fixed::Zipfian(ScrambledZipfian::new(0, 99_999, 0.99)),
                Fixed::Zipfian(ScrambledZipfian::new(0, 99_999, 0.5)),
                Fixed::Hotspot(Hotspot::new(0, 99_999, 0.2, 0.8)),
            ];
            for dist in dists {
                let mut fast = KeysAhead::new(dist.clone(), 3, &c);
                let mut base = KeysAhead::new(dist, 3, &c);
                for _ in 0..500 {
                    // SAFETY: the CPU has the features (checked above).
                    unsafe { fast.refill_avx2(&c) };
                    base.refill_any(&c);
                    for (f, b) in fast.keys.iter().zip(&base.keys) {
                        assert_eq!((f.num, key(&f.digits, 0)), (b.num, key(&b.digits, 0)));
                    }
                }
            }
        }
    }

    #[test]
    fn the_last_key_has_its_digits_and_no_other_does() {
        for ordered in [false, true] {
            let c = config(&[
                "recordcount=100000",
                if ordered {
                    "insertorder=ordered"
                } else {
                    "insertorder=hashed"
                },
            ]);
            let z = ScrambledZipfian::new(0, 99_999, 0.99);
            let mut a = KeysAhead::new(Fixed::Zipfian(z), 1, &c);
            for _ in 0..100 {
                let k = a.next(&c, 99_999);
                let d = a.digits_of(k).expect("the key just drawn");
                let mut expect = Vec::new();
                build_key(k, c.zero_padding, ordered, &mut expect);
                assert_eq!(key(d, c.zero_padding).into_bytes(), expect);
                let other = (k + 1) % 100_000;
                if a.keys[a.last].num != other {
                    assert!(a.digits_of(other).is_none());
                }
            }
        }
    }
}
