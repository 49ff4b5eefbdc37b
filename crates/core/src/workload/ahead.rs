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

    /// Draws the next batch: the draws first (the generator's state is one
    /// short chain), then the digits, whose sixteen chains are independent.
    #[inline(never)]
    fn refill(&mut self, c: &CoreConfig) {
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
