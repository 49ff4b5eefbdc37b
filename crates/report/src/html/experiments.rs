//! The sections of experiments made of many runs: SLO searches, scaling
//! and the storage-engine matrix.
use super::*;
use crate::section::{ordered, us, Section};

fn target_of(s: &Value, st: &Value) -> String {
    s["targets"][st["target"].as_u64().unwrap_or(0) as usize]
        .as_str()
        .unwrap_or("")
        .to_string()
}

pub(super) fn slo(inputs: &Inputs) -> Option<Section> {
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

pub(super) fn scaling(inputs: &Inputs) -> Option<Section> {
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

pub(super) fn matrix(inputs: &Inputs) -> Option<Section> {
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
