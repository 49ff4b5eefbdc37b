//! Availability around a fault, from the run's time series: how long
//! operations failed, how many, how long until throughput was back to 90%
//! of its level before the fault, and the p99 while disturbed and after.
//! The series' resolution is the status interval, so a fault run wants a
//! short one (`--at` makes it 1 s unless set).
use crate::run::faults::FaultRecord;
use crate::run::{rate_points, IntervalPoint};

/// Throughput counts as recovered at this share of the level before.
pub const RECOVERED: f64 = 0.9;
/// The level before a fault: the mean of up to this many intervals.
const BASELINE_INTERVALS: usize = 10;

/// From the first to the last interval with a failure, in seconds from the
/// start of measurement.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Window {
    pub start_s: f64,
    pub end_s: f64,
    pub seconds: f64,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Availability {
    /// Mean successful ops/s of the intervals before the fault (none
    /// before it: `None`); throughput below means successful operations.
    pub baseline_ops_per_sec: Option<f64>,
    /// Operations failed from the fault to the next one (or the end).
    pub failed_operations: u64,
    pub error_window: Option<Window>,
    /// Seconds from the fault until throughput stayed at or above 90% of the
    /// baseline; 0 if it never fell below; `None` if it had not recovered
    /// by the next fault or the end of the run.
    pub recovery_s: Option<f64>,
    /// The highest interval p99 (slowest operation) while disturbed: from the
    /// fault to the later of recovery and the error window's end.
    pub p99_during_ns: Option<u64>,
    /// The highest interval p99 after that, to the next fault or the end.
    pub p99_after_ns: Option<u64>,
}

/// Successful operations per second: failures come fast from a dead server
/// and are not throughput.
fn good_rate(p: &IntervalPoint) -> f64 {
    p.ops.saturating_sub(p.errors) as f64 / p.length_s
}

fn worst_p99(p: &IntervalPoint) -> Option<u64> {
    p.per_op.iter().map(|o| o.p99_ns).filter(|n| *n > 0).max()
}

/// The faults of a run as the result keeps them: secrets masked in their
/// commands and output, availability measured.
pub fn of_run(out: &crate::run::RunOutput, redactor: &super::redact::Redactor) -> Vec<FaultRecord> {
    let mut faults = out.faults.clone();
    for f in &mut faults {
        f.command = redactor.redact(&f.command);
        f.output = redactor.redact(&f.output);
    }
    analyse(&out.series, &mut faults);
    faults
}

/// The result's warnings about faults that did not run as asked.
pub fn warnings(faults: &[FaultRecord]) -> Vec<String> {
    faults
        .iter()
        .filter_map(|f| {
            let what = match (&f.note, f.exit_code) {
                (Some(n), _) => n.clone(),
                (None, Some(0)) => return None,
                (None, Some(c)) => format!("exited with code {c}"),
                (None, None) => format!("ended by signal {}", f.signal.unwrap_or(0)),
            };
            Some(format!("fault at {} s ({}): {what}", f.at_s, f.command))
        })
        .collect()
}

/// Fills in each started fault's availability.
pub fn analyse(series: &[IntervalPoint], faults: &mut [FaultRecord]) {
    let points: Vec<&IntervalPoint> = rate_points(series).collect();
    let mut starts: Vec<f64> = faults.iter().filter_map(|f| f.started_s).collect();
    starts.sort_by(f64::total_cmp);
    for f in faults.iter_mut() {
        let Some(start) = f.started_s else { continue };
        // the fault's scope ends where the next one starts
        let next = starts
            .iter()
            .copied()
            .find(|s| *s > start)
            .unwrap_or(f64::INFINITY);
        f.availability = Some(around(&points, start, next));
    }
}

