//! `yardstick suite`: a sequence of loads and runs as one command, per target,
//! data size and repetition, with the same seed and properties everywhere.
//! Each phase runs as a child `yardstick load|run` with its own result file;
//! `index.json` in the output directory ties them together, records the
//! dirty/clean state of the data before every phase, and is rewritten after
//! every phase so an interrupted suite resumes from the last finished phase.
use crate::slo::{Point, Search, Slo};
use crate::{read_result, CliError, EXIT_BAD_INPUT, EXIT_FAILED, EXIT_INTERRUPTED};
use clap::{Args, ValueEnum};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::Ordering;
use std::time::Duration;
use yardstick_core::result::RunResult;
use yardstick_core::stats::ci::mean_ci;

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SuiteName {
    /// YCSB's recommended sequence: load, A, B, C, F, D, reload, E.
    Ycsb,
    /// The YDB report: the YCSB sequence with INSERT/UPDATE semantics, Zipfian
    /// requests, and the maximum throughput under p99 < 50 ms per workload.
    Ydb,
    /// The YugabyteDB report: the YCSB sequence at two data sizes (default
    /// 1M and 10M records), reporting the throughput drop and latency rise.
    Scaling,
    /// The MongoDB/Cassandra/HBase report: 10 fields of 10 bytes, single and
    /// batch (3,000 records) loads, then its five custom mixes.
    Mixes,
}

#[derive(Args, Debug, Clone)]
pub struct SuiteArgs {
    /// The sequence to run.
    #[arg(value_enum)]
    pub suite: SuiteName,
    /// A target database URL; repeatable (each gets the same sequence, seed and properties).
    #[arg(long = "db", value_name = "URL", required = true)]
    pub dbs: Vec<String>,
    /// Data sizes, comma-separated (1M, 100k, 2.5M or plain numbers): the
    /// whole sequence at each size, for data-size scaling.
    #[arg(long, value_delimiter = ',', value_parser = parse_count)]
    pub records: Vec<u64>,
    /// Repeat the whole sequence N times; figures get a mean and a 95% confidence interval.
    #[arg(long, default_value_t = 1)]
    pub repeat: u32,
    /// For every run phase, search the maximum throughput whose latency
    /// percentile stays under this bound, e.g. "p99<50ms" or "read:p99.9<10ms".
    #[arg(long, value_name = "BOUND")]
    pub slo: Option<String>,
    /// Bisection steps of an SLO search after the coarse steps.
    #[arg(long, default_value_t = 4)]
    pub slo_bisections: u32,
    /// Measured time of each run phase (and of each SLO step).
    #[arg(long, value_parser = crate::parse_duration_arg, default_value = "30s")]
    pub duration: Duration,
    /// Warm-up before each run phase's measurement.
    #[arg(long, value_parser = crate::parse_duration_arg, default_value = "5s")]
    pub warmup: Duration,
    /// Worker threads of the run phases.
    #[arg(long, default_value_t = 4)]
    pub threads: usize,
    /// Worker threads of the loads.
    #[arg(long)]
    pub load_threads: Option<usize>,
    /// Operations in flight per thread.
    #[arg(long, default_value_t = 1)]
    pub concurrency: usize,
    /// Seed of every phase of every target and repetition.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Property override name=value for every phase; repeatable.
    #[arg(short = 'p', value_name = "NAME=VALUE")]
    pub properties: Vec<String>,
    /// Only these phases of the sequence, comma-separated by name (e.g. load,a,c).
    #[arg(long, value_delimiter = ',')]
    pub only: Vec<String>,
    /// Directory of the phases' results and index.json; rerunning the same
    /// command with it resumes an interrupted suite.
    #[arg(long, value_name = "DIR", default_value = "results/suite")]
    pub out_dir: PathBuf,
}

/// `1M`, `100k`, `2.5M`, `1G` (10^9) or a plain count.
pub fn parse_count(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, mult) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let m = match c.to_ascii_lowercase() {
                'k' => 1e3,
                'm' => 1e6,
                'g' | 'b' => 1e9,
                _ => {
                    return Err(format!(
                        "'{s}' is not a record count: use for example 100k, 1M or 250000"
                    ))
                }
            };
            (&t[..i], m)
        }
        _ => (t, 1.0),
    };
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("'{s}' is not a record count: use for example 100k, 1M or 250000"))?;
    let n = (v * mult).round();
    if !(1.0..1e15).contains(&n) {
        return Err(format!("'{s}' is not a record count: give at least 1"));
    }
    Ok(n as u64)
}

/// One phase of a sequence.
#[derive(Debug, Clone, PartialEq)]
pub struct StepDef {
    pub name: &'static str,
    pub load: bool,
    /// The built-in workload file it starts from.
    pub workload: &'static str,
    pub props: &'static [(&'static str, &'static str)],
    /// Records per batch (loads).
    pub batch: Option<u64>,
    /// Whether it writes (so the data is dirty afterwards).
    pub writes: bool,
    pub description: &'static str,
}

