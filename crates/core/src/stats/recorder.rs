//! Per-worker recorders: one per worker thread, written without locks on the
//! hot path, handed to the sampler once per interval and merged there by
//! adding histograms (exact, unlike averaging percentiles).
use super::summary::new_histogram;
use super::tally::Tally;
use crate::binding::Status;
use crate::op::OpKind;
use hdrhistogram::Histogram;

/// Records `v`, growing the histogram as needed; a value beyond what it can
/// grow to is clamped to its maximum, and `put` says so (true), for the
/// result to flag it.
#[inline]
fn put(h: &mut Histogram<u64>, v: u64) -> bool {
    if h.record(v).is_err() {
        h.saturating_record(v);
        return true;
    }
    false
}

/// A start more than this late counts as a late operation.
pub(crate) const LATE_THRESHOLD_NS: u64 = 1_000_000;

/// Everything measured for one operation kind.
#[derive(Debug, Clone)]
pub struct OpRecorder {
    /// Completed operations ([`Status::completes`]): end - intended start
    /// (open loop) or end - start.
    pub response: Histogram<u64>,
    /// Completed operations: end - actual start.
    pub service: Histogram<u64>,
    /// Completed operations whose response time is their service time (closed
    /// loop, no retry): recorded once on the hot path, added to `response`
    /// and `service` by [`Recorder::fold`] before anyone reads them.
    same: Tally,
    /// The others (not found, errors, ...): response time.
    pub failed: Histogram<u64>,
    /// Operations by status, indexed by `Status::index`.
    pub statuses: [u64; Status::ALL.len()],
    pub rows: u64,
    pub bytes: u64,
    /// Attempts retried after a failure (counted, never hidden).
    pub retries: u64,
    /// Records returned per scan.
    pub scan_rows: Option<Histogram<u64>>,
}

impl OpRecorder {
    fn new(kind: OpKind) -> Self {
        OpRecorder {
            response: new_histogram(),
            service: new_histogram(),
            same: Tally::default(),
            failed: new_histogram(),
            statuses: [0; Status::ALL.len()],
            rows: 0,
            bytes: 0,
            retries: 0,
            scan_rows: (kind == OpKind::Scan).then(new_histogram),
        }
    }

    pub fn count(&self) -> u64 {
        self.statuses.iter().sum()
    }

    /// Operations that did not complete (not found and duplicate keys included).
    pub fn errors(&self) -> u64 {
        self.count() - self.completed()
    }

    /// Operations that failed: neither completed nor the answers a workload
    /// expects now and then (a missing key, an insert of a present one).
    pub fn failures(&self) -> u64 {
        self.errors()
            - self.statuses[Status::NotFound.index()]
            - self.statuses[Status::DuplicateKey.index()]
    }

    /// Operations that ended with `status`.
    pub fn with_status(&self, status: Status) -> u64 {
        self.statuses[status.index()]
    }

    /// Operations that completed ([`Status::completes`]).
    pub fn completed(&self) -> u64 {
        self.statuses[Status::Ok.index()] + self.statuses[Status::RolledBack.index()]
    }

    pub fn add(&mut self, o: &OpRecorder) {
        self.response
            .add(&o.response)
            .expect("auto-resizing histograms always add");
        self.service
            .add(&o.service)
            .expect("auto-resizing histograms always add");
        // folded before any hand-over, so empty here but in tests
        o.same.add_to(&mut self.response);
        o.same.add_to(&mut self.service);
        self.failed
            .add(&o.failed)
            .expect("auto-resizing histograms always add");
        for (a, b) in self.statuses.iter_mut().zip(o.statuses) {
            *a += b;
        }
        self.rows += o.rows;
        self.bytes += o.bytes;
        self.retries += o.retries;
        if let (Some(a), Some(b)) = (&mut self.scan_rows, &o.scan_rows) {
            a.add(b).expect("auto-resizing histograms always add");
        } else if self.scan_rows.is_none() {
            self.scan_rows = o.scan_rows.clone();
        }
    }

    /// Moves `same` into `response` and `service`: how many values they
    /// could not hold (clamped to their maximum).
    fn fold(&mut self) -> u64 {
        let clamped = self.same.add_to(&mut self.response);
        self.same.add_to(&mut self.service);
        self.same.clear();
        clamped
    }

