//! Raw clock stamps and `Instant`s. Operations are timed by raw stamps (the
//! CPU's invariant TSC where there is one); the coarse decisions about an
//! operation (its interval, whether it ended after the warm-up or past the
//! deadline) are made on its stamp too, against moments mapped to stamps
//! once per interval: an operation costs no conversion to an `Instant`.
use std::time::{Duration, Instant};

/// An `Instant` and the raw stamp of the same moment; re-taken every
/// interval so calibration drift cannot accumulate.
#[derive(Debug, Clone, Copy)]
pub(super) struct Anchor {
    pub(super) at: Instant,
    pub(super) raw: u64,
}

impl Anchor {
    /// The stamp is read on either side of the clock, retried when the
    /// thread was preempted between them (a torn pair would shift every
    /// mapped time by the preemption).
    pub(super) fn take(clock: &quanta::Clock) -> Anchor {
        let mut pair = (Instant::now(), clock.raw());
        for _ in 0..5 {
            let before = clock.raw();
            let now = Instant::now();
            let after = clock.raw();
            pair = (now, before + (after.saturating_sub(before)) / 2);
            if clock.delta_as_nanos(before, after) < 2_000 {
                break;
            }
        }
        Anchor {
            at: pair.0,
            raw: pair.1,
        }
    }

    /// The `Instant` of a raw stamp (a stamp before the anchor's maps to
    /// the anchor), to within the clock drift of one interval.
    #[inline]
    pub(super) fn instant(&self, clock: &quanta::Clock, stamp: u64) -> Instant {
        let ns = clock.delta_as_nanos(self.raw, stamp);
        // within a second of the anchor (renewed each interval) without the
        // division `from_nanos` makes to split seconds off
        let d = match u32::try_from(ns) {
            Ok(n) if n < 1_000_000_000 => Duration::new(0, n),
            _ => Duration::from_nanos(ns),
        };
        self.at + d
    }

    /// The first stamp [`Self::instant`] maps to `t` or later: a stamp is
    /// at or past it exactly when its `Instant` is at or past `t` (0 when
    /// `t` is not after the anchor; `u64::MAX` when no stamp reaches it).
    pub(super) fn stamp_of(&self, clock: &quanta::Clock, t: Instant) -> u64 {
        let ns = match t.checked_duration_since(self.at) {
            Some(d) if !d.is_zero() => u64::try_from(d.as_nanos()).unwrap_or(u64::MAX),
            _ => return 0,
        };
        let reaches = |r: u64| clock.delta_as_nanos(self.raw, r) >= ns;
        // the clock's scale gives a guess; a bisection from a bracket around
        // it gives the exact stamp (whatever rounding the clock's scaling has)
        let probe = 1u64 << 40;
        let per_ns = probe as f64 / clock.delta_as_nanos(0, probe).max(1) as f64;
        let guess = self.raw.saturating_add((ns as f64 * per_ns) as u64);
        let slack = (guess - self.raw) / 1_000_000 + 16;
        let (mut lo, mut hi) = (self.raw, u64::MAX);
        if guess.saturating_sub(slack) > lo && !reaches(guess - slack) {
            lo = guess - slack;
        }
        if reaches(guess.saturating_add(slack)) {
            hi = guess.saturating_add(slack);
        }
        if !reaches(hi) {
            return u64::MAX;
        }
        // lo does not reach t, hi does
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if reaches(mid) {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        hi
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stamp_reaches_a_moment_exactly_when_its_instant_does() {
        let clock = quanta::Clock::new();
        let a = Anchor::take(&clock);
        for ns in [
            1u64,
            2,
            3,
            999,
            1_000,
            123_457,
            999_999_999,
            1_000_000_000,
            3_600_000_000_123,
        ] {
            let t = a.at + Duration::from_nanos(ns);
            let s = a.stamp_of(&clock, t);
            assert!(a.instant(&clock, s) >= t, "{ns} ns");
            assert!(a.instant(&clock, s - 1) < t, "{ns} ns");
        }
        // moments at or before the anchor: every stamp is past them
        assert_eq!(a.stamp_of(&clock, a.at), 0);
        assert_eq!(a.stamp_of(&clock, a.at - Duration::from_secs(5)), 0);
    }

    #[test]
    fn instants_of_stamps_follow_the_clock() {
        let clock = quanta::Clock::new();
        let a = Anchor::take(&clock);
        std::thread::sleep(Duration::from_millis(20));
        let (before, stamp, after) = (Instant::now(), clock.raw(), Instant::now());
        let mapped = a.instant(&clock, stamp);
        // between the clock reads on either side, give or take the drift
        let slack = Duration::from_millis(1);
        assert!(
            mapped + slack >= before && mapped <= after + slack,
            "{mapped:?}"
        );
        // a stamp before the anchor maps to the anchor
        assert_eq!(a.instant(&clock, a.raw.saturating_sub(1000)), a.at);
    }
}
