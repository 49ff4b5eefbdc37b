//! TPC-C results in the report: tpmC per target and configuration, latency
//! per transaction type, tpmC over time, the consistency checks, and the
//! configuration of each run (a tuning diary is a series of these).
use crate::section::{ordered, Section, Table};
use crate::svg::{escape, BarChart, BarSeries, Line, LineChart};
use std::fmt::Write as _;
use yardstick_core::tpcc::result::TpccResult;

/// The five transactions in the report's order.
const TXNS: &[&str] = &[
    "NEW-ORDER",
    "PAYMENT",
    "ORDER-STATUS",
    "DELIVERY",
    "STOCK-LEVEL",
];

/// One TPC-C result with its file name.
#[derive(Debug, Clone)]
pub struct TpccEntry {
    pub file: String,
    pub result: TpccResult,
    /// The tags that tell it from other runs of its database
    /// ([`crate::html::Inputs::label_by_tags`]).
    pub label: Option<String>,
}

impl TpccEntry {
    /// The database: engine and redacted URL, and the label.
    pub fn target(&self) -> String {
        let d = &self.result.database;
        let t = format!("{} {} · {}", d.engine.name, d.engine.version, d.url);
        match &self.label {
            Some(l) => format!("{t} [{l}]"),
            None => t,
        }
    }

    /// Warehouses and terminals: runs of one configuration are comparable.
    pub fn config(&self) -> String {
        let c = &self.result.config;
        format!(
            "{} W · {} terminals{}",
            c.warehouses,
            c.terminals,
            if c.spec_timing { " · spec timing" } else { "" }
        )
    }

    fn label(&self) -> String {
        format!("{} · {}", self.target(), self.config())
    }
}

fn ms(ns: f64) -> String {
    if ns >= 100e6 {
        format!("{:.0}", ns / 1e6)
    } else {
        format!("{:.2}", ns / 1e6)
    }
}

/// What must be seen: incomplete runs, failed transactions, failed checks,
/// each run's own warnings, and isolation levels that differ between
/// targets of one configuration.
pub fn warnings(runs: &[TpccEntry]) -> Vec<String> {
    let mut out = Vec::new();
    for e in runs {
        let r = &e.result;
        let who = format!("TPC-C {} · {}", e.target(), e.config());
        if !r.complete {
            out.push(format!(
                "{who}: the run did not complete{}; its figures are partial",
                if r.interrupted { " (interrupted)" } else { "" }
            ));
        }
        let errors: u64 = r.transactions.values().map(|t| t.errors).sum();
        if errors > 0 {
            out.push(format!("{who}: {errors} transactions failed after retries"));
        }
        for c in r.checks.iter().filter(|c| !c.pass) {
            out.push(format!(
                "{who}: consistency condition {} ({}) fails: {}",
                c.condition, c.name, c.detail
            ));
        }
        if r.checks.is_empty() && r.complete {
            out.push(format!(
                "{who}: the consistency checks were not run (--no-check)"
            ));
        }
        for w in &r.warnings {
            // failed checks are listed above already
            if !w.starts_with("consistency condition") {
                out.push(format!("{who}: {w}"));
            }
        }
    }
    for c in ordered(runs.iter().map(|e| e.config())) {
        let levels = ordered(
            runs.iter()
                .filter(|e| e.config() == c)
                .map(|e| (e.target(), e.result.database.isolation.clone())),
        );
        if ordered(levels.iter().map(|l| l.1.clone())).len() > 1 {
            out.push(format!(
                "TPC-C {c}: the targets ran at different isolation levels, so their tpmC are not like for like: {}",
                levels
                    .iter()
                    .map(|(t, i)| format!("{t}: {i}"))
                    .collect::<Vec<_>>()
                    .join("; ")
            ));
        }
    }
    out
}

