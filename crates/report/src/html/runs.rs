//! The sections of single runs: warnings, throughput, latency and the
//! time series.
use super::*;
use crate::section::{ci_text, ms_axis, ordered, pct_axis, us, Section};
use yardstick_orchestrate::index::{SloStatus, StepStatus};

/// Warnings that must be seen: each run's own, incomplete runs, and
/// operation semantics that differ between targets of one workload.
pub(super) fn warnings(inputs: &Inputs) -> Vec<String> {
    let mut out = Vec::new();
    for e in &inputs.entries {
        let r = &e.result;
        if !r.complete {
            out.push(format!(
                "{} · {}: the run did not complete{}; its figures are partial",
                e.target,
                e.workload,
                if r.interrupted { " (interrupted)" } else { "" }
            ));
        }
        if r.totals.errors > 0 {
            out.push(format!(
                "{} · {}: {} operations failed",
                e.target, e.workload, r.totals.errors
            ));
        }
        for w in &r.warnings {
            out.push(format!("{} · {}: {w}", e.target, e.workload));
        }
    }
    let workloads = ordered(inputs.entries.iter().map(|e| e.workload.clone()));
    for w in workloads {
        let sems = ordered(inputs.entries.iter().filter(|e| e.workload == w).map(|e| {
            (
                e.target.clone(),
                format!(
                    "insert={:?}, update={:?}",
                    e.result.semantics.insert, e.result.semantics.update
                )
                .to_lowercase(),
            )
        }));
        let distinct = ordered(sems.iter().map(|s| s.1.clone()));
        if distinct.len() > 1 {
            out.push(format!(
                "{w}: operation semantics differ between targets, so their figures are not comparable: {}",
                sems.iter()
                    .map(|(t, s)| format!("{t} {s}"))
                    .collect::<Vec<_>>()
                    .join("; ")
            ));
        }
    }
    for (file, s) in &inputs.suites {
        for st in &s.steps {
            let target = s.targets.get(st.target).map_or("", String::as_str);
            if let Some(o) = st.slo.as_ref().filter(|o| o.status == SloStatus::Unmet) {
                out.push(format!("{file}: {target} · {}: {}", st.step, o.message));
            }
            // a converged series' remaining repetitions were not needed
            if !matches!(st.status, StepStatus::Ok | StepStatus::Converged) {
                out.push(format!(
                    "{file}: phase {} of {target} is {}",
                    st.step,
                    st.status.name()
                ));
            }
        }
    }
    out.extend(crate::tpcc::warnings(&inputs.tpcc));
    out
}

pub(super) fn throughput(inputs: &Inputs, sizes: bool) -> Option<Section> {
    if inputs.entries.is_empty() {
        return None;
    }
    let targets = ordered(inputs.entries.iter().map(|e| e.target.clone()));
    let groups = ordered(inputs.entries.iter().map(|e| e.group(sizes)));
    let mut table = Table {
        id: "throughput".into(),
        title: "Throughput".into(),
        columns: [
            "target",
            "workload",
            "records",
            "runs",
            "ops/s (records/s for batch loads)",
            "95% CI",
            "errors",
            "data before",
        ]
        .map(String::from)
        .to_vec(),
        rows: vec![],
    };
    let mut series: Vec<BarSeries> = targets
        .iter()
        .map(|t| BarSeries {
            name: t.clone(),
            values: vec![None; groups.len()],
            errors: vec![None; groups.len()],
        })
        .collect();
    for (gi, g) in groups.iter().enumerate() {
        for (ti, t) in targets.iter().enumerate() {
            let runs: Vec<&Entry> = inputs
                .entries
                .iter()
                .filter(|e| &e.target == t && &e.group(sizes) == g)
                .collect();
            if runs.is_empty() {
                continue;
            }
            let x: Vec<f64> = runs.iter().map(|e| e.result.records_per_sec()).collect();
            let (m, ci, mean, half) = ci_text(&x, 0);
            series[ti].values[gi] = mean;
            series[ti].errors[gi] = half;
            table.rows.push(vec![
                t.clone(),
                runs[0].workload.clone(),
                runs[0].records.to_string(),
                runs.len().to_string(),
                m,
                ci,
                runs.iter()
                    .map(|e| e.result.totals.errors)
                    .sum::<u64>()
                    .to_string(),
                runs[0].data_before.clone().unwrap_or_default(),
            ]);
        }
    }
    let chart = BarChart {
        title: "Throughput per workload and target".into(),
        y_label: "throughput (ops/s)".into(),
        groups,
        series,
        log: false,
    };
    Some(Section {
        id: "throughput",
        title: "Throughput".into(),
        intro: "Operations per second over each phase's measured time (warm-up excluded); with repetitions, the mean with its 95% confidence interval (whiskers).".into(),
        charts: vec![chart.render()],
        tables: vec![table],
    })
}

