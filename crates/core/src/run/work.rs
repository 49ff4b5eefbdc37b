//! What a run's slots do. The runner owns threads, the start gate, pacing,
//! stop conditions, intervals and the sampler; a [`Work`] owns sessions and
//! operations. YCSB's core workload ([`super::Ycsb`]) is one, TPC-C's
//! terminals another, so both get the same pacing, warm-up, status line,
//! histograms, signal handling and error budget.
use super::worker::WorkerState;
use crate::binding::{BindingError, Outcome, Status};
use crate::op::OpKind;
use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// One slot of the run: `concurrency` of them per worker thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlotId {
    pub worker: usize,
    /// Index among its worker's slots.
    pub local: usize,
    /// Index among all slots of this instance (worker * concurrency + local).
    pub index: u64,
    /// The slot's own seed, derived from (run seed, instance, worker, local).
    pub seed: u64,
}

/// What one step of a slot did.
#[derive(Debug, Clone, Copy)]
pub struct Stepped {
    /// When it ended.
    pub end: Instant,
    /// Operations it counts towards `operationcount` (a batch counts its records).
    pub ops: u64,
}

/// The work of a run's slots.
#[allow(async_fn_in_trait)]
pub trait Work: Sync {
    /// A slot's state: its session and its generators.
    type Slot;

    /// Opens a slot on its worker's thread, inside that thread's runtime,
    /// before the clock starts.
    async fn open(&self, slot: SlotId) -> Result<Self::Slot, BindingError>;

    /// Performs the slot's next operation (or batch), intended at `intended`
    /// on the open-loop schedule (`None`: closed loop), and records it in
    /// `rec`. `None` when the slot has nothing left to do (the load's keys
    /// are exhausted).
    async fn step(
        &self,
        slot: &mut Self::Slot,
        intended: Option<Instant>,
        rec: &Recording<'_>,
    ) -> Option<Stepped>;
}

/// Where an operation's response time is measured from.
#[derive(Debug, Clone, Copy)]
pub enum Origin {
    /// Open loop: the operation's place on the schedule.
    Intended(Instant),
    /// Closed loop: a raw stamp (the call's start, or a retried call's first attempt).
    Stamp(u64),
}

impl Origin {
    /// The schedule's time when there is one, else the stamp `first`.
    #[inline]
    pub fn of(intended: Option<Instant>, first: u64) -> Origin {
        intended.map_or(Origin::Stamp(first), Origin::Intended)
    }
}

/// A slot's handle on its worker's recorder and clock, and on the run's end.
pub struct Recording<'a> {
    pub(crate) state: &'a RefCell<WorkerState>,
    pub(crate) stop: &'a AtomicBool,
    pub(crate) clock: &'a quanta::Clock,
    /// When the run's measured time is up (`--duration`).
    pub(crate) deadline: Option<Instant>,
}

