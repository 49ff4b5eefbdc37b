//! `yardstick report`: results, suites and matrices as one self-contained HTML
//! file with inline SVG charts (no script, no network), or the same tables as
//! Markdown or CSV. Every chart's numbers are also in a table.
use crate::svg::{escape, BarChart, BarSeries, Line, LineChart};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use yardstick_core::result::RunResult;
use yardstick_core::stats::ci::mean_ci;
use yardstick_core::workload::Phase;

/// One result, with where it belongs.
#[derive(Debug, Clone)]
pub struct Entry {
    pub file: String,
    /// The database, URL with passwords redacted.
    pub target: String,
    /// The workload or suite phase name (`a`, `load`, `workloadc`, ...).
    pub workload: String,
    pub records: u64,
    pub repetition: u32,
    /// Suites: "clean" or "dirty (after a, b)".
    pub data_before: Option<String>,
    pub result: RunResult,
}

/// Everything a report shows.
#[derive(Debug, Clone, Default)]
pub struct Inputs {
    pub entries: Vec<Entry>,
    /// Suite indexes (`yardstick suite`), with their file names.
    pub suites: Vec<(String, Value)>,
    /// Storage-engine matrices (`yardstick matrix`).
    pub matrices: Vec<(String, Value)>,
    /// TPC-C runs (`yardstick tpcc run`).
    pub tpcc: Vec<crate::tpcc::TpccEntry>,
}

/// A table of the report; the Markdown and CSV exports are these tables.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub id: String,
    pub title: String,
    pub columns: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

pub(crate) struct Section {
    pub(crate) id: &'static str,
    pub(crate) title: String,
    pub(crate) intro: String,
    pub(crate) charts: Vec<String>,
    pub(crate) tables: Vec<Table>,
}

impl Entry {
    pub fn from_result(file: String, result: RunResult) -> Entry {
        let workload = match result.phase {
            Phase::Load => format!("load {}", result.workload),
            Phase::Run => result.workload.clone(),
        };
        Entry {
            file,
            target: result.binding.url.clone(),
            records: result
                .properties
                .get("recordcount")
                .and_then(|v| v.parse().ok())
                .unwrap_or(0),
            repetition: 1,
            data_before: None,
            workload,
            result,
        }
    }

    fn group(&self, sizes: bool) -> String {
        if sizes {
            format!(
                "{} @{}",
                self.workload,
                crate::svg::short(self.records as f64)
            )
        } else {
            self.workload.clone()
        }
    }
}

fn us(ns: f64) -> String {
    if ns >= 100_000.0 {
        format!("{:.0}", ns / 1e3)
    } else {
        format!("{:.1}", ns / 1e3)
    }
}

fn ms_axis(v: f64) -> String {
    crate::svg::short(v)
}

fn pct_axis(v: f64) -> String {
    format!("{}%", crate::svg::short(v))
}

/// Keeps first-seen order.
pub(crate) fn ordered<T: PartialEq + Clone>(items: impl Iterator<Item = T>) -> Vec<T> {
    let mut v: Vec<T> = Vec::new();
    for i in items {
        if !v.contains(&i) {
            v.push(i);
        }
    }
    v
}

fn ci_text(x: &[f64], digits: usize) -> (String, String, Option<f64>, Option<f64>) {
    match mean_ci(x, 0.95) {
        None => ("-".into(), "".into(), None, None),
        Some(c) => (
            format!("{:.*}", digits, c.mean),
            c.half_width
                .map(|h| format!("±{:.*}", digits, h))
                .unwrap_or_default(),
            Some(c.mean),
            c.half_width,
        ),
    }
}

/// Warnings that must be seen: each run's own, incomplete runs, and
/// operation semantics that differ between targets of one workload.
fn warnings(inputs: &Inputs) -> Vec<String> {
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
        for st in s["steps"].as_array().into_iter().flatten() {
            if st["slo"]["status"].as_str() == Some("unmet") {
                out.push(format!(
                    "{file}: {} · {}: {}",
                    s["targets"][st["target"].as_u64().unwrap_or(0) as usize]
                        .as_str()
                        .unwrap_or(""),
                    st["step"].as_str().unwrap_or(""),
                    st["slo"]["message"].as_str().unwrap_or("")
                ));
            }
            let status = st["status"].as_str().unwrap_or("");
            if status != "ok" {
                out.push(format!(
                    "{file}: phase {} of {} is {status}",
                    st["step"].as_str().unwrap_or(""),
                    s["targets"][st["target"].as_u64().unwrap_or(0) as usize]
                        .as_str()
                        .unwrap_or("")
                ));
            }
        }
    }
    out.extend(crate::tpcc::warnings(&inputs.tpcc));
    out
}

