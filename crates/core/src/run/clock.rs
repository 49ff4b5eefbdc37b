//! The raw clock an operation is timed by: quanta's, whose stamps are the
//! CPU's time-stamp counter where it is invariant (the OS clock elsewhere).
//! quanta's `raw` is a call and a match on its source at every stamp;
//! where quanta reads the counter, a stamp here reads it in place (two
//! stamps an operation: 694 -> 671 instructions a null:// workload C
//! operation).
//! A difference of stamps is scaled to ns in one 64-bit multiplication
//! where quanta's own scaling (a 128-bit product and a shift by its
//! calibration's amount) gives the same number, as it does below ~4 s on
//! the counters seen; the rest, and calibration, is quanta's.
use std::cell::Cell;
use std::ops::Deref;

thread_local! {
    /// The stamp a worker took at the start of the call it is making, for
    /// the call's time limit ([`crate::bounded`]) to start from instead of
    /// reading the counter again at the same instant (one RDTSC of every
    /// network call: ~22 ns on a host where the counter is slow to read).
    /// 0: none lent. Taken (and cleared) by the call's first poll, which
    /// the lending worker makes at once, so it is never a stale stamp.
    static LENT: Cell<u64> = const { Cell::new(0) };
}

#[derive(Debug, Clone)]
pub(crate) struct Clock {
    inner: quanta::Clock,
    /// quanta's raw stamps are the time-stamp counter itself.
    pub(crate) tsc: bool,
    /// ns in 2^32 counts of the counter, as quanta scales them.
    per_2_32: u64,
    /// Differences below this many counts scale as `d * per_2_32 >> 32`
    /// (0: none do; quanta scales every one).
    fast_below: u64,
}

impl Clock {
    pub(crate) fn new() -> Clock {
        let inner = quanta::Clock::new();
        let tsc = reads_the_counter(&inner);
        Clock::scaled(inner, tsc)
    }

    /// `inner` with the 64-bit scaling where it gives quanta's own ns.
    fn scaled(inner: quanta::Clock, tsc: bool) -> Clock {
        let mut c = Clock {
            inner,
            tsc,
            per_2_32: 0,
            fast_below: 0,
        };
        let per = c.inner.delta_as_nanos(0, 1 << 32);
        if tsc && per > 0 {
            c.per_2_32 = per;
            c.fast_below = u64::MAX / per;
            // quanta shifts by its calibration's amount, not by 32: where
            // that amount is above 32, the two can differ by a ns, and
            // then quanta scales every difference
            if !c.scales_as_quanta() {
                c.fast_below = 0;
            }
        }
        c
    }

    /// Whether [`Self::nanos`] gives quanta's ns over differences of every
    /// size it scales itself, from one count to its limit.
    fn scales_as_quanta(&self) -> bool {
        let mut rng = crate::rng::Rng::new(0x5ca1e);
        let mut ds: Vec<u64> = (0..64)
            .map(|bit| 1u64 << bit)
            .flat_map(|p| [p, p - 1, rng.below(p)])
            .collect();
        ds.extend((0..256).map(|_| rng.below(self.fast_below)));
        ds.into_iter()
            .filter(|&d| d < self.fast_below)
            .all(|d| self.nanos(7, 7 + d) == self.inner.delta_as_nanos(7, 7 + d))
    }

    /// ns from stamp `start` to stamp `end` (0 when `end` is not later):
    /// quanta's `delta_as_nanos`, in one multiplication below
    /// `fast_below` counts (its 128-bit product and shift by a variable
    /// amount cost ~8 instructions more an operation).
    #[inline(always)]
    pub(crate) fn nanos(&self, start: u64, end: u64) -> u64 {
        let d = end.saturating_sub(start);
        if d < self.fast_below {
            return (d * self.per_2_32) >> 32;
        }
        self.inner.delta_as_nanos(start, end)
    }

    /// The process's clock, for stamps taken outside a worker's recording
    /// (a call's time limit): one line every session reads, where a clock
    /// of each session's own was a line of its state fetched per call.
    pub(crate) fn shared() -> &'static Clock {
        static SHARED: std::sync::OnceLock<Clock> = std::sync::OnceLock::new();
        SHARED.get_or_init(Clock::new)
    }

    /// A raw stamp, the same as quanta's `raw` gives.
    #[inline(always)]
    pub(crate) fn raw(&self) -> u64 {
        #[cfg(target_arch = "x86_64")]
        if self.tsc {
            return counter();
        }
        self.inner.raw()
    }

    /// Lends `stamp`, just taken for a call about to be polled, to that
    /// call's first [`Clock::call_start`]. Only stamps of the counter are
    /// lent: those are the same on every clock that reads it.
    #[inline(always)]
    pub(crate) fn lend(&self, stamp: u64) {
        if self.tsc {
            LENT.set(stamp);
        }
    }

    /// The stamp lent now (0: none), left where it is.
    #[cfg(test)]
    pub(crate) fn lent() -> u64 {
        LENT.get()
    }

    /// The start of a call: the stamp lent for it, else one read now.
    #[inline(always)]
    pub(crate) fn call_start(&self) -> u64 {
        let lent = LENT.replace(0);
        if lent != 0 && self.tsc {
            return lent;
        }
        self.raw()
    }
}

