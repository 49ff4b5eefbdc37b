//! What a worker's slots record into: the thread's recorder, handed to the
//! sampler whenever an interval boundary passes ([`Report`]), the
//! intervals' arithmetic, the shared error budget, and [`Recording`], a
//! slot's handle on all of it.
use super::anchor::Anchor;
use super::clock::Clock;
use crate::binding::{Outcome, Status};
use crate::op::OpKind;
use crate::stats::Recorder;
use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

pub(crate) enum Report {
    /// Worker `worker` moved from interval `index` to interval `next`: what
    /// it recorded in `index` (nothing: `None`). The sampler closes an
    /// interval once every worker has moved past it, so no operation misses
    /// its interval's point.
    Interval {
        worker: usize,
        index: i64,
        next: i64,
        rec: Option<Box<Recorder>>,
    },
    Done {
        worker: usize,
        /// Share of the worker's wall time its thread was on a CPU, less its
        /// spinning for the schedule.
        busy: f64,
        /// CPU time the thread spent spinning for the schedule.
        waited: Duration,
        /// Scheduled operations never started because the run's time was up.
        unstarted: u64,
        /// How far behind schedule the worker's slots were when they stopped.
        final_lag_ns: u64,
        /// Slots still waiting for the database when the run gave up on them.
        abandoned: u64,
    },
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

/// One worker thread's recorder and where it is in the run's intervals.
pub(crate) struct WorkerState {
    pub(crate) rec: Recorder,
    worker: usize,
    /// Interval the data in `rec` belongs to, and its end.
    index: i64,
    boundary: Instant,
    intervals: Intervals,
    tx: mpsc::Sender<Report>,
    /// Raw time stamps (the CPU's invariant TSC where there is one: a few ns to
    /// read, against ~30 ns for the OS clock); latencies are differences of two
    /// stamps, so they never depend on how the stamps map to wall time.
    clock: Clock,
    budget: Arc<ErrorBudget>,
    /// When the measured time is up (`--duration`).
    deadline: Option<Instant>,
    /// Maps stamps to `Instant`s and back for the coarse decisions.
    anchor: Anchor,
    /// The interval's end, the measurement's start and the deadline as raw
    /// stamps (through `anchor`): a stamped operation is placed by its stamp.
    marks: Marks,
    /// The anchor's offset from the run's start in ns (negative before it):
    /// a traced operation's start is one stamp difference from it.
    anchor_since_t0: i64,
    /// When the run started.
    t0: Instant,
    /// `--trace`: this worker's records on their way to the file.
    pub(crate) trace: Option<crate::trace::WorkerTrace>,
}

impl WorkerState {
    /// A worker's state when the run starts at `t0`.
    pub(crate) fn new(
        worker: usize,
        intervals: Intervals,
        t0: Instant,
        tx: mpsc::Sender<Report>,
        clock: Clock,
        budget: Arc<ErrorBudget>,
        deadline: Option<Instant>,
    ) -> Self {
        let first = intervals.index_of(t0);
        let anchor = Anchor::take(&clock);
        let mut ws = WorkerState {
            anchor_since_t0: since(t0, anchor.at),
            deadline,
            worker,
            rec: Recorder::new(),
            index: first,
            boundary: intervals.start_of(first + 1),
            intervals,
            tx,
            anchor,
            marks: Marks::default(),
            budget,
            clock,
            t0,
            trace: None,
        };
        ws.mark();
        ws
    }

    /// The moments an operation's end is compared with, as stamps of the
    /// current anchor.
    fn mark(&mut self) {
        let (a, c) = (&self.anchor, &self.clock);
        self.marks = Marks {
            boundary: a.stamp_of(c, self.boundary),
            measure: a.stamp_of(c, self.intervals.measure_start),
            deadline: self.deadline.map_or(u64::MAX, |d| a.stamp_of(c, d)),
        };
    }

    /// Hands the recorder to the sampler once `now` is past the interval's end.
    #[inline]
    pub(crate) fn advance(&mut self, now: Instant) {
        if now >= self.boundary {
            self.flush(now);
        }
    }