pub(super) fn latency(inputs: &Inputs, sizes: bool) -> Option<Section> {
    if inputs.entries.is_empty() {
        return None;
    }
    let targets = ordered(inputs.entries.iter().map(|e| e.target.clone()));
    let groups = ordered(inputs.entries.iter().map(|e| e.group(sizes)));
    let mut table = Table {
        id: "latency".into(),
        title: "Latency per operation (µs, response time, first repetition)".into(),
        columns: [
            "target",
            "workload",
            "operation",
            "count",
            "mean",
            "p50",
            "p95",
            "p99",
            "p99.9",
            "max",
        ]
        .map(String::from)
        .to_vec(),
        rows: vec![],
    };
    let mut charts = Vec::new();
    let mut cdfs = Vec::new();
    for g in &groups {
        let firsts: Vec<&Entry> = targets
            .iter()
            .filter_map(|t| {
                inputs
                    .entries
                    .iter()
                    .find(|e| &e.target == t && &e.group(sizes) == g)
            })
            .collect();
        let ops = ordered(
            firsts
                .iter()
                .flat_map(|e| e.result.operations.keys().cloned()),
        );
        let mut series = Vec::new();
        let mut lines = Vec::new();
        let mut spectra = Vec::new();
        for e in &firsts {
            let mut values = Vec::new();
            for op in &ops {
                let s = e.result.operations.get(op).map(|o| &o.response_time_ns);
                values.push(s.filter(|s| s.count > 0).map(|s| s.p99 as f64 / 1e3));
                if let Some(o) = e
                    .result
                    .operations
                    .get(op)
                    .filter(|o| o.response_time_ns.count > 0)
                {
                    let s = &o.response_time_ns;
                    table.rows.push(vec![
                        e.target.clone(),
                        e.workload.clone(),
                        op.clone(),
                        s.count.to_string(),
                        us(s.mean),
                        us(s.p50 as f64),
                        us(s.p95 as f64),
                        us(s.p99 as f64),
                        us(s.p999 as f64),
                        us(s.max as f64),
                    ]);
                    spectra.extend(super::spectrum::lines(&e.target, &e.result, op, o));
                    if !o.response_cdf.is_empty() {
                        lines.push(Line {
                            name: format!("{} · {op}", e.target),
                            points: o
                                .response_cdf
                                .iter()
                                .map(|p| (p[0] / 1e3, p[1] * 100.0))
                                .collect(),
                            dashed: false,
                            markers: false,
                        });
                    }
                }
            }
            series.push(BarSeries {
                name: e.target.clone(),
                values,
                errors: vec![],
            });
        }
        charts.push(
            BarChart {
                title: format!("p99 latency per operation · {g}"),
                y_label: "p99 response time (µs)".into(),
                groups: ops.clone(),
                series,
                log: false,
            }
            .render(),
        );
        if !spectra.is_empty() {
            spectra.extend(super::spectrum::targets(inputs));
            cdfs.push(super::spectrum::chart(g, spectra));
        }
        if !lines.is_empty() {
            cdfs.push(
                LineChart {
                    title: format!("Latency CDF · {g}"),
                    x_label: "response time (µs, log scale)".into(),
                    y_label: "operations at or below (%)".into(),
                    lines,
                    x_log: true,
                    y_log: false,
                    x_fmt: Some(ms_axis),
                    y_fmt: Some(pct_axis),
                    marks: Vec::new(),
                    stacked: false,
                }
                .render(),
            );
        }
    }
    charts.extend(cdfs);
    Some(Section {
        id: "latency",
        title: "Latency".into(),
        intro: "Response time of successful operations, measured from the intended start in open-loop runs (coordinated omission corrected). The percentile spectrum spaces 90%, 99%, 99.9% ... evenly, so the tail is as wide as the body; paced runs draw the service time dashed beside it. The CDFs show where cache hits give way to misses.".into(),
        charts,
        tables: vec![table],
    })
}