/// The TPC-C section, when there are TPC-C results.
pub(crate) fn section(runs: &[TpccEntry]) -> Option<Section> {
    if runs.is_empty() {
        return None;
    }
    let targets = ordered(runs.iter().map(|e| e.target()));
    let configs = ordered(runs.iter().map(|e| e.config()));
    // tpmC: groups are configurations, series are targets (the mean of runs)
    let mut tpmc = BarChart {
        title: "tpmC per configuration and target".into(),
        y_label: "tpmC (New-Order transactions per minute)".into(),
        groups: configs.clone(),
        series: Vec::new(),
        log: false,
    };
    for t in &targets {
        let values = configs
            .iter()
            .map(|c| {
                let x: Vec<f64> = runs
                    .iter()
                    .filter(|e| &e.target() == t && &e.config() == c)
                    .map(|e| e.result.tpmc)
                    .collect();
                (!x.is_empty()).then(|| x.iter().sum::<f64>() / x.len() as f64)
            })
            .collect::<Vec<_>>();
        tpmc.series.push(BarSeries {
            name: t.clone(),
            errors: vec![None; values.len()],
            values,
        });
    }
    let mut summary = Table {
        id: "tpcc".into(),
        title: "TPC-C runs".into(),
        columns: [
            "target",
            "warehouses",
            "terminals",
            "isolation",
            "timing",
            "seconds",
            "tpmC",
            "tpmTotal",
            "client CPU (cores)",
            "client CPU per txn (µs)",
            "checks",
            "file",
        ]
        .map(String::from)
        .to_vec(),
        rows: Vec::new(),
    };
    let mut txns = Table {
        id: "tpcc-transactions".into(),
        title: "TPC-C transactions (response time in ms)".into(),
        columns: [
            "target",
            "configuration",
            "transaction",
            "count",
            "share %",
            "rolled back",
            "retries",
            "errors",
            "mean",
            "p50",
            "p90",
            "p99",
            "max",
        ]
        .map(String::from)
        .to_vec(),
        rows: Vec::new(),
    };
    let mut p90 = BarChart {
        title: "p90 response time per transaction".into(),
        y_label: "p90 response time (ms, log scale)".into(),
        groups: TXNS.iter().map(|s| s.to_string()).collect(),
        series: Vec::new(),
        log: true,
    };
    let mut over_time = LineChart {
        title: "tpmC over time".into(),
        x_label: "time since measurement started (s)".into(),
        y_label: "tpmC".into(),
        ..Default::default()
    };
    for e in runs {
        let r = &e.result;
        let passed = r.checks.iter().filter(|c| c.pass).count();
        summary.rows.push(vec![
            e.target(),
            r.config.warehouses.to_string(),
            r.config.terminals.to_string(),
            r.database.isolation.clone(),
            if r.config.spec_timing {
                "keying and think times".into()
            } else {
                "none (back to back)".into()
            },
            format!("{:.1}", r.elapsed_s),
            format!("{:.0}", r.tpmc),
            format!("{:.0}", r.tpm_total),
            format!("{:.2}", r.client.cpu_cores_used),
            format!("{:.0}", r.client.cpu_ns_per_op / 1e3),
            if r.checks.is_empty() {
                "not run".into()
            } else {
                format!("{passed} of {} pass", r.checks.len())
            },
            e.file.clone(),
        ]);
        let mut values = Vec::new();
        for t in TXNS {
            let Some(x) = r.transactions.get(*t) else {
                values.push(None);
                continue;
            };
            let s = &x.response_time_ns;
            values.push((s.count > 0).then_some(s.p90 as f64 / 1e6));
            txns.rows.push(vec![
                e.target(),
                e.config(),
                t.to_string(),
                x.count.to_string(),
                format!("{:.1}", x.share * 100.0),
                x.rolled_back.to_string(),
                x.retries.to_string(),
                x.errors.to_string(),
                ms(s.mean),
                ms(s.p50 as f64),
                ms(s.p90 as f64),
                ms(s.p99 as f64),
                ms(s.max as f64),
            ]);
        }
        p90.series.push(BarSeries {
            name: e.label(),
            errors: vec![None; values.len()],
            values,
        });
        over_time.lines.push(Line {
            name: e.label(),
            points: r
                .time_series
                .iter()
                .filter(|p| !p.warmup)
                .map(|p| (p.t_s, p.tpmc))
                .collect(),
            ..Default::default()
        });
    }
    let mut charts = vec![tpmc.render(), p90.render()];
    if over_time.lines.iter().any(|l| !l.points.is_empty()) {
        charts.push(over_time.render());
    }
    Some(Section {
        id: "tpcc",
        title: "TPC-C".into(),
        intro: "tpmC counts New-Order transactions per minute of measured time (the 1% that roll back by rule included); response times run from a transaction's first attempt to its end, retries included. Runs without keying and think times are not bounded by the specification's 12.86 tpmC per warehouse and are not comparable with audited results.".into(),
        charts,
        tables: vec![summary, txns],
    })
}

/// Each run's configuration, collapsible.
pub fn config(out: &mut String, e: &TpccEntry) {
    let r = &e.result;
    let _ = write!(
        out,
        "<details><summary>TPC-C · {} · {} · {}</summary><dl>",
        escape(&e.target()),
        escape(&e.config()),
        escape(&e.file)
    );
    let mut item = |k: &str, v: String| {
        let _ = write!(out, "<dt>{}</dt><dd>{}</dd>", escape(k), escape(&v));
    };
    item("command line", r.command_line.join(" "));
    item("tool", format!("{} {}", r.tool.name, r.tool.version));
    item(
        "engine settings",
        r.database
            .engine
            .settings
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(", "),
    );
    item("isolation", r.database.isolation.clone());
    if !r.database.statements.is_empty() {
        item("statements", r.database.statements.clone());
    }
    item(
        "run",
        format!(
            "{} of {} loaded warehouses, {} terminals, {:.0} s measured after {:.0} s warm-up, retry limit {}, seed {}, NURand C (load) {}/{}/{} (run) {}/{}/{}",
            r.config.warehouses,
            r.config.warehouses_loaded,
            r.config.terminals,
            r.config.duration_s,
            r.config.warmup_s,
            r.config.retry_limit,
            r.seed,
            r.config.load_constants.c_last,
            r.config.load_constants.c_id,
            r.config.load_constants.ol_i_id,
            r.config.run_constants.c_last,
            r.config.run_constants.c_id,
            r.config.run_constants.ol_i_id,
        ),
    );
    item(
        "checks",
        r.checks
            .iter()
            .map(|c| {
                format!(
                    "{} {}: {} ({})",
                    c.condition,
                    c.name,
                    if c.pass { "pass" } else { "FAIL" },
                    c.detail
                )
            })
            .collect::<Vec<_>>()
            .join("; "),
    );
    item("host", r.host.summary());
    item("time", format!("{} to {}", r.started_at, r.ended_at));
    out.push_str("</dl></details>\n");
}