    fn reset(&mut self) {
        self.response.reset();
        self.service.reset();
        self.same.clear();
        self.failed.reset();
        self.statuses = [0; Status::ALL.len()];
        self.rows = 0;
        self.bytes = 0;
        self.retries = 0;
        if let Some(h) = &mut self.scan_rows {
            h.reset();
        }
    }
}

/// One worker's measurements since the last hand-over.
#[derive(Debug, Clone, Default)]
pub struct Recorder {
    pub ops: [Option<Box<OpRecorder>>; OpKind::COUNT],
    /// Open loop: how late operations started relative to their intended time.
    pub lag: Option<Histogram<u64>>,
    pub late: u64,
    /// Operations that timed out after the run's measured time was up: the
    /// database stopped answering at the end.
    pub timeouts_after_end: u64,
    /// Distinct error messages with how often each was seen (the first
    /// `ERROR_SAMPLES` distinct ones).
    pub error_samples: Vec<(OpKind, Status, String, u64)>,
    /// Values beyond the histograms' range, clamped to their maximum.
    pub clamped: u64,
}

/// Error messages kept per recorder hand-over.
const ERROR_SAMPLES: usize = 5;

impl Recorder {
    pub fn new() -> Self {
        Self::default()
    }

    #[inline]
    fn op(&mut self, kind: OpKind) -> &mut OpRecorder {
        self.ops[kind.index()].get_or_insert_with(|| Box::new(OpRecorder::new(kind)))
    }

    /// Records one finished operation.
    #[inline]
    pub fn record(
        &mut self,
        kind: OpKind,
        status: Status,
        response_ns: u64,
        service_ns: u64,
        rows: u64,
        bytes: u64,
    ) {
        let op = self.op(kind);
        op.statuses[status.index()] += 1;
        op.rows += rows;
        op.bytes += bytes;
        let clamped = if status.completes() {
            let mut c = put(&mut op.response, response_ns.max(1));
            c |= put(&mut op.service, service_ns.max(1));
            if let Some(h) = &mut op.scan_rows {
                c |= put(h, rows);
            }
            c
        } else {
            put(&mut op.failed, response_ns.max(1))
        };
        if clamped {
            self.clamped += 1;
        }
    }

    /// Records one finished operation whose response time is its service
    /// time, `latency_ns`: one histogram write instead of two. The response
    /// and service histograms are complete once folded, which a run does
    /// before every hand-over to its sampler.
    #[inline(always)]
    pub fn record_same(
        &mut self,
        kind: OpKind,
        status: Status,
        latency_ns: u64,
        rows: u64,
        bytes: u64,
    ) {
        if !status.completes() {
            return self.record(kind, status, latency_ns, latency_ns, rows, bytes);
        }
        let op = self.op(kind);
        op.statuses[status.index()] += 1;
        op.rows += rows;
        op.bytes += bytes;
        op.same.record(latency_ns.max(1));
        if let Some(h) = &mut op.scan_rows {
            if put(h, rows) {
                self.clamped += 1;
            }
        }
    }

    /// Completes the response and service histograms of what
    /// [`Self::record_same`] recorded; before a hand-over.
    pub(crate) fn fold(&mut self) {
        for op in self.ops.iter_mut().flatten() {
            self.clamped += op.fold();
        }
    }

    /// Counts one retried attempt of a `kind` operation.
    #[cold]
    pub fn record_retry(&mut self, kind: OpKind) {
        self.op(kind).retries += 1;
    }

    /// Attempts retried, over every kind.
    pub fn retries(&self) -> u64 {
        self.ops.iter().flatten().map(|o| o.retries).sum()
    }

    #[cold]
    pub fn record_error_message(&mut self, kind: OpKind, status: Status, message: &str) {
        self.add_error_sample(kind, status, message, 1);
    }

    fn add_error_sample(&mut self, kind: OpKind, status: Status, message: &str, n: u64) {
        if let Some(e) = self
            .error_samples
            .iter_mut()
            .find(|e| e.0 == kind && e.1 == status && e.2 == message)
        {
            e.3 += n;
        } else if self.error_samples.len() < ERROR_SAMPLES {
            self.error_samples
                .push((kind, status, message.to_string(), n));
        }
    }