    #[cold]
    fn flush(&mut self, now: Instant) {
        let next = self.intervals.index_of(now).max(self.index + 1);
        self.send(next);
        self.index = next;
        self.boundary = self.intervals.start_of(next + 1);
        self.anchor = Anchor::take(&self.clock);
        self.anchor_since_t0 = since(self.t0, self.anchor.at);
        self.mark();
    }

    /// The interval the worker is in.
    pub(crate) fn index(&self) -> i64 {
        self.index
    }

    /// When the current interval ends: the worker's timer flushes then, so
    /// an interval closes on time even when every slot waits for the database.
    pub(crate) fn boundary(&self) -> Instant {
        self.boundary
    }

    /// Sends what the current interval holds, moving on to interval `next`
    /// (the last send of a worker stays in its interval: `Done` follows).
    pub(crate) fn send(&mut self, next: i64) {
        self.rec.fold();
        let rec = (!self.rec.is_empty()).then(|| Box::new(self.rec.clone()));
        self.rec.reset();
        let _ = self.tx.send(Report::Interval {
            worker: self.worker,
            index: self.index,
            next,
            rec,
        });
    }

    /// Records an operation whose call ran from stamp `start` to stamp `end`;
    /// returns where its end fell.
    #[inline]
    pub(crate) fn record(
        &mut self,
        kind: OpKind,
        out: &Outcome,
        origin: Origin,
        start: u64,
        end: u64,
    ) -> Ended {
        self.record_timed(kind, out, origin, start, end).0
    }

    /// [`Self::record`], also giving the call's service time in ns.
    #[inline(always)]
    fn record_timed(
        &mut self,
        kind: OpKind,
        out: &Outcome,
        origin: Origin,
        start: u64,
        end: u64,
    ) -> (Ended, u64) {
        let service = self.clock.nanos(start, end);
        let (status, rows, bytes) = (out.status(), out.rows(), out.bytes());
        let ended = match origin {
            Origin::Intended(t) => {
                let now = Instant::now();
                let response = now.saturating_duration_since(t).as_nanos() as u64;
                self.advance(now);
                self.rec
                    .record(kind, status, response, service, rows, bytes);
                Ended {
                    measured: now >= self.intervals.measure_start,
                    past_deadline: self.deadline.is_some_and(|d| now >= d),
                }
            }
            Origin::Stamp(from) => {
                if end >= self.marks.boundary {
                    self.flush(self.anchor.instant(&self.clock, end));
                }
                if from == start {
                    self.rec.record_same(kind, status, service, rows, bytes);
                } else {
                    let response = self.clock.nanos(from, end);
                    self.rec
                        .record(kind, status, response, service, rows, bytes);
                }
                Ended {
                    measured: end >= self.marks.measure,
                    past_deadline: end >= self.marks.deadline,
                }
            }
        };
        if let Some(d) = out.detail() {
            self.rec.record_error_message(kind, status, d);
        }
        if status.is_error() {
            self.error(status, ended);
        }
        (ended, service)
    }

    /// Records an operation as [`Self::record`] does, and writes it to the
    /// trace when there is one. Inlined into every call site, so the plain
    /// path costs no call; the traced one is a call of its own. What the
    /// trace keeps is made only for a trace: built before the test, its five
    /// words were stored to the stack on every operation (~12 instructions
    /// a null:// workload C operation).
    #[inline(always)]
    pub(crate) fn record_traced<'t>(
        &mut self,
        kind: OpKind,
        out: &Outcome,
        origin: Origin,
        stamps: (u64, u64),
        traced: impl FnOnce() -> Traced<'t>,
    ) -> Ended {
        if self.trace.is_none() {
            return self.record_timed(kind, out, origin, stamps.0, stamps.1).0;
        }
        self.record_and_trace(kind, out, origin, stamps, traced())
    }

