//! A worker thread: its own single-threaded runtime running `concurrency`
//! slots. Each slot paces and steps its [`Work`], which records its
//! operations in the thread's recorder; that goes to the sampler whenever an
//! interval boundary passes.
use super::pacer::{wait_until, Pacer};
use super::spec::RunSpec;
use super::work::{Origin, Recording, SlotId, Work};
use crate::binding::{BindingError, Outcome};
use crate::op::OpKind;
use crate::rng::derive_seed;
use crate::stats::Recorder;
use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

pub(crate) enum Report {
    Interval {
        index: i64,
        rec: Box<Recorder>,
    },
    Done {
        /// Scheduled operations never started because the run's time was up.
        unstarted: u64,
        /// How far behind schedule the worker's slots were when they stopped.
        final_lag_ns: u64,
    },
}

pub(crate) struct WorkerContext {
    pub worker: usize,
    pub spec: RunSpec,
    pub stop: Arc<AtomicBool>,
    pub abort: Arc<AtomicBool>,
    pub gate: Arc<StartGate>,
    pub tx: mpsc::Sender<Report>,
    pub budget: Arc<ErrorBudget>,
}

/// Failed operations so far, shared by the workers: touched only when an
/// operation fails, and sets `exceeded` once `--max-errors` is passed.
#[derive(Debug, Default)]
pub(crate) struct ErrorBudget {
    pub max: Option<u64>,
    failed: std::sync::atomic::AtomicU64,
    pub exceeded: AtomicBool,
}

impl ErrorBudget {
    pub(super) fn new(max: Option<u64>) -> Self {
        ErrorBudget {
            max,
            ..Default::default()
        }
    }

    #[cold]
    fn spend(&self) {
        let n = self.failed.fetch_add(1, Ordering::Relaxed) + 1;
        if self.max.is_some_and(|m| n > m) {
            self.exceeded.store(true, Ordering::SeqCst);
        }
    }
}

/// Reports a worker ready once: when asked, or when dropped (also on panic).
struct Arrival<'a>(&'a StartGate, std::cell::Cell<bool>);

impl Arrival<'_> {
    fn arrive(&self) {
        if !self.1.replace(true) {
            self.0.arrive();
        }
    }
}

impl Drop for Arrival<'_> {
    fn drop(&mut self) {
        self.arrive();
    }
}

/// Workers report ready (sessions open); the sampler then opens the gate with
/// the common start instant. Counts rather than a fixed-size barrier, so a
/// thread that could not be spawned cannot deadlock the start.
#[derive(Debug, Default)]
pub(crate) struct StartGate {
    state: Mutex<(usize, Option<Instant>)>,
    changed: Condvar,
}

impl StartGate {
    fn arrive(&self) {
        if let Ok(mut s) = self.state.lock() {
            s.0 += 1;
            self.changed.notify_all();
        }
    }

    pub(crate) fn wait_ready(&self, workers: usize) {
        let Ok(mut s) = self.state.lock() else { return };
        while s.0 < workers {
            s = match self.changed.wait(s) {
                Ok(s) => s,
                Err(_) => return,
            };
        }
    }

    pub(super) fn open(&self, t0: Instant) {
        if let Ok(mut s) = self.state.lock() {
            s.1 = Some(t0);
            self.changed.notify_all();
        }
    }

    fn wait_open(&self) -> Option<Instant> {
        let mut s = self.state.lock().ok()?;
        loop {
            if let Some(t0) = s.1 {
                return Some(t0);
            }
            s = self.changed.wait(s).ok()?;
        }
    }
}

/// Maps instants to interval indices: interval 0 starts when measurement starts
/// (after warm-up); warm-up intervals have negative indices.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Intervals {
    pub measure_start: Instant,
    pub length: Duration,
}

impl Intervals {
    pub(crate) fn index_of(&self, t: Instant) -> i64 {
        let len = self.length.as_nanos();
        if t >= self.measure_start {
            ((t - self.measure_start).as_nanos() / len) as i64
        } else {
            -((((self.measure_start - t).as_nanos() - 1) / len) as i64) - 1
        }
    }

    /// Start of interval `index`.
    pub(crate) fn start_of(&self, index: i64) -> Instant {
        let off = self.length * index.unsigned_abs() as u32;
        if index >= 0 {
            self.measure_start + off
        } else {
            self.measure_start - off
        }
    }
}

