//! The suite's summary: means and confidence intervals over repetitions, the
//! scaling rows, and the printed table.
use super::*;

/// Mean, standard deviation and 95% confidence half-width of `x`.
fn stat(x: &[f64]) -> Option<Stat> {
    mean_ci(x, 0.95).map(|c| Stat {
        n: c.n,
        mean: c.mean,
        stdev: c.stdev,
        ci95: c.half_width,
    })
}

/// Recomputes the summary (mean and CI over repetitions) and the scaling rows.
pub fn summarize(index: &mut SuiteIndex) {
    let mut groups: BTreeMap<(usize, u64, String), Vec<&StepRecord>> = BTreeMap::new();
    let order: Vec<String> = {
        let mut v: Vec<String> = Vec::new();
        for s in &index.steps {
            if !v.contains(&s.step) {
                v.push(s.step.clone());
            }
        }
        v
    };
    for s in index.steps.iter().filter(|s| s.status == StepStatus::Ok) {
        groups
            .entry((s.target, s.records, s.step.clone()))
            .or_default()
            .push(s);
    }
    let mut summary = Vec::new();
    for ((target, records, step), v) in &groups {
        let ops: Vec<f64> = v.iter().filter_map(|s| s.ops_per_sec).collect();
        let mut p99 = BTreeMap::new();
        let mut mean = BTreeMap::new();
        let names: std::collections::BTreeSet<&String> =
            v.iter().flat_map(|s| s.latency_us.keys()).collect();
        for op in names {
            let get = |k: &str| -> Vec<f64> {
                v.iter()
                    .filter_map(|s| s.latency_us.get(op).and_then(|m| m.get(k)).copied())
                    .collect()
            };
            if let Some(st) = stat(&get("p99")) {
                p99.insert(op.clone(), st);
            }
            if let Some(st) = stat(&get("mean")) {
                mean.insert(op.clone(), st);
            }
        }
        let knees: Vec<f64> = v
            .iter()
            .filter_map(|s| s.slo.as_ref().and_then(|o| o.knee_ops_per_sec))
            .collect();
        summary.push(SummaryRow {
            target: *target,
            records: *records,
            step: step.clone(),
            ops_per_sec: stat(&ops),
            p99_us: p99,
            mean_us: mean,
            slo_ops_per_sec: stat(&knees),
        });
    }
    let pos = |s: &str| order.iter().position(|o| o == s).unwrap_or(usize::MAX);
    summary.sort_by(|a, b| {
        (a.target, a.records, pos(&a.step)).cmp(&(b.target, b.records, pos(&b.step)))
    });
    let mut scaling = Vec::new();
    if index.records.len() > 1 {
        let base_records = *index.records.iter().min().unwrap_or(&0);
        for base in summary.iter().filter(|r| r.records == base_records) {
            for other in summary.iter().filter(|r| {
                r.target == base.target && r.step == base.step && r.records != base_records
            }) {
                let pct = |a: f64, b: f64| (a > 0.0).then(|| (b - a) / a * 100.0);
                let change = |x: &BTreeMap<String, Stat>, y: &BTreeMap<String, Stat>| {
                    x.iter()
                        .filter_map(|(op, s)| {
                            y.get(op)
                                .and_then(|t| pct(s.mean, t.mean))
                                .map(|c| (op.clone(), c))
                        })
                        .collect()
                };
                let tput = |r: &SummaryRow| {
                    r.slo_ops_per_sec
                        .as_ref()
                        .or(r.ops_per_sec.as_ref())
                        .map(|s| s.mean)
                };
                scaling.push(ScalingRow {
                    target: base.target,
                    step: base.step.clone(),
                    base_records,
                    records: other.records,
                    ops_per_sec_change_pct: tput(base)
                        .zip(tput(other))
                        .and_then(|(a, b)| pct(a, b)),
                    p99_change_pct: change(&base.p99_us, &other.p99_us),
                    mean_change_pct: change(&base.mean_us, &other.mean_us),
                });
            }
        }
    }
    index.summary = summary;
    index.scaling = scaling;
}

fn fmt_stat(s: Option<&Stat>, digits: usize) -> String {
    match s {
        None => "-".into(),
        Some(s) => match s.ci95 {
            Some(h) => format!("{:.*} ±{:.*}", digits, s.mean, digits, h),
            None => format!("{:.*}", digits, s.mean),
        },
    }
}

/// The suite's text summary.
pub fn table(index: &SuiteIndex) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n{:<30} {:>11} {:<16} {:>18} {:>16}  p99 per operation (µs)",
        "target",
        "records",
        "phase",
        if index.slo.is_some() {
            "ops/s under SLO"
        } else {
            "ops/s"
        },
        "data before"
    );
    for r in &index.summary {
        let step = index
            .steps
            .iter()
            .find(|s| s.target == r.target && s.records == r.records && s.step == r.step);
        let state = step
            .and_then(|s| s.data_before.as_ref())
            .map_or("-", |d| d.state.name());
        let searched = step.is_some_and(|s| s.slo.is_some());
        let tput = if r.slo_ops_per_sec.is_some() {
            fmt_stat(r.slo_ops_per_sec.as_ref(), 0)
        } else if searched {
            "not met".to_string()
        } else {
            fmt_stat(r.ops_per_sec.as_ref(), 0)
        };
        let lat: Vec<String> = r
            .p99_us
            .iter()
            .map(|(op, s)| format!("{op} {}", fmt_stat(Some(s), 0)))
            .collect();
        let _ = writeln!(
            out,
            "{:<30} {:>11} {:<16} {:>18} {:>16}  {}",
            index.targets[r.target].chars().take(30).collect::<String>(),
            r.records,
            r.step,
            tput,
            state,
            lat.join(", ")
        );
    }
    for s in index
        .steps
        .iter()
        .filter(|s| s.slo.as_ref().is_some_and(|o| o.status != SloStatus::Met))
    {
        let _ = writeln!(
            out,
            "warning: {} {}: {}",
            index.targets[s.target],
            s.step,
            s.slo.as_ref().map_or("", |o| o.message.as_str())
        );
    }
    if !index.scaling.is_empty() {
        let _ = writeln!(out, "\ndata-size scaling (change from the smallest size):");
        for r in &index.scaling {
            let lat: Vec<String> = r
                .p99_change_pct
                .iter()
                .map(|(op, c)| format!("{op} p99 {c:+.0}%"))
                .collect();
            let _ = writeln!(
                out,
                "{:<30} {:<16} {} -> {}: throughput {}, {}",
                index.targets[r.target].chars().take(30).collect::<String>(),
                r.step,
                r.base_records,
                r.records,
                r.ops_per_sec_change_pct
                    .map_or("-".into(), |c| format!("{c:+.0}%")),
                lat.join(", ")
            );
        }
    }
    let unfinished = index
        .steps
        .iter()
        .filter(|s| !matches!(s.status, StepStatus::Ok | StepStatus::Converged))
        .count();
    if unfinished > 0 {
        let _ = writeln!(out, "{unfinished} phases not finished (see index.json)");
    }
    out
}
