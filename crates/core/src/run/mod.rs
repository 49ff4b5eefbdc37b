//! The run: N worker threads x M in-flight slots, each slot a loop of
//! plan -> pace -> execute -> record; a sampler on the calling thread merges
//! the workers' recorders once per interval into totals and a time series.
//!
//! ```text
//! Stream::next_*_op ─▶ Pacer (open loop) ─▶ Session call, timed ─▶ Recorder
//!        (per slot)        (global schedule)      (per worker)         │ once per interval
//!                                                                      ▼
//!                                     Sampler: totals, time series, status callback
//! ```
pub mod cpu;
pub mod pacer;
pub mod sampler;
pub mod spec;
pub mod worker;

pub use pacer::Pacer;
pub use sampler::{IntervalPoint, IntervalView, PointOp, RunOutput};
pub use spec::{Control, RunSpec, SpecError};

use crate::binding::{Binding, BindingError};
use crate::workload::SharedState;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Barrier, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Runs `spec` against `binding`, calling `on_interval` once per sampling
/// interval (for the status line). Returns the merged measurements; a run
/// stopped by `control.stop` returns what it measured, flagged interrupted.
pub fn run<B: Binding>(
    binding: Arc<B>,
    shared: Arc<SharedState>,
    spec: &RunSpec,
    control: &Control,
    on_interval: &mut dyn FnMut(&IntervalView),
) -> Result<RunOutput, BindingError> {
    let threads = spec.threads;
    let (tx, rx) = mpsc::channel::<worker::Report>();
    let ready = Arc::new(Barrier::new(threads + 1));
    let go = Arc::new(Barrier::new(threads + 1));
    let start_at: Arc<OnceLock<Instant>> = Arc::new(OnceLock::new());
    let failed: Arc<Mutex<Option<BindingError>>> = Arc::new(Mutex::new(None));
    let abort = Arc::new(AtomicBool::new(false));
    let stop = control.stop.clone();

    std::thread::scope(|scope| {
        for w in 0..threads {
            let ctx = worker::WorkerContext {
                worker: w,
                spec: spec.clone(),
                shared: shared.clone(),
                stop: stop.clone(),
                abort: abort.clone(),
                start_at: start_at.clone(),
                tx: tx.clone(),
            };
            let (binding, ready, go, failed) =
                (binding.clone(), ready.clone(), go.clone(), failed.clone());
            std::thread::Builder::new()
                .name(format!("yardstick-worker-{w}"))
                .spawn_scoped(scope, move || {
                    worker::run_worker(&*binding, ctx, &ready, &go, &failed)
                })
                .expect("spawning a worker thread");
        }
        drop(tx);
        ready.wait();
        let failure = failed.lock().map(|mut f| f.take()).unwrap_or(None);
        if failure.is_some() {
            abort.store(true, Ordering::SeqCst);
        }
        // Start a little in the future so every worker begins on the same schedule.
        let t0 = Instant::now() + Duration::from_millis(1);
        let _ = start_at.set(t0);
        go.wait();
        if let Some(e) = failure {
            for _ in rx.iter() {}
            return Err(e);
        }
        Ok(sampler::sample(spec, t0, rx, &stop, on_interval))
    })
}