pub(super) fn over_time(inputs: &Inputs, sizes: bool) -> Option<Section> {
    let with_series: Vec<&Entry> = inputs
        .entries
        .iter()
        .filter(|e| e.result.time_series.iter().any(|p| !p.warmup))
        .collect();
    if with_series.is_empty() {
        return None;
    }
    let groups = ordered(with_series.iter().map(|e| e.group(sizes)));
    let mut charts = Vec::new();
    let mut table = Table {
        id: "over-time".into(),
        title: "Throughput over time".into(),
        columns: [
            "target",
            "workload",
            "repetition",
            "intervals",
            "min ops/s",
            "mean ops/s",
            "max ops/s",
            "variation (CV %)",
            "worst interval p99 (µs)",
        ]
        .map(String::from)
        .to_vec(),
        rows: vec![],
    };
    for g in &groups {
        let mut tput = Vec::new();
        let mut p99 = Vec::new();
        let mut marks = Vec::new();
        for e in with_series.iter().filter(|e| &e.group(sizes) == g) {
            // the drain after the end is left out of rates: no collapse at the end
            let pts: Vec<_> = yardstick_core::run::rate_points(&e.result.time_series).collect();
            let name = if e.repetition > 1 {
                format!("{} #{}", e.target, e.repetition)
            } else {
                e.target.clone()
            };
            tput.push(Line {
                name: name.clone(),
                points: pts.iter().map(|p| (p.t_s, p.ops_per_sec)).collect(),
                ..Default::default()
            });
            for f in &e.result.faults {
                if let Some(s) = f.started_s {
                    let cmd: String = f.command.chars().take(40).collect();
                    marks.push((s, format!("fault: {cmd}")));
                }
            }
            // open loop: the rate the schedule intended, beside the one achieved
            let intended: Vec<(f64, f64)> = pts
                .iter()
                .filter_map(|p| Some((p.t_s, p.intended_ops_per_sec?)))
                .collect();
            if !intended.is_empty() {
                tput.push(Line {
                    name: format!("{name} intended"),
                    points: intended,
                    dashed: true,
                    ..Default::default()
                });
            }
            let worst = |p: &yardstick_core::run::IntervalPoint| {
                p.per_op.iter().map(|o| o.p99_ns).max().unwrap_or(0) as f64
            };
            p99.push(Line {
                name,
                points: pts
                    .iter()
                    .filter(|p| p.ops > 0)
                    .map(|p| (p.t_s, worst(p) / 1e3))
                    .collect(),
                ..Default::default()
            });
            let x: Vec<f64> = pts.iter().map(|p| p.ops_per_sec).collect();
            let mean = x.iter().sum::<f64>() / x.len().max(1) as f64;
            let sd = (x.iter().map(|v| (v - mean).powi(2)).sum::<f64>()
                / (x.len().max(2) - 1) as f64)
                .sqrt();
            table.rows.push(vec![
                e.target.clone(),
                e.workload.clone(),
                e.repetition.to_string(),
                x.len().to_string(),
                format!("{:.0}", x.iter().copied().fold(f64::INFINITY, f64::min)),
                format!("{mean:.0}"),
                format!("{:.0}", x.iter().copied().fold(0.0, f64::max)),
                format!("{:.1}", if mean > 0.0 { sd / mean * 100.0 } else { 0.0 }),
                us(pts.iter().map(|p| worst(p)).fold(0.0, f64::max)),
            ]);
        }
        charts.push(
            LineChart {
                title: format!("Throughput over time · {g}"),
                x_label: "time since measurement started (s)".into(),
                y_label: "throughput (ops/s)".into(),
                lines: tput,
                marks: marks.clone(),
                ..Default::default()
            }
            .render(),
        );
        charts.push(
            LineChart {
                title: format!("p99 latency over time (slowest operation) · {g}"),
                x_label: "time since measurement started (s)".into(),
                y_label: "p99 response time (µs, log scale)".into(),
                lines: p99,
                y_log: true,
                marks,
                ..Default::default()
            }
            .render(),
        );
    }
    Some(Section {
        id: "over-time",
        title: "Throughput and latency over time".into(),
        intro: "One point per status interval: load-phase degradation, compaction stalls and warm-up effects show here.".into(),
        charts,
        tables: vec![table],
    })
}
