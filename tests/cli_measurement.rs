//! End-to-end: open loop, warm-up, status line, Ctrl-C.
use crate::common::*;
use std::time::Duration;

#[test]
fn open_loop_measures_response_from_the_intended_start_and_service_from_the_actual_start() {
    let dir = tempfile::tempdir().unwrap();
    let r = yardstick(
        dir.path(),
        &[
            "run",
            "--db",
            "null://?latency=1ms",
            "-p",
            "recordcount=100",
            "--target",
            "200",
            "--duration",
            "2s",
            "-q",
            "--out",
            "r.json",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = read_json(&dir.path().join("r.json"));
    assert_eq!(v["runner"]["loop_mode"], "open");
    let read = op(&v, "READ");
    let (resp, serv) = (&read["response_time_ns"], &read["service_time_ns"]);
    assert!(
        serv["p50"].as_u64().unwrap() >= 1_000_000,
        "service includes the simulated 1 ms"
    );
    assert!(resp["p50"].as_u64().unwrap() >= serv["p50"].as_u64().unwrap());
    let ops = v["totals"]["operations"].as_u64().unwrap();
    assert!(
        (380..=401).contains(&ops),
        "200/s for 2 s gives 400 scheduled operations, got {ops}"
    );
    assert!(
        v["schedule"]["achieved_fraction_of_target"]
            .as_f64()
            .unwrap()
            > 0.9
    );
    assert!(
        r.stdout.contains("service time (from actual start)"),
        "{}",
        r.stdout
    );
}

#[test]
fn falling_behind_the_schedule_is_reported_not_hidden() {
    let dir = tempfile::tempdir().unwrap();
    // one slot at 2 ms per operation can do 500/s; ask for 2000/s
    let r = yardstick(
        dir.path(),
        &[
            "run",
            "--db",
            "null://?latency=2ms",
            "-p",
            "recordcount=100",
            "--target",
            "2000",
            "--duration",
            "2s",
            "-q",
            "--out",
            "r.json",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = read_json(&dir.path().join("r.json"));
    let s = &v["schedule"];
    assert!(s["late_operations"].as_u64().unwrap() > 100, "{s}");
    assert!(s["unstarted_operations"].as_u64().unwrap() > 1000, "{s}");
    assert!(s["final_lag_ns"].as_u64().unwrap() > 500_000_000, "{s}");
    let warnings = v["warnings"].to_string();
    assert!(warnings.contains("target rate missed"), "{warnings}");
    let read = op(&v, "READ");
    // coordinated omission: response times grow with the backlog, service times do not
    assert!(
        read["response_time_ns"]["p99"].as_u64().unwrap()
            > 10 * read["service_time_ns"]["p99"].as_u64().unwrap()
    );
    assert!(r.stdout.contains("WARNING: target rate missed"));
}

#[test]
fn warmup_is_run_and_excluded_from_statistics() {
    let dir = tempfile::tempdir().unwrap();
    let r = yardstick(
        dir.path(),
        &[
            "run",
            "--db",
            "null://?latency=100us",
            "-p",
            "recordcount=100",
            "--warmup",
            "1s",
            "--duration",
            "1s",
            "--status-interval",
            "250ms",
            "-q",
            "--out",
            "r.json",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = read_json(&dir.path().join("r.json"));
    let series = v["time_series"].as_array().unwrap();
    let warm: Vec<_> = series.iter().filter(|p| p["warmup"] == true).collect();
    assert!(warm.len() >= 3, "warm-up intervals are in the series");
    let warm_ops: u64 = warm.iter().map(|p| p["ops"].as_u64().unwrap()).sum();
    assert_eq!(v["totals"]["warmup_operations"].as_u64().unwrap(), warm_ops);
    let measured: u64 = series
        .iter()
        .filter(|p| p["warmup"] == false)
        .map(|p| p["ops"].as_u64().unwrap())
        .sum();
    assert_eq!(v["totals"]["operations"].as_u64().unwrap(), measured);
    assert!(warm_ops > 1000 && measured > 1000);
    let elapsed = v["elapsed_s"].as_f64().unwrap();
    assert!(
        (0.95..1.5).contains(&elapsed),
        "measured time excludes warm-up: {elapsed}"
    );
}

#[test]
fn status_line_prints_one_line_per_interval_when_not_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let r = yardstick(
        dir.path(),
        &[
            "run",
            "--db",
            "null://?latency=50us",
            "-p",
            "recordcount=100",
            "--duration",
            "1s",
            "--status-interval",
            "200ms",
            "--out",
            "r.json",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let lines: Vec<&str> = r.stderr.lines().filter(|l| l.starts_with("[run")).collect();
    assert!((4..=7).contains(&lines.len()), "{lines:?}");
    assert!(
        lines
            .iter()
            .all(|l| l.contains("ops/s") && l.contains("READ p50") && l.contains('%')),
        "{lines:?}"
    );
    assert!(
        !r.stderr.contains('\r'),
        "no carriage returns outside a terminal"
    );
}

#[test]
fn ctrl_c_stops_the_run_and_writes_the_partial_result() {
    let dir = tempfile::tempdir().unwrap();
    let code = interrupted(
        dir.path(),
        &[
            "run",
            "--db",
            "null://?latency=100us",
            "-p",
            "recordcount=100",
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
    assert_eq!(v["interrupted"], true);
    assert_eq!(v["complete"], false);
    assert!(v["totals"]["operations"].as_u64().unwrap() > 100);
    assert!(v["elapsed_s"].as_f64().unwrap() < 10.0);
    assert!(v["warnings"].to_string().contains("partial result"));
    assert_schema_valid(&v);
}

#[test]
fn threads_and_in_flight_slots_share_the_operation_count_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let r = yardstick(
        dir.path(),
        &[
            "run",
            "--db",
            "null://?latency=20us",
            "-p",
            "operationcount=10001",
            "--threads",
            "2",
            "--concurrency",
            "4",
            "-q",
            "--out",
            "r.json",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = read_json(&dir.path().join("r.json"));
    assert_eq!(v["runner"]["threads"], 2);
    assert_eq!(v["runner"]["concurrency"], 4);
    assert_eq!(v["totals"]["operations"], 10001);
}

#[test]
fn the_time_series_counts_missing_keys_apart_from_failures() {
    // nothing loaded: every read misses
    let dir = tempfile::tempdir().unwrap();
    let r = yardstick(
        dir.path(),
        &[
            "run",
            "--db",
            "null://?store=memory",
            "-P",
            "workloadc",
            "-p",
            "recordcount=100",
            "-p",
            "operationcount=500",
            "-q",
            "--out",
            "r.json",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = read_json(&dir.path().join("r.json"));
    assert_schema_valid(&v);
    let sum = |field: &str| -> u64 {
        v["time_series"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p[field].as_u64().unwrap())
            .sum()
    };
    assert_eq!(sum("not_found"), 500);
    assert_eq!(sum("errors"), 0, "a missing key is not a failure");
    assert_eq!(op(&v, "READ")["statuses"]["not_found"], 500);
}

#[test]
fn the_slots_of_one_thread_overlap_their_simulated_latency() {
    let _quiet = quiet_machine();
    let dir = tempfile::tempdir().unwrap();
    for pacing in ["sleep", "spin"] {
        // four slots of one thread could serve 4,000 ops/s at 1 ms: at half
        // that, no operation should wait for another
        let r = yardstick(
            dir.path(),
            &[
                "run",
                "--db",
                "null://?latency=1ms",
                "-p",
                "recordcount=100",
                "-p",
                &format!("pacing={pacing}"),
                "--threads",
                "1",
                "--concurrency",
                "4",
                "--target",
                "2000",
                "--duration",
                "2s",
                "-q",
                "--out",
                "n.json",
            ],
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
        let v = read_json(&dir.path().join("n.json"));
        assert_eq!(v["properties"]["pacing"], pacing);
        // one slot at a time could serve 1,000 ops/s: the schedule would fall
        // seconds behind (p50 2.3 s before the slots overlapped); on an idle
        // machine p50 is within 1% of 1 ms, with room here for a busy one
        let p50 = op(&v, "READ")["response_time_ns"]["p50"].as_f64().unwrap();
        assert!(
            (1_000_000.0..=10_000_000.0).contains(&p50),
            "{pacing}: response p50 {p50} ns against a 1 ms service time"
        );
        assert!(v["totals"]["ops_per_sec"].as_f64().unwrap() > 1800.0);
        // spinning for the schedule is CPU, but not work, so the client is
        // neither busy nor saturated by it
        let limited = &v["client"]["limited"];
        let busy = limited["worker_busy"].as_array().unwrap();
        assert_eq!(busy.len(), 1);
        assert!(busy[0].as_f64().unwrap() < 0.5, "{pacing}: {limited}");
        assert!(
            limited["cpu_of_usable"].as_f64().unwrap() < 0.5,
            "{pacing}: {limited}"
        );
        if pacing == "sleep" {
            // and by default the waits sleep: the thread is mostly idle
            let cores = v["client"]["cpu_cores_used"].as_f64().unwrap();
            assert!(cores < 0.5, "sleeping waits used {cores} cores");
        }
    }
    // a spelling the runner does not know is refused, naming the choices
    let r = yardstick(
        dir.path(),
        &["run", "--db", "null://", "-p", "pacing=busy", "-q"],
    );
    assert_ne!(r.code, 0);
    assert!(
        r.stderr.contains("pacing") && r.stderr.contains("spin"),
        "{}",
        r.stderr
    );
}

#[test]
fn until_ends_a_steady_run_once_its_interval_is_narrow_and_says_when_it_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let run = |until: &str, duration: &str, out: &str| {
        let r = yardstick(
            dir.path(),
            &[
                "run",
                "--db",
                "null://",
                "-p",
                "recordcount=100",
                // paced, so that a busy machine does not make the rate noisy
                "--target",
                "2000",
                "--until",
                until,
                "--duration",
                duration,
                "--status-interval",
                "100ms",
                "-q",
                "--out",
                out,
            ],
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
        (r, read_json(&dir.path().join(out)))
    };
    let (r, v) = run("ci<5%", "60s", "u.json");
    assert_schema_valid(&v);
    let c = &v["convergence"];
    assert_eq!(c["reached"], true, "{c}");
    assert_eq!(v["complete"], true);
    let elapsed = v["elapsed_s"].as_f64().unwrap();
    assert!(
        elapsed < 30.0,
        "stopped once converged, not at 60 s: {elapsed}"
    );
    let e = &c["estimates"][0];
    assert_eq!(e["metric"], "throughput");
    assert!(e["relative"].as_f64().unwrap() < 0.05, "{e}");
    assert!(e["intervals"].as_u64().unwrap() >= 10, "{e}");
    assert!(c["method"].as_str().unwrap().contains("effective"));
    assert!(
        r.stdout.contains("until throughput ci<5%: reached"),
        "{}",
        r.stdout
    );
    // a bound no run meets in 1.5 s: the run goes to its limit and says so
    let (_, v) = run("ci<0.001%,p99 ci<0.001%", "1500ms", "n.json");
    assert_schema_valid(&v);
    assert_eq!(v["convergence"]["reached"], false);
    assert!(v["elapsed_s"].as_f64().unwrap() >= 1.4);
    let warned = v["warnings"].as_array().unwrap().iter().any(|w| {
        w.as_str()
            .unwrap()
            .contains("was not reached before the run's limit")
    });
    assert!(warned, "{}", v["warnings"]);
}

#[test]
fn until_ends_a_suites_repetitions_once_they_converged() {
    let dir = tempfile::tempdir().unwrap();
    // 1 ms per operation on one thread: about 1,000 ops/s every time
    let suite = |until: &str, out: &str| {
        let r = yardstick(
            dir.path(),
            &[
                "suite",
                "ycsb",
                "--db",
                "null://?latency=1ms",
                "--only",
                "load,c",
                "--records",
                "100",
                "--repeat",
                "4",
                "--until",
                until,
                "--duration",
                "1s",
                "--warmup",
                "0s",
                "--threads",
                "1",
                "--out-dir",
                out,
            ],
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
        (r, read_json(&dir.path().join(out).join("index.json")))
    };
    let statuses = |index: &serde_json::Value| -> Vec<(u64, String)> {
        index["steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                (
                    s["repetition"].as_u64().unwrap(),
                    s["status"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    let (r, index) = suite("ci<25%", "wide");
    assert_matches_schema(&index, "suite-index.schema.json");
    assert!(
        r.stderr.contains("converged after 3 repetitions"),
        "{}",
        r.stderr
    );
    let s = statuses(&index);
    assert!(
        s.iter()
            .filter(|(rep, _)| *rep <= 3)
            .all(|(_, st)| st == "ok"),
        "{s:?}"
    );
    assert!(
        s.iter()
            .filter(|(rep, _)| *rep == 4)
            .all(|(_, st)| st == "converged"),
        "{s:?}"
    );
    assert!(
        index["until"].as_str().unwrap().contains("Student-t"),
        "{}",
        index["until"]
    );
    // the summary covers the three repetitions that ran
    assert_eq!(
        index["summary"][0]["ops_per_sec"]["n"], 3,
        "{}",
        index["summary"]
    );
    // a bound no real series meets: every repetition runs
    let (_, index) = suite("ci<0.0001%", "narrow");
    assert!(statuses(&index).iter().all(|(_, st)| st == "ok"));
}

#[test]
fn the_result_and_the_summary_give_the_processs_peak_memory() {
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
            "operationcount=20000",
            "--out",
            "m.json",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = read_json(&dir.path().join("m.json"));
    let peak = v["client"]["peak_rss_bytes"]
        .as_u64()
        .expect("peak_rss_bytes");
    // the binary alone maps megabytes; a null run holds far below a GiB
    assert!((1 << 20..1 << 30).contains(&peak), "peak RSS {peak} bytes");
    let mib = format!("peak memory {:.1} MiB", peak as f64 / 1048576.0);
    assert!(r.stdout.contains(&mib), "{mib} not in {}", r.stdout);
}
