//! End-to-end against the test HBase and its Thrift2 gateway
//! (`scripts/services start hbase`): a batch load and workload A through the
//! CLI with what the result records, workload E's scans, and a gateway killed
//! mid-run.
use crate::common::*;
use crate::faults::*;

pub(crate) const HBASE: TestServer = TestServer {
    name: "HBase",
    env: "YARDSTICK_HBASE_URL",
    url: "hbase://127.0.0.1:59090?info=127.0.0.1:56010",
    service: "hbase",
};

/// The test server in a namespace of this test's own, with `extra` options.
pub(crate) fn url(ns: &str, extra: &str) -> String {
    let base = HBASE.url();
    let (gateway, query) = base.split_once('?').unwrap_or((&base, ""));
    let gateway = gateway.trim_end_matches('/');
    let options: Vec<&str> = [query, extra]
        .into_iter()
        .filter(|q| !q.is_empty())
        .collect();
    format!(
        "{gateway}/{ns}_{}?{}",
        std::process::id(),
        options.join("&")
    )
}

#[test]
fn a_batch_load_then_workload_a_record_the_server_and_its_table() {
    if !HBASE.available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let u = url("e2e", "durability=async_wal");
    let load = yardstick(
        dir.path(),
        &[
            "load",
            "--db",
            &u,
            "-P",
            "workloada",
            "-p",
            "recordcount=3000",
            "-p",
            "insert.semantics=upsert",
            "--batch",
            "500",
            "-q",
            "--out",
            "load.json",
        ],
    );
    assert_eq!(load.code, 0, "{}", load.stderr);
    let v = read_json(&dir.path().join("load.json"));
    assert_schema_valid(&v);
    let batches = op(&v, "BATCH-INSERT");
    assert_eq!(batches["count"], 6);
    assert_eq!(batches["rows"], 3000);
    let engine = &v["binding"]["engine"];
    assert_eq!(engine["name"], "hbase");
    assert!(
        engine["version"].as_str().unwrap().starts_with("2."),
        "{engine}"
    );
    assert_eq!(engine["settings"]["durability"], "async_wal");
    assert_eq!(engine["settings"]["family"], "family");
    let run = yardstick(
        dir.path(),
        &[
            "run",
            "--db",
            &u,
            "-P",
            "workloada",
            "-p",
            "recordcount=3000",
            "-p",
            "operationcount=4000",
            "--threads",
            "2",
            "--concurrency",
            "2",
            "-q",
            "--out",
            "run.json",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let v = read_json(&dir.path().join("run.json"));
    assert_eq!(v["totals"]["operations"], 4000);
    assert_eq!(v["totals"]["errors"], 0, "{}", v["warnings"]);
    // every key was loaded: reads find them all
    assert_eq!(op(&v, "READ")["statuses"]["ok"], op(&v, "READ")["count"]);
}

#[test]
fn workload_e_scans_in_key_order_from_its_start_key() {
    if !HBASE.available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let u = url("scan", "");
    let load = yardstick(
        dir.path(),
        &[
            "load",
            "--db",
            &u,
            "-P",
            "workloade",
            "-p",
            "recordcount=1000",
            "-q",
        ],
    );
    assert_eq!(load.code, 0, "{}", load.stderr);
    let run = yardstick(
        dir.path(),
        &[
            "run",
            "--db",
            &u,
            "-P",
            "workloade",
            "-p",
            "recordcount=1000",
            "-p",
            "operationcount=500",
            "-q",
            "--out",
            "e.json",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let v = read_json(&dir.path().join("e.json"));
    assert_eq!(v["totals"]["errors"], 0, "{}", v["warnings"]);
    let scan = op(&v, "SCAN");
    // scans return up to maxscanlength (100) records; most return some
    assert!(scan["scan_rows"]["max"].as_u64().unwrap() <= 100, "{scan}");
    assert!(scan["scan_rows"]["mean"].as_f64().unwrap() > 10.0, "{scan}");
}

#[test]
fn a_gateway_stalled_at_the_end_then_killed_mid_run_gives_counted_errors_and_results() {
    if !HBASE.available() {
        return;
    }
    let port = free_port();
    // a private gateway to the test HBase, which the test kills
    let gateway = PrivateServer::start("hbase-gateway", &[port.to_string()], port);
    let work = tempfile::tempdir().unwrap();
    let base = HBASE.url();
    let info = base.split_once('?').map_or("", |(_, q)| q);
    let u = format!(
        "hbase://127.0.0.1:{port}/kill_{}?{info}",
        std::process::id()
    );
    // first stopped (SIGSTOP) at the end of a run and continued
    let stalled = format!(
        "hbase://127.0.0.1:{port}/stall_{}?{info}&timeout=2s",
        std::process::id()
    );
    run_through_a_sigstop(work.path(), &stalled, gateway.pid());
    let (r, v) = run_through_a_kill(work.path(), &u, &mut || gateway.kill(), &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_errors_counted(&v);
}
