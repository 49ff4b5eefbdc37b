//! Open-loop pacing on one global schedule: operation i of the whole run is
//! intended at t0 + i / rate. Slot j of S takes operations j, j+S, j+2S, ...,
//! so the slots together follow the schedule without sharing a counter, and a
//! slot that falls behind keeps its intended times (the delay is measured,
//! never skipped).
use super::schedule::Schedule;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Debug, Clone)]
pub(crate) struct Pacer {
    t0: Instant,
    plan: Plan,
    next_index: u64,
    stride: u64,
}

/// When operation i is intended, from t0.
#[derive(Debug, Clone)]
enum Plan {
    /// A constant rate: i * period.
    Period(f64),
    /// Replays: operation i's offset in ns.
    Table(Arc<[u64]>),
    /// A rate schedule, with the segment this slot reached.
    Schedule(Arc<Schedule>, std::cell::Cell<usize>),
}

impl Pacer {
    /// `rate`: operations per second over all `slots`; this pacer is slot `slot`.
    pub(crate) fn new(t0: Instant, rate: f64, slot: u64, slots: u64) -> Self {
        Pacer {
            t0,
            plan: Plan::Period(1e9 / rate),
            next_index: slot,
            stride: slots,
        }
    }

    /// Operation i at t0 + `timetable[i]` ns; none after the last.
    pub(crate) fn on_timetable(t0: Instant, timetable: Arc<[u64]>, slot: u64, slots: u64) -> Self {
        Pacer {
            t0,
            plan: Plan::Table(timetable),
            next_index: slot,
            stride: slots,
        }
    }

    /// Operation i where the schedule's operations reach i; none after its end.
    pub(crate) fn on_schedule(t0: Instant, schedule: Arc<Schedule>, slot: u64, slots: u64) -> Self {
        Pacer {
            t0,
            plan: Plan::Schedule(schedule, std::cell::Cell::new(0)),
            next_index: slot,
            stride: slots,
        }
    }

    /// Intended start of this slot's next operation; advances the schedule.
    #[inline]
    pub(crate) fn next_intended(&mut self) -> Option<Instant> {
        let t = self.peek();
        self.next_index += self.stride;
        t
    }

    /// Intended start of this slot's next operation (`None`: the timetable
    /// has no more for it).
    #[inline]
    pub(crate) fn peek(&self) -> Option<Instant> {
        let off = match &self.plan {
            Plan::Period(p) => (self.next_index as f64 * p) as u64,
            Plan::Table(t) => *t.get(usize::try_from(self.next_index).ok()?)?,
            Plan::Schedule(s, cursor) => {
                let mut c = cursor.get();
                let t = s.time_of(self.next_index, &mut c)?;
                cursor.set(c);
                (t * 1e9) as u64
            }
        };
        Some(self.t0 + Duration::from_nanos(off))
    }

    /// Scheduled operations of this slot intended before `deadline`, from the next one on.
    pub(crate) fn remaining_before(&self, deadline: Instant) -> u64 {
        if deadline <= self.t0 {
            return 0;
        }
        let bound = match &self.plan {
            Plan::Period(p) => (deadline - self.t0).as_nanos() as f64 / p,
            Plan::Table(t) => {
                let d = (deadline - self.t0).as_nanos() as u64;
                t.partition_point(|&x| x < d) as f64
            }
            Plan::Schedule(s, _) => s.ops_until((deadline - self.t0).as_secs_f64()),
        };
        let next = self.next_index as f64;
        if next >= bound {
            0
        } else {
            ((bound - next) / self.stride as f64).ceil() as u64
        }
    }
}

/// Waits until `t`. A slot alone on its thread sleeps then spins for precision;
/// slots sharing a thread wait without blocking it (see [`sleep_until_precisely`]).
pub(crate) async fn wait_until(t: Instant, alone_on_thread: bool) {
    let now = Instant::now();
    if t <= now {
        return;
    }
    if alone_on_thread {
        // pacing=spin keeps its fixed margin of 100 µs, and sleeps only
        // for waits over twice that
        let sleeps = super::timerfd::sleeps();
        let (margin, least) = if sleeps {
            let m = wake_margin();
            (m, m)
        } else {
            (Duration::from_micros(100), Duration::from_micros(200))
        };
        if t - now > least {
            let wake = t - margin;
            std::thread::sleep(wake - now);
            if sleeps {
                woke(wake);
            }
        } else if sleeps {
            spun_for_margin();
        }
        let spin = Instant::now();
        while Instant::now() < t {
            std::hint::spin_loop();
        }
        add_wait(spin.elapsed());
    } else {
        sleep_until_precisely(t).await;
    }
}

