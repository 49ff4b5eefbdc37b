//! The sampler: runs on the calling thread, receives the workers' recorders,
//! closes each interval shortly after its end (merging what arrived), keeps the
//! time series and the totals, and reports each interval to a callback.
use super::cpu::process_cpu_time;
use super::record::{Intervals, Report};
use super::schedule::Schedule;
use super::spec::RunSpec;
use crate::binding::Status;
use crate::op::OpKind;
use crate::stats::Recorder;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant, SystemTime};

/// One operation kind in one interval.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PointOp {
    pub op: OpKind,
    pub count: u64,
    /// Operations that failed; missing keys and duplicate keys are counted
    /// apart, below.
    pub errors: u64,
    #[serde(default)]
    pub not_found: u64,
    #[serde(default)]
    pub duplicate_key: u64,
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub max_ns: u64,
    pub mean_ns: f64,
}

/// One point of the time series.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct IntervalPoint {
    pub index: i64,
    /// End of the interval, seconds after measurement started (negative in warm-up).
    pub t_s: f64,
    pub length_s: f64,
    pub warmup: bool,
    pub ops: u64,
    /// Operations that failed; missing keys and duplicate keys are counted
    /// apart, below (results before they were have them among the errors).
    pub errors: u64,
    #[serde(default)]
    pub not_found: u64,
    #[serde(default)]
    pub duplicate_key: u64,
    pub ops_per_sec: f64,
    /// Open loop: operations that started more than 1 ms late.
    pub late: u64,
    /// Process CPU used in the interval, in cores.
    pub client_cpu_cores: f64,
    /// Open loop: the rate the schedule intended over the interval (the
    /// operations it placed there, per second).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intended_ops_per_sec: Option<f64>,
    pub per_op: Vec<PointOp>,
}

/// The measured points of `series` whose rates mean something: warm-up left
/// out, and so is a final interval shorter than the others (the calls still
/// in flight when the run stopped, completing over a few milliseconds) whose
/// rate would draw a collapse that never happened. Its operations are in the
/// series and the totals all the same.
pub fn rate_points(series: &[IntervalPoint]) -> impl Iterator<Item = &IntervalPoint> {
    let measured = || series.iter().filter(|p| !p.warmup && p.length_s > 0.0);
    let full = measured().map(|p| p.length_s).fold(0.0, f64::max);
    let n = measured().count();
    measured()
        .enumerate()
        .filter(move |(i, p)| !(n > 1 && i + 1 == n && p.length_s < 0.99 * full))
        .map(|(_, p)| p)
}

/// What the status line shows after each interval.
#[derive(Debug)]
pub struct IntervalView<'a> {
    pub point: &'a IntervalPoint,
    /// Measured operations so far (warm-up excluded).
    pub total_ops: u64,
    pub total_errors: u64,
    pub avg_ops_per_sec: f64,
    /// Fraction done, when the run is bounded by count or time.
    pub progress: Option<f64>,
    pub finished: bool,
    /// False for a final sliver of an interval, which is in the series but
    /// not worth a status line of its own.
    pub shown: bool,
    /// Every measured operation so far.
    pub total: &'a Recorder,
}

