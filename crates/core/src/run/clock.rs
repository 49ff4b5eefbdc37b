//! The raw clock an operation is timed by: quanta's, whose stamps are the
//! CPU's time-stamp counter where it is invariant (the OS clock elsewhere).
//! quanta's `raw` is a call and a match on its source at every stamp;
//! where quanta reads the counter, a stamp here reads it in place (two
//! stamps an operation: 694 -> 671 instructions a null:// workload C
//! operation).
//! Everything else (scaling a difference to ns, calibration) is quanta's.
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
}

impl Clock {
    pub(crate) fn new() -> Clock {
        let inner = quanta::Clock::new();
        let tsc = reads_the_counter(&inner);
        Clock { inner, tsc }
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
        let os = Clock {
            inner: quanta::Clock::new(),
            tsc: false,
        };
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
