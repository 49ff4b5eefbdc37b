//! End-to-end against the MariaDB test server (`scripts/services start mariadb`).
//! Built with `--features mysql`; in CI a missing server fails the tests.
use crate::common::*;
use crate::faults::*;

fn url() -> String {
    MARIADB.url()
}

fn available() -> bool {
    MARIADB.available()
}

#[test]
fn load_and_run_workload_a_with_recorded_server_variables_and_no_password() {
    if !available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // a table of its own, so this test does not meet other tests' rows
    let table = format!("table=e2e_{}", std::process::id());
    let u = url().replace("mysql://", "mariadb://");
    let (r, v) = load_and_run(dir.path(), &u, "workloada", &["-p", &table]);
    assert_eq!(v["binding"]["engine"]["name"], "mariadb");
    assert!(v["binding"]["engine"]["settings"]["innodb_flush_log_at_trx_commit"].is_string());
    assert_eq!(
        v["binding"]["url"],
        "mariadb://bench:***@127.0.0.1:53306/ycsb"
    );
    let everything = format!(
        "{}{}{}",
        r.stdout,
        r.stderr,
        std::fs::read_to_string(dir.path().join("r.json")).unwrap()
    );
    assert!(!everything.contains("benchpw"), "the password leaked");
}

#[test]
fn unusable_servers_stop_before_any_work_with_exit_code_2() {
    if !available() {
        return;
    }
    // bad URLs (wrong password, no server, no database): tests/bad_urls.rs
    let dir = tempfile::tempdir().unwrap();
    let u = url();
    let args = [
        "run",
        "--db",
        &u,
        "-p",
        "table=never_loaded",
        "-P",
        "workloada",
    ];
    assert_refused(
        dir.path(),
        &args,
        "table never_loaded does not exist",
        "benchpw",
    );
}

#[test]
fn a_server_killed_mid_run_gives_counted_errors_and_a_result() {
    if !available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let Some((mut server, port)) = private_mariadb(dir.path(), &[]) else {
        assert!(std::env::var_os("CI").is_none(), "MariaDB is needed in CI");
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let u = format!("mysql://root@127.0.0.1:{port}/mysql");
    let (r, v) = run_through_a_kill(
        work.path(),
        &u,
        &mut || {
            server.kill().unwrap();
            server.wait().unwrap();
        },
        &["--max-errors", "1000000"],
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
    let Some((mut server, port)) = private_mariadb(dir.path(), &[]) else {
        assert!(std::env::var_os("CI").is_none(), "MariaDB is needed in CI");
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let u = format!("mysql://root@127.0.0.1:{port}/mysql?timeout=2s");
    run_through_a_sigstop(work.path(), &u, server.id());
    server.kill().unwrap();
    server.wait().unwrap();
}