/// Everything the run measured.
#[derive(Debug, Clone)]
pub struct RunOutput {
    /// Measured operations, merged over workers and intervals.
    pub total: Recorder,
    pub series: Vec<IntervalPoint>,
    /// What the `--at` commands did.
    pub faults: Vec<super::faults::FaultRecord>,
    /// Wall-clock time measurement started (after warm-up) and ended.
    pub started_at: SystemTime,
    pub ended_at: SystemTime,
    pub measured_elapsed: Duration,
    pub warmup_ops: u64,
    pub interrupted: bool,
    /// Calls still waiting for the database when the run gave up on them.
    pub abandoned: u64,
    /// What interrupted it ("SIGTERM", ...).
    pub stop_cause: Option<String>,
    pub unstarted: u64,
    pub final_lag_ns: u64,
    /// Process CPU time during measurement.
    pub cpu: Duration,
    /// Interval reports that arrived after their interval was closed (counted in
    /// the totals, not in the time series); none while every worker reports
    /// its moves from interval to interval.
    pub late_reports: u64,
    /// The run stopped because more operations failed than `--max-errors` allows.
    pub stopped_by_errors: bool,
    /// `--until`: the estimates when the run stopped.
    pub convergence: Option<super::converge::Convergence>,
    /// The harness's floor, measured before the run.
    pub floor: Option<super::calibrate::Floor>,
    /// The process's peak resident memory when the run ended.
    pub peak_rss_bytes: Option<u64>,
    /// Per worker thread: the share of its time it was busy (on a CPU, not
    /// spinning for the schedule), warm-up included.
    pub worker_busy: Vec<f64>,
    /// CPU time the worker threads spent spinning for the schedule (part
    /// of `cpu`, but not work), warm-up included.
    pub waited: Duration,
}

impl RunOutput {
    /// The database stopped answering at the end: calls timed out after the
    /// measured time, or were abandoned.
    pub fn stalled_at_end(&self) -> bool {
        self.abandoned > 0 || self.total.timeouts_after_end > 0
    }

    pub fn ops_per_sec(&self) -> f64 {
        let s = self.measured_elapsed.as_secs_f64();
        if s > 0.0 {
            self.total.counted_ops() as f64 / s
        } else {
            0.0
        }
    }
}

/// The rate the run's pacing intended over `length` from `from` after t0
/// (the warm-up's start): the operations `paced` (the schedule as the
/// pacers follow it, warm-up included) placed there per second, or the
/// constant target; `None` in a closed loop.
fn intended_rate(
    paced: Option<&Schedule>,
    target: Option<f64>,
    from: Duration,
    length: Duration,
) -> Option<f64> {
    let secs = length.as_secs_f64();
    match paced {
        Some(s) if secs > 0.0 => {
            let a = from.as_secs_f64();
            Some((s.ops_until(a + secs) - s.ops_until(a)) / secs)
        }
        _ => target,
    }
}

fn point(
    index: i64,
    rec: &Recorder,
    iv: &Intervals,
    length: Duration,
    cpu: Duration,
) -> IntervalPoint {
    let end = iv.start_of(index) + length;
    let t_s = if end >= iv.measure_start {
        (end - iv.measure_start).as_secs_f64()
    } else {
        -(iv.measure_start - end).as_secs_f64()
    };
    let secs = length.as_secs_f64().max(1e-9);
    let ops = rec.counted_ops();
    IntervalPoint {
        index,
        t_s,
        length_s: length.as_secs_f64(),
        warmup: index < 0,
        ops,
        errors: rec.total_failures(),
        not_found: rec.total_with_status(Status::NotFound),
        duplicate_key: rec.total_with_status(Status::DuplicateKey),
        ops_per_sec: ops as f64 / secs,
        late: rec.late,
        client_cpu_cores: cpu.as_secs_f64() / secs,
        intended_ops_per_sec: None,
        per_op: OpKind::ALL
            .iter()
            .filter_map(|k| rec.ops[k.index()].as_ref().map(|o| (k, o)))
            .map(|(k, o)| PointOp {
                op: *k,
                count: o.count(),
                errors: o.failures(),
                not_found: o.with_status(Status::NotFound),
                duplicate_key: o.with_status(Status::DuplicateKey),
                p50_ns: o.response.value_at_quantile(0.5),
                p99_ns: o.response.value_at_quantile(0.99),
                max_ns: o.response.max(),
                mean_ns: o.response.mean(),
            })
            .collect(),
    }
}

