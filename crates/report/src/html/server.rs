//! What the server did, under the throughput charts on the same time axis:
//! CPU (the server's processes and the whole host), I/O, the top wait
//! events and the data's size, with a table of the figures per operation
//! and of each run's top wait events (docs/observe.md).
use super::*;
use crate::section::Section;
use yardstick_core::observe::Observation;

/// The characters of a run's name a per-run chart's title has room for.
const TITLE: usize = 56;

/// One line of series `name` of `o`, at the intervals the throughput chart
/// draws (`at`: warm-up and a final sliver left out, whose rates would draw
/// spikes that never happened), each value scaled by `scale`.
fn line(o: &Observation, at: &[f64], name: &str, label: String, scale: f64) -> Option<Line> {
    let s = o.series.get(name)?;
    let points: Vec<(f64, f64)> = o
        .t_s
        .iter()
        .zip(&s.values)
        .filter(|(t, _)| at.contains(t))
        .filter_map(|(t, v)| Some((*t, (*v)? * scale)))
        .collect();
    (!points.is_empty()).then_some(Line {
        name: label,
        points,
        ..Default::default()
    })
}

fn chart(title: String, y_label: &str, lines: Vec<Line>) -> Option<String> {
    drawn(title, y_label, lines, false)
}

fn drawn(title: String, y_label: &str, lines: Vec<Line>, stacked: bool) -> Option<String> {
    (!lines.is_empty()).then(|| {
        LineChart {
            title,
            x_label: "time since measurement started (s)".into(),
            y_label: y_label.into(),
            lines,
            stacked,
            ..Default::default()
        }
        .render()
    })
}

/// The levels an LSM engine reports files for (RocksDB and LevelDB: 7).
const LEVELS: usize = 7;

/// An observed run of either kind (a YCSB phase, a TPC-C run), as this
/// section draws it.
struct Observed<'a> {
    group: String,
    target: String,
    file: &'a str,
    workload: String,
    repetition: u32,
    /// The intervals its throughput chart draws.
    at: Vec<f64>,
    o: &'a Observation,
}

impl Observed<'_> {
    /// Its name in legends: its target, or its file where several runs of
    /// one group share the target.
    fn name(&self, shared: bool) -> String {
        if shared {
            self.file.to_string()
        } else if self.repetition > 1 {
            format!("{} #{}", self.target, self.repetition)
        } else {
            self.target.clone()
        }
    }
}

fn observed(inputs: &Inputs, sizes: bool) -> Vec<Observed<'_>> {
    let runs = inputs.entries.iter().filter_map(|e| {
        Some(Observed {
            group: e.group(sizes),
            target: e.target.clone(),
            file: &e.file,
            workload: e.workload.clone(),
            repetition: e.repetition,
            at: yardstick_core::run::rate_points(&e.result.time_series)
                .map(|p| p.t_s)
                .collect(),
            o: e.result.observation.as_ref()?,
        })
    });
    let tpcc = inputs.tpcc.iter().filter_map(|e| {
        Some(Observed {
            group: format!("tpcc {}", e.config()),
            target: e.target(),
            file: &e.file,
            workload: format!("tpcc {}", e.config()),
            repetition: 1,
            at: e
                .result
                .time_series
                .iter()
                .filter(|p| !p.warmup)
                .map(|p| p.t_s)
                .collect(),
            o: e.result.observation.as_ref()?,
        })
    });
    runs.chain(tpcc).collect()
}

