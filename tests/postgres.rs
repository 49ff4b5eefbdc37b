//! End-to-end against the PostgreSQL test server (`scripts/services start postgres`).
//! In CI a missing server fails the tests.
use crate::common::*;
use crate::faults::*;
use std::time::{Duration, Instant};

fn url() -> String {
    POSTGRES.url()
}

fn available() -> bool {
    POSTGRES.available()
}

#[test]
fn load_and_run_workload_a_with_recorded_server_settings() {
    if !available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // a table of its own, so this test does not meet other tests' rows
    let table = format!("table=e2e_{}", std::process::id());
    let (r, v) = load_and_run(dir.path(), &url(), "workloada", &["-p", &table]);
    assert_eq!(v["binding"]["engine"]["name"], "postgresql");
    assert!(v["binding"]["engine"]["settings"]["synchronous_commit"].is_string());
    assert_eq!(
        v["binding"]["url"],
        "postgres://bench:***@127.0.0.1:55432/ycsb"
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
    // bad URLs (wrong password, no server): tests/bad_urls.rs
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
fn batch_load_with_copy_and_multi_row_insert_loads_every_record_once() {
    if !available() {
        return;
    }
    for mode in ["values", "copy"] {
        let dir = tempfile::tempdir().unwrap();
        let table = format!("table=e2e_batch_{mode}_{}", std::process::id());
        let u = format!("{}?batch={mode}", url());
        let common = [
            "-p",
            "recordcount=2500",
            "-p",
            &table,
            "-p",
            "dataintegrity=true",
        ];
        let mut load = vec![
            "load",
            "--db",
            &u,
            "-P",
            "workloadc",
            "--batch",
            "300",
            "--threads",
            "2",
            "-q",
            "--out",
            "l.json",
        ];
        load.extend(common);
        let l = yardstick(dir.path(), &load);
        assert_eq!(l.code, 0, "{}", l.stderr);
        assert!(
            l.stdout.contains("BATCH-INSERT: 2,500 records in"),
            "{}",
            l.stdout
        );
        let v = read_json(&dir.path().join("l.json"));
        assert_schema_valid(&v);
        assert_eq!(op(&v, "BATCH-INSERT")["rows"], 2500);
        assert_eq!(
            v["binding"]["engine"]["settings"]["batch"]
                .as_str()
                .unwrap()
                .starts_with("COPY"),
            mode == "copy"
        );
        // every record reads back with the value YCSB would have written
        let mut run = vec![
            "run",
            "--db",
            &u,
            "-P",
            "workloadc",
            "-p",
            "operationcount=3000",
            "-q",
            "--out",
            "r.json",
        ];
        run.extend(common);
        let r = yardstick(dir.path(), &run);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let v = read_json(&dir.path().join("r.json"));
        assert_eq!(
            op(&v, "READ")["statuses"]["ok"],
            3000,
            "{}",
            op(&v, "READ")["statuses"]
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let r = yardstick(
        dir.path(),
        &["run", "--db", &url(), "-P", "workloadc", "--batch", "10"],
    );
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("--batch applies to the load phase"),
        "{}",
        r.stderr
    );
}

/// A private PostgreSQL cluster for the kill test, so the shared server stays up.
struct PrivatePg {
    dir: tempfile::TempDir,
    bin: std::path::PathBuf,
    port: u16,
    fsync: String,
}

fn as_postgres(program: &std::path::Path, args: &[&str]) -> std::process::Output {
    let root = is_root();
    let mut c = if root {
        let mut c = std::process::Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(program);
        c
    } else {
        std::process::Command::new(program)
    };
    c.args(args).output().expect("runs")
}

impl PrivatePg {
    fn start() -> Option<PrivatePg> {
        Self::start_with("off")
    }

    /// A cluster with `fsync` on or off; `None` (outside CI only) when
    /// PostgreSQL's binaries are missing.
    fn start_with(fsync: &str) -> Option<PrivatePg> {
        let bin = std::fs::read_dir("/usr/lib/postgresql")
            .into_iter()
            .flatten()
            .filter_map(|e| e.ok())
            .map(|e| e.path().join("bin"))
            .max();
        let Some(bin) = bin else {
            assert!(
                std::env::var_os("CI").is_none(),
                "PostgreSQL's binaries are needed in CI"
            );
            eprintln!("skipped: PostgreSQL's binaries are not installed");
            return None;
        };
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        std::fs::create_dir(&data).unwrap();
        if is_root() {
            let ok = std::process::Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(dir.path())
                .status()
                .unwrap()
                .success();
            assert!(ok);
            std::process::Command::new("chmod")
                .args(["755"])
                .arg(dir.path())
                .status()
                .unwrap();
        }
        let d = data.to_str().unwrap();
        let init = as_postgres(
            &bin.join("initdb"),
            &["-D", d, "-U", "postgres", "--auth=trust"],
        );
        assert!(
            init.status.success(),
            "{}",
            String::from_utf8_lossy(&init.stderr)
        );
        let pg = PrivatePg {
            dir,
            bin,
            port: free_port(),
            fsync: fsync.to_string(),
        };
        pg.pg_start();
        Some(pg)
    }

    /// Starts the server (again: after a crash, it recovers first).
    fn pg_start(&self) {
        let d = self.dir.path().join("data");
        let d = d.to_str().unwrap();
        let opts = format!(
            "-p {} -c listen_addresses=127.0.0.1 -k {d} -c fsync={}",
            self.port, self.fsync
        );
        let log = format!("{d}/log");
        // after a kill -9 the old backends may take a moment to go
        for attempt in 0.. {
            let start = as_postgres(
                &self.bin.join("pg_ctl"),
                &["-D", d, "-w", "-l", &log, "-o", &opts, "start"],
            );
            if start.status.success() {
                break;
            }
            assert!(
                attempt < 20,
                "{} {}",
                String::from_utf8_lossy(&start.stderr),
                std::fs::read_to_string(&log).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(250));
        }
    }

    fn stop_immediately(&self) {
        let d = self.dir.path().join("data");
        as_postgres(
            &self.bin.join("pg_ctl"),
            &["-D", d.to_str().unwrap(), "-m", "immediate", "stop"],
        );
    }
}

impl PrivatePg {
    /// The postmaster's pid, from its pid file.
    fn postmaster_pid(&self) -> u32 {
        let file = self.dir.path().join("data/postmaster.pid");
        let text = std::fs::read_to_string(file).unwrap();
        text.lines().next().unwrap().parse().unwrap()
    }
}

impl Drop for PrivatePg {
    fn drop(&mut self) {
        self.stop_immediately();
    }
}

#[test]
fn a_server_stopped_mid_run_gives_counted_errors_and_a_result() {
    if !available() {
        return;
    }
    let Some(pg) = PrivatePg::start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let u = format!("postgres://postgres@127.0.0.1:{}/postgres", pg.port);
    let (r, v) = run_through_a_kill(dir.path(), &u, &mut || pg.stop_immediately(), &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_errors_counted(&v);
    assert_eq!(v["complete"], true);
}

#[test]
fn a_server_killed_9_and_restarted_mid_run_keeps_every_acknowledged_insert() {
    if !available() {
        return;
    }
    let Some(pg) = PrivatePg::start_with("on") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let u = format!(
        "postgres://postgres@127.0.0.1:{}/postgres?timeout=2s",
        pg.port
    );
    let (r, v) = run_through_a_kill(
        dir.path(),
        &u,
        &mut || {
            // the postmaster and every backend at once, then crash recovery
            signal_tree(pg.postmaster_pid(), libc::SIGKILL);
            std::thread::sleep(std::time::Duration::from_millis(300));
            pg.pg_start();
        },
        INSERTS_ONLY,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let ins = &v["inserts"];
    assert!(ins["acknowledged"].as_u64().unwrap() > 0, "{ins}");
    assert!(
        ins["unknown"].as_u64().unwrap() > 0,
        "the kill left inserts unanswered: {ins}"
    );
    assert!(ins["keys_file"].is_string(), "{ins}");
    let check = yardstick(dir.path(), &["verify", "--db", &u, "kill.json", "-q"]);
    assert_eq!(check.code, 0, "{}{}", check.stdout, check.stderr);
    let expect = format!(
        "{} acknowledged present, 0 lost, 0 with other values",
        ins["acknowledged"]
    );
    assert!(check.stdout.contains(&expect), "{}", check.stdout);
}

#[test]
fn a_server_stalled_at_the_end_ends_the_run_in_time_and_says_so() {
    if !available() {
        return;
    }
    let Some(pg) = PrivatePg::start() else {
        return;
    };
    let pid = pg.postmaster_pid();
    let dir = tempfile::tempdir().unwrap();
    let u = format!(
        "postgres://postgres@127.0.0.1:{}/postgres?timeout=2s",
        pg.port
    );
    run_through_a_sigstop(dir.path(), &u, pid);
}

#[test]
fn tpcc_with_the_server_stalled_at_the_end_ends_in_time_and_skips_the_checks() {
    if !available() {
        return;
    }
    let Some(pg) = PrivatePg::start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let u = format!(
        "postgres://postgres@127.0.0.1:{}/postgres?timeout=2s",
        pg.port
    );
    let l = yardstick(
        dir.path(),
        &["tpcc", "load", "--db", &u, "--warehouses", "1", "-q"],
    );
    assert_eq!(l.code, 0, "{}", l.stderr);
    let pid = pg.postmaster_pid();
    let started = Instant::now();
    let run = {
        let (dir, u) = (dir.path().to_path_buf(), u.clone());
        std::thread::spawn(move || {
            yardstick(
                &dir,
                &[
                    "tpcc",
                    "run",
                    "--db",
                    &u,
                    "--warehouses",
                    "1",
                    "--terminals",
                    "2",
                    "--duration",
                    "3s",
                    "-q",
                    "--out",
                    "stall.json",
                ],
            )
        })
    };
    std::thread::sleep(Duration::from_secs(2));
    signal_tree(pid, libc::SIGSTOP);
    let r = run.join().unwrap();
    let took = started.elapsed();
    signal_tree(pid, libc::SIGCONT);
    assert!(took < Duration::from_secs(30), "the run took {took:?}");
    assert_eq!(r.code, 1, "an incomplete result: {}", r.stderr);
    let v = read_json(&dir.path().join("stall.json"));
    assert_eq!(v["complete"], false);
    let why = v["incomplete_reason"].as_str().unwrap_or("");
    assert!(why.contains("stopped answering at the end"), "{why}");
    assert!(
        v["elapsed_s"].as_f64().unwrap() <= 6.0,
        "{}",
        v["elapsed_s"]
    );
    assert_eq!(
        v["checks"].as_array().map_or(0, Vec::len),
        0,
        "checks skipped"
    );
    let errors: u64 = v["transactions"]
        .as_object()
        .unwrap()
        .values()
        .map(|t| t["errors"].as_u64().unwrap())
        .sum();
    assert!(errors > 0, "{}", v["transactions"]);
    let samples = v["error_samples"].to_string();
    assert!(samples.contains("no answer within 2s"), "{samples}");
}

#[test]
fn a_server_killed_and_restarted_by_at_shows_in_the_availability_figures() {
    if !available() {
        return;
    }
    let Some(pg) = PrivatePg::start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let u = format!(
        "postgres://postgres@127.0.0.1:{}/postgres?timeout=2s",
        pg.port
    );
    let l = yardstick(
        d,
        &[
            "load",
            "--db",
            &u,
            "-P",
            "workloada",
            "-p",
            "recordcount=500",
            "-q",
        ],
    );
    assert_eq!(l.code, 0, "{}", l.stderr);
    // the restart as the fault's shell runs it: pg_ctl, retried while the
    // killed server's backends go
    let data = pg.dir.path().join("data");
    let opts = format!(
        "-p {} -c listen_addresses=127.0.0.1 -k {} -c fsync=off",
        pg.port,
        data.display()
    );
    let pg_ctl = format!(
        "{}{} -D {} -w -l {}/log -o '{opts}' start",
        if is_root() {
            "runuser -u postgres -- "
        } else {
            ""
        },
        pg.bin.join("pg_ctl").display(),
        data.display(),
        data.display()
    );
    std::fs::write(
        d.join("restart.sh"),
        format!("for i in $(seq 1 60); do {pg_ctl} && exit 0; sleep 0.25; done; exit 1\n"),
    )
    .unwrap();
    let fault = format!(
        "kill -9 {}; sleep 1; sh {}",
        pg.postmaster_pid(),
        d.join("restart.sh").display()
    );
    let r = yardstick(
        d,
        &[
            // paced well below capacity, so only the fault moves throughput
            "run",
            "--db",
            &u,
            "-P",
            "workloada",
            "-p",
            "recordcount=500",
            "--threads",
            "2",
            "--target",
            "3000",
            "--duration",
            "10s",
            "--at",
            "3s",
            &fault,
            "--out",
            "run.json",
        ],
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let v = read_json(&d.join("run.json"));
    assert_schema_valid(&v);
    let f = &v["faults"][0];
    assert_eq!(f["exit_code"], 0, "the restart worked: {f}");
    let a = &f["availability"];
    eprintln!("fault: {}", serde_json::to_string_pretty(f).unwrap());

    assert!(a["baseline_ops_per_sec"].as_f64().unwrap() > 0.0, "{a}");
    assert!(a["failed_operations"].as_u64().unwrap() > 0, "{a}");
    let w = &a["error_window"];
    assert!(w["start_s"].as_f64().unwrap() >= 3.0, "{a}");
    assert!(
        a["recovery_s"].as_f64().is_some_and(|s| s > 0.0 && s < 7.0),
        "back within the run: {a}"
    );
    assert!(r.stdout.contains("back to 90% of"), "{}", r.stdout);
    // the report marks the fault on its time-series charts
    let rep = yardstick(d, &["report", "run.json", "-o", "r.html"]);
    assert_eq!(rep.code, 0, "{}", rep.stderr);
    let html = std::fs::read_to_string(d.join("r.html")).unwrap();
    assert!(
        html.contains("fault: kill -9"),
        "no fault mark in the report"
    );
}
