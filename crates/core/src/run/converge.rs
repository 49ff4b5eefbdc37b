//! Stop on convergence (`--until "ci<2%"`): a run ends once the 95%
//! confidence interval of its throughput (or of its operations' p99) is
//! narrower than a bound, relative to the mean.
//!
//! The estimate is the one `compare` uses: per-interval samples are not
//! independent (a compaction slows several intervals in a row), so the
//! standard error of their mean is taken over n(1 - r1)/(1 + r1) effective
//! intervals, r1 being the lag-1 autocorrelation ([`series_ci`]).
use super::sampler::{rate_points, IntervalPoint};
use crate::op::OpKind;
use crate::stats::ci::{series_ci, SeriesCi};
use serde::{Deserialize, Serialize};

/// Intervals measured before convergence is judged: fewer say little about
/// the spread, whatever the estimate.
pub const MIN_INTERVALS: usize = 10;

/// What must converge.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// Operations per second, per interval.
    Throughput,
    /// Each operation's p99 response time, per interval.
    P99,
}

/// One condition: the interval's half-width below `bound` times the mean.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Until {
    pub metric: Metric,
    /// A fraction (0.02 for 2%).
    pub bound: f64,
}

impl Until {
    /// `ci<2%` (throughput) or `p99 ci<5%`; several joined by commas must
    /// all hold.
    pub fn parse_all(s: &str) -> Result<Vec<Until>, String> {
        let bad = |part: &str| {
            format!(
                "--until '{part}' is not a condition: write ci<2% (throughput) or p99 ci<5%, with a bound above 0% and below 100%"
            )
        };
        s.split(',')
            .map(|part| {
                let p = part.trim().to_ascii_lowercase();
                let (metric, rest) = match p.strip_prefix("p99") {
                    Some(r) => (Metric::P99, r.trim_start()),
                    None => (Metric::Throughput, p.as_str()),
                };
                let pct = rest
                    .strip_prefix("ci")
                    .map(str::trim_start)
                    .and_then(|r| r.strip_prefix('<'))
                    .map(str::trim)
                    .and_then(|r| r.strip_suffix('%'))
                    .and_then(|n| n.trim().parse::<f64>().ok())
                    .filter(|v| *v > 0.0 && *v < 100.0)
                    .ok_or_else(|| bad(part.trim()))?;
                Ok(Until {
                    metric,
                    bound: pct / 100.0,
                })
            })
            .collect()
    }

    pub fn describe(&self) -> String {
        let m = match self.metric {
            Metric::Throughput => "throughput",
            Metric::P99 => "p99",
        };
        format!("{m} ci<{}%", self.bound * 100.0)
    }
}

/// One series' estimate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    pub metric: Metric,
    /// The operation (p99), or none (throughput of all operations).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub op: Option<String>,
    pub mean: f64,
    /// Of the 95% confidence interval.
    pub half_width: f64,
    /// half_width / mean.
    pub relative: f64,
    pub intervals: usize,
    pub effective_intervals: f64,
    pub lag1_autocorrelation: f64,
}

/// What `--until` asked and what the run reached.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Convergence {
    /// The conditions, as given (`throughput ci<2%`).
    pub until: Vec<String>,
    /// Whether every condition held when the run stopped.
    pub reached: bool,
    pub method: String,
    pub estimates: Vec<Estimate>,
}

pub const METHOD: &str = "95% Student's t interval of the mean of per-interval samples over n(1-r1)/(1+r1) effective intervals (r1: lag-1 autocorrelation), the estimate compare uses";

fn estimate(metric: Metric, op: Option<OpKind>, x: &[f64]) -> Option<Estimate> {
    let SeriesCi {
        mean,
        half_width,
        n,
        n_eff,
        r1,
    } = series_ci(x, 0.95)?;
    Some(Estimate {
        metric,
        op: op.map(|o| o.name().to_string()),
        mean,
        half_width,
        // a zero mean (no operation succeeded) never converges
        relative: if mean > 0.0 {
            half_width / mean
        } else {
            f64::MAX
        },
        intervals: n,
        effective_intervals: n_eff,
        lag1_autocorrelation: r1,
    })
}

