//! `yardstick suite`: the YCSB sequence per target with its index, the data
//! state per phase, resume after an interruption, repetitions with confidence
//! intervals, data-size scaling, the SLO search, presets, and `load --clear`.
use crate::common::*;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn steps(index: &serde_json::Value) -> &Vec<serde_json::Value> {
    index["steps"].as_array().expect("steps")
}

fn step<'a>(index: &'a serde_json::Value, target: u64, name: &str) -> &'a serde_json::Value {
    steps(index)
        .iter()
        .find(|s| s["target"] == target && s["step"] == name)
        .unwrap_or_else(|| panic!("no step {name} of target {target}"))
}

fn sqlite_rows(path: &Path) -> i64 {
    let c = rusqlite::Connection::open(path).unwrap();
    c.query_row("SELECT COUNT(*) FROM usertable", [], |r| r.get(0))
        .unwrap()
}

#[test]
fn the_ycsb_sequence_runs_per_target_with_one_seed_and_records_the_data_state() {
    let dir = tempfile::tempdir().unwrap();
    let r = yardstick(
        dir.path(),
        &[
            "suite",
            "ycsb",
            "--db",
            "sqlite://s.db",
            "--db",
            "null://",
            "--records",
            "1500",
            "--duration",
            "500ms",
            "--warmup",
            "0s",
            "--threads",
            "2",
            "--seed",
            "42",
            "--out-dir",
            "suite",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let index = read_json(&dir.path().join("suite/index.json"));
    assert_eq!(index["kind"], "yardstick suite");
    assert_eq!(index["schema_version"], 1);
    assert_matches_schema(&index, "suite-index.schema.json");
    assert_eq!(steps(&index).len(), 16);
    let names: Vec<&str> = steps(&index)
        .iter()
        .filter(|s| s["target"] == 0)
        .map(|s| s["step"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["load", "a", "b", "c", "f", "d", "reload", "e"]);
    for s in steps(&index) {
        assert_eq!(s["status"], "ok", "{s}");
        let v = read_json(&dir.path().join("suite").join(s["result"].as_str().unwrap()));
        assert_schema_valid(&v);
        assert_eq!(v["seed"], 42, "every phase has the suite's seed");
        assert_eq!(v["properties"]["recordcount"], "1500");
        if s["phase"] == "load" {
            assert!(
                v["binding"]["cleared"].is_object(),
                "loads start from an empty table"
            );
        }
    }
    // the data state before each phase
    let state = |n: &str| step(&index, 0, n)["data_before"].clone();
    assert_eq!(state("a")["state"], "clean");
    assert_eq!(state("c")["state"], "dirty");
    assert_eq!(
        state("c")["written_since_load"],
        serde_json::json!(["a", "b"])
    );
    assert_eq!(
        state("reload")["written_since_load"],
        serde_json::json!(["a", "b", "f", "d"])
    );
    assert_eq!(state("e")["state"], "clean");
    // the reload emptied the table D had grown: E starts from recordcount rows
    let reload = read_json(
        &dir.path()
            .join("suite")
            .join(step(&index, 0, "reload")["result"].as_str().unwrap()),
    );
    assert!(
        reload["binding"]["cleared"]["records"].as_u64().unwrap() > 1500,
        "D's inserts were deleted too"
    );
    assert_eq!(reload["totals"]["operations"], 1500);
    // summary rows per target and phase, and the text table
    assert_eq!(index["summary"].as_array().unwrap().len(), 16);
    assert!(
        r.stdout.contains("sqlite://s.db") && r.stdout.contains("null://"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("dirty"), "{}", r.stdout);
}

#[test]
fn an_interrupted_suite_resumes_from_the_last_finished_phase() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "suite",
        "ycsb",
        "--db",
        "sqlite://r.db",
        "--records",
        "1000",
        "--duration",
        "4s",
        "--warmup",
        "0s",
        "--threads",
        "1",
        "--only",
        "load,a,c",
        "--out-dir",
        "suite",
    ];
    let child = Command::new(bin())
        .args(args)
        .current_dir(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    // interrupt while A runs (after the load finished)
    let index_path = dir.path().join("suite/index.json");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        assert!(Instant::now() < deadline, "A never started");
        if index_path.exists() {
            let v = read_json(&index_path);
            if step(&v, 0, "a")["status"] == "running" {
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(1500));
    // Ctrl-C reaches the whole foreground process group
    // SAFETY: kill(2) with our child's process group (it is its leader).
    unsafe { libc::kill(-(child.id() as i32), libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(
        stderr.contains("run the same command again to resume"),
        "{stderr}"
    );
    let v = read_json(&index_path);
    assert_eq!(step(&v, 0, "load")["status"], "ok");
    assert_eq!(step(&v, 0, "a")["status"], "interrupted");
    assert_eq!(step(&v, 0, "c")["status"], "pending");
    let load_file = dir
        .path()
        .join("suite")
        .join(step(&v, 0, "load")["result"].as_str().unwrap());
    let load_time = std::fs::metadata(&load_file).unwrap().modified().unwrap();

    let r = yardstick(dir.path(), &args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("resuming") && r.stderr.contains("1 of 3 phases finished"),
        "{}",
        r.stderr
    );
    assert!(
        !r.stderr.contains("[1/3]"),
        "the load is not run again: {}",
        r.stderr
    );
    let v = read_json(&index_path);
    assert!(steps(&v).iter().all(|s| s["status"] == "ok"));
    assert_eq!(
        std::fs::metadata(&load_file).unwrap().modified().unwrap(),
        load_time
    );
    // A's rerun starts on data its interrupted attempt wrote to
    assert_eq!(
        step(&v, 0, "a")["data_before"]["written_since_load"],
        serde_json::json!(["a (interrupted)"])
    );
    assert_eq!(
        step(&v, 0, "c")["data_before"]["written_since_load"],
        serde_json::json!(["a"])
    );

    // another suite in the same directory is refused
    let other = yardstick(
        dir.path(),
        &[
            "suite",
            "ycsb",
            "--db",
            "sqlite://other.db",
            "--out-dir",
            "suite",
        ],
    );
    assert_eq!(other.code, 2, "{}", other.stderr);
    assert!(
        other.stderr.contains("holds another suite"),
        "{}",
        other.stderr
    );
}

#[test]
fn repetitions_give_confidence_intervals_and_sizes_give_scaling() {
    let dir = tempfile::tempdir().unwrap();
    let r = yardstick(
        dir.path(),
        &[
            "suite",
            "scaling",
            "--db",
            "sqlite://g.db",
            "--records",
            "500,4k",
            "--repeat",
            "2",
            "--only",
            "load,a",
            "--duration",
            "500ms",
            "--warmup",
            "0s",
            "--threads",
            "1",
            "--out-dir",
            "suite",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let index = read_json(&dir.path().join("suite/index.json"));
    assert_eq!(steps(&index).len(), 2 * 2 * 2);
    let summary = index["summary"].as_array().unwrap();
    let a_small = summary
        .iter()
        .find(|s| s["step"] == "a" && s["records"] == 500)
        .unwrap();
    assert_eq!(a_small["ops_per_sec"]["n"], 2);
    assert!(a_small["ops_per_sec"]["ci95"].as_f64().unwrap() >= 0.0);
    assert!(a_small["p99_us"]["UPDATE"]["mean"].as_f64().unwrap() > 0.0);
    let scaling = index["scaling"].as_array().unwrap();
    let a = scaling
        .iter()
        .find(|s| s["step"] == "a")
        .expect("a scaling row");
    assert_eq!(
        (a["base_records"].as_u64(), a["records"].as_u64()),
        (Some(500), Some(4000))
    );
    assert!(a["ops_per_sec_change_pct"].as_f64().is_some());
    assert!(r.stdout.contains("data-size scaling"), "{}", r.stdout);
    assert!(r.stdout.contains('±'), "{}", r.stdout);
    // the table was reloaded for every size and repetition
    assert_eq!(sqlite_rows(&dir.path().join("g.db")), 4000);
}

#[test]
fn the_slo_search_finds_the_knee_or_says_the_bound_is_never_met() {
    let _quiet = quiet_machine();
    let dir = tempfile::tempdir().unwrap();
    // one thread at 1 ms per operation does at most ~1000 ops/s; queueing
    // pushes p99 past the bound only close to that (the bound is loose so a
    // busy machine's scheduling hiccups do not decide the knee)
    let r = yardstick(
        dir.path(),
        &[
            "suite",
            "ycsb",
            "--db",
            "null://?latency=1ms",
            "--only",
            "c",
            "--records",
            "100",
            "--slo",
            "p99<200ms",
            "--slo-bisections",
            "2",
            // 2 s steps: a scheduling hiccup of a busy host is a smaller share
            "--duration",
            "2s",
            "--warmup",
            "0s",
            "--threads",
            "1",
            "--out-dir",
            "met",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let index = read_json(&dir.path().join("met/index.json"));
    assert_matches_schema(&index, "suite-index.schema.json");
    let slo = &step(&index, 0, "c")["slo"];
    assert_eq!(slo["status"], "met", "{slo}");
    let knee = slo["knee_ops_per_sec"].as_f64().unwrap();
    let max = slo["max_ops_per_sec"].as_f64().unwrap();
    assert!(
        knee > 0.2 * max && knee <= 1.05 * max,
        "knee {knee}, max {max}"
    );
    let curve = slo["curve"].as_array().unwrap();
    assert!(curve.len() >= 3, "{slo}");
    for p in curve {
        let f = dir.path().join("met").join(p["result"].as_str().unwrap());
        let v = read_json(&f);
        assert_eq!(v["runner"]["loop_mode"], "open", "SLO steps are open loop");
        assert!(p["value_ns"].as_u64().unwrap() > 1_000_000);
    }
    assert!(curve.iter().any(|p| p["pass"] == true));
    assert_eq!(
        index["summary"][0]["slo_ops_per_sec"]["mean"].as_f64(),
        Some(knee)
    );

    let r = yardstick(
        dir.path(),
        &[
            "suite",
            "ycsb",
            "--db",
            "null://?latency=1ms",
            "--only",
            "c",
            "--records",
            "100",
            "--slo",
            "read:p99<100us",
            "--slo-bisections",
            "1",
            "--duration",
            "500ms",
            "--warmup",
            "0s",
            "--threads",
            "1",
            "--out-dir",
            "unmet",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let index = read_json(&dir.path().join("unmet/index.json"));
    let slo = &step(&index, 0, "c")["slo"];
    assert_eq!(slo["status"], "unmet");
    assert!(
        slo["message"].as_str().unwrap().contains("never met"),
        "{slo}"
    );
    assert!(
        slo["message"].as_str().unwrap().contains("best step"),
        "{slo}"
    );
    assert!(
        r.stdout.contains("warning")
            && r.stdout.contains("never met")
            && r.stdout.contains("not met"),
        "{}",
        r.stdout
    );
}

#[test]
fn the_mixes_preset_batch_loads_and_runs_the_reports_custom_mixes() {
    let dir = tempfile::tempdir().unwrap();
    let r = yardstick(
        dir.path(),
        &[
            "suite",
            "mixes",
            "--db",
            "sqlite://m.db",
            "--records",
            "7000",
            "--duration",
            "300ms",
            "--warmup",
            "0s",
            "--threads",
            "1",
            "--out-dir",
            "mixes",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let index = read_json(&dir.path().join("mixes/index.json"));
    let names: Vec<&str> = steps(&index)
        .iter()
        .map(|s| s["step"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "load",
            "batch-load",
            "read100",
            "read50-insert50",
            "update95-read5",
            "read95-update5",
            "read95-insert5"
        ]
    );
    let res = |n: &str| {
        read_json(
            &dir.path()
                .join("mixes")
                .join(step(&index, 0, n)["result"].as_str().unwrap()),
        )
    };
    let batch = res("batch-load");
    assert_eq!(batch["properties"]["db.batchsize"], "3000");
    assert_eq!(
        batch["properties"]["insert.semantics"], "upsert",
        "as YCSB's bindings wrote"
    );
    assert_eq!(
        res("update95-read5")["properties"]["update.semantics"],
        "upsert"
    );
    assert_eq!(batch["properties"]["fieldcount"], "10");
    assert_eq!(batch["properties"]["fieldlength"], "10");
    assert_eq!(op(&batch, "BATCH-INSERT")["rows"], 7000);
    assert_eq!(op(&batch, "BATCH-INSERT")["count"], 3);
    // the suite counts a batch load's records per second, not its batches
    let rate = step(&index, 0, "batch-load")["ops_per_sec"]
        .as_f64()
        .unwrap();
    assert!((rate - 7000.0 / batch["elapsed_s"].as_f64().unwrap()).abs() < 1e-6 * rate);
    let mix = res("read50-insert50");
    let (reads, inserts) = (count(&mix, "READ"), count(&mix, "INSERT"));
    assert!(reads > 0 && inserts > 0 && (reads as f64 / inserts as f64 - 1.0).abs() < 0.3);
    let latest = res("read95-insert5");
    assert_eq!(latest["properties"]["requestdistribution"], "latest");
}

#[test]
fn bad_suite_input_is_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    for (args, expect) in [
        (
            vec!["suite", "ycsb", "--db", "null://", "--slo", "p99"],
            "--slo 'p99'",
        ),
        (
            vec!["suite", "ycsb", "--db", "null://", "-p", "recordcount=5"],
            "use --records",
        ),
        (
            vec!["suite", "ycsb", "--db", "null://", "--records", "lots"],
            "not a record count",
        ),
        (
            vec!["suite", "ycsb", "--db", "null://", "--only", "z"],
            "not a phase of this suite",
        ),
        (
            vec!["suite", "ycsb", "--db", "null://", "--repeat", "0"],
            "--repeat",
        ),
        (
            vec!["suite", "ycsb", "--db", "null://", "--db", "null://"],
            "look alike",
        ),
    ] {
        let r = yardstick(dir.path(), &args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains(expect), "{args:?}: {}", r.stderr);
        assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    }
}

#[test]
fn load_clear_empties_the_table_first_and_records_it() {
    let dir = tempfile::tempdir().unwrap();
    let load = |extra: &[&str]| {
        let mut a = vec![
            "load",
            "--db",
            "sqlite://c.db",
            "-p",
            "recordcount=300",
            "-q",
            "--out",
            "l.json",
        ];
        a.extend_from_slice(extra);
        yardstick(dir.path(), &a)
    };
    assert_eq!(load(&[]).code, 0);
    let again = load(&["-p", "recordcount=600", "-p", "insertstart=300"]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(sqlite_rows(&dir.path().join("c.db")), 600);
    let cleared = load(&["--clear"]);
    assert_eq!(cleared.code, 0, "{}", cleared.stderr);
    assert_eq!(sqlite_rows(&dir.path().join("c.db")), 300);
    let v = read_json(&dir.path().join("l.json"));
    assert_schema_valid(&v);
    assert_eq!(v["binding"]["cleared"]["records"], 600);
    let run = yardstick(dir.path(), &["run", "--db", "sqlite://c.db", "--clear"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("--clear applies to the load phase"),
        "{}",
        run.stderr
    );
}

#[test]
fn phases_that_insert_keep_taking_new_keys_across_slo_steps() {
    let dir = tempfile::tempdir().unwrap();
    // insert semantics (the ydb preset): a key inserted twice would be a duplicate
    let r = yardstick(
        dir.path(),
        &[
            "suite",
            "ydb",
            "--db",
            "sqlite://d.db",
            "--only",
            "load,d",
            "--records",
            "500",
            "--slo",
            "p99<5s",
            // a step that misses its rate on a busy machine (tests run in
            // parallel) is followed by bisections: several steps either way
            "--slo-bisections",
            "2",
            "--duration",
            "400ms",
            "--warmup",
            "100ms",
            "--threads",
            "1",
            "--out-dir",
            "d",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let index = read_json(&dir.path().join("d/index.json"));
    let d = step(&index, 0, "d");
    let slo = &d["slo"];
    // whether the knee is found depends on the machine; the key space must
    // continue across the probe and every step regardless
    assert!(slo["status"] == "met" || slo["status"] == "unmet", "{slo}");
    assert!(slo["curve"].as_array().unwrap().len() >= 2, "{slo}");
    // the probe first, then the steps in the order they ran (slo01, slo02, ...)
    let mut steps: Vec<String> = slo["curve"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["result"].as_str().unwrap().to_string())
        .collect();
    steps.sort();
    let mut files: Vec<String> = vec![slo["probe_result"].as_str().unwrap().to_string()];
    files.extend(steps);
    let mut last = 500u64;
    for f in &files {
        let v = read_json(&dir.path().join("d").join(f));
        let records: u64 = v["properties"]["recordcount"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(
            records, last,
            "{f} starts where the phase before it stopped inserting"
        );
        last = v["runner"]["next_insert_keynum"].as_u64().unwrap();
        assert!(last > records, "{f} inserted");
        let statuses = &op(&v, "INSERT")["statuses"];
        assert!(statuses["duplicate_key"].is_null(), "{f}: {statuses}");
        assert!(op(&v, "READ")["statuses"]["not_found"].is_null(), "{f}");
    }
    assert_eq!(d["next_insert_keynum"].as_u64(), Some(last));
    assert_eq!(sqlite_rows(&dir.path().join("d.db")) as u64, last);
}
