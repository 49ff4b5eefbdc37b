//! The time series loses nothing: under a database that stalls (every slot
//! waiting), a client that stalls (the worker thread blocked), a warm-up
//! boundary and pacing, every operation is in exactly one interval, and the
//! measured intervals add up to the totals.
use super::*;
use crate::binding::Outcome;
use crate::op::OpKind;
use crate::workload::Phase;
use std::sync::atomic::AtomicU64;

/// Each step takes 2 ms and records one operation; steps `at` to `at + 3`
/// (one per slot: every slot of both workers) stall for `stall`, awaiting
/// (a database that stopped answering) or blocking their thread (a client
/// that stopped running).
struct Staller {
    at: u64,
    stall: Duration,
    blocking: bool,
    steps: AtomicU64,
}

impl Work for Staller {
    type Slot = ();

    async fn open(&self, _: SlotId) -> Result<(), BindingError> {
        Ok(())
    }

    async fn step(
        &self,
        _: &mut (),
        intended: Option<Instant>,
        rec: &Recording<'_>,
    ) -> Option<Stepped> {
        let n = self.steps.fetch_add(1, Ordering::SeqCst);
        let stalls = (self.at..self.at + 4).contains(&n);
        let first = rec.stamp();
        let (out, start, end) = rec
            .timed(async {
                if stalls && self.blocking {
                    std::thread::sleep(self.stall);
                } else if stalls {
                    tokio::time::sleep(self.stall).await;
                } else {
                    tokio::time::sleep(Duration::from_millis(2)).await;
                }
                Outcome::ok(1, 0)
            })
            .await;
        let end = rec.record(OpKind::Read, &out, Origin::of(intended, first), start, end);
        Some(Stepped { end, ops: 1 })
    }
}

fn spec(warmup: Duration, target: Option<f64>) -> RunSpec {
    RunSpec {
        phase: Phase::Run,
        threads: 2,
        concurrency: 2,
        operation_count: None,
        duration: Some(Duration::from_millis(1500)),
        warmup,
        target,
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

/// Runs the staller and checks that the series holds every operation once.
fn holds_every_operation(blocking: bool, warmup: Duration, target: Option<f64>) {
    let work = Staller {
        at: 150,
        stall: Duration::from_millis(600),
        blocking,
        steps: AtomicU64::new(0),
    };
    let mut shown = 0u64;
    let out = run(
        &work,
        &spec(warmup, target),
        &Control::default(),
        &mut |v| shown += v.point.ops,
    )
    .unwrap();
    let in_series = |warm: bool| -> u64 {
        out.series
            .iter()
            .filter(|p| p.warmup == warm)
            .map(|p| p.ops)
            .sum()
    };
    let what = format!("blocking {blocking}, warm-up {warmup:?}, target {target:?}");
    assert_eq!(out.late_reports, 0, "{what}");
    assert_eq!(in_series(false), out.total.counted_ops(), "{what}");
    assert_eq!(in_series(true), out.warmup_ops, "{what}");
    let recorded = out.total.counted_ops() + out.warmup_ops;
    assert_eq!(recorded, work.steps.load(Ordering::SeqCst), "{what}");
    // the status line saw no operation twice
    assert!(shown <= recorded, "{what}");
    // indices are consecutive: no interval twice, none missing
    for w in out.series.windows(2) {
        assert_eq!(w[1].index, w[0].index + 1, "{what}");
    }
}

#[test]
fn a_database_stall_loses_no_operation_from_the_series() {
    holds_every_operation(false, Duration::ZERO, None);
}

#[test]
fn a_client_stall_loses_no_operation_from_the_series() {
    holds_every_operation(true, Duration::ZERO, None);
}

#[test]
fn the_warm_up_boundary_splits_without_loss() {
    holds_every_operation(false, Duration::from_millis(250), None);
}

#[test]
fn a_paced_run_through_a_stall_loses_no_operation() {
    holds_every_operation(false, Duration::from_millis(150), Some(800.0));
}