impl Deref for Clock {
    type Target = quanta::Clock;

    fn deref(&self) -> &quanta::Clock {
        &self.inner
    }
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn counter() -> u64 {
    // SAFETY: RDTSC exists on every x86-64 CPU and only reads the counter
    unsafe { core::arch::x86_64::_rdtsc() }
}

/// Whether `clock`'s raw stamps are the time-stamp counter: a stamp read
/// between two reads of the counter lies between them. The OS clock's
/// nanoseconds since boot cannot land in a window of at most 10^7 counts
/// (a few hundred natively, ~10^6 under valgrind) at an origin and rate of
/// the counter's own; a preempted try is retried.
#[cfg(target_arch = "x86_64")]
fn reads_the_counter(clock: &quanta::Clock) -> bool {
    for _ in 0..8 {
        let before = counter();
        let raw = clock.raw();
        let after = counter();
        if after.wrapping_sub(before) < 10_000_000 {
            return (before..=after).contains(&raw);
        }
    }
    false
}

#[cfg(not(target_arch = "x86_64"))]
fn reads_the_counter(_: &quanta::Clock) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_in_place_are_the_stamps_quanta_gives() {
        let clock = Clock::new();
        // interleaved with quanta's own reads, ours never run backwards
        // against them: both are one source
        let mut last = clock.inner.raw();
        for _ in 0..1000 {
            let ours = clock.raw();
            let theirs = clock.inner.raw();
            assert!(last <= ours && ours <= theirs, "{last} {ours} {theirs}");
            last = theirs;
        }
        let (a, b) = (clock.raw(), clock.raw());
        std::thread::sleep(std::time::Duration::from_millis(20));
        let c = clock.raw();
        let ms = clock.delta_as_nanos(b, c) as f64 / 1e6;
        assert!(a <= b && (19.0..2_000.0).contains(&ms), "{ms} ms");
    }

    #[test]
    fn a_lent_stamp_starts_one_call_only() {
        let clock = Clock::new();
        let before = clock.raw();
        clock.lend(7);
        let first = clock.call_start();
        let second = clock.call_start();
        if clock.tsc {
            assert_eq!(first, 7, "the lent stamp");
        } else {
            assert!(first >= before, "no counter: nothing lent, read now");
        }
        assert!(second >= before, "taken once, then read now: {second}");
        // a clock that does not read the counter neither lends nor borrows
        let os = Clock::scaled(quanta::Clock::new(), false);
        os.lend(7);
        assert_ne!(clock.call_start(), 7);
        clock.lend(7);
        assert_ne!(os.call_start(), 7);
        assert!(
            clock.call_start() >= before,
            "the OS clock's borrow cleared it"
        );
    }

    #[test]
    fn differences_scale_to_the_ns_quanta_gives() {
        let clock = Clock::new();
        assert!(clock.scales_as_quanta());
        let mut rng = crate::rng::Rng::new(3);
        for _ in 0..10_000 {
            let start = rng.below(u64::MAX / 2);
            let bits = rng.below(62);
            let d = rng.below(1 << bits);
            assert_eq!(
                clock.nanos(start, start + d),
                clock.inner.delta_as_nanos(start, start + d),
                "{d} counts"
            );
        }
        assert_eq!(clock.nanos(10, 5), 0, "an earlier end is no time");
        if clock.tsc {
            assert!(clock.fast_below > 1 << 30, "{}", clock.fast_below);
        }
        // a clock scaled by quanta alone: the OS clock's, and a mock whose
        // stamps are ns already
        let (mock, _) = quanta::Clock::mock();
        let os = Clock::scaled(mock, false);
        assert_eq!(os.fast_below, 0);
        assert_eq!(os.nanos(5, 1_005), 1_000);
    }

    #[test]
    fn the_os_clock_is_not_taken_for_the_counter() {
        let (mock, _) = quanta::Clock::mock();
        assert!(!reads_the_counter(&mock));
        #[cfg(target_arch = "x86_64")]
        {
            // where quanta reads the counter, the probe says so
            let clock = quanta::Clock::new();
            let before = counter();
            let raw = clock.raw();
            let after = counter();
            if (before..=after).contains(&raw) {
                assert!(reads_the_counter(&clock));
            }
        }
    }
}
