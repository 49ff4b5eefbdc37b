//! The sections of experiments made of many runs: SLO searches, scaling
//! and the storage-engine matrix.
use super::*;
use crate::section::{ordered, us, Section};
use yardstick_orchestrate::index::{CellLatency, CellStatus, SloStatus, SuiteIndex};

fn target_of(s: &SuiteIndex, target: usize) -> String {
    s.targets.get(target).cloned().unwrap_or_default()
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
        for st in &s.steps {
            let Some(o) = &st.slo else {
                continue;
            };
            let target = target_of(s, st.target);
            let step = st.step.clone();
            let rec = st.records.to_string();
            let rep = st.repetition.to_string();
            let bound = o.bound.text.clone();
            knees.rows.push(vec![
                target.clone(),
                step.clone(),
                rec.clone(),
                rep.clone(),
                bound.clone(),
                match o.status {
                    SloStatus::Met => "met",
                    SloStatus::Unmet => "unmet",
                }
                .into(),
                o.knee_ops_per_sec.map_or("-".into(), |v| format!("{v:.0}")),
                o.knee_value_ns.map_or("-".into(), |v| us(v as f64)),
                format!("{:.0}", o.max_ops_per_sec),
            ]);
            let mut pts = Vec::new();
            for p in &o.curve {
                let v = p.value_ns.map(|v| v as f64);
                curve.rows.push(vec![
                    target.clone(),
                    step.clone(),
                    rec.clone(),
                    rep.clone(),
                    format!("{:.0}", p.target),
                    format!("{:.0}", p.achieved),
                    v.map_or("-".into(), us),
                    if p.pass { "yes" } else { "no" }.into(),
                    p.why.clone(),
                ]);
                if let Some(v) = v {
                    pts.push((p.achieved, v / 1e6));
                }
            }
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            if !order.contains(&step) {
                order.push(step.clone());
            }
            let entry = by_step.entry(step.clone()).or_default();
            entry.1 = Some(o.bound.bound_ns as f64 / 1e6);
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
        if s.scaling.is_empty() {
            continue;
        }
        for r in &s.scaling {
            let lat: Vec<String> = r
                .p99_change_pct
                .iter()
                .map(|(op, v)| format!("{op} {v:+.0}"))
                .collect();
            table.rows.push(vec![
                target_of(s, r.target),
                r.step.clone(),
                r.base_records.to_string(),
                r.records.to_string(),
                r.ops_per_sec_change_pct
                    .map_or("-".into(), |v| format!("{v:+.1}")),
                lat.join(", "),
            ]);
        }
        let summary = &s.summary;
        let steps = ordered(summary.iter().map(|r| r.step.clone()));
        let keys = ordered(summary.iter().map(|r| (r.target, r.records)));
        let series = keys
            .iter()
            .map(|&(t, n)| BarSeries {
                name: format!(
                    "{} @{} records",
                    target_of(s, t),
                    crate::svg::short(n as f64)
                ),
                values: steps
                    .iter()
                    .map(|st| {
                        summary
                            .iter()
                            .find(|r| r.target == t && r.records == n && &r.step == st)
                            .and_then(|r| {
                                r.slo_ops_per_sec
                                    .as_ref()
                                    .or(r.ops_per_sec.as_ref())
                                    .map(|x| x.mean)
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
        let f = |v: Option<f64>, d: usize| v.map_or("-".into(), |x| format!("{x:.d$}"));
        let lat =
            |c: &Option<CellLatency>, pick: fn(&CellLatency) -> f64| f(c.as_ref().map(pick), 1);
        for l in &m.loads {
            loads.rows.push(vec![
                l.db.clone(),
                l.version.clone().unwrap_or_default(),
                f(l.inserts_per_sec, 0),
                f(l.disk_bytes.map(|b| b as f64 / 1048576.0), 1),
                f(l.compression_ratio, 2),
            ]);
        }
        let budget_of = |b: &Option<String>| b.clone().unwrap_or_else(|| "none".into());
        for c in &m.cells {
            table.rows.push(vec![
                c.db.clone(),
                budget_of(&c.budget),
                c.test.clone(),
                match c.status {
                    CellStatus::Ok => "ok",
                    CellStatus::Oom => "oom",
                    CellStatus::Failed => "failed",
                }
                .into(),
                f(c.ops_per_sec, 0),
                lat(&c.latency_us, |l| l.mean),
                lat(&c.latency_us, |l| l.p50),
                lat(&c.latency_us, |l| l.p99),
                lat(&c.latency_us, |l| l.stdev),
                f(c.peak_memory_bytes.map(|b| b as f64 / 1048576.0), 0),
            ]);
        }
        let tests = ordered(m.cells.iter().map(|c| c.test.clone()));
        let keys = ordered(m.cells.iter().map(|c| (c.db.clone(), budget_of(&c.budget))));
        let series = keys
            .iter()
            .map(|(db, b)| BarSeries {
                name: format!("{db} @{b}"),
                values: tests
                    .iter()
                    .map(|t| {
                        m.cells
                            .iter()
                            .find(|c| &c.db == db && &budget_of(&c.budget) == b && &c.test == t)
                            .and_then(|c| c.ops_per_sec)
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
        intro: "Each cell ran after a warm-up under its memory budget (a library engine: the whole benchmark process capped; a server: the server's process capped); latencies are over every operation of the cell.".into(),
        charts,
        tables: vec![loads, table],
    })
}