/// Waits until `t` without holding the thread, ending within microseconds
/// of `t`. On worker threads with `pacing=sleep` a kernel timer (timerfd)
/// wakes the slot this thread's [`wake_margin`] before `t`; elsewhere (and
/// with `pacing=spin`) the runtime's timer, which fires up to ~2 ms late,
/// sleeps to 2 ms before `t`. The rest is spent yielding to the thread's
/// other tasks. The pacer's shared slots and `null://`'s simulated latency
/// wait this way.
pub async fn sleep_until_precisely(t: Instant) {
    let now = Instant::now();
    let mut slept = false;
    if super::timerfd::sleeps() {
        let margin = wake_margin();
        if t.saturating_duration_since(now) > margin {
            let wake = t - margin;
            slept = super::timerfd::sleep_until(wake).await.is_ok();
            if slept {
                woke(wake);
            }
        } else {
            spun_for_margin();
        }
    }
    if !slept && t.saturating_duration_since(now) > Duration::from_millis(3) {
        tokio::time::sleep_until((t - Duration::from_millis(2)).into()).await;
    }
    loop {
        let now = Instant::now();
        note_poll(now);
        if now >= t {
            break;
        }
        tokio::task::yield_now().await;
    }
}

thread_local! {
    /// How late this thread's timer wake-ups run: a moving mean and mean
    /// deviation (ns). Seeded at 50 +- 25 µs; this machine measured 40-50.
    static WAKE: std::cell::Cell<(f64, f64)> = const { std::cell::Cell::new((50_000.0, 25_000.0)) };
}

/// A wait shorter than the margin was spun whole: the estimate decays, so
/// a margin grown too large (a busy spell) is tried smaller again.
fn spun_for_margin() {
    WAKE.with(|w| {
        let (mean, dev) = w.get();
        w.set((mean * 0.97, dev * 0.97));
    });
}

/// How long before its instant a wait asks to be woken: what wake-ups on
/// this thread ran late lately, plus three deviations, so nearly every wait
/// ends spinning (exact) rather than late, and spins little.
fn wake_margin() -> Duration {
    let (mean, dev) = WAKE.with(|w| w.get());
    Duration::from_nanos((mean + 3.0 * dev).clamp(5_000.0, 2_000_000.0) as u64)
}

/// A timer meant to wake the thread at `wake` just did. A wake-up later
/// than 200 µs was the thread preempted, not the timer's latency: counted as
/// 200 µs, so one hiccup does not make every later wait spin.
fn woke(wake: Instant) {
    let late = Instant::now().saturating_duration_since(wake).as_nanos() as f64;
    let late = late.min(200_000.0);
    WAKE.with(|w| {
        let (mean, dev) = w.get();
        let mean = mean + (late - mean) / 16.0;
        w.set((mean, dev + ((late - mean).abs() - dev) / 16.0));
    });
}

thread_local! {
    /// This thread's time spent spinning for the schedule (ns), and its
    /// last poll of a waiting slot.
    static WAITED: std::cell::Cell<(u64, Option<Instant>)> = const { std::cell::Cell::new((0, None)) };
}

/// Two polls of waiting slots closer than this had nothing else run
/// between them: the gap was spent waiting.
const IDLE_GAP: Duration = Duration::from_micros(2);

fn add_wait(d: Duration) {
    WAITED.with(|w| {
        let (n, last) = w.get();
        w.set((n + d.as_nanos() as u64, last));
    });
}

fn note_poll(now: Instant) {
    WAITED.with(|w| {
        let (mut n, last) = w.get();
        if let Some(gap) = last.map(|l| now.saturating_duration_since(l)) {
            if gap < IDLE_GAP {
                n += gap.as_nanos() as u64;
            }
        }
        w.set((n, Some(now)));
    });
}

