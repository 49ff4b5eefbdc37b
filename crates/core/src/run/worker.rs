//! A worker thread: its own single-threaded runtime running `concurrency`
//! slots. Each slot paces and steps its [`Work`], which records its
//! operations in the thread's recorder; that goes to the sampler whenever an
//! interval boundary passes.
use super::cpu::thread_cpu_time;
use super::pacer::{wait_until, waited_on_thread, Pacer};
use super::record::{ErrorBudget, Intervals, Recording, Report, WorkerState};
use super::spec::RunSpec;
use super::work::{SlotId, Work};
use crate::binding::BindingError;
use crate::rng::derive_seed;
use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

pub(crate) struct WorkerContext {
    pub worker: usize,
    pub spec: RunSpec,
    pub stop: Arc<AtomicBool>,
    pub abort: Arc<AtomicBool>,
    pub gate: Arc<StartGate>,
    pub tx: mpsc::Sender<Report>,
    pub budget: Arc<ErrorBudget>,
    /// `--until` holds: end like at the deadline.
    pub finish: Arc<AtomicBool>,
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
    if rt.is_ok() && ctx.spec.pacing == super::spec::Pacing::Sleep {
        super::timerfd::sleep_precisely_on_this_thread();
    }
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
    let (cpu0, waited0, wall0) = (thread_cpu_time(), waited_on_thread(), Instant::now());
    let intervals = Intervals {
        measure_start: t0 + ctx.spec.warmup,
        length: ctx.spec.status_interval,
    };
    let clock = super::clock::Clock::new();
    let deadline = ctx.spec.duration.map(|d| intervals.measure_start + d);
    let state = RefCell::new(WorkerState::new(
        ctx.worker,
        intervals,
        t0,
        ctx.tx.clone(),
        clock.clone(),
        ctx.budget.clone(),
        deadline,
    ));
    state.borrow_mut().trace = ctx.spec.trace.as_ref().map(|t| t.worker());
    let alone = slots.len() == 1;
    let rec = Recording {
        state: &state,
        stop: &ctx.stop,
        clock: &clock,
        deadline,
    };
    let running = std::cell::Cell::new(slots.len() as u64);
    let each = EverySlot {
        work,
        ctx: &ctx,
        rec: &rec,
        t0,
        alone,
        running: &running,
    };
    let loops = slots.into_iter().map(|(id, s)| slot_loop(&each, s, id));
    // A call the database never answers (and the binding's own timeout
    // missed) cannot hold the run: once the time is up, its calls get the
    // binding's timeout and 0.9 s more before they are abandoned, so the
    // run, its teardown included, ends within the timeout and a second.
    let give_up = deadline
        .zip(ctx.spec.op_timeout)
        .and_then(|(d, t)| d.checked_add(t.saturating_add(Duration::from_millis(900))));
    // hands the recorder over at every boundary, busy slots or not
    let flusher = async {
        loop {
            let at = state.borrow().boundary();
            tokio::time::sleep_until(at.into()).await;
            state.borrow_mut().advance(Instant::now());
        }
    };
    let (ends, abandoned) = rt.block_on(async {
        let all = async {
            let (all, flusher) = (
                std::pin::pin!(super::slots::Slots::new(loops)),
                std::pin::pin!(flusher),
            );
            match futures_util::future::select(all, flusher).await {
                futures_util::future::Either::Left((ends, _)) => ends,
                futures_util::future::Either::Right(((), _)) => Vec::new(),
            }
        };
        match give_up {
            None => (all.await, 0),
            Some(at) => {
                let all = std::pin::pin!(all);
                let late = std::pin::pin!(tokio::time::sleep_until(at.into()));
                match futures_util::future::select(all, late).await {
                    futures_util::future::Either::Left((ends, _)) => (ends, 0),
                    futures_util::future::Either::Right(_) => (Vec::new(), running.get()),
                }
            }
        }
    });
    let last = state.borrow().index();
    state.borrow_mut().send(last);
    // busy: the thread's CPU less its spinning for the schedule
    let wall = wall0.elapsed().as_secs_f64();
    let waited = waited_on_thread().saturating_sub(waited0);
    let busy = thread_cpu_time()
        .saturating_sub(cpu0)
        .saturating_sub(waited);
    let _ = ctx.tx.send(Report::Done {
        worker: ctx.worker,
        busy: if wall > 0.0 {
            (busy.as_secs_f64() / wall).min(1.0)
        } else {
            0.0
        },
        waited,
        unstarted: ends.iter().map(|e| e.unstarted).sum(),
        final_lag_ns: ends.iter().map(|e| e.lag_ns).max().unwrap_or(0),
        abandoned,
    });
}

