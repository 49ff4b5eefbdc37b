//! `yardstick matrix`: the storage-engine experiment of the TerarkDB report as
//! one command. Every engine is loaded once with text-like records; then every
//! test preset runs under every memory budget, each cell as its own capped
//! process (`run --memory-limit`) after a warm-up, each with its own result
//! file; `index.json` ties the cells together for reports.
use crate::{CliError, EXIT_BAD_INPUT};
use clap::Args;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// A test of the experiment: a mix and a thread count.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Preset {
    pub name: &'static str,
    pub description: &'static str,
    pub read: f64,
    pub threads: usize,
}

/// The report's tests: random reads, random writes at 1, 3 and 6 threads, and
/// 95% and 99% read mixes at 8 threads.
pub const PRESETS: &[Preset] = &[
    Preset {
        name: "read",
        description: "random reads, 1 thread",
        read: 1.0,
        threads: 1,
    },
    Preset {
        name: "write-1",
        description: "random writes (whole records), 1 thread",
        read: 0.0,
        threads: 1,
    },
    Preset {
        name: "write-3",
        description: "random writes, 3 threads",
        read: 0.0,
        threads: 3,
    },
    Preset {
        name: "write-6",
        description: "random writes, 6 threads",
        read: 0.0,
        threads: 6,
    },
    Preset {
        name: "mix95-8",
        description: "95% reads, 5% writes, 8 threads",
        read: 0.95,
        threads: 8,
    },
    Preset {
        name: "mix99-8",
        description: "99% reads, 1% writes, 8 threads",
        read: 0.99,
        threads: 8,
    },
];

#[derive(Args, Debug, Clone)]
pub struct MatrixArgs {
    /// An engine to test, as a URL with its own options (cache sizes are the
    /// engine's, separate from the budgets); repeatable, e.g.
    /// --db 'rocksdb:///data/rocks?cache_size=1GiB' --db 'wiredtiger:///data/wt?cache_size=1GiB'.
    #[arg(long = "db", value_name = "URL", required = true)]
    pub dbs: Vec<String>,
    /// Memory budgets of the whole benchmark process, comma-separated (3G,
    /// 512MiB; `none` for uncapped).
    #[arg(long, value_delimiter = ',', default_value = "1G,3G,6G")]
    pub budgets: Vec<String>,
    /// Tests to run, comma-separated, from: read, write-1, write-3, write-6, mix95-8, mix99-8.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "read,write-1,write-3,write-6,mix95-8,mix99-8"
    )]
    pub tests: Vec<String>,
    /// Records loaded into each engine.
    #[arg(long, default_value_t = 1_000_000)]
    pub records: u64,
    /// Fields per record and bytes per field (the report's records were about 1 KB).
    #[arg(long, default_value_t = 1)]
    pub fieldcount: u64,
    #[arg(long, default_value_t = 1000)]
    pub fieldlength: u64,
    /// Field values: text (review-like, compressible) or random (YCSB's).
    #[arg(long, default_value = "text")]
    pub values: String,
    /// Measured time of each cell.
    #[arg(long, value_parser = crate::parse_duration_arg, default_value = "60s")]
    pub duration: Duration,
    /// Warm-up before each cell's measurement (same mix, not measured).
    #[arg(long, value_parser = crate::parse_duration_arg, default_value = "10s")]
    pub warmup: Duration,
    /// Seed of every cell (the same operation streams for every engine).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Directory for the cells' results and index.json.
    #[arg(long, value_name = "DIR", default_value = "results/matrix")]
    pub out_dir: PathBuf,
    /// Skip the loads (the engines' directories are loaded already).
    #[arg(long)]
    pub no_load: bool,
}

fn bad(msg: String) -> CliError {
    CliError {
        code: EXIT_BAD_INPUT,
        message: msg,
    }
}

