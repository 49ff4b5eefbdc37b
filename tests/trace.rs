//! Traces and replay end to end: a paced run's trace holds every operation
//! with its times and plays back at its own rate (and faster) with the same
//! operations; a Redis MONITOR capture of a real run plays back against Redis.
use crate::common::*;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;

fn counts(v: &serde_json::Value) -> Vec<(String, u64)> {
    v["operations"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, o)| (k.clone(), o["count"].as_u64().unwrap()))
        .collect()
}

fn run_ok(dir: &Path, args: &[&str]) -> serde_json::Value {
    let r = yardstick(dir, args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let out = args.iter().skip_while(|a| **a != "--out").nth(1).unwrap();
    let v = read_json(&dir.join(out));
    assert_schema_valid(&v);
    v
}

#[test]
fn a_paced_run_traced_plays_back_at_its_times_and_faster() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let db = format!("sqlite://{}/t.db", d.display());
    let common = ["-P", "workloada", "-p", "recordcount=500", "-q"];
    let load = [&["load", "--db", &db, "--out", "l.json"][..], &common[..]].concat();
    run_ok(d, &load);
    let run = [
        &[
            "run",
            "--db",
            &db,
            "--target",
            "500",
            "-p",
            "operationcount=1500",
            "--concurrency",
            "2",
            "--trace",
            "run.trace",
            "--out",
            "r.json",
        ][..],
        &common[..],
    ]
    .concat();
    let v = run_ok(d, &run);
    let trace = &v["trace"];
    assert_eq!(trace["records"], 1500, "{trace}");
    assert_eq!(trace["complete"], true);
    let bytes = std::fs::metadata(d.join("run.trace")).unwrap().len();
    assert_eq!(trace["bytes"], bytes);

    // the file itself: every operation, its intended start on the 2 ms
    // schedule, its actual start at or after it, its key
    let t = yardstick_core::trace::read(&d.join("run.trace")).unwrap();
    assert_eq!(t.header.workload, "workloada");
    assert_eq!(t.header.database, "sqlite");
    assert_eq!(t.header.properties["recordcount"], "500");
    assert_eq!(t.ops.len(), 1500);
    let mut intended: Vec<u64> = t.ops.iter().map(|o| o.intended_ns.unwrap()).collect();
    intended.sort_unstable();
    for (i, at) in intended.iter().enumerate() {
        assert!(
            at.abs_diff(i as u64 * 2_000_000) < 1_000,
            "op {i} intended at {at} ns"
        );
    }
    assert!(t.ops.iter().all(|o| o.start_ns >= o.intended_ns.unwrap()));
    assert!(t
        .ops
        .iter()
        .all(|o| o.key.starts_with(b"user") && o.latency_ns > 0));
    let reads = t.ops.iter().filter(|o| o.op.name() == "READ").count() as u64;
    assert_eq!(reads, count(&v, "READ"));

    // played back against the same data: the same operations, all found,
    // over the same 3 s; four times as fast in a quarter of it
    let replay = |speed: &str, out: &str| {
        run_ok(
            d,
            &[
                "replay",
                "run.trace",
                "--db",
                &db,
                "--speed",
                speed,
                "-q",
                "--out",
                out,
            ],
        )
    };
    let p = replay("1", "p1.json");
    assert_eq!(counts(&p), counts(&v));
    assert_eq!(p["replayed"]["format"], "trace");
    assert_eq!(p["replayed"]["operations"], 1500);
    assert_eq!(p["totals"]["errors"], 0, "{}", p["warnings"]);
    let statuses = &p["operations"]["READ"]["statuses"];
    assert_eq!(statuses["ok"], count(&v, "READ"), "{statuses}");
    let span = p["replayed"]["span_s"].as_f64().unwrap();
    assert!((2.9..3.1).contains(&span), "{span}");
    // the pace is the trace's times over the speed: the replay's own target
    // is exact, and it is never run ahead of; a machine too busy to keep up
    // (the whole suite runs beside this test) may fall behind it, but then the
    // result says so as late operations, never as a quietly slower rate
    let rate = |r: &serde_json::Value| r["totals"]["ops_per_sec"].as_f64().unwrap();
    let paced = |r: &serde_json::Value, target: f64| {
        let s = &r["schedule"];
        let fraction = s["achieved_fraction_of_target"].as_f64().unwrap();
        let intended = rate(r) / fraction;
        assert!((intended - target).abs() < target * 0.01, "{intended} {s}");
        assert!(rate(r) < target * 1.1, "{}", rate(r));
        if rate(r) < target * 0.9 {
            assert!(s["late_operations"].as_u64().unwrap() > 0, "{s}");
            assert!(
                s["start_lag_ns"]["max"].as_u64().unwrap() > 1_000_000,
                "{s}"
            );
        }
    };
    paced(&p, 500.0);
    let fast = replay("4", "p4.json");
    assert_eq!(counts(&fast), counts(&v));
    paced(&fast, 2000.0);
    assert!(fast["elapsed_s"].as_f64().unwrap() < p["elapsed_s"].as_f64().unwrap() / 2.0);
}