impl Recording<'_> {
    /// A raw time stamp (a few ns to read); latencies are differences of two.
    #[inline]
    pub fn stamp(&self) -> u64 {
        self.clock.raw()
    }

    /// Runs `f` between two stamps: (its output, start, end).
    #[inline]
    pub async fn timed<T>(&self, f: impl std::future::Future<Output = T>) -> (T, u64, u64) {
        let start = self.clock.raw();
        let out = f.await;
        (out, start, self.clock.raw())
    }

    /// Records a `kind` operation whose last call ran from stamp `start` to
    /// stamp `end`; returns when it ended.
    #[inline]
    pub fn record(
        &self,
        kind: OpKind,
        out: &Outcome,
        origin: Origin,
        start: u64,
        end: u64,
    ) -> Instant {
        self.state
            .borrow_mut()
            .record(kind, out, origin, start, end)
    }

    /// Counts one retried attempt of a `kind` operation.
    #[cold]
    pub fn retry(&self, kind: OpKind) {
        self.state.borrow_mut().rec.record_retry(kind);
    }

    /// Keeps an error message that is not an operation's outcome.
    #[cold]
    pub fn message(&self, kind: OpKind, status: Status, message: &str) {
        self.state
            .borrow_mut()
            .rec
            .record_error_message(kind, status, message);
    }

    /// The run was asked to stop (a signal, the error budget).
    #[inline]
    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Waits `d` outside any measurement (think time, keying time); false
    /// when the run stopped or its time ran out first.
    pub async fn pause(&self, d: Duration) -> bool {
        let until = Instant::now() + d;
        loop {
            let now = Instant::now();
            if self.stopped() || self.deadline.is_some_and(|end| now >= end) {
                return false;
            }
            if now >= until {
                return true;
            }
            // short naps, so a stop is seen within 100 ms
            let nap = (until - now).min(Duration::from_millis(100));
            tokio::time::sleep(nap).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::{run, Control, RunSpec};
    use crate::workload::Phase;
    use std::sync::atomic::AtomicU64;

    /// Each step "thinks" for `think`, then records one operation: a work
    /// that is neither YCSB's nor a binding's.
    struct Thinker {
        think: Duration,
        opened: AtomicU64,
    }

    impl Work for Thinker {
        type Slot = u64;

        async fn open(&self, slot: SlotId) -> Result<u64, BindingError> {
            self.opened.fetch_add(1, Ordering::SeqCst);
            Ok(slot.index)
        }

        async fn step(
            &self,
            slot: &mut u64,
            intended: Option<Instant>,
            rec: &Recording<'_>,
        ) -> Option<Stepped> {
            if !rec.pause(self.think).await {
                return None;
            }
            let first = rec.stamp();
            let (out, start, end) = rec.timed(async { Outcome::ok(*slot, 0) }).await;
            let end = rec.record(
                OpKind::NewOrder,
                &out,
                Origin::of(intended, first),
                start,
                end,
            );
            Some(Stepped { end, ops: 1 })
        }
    }

    fn spec(threads: usize, concurrency: usize, duration: Duration) -> RunSpec {
        RunSpec {
            phase: Phase::Run,
            threads,
            concurrency,
            operation_count: None,
            duration: Some(duration),
            warmup: Duration::ZERO,
            target: None,
            seed: 1,
            instance: (0, 1),
            status_interval: Duration::from_millis(100),
            expected_ops: None,
            max_errors: None,
        }
    }

    #[test]
    fn slots_of_any_work_share_threads_and_pauses_end_with_the_run() {
        let work = Thinker {
            think: Duration::from_millis(40),
            opened: AtomicU64::new(0),
        };
        let started = Instant::now();
        let out = run(
            &work,
            &spec(2, 3, Duration::from_millis(400)),
            &Control::default(),
            &mut |_| {},
        )
        .unwrap();
        assert_eq!(work.opened.load(Ordering::SeqCst), 6, "2 threads x 3 slots");
        let ops = out.total.ops[OpKind::NewOrder.index()].as_ref().unwrap();
        // six slots, each about ten 40 ms pauses in 400 ms; pauses that
        // blocked their thread would allow two threads' worth (about 20)
        assert!((25..=60).contains(&ops.count()), "{}", ops.count());
        assert_eq!(ops.completed(), ops.count());
        // a pause that would outlive the run is cut short at its end
        let long = Thinker {
            think: Duration::from_secs(30),
            opened: AtomicU64::new(0),
        };
        let out = run(
            &long,
            &spec(1, 2, Duration::from_millis(200)),
            &Control::default(),
            &mut |_| {},
        )
        .unwrap();
        assert!(out.total.is_empty());
        assert!(started.elapsed() < Duration::from_secs(20), "not 30 s");
    }

    #[test]
    fn a_stop_ends_a_pause() {
        let work = Thinker {
            think: Duration::from_secs(30),
            opened: AtomicU64::new(0),
        };
        let control = Control::default();
        let stop = control.stop.clone();
        let stopper = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(200));
            stop.store(true, Ordering::SeqCst);
        });
        let out = run(
            &work,
            &spec(1, 1, Duration::from_secs(60)),
            &control,
            &mut |_| {},
        )
        .unwrap();
        stopper.join().unwrap();
        assert!(out.interrupted);
        assert!(out.measured_elapsed < Duration::from_secs(20));
    }
}