pub(super) fn server(inputs: &Inputs, sizes: bool) -> Option<Section> {
    let observed = observed(inputs, sizes);
    if observed.is_empty() {
        return None;
    }
    let mut charts = Vec::new();
    for g in ordered(observed.iter().map(|r| r.group.clone())) {
        let runs: Vec<&Observed> = observed.iter().filter(|r| r.group == g).collect();
        let mut cpu = Vec::new();
        let mut io = Vec::new();
        let mut per_run = Vec::new();
        let mut backlog = Vec::new();
        let mut size = Vec::new();
        let targets = ordered(runs.iter().map(|r| (r.target.clone(), r.repetition)));
        let shared = targets.len() < runs.len();
        for r in &runs {
            let (n, o) = (r.name(shared), r.o);
            let line =
                |name: &str, label: String, scale: f64| self::line(o, &r.at, name, label, scale);
            cpu.extend(line("process.cpu", format!("{n} server"), 1.0));
            cpu.extend(line("host.cpu.busy", format!("{n} host"), 1.0));
            cpu.extend(line("host.cpu.iowait", format!("{n} host iowait"), 1.0));
            io.extend(line("process.read_bytes", format!("{n} server read"), 1e-6));
            io.extend(line(
                "process.write_bytes",
                format!("{n} server write"),
                1e-6,
            ));
            // no server process (an embedded engine): the disks' I/O
            if !o.series.contains_key("process.write_bytes") {
                io.extend(line(
                    "host.disk.read_bytes",
                    format!("{n} disks read"),
                    1e-6,
                ));
                io.extend(line(
                    "host.disk.write_bytes",
                    format!("{n} disks write"),
                    1e-6,
                ));
            }
            size.extend(line("data.bytes", n.clone(), 1e-6));
            backlog.extend(line(
                "db.compaction.pending_bytes",
                format!("{n} pending compaction"),
                1e-6,
            ));
            // stacked per run: the sessions waiting on each event add up,
            // as the files of each level add up to the engine's files
            let waits: Vec<Line> = o
                .top_waits(5)
                .into_iter()
                .filter_map(|(w, _)| line(&format!("db.wait.{w}"), w.to_string(), 1.0))
                .collect();
            per_run.extend(drawn(
                format!("Wait events · {}", crate::svg::shorten(&n, TITLE)),
                "sessions waiting",
                waits,
                true,
            ));
            let files: Vec<Line> = (0..LEVELS)
                .filter_map(|l| line(&format!("db.level.L{l}.files"), format!("L{l}"), 1.0))
                .filter(|l| l.points.iter().any(|p| p.1 > 0.0))
                .collect();
            per_run.extend(drawn(
                format!("Files per level · {}", crate::svg::shorten(&n, TITLE)),
                "files",
                files,
                true,
            ));
        }
        charts.extend(chart(format!("CPU · {g}"), "CPU (cores)", cpu));
        charts.extend(chart(format!("I/O · {g}"), "MB/s", io));
        charts.extend(chart(format!("Compaction backlog · {g}"), "MB", backlog));
        charts.extend(per_run);
        charts.extend(chart(format!("Data size · {g}"), "MB", size));
    }
    let mut per_op = Table {
        id: "server-per-op".into(),
        title: "The server per operation".into(),
        columns: [
            "target",
            "workload",
            "repetition",
            "server CPU (µs/op or txn)",
            "server read (B/op)",
            "server write (B/op)",
            "host CPU (µs/op)",
            "cache hit ratio (%)",
            "sources",
        ]
        .map(String::from)
        .to_vec(),
        rows: vec![],
    };
    let mut top = Table {
        id: "top-waits".into(),
        title: "Top wait events".into(),
        columns: [
            "target",
            "workload",
            "repetition",
            "wait event",
            "mean sessions waiting",
        ]
        .map(String::from)
        .to_vec(),
        rows: vec![],
    };
    let fig =
        |v: Option<f64>, digits: usize| v.map_or("-".to_string(), |v| format!("{v:.digits$}"));
    for r in &observed {
        let o = r.o;
        let p = o.per_operation.clone().unwrap_or_default();
        let hit = o
            .series
            .get("db.cache_hit_ratio")
            .and_then(|s| s.measured)
            .map(|v| v * 100.0);
        let sources: Vec<String> = o
            .sources
            .iter()
            .map(|s| {
                format!(
                    "{} {}",
                    s.name,
                    serde_json::to_string(&s.state)
                        .unwrap_or_default()
                        .trim_matches('"')
                )
            })
            .collect();
        per_op.rows.push(vec![
            r.target.clone(),
            r.workload.clone(),
            r.repetition.to_string(),
            fig(p.server_cpu_us, 1),
            fig(p.server_read_bytes, 0),
            fig(p.server_write_bytes, 0),
            fig(p.host_cpu_us, 1),
            fig(hit, 2),
            sources.join("; "),
        ]);
        for (w, n) in o.top_waits(5) {
            top.rows.push(vec![
                r.target.clone(),
                r.workload.clone(),
                r.repetition.to_string(),
                w.to_string(),
                format!("{n:.2}"),
            ]);
        }
    }
    let mut tables = vec![per_op];
    if !top.rows.is_empty() {
        tables.push(top);
    }
    Some(Section {
        id: "server",
        title: "What the server did".into(),
        intro: "Observed at every status interval beside the client's figures: the server's processes' CPU and I/O, the host's CPU, the database's top wait events (sessions waiting on each) and the data's size, on the throughput charts' time axis.".into(),
        charts,
        tables,
    })
}
