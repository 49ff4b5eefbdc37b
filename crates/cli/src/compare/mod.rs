//! `yardstick compare A.json B.json`: per operation, throughput and latency of
//! two runs side by side, the change, and whether it is statistically
//! significant (Welch's t-test on the runs' interval samples, with standard
//! errors corrected for autocorrelation). Differences in what was measured -
//! semantics, data size, distribution, binding options, tool version - are
//! warned about first, loudly: such runs are not like for like. Then every
//! recorded setting that differs (server, client, versions, host) and the
//! server's behaviour side by side (docs/observe.md), so one command says
//! what changed and what it did.
use crate::{read_result, CliError};
use std::fmt::Write as _;
use std::path::PathBuf;
use yardstick_core::result::RunResult;
use yardstick_core::run::IntervalPoint;
use yardstick_core::stats::welch::welch;
use yardstick_report::observed::Recorded;

mod tpcc;

/// Properties whose difference makes two runs measure different things.
const LIKE_FOR_LIKE: &[&str] = &[
    "recordcount",
    "fieldcount",
    "fieldlength",
    "fieldlengthdistribution",
    "requestdistribution",
    "zipfian.constant",
    "readproportion",
    "updateproportion",
    "insertproportion",
    "scanproportion",
    "readmodifywriteproportion",
    "readallfields",
    "writeallfields",
    "maxscanlength",
    "valuegenerator",
    "insert.semantics",
    "update.semantics",
    "threadcount",
    "target",
];

/// Loud warnings about what differs between the runs.
pub(crate) fn differences(a: &RunResult, b: &RunResult) -> Vec<String> {
    let mut w = Vec::new();
    if a.phase != b.phase || a.workload != b.workload {
        w.push(format!(
            "different phases or workloads: {:?} {} vs {:?} {}",
            a.phase, a.workload, b.phase, b.workload
        ));
    }
    if a.semantics != b.semantics {
        w.push(format!(
            "different semantics: insert {:?}/update {:?} vs insert {:?}/update {:?}",
            a.semantics.insert, a.semantics.update, b.semantics.insert, b.semantics.update
        ));
    }
    for k in LIKE_FOR_LIKE {
        let (x, y) = (a.properties.get(*k), b.properties.get(*k));
        if x != y {
            w.push(format!(
                "{k} differs: {} vs {}",
                x.map_or("unset", String::as_str),
                y.map_or("unset", String::as_str)
            ));
        }
    }
    let options = |r: &RunResult| r.binding.url.split_once('?').map(|(_, q)| q.to_string());
    if a.binding.scheme == b.binding.scheme && options(a) != options(b) {
        w.push(format!(
            "binding options differ: {} vs {}",
            options(a).unwrap_or_default(),
            options(b).unwrap_or_default()
        ));
    }
    if a.binding.engine.settings != b.binding.engine.settings
        && a.binding.scheme == b.binding.scheme
    {
        w.push("the engines' recorded settings differ (see binding.engine.settings)".into());
    }
    if a.tool.version != b.tool.version {
        w.push(format!(
            "made by different yardstick versions: {} vs {}",
            a.tool.version, b.tool.version
        ));
    }
    if a.runner.threads != b.runner.threads || a.runner.concurrency != b.runner.concurrency {
        w.push(format!(
            "different concurrency: {} threads x {} vs {} x {}",
            a.runner.threads, a.runner.concurrency, b.runner.threads, b.runner.concurrency
        ));
    }
    for (name, r) in [("A", a), ("B", b)] {
        if !r.complete {
            w.push(format!(
                "{name} is incomplete (interrupted or stopped early)"
            ));
        }
        if r.totals.errors > 0 {
            w.push(format!("{name} had {} failed operations", r.totals.errors));
        }
    }
    w
}

fn measured(r: &RunResult) -> impl Iterator<Item = &IntervalPoint> {
    yardstick_core::run::rate_points(&r.time_series)
}

/// Per-interval samples of one metric of one operation (or of all, `op` None).
fn samples(r: &RunResult, op: Option<&str>, metric: Metric) -> Vec<f64> {
    measured(r)
        .filter_map(|p| match (op, metric) {
            (None, Metric::Throughput) => Some(p.ops as f64 / p.length_s),
            (None, _) => None,
            (Some(name), m) => {
                let o = p.per_op.iter().find(|o| o.op.name() == name)?;
                match m {
                    Metric::Throughput => Some(o.count as f64 / p.length_s),
                    Metric::Mean => (o.count > 0).then_some(o.mean_ns),
                    Metric::P99 => (o.count > 0).then_some(o.p99_ns as f64),
                }
            }
        })
        .collect()
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Metric {
    Throughput,
    Mean,
    P99,
}

impl Metric {
    fn label(self) -> &'static str {
        match self {
            Metric::Throughput => "ops/s",
            Metric::Mean => "mean latency",
            Metric::P99 => "p99 latency",
        }
    }

    /// Whole-run figure from the result (exact histograms for latencies).
    fn whole(self, r: &RunResult, op: Option<&str>) -> Option<f64> {
        match (self, op) {
            (Metric::Throughput, None) => Some(r.totals.ops_per_sec),
            (Metric::Throughput, Some(n)) => {
                let o = r.operations.get(n)?;
                (r.elapsed_s > 0.0).then(|| o.count as f64 / r.elapsed_s)
            }
            (Metric::Mean, Some(n)) => Some(r.operations.get(n)?.response_time_ns.mean),
            (Metric::P99, Some(n)) => Some(r.operations.get(n)?.response_time_ns.p99 as f64),
            _ => None,
        }
    }
}