fn around(points: &[&IntervalPoint], start: f64, next: f64) -> Availability {
    let before: Vec<&&IntervalPoint> = points.iter().filter(|p| p.t_s <= start).collect();
    let base: Vec<f64> = before
        .iter()
        .rev()
        .take(BASELINE_INTERVALS)
        .map(|p| good_rate(p))
        .collect();
    let baseline = (!base.is_empty()).then(|| base.iter().sum::<f64>() / base.len() as f64);
    let scope: Vec<&&IntervalPoint> = points
        .iter()
        .filter(|p| p.t_s > start && p.t_s - p.length_s < next)
        .collect();
    let failing: Vec<&&&IntervalPoint> = scope.iter().filter(|p| p.errors > 0).collect();
    let error_window = match (failing.first(), failing.last()) {
        (Some(a), Some(b)) => {
            let s = (a.t_s - a.length_s).max(start);
            Some(Window {
                start_s: s,
                end_s: b.t_s,
                seconds: b.t_s - s,
            })
        }
        _ => None,
    };
    let recovery_s = match baseline {
        None => None,
        Some(b) => {
            let slow = scope.iter().rposition(|p| good_rate(p) < RECOVERED * b);
            match slow {
                None => Some(0.0),
                Some(k) if k + 1 == scope.len() => None,
                Some(k) => Some(scope[k].t_s - start),
            }
        }
    };
    let first_end = scope.first().map_or(start, |p| p.t_s);
    let disturbed_end = [
        first_end,
        recovery_s.map_or(f64::INFINITY, |r| start + r),
        error_window.as_ref().map_or(start, |w| w.end_s),
    ]
    .into_iter()
    .fold(start, f64::max);
    let during = scope
        .iter()
        .filter(|p| p.t_s <= disturbed_end)
        .filter_map(|p| worst_p99(p))
        .max();
    let after = scope
        .iter()
        .filter(|p| p.t_s > disturbed_end)
        .filter_map(|p| worst_p99(p))
        .max();
    Availability {
        baseline_ops_per_sec: baseline,
        failed_operations: scope.iter().map(|p| p.errors).sum(),
        error_window,
        recovery_s,
        p99_during_ns: during,
        p99_after_ns: after,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::op::OpKind;
    use crate::run::PointOp;

    /// One-second intervals: (ops, errors, p99 in ms).
    fn series(points: &[(u64, u64, u64)]) -> Vec<IntervalPoint> {
        points
            .iter()
            .enumerate()
            .map(|(i, &(ops, errors, p99))| IntervalPoint {
                index: i as i64,
                t_s: i as f64 + 1.0,
                length_s: 1.0,
                warmup: false,
                ops,
                errors,
                not_found: 0,
                duplicate_key: 0,
                ops_per_sec: ops as f64,
                late: 0,
                client_cpu_cores: 0.0,
                intended_ops_per_sec: None,
                per_op: vec![PointOp {
                    op: OpKind::Read,
                    count: ops,
                    errors,
                    not_found: 0,
                    duplicate_key: 0,
                    p50_ns: 1,
                    p99_ns: p99 * 1_000_000,
                    max_ns: p99 * 1_000_000,
                    mean_ns: 1.0,
                }],
            })
            .collect()
    }

    fn fault(started_s: f64) -> FaultRecord {
        FaultRecord {
            at_s: started_s,
            command: "kill".into(),
            started_s: Some(started_s),
            ended_s: Some(started_s + 0.01),
            exit_code: Some(0),
            signal: None,
            output: String::new(),
            note: None,
            availability: None,
        }
    }

    #[test]
    fn a_kill_and_its_recovery_are_measured_from_the_series() {
        // 1000 ops/s; killed at 3.5 s; failures in (3,4] and (4,5]; slow to 6 s;
        // back to 950 (above 90%) from the interval ending at 7 s
        let s = series(&[
            (1000, 0, 2),
            (1000, 0, 2),
            (1000, 0, 2),
            (600, 40, 900),
            (100, 90, 1500),
            (500, 0, 40),
            (950, 0, 3),
            (1000, 0, 3),
        ]);
        let mut f = [fault(3.5)];
        analyse(&s, &mut f);
        let a = f[0].availability.clone().unwrap();
        assert_eq!(a.baseline_ops_per_sec, Some(1000.0));
        assert_eq!(a.failed_operations, 130);
        assert_eq!(
            a.error_window,
            Some(Window {
                start_s: 3.5,
                end_s: 5.0,
                seconds: 1.5
            })
        );
        // the last interval below 900 ops/s ends at 6 s
        assert_eq!(a.recovery_s, Some(2.5));
        assert_eq!(a.p99_during_ns, Some(1_500_000_000));
        assert_eq!(a.p99_after_ns, Some(3_000_000));
    }

    #[test]
    fn a_fault_that_changes_nothing_recovers_at_once_and_one_that_never_recovers_says_so() {
        let s = series(&[(1000, 0, 2), (1000, 0, 2), (990, 0, 2), (1000, 0, 2)]);
        let mut f = [fault(1.5)];
        analyse(&s, &mut f);
        let a = f[0].availability.clone().unwrap();
        assert_eq!(
            (a.recovery_s, a.error_window, a.failed_operations),
            (Some(0.0), None, 0)
        );
        let s = series(&[(1000, 0, 2), (1000, 0, 2), (10, 5, 2), (0, 9, 2)]);
        let mut f = [fault(2.0), fault(9.0)];
        analyse(&s, &mut f);
        assert_eq!(f[0].availability.as_ref().unwrap().recovery_s, None);
        // the second fault's scope is after the end of the series
        assert_eq!(f[1].availability.as_ref().unwrap().failed_operations, 0);
    }

    #[test]
    fn the_next_fault_bounds_the_scope_of_the_one_before() {
        let s = series(&[
            (1000, 0, 2),
            (100, 50, 9),
            (1000, 0, 2),
            (100, 70, 9),
            (1000, 0, 2),
        ]);
        let mut f = [fault(1.0), fault(3.0)];
        analyse(&s, &mut f);
        let (a, b) = (
            f[0].availability.clone().unwrap(),
            f[1].availability.clone().unwrap(),
        );
        assert_eq!((a.failed_operations, b.failed_operations), (50, 70));
        assert_eq!((a.recovery_s, b.recovery_s), (Some(1.0), Some(1.0)));
        // successful operations only: 1000, 50 and 1000 a second
        assert!((b.baseline_ops_per_sec.unwrap() - 2050.0 / 3.0).abs() < 1e-9);
    }
}