    #[inline(never)]
    fn record_and_trace(
        &mut self,
        kind: OpKind,
        out: &Outcome,
        origin: Origin,
        (start, end): (u64, u64),
        traced: Traced<'_>,
    ) -> Ended {
        // stamps are mapped through the interval's anchor, as intervals are,
        // so a trace's starts and intended starts agree to within ns
        let (at, raw) = (self.anchor_since_t0, self.anchor.raw);
        let first = if traced.first >= raw {
            at + self.clock.delta_as_nanos(raw, traced.first) as i64
        } else {
            at - self.clock.delta_as_nanos(traced.first, raw) as i64
        };
        let start_ns = first.max(0) as u64;
        let intended_ns = match origin {
            Origin::Intended(t) => Some(t.saturating_duration_since(self.t0).as_nanos() as u64),
            Origin::Stamp(_) => None,
        };
        let (done, service) = self.record_timed(kind, out, origin, start, end);
        // one attempt (the usual case): the response time is the service time
        let latency_ns = if traced.first == start {
            service
        } else {
            self.clock.nanos(traced.first, end)
        };
        if let Some(t) = &mut self.trace {
            t.push(&crate::trace::Entry {
                op: kind,
                status: out.status(),
                start_ns,
                intended_ns,
                latency_ns,
                arg: traced.arg,
                key: traced.key,
                keynum: traced.keynum,
            });
        }
        done
    }

    #[cold]
    fn error(&mut self, status: Status, ended: Ended) {
        self.budget.spend();
        if status == Status::Timeout && ended.past_deadline {
            self.rec.timeouts_after_end += 1;
        }
    }
}

/// Where an operation's end fell, decided where it is recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ended {
    /// After the warm-up: it counts towards `operationcount`.
    pub measured: bool,
    /// At or after the run's deadline (`--duration`).
    pub past_deadline: bool,
}

/// Raw stamps of the moments an operation's end is compared with.
#[derive(Debug, Clone, Copy, Default)]
struct Marks {
    boundary: u64,
    measure: u64,
    deadline: u64,
}

/// ns from `t0` to `t` (negative before it).
fn since(t0: Instant, t: Instant) -> i64 {
    match t.checked_duration_since(t0) {
        Some(d) => d.as_nanos() as i64,
        None => -((t0 - t).as_nanos() as i64),
    }
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

/// What a trace keeps of an operation beside its timing and status.
#[derive(Debug, Clone, Copy)]
pub struct Traced<'a> {
    pub key: &'a [u8],
    /// The number `key` was built from (YCSB's keys), so the trace can
    /// store the number; `None` for keys of other origins.
    pub keynum: Option<u64>,
    /// The stamp of its first attempt's start.
    pub first: u64,
    /// Scan length; a read's or update's fields (0 all, i + 1 field i); a
    /// read-modify-write's read fields + written fields << 32; a batch's records.
    pub arg: u64,
}

impl Traced<'_> {
    /// `arg` for a choice of fields.
    #[inline]
    pub fn fields(f: crate::binding::Fields) -> u64 {
        match f {
            crate::binding::Fields::All => 0,
            crate::binding::Fields::One(i) => i as u64 + 1,
        }
    }
}

/// A slot's handle on its worker's recorder and clock, and on the run's end.
pub struct Recording<'a> {
    pub(crate) state: &'a RefCell<WorkerState>,
    pub(crate) stop: &'a AtomicBool,
    pub(crate) clock: &'a Clock,
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
    ) -> Ended {
        self.state
            .borrow_mut()
            .record(kind, out, origin, start, end)
    }

    /// Records a `kind` operation as [`Self::record`] does, with what a
    /// trace keeps of it (made and written only when the run has `--trace`).
    #[inline(always)]
    pub fn record_op<'t>(
        &self,
        kind: OpKind,
        out: &Outcome,
        origin: Origin,
        stamps: (u64, u64),
        traced: impl FnOnce() -> Traced<'t>,
    ) -> Ended {
        self.state
            .borrow_mut()
            .record_traced(kind, out, origin, stamps, traced)
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
#[path = "record_tests.rs"]
mod tests;