/// A file name part for a URL: its scheme and last path component.
pub(crate) fn label(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("db", url));
    let path = rest.split('?').next().unwrap_or("");
    let last = Path::new(path)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let raw = if last.is_empty() {
        scheme.to_string()
    } else {
        format!("{scheme}-{last}")
    };
    raw.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Runs the matrix; returns the exit code (1 when a cell failed for a reason
/// other than its memory budget).
pub fn execute(a: &MatrixArgs) -> Result<i32, CliError> {
    let presets: Vec<Preset> = a
        .tests
        .iter()
        .map(|t| {
            PRESETS
                .iter()
                .copied()
                .find(|p| p.name == t.trim())
                .ok_or_else(|| {
                    bad(format!(
                        "--tests {t} is not a test: use {}",
                        PRESETS
                            .iter()
                            .map(|p| p.name)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ))
                })
        })
        .collect::<Result<_, _>>()?;
    let budgets: Vec<Option<(String, u64)>> = a
        .budgets
        .iter()
        .map(|b| match b.trim() {
            "none" => Ok(None),
            s => crate::parse_size_arg(s)
                .map(|n| Some((s.to_string(), n)))
                .map_err(|e| bad(format!("--budgets: {e}"))),
        })
        .collect::<Result<_, _>>()?;
    if !["text", "random"].contains(&a.values.as_str()) {
        return Err(bad(format!(
            "--values {} is not known: use text or random",
            a.values
        )));
    }
    if a.records == 0 {
        return Err(bad("--records must be at least 1".into()));
    }
    let mut labels: Vec<String> = a.dbs.iter().map(|d| label(d)).collect();
    labels.sort();
    labels.dedup();
    if labels.len() != a.dbs.len() {
        return Err(bad(
            "two --db URLs share a scheme and directory name: give each engine its own directory"
                .into(),
        ));
    }
    std::fs::create_dir_all(&a.out_dir).map_err(|e| {
        bad(format!(
            "cannot create {}: {e}; choose another --out-dir",
            a.out_dir.display()
        ))
    })?;
    let exe = std::env::current_exe()
        .map_err(|e| CliError::failed(format!("cannot find the yardstick executable: {e}")))?;
    let common = |threads: usize| -> Vec<String> {
        let mut v: Vec<String> = vec!["-P".into(), "workloadc".into()];
        for p in [
            format!("recordcount={}", a.records),
            format!("fieldcount={}", a.fieldcount),
            format!("fieldlength={}", a.fieldlength),
            format!("valuegenerator={}", a.values),
            "requestdistribution=uniform".into(),
            "insert.semantics=upsert".into(),
            "update.semantics=upsert".into(),
            "writeallfields=true".into(),
        ] {
            v.extend(["-p".into(), p]);
        }
        v.extend([
            "--threads".into(),
            threads.to_string(),
            "--seed".into(),
            a.seed.to_string(),
            "-q".into(),
        ]);
        v
    };
    let run = |args: &[String]| -> Result<i32, CliError> {
        // runs: yardstick, this executable
        let status = Command::new(&exe)
            .args(args)
            .stdout(std::process::Stdio::null())
            .status()
            .map_err(|e| CliError::failed(format!("cannot start yardstick: {e}")))?;
        Ok(status.code().unwrap_or(1))
    };
    let mut loads = Vec::new();
    if !a.no_load {
        for db in &a.dbs {
            let file = a.out_dir.join(format!("load-{}.json", label(db)));
            eprintln!(
                "yardstick matrix: loading {} records into {}",
                a.records,
                yardstick_core::result::redact_url(db)
            );
            let mut args: Vec<String> = vec!["load".into(), "--db".into(), db.clone()];
            args.extend(common(1));
            args.extend(["--out".into(), file.display().to_string()]);
            let code = run(&args)?;
            if code != 0 {
                return Err(CliError {
                    code,
                    message: format!(
                        "loading {} failed (exit code {code}); see the message above",
                        yardstick_core::result::redact_url(db)
                    ),
                });
            }
            let v = read(&file);
            loads.push(json!({
                "db": yardstick_core::result::redact_url(db),
                "result": file.file_name().map(|n| n.to_string_lossy().into_owned()),
                "inserts_per_sec": v["totals"]["ops_per_sec"],
                "disk_bytes": v["binding"]["disk_bytes_after"],
                "compression_ratio": v["binding"]["compression_ratio"],
                "engine": v["binding"]["engine"]["name"],
                "version": v["binding"]["engine"]["version"],
            }));
        }
    }
    let mut cells = Vec::new();
    let mut failed = false;
    let total = a.dbs.len() * budgets.len() * presets.len();
    for db in &a.dbs {
        for budget in &budgets {
            for p in &presets {
                let name = format!(
                    "{}-{}-{}.json",
                    label(db),
                    budget.as_ref().map_or("none", |(s, _)| s.as_str()),
                    p.name
                );
                let file = a.out_dir.join(&name);
                eprintln!(
                    "yardstick matrix: [{}/{total}] {} · budget {} · {}",
                    cells.len() + 1,
                    yardstick_core::result::redact_url(db),
                    budget.as_ref().map_or("none", |(s, _)| s.as_str()),
                    p.description
                );
                let mut args: Vec<String> = vec!["run".into(), "--db".into(), db.clone()];
                args.extend(common(p.threads));
                for prop in [
                    format!("readproportion={}", p.read),
                    format!("updateproportion={}", 1.0 - p.read),
                    "operationcount=0".into(),
                ] {
                    args.extend(["-p".into(), prop]);
                }
                args.extend([
                    "--duration".into(),
                    format!("{}ms", a.duration.as_millis()),
                    "--warmup".into(),
                    format!("{}ms", a.warmup.as_millis()),
                    "--out".into(),
                    file.display().to_string(),
                ]);
                if let Some((_, bytes)) = budget {
                    args.extend(["--memory-limit".into(), bytes.to_string()]);
                }
                let code = run(&args)?;
                let v = if file.exists() {
                    read(&file)
                } else {
                    Value::Null
                };
                let oom = v["memory_limit"]["oom_killed"].as_bool() == Some(true);
                let status = match (code, oom) {
                    (0, _) => "ok",
                    (_, true) => "oom",
                    _ => {
                        failed = true;
                        "failed"
                    }
                };
                let lat = latency(&v);
                cells.push(json!({
                    "db": yardstick_core::result::redact_url(db),
                    "engine": v["binding"]["engine"]["name"],
                    "budget": budget.as_ref().map(|(s, _)| s.clone()),
                    "budget_bytes": budget.as_ref().map(|(_, b)| *b),
                    "test": p.name,
                    "threads": p.threads,
                    "read_proportion": p.read,
                    "status": status,
                    "exit_code": code,
                    "result": file.exists().then_some(name),
                    "ops_per_sec": v["totals"]["ops_per_sec"],
                    "latency_us": lat,
                    "peak_memory_bytes": v["memory_limit"]["peak_bytes"],
                    "disk_bytes_after": v["binding"]["disk_bytes_after"],
                }));
            }
        }
    }
    let index = json!({
        "kind": "yardstick storage-engine matrix",
        "tool_version": env!("CARGO_PKG_VERSION"),
        "records": a.records,
        "fieldcount": a.fieldcount,
        "fieldlength": a.fieldlength,
        "values": a.values,
        "duration_s": a.duration.as_secs_f64(),
        "warmup_s": a.warmup.as_secs_f64(),
        "seed": a.seed,
        "budgets": budgets.iter().map(|b| b.as_ref().map(|(s, _)| s.clone())).collect::<Vec<_>>(),
        "tests": presets.iter().map(|p| json!({"name": p.name, "description": p.description, "threads": p.threads, "read_proportion": p.read})).collect::<Vec<_>>(),
        "loads": loads,
        "cells": cells,
    });
    let path = a.out_dir.join("index.json");
    let text = serde_json::to_vec_pretty(&index)
        .map_err(|e| CliError::failed(format!("cannot encode the index: {e}")))?;
    yardstick_core::result::write_atomic(&path, &text)
        .map_err(|e| CliError::failed(format!("cannot write {}: {e}", path.display())))?;
    print!("{}", table(&index));
    println!("index: {}", path.display());
    Ok(if failed { crate::EXIT_FAILED } else { 0 })
}

fn read(path: &Path) -> Value {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null)
}

