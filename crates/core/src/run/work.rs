//! What a run's slots do. The runner owns threads, the start gate, pacing,
//! stop conditions, intervals and the sampler; a [`Work`] owns sessions and
//! operations. YCSB's core workload ([`super::Ycsb`]) is one, TPC-C's
//! terminals another, so both get the same pacing, warm-up, status line,
//! histograms, signal handling and error budget.
use super::record::{Ended, Recording};
use crate::binding::BindingError;
use std::time::Instant;

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
    /// Where its end fell (as [`Recording::record`] says).
    pub end: Ended,
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

    /// Closed-loop steps, one after another while `go_on` accepts each one
    /// it is shown: the step it refused, or `None` once the slot has nothing
    /// left. The default awaits [`Self::step`] in a loop; a work whose step
    /// is the loop's own body saves building and dropping a future per
    /// operation.
    async fn steps(
        &self,
        slot: &mut Self::Slot,
        rec: &Recording<'_>,
        mut go_on: impl FnMut(&Stepped) -> bool,
    ) -> Option<Stepped> {
        loop {
            let done = self.step(slot, None, rec).await?;
            if !go_on(&done) {
                return Some(done);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::binding::Outcome;
    use crate::op::OpKind;
    use crate::run::{run, Control, Origin, RunSpec};
    use crate::workload::Phase;
    use std::sync::atomic::AtomicU64;
    use std::sync::atomic::Ordering;
    use std::time::Duration;

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
            op_timeout: None,
            until: Vec::new(),
            trace: None,
            timetable: None,
            rate_schedule: None,
            faults: Vec::new(),
            pacing: Default::default(),
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
