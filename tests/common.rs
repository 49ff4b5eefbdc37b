//! Helpers for the end-to-end tests: run the real `yardstick` binary in a
//! temporary working directory and read what it wrote.
#![allow(dead_code)]
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_yardstick")
}

pub fn yardstick(dir: &Path, args: &[&str]) -> Run {
    let out: Output = Command::new(bin())
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the yardstick binary runs");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

pub fn read_json(path: &Path) -> serde_json::Value {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    serde_json::from_str(&text).expect("result files are JSON")
}

pub fn results_in(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir.join("results"))
        .map(|r| r.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default();
    v.sort();
    v
}

/// Validates `value` against the repository's result JSON Schema.
pub fn assert_schema_valid(value: &serde_json::Value) {
    let schema_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/result.schema.json");
    let schema: serde_json::Value = read_json(&schema_path);
    let validator = jsonschema::validator_for(&schema).expect("the schema itself is valid");
    let errors: Vec<String> = validator
        .iter_errors(value)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect();
    assert!(
        errors.is_empty(),
        "result does not match schema/result.schema.json:\n{}",
        errors.join("\n")
    );
}

pub fn op<'a>(result: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    &result["operations"][name]
}

pub fn count(result: &serde_json::Value, name: &str) -> u64 {
    op(result, name)["count"].as_u64().unwrap_or(0)
}

/// Loads 2000 records and runs workload A (or C) for `ops` operations; returns the run's result.
pub fn load_and_run(
    dir: &Path,
    url: &str,
    workload: &str,
    extra: &[&str],
) -> (Run, serde_json::Value) {
    let mut load = strings(&[
        "load",
        "--db",
        url,
        "-P",
        workload,
        "-p",
        "recordcount=2000",
        "--threads",
        "2",
        "-q",
        "--out",
        "l.json",
    ]);
    load.extend(strings(extra));
    let l = yardstick(dir, &load.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(l.code, 0, "{}", l.stderr);
    let mut run = strings(&[
        "run",
        "--db",
        url,
        "-P",
        workload,
        "-p",
        "recordcount=2000",
        "-p",
        "operationcount=6000",
        "--threads",
        "2",
        "--concurrency",
        "4",
        "-q",
        "--out",
        "r.json",
    ]);
    run.extend(strings(extra));
    let r = yardstick(dir, &run.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = read_json(&dir.join("r.json"));
    assert_schema_valid(&v);
    assert_eq!(v["totals"]["operations"], 6000);
    assert_eq!(v["totals"]["errors"], 0, "{}", v["warnings"]);
    (r, v)
}

pub fn strings(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// `yardstick run ARGS` must stop before any work: exit code 2, a message
/// containing `expect`, no panic, no `secret` in the output, no result file.
pub fn assert_refused(dir: &Path, args: &[&str], expect: &str, secret: &str) {
    let r = yardstick(dir, args);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains(expect), "{}", r.stderr);
    assert!(
        !r.stderr.contains(secret) && !r.stderr.contains("panicked"),
        "{}",
        r.stderr
    );
    assert!(
        results_in(dir).is_empty(),
        "no result for a run that never started"
    );
}