/// The estimates of every condition over `series`, and whether all hold.
pub fn judge(until: &[Until], series: &[IntervalPoint]) -> Convergence {
    let points: Vec<&IntervalPoint> = rate_points(series).collect();
    let mut estimates = Vec::new();
    let mut reached = !until.is_empty();
    for u in until {
        let found: Vec<Estimate> = match u.metric {
            Metric::Throughput => {
                let x: Vec<f64> = points.iter().map(|p| p.ops as f64 / p.length_s).collect();
                estimate(Metric::Throughput, None, &x).into_iter().collect()
            }
            Metric::P99 => OpKind::ALL
                .iter()
                .filter_map(|k| {
                    let x: Vec<f64> = points
                        .iter()
                        .filter_map(|p| p.per_op.iter().find(|o| o.op == *k && o.count > 0))
                        .map(|o| o.p99_ns as f64)
                        .collect();
                    (!x.is_empty()).then(|| estimate(Metric::P99, Some(*k), &x))?
                })
                .collect(),
        };
        let holds = !found.is_empty()
            && found
                .iter()
                .all(|e| e.intervals >= MIN_INTERVALS && e.relative < u.bound);
        reached &= holds;
        estimates.extend(found);
    }
    Convergence {
        until: until.iter().map(Until::describe).collect(),
        reached,
        method: METHOD.into(),
        estimates,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::PointOp;

    fn point(index: i64, ops: u64, p99_ns: u64) -> IntervalPoint {
        IntervalPoint {
            index,
            t_s: index as f64 + 1.0,
            length_s: 1.0,
            warmup: false,
            ops,
            errors: 0,
            not_found: 0,
            duplicate_key: 0,
            ops_per_sec: ops as f64,
            late: 0,
            client_cpu_cores: 0.0,
            intended_ops_per_sec: None,
            per_op: vec![PointOp {
                op: OpKind::Read,
                count: ops,
                errors: 0,
                not_found: 0,
                duplicate_key: 0,
                p50_ns: p99_ns / 2,
                p99_ns,
                max_ns: p99_ns,
                mean_ns: p99_ns as f64 / 2.0,
            }],
        }
    }

    #[test]
    fn conditions_parse_and_bad_ones_say_the_form() {
        let u = Until::parse_all("ci<2%, p99 ci < 5 %").unwrap();
        assert_eq!(u.len(), 2);
        assert_eq!((u[0].metric, u[0].bound), (Metric::Throughput, 0.02));
        assert_eq!((u[1].metric, u[1].bound), (Metric::P99, 0.05));
        assert_eq!(u[1].describe(), "p99 ci<5%");
        for bad in ["ci<0%", "ci<100%", "ci 2%", "p95 ci<2%", "ci<x%", "ci<2"] {
            let e = Until::parse_all(bad).unwrap_err();
            assert!(e.contains("write ci<2%"), "{bad}: {e}");
        }
    }

    #[test]
    fn a_steady_series_converges_a_noisy_or_short_one_does_not() {
        let until = Until::parse_all("ci<2%,p99 ci<5%").unwrap();
        let steady: Vec<IntervalPoint> = (0..20)
            .map(|i| {
                point(
                    i,
                    1000 + (i as u64 % 3) * 5,
                    2_000_000 + (i as u64 % 2) * 10_000,
                )
            })
            .collect();
        let c = judge(&until, &steady);
        assert!(c.reached, "{c:?}");
        assert_eq!(c.estimates.len(), 2);
        assert!(c.estimates[0].relative < 0.02);
        // too few intervals to say, however steady
        assert!(!judge(&until, &steady[..MIN_INTERVALS - 1]).reached);
        let noisy: Vec<IntervalPoint> = (0..20)
            .map(|i| point(i, if i % 2 == 0 { 500 } else { 1500 }, 2_000_000))
            .collect();
        let c = judge(&until, &noisy);
        assert!(!c.reached, "{c:?}");
    }

    #[test]
    fn autocorrelated_samples_widen_the_interval() {
        // the same values, once alternating and once in two long runs
        let alternating: Vec<f64> = (0..40)
            .map(|i| if i % 2 == 0 { 90.0 } else { 110.0 })
            .collect();
        let mut runs = alternating.clone();
        runs.sort_by(f64::total_cmp);
        let a = series_ci(&alternating, 0.95).unwrap();
        let b = series_ci(&runs, 0.95).unwrap();
        assert!(
            b.n_eff < a.n_eff && b.half_width > 2.0 * a.half_width,
            "{a:?} {b:?}"
        );
    }
}
