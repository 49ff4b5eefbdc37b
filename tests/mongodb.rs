//! End-to-end against the MongoDB-protocol test server. The test peer is
//! FerretDB v1 over SQLite (`scripts/services start ferretdb`), not mongod.
use crate::common::*;
use crate::faults::*;

fn base() -> String {
    FERRETDB.url()
}

fn available() -> bool {
    FERRETDB.available()
}

#[test]
fn batch_load_then_workload_a_with_the_write_concern_recorded() {
    if !available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let u = format!(
        "{}/e2e_{}?w=1",
        base().rsplit_once('/').unwrap().0,
        std::process::id()
    );
    let l = yardstick(
        dir.path(),
        &[
            "load",
            "--db",
            &u,
            "-P",
            "workloada",
            "-p",
            "recordcount=600",
            "--batch",
            "250",
            "-q",
            "--out",
            "l.json",
        ],
    );
    assert_eq!(l.code, 0, "{}", l.stderr);
    assert_eq!(
        op(&read_json(&dir.path().join("l.json")), "BATCH-INSERT")["rows"],
        600
    );
    let r = yardstick(
        dir.path(),
        &[
            "run",
            "--db",
            &u,
            "-P",
            "workloada",
            "-p",
            "recordcount=600",
            "-p",
            "operationcount=600",
            "--threads",
            "2",
            "--concurrency",
            "2",
            "-q",
            "--out",
            "r.json",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = read_json(&dir.path().join("r.json"));
    assert_schema_valid(&v);
    assert_eq!(v["totals"]["errors"], 0, "{}", v["warnings"]);
    assert_eq!(v["binding"]["engine"]["name"], "ferretdb");
    assert!(v["binding"]["engine"]["settings"]["write_concern"]
        .as_str()
        .unwrap()
        .contains("Nodes(1)"));
}

#[test]
fn unloaded_collection_and_dead_server_stop_before_any_work() {
    if !available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let never = format!(
        "{}/never_{}",
        base().rsplit_once('/').unwrap().0,
        std::process::id()
    );
    for (db, expect) in [
        (never.as_str(), "collection usertable does not exist"),
        (
            "mongodb://127.0.0.1:1/ycsb?serverSelectionTimeoutMS=1000",
            "cannot connect to MongoDB at 127.0.0.1:1",
        ),
    ] {
        let r = yardstick(dir.path(), &["run", "--db", db, "-P", "workloada"]);
        assert_eq!(r.code, 2, "{}", r.stderr);
        assert!(r.stderr.contains(expect), "{}", r.stderr);
    }
}

/// A FerretDB of its own (built by scripts/services) on SQLite under `dir`.
fn private_ferretdb(dir: &std::path::Path) -> (std::process::Child, u16) {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/services");
    // runs: scripts/services
    let out = std::process::Command::new(&script)
        .arg("ferretdb-binary")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bin = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let port = free_port();
    let args = strings(&[
        "-listen-addr",
        &format!("127.0.0.1:{port}"),
        "-sqlite-dir",
        dir.join("db").to_str().unwrap(),
    ]);
    // runs: ferretdb, built by scripts/services
    let server = spawn_server(&bin, &args, port).expect("FerretDB starts");
    (server, port)
}

#[test]
fn a_server_killed_mid_run_gives_counted_errors_and_a_result() {
    if !available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (mut server, port) = private_ferretdb(dir.path());
    let u = format!("mongodb://127.0.0.1:{port}/kill?serverSelectionTimeoutMS=500");
    let (r, v) = run_through_a_kill(
        dir.path(),
        &u,
        &mut || {
            server.kill().unwrap();
            server.wait().unwrap();
        },
        &[],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_errors_counted(&v);
}

#[test]
fn a_server_stalled_at_the_end_ends_the_run_in_time_and_says_so() {
    if !available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (mut server, port) = private_ferretdb(dir.path());
    let u = format!("mongodb://127.0.0.1:{port}/stall?timeout=2s");
    run_through_a_sigstop(dir.path(), &u, server.id());
    server.kill().unwrap();
    server.wait().unwrap();
}

#[test]
fn tls_with_the_test_ca_through_the_drivers_url_options() {
    if !available() {
        return;
    }
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/services");
    // runs: scripts/services
    let out = std::process::Command::new(&script)
        .arg("ferretdb-binary")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bin = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let ca = yardstick_bindings::testing::test_ca();
    let tls = std::path::Path::new(&ca).parent().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (plain, port) = (free_port(), free_port());
    let args = strings(&[
        "-listen-addr",
        &format!("127.0.0.1:{plain}"),
        "-tls-listen-addr",
        &format!("127.0.0.1:{port}"),
        "-tls-cert",
        tls.join("server.crt").to_str().unwrap(),
        "-tls-key",
        tls.join("server.key").to_str().unwrap(),
        "-sqlite-dir",
        dir.path().join("db").to_str().unwrap(),
    ]);
    // runs: ferretdb, built by scripts/services
    let mut server = spawn_server(&bin, &args, port).expect("FerretDB starts");
    let u = format!("mongodb://127.0.0.1:{port}/tlsdb?tls=true&tlsCAFile={ca}");
    let small = ["-p", "recordcount=200", "-q"];
    let mut load = vec!["load", "--db", &u, "-P", "workloadc"];
    load.extend(small);
    let l = yardstick(dir.path(), &load);
    assert_eq!(l.code, 0, "{}", l.stderr);
    let mut run = vec![
        "run",
        "--db",
        &u,
        "-P",
        "workloadc",
        "-p",
        "operationcount=300",
        "--out",
        "r.json",
    ];
    run.extend(small);
    let r = yardstick(dir.path(), &run);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = read_json(&dir.path().join("r.json"));
    assert_eq!(v["totals"]["errors"], 0, "{}", v["warnings"]);
    assert_eq!(v["binding"]["engine"]["settings"]["tls"], "true");
    let _ = server.kill();
    let _ = server.wait();
}