/// Mean, median, p99 and standard deviation in microseconds over every
/// successful operation of a result (all operation kinds together: the
/// histograms are merged exactly).
fn latency(v: &Value) -> Value {
    use yardstick_core::stats::Summary;
    let mut merged: Option<hdrhistogram::Histogram<u64>> = None;
    if let Some(ops) = v["operations"].as_object() {
        for op in ops.values() {
            let Some(h) = op["histograms"]["response"]
                .as_str()
                .and_then(|t| yardstick_core::stats::decode_histogram(t).ok())
            else {
                continue;
            };
            match &mut merged {
                Some(m) => {
                    let _ = m.add(&h);
                }
                None => merged = Some(h),
            }
        }
    }
    match merged.filter(|h| !h.is_empty()) {
        Some(h) => {
            let s = Summary::of(&h);
            json!({
                "mean": s.mean / 1e3,
                "p50": s.p50 as f64 / 1e3,
                "p99": s.p99 as f64 / 1e3,
                "stdev": s.stdev / 1e3,
            })
        }
        None => Value::Null,
    }
}

fn table(index: &Value) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n{:<28} {:>8} {:<9} {:>7} {:>12} {:>10} {:>10} {:>10} {:>10}",
        "engine", "budget", "test", "status", "ops/s", "avg µs", "p50 µs", "p99 µs", "stdev µs"
    );
    for c in index["cells"].as_array().into_iter().flatten() {
        let f = |k: &str| {
            c["latency_us"][k]
                .as_f64()
                .map_or("-".to_string(), |x| format!("{x:.1}"))
        };
        let _ = writeln!(
            out,
            "{:<28} {:>8} {:<9} {:>7} {:>12} {:>10} {:>10} {:>10} {:>10}",
            c["db"]
                .as_str()
                .unwrap_or("")
                .chars()
                .take(28)
                .collect::<String>(),
            c["budget"].as_str().unwrap_or("none"),
            c["test"].as_str().unwrap_or(""),
            c["status"].as_str().unwrap_or(""),
            c["ops_per_sec"]
                .as_f64()
                .map_or("-".into(), |x| format!("{x:.0}")),
            f("mean"),
            f("p50"),
            f("p99"),
            f("stdev"),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_name_engine_and_directory_safely() {
        assert_eq!(
            label("rocksdb:///data/rocks?cache_size=1GiB"),
            "rocksdb-rocks"
        );
        assert_eq!(label("sqlite://x/bench.db"), "sqlite-bench_db");
        assert_eq!(label("null://"), "null");
    }

    #[test]
    fn the_presets_are_the_reports_tests() {
        let names: Vec<&str> = PRESETS.iter().map(|p| p.name).collect();
        assert_eq!(
            names,
            ["read", "write-1", "write-3", "write-6", "mix95-8", "mix99-8"]
        );
        assert!(PRESETS
            .iter()
            .all(|p| (0.0..=1.0).contains(&p.read) && p.threads >= 1));
    }
}