const fn load(name: &'static str, workload: &'static str, description: &'static str) -> StepDef {
    StepDef {
        name,
        load: true,
        workload,
        props: &[],
        batch: None,
        writes: true,
        description,
    }
}

const fn run(
    name: &'static str,
    workload: &'static str,
    writes: bool,
    description: &'static str,
) -> StepDef {
    StepDef {
        name,
        load: false,
        workload,
        props: &[],
        batch: None,
        writes,
        description,
    }
}

/// YCSB's recommended order: D grows the data set, so E gets a fresh load.
pub const YCSB: &[StepDef] = &[
    load("load", "workloada", "load recordcount records"),
    run("a", "workloada", true, "A: 50% reads, 50% updates"),
    run("b", "workloadb", true, "B: 95% reads, 5% updates"),
    run("c", "workloadc", false, "C: 100% reads"),
    run(
        "f",
        "workloadf",
        true,
        "F: 50% reads, 50% read-modify-writes",
    ),
    run(
        "d",
        "workloadd",
        true,
        "D: 95% reads of the latest, 5% inserts",
    ),
    load("reload", "workloade", "empty the table and load it again"),
    run("e", "workloade", true, "E: 95% short scans, 5% inserts"),
];

const MIX_FIELDS: &[(&str, &str)] = &[("fieldcount", "10"), ("fieldlength", "10")];

/// The MongoDB/SequoiaDB/Cassandra/HBase report's scenarios.
pub const MIXES: &[StepDef] = &[
    StepDef {
        props: MIX_FIELDS,
        ..load("load", "workloadc", "single-record load")
    },
    StepDef {
        props: MIX_FIELDS,
        batch: Some(3000),
        ..load(
            "batch-load",
            "workloadc",
            "batch load, 3,000 records per batch",
        )
    },
    StepDef {
        props: &[
            ("fieldcount", "10"),
            ("fieldlength", "10"),
            ("readproportion", "1"),
            ("updateproportion", "0"),
        ],
        ..run("read100", "workloadc", false, "100% reads")
    },
    StepDef {
        props: &[
            ("fieldcount", "10"),
            ("fieldlength", "10"),
            ("readproportion", "0.5"),
            ("updateproportion", "0"),
            ("insertproportion", "0.5"),
        ],
        ..run(
            "read50-insert50",
            "workloada",
            true,
            "50% reads, 50% inserts",
        )
    },
    StepDef {
        props: &[
            ("fieldcount", "10"),
            ("fieldlength", "10"),
            ("readproportion", "0.05"),
            ("updateproportion", "0.95"),
        ],
        ..run("update95-read5", "workloada", true, "95% updates, 5% reads")
    },
    StepDef {
        props: &[
            ("fieldcount", "10"),
            ("fieldlength", "10"),
            ("readproportion", "0.95"),
            ("updateproportion", "0.05"),
        ],
        ..run("read95-update5", "workloadb", true, "95% reads, 5% updates")
    },
    StepDef {
        props: &[
            ("fieldcount", "10"),
            ("fieldlength", "10"),
            ("readproportion", "0.95"),
            ("updateproportion", "0"),
            ("insertproportion", "0.05"),
            ("requestdistribution", "latest"),
        ],
        ..run(
            "read95-insert5",
            "workloadd",
            true,
            "95% reads of the latest records, 5% inserts",
        )
    },
];

/// The preset's sequence, the properties it adds to every phase, and its defaults.
pub struct Preset {
    pub steps: &'static [StepDef],
    pub props: &'static [(&'static str, &'static str)],
    pub records: &'static [u64],
    pub slo: Option<&'static str>,
}

pub fn preset(name: SuiteName) -> Preset {
    match name {
        SuiteName::Ycsb => Preset {
            steps: YCSB,
            props: &[],
            records: &[100_000],
            slo: None,
        },
        SuiteName::Ydb => Preset {
            steps: YCSB,
            props: &[
                ("requestdistribution", "zipfian"),
                ("insert.semantics", "insert"),
                ("update.semantics", "update"),
            ],
            records: &[100_000],
            slo: Some("p99<50ms"),
        },
        SuiteName::Scaling => Preset {
            steps: YCSB,
            props: &[],
            records: &[1_000_000, 10_000_000],
            slo: None,
        },
        SuiteName::Mixes => Preset {
            steps: MIXES,
            props: &[],
            records: &[100_000],
            slo: None,
        },
    }
}

