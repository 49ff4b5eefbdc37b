//! End-to-end against the Cassandra test node (`scripts/services start cassandra`).
use crate::common::*;
use crate::faults::*;

fn base() -> String {
    CASSANDRA.url()
}

fn available() -> bool {
    CASSANDRA.available()
}

/// A keyspace of this test's own.
pub(crate) fn url(name: &str) -> String {
    format!(
        "{}/{name}_{}",
        base().rsplit_once('/').unwrap().0,
        std::process::id()
    )
}

#[test]
fn batch_load_of_3000_records_per_batch_then_workload_a_with_upserts() {
    if !available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let u = format!("{}?consistency=one", url("e2e"));
    let semantics = [
        "-p",
        "insert.semantics=upsert",
        "-p",
        "update.semantics=upsert",
    ];
    let mut load = vec![
        "load",
        "--db",
        &u,
        "-P",
        "workloada",
        "-p",
        "recordcount=9000",
        "--batch",
        "3000",
        "-q",
        "--out",
        "l.json",
    ];
    load.extend(semantics);
    let l = yardstick(dir.path(), &load);
    assert_eq!(l.code, 0, "{}", l.stderr);
    let v = read_json(&dir.path().join("l.json"));
    assert_schema_valid(&v);
    assert_eq!(op(&v, "BATCH-INSERT")["rows"], 9000);
    assert_eq!(v["semantics"]["insert"], "upsert");
    let mut run = vec![
        "run",
        "--db",
        &u,
        "-P",
        "workloada",
        "-p",
        "recordcount=9000",
        "-p",
        "operationcount=5000",
        "--threads",
        "2",
        "--concurrency",
        "4",
        "-q",
        "--out",
        "r.json",
    ];
    run.extend(semantics);
    let r = yardstick(dir.path(), &run);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = read_json(&dir.path().join("r.json"));
    assert_eq!(v["totals"]["errors"], 0, "{}", v["warnings"]);
    assert_eq!(v["binding"]["engine"]["name"], "cassandra");
    assert_eq!(v["binding"]["engine"]["settings"]["consistency"], "One");
    assert_eq!(op(&v, "READ")["statuses"]["ok"], count(&v, "READ"));
}

#[test]
fn missing_keyspace_and_dead_node_stop_before_any_work() {
    if !available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let never = url("never_loaded");
    for (db, expect) in [
        (never.as_str(), "does not exist"),
        (
            "cql://127.0.0.1:1/ycsb",
            "cannot connect to Cassandra at 127.0.0.1:1",
        ),
    ] {
        let r = yardstick(dir.path(), &["run", "--db", db, "-P", "workloada"]);
        assert_eq!(r.code, 2, "{}", r.stderr);
        assert!(r.stderr.contains(expect), "{}", r.stderr);
    }
    assert!(results_in(dir.path()).is_empty());
}

#[test]
fn a_node_stalled_at_the_end_then_killed_mid_run_gives_counted_errors_and_results() {
    if !available() {
        return;
    }
    let ports = [free_port(), free_port(), free_port()];
    // a private node from the same cached jars
    let node = PrivateServer::start(
        "cassandra-node",
        &ports.iter().map(|p| p.to_string()).collect::<Vec<_>>(),
        ports[0],
    );
    let work = tempfile::tempdir().unwrap();
    // first stopped (SIGSTOP) at the end of a run and continued: one node
    // start for both faults
    let u = format!("cql://127.0.0.1:{}/stalltest?timeout=2s", ports[0]);
    run_through_a_sigstop(work.path(), &u, node.pid());
    let u = format!("cql://127.0.0.1:{}/killtest", ports[0]);
    let (r, v) = run_through_a_kill(work.path(), &u, &mut || node.kill(), &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_errors_counted(&v);
}
