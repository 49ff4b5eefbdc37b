//! `yardstick report`: results, suites and matrices as one self-contained HTML
//! file with inline SVG charts (no script, no network), or the same tables as
//! Markdown or CSV. Every chart's numbers are also in a table.
use crate::svg::{escape, BarChart, BarSeries, Line, LineChart};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use yardstick_core::result::RunResult;
use yardstick_core::workload::Phase;
use yardstick_orchestrate::index::{MatrixIndex, SuiteIndex};
mod experiments;
mod runs;
mod server;
mod spectrum;

pub use crate::section::Table;
use crate::section::{ordered, Section};
use experiments::{matrix, scaling, slo};
use runs::{latency, over_time, throughput, warnings};

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
    pub suites: Vec<(String, SuiteIndex)>,
    /// Storage-engine matrices (`yardstick matrix`).
    pub matrices: Vec<(String, MatrixIndex)>,
    /// TPC-C runs (`yardstick tpcc run`).
    pub tpcc: Vec<crate::tpcc::TpccEntry>,
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

/// For each of several runs of one target, the tags that tell it from the
/// others (`step=compacted`), or None where all carry the same tags.
fn tag_labels(tags: &[&BTreeMap<String, String>]) -> Vec<Option<String>> {
    let keys = ordered(tags.iter().flat_map(|t| t.keys().cloned()));
    let varying: Vec<String> = keys
        .into_iter()
        .filter(|k| tags.iter().any(|t| t.get(k) != tags[0].get(k)))
        .collect();
    tags.iter()
        .map(|t| {
            (!varying.is_empty()).then(|| {
                varying
                    .iter()
                    .map(|k| format!("{k}={}", t.get(k).map_or("-", String::as_str)))
                    .collect::<Vec<_>>()
                    .join(", ")
            })
        })
        .collect()
}

impl Inputs {
    /// Names runs of one target apart by the tags that tell them apart
    /// (`--tag step=compacted`): without it, two runs of one URL before and
    /// after a change would be averaged as repetitions of one experiment.
    pub fn label_by_tags(&mut self) {
        let targets = ordered(self.entries.iter().map(|e| e.target.clone()));
        for target in targets {
            let same: Vec<usize> = (0..self.entries.len())
                .filter(|&i| self.entries[i].target == target)
                .collect();
            let tags: Vec<&BTreeMap<String, String>> =
                same.iter().map(|&i| &self.entries[i].result.tags).collect();
            let labels = tag_labels(&tags);
            for (i, label) in same.into_iter().zip(labels) {
                if let Some(l) = label {
                    let e = &mut self.entries[i];
                    e.target = format!("{} [{l}]", e.target);
                }
            }
        }
        let targets = ordered(self.tpcc.iter().map(|e| e.target()));
        for target in targets {
            let same: Vec<usize> = (0..self.tpcc.len())
                .filter(|&i| self.tpcc[i].target() == target)
                .collect();
            let tags: Vec<&BTreeMap<String, String>> =
                same.iter().map(|&i| &self.tpcc[i].result.tags).collect();
            let labels = tag_labels(&tags);
            for (i, label) in same.into_iter().zip(labels) {
                self.tpcc[i].label = label;
            }
        }
    }
}

fn sections(inputs: &Inputs) -> Vec<Section> {
    let sizes = ordered(inputs.entries.iter().map(|e| e.records)).len() > 1;
    [
        throughput(inputs, sizes),
        latency(inputs, sizes),
        slo(inputs),
        scaling(inputs),
        crate::nodes::section(inputs),
        over_time(inputs, sizes),
        matrix(inputs),
        crate::tpcc::section(&inputs.tpcc),
        // under the throughput over time of both kinds (tpmC over time is TPC-C's)
        server::server(inputs, sizes),
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
    for s in &r.server_memory {
        item(
            "server memory limit",
            format!(
                "{} (pid {}, {}): {} bytes ({}), peak {:?}, OOM killed {}, running after {}",
                s.program,
                s.pid,
                s.server,
                s.limit.bytes,
                s.limit.mechanism,
                s.limit.peak_bytes,
                s.limit.oom_killed,
                s.alive_after
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

#[cfg(test)]
mod tests {
    use super::*;

    fn tagged(url: &str, tags: &[(&str, &str)]) -> Entry {
        let mut r: RunResult =
            serde_json::from_str(include_str!("../testdata/observed-run.json")).unwrap();
        r.binding.url = url.into();
        r.tags = tags
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Entry::from_result("r.json".into(), r)
    }

    #[test]
    fn runs_of_one_target_are_named_apart_by_the_tags_that_differ() {
        let mut inputs = Inputs {
            entries: vec![
                tagged("rocksdb:///d", &[("step", "compacting"), ("host", "a")]),
                tagged("rocksdb:///d", &[("step", "compacted"), ("host", "a")]),
                tagged("rocksdb:///d", &[("host", "a")]),
                tagged("null://", &[("step", "x")]),
            ],
            ..Inputs::default()
        };
        inputs.label_by_tags();
        let targets: Vec<&str> = inputs.entries.iter().map(|e| e.target.as_str()).collect();
        assert_eq!(
            targets,
            [
                "rocksdb:///d [step=compacting]",
                "rocksdb:///d [step=compacted]",
                "rocksdb:///d [step=-]",
                // alone under its target: nothing to tell apart
                "null://",
            ]
        );
    }

    #[test]
    fn tpcc_runs_are_named_apart_and_their_server_is_drawn() {
        let tpcc = |step: &str| {
            let mut r: yardstick_core::tpcc::result::TpccResult =
                serde_json::from_str(include_str!("../testdata/tpcc-run.json")).unwrap();
            r.tags = BTreeMap::from([("step".to_string(), step.to_string())]);
            crate::tpcc::TpccEntry {
                file: format!("{step}.json"),
                result: r,
                label: None,
            }
        };
        let mut inputs = Inputs {
            tpcc: vec![tpcc("defaults"), tpcc("async-commit")],
            ..Inputs::default()
        };
        inputs.label_by_tags();
        assert!(inputs.tpcc[0].target().ends_with(" [step=defaults]"));
        assert!(inputs.tpcc[1].target().ends_with(" [step=async-commit]"));
        let s = server::server(&inputs, false).expect("observed TPC-C runs");
        assert!(s
            .charts
            .iter()
            .any(|c| c.contains("CPU · tpcc 1 W · 2 terminals")));
        let per = &s.tables[0];
        assert_eq!(per.rows.len(), 2);
        assert!(
            per.rows[0][0].ends_with("[step=defaults]"),
            "{:?}",
            per.rows
        );
        assert_ne!(per.rows[0][6], "-", "host CPU per transaction");
    }
}