/// A phase of the plan: one step for one target, data size and repetition.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct StepRecord {
    pub id: String,
    /// Index into `targets`.
    pub target: usize,
    pub records: u64,
    pub repetition: u32,
    pub step: String,
    pub description: String,
    /// "load" or "run".
    pub phase: String,
    pub workload: String,
    /// pending, ok, failed or interrupted.
    pub status: String,
    pub exit_code: Option<i32>,
    /// The state of the data when the phase started: "clean" right after a
    /// load, otherwise "dirty" with the phases that wrote since.
    pub data_before: Option<DataState>,
    /// The phase's result file, relative to the index.
    pub result: Option<String>,
    pub ops_per_sec: Option<f64>,
    /// p50, p99 and mean of each operation, microseconds.
    pub latency_us: BTreeMap<String, BTreeMap<String, f64>>,
    pub slo: Option<SloOutcome>,
    /// The first record number no insert of this phase took: the next run
    /// phase of the chain uses it as `recordcount`, so it reads the records
    /// earlier phases inserted and inserts new keys.
    #[serde(default)]
    pub next_insert_keynum: Option<u64>,
    pub started_at: Option<String>,
    pub ended_at: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DataState {
    pub state: String,
    pub written_since_load: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SloOutcome {
    pub bound: Slo,
    /// The closed-loop probe: the most the target did, and its percentile.
    pub max_ops_per_sec: f64,
    pub max_value_ns: Option<u64>,
    pub probe_result: Option<String>,
    /// "met": the knee is the answer; "unmet": no rate met the bound.
    pub status: String,
    pub knee_ops_per_sec: Option<f64>,
    pub knee_value_ns: Option<u64>,
    pub message: String,
    /// Every open-loop step, by target rate.
    pub curve: Vec<Point>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Index {
    pub kind: String,
    pub suite: SuiteName,
    pub tool_version: String,
    /// A hash of everything that defines the suite (URLs included): a rerun
    /// with the same hash resumes, another is refused.
    pub fingerprint: String,
    /// The targets, passwords redacted.
    pub targets: Vec<String>,
    pub records: Vec<u64>,
    pub repeat: u32,
    pub seed: u64,
    pub duration_s: f64,
    pub warmup_s: f64,
    pub threads: usize,
    pub load_threads: usize,
    pub concurrency: usize,
    /// Properties given to every phase (preset and -p).
    pub properties: Vec<String>,
    pub slo: Option<String>,
    pub steps: Vec<StepRecord>,
    /// Per target, data size and step: mean and 95% CI over repetitions.
    pub summary: Vec<SummaryRow>,
    /// With several data sizes: each size against the smallest.
    pub scaling: Vec<ScalingRow>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Stat {
    pub n: usize,
    pub mean: f64,
    pub stdev: f64,
    /// Half-width of the 95% confidence interval; absent with one repetition.
    pub ci95: Option<f64>,
}

fn stat(x: &[f64]) -> Option<Stat> {
    mean_ci(x, 0.95).map(|c| Stat {
        n: c.n,
        mean: c.mean,
        stdev: c.stdev,
        ci95: c.half_width,
    })
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SummaryRow {
    pub target: usize,
    pub records: u64,
    pub step: String,
    pub ops_per_sec: Option<Stat>,
    /// Per operation: p99 in microseconds.
    pub p99_us: BTreeMap<String, Stat>,
    pub mean_us: BTreeMap<String, Stat>,
    /// SLO searches: the knee throughput.
    pub slo_ops_per_sec: Option<Stat>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ScalingRow {
    pub target: usize,
    pub step: String,
    pub base_records: u64,
    pub records: u64,
    pub ops_per_sec_change_pct: Option<f64>,
    /// Per operation: change of p99 and of mean latency, percent.
    pub p99_change_pct: BTreeMap<String, f64>,
    pub mean_change_pct: BTreeMap<String, f64>,
}

fn bad(msg: impl std::fmt::Display) -> CliError {
    CliError {
        code: EXIT_BAD_INPUT,
        message: msg.to_string(),
    }
}

/// FNV-1a over the canonical description of the suite.
fn fingerprint(parts: &[String]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for b in p.bytes().chain([0u8]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("{h:016x}")
}

/// The records the chain of step `i` holds when it starts: the load's count,
/// grown by the inserts of the run phases since.
fn grown_records(plan: &[StepRecord], defs: &[StepDef], i: usize) -> u64 {
    let s = &plan[i];
    let mut n = s.records;
    for p in plan[..=i]
        .iter()
        .filter(|p| p.target == s.target && p.records == s.records && p.repetition == s.repetition)
    {
        if defs.iter().any(|d| d.name == p.step && d.load) && p.status == "ok" {
            n = s.records;
        } else if let Some(k) = p.next_insert_keynum {
            n = n.max(k);
        }
    }
    n
}

/// The state of the data before step `i` of `plan` (steps of one chain:
/// same target, size and repetition), from what ran before it.
fn data_before(plan: &[StepRecord], defs: &[StepDef], i: usize) -> DataState {
    let mut written = Vec::new();
    let s = &plan[i];
    for p in plan[..i]
        .iter()
        .filter(|p| p.target == s.target && p.records == s.records && p.repetition == s.repetition)
    {
        let def = defs.iter().find(|d| d.name == p.step);
        if def.is_some_and(|d| d.load) && p.status == "ok" {
            written.clear();
        } else if def.is_some_and(|d| d.writes) && p.status != "pending" {
            written.push(if p.status == "ok" {
                p.step.clone()
            } else {
                format!("{} ({})", p.step, p.status)
            });
        }
    }
    // an earlier attempt of this very phase (interrupted or failed) wrote too
    if defs.iter().any(|d| d.name == s.step && d.writes && !d.load)
        && !matches!(s.status.as_str(), "pending" | "ok" | "skipped")
    {
        written.push(format!("{} ({})", s.step, s.status));
    }
    DataState {
        state: if written.is_empty() { "clean" } else { "dirty" }.into(),
        written_since_load: written,
    }
}

pub fn execute(a: &SuiteArgs) -> Result<i32, CliError> {
    let preset = preset(a.suite);
    let records: Vec<u64> = if a.records.is_empty() {
        preset.records.to_vec()
    } else {
        a.records.clone()
    };
    let slo = a
        .slo
        .as_deref()
        .or(preset.slo)
        .map(Slo::parse)
        .transpose()
        .map_err(bad)?;
    if a.repeat == 0 {
        return Err(bad("--repeat must be at least 1"));
    }
    if a.threads == 0 || a.concurrency == 0 || a.load_threads == Some(0) {
        return Err(bad(
            "--threads, --load-threads and --concurrency must be at least 1",
        ));
    }
    if a.duration.is_zero() {
        return Err(bad(
            "--duration must be longer than zero: every run phase is time-bounded",
        ));
    }
    for o in &a.properties {
        if !o.contains('=') {
            return Err(bad(format!("-p {o} is not a property: write name=value")));
        }
        let name = o.split('=').next().unwrap_or("").trim();
        if [
            "recordcount",
            "operationcount",
            "maxexecutiontime",
            "threadcount",
            "target",
        ]
        .contains(&name)
        {
            return Err(bad(format!(
                "-p {name} is set by the suite: use --records, --duration, --threads or --slo instead"
            )));
        }
    }
    let defs: Vec<&StepDef> = if a.only.is_empty() {
        preset.steps.iter().collect()
    } else {
        let names: Vec<&str> = preset.steps.iter().map(|s| s.name).collect();
        for o in &a.only {
            if !names.contains(&o.trim()) {
                return Err(bad(format!(
                    "--only {o} is not a phase of this suite: use {}",
                    names.join(", ")
                )));
            }
        }
        preset
            .steps
            .iter()
            .filter(|s| a.only.iter().any(|o| o.trim() == s.name))
            .collect()
    };
    let mut labels: Vec<String> = a.dbs.iter().map(|d| crate::matrix::label(d)).collect();
    labels.sort();
    labels.dedup();
    if labels.len() != a.dbs.len() {
        return Err(bad("two --db URLs look alike (scheme and last path component): give each target its own database name"));
    }
    let load_threads = a.load_threads.unwrap_or(a.threads);
    let mut props: Vec<String> = preset
        .props
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    props.extend(a.properties.iter().cloned());
    let mut parts = vec![
        format!("{:?}", a.suite),
        format!("{records:?}"),
        a.repeat.to_string(),
        format!("{:?}", slo.as_ref().map(|s| &s.text)),
        a.slo_bisections.to_string(),
        a.duration.as_millis().to_string(),
        a.warmup.as_millis().to_string(),
        a.threads.to_string(),
        load_threads.to_string(),
        a.concurrency.to_string(),
        a.seed.to_string(),
        format!("{:?}", defs.iter().map(|d| d.name).collect::<Vec<_>>()),
    ];
    parts.extend(a.dbs.iter().cloned());
    parts.extend(props.iter().cloned());
    let fp = fingerprint(&parts);

    std::fs::create_dir_all(&a.out_dir).map_err(|e| {
        bad(format!(
            "cannot create {}: {e}; choose another --out-dir",
            a.out_dir.display()
        ))
    })?;
    let index_path = a.out_dir.join("index.json");
    let mut steps = Vec::new();
    for (t, db) in a.dbs.iter().enumerate() {
        for &r in &records {
            for rep in 1..=a.repeat {
                for (k, d) in defs.iter().enumerate() {
                    let id = format!("{}-r{r}-rep{rep}-{:02}-{}", labels_of(db), k + 1, d.name);
                    steps.push(StepRecord {
                        id,
                        target: t,
                        records: r,
                        repetition: rep,
                        step: d.name.into(),
                        description: d.description.into(),
                        phase: if d.load { "load" } else { "run" }.into(),
                        workload: d.workload.into(),
                        status: "pending".into(),
                        exit_code: None,
                        data_before: None,
                        result: None,
                        ops_per_sec: None,
                        latency_us: BTreeMap::new(),
                        slo: None,
                        next_insert_keynum: None,
                        started_at: None,
                        ended_at: None,
                    });
                }
            }
        }
    }
    let mut index = Index {
        kind: "yardstick suite".into(),
        suite: a.suite,
        tool_version: env!("CARGO_PKG_VERSION").into(),
        fingerprint: fp.clone(),
        targets: a
            .dbs
            .iter()
            .map(|d| yardstick_core::result::redact_url(d))
            .collect(),
        records: records.clone(),
        repeat: a.repeat,
        seed: a.seed,
        duration_s: a.duration.as_secs_f64(),
        warmup_s: a.warmup.as_secs_f64(),
        threads: a.threads,
        load_threads,
        concurrency: a.concurrency,
        properties: props.clone(),
        slo: slo.as_ref().map(|s| s.text.clone()),
        steps,
        summary: vec![],
        scaling: vec![],
    };
    if index_path.exists() {
        let old: Index = std::fs::read_to_string(&index_path)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .ok_or_else(|| {
                bad(format!(
                    "{} exists but is not a suite index: choose another --out-dir",
                    index_path.display()
                ))
            })?;
        if old.fingerprint != fp {
            return Err(bad(format!(
                "{} holds another suite (different targets, sizes, properties or options): choose another --out-dir, or delete it to start over",
                a.out_dir.display()
            )));
        }
        let done = old.steps.iter().filter(|s| s.status == "ok").count();
        eprintln!(
            "yardstick suite: resuming in {}: {done} of {} phases finished",
            a.out_dir.display(),
            old.steps.len()
        );
        index.steps = old.steps;
    }
    let all_defs: Vec<StepDef> = preset.steps.to_vec();
    let exe = std::env::current_exe()
        .map_err(|e| CliError::failed(format!("cannot find the yardstick executable: {e}")))?;
    let control = crate::control();
    let total = index.steps.len();
    let mut failed = false;
    let mut code = 0;
    for i in 0..total {
        if index.steps[i].status == "ok" {
            continue;
        }
        if control.stop.load(Ordering::SeqCst) {
            code = EXIT_INTERRUPTED;
            break;
        }
        let def = all_defs
            .iter()
            .find(|d| d.name == index.steps[i].step)
            .cloned()
            .ok_or_else(|| bad("the index names a phase this suite does not have"))?;
        let state = data_before(&index.steps, &all_defs, i);
        let st = &index.steps[i];
        let db = &a.dbs[st.target];
        eprintln!(
            "yardstick suite: [{}/{total}] {} · {} records · repetition {} · {} ({}, data {})",
            i + 1,
            yardstick_core::result::redact_url(db),
            st.records,
            st.repetition,
            st.step,
            def.description,
            state.state
        );
        let ctx = StepCtx {
            a,
            exe: &exe,
            def: &def,
            db,
            records: st.records,
            records_now: std::cell::Cell::new(grown_records(&index.steps, &all_defs, i)),
            props: &props,
            load_threads,
            dir: &a.out_dir,
            id: st.id.clone(),
        };
        index.steps[i].data_before = Some(state);
        index.steps[i].started_at = Some(now());
        index.steps[i].status = "running".into();
        write_index(&index_path, &index)?;
        let outcome = match (&slo, def.load) {
            (Some(slo), false) => ctx.slo_search(slo, &control),
            _ => ctx.once(None),
        };
        let grown = ctx.records_now.get();
        let s = &mut index.steps[i];
        s.ended_at = Some(now());
        if !def.load && grown > s.records {
            s.next_insert_keynum = Some(grown);
        }
        match outcome {
            Ok(o) => {
                s.exit_code = Some(o.code);
                s.status = match o.code {
                    0 => "ok",
                    EXIT_INTERRUPTED => "interrupted",
                    _ => "failed",
                }
                .into();
                s.result = o.file;
                if let Some(r) = &o.result {
                    s.ops_per_sec = Some(r.records_per_sec());
                    s.latency_us = latency_us(r);
                }
                s.slo = o.slo;
            }
            Err(e) => {
                s.status = "failed".into();
                eprintln!("yardstick suite: {}", e.message);
            }
        }
        let status = s.status.clone();
        summarize(&mut index);
        write_index(&index_path, &index)?;
        match status.as_str() {
            "interrupted" => {
                code = EXIT_INTERRUPTED;
                break;
            }
            "failed" if def.load => {
                // the phases that need this load cannot run; skip to the next chain
                failed = true;
                let (t, r, rep) = (
                    index.steps[i].target,
                    index.steps[i].records,
                    index.steps[i].repetition,
                );
                eprintln!("yardstick suite: the load failed; skipping the phases that need it");
                for s in index.steps.iter_mut().skip(i + 1) {
                    if s.target == t
                        && s.records == r
                        && s.repetition == rep
                        && s.status == "pending"
                    {
                        s.status = "skipped".into();
                    }
                }
                write_index(&index_path, &index)?;
            }
            "failed" => failed = true,
            _ => {}
        }
    }
    print!("{}", table(&index));
    println!("index: {}", index_path.display());
    if code == EXIT_INTERRUPTED {
        eprintln!(
            "yardstick suite: interrupted; run the same command again to resume from the last finished phase"
        );
        return Ok(code);
    }
    // skipped phases run again on the next invocation
    for s in index.steps.iter_mut().filter(|s| s.status == "skipped") {
        s.status = "pending".into();
    }
    write_index(&index_path, &index)?;
    Ok(if failed { EXIT_FAILED } else { 0 })
}

fn labels_of(db: &str) -> String {
    crate::matrix::label(db)
}

fn now() -> String {
    yardstick_core::result::time::rfc3339(std::time::SystemTime::now())
}

fn write_index(path: &Path, index: &Index) -> Result<(), CliError> {
    let text = serde_json::to_vec_pretty(index)
        .map_err(|e| CliError::failed(format!("cannot encode the index: {e}")))?;
    yardstick_core::result::write_atomic(path, &text)
        .map_err(|e| CliError::failed(format!("cannot write {}: {e}", path.display())))
}

/// p50, p99 and mean per operation in microseconds.
fn latency_us(r: &RunResult) -> BTreeMap<String, BTreeMap<String, f64>> {
    r.operations
        .iter()
        .filter(|(_, o)| o.response_time_ns.count > 0)
        .map(|(name, o)| {
            let s = &o.response_time_ns;
            let m: BTreeMap<String, f64> = [
                ("p50", s.p50 as f64 / 1e3),
                ("p99", s.p99 as f64 / 1e3),
                ("mean", s.mean / 1e3),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
            (name.clone(), m)
        })
        .collect()
}

struct StepCtx<'a> {
    a: &'a SuiteArgs,
    exe: &'a Path,
    def: &'a StepDef,
    db: &'a str,
    records: u64,
    /// Run phases: the records the chain holds now (loaded plus inserted).
    records_now: std::cell::Cell<u64>,
    props: &'a [String],
    load_threads: usize,
    dir: &'a Path,
    id: String,
}

struct Outcome {
    code: i32,
    file: Option<String>,
    result: Option<RunResult>,
    slo: Option<SloOutcome>,
}

impl StepCtx<'_> {
    /// Runs the phase once (open loop at `target` when given).
    fn once(&self, target: Option<(f64, usize)>) -> Result<Outcome, CliError> {
        let name = match target {
            Some((_, k)) => format!("{}-slo{k:02}.json", self.id),
            None => format!("{}.json", self.id),
        };
        let file = self.dir.join(&name);
        let _ = std::fs::remove_file(&file);
        let d = self.def;
        let mut args: Vec<String> = vec![
            if d.load { "load" } else { "run" }.into(),
            "--db".into(),
            self.db.to_string(),
            "-P".into(),
            d.workload.into(),
        ];
        let records = if d.load {
            self.records
        } else {
            self.records_now.get()
        };
        let mut props: Vec<String> = vec![format!("recordcount={records}")];
        props.extend(self.props.iter().cloned());
        props.extend(d.props.iter().map(|(k, v)| format!("{k}={v}")));
        for p in props {
            args.extend(["-p".into(), p]);
        }
        args.extend(["--seed".into(), self.a.seed.to_string(), "-q".into()]);
        args.extend(["--concurrency".into(), self.a.concurrency.to_string()]);
        if d.load {
            args.extend([
                "--threads".into(),
                self.load_threads.to_string(),
                "--clear".into(),
            ]);
            if let Some(b) = d.batch {
                args.extend(["--batch".into(), b.to_string()]);
            }
        } else {
            args.extend([
                "--threads".into(),
                self.a.threads.to_string(),
                "--duration".into(),
                format!("{}ms", self.a.duration.as_millis()),
                "--warmup".into(),
                format!("{}ms", self.a.warmup.as_millis()),
            ]);
            if let Some((rate, _)) = target {
                args.extend(["--target".into(), format!("{rate:.3}")]);
            }
        }
        args.extend(["--out".into(), file.display().to_string()]);
        // runs: yardstick, this executable
        let status = Command::new(self.exe)
            .args(&args)
            .stdout(std::process::Stdio::null())
            .status()
            .map_err(|e| CliError::failed(format!("cannot start yardstick: {e}")))?;
        let code = status.code().unwrap_or(EXIT_FAILED);
        let result = if file.exists() {
            read_result(&file).ok()
        } else {
            None
        };
        if let Some(n) = result.as_ref().and_then(|r| r.runner.next_insert_keynum) {
            self.records_now.set(self.records_now.get().max(n));
        }
        Ok(Outcome {
            code,
            file: result.as_ref().map(|_| name),
            result,
            slo: None,
        })
    }

    /// The SLO search of one run phase.
    fn slo_search(
        &self,
        slo: &Slo,
        control: &yardstick_core::run::Control,
    ) -> Result<Outcome, CliError> {
        let probe = self.once(None)?;
        let Some(max) = probe.result.as_ref().filter(|_| probe.code == 0) else {
            return Ok(probe);
        };
        let max_rate = max.totals.ops_per_sec;
        let max_value = slo.value_ns(max);
        eprintln!(
            "yardstick suite:   closed loop: {max_rate:.0} ops/s, p{} {}",
            slo.percentile,
            max_value.map_or("-".into(), crate::slo::fmt_ns)
        );
        let mut search = Search::new(max_rate, self.a.slo_bisections);
        let mut code = 0;
        while let Some(rate) = search.next() {
            if control.stop.load(Ordering::SeqCst) {
                code = EXIT_INTERRUPTED;
                break;
            }
            let o = self.once(Some((rate, search.points.len() + 1)))?;
            let Some(r) = &o.result else {
                code = if o.code == 0 { EXIT_FAILED } else { o.code };
                break;
            };
            if o.code == EXIT_INTERRUPTED {
                code = EXIT_INTERRUPTED;
                break;
            }
            let mut p = slo.judge(r, rate);
            p.result = o.file;
            eprintln!(
                "yardstick suite:   target {rate:.0} ops/s: achieved {:.0}, p{} {} · {}",
                p.achieved,
                slo.percentile,
                p.value_ns.map_or("-".into(), crate::slo::fmt_ns),
                if p.pass {
                    "meets the bound".to_string()
                } else {
                    p.why.clone()
                }
            );
            search.points.push(p);
        }
        let knee = search.knee().cloned();
        let message = match (&knee, search.best_unmet()) {
            (Some(k), _) => format!(
                "{:.0} ops/s with p{} {} (bound {})",
                k.achieved,
                slo.percentile,
                k.value_ns.map_or("-".into(), crate::slo::fmt_ns),
                crate::slo::fmt_ns(slo.bound_ns)
            ),
            (None, Some(b)) => format!(
                "the bound {} is never met: the best step was {:.0} ops/s with p{} {}",
                slo.text,
                b.achieved,
                slo.percentile,
                b.value_ns.map_or("-".into(), crate::slo::fmt_ns)
            ),
            (None, None) => format!("the bound {} could not be measured", slo.text),
        };
        eprintln!("yardstick suite:   {message}");
        let mut curve = search.points.clone();
        curve.sort_by(|a, b| a.target.total_cmp(&b.target));
        let knee_result = knee
            .as_ref()
            .and_then(|k| k.result.as_ref())
            .and_then(|f| read_result(&self.dir.join(f)).ok());
        Ok(Outcome {
            code,
            file: knee
                .as_ref()
                .and_then(|k| k.result.clone())
                .or(probe.file.clone()),
            result: knee_result.or(probe.result.clone()),
            slo: Some(SloOutcome {
                bound: slo.clone(),
                max_ops_per_sec: max_rate,
                max_value_ns: max_value,
                probe_result: probe.file,
                status: if knee.is_some() { "met" } else { "unmet" }.into(),
                knee_ops_per_sec: knee.as_ref().map(|k| k.achieved),
                knee_value_ns: knee.as_ref().and_then(|k| k.value_ns),
                message,
                curve,
            }),
        })
    }
}

/// Recomputes the summary (mean and CI over repetitions) and the scaling rows.
pub fn summarize(index: &mut Index) {
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
    for s in index.steps.iter().filter(|s| s.status == "ok") {
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
pub fn table(index: &Index) -> String {
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
            .map_or("-".to_string(), |d| d.state.clone());
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
        .filter(|s| s.slo.as_ref().is_some_and(|o| o.status != "met"))
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
    let unfinished = index.steps.iter().filter(|s| s.status != "ok").count();
    if unfinished > 0 {
        let _ = writeln!(out, "{unfinished} phases not finished (see index.json)");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_parse_with_suffixes() {
        assert_eq!(parse_count("1M"), Ok(1_000_000));
        assert_eq!(parse_count("100k"), Ok(100_000));
        assert_eq!(parse_count("2.5m"), Ok(2_500_000));
        assert_eq!(parse_count("450000"), Ok(450_000));
        assert_eq!(parse_count("2B"), Ok(2_000_000_000));
        assert!(parse_count("0").is_err());
        assert!(parse_count("lots").is_err());
        assert!(parse_count("3x").is_err());
    }

    #[test]
    fn the_ycsb_sequence_is_the_recommended_order() {
        let names: Vec<&str> = YCSB.iter().map(|s| s.name).collect();
        assert_eq!(names, ["load", "a", "b", "c", "f", "d", "reload", "e"]);
        assert!(!YCSB[3].writes, "C only reads");
        let m: Vec<&str> = MIXES.iter().map(|s| s.name).collect();
        assert_eq!(m[1], "batch-load");
        assert_eq!(MIXES[1].batch, Some(3000));
    }

    fn rec(step: &str, status: &str) -> StepRecord {
        StepRecord {
            id: step.into(),
            target: 0,
            records: 10,
            repetition: 1,
            step: step.into(),
            description: String::new(),
            phase: String::new(),
            workload: String::new(),
            status: status.into(),
            exit_code: None,
            data_before: None,
            result: None,
            ops_per_sec: None,
            latency_us: BTreeMap::new(),
            slo: None,
            next_insert_keynum: None,
            started_at: None,
            ended_at: None,
        }
    }

    #[test]
    fn the_data_state_follows_the_writes_since_the_last_load() {
        let plan: Vec<StepRecord> = ["load", "a", "b", "c", "f", "d", "reload", "e"]
            .iter()
            .enumerate()
            .map(|(i, s)| {
                rec(
                    s,
                    if i < 4 {
                        "ok"
                    } else if i == 4 {
                        "interrupted"
                    } else {
                        "pending"
                    },
                )
            })
            .collect();
        let st = |i| data_before(&plan, YCSB, i);
        assert_eq!(st(0).state, "clean");
        assert_eq!(st(1).state, "clean");
        assert_eq!(st(2).written_since_load, ["a"]);
        // C runs on data A and B rewrote; C itself writes nothing
        assert_eq!(st(3).written_since_load, ["a", "b"]);
        assert_eq!(st(5).written_since_load, ["a", "b", "f (interrupted)"]);
        let mut done = plan.clone();
        for s in &mut done {
            s.status = "ok".into();
        }
        assert_eq!(data_before(&done, YCSB, 7).state, "clean");
    }

    #[test]
    fn summaries_average_repetitions_and_scaling_compares_sizes() {
        let mut steps = Vec::new();
        for (records, rep, ops, p99) in [
            (10u64, 1u32, 100.0, 10.0),
            (10, 2, 120.0, 14.0),
            (1000, 1, 55.0, 30.0),
            (1000, 2, 55.0, 30.0),
        ] {
            let mut s = rec("a", "ok");
            s.records = records;
            s.repetition = rep;
            s.ops_per_sec = Some(ops);
            s.latency_us.insert(
                "UPDATE".into(),
                [("p99".to_string(), p99), ("mean".to_string(), p99 / 2.0)].into(),
            );
            steps.push(s);
        }
        let mut index = Index {
            kind: String::new(),
            suite: SuiteName::Scaling,
            tool_version: String::new(),
            fingerprint: String::new(),
            targets: vec!["null://".into()],
            records: vec![10, 1000],
            repeat: 2,
            seed: 1,
            duration_s: 1.0,
            warmup_s: 0.0,
            threads: 1,
            load_threads: 1,
            concurrency: 1,
            properties: vec![],
            slo: None,
            steps,
            summary: vec![],
            scaling: vec![],
        };
        summarize(&mut index);
        assert_eq!(index.summary.len(), 2);
        let small = &index.summary[0];
        let ops = small.ops_per_sec.as_ref().unwrap();
        assert_eq!((ops.n, ops.mean), (2, 110.0));
        // t(0.975, 1) * stdev / sqrt(2) = 12.706 * 14.142 / 1.414
        assert!((ops.ci95.unwrap() - 127.06).abs() < 0.1);
        assert_eq!(index.scaling.len(), 1);
        let s = &index.scaling[0];
        assert!((s.ops_per_sec_change_pct.unwrap() + 50.0).abs() < 1e-9);
        assert!((s.p99_change_pct["UPDATE"] - 150.0).abs() < 1e-9);
        assert!(table(&index).contains("throughput -50%"));
    }

    #[test]
    fn fingerprints_change_with_any_part() {
        let a = fingerprint(&["x".into(), "y".into()]);
        assert_eq!(a, fingerprint(&["x".into(), "y".into()]));
        assert_ne!(a, fingerprint(&["xy".into()]));
        assert_ne!(a, fingerprint(&["x".into(), "z".into()]));
    }
}