pub(crate) struct WorkerState {
    pub(crate) rec: Recorder,
    /// Interval the data in `rec` belongs to, and its end.
    index: i64,
    boundary: Instant,
    intervals: Intervals,
    tx: mpsc::Sender<Report>,
    /// Raw time stamps (the CPU's invariant TSC where there is one: a few ns to
    /// read, against ~30 ns for the OS clock); latencies are differences of two
    /// stamps, so they never depend on how the stamps map to wall time.
    clock: quanta::Clock,
    budget: Arc<ErrorBudget>,
    /// Maps stamps to `Instant`s for coarse decisions (intervals, deadlines);
    /// re-taken every interval so calibration drift cannot accumulate.
    anchor: (Instant, u64),
}

impl WorkerState {
    #[inline]
    fn advance(&mut self, now: Instant) {
        if now >= self.boundary {
            self.flush(now);
        }
    }

    #[cold]
    fn flush(&mut self, now: Instant) {
        self.send();
        self.index = self.intervals.index_of(now);
        self.boundary = self.intervals.start_of(self.index + 1);
        self.anchor = (Instant::now(), self.clock.raw());
    }

    /// The `Instant` of a raw stamp, to within the clock drift of one interval.
    #[inline]
    fn instant(&self, stamp: u64) -> Instant {
        self.anchor.0 + Duration::from_nanos(self.clock.delta_as_nanos(self.anchor.1, stamp))
    }

    fn send(&mut self) {
        if !self.rec.is_empty() {
            let _ = self.tx.send(Report::Interval {
                index: self.index,
                rec: Box::new(self.rec.clone()),
            });
            self.rec.reset();
        }
    }

    /// Records an operation whose call ran from stamp `start` to stamp `end`;
    /// returns when it ended.
    #[inline]
    pub(crate) fn record(
        &mut self,
        kind: OpKind,
        out: &Outcome,
        origin: Origin,
        start: u64,
        end: u64,
    ) -> Instant {
        let service = self.clock.delta_as_nanos(start, end);
        let (response, end) = match origin {
            Origin::Intended(t) => {
                let now = Instant::now();
                (now.saturating_duration_since(t).as_nanos() as u64, now)
            }
            Origin::Stamp(from) => (self.clock.delta_as_nanos(from, end), self.instant(end)),
        };
        self.advance(end);
        self.rec
            .record(kind, out.status, response, service, out.rows, out.bytes);
        if let Some(d) = &out.detail {
            self.rec.record_error_message(kind, out.status, d);
        }
        if out.status.is_error() {
            self.budget.spend();
        }
        end
    }
}

struct SlotEnd {
    unstarted: u64,
    lag_ns: u64,
}

pub(crate) fn run_worker<W: Work>(
    work: &W,
    ctx: WorkerContext,
    failed: &Mutex<Option<BindingError>>,
) {
    // Ready is reported even if this thread panics, so the start never waits forever.
    let arrival = Arrival(&ctx.gate, std::cell::Cell::new(false));
    // time for pacing, IO for network drivers
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build();
    let mut slots = Vec::new();
    match &rt {
        Ok(rt) => {
            for local in 0..ctx.spec.concurrency {
                let id = SlotId {
                    worker: ctx.worker,
                    local,
                    index: (ctx.worker * ctx.spec.concurrency + local) as u64,
                    seed: derive_seed(
                        ctx.spec.seed,
                        &[ctx.spec.instance.0, ctx.worker as u64, local as u64],
                    ),
                };
                match rt.block_on(work.open(id)) {
                    Ok(s) => slots.push((id, s)),
                    Err(e) => {
                        if let Ok(mut f) = failed.lock() {
                            f.get_or_insert(e);
                        }
                        break;
                    }
                }
            }
        }
        Err(e) => {
            if let Ok(mut f) = failed.lock() {
                f.get_or_insert(BindingError::Io(format!(
                    "cannot start a worker runtime: {e}"
                )));
            }
        }
    }
    arrival.arrive();
    let t0 = ctx.gate.wait_open();
    let (Ok(rt), false, Some(t0)) = (rt, ctx.abort.load(Ordering::SeqCst), t0) else {
        return;
    };
    let intervals = Intervals {
        measure_start: t0 + ctx.spec.warmup,
        length: ctx.spec.status_interval,
    };
    let first = intervals.index_of(t0);
    let clock = quanta::Clock::new();
    let state = RefCell::new(WorkerState {
        rec: Recorder::new(),
        index: first,
        boundary: intervals.start_of(first + 1),
        intervals,
        tx: ctx.tx.clone(),
        anchor: (Instant::now(), clock.raw()),
        budget: ctx.budget.clone(),
        clock: clock.clone(),
    });
    let alone = slots.len() == 1;
    let rec = Recording {
        state: &state,
        stop: &ctx.stop,
        clock: &clock,
        deadline: ctx.spec.duration.map(|d| intervals.measure_start + d),
    };
    let loops = slots
        .into_iter()
        .map(|(id, s)| slot_loop(work, s, id, &ctx, &rec, t0, alone));
    let ends = rt.block_on(futures_util::future::join_all(loops));
    state.borrow_mut().send();
    let _ = ctx.tx.send(Report::Done {
        unstarted: ends.iter().map(|e| e.unstarted).sum(),
        final_lag_ns: ends.iter().map(|e| e.lag_ns).max().unwrap_or(0),
    });
}