fn throughput(inputs: &Inputs, sizes: bool) -> Option<Section> {
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

fn latency(inputs: &Inputs, sizes: bool) -> Option<Section> {
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
                }
                .render(),
            );
        }
    }
    charts.extend(cdfs);
    Some(Section {
        id: "latency",
        title: "Latency".into(),
        intro: "Response time of successful operations, measured from the intended start in open-loop runs (coordinated omission corrected). The CDFs show where cache hits give way to misses.".into(),
        charts,
        tables: vec![table],
    })
}

fn over_time(inputs: &Inputs, sizes: bool) -> Option<Section> {
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
        for e in with_series.iter().filter(|e| &e.group(sizes) == g) {
            let pts: Vec<_> = e.result.time_series.iter().filter(|p| !p.warmup).collect();
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

fn target_of(s: &Value, st: &Value) -> String {
    s["targets"][st["target"].as_u64().unwrap_or(0) as usize]
        .as_str()
        .unwrap_or("")
        .to_string()
}

fn slo(inputs: &Inputs) -> Option<Section> {
    let mut knees = Table {
        id: "slo".into(),
        title: "Maximum throughput under the latency bound".into(),
        columns: [
            "target",
            "phase",
            "records",
            "repetition",
            "bound",
            "status",
            "ops/s at the knee",
            "percentile at the knee (µs)",
            "closed-loop ops/s",
        ]
        .map(String::from)
        .to_vec(),
        rows: vec![],
    };
    let mut curve = Table {
        id: "slo-curve".into(),
        title: "Throughput-latency curves".into(),
        columns: [
            "target",
            "phase",
            "records",
            "repetition",
            "target ops/s",
            "achieved ops/s",
            "percentile (µs)",
            "meets the bound",
            "why not",
        ]
        .map(String::from)
        .to_vec(),
        rows: vec![],
    };
    let mut by_step: BTreeMap<String, (Vec<Line>, Option<f64>, String)> = BTreeMap::new();
    let mut order = Vec::new();
    for (_, s) in &inputs.suites {
        for st in s["steps"].as_array().into_iter().flatten() {
            let o = &st["slo"];
            if o.is_null() {
                continue;
            }
            let target = target_of(s, st);
            let step = st["step"].as_str().unwrap_or("").to_string();
            let rec = st["records"].as_u64().unwrap_or(0).to_string();
            let rep = st["repetition"].as_u64().unwrap_or(1).to_string();
            let bound = o["bound"]["text"].as_str().unwrap_or("").to_string();
            knees.rows.push(vec![
                target.clone(),
                step.clone(),
                rec.clone(),
                rep.clone(),
                bound.clone(),
                o["status"].as_str().unwrap_or("").into(),
                o["knee_ops_per_sec"]
                    .as_f64()
                    .map_or("-".into(), |v| format!("{v:.0}")),
                o["knee_value_ns"].as_f64().map_or("-".into(), us),
                o["max_ops_per_sec"]
                    .as_f64()
                    .map_or("-".into(), |v| format!("{v:.0}")),
            ]);
            let mut pts = Vec::new();
            for p in o["curve"].as_array().into_iter().flatten() {
                let v = p["value_ns"].as_f64();
                curve.rows.push(vec![
                    target.clone(),
                    step.clone(),
                    rec.clone(),
                    rep.clone(),
                    format!("{:.0}", p["target"].as_f64().unwrap_or(0.0)),
                    format!("{:.0}", p["achieved"].as_f64().unwrap_or(0.0)),
                    v.map_or("-".into(), us),
                    if p["pass"].as_bool() == Some(true) {
                        "yes"
                    } else {
                        "no"
                    }
                    .into(),
                    p["why"].as_str().unwrap_or("").into(),
                ]);
                if let Some(v) = v {
                    pts.push((p["achieved"].as_f64().unwrap_or(0.0), v / 1e6));
                }
            }
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            if !order.contains(&step) {
                order.push(step.clone());
            }
            let entry = by_step.entry(step.clone()).or_default();
            entry.1 = o["bound"]["bound_ns"].as_f64().map(|b| b / 1e6);
            entry.2 = bound;
            entry.0.push(Line {
                name: if rep == "1" {
                    target
                } else {
                    format!("{target} #{rep}")
                },
                points: pts,
                dashed: false,
                markers: true,
            });
        }
    }
    if knees.rows.is_empty() {
        return None;
    }
    let mut charts = Vec::new();
    for step in order {
        let (mut lines, bound, text) = by_step.remove(&step).unwrap_or_default();
        let xmax = lines
            .iter()
            .flat_map(|l| l.points.iter().map(|p| p.0))
            .fold(0.0, f64::max);
        if let Some(b) = bound {
            lines.push(Line {
                name: format!("bound {text}"),
                points: vec![(0.0, b), (xmax, b)],
                dashed: true,
                markers: false,
            });
        }
        charts.push(
            LineChart {
                title: format!("Throughput vs latency · {step}"),
                x_label: "achieved throughput (ops/s)".into(),
                y_label: "percentile of the bound (ms)".into(),
                lines,
                ..Default::default()
            }
            .render(),
        );
    }
    Some(Section {
        id: "slo",
        title: "Maximum throughput under a latency bound".into(),
        intro: "Each phase was run open loop at stepped target rates (coarse steps, then bisection); the knee is the highest throughput whose percentile met the bound with the rate achieved.".into(),
        charts,
        tables: vec![knees, curve],
    })
}

fn scaling(inputs: &Inputs) -> Option<Section> {
    let mut table = Table {
        id: "scaling".into(),
        title: "Data-size scaling".into(),
        columns: [
            "target",
            "phase",
            "from records",
            "to records",
            "throughput change (%)",
            "p99 change per operation (%)",
        ]
        .map(String::from)
        .to_vec(),
        rows: vec![],
    };
    let mut charts = Vec::new();
    for (_, s) in &inputs.suites {
        let rows = s["scaling"].as_array().cloned().unwrap_or_default();
        if rows.is_empty() {
            continue;
        }
        for r in &rows {
            let lat: Vec<String> = r["p99_change_pct"]
                .as_object()
                .into_iter()
                .flatten()
                .map(|(op, v)| format!("{op} {:+.0}", v.as_f64().unwrap_or(0.0)))
                .collect();
            table.rows.push(vec![
                target_of(s, r),
                r["step"].as_str().unwrap_or("").into(),
                r["base_records"].to_string(),
                r["records"].to_string(),
                r["ops_per_sec_change_pct"]
                    .as_f64()
                    .map_or("-".into(), |v| format!("{v:+.1}")),
                lat.join(", "),
            ]);
        }
        let summary = s["summary"].as_array().cloned().unwrap_or_default();
        let steps = ordered(
            summary
                .iter()
                .map(|r| r["step"].as_str().unwrap_or("").to_string()),
        );
        let keys = ordered(summary.iter().map(|r| {
            (
                r["target"].as_u64().unwrap_or(0),
                r["records"].as_u64().unwrap_or(0),
            )
        }));
        let series = keys
            .iter()
            .map(|(t, n)| BarSeries {
                name: format!(
                    "{} @{} records",
                    s["targets"][*t as usize].as_str().unwrap_or(""),
                    crate::svg::short(*n as f64)
                ),
                values: steps
                    .iter()
                    .map(|st| {
                        summary
                            .iter()
                            .find(|r| {
                                r["target"].as_u64() == Some(*t)
                                    && r["records"].as_u64() == Some(*n)
                                    && r["step"].as_str() == Some(st)
                            })
                            .and_then(|r| {
                                r["slo_ops_per_sec"]["mean"]
                                    .as_f64()
                                    .or(r["ops_per_sec"]["mean"].as_f64())
                            })
                    })
                    .collect(),
                errors: vec![],
            })
            .collect();
        charts.push(
            BarChart {
                title: "Throughput per data size".into(),
                y_label: "throughput (ops/s)".into(),
                groups: steps,
                series,
                log: false,
            }
            .render(),
        );
    }
    if table.rows.is_empty() {
        return None;
    }
    Some(Section {
        id: "scaling",
        title: "Data-size scaling".into(),
        intro: "The same phases at several data sizes: the change from the smallest size.".into(),
        charts,
        tables: vec![table],
    })
}

fn matrix(inputs: &Inputs) -> Option<Section> {
    let mut table = Table {
        id: "matrix".into(),
        title: "Storage engines under memory budgets".into(),
        columns: [
            "engine",
            "budget",
            "test",
            "status",
            "ops/s",
            "mean µs",
            "p50 µs",
            "p99 µs",
            "stdev µs",
            "peak memory (MiB)",
        ]
        .map(String::from)
        .to_vec(),
        rows: vec![],
    };
    let mut loads = Table {
        id: "matrix-loads".into(),
        title: "Loads: rate, bytes on disk, compression".into(),
        columns: [
            "engine",
            "version",
            "inserts/s",
            "disk MiB",
            "compression ratio",
        ]
        .map(String::from)
        .to_vec(),
        rows: vec![],
    };
    let mut charts = Vec::new();
    for (_, m) in &inputs.matrices {
        let cells = m["cells"].as_array().cloned().unwrap_or_default();
        let f = |v: &Value, d: usize| v.as_f64().map_or("-".into(), |x| format!("{x:.d$}"));
        for l in m["loads"].as_array().into_iter().flatten() {
            loads.rows.push(vec![
                l["db"].as_str().unwrap_or("").into(),
                l["version"].as_str().unwrap_or("").into(),
                f(&l["inserts_per_sec"], 0),
                l["disk_bytes"]
                    .as_f64()
                    .map_or("-".into(), |b| format!("{:.1}", b / 1048576.0)),
                f(&l["compression_ratio"], 2),
            ]);
        }
        for c in &cells {
            let budget = c["budget"].as_str().unwrap_or("none").to_string();
            table.rows.push(vec![
                c["db"].as_str().unwrap_or("").into(),
                budget,
                c["test"].as_str().unwrap_or("").into(),
                c["status"].as_str().unwrap_or("").into(),
                f(&c["ops_per_sec"], 0),
                f(&c["latency_us"]["mean"], 1),
                f(&c["latency_us"]["p50"], 1),
                f(&c["latency_us"]["p99"], 1),
                f(&c["latency_us"]["stdev"], 1),
                c["peak_memory_bytes"]
                    .as_f64()
                    .map_or("-".into(), |b| format!("{:.0}", b / 1048576.0)),
            ]);
        }
        let tests = ordered(
            cells
                .iter()
                .map(|c| c["test"].as_str().unwrap_or("").to_string()),
        );
        let keys = ordered(cells.iter().map(|c| {
            (
                c["db"].as_str().unwrap_or("").to_string(),
                c["budget"].as_str().unwrap_or("none").to_string(),
            )
        }));
        let series = keys
            .iter()
            .map(|(db, b)| BarSeries {
                name: format!("{db} @{b}"),
                values: tests
                    .iter()
                    .map(|t| {
                        cells
                            .iter()
                            .find(|c| {
                                c["db"].as_str() == Some(db)
                                    && c["budget"].as_str().unwrap_or("none") == b
                                    && c["test"].as_str() == Some(t)
                            })
                            .and_then(|c| c["ops_per_sec"].as_f64())
                    })
                    .collect(),
                errors: vec![],
            })
            .collect();
        charts.push(
            BarChart {
                title: "Storage engines: throughput per test and memory budget".into(),
                y_label: "throughput (ops/s, log scale)".into(),
                groups: tests,
                series,
                log: true,
            }
            .render(),
        );
    }
    if table.rows.is_empty() {
        return None;
    }
    Some(Section {
        id: "matrix",
        title: "Storage engines".into(),
        intro: "Each cell ran in its own memory-capped process after a warm-up; latencies are over every operation of the cell.".into(),
        charts,
        tables: vec![loads, table],
    })
}

fn sections(inputs: &Inputs) -> Vec<Section> {
    let sizes = ordered(inputs.entries.iter().map(|e| e.records)).len() > 1;
    [
        throughput(inputs, sizes),
        latency(inputs, sizes),
        slo(inputs),
        scaling(inputs),
        over_time(inputs, sizes),
        matrix(inputs),
        crate::tpcc::section(&inputs.tpcc),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// Every table of the report (the Markdown and CSV exports).
pub fn tables(inputs: &Inputs) -> Vec<Table> {
    let mut t: Vec<Table> = sections(inputs)
        .into_iter()
        .flat_map(|s| s.tables)
        .collect();
    t.push(runs_table(inputs));
    t
}

fn runs_table(inputs: &Inputs) -> Table {
    Table {
        id: "runs".into(),
        title: "Runs".into(),
        columns: [
            "file", "target", "engine", "version", "workload", "phase", "insert", "update",
            "threads", "loop", "seconds", "started",
        ]
        .map(String::from)
        .to_vec(),
        rows: inputs
            .entries
            .iter()
            .map(|e| {
                let r = &e.result;
                vec![
                    e.file.clone(),
                    e.target.clone(),
                    r.binding.engine.name.clone(),
                    r.binding.engine.version.clone(),
                    e.workload.clone(),
                    format!("{:?}", r.phase).to_lowercase(),
                    format!("{:?}", r.semantics.insert).to_lowercase(),
                    format!("{:?}", r.semantics.update).to_lowercase(),
                    format!("{} x {}", r.runner.threads, r.runner.concurrency),
                    r.runner.loop_mode.clone(),
                    format!("{:.1}", r.elapsed_s),
                    r.started_at.clone(),
                ]
            })
            .collect(),
    }
}

fn html_table(out: &mut String, t: &Table) {
    let _ = write!(
        out,
        "<table id=\"table-{}\"><caption>{}</caption><thead><tr>",
        escape(&t.id),
        escape(&t.title)
    );
    for c in &t.columns {
        let _ = write!(out, "<th scope=\"col\">{}</th>", escape(c));
    }
    out.push_str("</tr></thead><tbody>");
    for r in &t.rows {
        out.push_str("<tr>");
        for c in r {
            let _ = write!(out, "<td>{}</td>", escape(c));
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table>\n");
}

fn config(out: &mut String, e: &Entry) {
    let r = &e.result;
    let _ = write!(
        out,
        "<details><summary>{} · {} · {}</summary><dl>",
        escape(&e.target),
        escape(&e.workload),
        escape(&e.file)
    );
    let mut item = |k: &str, v: String| {
        let _ = write!(out, "<dt>{}</dt><dd>{}</dd>", escape(k), escape(&v));
    };
    item("command line", r.command_line.join(" "));
    item("tool", format!("{} {}", r.tool.name, r.tool.version));
    item(
        "engine",
        format!("{} {}", r.binding.engine.name, r.binding.engine.version),
    );
    item(
        "engine settings",
        r.binding
            .engine
            .settings
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(", "),
    );
    item(
        "semantics",
        format!(
            "insert {:?}, update {:?}, read-modify-write {}",
            r.semantics.insert, r.semantics.update, r.semantics.read_modify_write
        )
        .to_lowercase(),
    );
    item(
        "runner",
        format!(
            "{} threads x {} in flight, {} loop{}, warm-up {} s, seed {}, instance {}/{}",
            r.runner.threads,
            r.runner.concurrency,
            r.runner.loop_mode,
            r.runner
                .target_ops_per_sec
                .map(|t| format!(" at {t:.0} ops/s"))
                .unwrap_or_default(),
            r.runner.warmup_s,
            r.seed,
            r.instance.index,
            r.instance.count
        ),
    );
    item(
        "explicit properties",
        r.explicit_properties
            .iter()
            .map(|(k, v)| format!("{k}={} ({})", v.value, v.source))
            .collect::<Vec<_>>()
            .join(", "),
    );
    item("host", r.host.summary());
    item(
        "client CPU",
        format!(
            "{:.2} cores of {} ({:.0} ns per operation)",
            r.client.cpu_cores_used, r.client.cores_available, r.client.cpu_ns_per_op
        ),
    );
    if let Some(m) = &r.memory_limit {
        item(
            "memory limit",
            format!(
                "{} bytes ({}), peak {:?}, OOM killed {}",
                m.bytes, m.mechanism, m.peak_bytes, m.oom_killed
            ),
        );
    }
    if let Some(d) = &e.data_before {
        item("data before the phase", d.clone());
    }
    item(
        "time",
        format!(
            "{} to {} ({:.1} s measured)",
            r.started_at, r.ended_at, r.elapsed_s
        ),
    );
    out.push_str("</dl></details>\n");
}

const STYLE: &str = "body{font-family:sans-serif;margin:2em auto;max-width:1100px;color:#222;padding:0 1em}\
h1{font-size:1.6em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:2em}\
table{border-collapse:collapse;margin:1em 0;font-size:.85em}caption{text-align:left;font-weight:bold;padding:.3em 0}\
th,td{border:1px solid #ddd;padding:.25em .6em;text-align:right}th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}\
.warnings{background:#fff4e5;border:2px solid #e8a33d;padding:.6em 1.2em;border-radius:4px}\
.warnings li{margin:.2em 0}figure{margin:1em 0}svg{max-width:100%;height:auto;border:1px solid #eee}\
details{margin:.4em 0}dt{font-weight:bold;margin-top:.3em}dd{margin-left:1.5em;font-family:monospace;font-size:.85em}\
nav a{margin-right:1em}";

/// The report as one HTML document.
pub fn html(inputs: &Inputs, title: &str, generated_at: &str) -> String {
    let secs = sections(inputs);
    let warns = warnings(inputs);
    let mut out = String::new();
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>{}</title><style>{STYLE}</style></head><body>\n<h1>{}</h1>\n",
        escape(title),
        escape(title)
    );
    let _ = write!(
        out,
        "<p>Generated by yardstick {} at {generated_at} from {} results{}{}{}.</p>\n<nav>",
        env!("CARGO_PKG_VERSION"),
        inputs.entries.len(),
        if inputs.suites.is_empty() {
            String::new()
        } else {
            format!(", {} suites", inputs.suites.len())
        },
        if inputs.matrices.is_empty() {
            String::new()
        } else {
            format!(", {} matrices", inputs.matrices.len())
        },
        if inputs.tpcc.is_empty() {
            String::new()
        } else {
            format!(", {} TPC-C runs", inputs.tpcc.len())
        }
    );
    if !warns.is_empty() {
        out.push_str("<a href=\"#warnings\">Warnings</a>");
    }
    for s in &secs {
        let _ = write!(out, "<a href=\"#{}\">{}</a>", s.id, escape(&s.title));
    }
    out.push_str("<a href=\"#configuration\">Configuration</a></nav>\n");
    if !warns.is_empty() {
        let _ = write!(
            out,
            "<section id=\"warnings\" class=\"warnings\"><h2>Warnings ({})</h2><ul>",
            warns.len()
        );
        for w in &warns {
            let _ = write!(out, "<li>{}</li>", escape(w));
        }
        out.push_str("</ul></section>\n");
    }
    for s in &secs {
        let _ = writeln!(
            out,
            "<section id=\"{}\"><h2>{}</h2><p>{}</p>",
            s.id,
            escape(&s.title),
            escape(&s.intro)
        );
        for c in &s.charts {
            let _ = writeln!(out, "<figure>{c}</figure>");
        }
        for t in &s.tables {
            html_table(&mut out, t);
        }
        out.push_str("</section>\n");
    }
    out.push_str("<section id=\"configuration\"><h2>Configuration</h2><p>Every run's command line, engine, semantics, properties, host and timing.</p>\n");
    html_table(&mut out, &runs_table(inputs));
    for e in &inputs.entries {
        config(&mut out, e);
    }
    for e in &inputs.tpcc {
        crate::tpcc::config(&mut out, e);
    }
    out.push_str("</section>\n</body></html>\n");
    out
}

/// The tables as Markdown.
pub fn markdown(inputs: &Inputs, title: &str) -> String {
    let mut out = format!("# {title}\n\n");
    let warns = warnings(inputs);
    if !warns.is_empty() {
        out.push_str("## Warnings\n\n");
        for w in &warns {
            let _ = writeln!(out, "- {w}");
        }
        out.push('\n');
    }
    let cell = |s: &str| s.replace('|', "\\|").replace('\n', " ");
    for t in tables(inputs) {
        let _ = writeln!(out, "## {}\n", t.title);
        let _ = writeln!(
            out,
            "| {} |",
            t.columns
                .iter()
                .map(|c| cell(c))
                .collect::<Vec<_>>()
                .join(" | ")
        );
        let _ = writeln!(
            out,
            "|{}",
            t.columns.iter().map(|_| "---|").collect::<String>()
        );
        for r in &t.rows {
            let _ = writeln!(
                out,
                "| {} |",
                r.iter().map(|c| cell(c)).collect::<Vec<_>>().join(" | ")
            );
        }
        out.push('\n');
    }
    out
}

/// The tables as CSV: a `table` column names the table, then its own columns
/// (a header row opens each table).
pub fn csv(inputs: &Inputs) -> String {
    let field = |s: &str| {
        if s.contains([',', '"', '\n']) {
            format!("\"{}\"", s.replace('"', "\"\""))
        } else {
            s.to_string()
        }
    };
    let mut out = String::new();
    for t in tables(inputs) {
        let _ = writeln!(
            out,
            "table,{}",
            t.columns
                .iter()
                .map(|c| field(c))
                .collect::<Vec<_>>()
                .join(",")
        );
        for r in &t.rows {
            let _ = writeln!(
                out,
                "{},{}",
                field(&t.id),
                r.iter().map(|c| field(c)).collect::<Vec<_>>().join(",")
            );
        }
    }
    out
}