    /// Records how late an open-loop operation started.
    #[inline]
    pub(crate) fn record_lag(&mut self, lag_ns: u64) {
        let h = self.lag.get_or_insert_with(new_histogram);
        if put(h, lag_ns.max(1)) {
            self.clamped += 1;
        }
        if lag_ns > LATE_THRESHOLD_NS {
            self.late += 1;
        }
    }

    pub fn add(&mut self, other: &Recorder) {
        for (i, o) in other.ops.iter().enumerate() {
            if let Some(o) = o {
                match &mut self.ops[i] {
                    Some(s) => s.add(o),
                    None => {
                        let mut c = o.clone();
                        c.fold();
                        self.ops[i] = Some(c);
                    }
                }
            }
        }
        if let Some(l) = &other.lag {
            match &mut self.lag {
                Some(s) => s.add(l).expect("auto-resizing histograms always add"),
                None => self.lag = Some(l.clone()),
            }
        }
        self.late += other.late;
        self.timeouts_after_end += other.timeouts_after_end;
        self.clamped += other.clamped;
        for (kind, status, message, n) in &other.error_samples {
            self.add_error_sample(*kind, *status, message, *n);
        }
    }

    /// Clears the counts but keeps the allocations.
    pub fn reset(&mut self) {
        for op in self.ops.iter_mut().flatten() {
            op.reset();
        }
        if let Some(l) = &mut self.lag {
            l.reset();
        }
        self.late = 0;
        self.timeouts_after_end = 0;
        self.error_samples.clear();
        self.clamped = 0;
    }

    pub fn total_ops(&self) -> u64 {
        self.ops.iter().flatten().map(|o| o.count()).sum()
    }

    /// Operations counted towards throughput: read-modify-write's inner read and
    /// update are recorded too (as YCSB does) but not counted twice.
    pub(crate) fn counted_ops(&self) -> u64 {
        let mut n = self.total_ops();
        if let Some(rmw) = &self.ops[OpKind::ReadModifyWrite.index()] {
            n = n.saturating_sub(2 * rmw.count());
        }
        n
    }

    pub fn total_errors(&self) -> u64 {
        self.ops.iter().flatten().map(|o| o.errors()).sum()
    }

    /// [`OpRecorder::failures`] over every operation kind.
    pub fn total_failures(&self) -> u64 {
        self.ops.iter().flatten().map(|o| o.failures()).sum()
    }

    /// Operations of every kind that ended with `status`.
    pub fn total_with_status(&self, status: Status) -> u64 {
        self.ops
            .iter()
            .flatten()
            .map(|o| o.with_status(status))
            .sum()
    }