/// One slot: pace, stop when asked, when the time or the quota is up, or when
/// the work has nothing left; otherwise step.
async fn slot_loop<W: Work>(
    work: &W,
    mut slot: W::Slot,
    id: SlotId,
    ctx: &WorkerContext,
    rec: &Recording<'_>,
    t0: Instant,
    alone: bool,
) -> SlotEnd {
    let spec = &ctx.spec;
    let mut pacer = spec
        .target
        .map(|rate| Pacer::new(t0, rate, id.index, spec.slots()));
    let measure_start = t0 + spec.warmup;
    let deadline = rec.deadline;
    let quota = spec.quota(id.index);
    let mut measured = 0u64;
    let mut end = SlotEnd {
        unstarted: 0,
        lag_ns: 0,
    };
    if pacer.is_none() {
        wait_until(t0, alone).await;
    }
    let mut last_end = Instant::now();
    loop {
        if ctx.stop.load(Ordering::Relaxed)
            || ctx.budget.exceeded.load(Ordering::Relaxed)
            || quota.is_some_and(|q| measured >= q)
        {
            break;
        }
        let intended = match &mut pacer {
            Some(p) => {
                let t = p.peek();
                if deadline.is_some_and(|d| t >= d) {
                    break;
                }
                p.next_intended();
                wait_until(t, alone).await;
                let now = Instant::now();
                if let Some(d) = deadline.filter(|d| now >= *d) {
                    end.unstarted = 1 + p.remaining_before(d);
                    break;
                }
                let lag = now.saturating_duration_since(t).as_nanos() as u64;
                end.lag_ns = lag;
                if t >= measure_start {
                    let mut ws = rec.state.borrow_mut();
                    ws.advance(now);
                    ws.rec.record_lag(lag);
                }
                Some(t)
            }
            None => {
                // the previous operation's end is "now" closely enough, and
                // saves a clock read per operation
                if deadline.is_some_and(|d| last_end >= d) {
                    break;
                }
                None
            }
        };
        let Some(done) = work.step(&mut slot, intended, rec).await else {
            break;
        };
        if done.end >= measure_start {
            measured += done.ops;
        }
        last_end = done.end;
    }
    end
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interval_indices_are_aligned_to_measurement_start() {
        let ms = Instant::now() + Duration::from_secs(10);
        let iv = Intervals {
            measure_start: ms,
            length: Duration::from_secs(1),
        };
        assert_eq!(iv.index_of(ms), 0);
        assert_eq!(iv.index_of(ms + Duration::from_millis(999)), 0);
        assert_eq!(iv.index_of(ms + Duration::from_millis(1000)), 1);
        assert_eq!(iv.index_of(ms - Duration::from_millis(1)), -1);
        assert_eq!(iv.index_of(ms - Duration::from_millis(1000)), -1);
        assert_eq!(iv.index_of(ms - Duration::from_millis(1001)), -2);
        assert_eq!(iv.start_of(-1), ms - Duration::from_secs(1));
        assert_eq!(iv.start_of(2), ms + Duration::from_secs(2));
    }
}
