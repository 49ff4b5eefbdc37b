//! TPC-C's terminals on the core runner: terminals sharing threads, an
//! open-loop rate, think times that end with the run, a signal's partial
//! result, the memory cap, and the runner's options refused when they make
//! no sense.
use super::{load, tpcc_run};
use crate::common::*;
use std::time::Duration;

#[test]
fn terminals_share_threads_and_follow_an_open_loop_rate() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(load(dir.path(), "1").code, 0);
    let r = tpcc_run(
        dir.path(),
        "sqlite://t.db",
        ["1", "4", "3s"],
        &["--threads", "2", "--target", "200"],
        "r.json",
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let v = read_json(&dir.path().join("r.json"));
    assert_eq!(v["config"]["threads"], 2);
    assert_eq!(v["config"]["terminals"], 4);
    assert_eq!(v["config"]["target_per_sec"], 200.0);
    // tpmTotal is transactions per minute: 200/s on schedule is 12,000
    let tpm = v["tpm_total"].as_f64().unwrap();
    assert!((9_000.0..=12_600.0).contains(&tpm), "{tpm}");
    let points = v["time_series"].as_array().unwrap();
    assert!(points.len() >= 3, "{points:?}");
    assert!(v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c["pass"] == true));
}

#[test]
fn think_times_end_with_the_run() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(load(dir.path(), "1").code, 0);
    // 20 terminals on one thread, each keying for 2 to 18 s first: the
    // run ends at its duration, not when the last keying time would
    let started = std::time::Instant::now();
    let r = tpcc_run(
        dir.path(),
        "sqlite://t.db",
        ["1", "20", "2s"],
        &["--threads", "1", "--spec-timing", "--no-check"],
        "r.json",
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(started.elapsed() < Duration::from_secs(15));
    let v = read_json(&dir.path().join("r.json"));
    assert_eq!(v["config"]["spec_timing"], true);
    assert_eq!(v["config"]["threads"], 1);
    assert!(v["elapsed_s"].as_f64().unwrap() < 3.0, "{}", v["elapsed_s"]);
}

#[test]
fn a_signal_stops_the_terminals_and_writes_the_partial_result() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(load(dir.path(), "1").code, 0);
    let code = interrupted(
        dir.path(),
        &[
            "tpcc",
            "run",
            "--db",
            "sqlite://t.db",
            "--warehouses",
            "1",
            "--terminals",
            "2",
            "--duration",
            "60s",
            "-q",
            "--out",
            "partial.json",
        ],
        Duration::from_millis(1500),
    );
    assert_eq!(code, Some(130));
    let out = dir.path().join("partial.json");
    let v = read_json(&out);
    assert_eq!(
        (v["interrupted"].as_bool(), v["complete"].as_bool()),
        (Some(true), Some(false))
    );
    assert!(v["tpmc"].as_f64().unwrap() > 0.0);
    assert!(v["elapsed_s"].as_f64().unwrap() < 10.0);
    assert!(v["warnings"].to_string().contains("partial result"));
    // what was measured is consistent: the checks ran on the stopped database
    assert!(v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c["pass"] == true));
}

#[test]
fn a_capped_tpcc_run_records_its_limit() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(load(dir.path(), "1").code, 0);
    let r = tpcc_run(
        dir.path(),
        "sqlite://t.db",
        ["1", "2", "2s"],
        &["--memory-limit", "1G"],
        "r.json",
    );
    if r.stderr.contains("need a memory cgroup") && std::env::var_os("CI").is_none() {
        eprintln!("skipped: {}", r.stderr.trim());
        return;
    }
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let v = read_json(&dir.path().join("r.json"));
    assert_eq!(v["memory_limit"]["bytes"], 1u64 << 30);
    assert_eq!(v["memory_limit"]["oom_killed"], false);
    assert!(v["tpmc"].as_f64().unwrap() > 0.0);
    // a cap the terminals cannot live under leaves a result that says so
    let r = tpcc_run(
        dir.path(),
        "sqlite://t.db",
        ["1", "2", "5s"],
        &["--memory-limit", "16M"],
        "oom.json",
    );
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let v = read_json(&dir.path().join("oom.json"));
    assert_eq!(v["complete"], false);
    assert_eq!(v["memory_limit"]["oom_killed"], true);
    assert!(v["warnings"][0]
        .as_str()
        .unwrap()
        .starts_with("killed by the memory limit"));
}

#[test]
fn runner_options_that_make_no_sense_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(load(dir.path(), "1").code, 0);
    for (extra, expect) in [
        (
            &["--terminals", "5", "--threads", "2"][..],
            "--terminals 5 is not a multiple of --threads 2",
        ),
        (&["--target", "0"][..], "--target 0: give a positive rate"),
        (
            &["--target", "10", "--spec-timing"][..],
            "cannot be used with",
        ),
    ] {
        let mut args = vec!["tpcc", "run", "--db", "sqlite://t.db", "--warehouses", "1"];
        args.extend_from_slice(extra);
        let r = yardstick(dir.path(), &args);
        assert_eq!(r.code, 2, "{extra:?}: {}", r.stderr);
        assert!(r.stderr.contains(expect), "{extra:?}: {}", r.stderr);
        assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    }
}