/// Whether a slot stops: the run was stopped or finished, the error budget
/// is spent, or the slot did its share of measured operations.
#[inline(always)]
fn slot_halted(ctx: &WorkerContext, quota: Option<u64>, measured: u64) -> bool {
    ctx.stop.load(Ordering::Relaxed)
        || ctx.finish.load(Ordering::Relaxed)
        || ctx.budget.exceeded.load(Ordering::Relaxed)
        || quota.is_some_and(|q| measured >= q)
}

/// What every slot of a worker reads.
struct EverySlot<'a, W: Work> {
    work: &'a W,
    ctx: &'a WorkerContext,
    rec: &'a Recording<'a>,
    t0: Instant,
    /// The worker runs one slot.
    alone: bool,
    /// Slots not yet ended (counted down as each ends).
    running: &'a std::cell::Cell<u64>,
}

/// One slot: pace, stop when asked, when the time or the quota is up, or when
/// the work has nothing left; otherwise step. A block, not an `async fn`:
/// an `async fn` keeps each argument twice in its state (as passed and as
/// bound), and the slot (768 bytes for Redis) was kept three times with
/// the caller's, spreading the lines an operation touches over ~5.9 KB.
fn slot_loop<'a, W: Work>(
    each: &'a EverySlot<'a, W>,
    mut slot: W::Slot,
    id: SlotId,
) -> impl std::future::Future<Output = SlotEnd> + use<'a, W> {
    let EverySlot {
        work,
        ctx,
        rec,
        t0,
        alone,
        running,
    } = *each;
    async move {
        let end = 'slot: {
            let spec = &ctx.spec;
            let mut pacer = match (&spec.timetable, &spec.rate_schedule, spec.target) {
                (Some(t), _, _) => Some(Pacer::on_timetable(t0, t.clone(), id.index, spec.slots())),
                (None, Some(s), _) => {
                    let s = std::sync::Arc::new(s.preceded_by(spec.warmup));
                    Some(Pacer::on_schedule(t0, s, id.index, spec.slots()))
                }
                (None, None, Some(rate)) => Some(Pacer::new(t0, rate, id.index, spec.slots())),
                (None, None, None) => None,
            };
            let measure_start = t0 + spec.warmup;
            let deadline = rec.deadline;
            let quota = spec.quota(id.index);
            let mut measured = 0u64;
            let mut end = SlotEnd {
                unstarted: 0,
                lag_ns: 0,
            };
            let Some(pacer) = &mut pacer else {
                // closed loop: one step after another until the run ends; the
                // previous operation's end is "now" closely enough, and saves a
                // clock read per operation
                wait_until(t0, alone).await;
                if slot_halted(ctx, quota, 0) || deadline.is_some_and(|d| Instant::now() >= d) {
                    break 'slot end;
                }
                // the closure owns what it reads (`move`), in the steps' own state:
                // read through pointers into this future's, they were two more
                // lines fetched per operation with many slots
                work.steps(&mut slot, rec, move |done| {
                    if done.end.measured {
                        measured += done.ops;
                    }
                    !done.end.past_deadline && !slot_halted(ctx, quota, measured)
                })
                .await;
                break 'slot end;
            };
            loop {
                if slot_halted(ctx, quota, measured) {
                    break;
                }
                // a timetable's end ends the slot
                let Some(t) = pacer.peek().filter(|t| deadline.is_none_or(|d| *t < d)) else {
                    break;
                };
                pacer.next_intended();
                wait_until(t, alone).await;
                let now = Instant::now();
                if let Some(d) = deadline.filter(|d| now >= *d) {
                    end.unstarted = 1 + pacer.remaining_before(d);
                    break;
                }
                let lag = now.saturating_duration_since(t).as_nanos() as u64;
                end.lag_ns = lag;
                if t >= measure_start {
                    let mut ws = rec.state.borrow_mut();
                    ws.advance(now);
                    ws.rec.record_lag(lag);
                }
                let Some(done) = work.step(&mut slot, Some(t), rec).await else {
                    break;
                };
                if done.end.measured {
                    measured += done.ops;
                }
            }
            end
        };
        running.set(running.get() - 1);
        end
    }
}
