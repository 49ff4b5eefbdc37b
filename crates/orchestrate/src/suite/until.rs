//! `suite --repeat N --until "ci<5%"`: a series of repetitions ends once
//! every run phase's 95% confidence interval over the repetitions done is
//! narrower than the bound (throughput, or each operation's p99). Unlike a
//! run's intervals, repetitions are independent runs on freshly loaded
//! data, so the interval is Student's t over their values, without an
//! autocorrelation correction; it is judged from [`MIN_REPETITIONS`] on.
use crate::index::{StepRecord, StepStatus};
use yardstick_core::run::converge::{Metric, Until};
use yardstick_core::stats::ci::mean_ci;

/// Repetitions done before convergence is judged.
pub const MIN_REPETITIONS: u32 = 3;

/// How the suite judges convergence, for its index.
pub fn method(until: &[Until]) -> String {
    let conditions: Vec<String> = until.iter().map(Until::describe).collect();
    format!(
        "{} over repetitions: 95% Student-t interval of the repetitions' values (independent runs), judged from {MIN_REPETITIONS} repetitions on, for every run phase",
        conditions.join(" and ")
    )
}

/// Whether the repetitions 1..=`rep` of (`target`, `records`) have
/// converged: every run phase (`runs`, by name) within every bound. Returns
/// the widest relative half-width seen when they have.
pub fn converged(
    steps: &[StepRecord],
    runs: &[&str],
    until: &[Until],
    (target, records, rep): (usize, u64, u32),
) -> Option<f64> {
    if until.is_empty() || rep < MIN_REPETITIONS {
        return None;
    }
    let mut widest = 0.0f64;
    for name in runs {
        let done: Vec<&StepRecord> = steps
            .iter()
            .filter(|s| s.target == target && s.records == records && s.repetition <= rep)
            .filter(|s| s.step == *name && s.status == StepStatus::Ok)
            .collect();
        if done.len() < rep as usize {
            return None;
        }
        for u in until {
            let series: Vec<Vec<f64>> = match u.metric {
                Metric::Throughput => vec![done.iter().filter_map(|s| s.ops_per_sec).collect()],
                Metric::P99 => {
                    let ops = done
                        .first()
                        .map(|s| s.latency_us.keys().cloned().collect::<Vec<_>>());
                    ops.unwrap_or_default()
                        .iter()
                        .map(|op| {
                            done.iter()
                                .filter_map(|s| {
                                    s.latency_us.get(op).and_then(|m| m.get("p99")).copied()
                                })
                                .collect()
                        })
                        .collect()
                }
            };
            for x in series {
                let ci = mean_ci(&x, 0.95)?;
                let rel = ci.half_width? / ci.mean.abs().max(f64::MIN_POSITIVE);
                if x.len() < rep as usize || rel >= u.bound {
                    return None;
                }
                widest = widest.max(rel);
            }
        }
    }
    Some(widest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::PhaseKind;
    use std::collections::BTreeMap;

    fn step(rep: u32, name: &str, ops: f64, p99: f64) -> StepRecord {
        StepRecord {
            id: format!("{name}-{rep}"),
            target: 0,
            records: 100,
            repetition: rep,
            step: name.into(),
            description: String::new(),
            phase: PhaseKind::Run,
            workload: "workloada".into(),
            status: StepStatus::Ok,
            exit_code: Some(0),
            data_before: None,
            result: None,
            ops_per_sec: Some(ops),
            latency_us: BTreeMap::from([(
                "READ".to_string(),
                BTreeMap::from([("p99".to_string(), p99)]),
            )]),
            slo: None,
            next_insert_keynum: None,
            started_at: None,
            ended_at: None,
        }
    }

    #[test]
    fn repetitions_converge_when_every_phase_is_within_the_bound() {
        let ci = Until::parse_all("ci<5%").unwrap();
        let p99 = Until::parse_all("ci<5%, p99 ci<5%").unwrap();
        let steady = [
            step(1, "a", 1000.0, 100.0),
            step(2, "a", 1010.0, 150.0),
            step(3, "a", 990.0, 60.0),
            step(1, "c", 500.0, 10.0),
            step(2, "c", 502.0, 10.0),
            step(3, "c", 498.0, 10.0),
        ];
        // two repetitions are too few to judge
        assert_eq!(converged(&steady, &["a", "c"], &ci, (0, 100, 2)), None);
        // throughput: ±2.5% for a (t = 4.30, sd 10, n 3), within 5%
        let w = converged(&steady, &["a", "c"], &ci, (0, 100, 3)).unwrap();
        assert!((0.02..0.03).contains(&w), "{w}");
        // a's p99 is all over the place
        assert_eq!(converged(&steady, &["a", "c"], &p99, (0, 100, 3)), None);
        // one phase that varies keeps the series going
        let mut noisy = steady.to_vec();
        noisy[5].ops_per_sec = Some(400.0);
        assert_eq!(converged(&noisy, &["a", "c"], &ci, (0, 100, 3)), None);
        // a failed repetition is not a value
        let mut failed = steady.to_vec();
        failed[1].status = StepStatus::Failed;
        assert_eq!(converged(&failed, &["a", "c"], &ci, (0, 100, 3)), None);
        assert!(method(&p99).starts_with("throughput ci<5% and p99 ci<5% over repetitions"));
    }
}