    /// Nothing recorded: no operation, retry or start lag.
    pub fn is_empty(&self) -> bool {
        self.total_ops() == 0
            && self.retries() == 0
            && self.lag.as_ref().is_none_or(|l| l.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::Summary;

    #[test]
    fn merged_recorders_equal_one_recorder_of_all_samples() {
        let mut all = Recorder::new();
        let mut parts = vec![Recorder::new(), Recorder::new(), Recorder::new()];
        let mut rng = crate::rng::Rng::new(1);
        for i in 0..30_000u64 {
            let v = 1000 + rng.below(5_000_000);
            let st = if i % 97 == 0 {
                Status::Error
            } else {
                Status::Ok
            };
            all.record(OpKind::Read, st, v, v / 2, 1, 100);
            parts[(i % 3) as usize].record(OpKind::Read, st, v, v / 2, 1, 100);
        }
        let mut merged = Recorder::new();
        for p in &parts {
            merged.add(p);
        }
        let (a, m) = (
            all.ops[0].as_ref().unwrap(),
            merged.ops[0].as_ref().unwrap(),
        );
        assert_eq!(Summary::of(&a.response), Summary::of(&m.response));
        assert_eq!(Summary::of(&a.failed), Summary::of(&m.failed));
        assert_eq!(a.statuses, m.statuses);
        assert_eq!(merged.total_errors(), all.total_errors());
        assert_eq!(merged.total_ops(), 30_000);
    }

    #[test]
    fn one_write_for_equal_response_and_service_times_folds_into_both() {
        let (mut once, mut twice) = (Recorder::new(), Recorder::new());
        for (i, v) in [100u64, 2_000, 2_000, 70_000, 5_000_000]
            .into_iter()
            .enumerate()
        {
            let st = if i == 3 { Status::Error } else { Status::Ok };
            once.record_same(OpKind::Read, st, v, 1, 10);
            twice.record(OpKind::Read, st, v, v, 1, 10);
        }
        // and a retried one beside them, recorded with both times
        once.record(OpKind::Read, Status::Ok, 900, 300, 1, 10);
        twice.record(OpKind::Read, Status::Ok, 900, 300, 1, 10);
        // a scan's rows are kept either way
        for rows in [0, 7, 100] {
            once.record_same(OpKind::Scan, Status::Ok, 5_000, rows, 10);
            twice.record(OpKind::Scan, Status::Ok, 5_000, 5_000, rows, 10);
        }
        // merged before the fold, the adder folds what it adds
        let mut merged = Recorder::new();
        merged.add(&once);
        once.fold();
        for r in [&once, &merged] {
            let (a, b) = (r.ops[0].as_ref().unwrap(), twice.ops[0].as_ref().unwrap());
            assert_eq!(Summary::of(&a.response), Summary::of(&b.response));
            assert_eq!(Summary::of(&a.service), Summary::of(&b.service));
            assert_eq!(Summary::of(&a.failed), Summary::of(&b.failed));
            assert_eq!((a.statuses, a.rows, a.bytes), (b.statuses, b.rows, b.bytes));
            let scan = OpKind::Scan.index();
            let (a, b) = (
                r.ops[scan].as_ref().unwrap(),
                twice.ops[scan].as_ref().unwrap(),
            );
            assert_eq!(Summary::of(&a.response), Summary::of(&b.response));
            let rows = |o: &OpRecorder| Summary::of(o.scan_rows.as_ref().unwrap());
            assert_eq!(rows(a), rows(b));
            assert_eq!(rows(a).count, 3);
        }
        assert_eq!(once.ops[0].as_ref().unwrap().response.len(), 5);
    }

    #[test]
    fn failures_go_to_their_own_histogram_and_rmw_counts_once() {
        let mut r = Recorder::new();
        r.record(OpKind::Read, Status::NotFound, 500, 400, 0, 0);
        r.record(OpKind::Read, Status::Ok, 100, 90, 1, 10);
        r.record(OpKind::Update, Status::Ok, 100, 90, 0, 10);
        r.record(OpKind::ReadModifyWrite, Status::Ok, 250, 200, 1, 20);
        let read = r.ops[OpKind::Read.index()].as_ref().unwrap();
        assert_eq!(read.response.len(), 1);
        assert_eq!(read.failed.len(), 1);
        assert_eq!(read.statuses[Status::NotFound.index()], 1);
        assert_eq!(r.counted_ops(), 2); // the RMW and the plain read... minus the RMW's inner pair
        r.reset();
        assert!(r.is_empty());
    }

    #[test]
    fn large_latencies_grow_the_histogram_instead_of_clamping() {
        let mut r = Recorder::new();
        r.record(OpKind::Read, Status::Ok, 5_000_000_000, 4_000_000_000, 1, 0);
        let h = &r.ops[0].as_ref().unwrap().response;
        assert!(h.max() >= 4_990_000_000, "recorded {}", h.max());
        // the closed loop's one record too, once folded
        r.record_same(OpKind::Update, Status::Ok, 7_000_000_000, 0, 0);
        r.fold();
        let h = &r.ops[OpKind::Update.index()].as_ref().unwrap().service;
        assert!(h.max() >= 6_990_000_000, "recorded {}", h.max());
        assert_eq!(r.clamped, 0);
    }

    #[test]
    fn lag_counts_late_starts() {
        let mut r = Recorder::new();
        r.record_lag(10);
        r.record_lag(LATE_THRESHOLD_NS + 1);
        assert_eq!(r.late, 1);
        assert_eq!(r.lag.as_ref().unwrap().len(), 2);
    }
}
