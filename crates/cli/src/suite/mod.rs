//! `yardstick suite`: a sequence of loads and runs as one command, per target,
//! data size and repetition, with the same seed and properties everywhere.
//! Each phase runs as a child `yardstick load|run` with its own result file;
//! `index.json` in the output directory ties them together, records the
//! dirty/clean state of the data before every phase, and is rewritten after
//! every phase so an interrupted suite resumes from the last finished phase.
mod index;
mod presets;
mod step;
mod summary;

use crate::slo::{Point, Search, Slo};
use crate::{read_result, CliError, EXIT_BAD_INPUT, EXIT_FAILED, EXIT_INTERRUPTED};
use clap::{Args, ValueEnum};
pub use index::*;
pub use presets::*;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::Ordering;
use std::time::Duration;
use step::StepCtx;
pub use summary::{summarize, table};
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

#[cfg(test)]
mod tests;