/// CPU time this thread spent spinning for precise waits so far: busy in
/// the CPU's eyes, idle in the client's.
pub(crate) fn waited_on_thread() -> Duration {
    Duration::from_nanos(WAITED.with(|w| w.get().0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_interleave_on_one_global_schedule() {
        let t0 = Instant::now();
        let mut a = Pacer::new(t0, 1000.0, 0, 2);
        let mut b = Pacer::new(t0, 1000.0, 1, 2);
        let ms = |t: Option<Instant>| (t.unwrap() - t0).as_secs_f64() * 1000.0;
        assert_eq!(ms(a.next_intended()).round(), 0.0);
        assert_eq!(ms(b.next_intended()).round(), 1.0);
        assert_eq!(ms(a.next_intended()).round(), 2.0);
        assert_eq!(ms(b.next_intended()).round(), 3.0);
        // 1000/s for 10 ms from index 4 on: slot a has 4, 6, 8 left
        assert_eq!(a.remaining_before(t0 + Duration::from_millis(10)), 3);
    }

    #[test]
    fn a_timetable_is_followed_to_its_end() {
        let t0 = Instant::now();
        let table: Arc<[u64]> = vec![0, 10, 10, 500, 2_000_000].into();
        let mut a = Pacer::on_timetable(t0, table.clone(), 0, 2);
        let mut b = Pacer::on_timetable(t0, table, 1, 2);
        let ns = |t: Option<Instant>| t.map(|t| (t - t0).as_nanos() as u64);
        assert_eq!(b.remaining_before(t0 + Duration::from_micros(1)), 2);
        assert_eq!(ns(a.next_intended()), Some(0));
        assert_eq!(ns(b.next_intended()), Some(10));
        assert_eq!(ns(a.next_intended()), Some(10));
        assert_eq!(ns(b.next_intended()), Some(500));
        assert_eq!(ns(b.peek()), None);
        assert_eq!(ns(a.next_intended()), Some(2_000_000));
        assert_eq!(ns(a.next_intended()), None);
    }

    #[test]
    fn slots_share_a_rate_schedule() {
        let t0 = Instant::now();
        let s = Arc::new(Schedule::parse("1000@10ms,2000@10ms").unwrap());
        let mut a = Pacer::on_schedule(t0, s.clone(), 0, 2);
        let mut b = Pacer::on_schedule(t0, s, 1, 2);
        let us = |t: Option<Instant>| t.map(|t| ((t - t0).as_nanos() as f64 / 1e3).round());
        let mut all = Vec::new();
        for _ in 0..15 {
            all.extend(us(a.next_intended()));
            all.extend(us(b.next_intended()));
        }
        // 10 ops a millisecond apart, then 20 half a millisecond apart
        let want: Vec<f64> = (0..10)
            .map(|i| i as f64 * 1000.0)
            .chain((0..20).map(|i| 10_000.0 + i as f64 * 500.0))
            .collect();
        assert_eq!(all, want);
        assert_eq!(a.next_intended(), None);
        let s = Arc::new(Schedule::parse("1000@10ms,2000@10ms").unwrap());
        let a = Pacer::on_schedule(t0, s, 0, 2);
        // 10 + 10 scheduled before 15 ms, every other one this slot's
        assert_eq!(a.remaining_before(t0 + Duration::from_millis(15)), 10);
    }

    #[test]
    fn spinning_for_the_schedule_counts_as_waiting() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        let before = waited_on_thread();
        // two slots that yield to each other for 1.5 ms: nearly all of it waiting
        let t = Instant::now() + Duration::from_micros(1500);
        rt.block_on(async {
            futures_util::future::join(sleep_until_precisely(t), sleep_until_precisely(t)).await
        });
        // how much of it counts depends on how often the host lets the
        // thread run (gaps of 2 us and more are not spinning)
        let spun = waited_on_thread() - before;
        assert!(spun > Duration::ZERO, "{spun:?}");
        assert!(spun < Duration::from_millis(3), "{spun:?}");
        // the accounting: gaps between polls under 2 us count, longer ones
        // (real work, or the thread not running) do not
        let t = Instant::now() + Duration::from_secs(1);
        note_poll(t);
        let before = waited_on_thread();
        note_poll(t + Duration::from_nanos(1_500));
        note_poll(t + Duration::from_nanos(2_500));
        assert_eq!(waited_on_thread() - before, Duration::from_nanos(2_500));
        note_poll(t + Duration::from_micros(1_000));
        assert_eq!(waited_on_thread() - before, Duration::from_nanos(2_500));
    }

    #[test]
    fn the_wake_margin_follows_late_wake_ups_and_forgets_a_hiccup() {
        std::thread::spawn(|| {
            let seeded = wake_margin();
            // wake-ups 10 µs late, steadily: the margin shrinks toward them
            for _ in 0..200 {
                woke(Instant::now() - Duration::from_micros(10));
            }
            let steady = wake_margin();
            assert!(steady < seeded, "{steady:?} >= {seeded:?}");
            assert!(steady >= Duration::from_micros(9), "{steady:?}");
            // one 50 ms preemption counts as 200 µs, not 50 ms
            woke(Instant::now() - Duration::from_millis(50));
            let hiccup = wake_margin();
            assert!(hiccup < Duration::from_micros(200), "{hiccup:?}");
            // waits spun whole because the margin was larger make it shrink
            for _ in 0..100 {
                spun_for_margin();
            }
            assert!(
                wake_margin() <= Duration::from_micros(10),
                "{:?}",
                wake_margin()
            );
        })
        .join()
        .unwrap();
    }

    #[test]
    fn waiting_reaches_the_intended_time() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        for alone in [true, false] {
            let t = Instant::now() + Duration::from_millis(3);
            rt.block_on(wait_until(t, alone));
            assert!(Instant::now() >= t);
        }
        // a worker thread: its slots sleep on kernel timers, the thread idle
        std::thread::spawn(|| {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            super::super::timerfd::sleep_precisely_on_this_thread();
            let cpu0 = crate::run::cpu::thread_cpu_time();
            let t = Instant::now() + Duration::from_millis(200);
            rt.block_on(futures_util::future::join(
                sleep_until_precisely(t),
                sleep_until_precisely(t),
            ));
            assert!(Instant::now() >= t);
            let used = crate::run::cpu::thread_cpu_time() - cpu0;
            // yield-spinning the last 2 ms and more would show; sleeping does not
            assert!(used < Duration::from_millis(100), "{used:?}");
        })
        .join()
        .unwrap();
    }
}