fn show(metric: Metric, v: f64) -> String {
    match metric {
        Metric::Throughput => format!("{v:.0}"),
        _ if v >= 1e6 => format!("{:.2} ms", v / 1e6),
        _ if v >= 1e3 => format!("{:.1} µs", v / 1e3),
        _ => format!("{v:.0} ns"),
    }
}

/// What differs between the runs' recorded settings, then their server
/// behaviour per `per_unit` side by side: what both kinds of comparison open
/// with.
fn what_differs(out: &mut String, a: &Recorded, b: &Recorded, per_unit: &str) {
    let changed = yardstick_report::observed::config_differences(a, b);
    if !changed.is_empty() {
        let _ = writeln!(out, "\nwhat differs (A -> B):");
        for d in &changed {
            let _ = writeln!(out, "  {} {}: {} -> {}", d.group, d.name, d.a, d.b);
        }
    }
    let server = yardstick_report::observed::server_table(a, b, per_unit);
    if !server.is_empty() {
        let _ = write!(out, "\n{server}");
    }
}

/// The header of the rows [`row`] writes.
fn header(out: &mut String, first: &str) {
    let _ = writeln!(
        out,
        "\n{first:<18} {:<13} {:>12} {:>12} {:>9} {:>9}  verdict",
        "metric", "A", "B", "change", "p"
    );
}

/// One row: the whole-run figures `x` and `y` shown by `show`, the change,
/// and Welch's test on the runs' per-interval samples (`None`: a figure
/// with no per-interval samples, such as a TPC-C transaction's p99).
fn row(
    out: &mut String,
    (name, metric): (&str, &str),
    (x, y): (f64, f64),
    show: impl Fn(f64) -> String,
    samples: Option<(&[f64], &[f64])>,
) {
    let change = if x != 0.0 { (y - x) / x * 100.0 } else { 0.0 };
    let (p, verdict) = match samples.map(|(a, b)| welch(a, b)) {
        Some(Some(t)) if t.p < 0.05 => (format!("{:.4}", t.p), "significant"),
        Some(Some(t)) => (format!("{:.4}", t.p), "not significant"),
        Some(None) => ("-".into(), "too few intervals to test"),
        None => ("-".into(), "whole run only"),
    };
    let _ = writeln!(
        out,
        "{name:<18} {metric:<13} {:>12} {:>12} {change:>+8.1}% {p:>9}  {verdict}",
        show(x),
        show(y),
    );
}

/// The closing line on how the rows were tested.
const TESTED: &str = "p: Welch's t-test on per-interval samples, standard errors corrected for lag-1 autocorrelation; significant at p < 0.05.";

/// The comparison as text: warnings, then one row per operation and metric.
pub(crate) fn render(a: &RunResult, b: &RunResult) -> String {
    let mut out = String::new();
    for w in differences(a, b) {
        let _ = writeln!(out, "WARNING: {w}");
    }
    what_differs(&mut out, &a.into(), &b.into(), "op");
    header(&mut out, "operation");
    let mut ops: Vec<Option<&str>> = vec![None];
    ops.extend(
        a.operations
            .keys()
            .filter(|k| b.operations.contains_key(*k))
            .map(|k| Some(k.as_str())),
    );
    for op in ops {
        for metric in [Metric::Throughput, Metric::Mean, Metric::P99] {
            let (Some(x), Some(y)) = (metric.whole(a, op), metric.whole(b, op)) else {
                continue;
            };
            row(
                &mut out,
                (op.unwrap_or("ALL"), metric.label()),
                (x, y),
                |v| show(metric, v),
                Some((&samples(a, op, metric), &samples(b, op, metric))),
            );
        }
    }
    let _ = writeln!(
        out,
        "\n{TESTED} Per-interval p99s are tested; the A and B columns are whole-run figures."
    );
    out
}

/// Compares each pair in turn (a selector may pick several): two YCSB
/// phases, or two TPC-C runs.
pub(crate) fn execute_pairs(pairs: &[(PathBuf, PathBuf)]) -> Result<i32, CliError> {
    for (i, (a, b)) in pairs.iter().enumerate() {
        let text = match (crate::read_tpcc(a)?, crate::read_tpcc(b)?) {
            (Some(ta), Some(tb)) => tpcc::render(&ta, &tb),
            (None, None) => render(&read_result(a)?, &read_result(b)?),
            (ta, _) => {
                let (t, y) = if ta.is_some() { (a, b) } else { (b, a) };
                return Err(CliError::bad_input(format!(
                    "{} is a TPC-C result and {} a YCSB one: compare two of one kind",
                    t.display(),
                    y.display()
                )));
            }
        };
        if i > 0 {
            println!();
        }
        println!("A: {}\nB: {}", a.display(), b.display());
        print!("{text}");
    }
    Ok(0)
}