pub(crate) fn sample(
    spec: &RunSpec,
    t0: Instant,
    rx: Receiver<Report>,
    stop: &AtomicBool,
    finish: &AtomicBool,
    on_interval: &mut dyn FnMut(&IntervalView),
) -> RunOutput {
    let iv = Intervals {
        measure_start: t0 + spec.warmup,
        length: spec.status_interval,
    };
    let wall_t0 = SystemTime::now() + t0.saturating_duration_since(Instant::now());
    let mut pending: BTreeMap<i64, Recorder> = BTreeMap::new();
    let mut next_index = iv.index_of(t0);
    // the interval each worker is in: an interval closes once every worker
    // has moved past it (at its boundary, by each worker's timer), so every
    // operation lands in the point of the interval it completed in
    let mut front = vec![next_index; spec.threads];
    let mut total = Recorder::new();
    let mut series = Vec::new();
    let mut warmup_ops = 0;
    let (mut done, mut unstarted, mut final_lag_ns, mut late_reports) = (0, 0, 0, 0);
    let mut abandoned = 0;
    let mut worker_busy = vec![0.0; spec.threads];
    let mut waited = Duration::ZERO;
    let mut cpu_mark = process_cpu_time();
    let mut cpu_at_start = (spec.warmup.is_zero()).then_some(cpu_mark);

    let paced = spec
        .rate_schedule
        .as_ref()
        .map(|s| s.preceded_by(spec.warmup));
    let mut close = |index: i64,
                     rec: Recorder,
                     length: Duration,
                     finished: bool,
                     total: &mut Recorder,
                     series: &mut Vec<IntervalPoint>,
                     warmup_ops: &mut u64| {
        let cpu_now = process_cpu_time();
        let mut p = point(index, &rec, &iv, length, cpu_now.saturating_sub(cpu_mark));
        p.intended_ops_per_sec =
            intended_rate(paced.as_ref(), spec.target, iv.start_of(index) - t0, length);
        cpu_mark = cpu_now;
        if index < 0 {
            *warmup_ops += rec.counted_ops();
            if index == -1 {
                cpu_at_start = Some(cpu_now);
            }
        } else {
            total.add(&rec);
        }
        let elapsed = (iv.start_of(index) + length).saturating_duration_since(iv.measure_start);
        let total_ops = total.counted_ops();
        let by_count = spec
            .expected_ops
            .filter(|n| *n > 0)
            .map(|n| total_ops as f64 / n as f64);
        let by_time = spec
            .duration
            .map(|d| elapsed.as_secs_f64() / d.as_secs_f64());
        let progress = match (by_count, by_time) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        // a final sliver of an interval is kept in the series but not shown
        let shown = !(finished && length < iv.length / 2 && index >= 0 && elapsed > iv.length);
        {
            on_interval(&IntervalView {
                point: &p,
                total_ops,
                total_errors: total.total_errors(),
                avg_ops_per_sec: if elapsed.is_zero() {
                    0.0
                } else {
                    total_ops as f64 / elapsed.as_secs_f64()
                },
                progress: progress.map(|p| p.min(1.0)),
                finished,
                shown,
                total,
            });
        }
        series.push(p);
    };

    loop {
        match rx.recv() {
            Ok(Report::Interval {
                worker,
                index,
                next,
                rec,
            }) => {
                if let Some(f) = front.get_mut(worker) {
                    *f = (*f).max(next);
                }
                if let Some(rec) = rec {
                    if index >= next_index {
                        pending.entry(index).or_default().add(&rec);
                    } else {
                        // cannot happen while workers report their moves; kept in the totals
                        late_reports += 1;
                        if index >= 0 {
                            total.add(&rec);
                        } else {
                            warmup_ops += rec.counted_ops();
                        }
                    }
                }
            }
            Ok(Report::Done {
                worker,
                busy,
                waited: w,
                unstarted: u,
                final_lag_ns: l,
                abandoned: a,
            }) => {
                if let Some(f) = front.get_mut(worker) {
                    *f = i64::MAX;
                }
                if let Some(b) = worker_busy.get_mut(worker) {
                    *b = busy;
                }
                waited += w;
                done += 1;
                abandoned += a;
                unstarted += u;
                final_lag_ns = final_lag_ns.max(l);
                if done == spec.threads {
                    break;
                }
            }
            Err(_) => break,
        }
        // the run's end closes the interval it ended in, with its true length
        let closable = front.iter().copied().min().unwrap_or(i64::MAX);
        while next_index < closable && closable != i64::MAX {
            let rec = pending.remove(&next_index).unwrap_or_default();
            close(
                next_index,
                rec,
                iv.length,
                false,
                &mut total,
                &mut series,
                &mut warmup_ops,
            );
            next_index += 1;
            if !spec.until.is_empty()
                && !finish.load(Ordering::Relaxed)
                && super::converge::judge(&spec.until, &series).reached
            {
                finish.store(true, Ordering::SeqCst);
            }
        }
    }
    let end = Instant::now();
    // Close what is left; the last interval ends when the run ended.
    let last = iv
        .index_of(end)
        .max(next_index)
        .max(pending.keys().next_back().copied().unwrap_or(i64::MIN));
    while next_index <= last {
        let rec = pending.remove(&next_index).unwrap_or_default();
        let start = iv.start_of(next_index);
        let length = if next_index == last {
            end.saturating_duration_since(start)
        } else {
            iv.length
        };
        if !(rec.is_empty() && next_index == last && length < iv.length / 10) {
            close(
                next_index,
                rec,
                length,
                next_index == last,
                &mut total,
                &mut series,
                &mut warmup_ops,
            );
        }
        next_index += 1;
    }
    let cpu_end = process_cpu_time();
    let convergence =
        (!spec.until.is_empty()).then(|| super::converge::judge(&spec.until, &series));
    RunOutput {
        faults: Vec::new(),
        total,
        series,
        started_at: wall_t0 + spec.warmup,
        ended_at: SystemTime::now(),
        measured_elapsed: end.saturating_duration_since(iv.measure_start),
        warmup_ops,
        interrupted: stop.load(Ordering::SeqCst),
        abandoned,
        stop_cause: None,
        unstarted,
        final_lag_ns,
        cpu: cpu_end.saturating_sub(cpu_at_start.unwrap_or(cpu_end)),
        late_reports,
        stopped_by_errors: false,
        convergence,
        floor: None,
        peak_rss_bytes: None,
        worker_busy,
        waited,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_leave_out_warm_up_and_a_short_final_interval() {
        let at = |index: i64, length_s: f64| IntervalPoint {
            index,
            t_s: index as f64 + length_s,
            length_s,
            warmup: index < 0,
            ops: 10,
            errors: 0,
            not_found: 0,
            duplicate_key: 0,
            ops_per_sec: 10.0 / length_s,
            late: 0,
            client_cpu_cores: 0.0,
            intended_ops_per_sec: None,
            per_op: Vec::new(),
        };
        let series = [at(-1, 1.0), at(0, 1.0), at(1, 1.0), at(2, 0.004)];
        let kept: Vec<i64> = rate_points(&series).map(|p| p.index).collect();
        assert_eq!(kept, [0, 1], "warm-up and the 4 ms drain left out");
        let full = [at(0, 1.0), at(1, 1.0)];
        assert_eq!(rate_points(&full).count(), 2);
        // a run shorter than one interval keeps its only point
        assert_eq!(rate_points(&[at(0, 0.3)]).count(), 1);
    }

    #[test]
    fn an_interval_counts_missing_and_duplicate_keys_apart_from_failures() {
        let mut rec = Recorder::new();
        for status in [
            Status::Ok,
            Status::NotFound,
            Status::NotFound,
            Status::DuplicateKey,
            Status::Timeout,
            Status::Error,
        ] {
            rec.record(OpKind::Read, status, 1_000, 1_000, 0, 0);
        }
        let iv = Intervals {
            measure_start: Instant::now(),
            length: Duration::from_secs(1),
        };
        let p = point(0, &rec, &iv, iv.length, Duration::ZERO);
        assert_eq!(
            (p.ops, p.errors, p.not_found, p.duplicate_key),
            (6, 2, 2, 1)
        );
        let read = &p.per_op[0];
        assert_eq!((read.errors, read.not_found, read.duplicate_key), (2, 2, 1));
        // every operation is in exactly one count
        assert_eq!(1 + p.errors + p.not_found + p.duplicate_key, p.ops);
    }
}
