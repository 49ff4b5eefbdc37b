//! End-to-end: the README's first command and the run/load flows.
use crate::common::*;

#[test]
fn no_argument_run_loads_the_embedded_default_runs_workload_a_and_writes_results() {
    let dir = tempfile::tempdir().unwrap();
    let r = yardstick(dir.path(), &["run"]);
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    assert!(
        r.stdout.contains("yardstick run · workloada · sqlite"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("READ") && r.stdout.contains("UPDATE") && r.stdout.contains("p99.99")
    );
    assert!(r.stdout.contains("result: results/"), "{}", r.stdout);
    assert!(r.stderr.contains("no --db given"), "{}", r.stderr);
    let files = results_in(dir.path());
    assert_eq!(files.len(), 2, "a load and a run result: {files:?}");
    let load = read_json(
        files
            .iter()
            .find(|f| f.to_string_lossy().contains("-load-"))
            .unwrap(),
    );
    let run = read_json(
        files
            .iter()
            .find(|f| f.to_string_lossy().contains("-run-"))
            .unwrap(),
    );
    assert_schema_valid(&load);
    assert_schema_valid(&run);
    assert_eq!(
        load["totals"]["operations"], 50_000,
        "the whole data set is loaded"
    );
    assert_eq!(run["totals"]["errors"], 0, "every read finds its record");
    assert!(count(&run, "READ") > 1000 && count(&run, "UPDATE") > 1000);
    assert_eq!(run["binding"]["engine"]["name"], "sqlite");
    assert_eq!(run["semantics"]["insert"], "insert");
    assert!(run["time_series"].as_array().unwrap().len() >= 5);
    assert!(
        op(&run, "READ")["response_time_ns"]["p50"]
            .as_u64()
            .unwrap()
            > 100,
        "latencies are real nanoseconds"
    );
}

#[test]
fn load_then_run_on_sqlite_with_every_operation_kind_matches_the_schema() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}/t.db", dir.path().display());
    let l = yardstick(
        dir.path(),
        &[
            "load",
            "--db",
            &db,
            "-P",
            "workloada",
            "-p",
            "recordcount=2000",
            "-q",
            "--out",
            "load.json",
        ],
    );
    assert_eq!(l.code, 0, "{}", l.stderr);
    let r = yardstick(
        dir.path(),
        &[
            "run",
            "--db",
            &db,
            "-P",
            "workloada",
            "-p",
            "recordcount=2000",
            "-p",
            "operationcount=5000",
            "-p",
            "readproportion=0.2",
            "-p",
            "updateproportion=0.2",
            "-p",
            "insertproportion=0.2",
            "-p",
            "scanproportion=0.2",
            "-p",
            "readmodifywriteproportion=0.2",
            "-p",
            "maxscanlength=10",
            "--threads",
            "2",
            "-q",
            "--out",
            "run.json",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let run = read_json(&dir.path().join("run.json"));
    assert_schema_valid(&run);
    for name in ["READ", "UPDATE", "INSERT", "SCAN", "READ-MODIFY-WRITE"] {
        assert!(count(&run, name) > 0, "{name} missing");
    }
    assert_eq!(run["totals"]["errors"], 0, "{}", run["warnings"]);
    let scan = op(&run, "SCAN");
    assert!(scan["scan_rows"]["max"].as_u64().unwrap() <= 10 && scan["rows"].as_u64().unwrap() > 0);
    // the RMW's inner read and update are recorded but counted once
    let sum: u64 = ["READ", "UPDATE", "INSERT", "SCAN", "READ-MODIFY-WRITE"]
        .iter()
        .map(|n| count(&run, n))
        .sum();
    assert_eq!(
        run["totals"]["operations"].as_u64().unwrap(),
        sum - 2 * count(&run, "READ-MODIFY-WRITE")
    );
    assert_eq!(run["totals"]["operations"], 5000);
    assert!(run["binding"]["disk_bytes_after"].as_u64().unwrap() > 2000 * 1000);
}

#[test]
fn dataintegrity_verifies_every_read_after_a_load() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}/t.db", dir.path().display());
    let common = ["-p", "recordcount=1000", "-p", "dataintegrity=true", "-q"];
    let l = yardstick(
        dir.path(),
        &[&["load", "--db", &db, "-P", "workloada"][..], &common].concat(),
    );
    assert_eq!(l.code, 0, "{}", l.stderr);
    let r = yardstick(
        dir.path(),
        &[
            &[
                "run",
                "--db",
                &db,
                "-P",
                "workloadf",
                "-p",
                "operationcount=3000",
                "--out",
                "r.json",
            ][..],
            &common,
        ]
        .concat(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let run = read_json(&dir.path().join("r.json"));
    assert!(op(&run, "READ")["statuses"]["ok"].as_u64().unwrap() > 0);
    assert!(
        op(&run, "READ")["statuses"].get("verify_failed").is_none(),
        "{}",
        run["operations"]
    );
}

#[test]
fn custom_mixes_need_nothing_but_properties() {
    let dir = tempfile::tempdir().unwrap();
    let r = yardstick(
        dir.path(),
        &[
            "run",
            "--db",
            "null://",
            "-p",
            "recordcount=1000",
            "-p",
            "operationcount=100000",
            "-p",
            "readproportion=0.05",
            "-p",
            "updateproportion=0.95",
            "-q",
            "--out",
            "r.json",
            "--seed",
            "3",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let run = read_json(&dir.path().join("r.json"));
    let updates = count(&run, "UPDATE") as f64 / 100_000.0;
    assert!((updates - 0.95).abs() < 0.005, "update share {updates}");
    assert_eq!(
        run["workload"], "workloada",
        "no -P means workloada's defaults"
    );
    assert_eq!(
        run["explicit_properties"]["updateproportion"]["source"],
        "-p"
    );
}

#[test]
fn the_same_seed_replays_the_same_operation_stream() {
    let dir = tempfile::tempdir().unwrap();
    let run = |seed: &str, out: &str| {
        let r = yardstick(
            dir.path(),
            &[
                "run",
                "--db",
                "null://",
                "-P",
                "workloadb",
                "-p",
                "recordcount=100000",
                "-p",
                "operationcount=20000",
                "--seed",
                seed,
                "-q",
                "--out",
                out,
            ],
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
        let v = read_json(&dir.path().join(out));
        assert_eq!(v["seed"].as_u64().unwrap().to_string(), seed);
        (count(&v, "READ"), count(&v, "UPDATE"))
    };
    let a = run("7", "a.json");
    assert_eq!(a, run("7", "b.json"));
    assert_ne!(a, run("8", "c.json"));
}

/// Every line of `text` as YCSB's own reports/report.py reads it:
/// (section, metric, value).
fn ycsb_lines(text: &str) -> Vec<(String, String, String)> {
    // the pattern of YCSB's reports/report.py
    let pattern =
        regex::Regex::new(r"^\[([^,]*)\],\s*(\d*[^\(,\d=]{3,}(=\-?\d+)?)[^,]*,\s*([0-9\.Ee]+)")
            .unwrap();
    text.lines()
        .map(|l| {
            let c = pattern
                .captures(l)
                .unwrap_or_else(|| panic!("YCSB's pattern does not read {l:?}"));
            // the whole value is read, not a prefix of it, but for a
            // negative exponent: Java writes a mean below 0.001 µs as
            // 2.0E-4, which YCSB's own pattern reads only up to the E
            let rest = &l[c.get(4).unwrap().end()..];
            assert!(
                rest.is_empty() || (rest.starts_with('-') && rest[1..].parse::<u32>().is_ok()),
                "{l:?}"
            );
            let metric = l.split(", ").nth(1).unwrap().to_string();
            (c[1].to_string(), metric, format!("{}{rest}", &c[4]))
        })
        .collect()
}

#[test]
fn ycsb_format_prints_ycsb_text_with_ycsbs_field_types() {
    let dir = tempfile::tempdir().unwrap();
    let r = yardstick(
        dir.path(),
        &[
            "run",
            "--db",
            "null://",
            "-P",
            "workloada",
            "-p",
            "operationcount=10000",
            "--format",
            "ycsb",
            "-q",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let lines = ycsb_lines(&r.stdout);
    for (section, metric, value) in &lines {
        let double = matches!(
            metric.as_str(),
            "Throughput(ops/sec)" | "AverageLatency(us)"
        );
        if double {
            // Java's Double.toString: a point, or an exponent
            assert!(
                value.contains('.') || value.contains('E'),
                "{metric} {value}"
            );
            value.parse::<f64>().unwrap();
        } else {
            assert!(
                value.parse::<u64>().is_ok(),
                "[{section}], {metric}: {value} is not an integer"
            );
        }
    }
    let has = |s: &str, m: &str| lines.iter().any(|(a, b, _)| a == s && b == m);
    for (s, m) in [
        ("OVERALL", "RunTime(ms)"),
        ("OVERALL", "Throughput(ops/sec)"),
        ("READ", "Operations"),
        ("READ", "AverageLatency(us)"),
        ("READ", "MinLatency(us)"),
        ("READ", "95thPercentileLatency(us)"),
        ("READ", "99thPercentileLatency(us)"),
        ("UPDATE", "Return=OK"),
    ] {
        assert!(has(s, m), "missing [{s}], {m} in\n{}", r.stdout);
    }
    // null:// answers in well under a microsecond: whole microseconds, as YCSB
    let min = lines
        .iter()
        .find(|(s, m, _)| s == "READ" && m == "MinLatency(us)")
        .unwrap();
    assert_eq!(min.2, "0");
    let ops: u64 = lines
        .iter()
        .filter(|(_, m, _)| m == "Operations")
        .map(|(_, _, v)| v.parse::<u64>().unwrap())
        .sum();
    assert_eq!(ops, 10_000);
    // a paced run adds the response time from the intended start
    let r = yardstick(
        dir.path(),
        &[
            "run",
            "--db",
            "null://",
            "-p",
            "operationcount=500",
            "--target",
            "1000",
            "--format",
            "ycsb",
            "-q",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let lines = ycsb_lines(&r.stdout);
    assert!(lines
        .iter()
        .any(|(s, m, _)| s == "Intended-READ" && m == "99thPercentileLatency(us)"));
}

#[test]
fn json_format_prints_the_result() {
    let dir = tempfile::tempdir().unwrap();
    let r = yardstick(
        dir.path(),
        &[
            "run",
            "--db",
            "null://",
            "-p",
            "recordcount=10",
            "-p",
            "operationcount=100",
            "--format",
            "json",
            "-q",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("stdout is the result JSON");
    assert_schema_valid(&v);
    assert!(r.stderr.contains("result: results/"));
}

#[test]
fn list_shows_bindings_workloads_and_properties() {
    let dir = tempfile::tempdir().unwrap();
    let r = yardstick(dir.path(), &["list"]);
    assert_eq!(r.code, 0);
    for s in [
        "null",
        "sqlite",
        "workloadf",
        "recordcount",
        "requestdistribution",
        "uniform",
        "insert.semantics",
    ] {
        assert!(r.stdout.contains(s), "list lacks {s}");
    }
    let p = yardstick(dir.path(), &["list", "properties"]);
    assert!(p.stdout.contains("zipfian.constant") && !p.stdout.contains("bindings"));
}
