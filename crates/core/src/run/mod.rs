//! The run: N worker threads x M in-flight slots, each slot a loop of
//! pace -> step its [`Work`] (plan, call, time, record); a sampler on the
//! calling thread merges the workers' recorders once per interval into
//! totals and a time series.
//!
//! ```text
//! Pacer (open loop) ─▶ Work::step: plan, call, timed ─▶ Recorder
//!  (global schedule)    (YCSB op or TPC-C txn, per slot)  (per worker)   │ once per interval
//!                                                                         ▼
//!                                        Sampler: totals, time series, status callback
//! ```
pub mod calibrate;
pub mod converge;
pub mod cpu;
pub mod faults;
pub(crate) mod pacer;
pub use pacer::sleep_until_precisely;
mod anchor;
pub(crate) mod clock;
mod record;
pub mod replay;
pub(crate) mod sampler;
pub mod schedule;
mod slot_waker;
mod slots;
pub mod spec;
mod timerfd;
pub mod verify;
pub mod work;
mod worker;
mod ycsb;

pub use record::{Ended, Origin, Recording, Traced};
pub use sampler::{rate_points, IntervalPoint, IntervalView, PointOp, RunOutput};
pub use schedule::{Schedule, ScheduleError, StepRate};
pub use spec::{signal_name, Control, Pacing, RunSpec, SpecError};
pub use work::{SlotId, Stepped, Work};
pub use ycsb::Ycsb;

use crate::binding::{Binding, BindingError};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

/// Runs a cold-path future (a binding's opening and sizing calls) to its end
/// on a thread and runtime of its own, so it works both from plain code and
/// from inside another runtime. A database that stops answering cannot hold
/// the process: past `limit` the future is dropped and the call fails.
pub fn run_cold<T: Send>(
    limit: Duration,
    fut: impl std::future::Future<Output = Result<T, BindingError>> + Send,
) -> Result<T, BindingError> {
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(|e| BindingError::Io(format!("cannot start a runtime: {e}")))?
                    .block_on(async { tokio::time::timeout(limit, fut).await })
                    .unwrap_or_else(|_| {
                        Err(BindingError::Unavailable(format!(
                            "the database did not answer within {limit:?}: check that it runs, or raise the URL's timeout"
                        )))
                    })
            })
            .join()
            .unwrap_or_else(|_| Err(BindingError::Io("the connection thread failed".into())))
    })
}

/// Empties the binding's table on a session of its own (`load --clear`),
/// returning the records deleted when the binding counts them.
pub fn clear_table<B: Binding>(binding: &B) -> Result<Option<u64>, BindingError> {
    use crate::binding::Session;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| BindingError::Io(format!("cannot start a runtime: {e}")))?;
    rt.block_on(async {
        let mut s = binding.session().await?;
        s.clear().await
    })
}

/// Runs `work` as `spec` says, calling `on_interval` once per sampling
/// interval (for the status line). Returns the merged measurements; a run
/// stopped by `control.stop` returns what it measured, flagged interrupted.
pub fn run<W: Work>(
    work: &W,
    spec: &RunSpec,
    control: &Control,
    on_interval: &mut dyn FnMut(&IntervalView),
) -> Result<RunOutput, BindingError> {
    let (tx, rx) = mpsc::channel::<record::Report>();
    let gate = Arc::new(worker::StartGate::default());
    let failed: Arc<Mutex<Option<BindingError>>> = Arc::new(Mutex::new(None));
    let abort = Arc::new(AtomicBool::new(false));
    let stop = control.stop.clone();
    let budget = Arc::new(record::ErrorBudget::new(spec.max_errors));
    let floor = calibrate::measure_floor();
    // set by the sampler once `--until` holds: the slots end as at the deadline
    let finish = Arc::new(AtomicBool::new(false));
    let run_end = faults::RunEnd::default();

    std::thread::scope(|scope| {
        let mut spawned = 0;
        for w in 0..spec.threads {
            let ctx = worker::WorkerContext {
                worker: w,
                spec: spec.clone(),
                stop: stop.clone(),
                abort: abort.clone(),
                gate: gate.clone(),
                tx: tx.clone(),
                budget: budget.clone(),
                finish: finish.clone(),
            };
            let worker_failed = failed.clone();
            let started = std::thread::Builder::new()
                .name(format!("yardstick-worker-{w}"))
                .spawn_scoped(scope, move || {
                    let run = std::panic::AssertUnwindSafe(|| {
                        worker::run_worker(work, ctx, &worker_failed)
                    });
                    if let Err(panic) = std::panic::catch_unwind(run) {
                        let why = panic
                            .downcast_ref::<&str>()
                            .map(|s| s.to_string())
                            .or_else(|| panic.downcast_ref::<String>().cloned())
                            .unwrap_or_default();
                        if let Ok(mut f) = worker_failed.lock() {
                            f.get_or_insert(BindingError::Io(format!(
                                "worker thread {w} failed: {why}"
                            )));
                        }
                    }
                });
            match started {
                Ok(_) => spawned += 1,
                Err(e) => {
                    if let Ok(mut f) = failed.lock() {
                        f.get_or_insert(BindingError::Io(format!(
                            "cannot start worker thread {w} of {}: {e}; use fewer --threads",
                            spec.threads
                        )));
                    }
                    break;
                }
            }
        }
        drop(tx);
        // Every worker has opened its sessions (or failed to) before the clock starts.
        gate.wait_ready(spawned);
        let failure = failed.lock().map(|mut f| f.take()).unwrap_or(None);
        if failure.is_some() {
            abort.store(true, Ordering::SeqCst);
        }
        // Start a little in the future so every worker begins on the same schedule.
        let t0 = Instant::now() + Duration::from_millis(1);
        if let Some(trace) = &spec.trace {
            trace.started(std::time::SystemTime::now() + Duration::from_millis(1));
        }
        gate.open(t0);
        if let Some(e) = failure {
            for _ in rx.iter() {}
            return Err(e);
        }
        let fault_thread = (!spec.faults.is_empty()).then(|| {
            let (stop, run_end) = (&stop, &run_end);
            scope.spawn(move || faults::run_all(&spec.faults, t0 + spec.warmup, stop, run_end))
        });
        let mut spec = spec.clone();
        spec.threads = spawned;
        let mut out = sampler::sample(&spec, t0, rx, &stop, &finish, on_interval);
        run_end.set();
        if let Some(t) = fault_thread {
            out.faults = t.join().unwrap_or_default();
        }
        out.floor = Some(floor);
        out.peak_rss_bytes = cpu::peak_rss_bytes();
        out.stopped_by_errors = budget.exceeded.load(Ordering::SeqCst);
        out.stop_cause = out.interrupted.then(|| control.cause());
        // a worker that died mid-run (a bug) makes the whole run invalid
        match failed.lock().map(|mut f| f.take()).unwrap_or(None) {
            Some(e) => Err(e),
            None => Ok(out),
        }
    })
}

#[cfg(test)]
mod series_tests;