/// Captures what a Redis server runs while `during` runs: MONITOR's lines.
fn monitor(port: u16, during: impl FnOnce()) -> String {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.write_all(b"MONITOR\r\n").unwrap();
    let mut r = BufReader::new(s.try_clone().unwrap());
    let mut ok = String::new();
    r.read_line(&mut ok).unwrap();
    assert_eq!(ok.trim(), "+OK");
    during();
    // a marker command ends the capture: everything before it has been sent
    let mut marker = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    marker.write_all(b"ECHO end-of-capture\r\n").unwrap();
    let mut capture = String::new();
    for line in r.lines() {
        let line = line.unwrap();
        if line.contains("end-of-capture") {
            break;
        }
        capture.push_str(&line);
        capture.push('\n');
    }
    capture
}

#[test]
fn a_redis_monitor_capture_plays_back_against_redis() {
    let port = free_port();
    let args = crate::faults::redis_unpersisted(port);
    let Some(mut server) = spawn_server("redis-server", &args, port) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let url = format!("redis://127.0.0.1:{port}");
    let common = ["-P", "workloada", "-p", "recordcount=200", "-q"];
    let mut run = serde_json::Value::Null;
    let capture = monitor(port, || {
        let load = [&["load", "--db", &url, "--out", "l.json"][..], &common[..]].concat();
        run_ok(d, &load);
        let args = [
            &[
                "run",
                "--db",
                &url,
                "-p",
                "operationcount=600",
                "--out",
                "r.json",
            ][..],
            &common[..],
        ]
        .concat();
        run = run_ok(d, &args);
    });
    std::fs::write(d.join("cap.txt"), &capture).unwrap();
    // played into an empty server: the inserts insert again
    let mut flush = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    flush.write_all(b"FLUSHALL\r\n").unwrap();
    let mut ok = String::new();
    BufReader::new(flush).read_line(&mut ok).unwrap();
    assert_eq!(ok.trim(), "+OK");
    let p = run_ok(
        d,
        &[
            "replay", "cap.txt", "--db", &url, "--speed", "2", "-q", "--out", "p.json",
        ],
    );
    let _ = server.kill();
    let _ = server.wait();
    let replayed = &p["replayed"];
    assert_eq!(replayed["format"], "redis-monitor");
    // the load's 200 inserts (a script's HSET with its index ZADD) and the
    // run's reads and updates, each once
    assert_eq!(count(&p, "INSERT"), 200, "{replayed}");
    assert_eq!(count(&p, "READ"), count(&run, "READ"));
    assert_eq!(count(&p, "UPDATE"), count(&run, "UPDATE"));
    assert_eq!(p["totals"]["errors"], 0, "{}", p["warnings"]);
    assert!(
        replayed["skipped"]["EVALSHA"].as_u64().unwrap() >= 200,
        "{replayed}"
    );
}
