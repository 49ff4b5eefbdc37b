//! Observation end to end: every phase keeps the host's, the server's
//! processes' and the database's series beside its own, `--observe off`
//! keeps none, and bad observation input is one warning, never a failed run.
use crate::common::*;
use serde_json::Value;

pub(crate) fn series<'a>(v: &'a Value, name: &str) -> &'a Value {
    &v["observation"]["series"][name]
}

pub(crate) fn source<'a>(v: &'a Value, starts: &str) -> &'a Value {
    v["observation"]["sources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"].as_str().unwrap().starts_with(starts))
        .unwrap_or_else(|| panic!("no source {starts}: {}", v["observation"]["sources"]))
}

#[test]
fn a_run_keeps_the_hosts_series_aligned_with_its_own_intervals() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}/o.db", dir.path().display());
    let (_, v) = load_and_run(
        dir.path(),
        &db,
        "workloada",
        &["--status-interval", "200ms"],
    );
    let o = &v["observation"];
    let client: Vec<i64> = v["time_series"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["index"].as_i64().unwrap())
        .collect();
    let observed: Vec<i64> = o["index"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i.as_i64().unwrap())
        .collect();
    assert!(
        !observed.is_empty() && observed.iter().all(|i| client.contains(i)),
        "{observed:?} {client:?}"
    );
    let busy = series(&v, "host.cpu.busy");
    assert_eq!(
        (busy["kind"].as_str(), busy["unit"].as_str()),
        (Some("counter"), Some("cores"))
    );
    assert_eq!(busy["values"].as_array().unwrap().len(), observed.len());
    assert!(busy["measured"].as_f64().unwrap() > 0.0);
    assert!(series(&v, "host.core0.user")["values"].is_array());
    assert!(series(&v, "host.memory.used")["max"].as_f64().unwrap() > 0.0);
    assert!(
        series(&v, "data.bytes")["max"].as_f64().unwrap() > 0.0,
        "the SQLite file's size"
    );
    assert_eq!(source(&v, "host")["state"], "ok");
    // the filesystem the engine's file is on
    let fs = &o["configuration"]["engine data"];
    assert!(fs["path"].as_str().unwrap().ends_with("o.db"), "{fs}");
    assert!(
        fs["filesystem"].is_string() && fs["mount"].is_string(),
        "{fs}"
    );
    let db = source(&v, "database");
    assert_eq!(db["state"], "unsupported");
    assert!(db["message"]
        .as_str()
        .unwrap()
        .contains("sqlite binding reports no statistics"));
    let per = &o["per_operation"];
    assert_eq!(per["operations"], 6000);
    assert!(per["host_cpu_us"].as_f64().unwrap() > 0.0);
    assert!(
        per["server_cpu_us"].is_null(),
        "no server process for an embedded engine"
    );
    // the load phase is observed too
    assert!(
        read_json(&dir.path().join("l.json"))["observation"]["series"]["host.cpu.busy"].is_object()
    );
}

#[test]
fn observe_off_keeps_no_observation_and_a_bad_value_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let r = yardstick(
        dir.path(),
        &[
            "run",
            "--db",
            "null://",
            "-p",
            "operationcount=2000",
            "--observe",
            "off",
            "-q",
            "--out",
            "r.json",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(read_json(&dir.path().join("r.json"))
        .get("observation")
        .is_none());
    let r = yardstick(
        dir.path(),
        &["run", "--db", "null://", "--observe", "maybe"],
    );
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains("'maybe' is not an observation setting: use on, off or an exporter's http://HOST:PORT/metrics"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_wrong_server_pid_is_one_warning_and_the_run_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let r = yardstick(
        dir.path(),
        &[
            "run",
            "--db",
            "null://",
            "-p",
            "operationcount=5000",
            "--server-pid",
            "999999999",
            "--data-dir",
            "/nonexistent-yardstick",
            "-q",
            "--out",
            "r.json",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let warned: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| l.contains("observation:"))
        .collect();
    assert_eq!(warned.len(), 2, "{}", r.stderr);
    assert!(
        warned[0].contains("--server-pid 999999999: no such process on this machine; give the pid"),
        "{warned:?}"
    );
    assert!(
        warned[1].contains("cannot read /nonexistent-yardstick")
            && warned[1].contains("--data-dir"),
        "{warned:?}"
    );
    let v = read_json(&dir.path().join("r.json"));
    assert_schema_valid(&v);
    assert_eq!(v["totals"]["operations"], 5000);
    assert!(v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w.as_str().unwrap().contains("--server-pid 999999999")));
    assert_eq!(source(&v, "data directory")["state"], "unavailable");
    assert_eq!(source(&v, "host")["state"], "ok");
}

#[test]
fn a_local_server_is_found_by_its_port_and_postgresql_reports_its_own_counters() {
    if !POSTGRES.available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let table = format!("table=observe_{}", std::process::id());
    let (_, v) = load_and_run(
        dir.path(),
        &POSTGRES.url(),
        "workloada",
        &[
            "-p",
            &table,
            "--status-interval",
            "250ms",
            "-p",
            "target=3000",
        ],
    );
    let process = source(&v, "server process postgres");
    assert_ne!(process["state"], "unavailable", "{process}");
    assert!(series(&v, "process.cpu")["measured"].as_f64().unwrap() > 0.0);
    assert!(
        series(&v, "process.processes")["max"].as_f64().unwrap() >= 2.0,
        "postmaster and backends"
    );
    let pg = source(&v, "postgresql");
    assert_ne!(pg["state"], "unavailable", "{pg}");
    // the backends publish their counts at most once a second (a window's
    // count can hold the load's last second, or leave out the run's), so
    // the count is of the order of the run's 6,000 transactions, not equal
    let commits = series(&v, "db.commits")["measured"].as_f64().unwrap();
    assert!(commits > 1000.0, "{commits}");
    assert!(
        series(&v, "db.wal_bytes")["measured"].as_f64().unwrap() > 0.0,
        "updates write WAL"
    );
    assert!(series(&v, "db.sessions.active")["kind"] == "gauge");
    let config = &v["observation"]["configuration"]["postgresql"];
    assert_eq!(config["port"], "55432", "{config}");
    assert!(config["version()"]
        .as_str()
        .unwrap()
        .starts_with("PostgreSQL"));
    let per = &v["observation"]["per_operation"];
    assert!(per["server_cpu_us"].as_f64().unwrap() > 0.0, "{per}");
    let text = serde_json::to_string(&v).unwrap();
    assert!(!text.contains("benchpw"), "the password leaked");
}

#[test]
fn redis_reports_its_info_and_its_settings_without_the_password() {
    if !REDIS.available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let url = format!("{}?prefix=observe{}:", REDIS.url(), std::process::id());
    let (r, v) = load_and_run(
        dir.path(),
        &url,
        "workloada",
        &["--status-interval", "250ms"],
    );
    let redis = source(&v, "redis");
    assert_ne!(redis["state"], "unavailable", "{redis}");
    // the server counted every command this run sent, and more (the observer's own)
    assert!(series(&v, "db.commands")["measured"].as_f64().unwrap() >= 6000.0);
    assert!(series(&v, "db.memory.used")["max"].as_f64().unwrap() > 0.0);
    assert!(series(&v, "db.keys")["max"].as_f64().unwrap() >= 2000.0);
    let config = &v["observation"]["configuration"]["redis"];
    assert_eq!(config["requirepass"], "***", "{config}");
    assert!(config["maxmemory-policy"].is_string());
    assert!(
        series(&v, "process.cpu")["measured"].as_f64().unwrap() > 0.0,
        "redis-server found by its port"
    );
    let all = format!(
        "{}{}{}",
        r.stdout,
        r.stderr,
        serde_json::to_string(&v).unwrap()
    );
    assert!(!all.contains("benchpw"), "the password leaked");
}

#[test]
fn compare_opens_with_what_differs_and_the_server_side_by_side() {
    let dir = tempfile::tempdir().unwrap();
    for (out, threads) in [("a.json", "1"), ("b.json", "2")] {
        let r = yardstick(
            dir.path(),
            &[
                "run",
                "--db",
                "null://",
                "-p",
                "operationcount=20000",
                "--threads",
                threads,
                "-q",
                "--out",
                out,
            ],
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
    }
    let r = yardstick(dir.path(), &["compare", "a.json", "b.json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("what differs (A -> B):"), "{}", r.stdout);
    assert!(
        r.stdout
            .contains("client threads x in flight: 1 x 1 -> 2 x 1"),
        "{}",
        r.stdout
    );
    let host = r
        .stdout
        .lines()
        .find(|l| l.starts_with("host CPU per op"))
        .unwrap_or_else(|| panic!("{}", r.stdout));
    assert!(host.contains("µs"), "{host}");
    // the throughput table follows
    assert!(r.stdout.contains("ALL"), "{}", r.stdout);
}

#[test]
fn mariadb_reports_its_status_and_says_when_performance_schema_is_off() {
    if !MARIADB.available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let table = format!("table=observe_{}", std::process::id());
    let (r, v) = load_and_run(
        dir.path(),
        &MARIADB.url(),
        "workloada",
        &["-p", &table, "--status-interval", "250ms"],
    );
    assert_ne!(source(&v, "mysql")["state"], "unavailable");
    // prepared statements: every operation is one execution
    assert!(
        series(&v, "db.com.stmt_execute")["measured"]
            .as_f64()
            .unwrap()
            >= 6000.0
    );
    assert!(
        series(&v, "db.buffer_pool.read_requests")["measured"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    let config = &v["observation"]["configuration"]["mysql"];
    assert!(config["innodb_buffer_pool_size"].is_string(), "{config}");
    assert!(r.stderr.contains("observation: mysql: performance_schema is off, so no wait events: start the server with performance_schema=ON"), "{}", r.stderr);
    assert!(!serde_json::to_string(&v).unwrap().contains("benchpw"));
}

#[test]
fn mariadb_with_performance_schema_on_reports_its_wait_events() {
    if !MARIADB.available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let Some((mut server, port)) = private_mariadb(
        dir.path(),
        &[
            "--performance-schema=ON",
            "--performance-schema-instrument=wait/%=ON",
        ],
    ) else {
        assert!(std::env::var_os("CI").is_none(), "MariaDB is needed in CI");
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let u = format!("mysql://root@127.0.0.1:{port}/mysql");
    let (r, v) = load_and_run(
        work.path(),
        &u,
        "workloada",
        &["-p", "table=observed", "--status-interval", "250ms"],
    );
    server.kill().unwrap();
    server.wait().unwrap();
    assert!(
        !r.stderr.contains("performance_schema is off"),
        "{}",
        r.stderr
    );
    let waits: Vec<&String> = v["observation"]["series"]
        .as_object()
        .unwrap()
        .keys()
        .filter(|k| k.starts_with("db.wait.wait/"))
        .collect();
    assert!(
        !waits.is_empty(),
        "no wait events: {}",
        v["observation"]["sources"]
    );
    // seconds waited, as performance_schema counts them
    assert_eq!(series(&v, waits[0])["kind"], "counter");
}

/// Kills a spawned exporter when the test ends, however it ends.
pub(crate) struct Killed(pub(crate) std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts exporter `program` on a free loopback port (`FLAG=127.0.0.1:PORT`
/// first, then `args`, with `env`): the running exporter and its port;
/// `None` where the program is missing outside CI.
pub(crate) fn exporter(
    program: &str,
    flag: &str,
    args: &[&str],
    env: &[(&str, &str)],
) -> Option<(Killed, u16)> {
    let port = free_port();
    let mut all = vec![format!("{flag}=127.0.0.1:{port}")];
    all.extend(strings(args));
    let child = spawn_server_with(program, &all, env, port)?;
    Some((Killed(child), port))
}

/// Within 15% (and 0.05) of each other: two readers of one kernel or
/// server counter, sampled milliseconds apart.
pub(crate) fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 0.15 * a.abs().max(b.abs()) + 0.05
}

#[test]
fn node_exporter_is_scraped_and_agrees_with_the_hosts_own_counters() {
    // runs: prometheus-node-exporter
    let Some((_exporter, port)) = exporter(
        "prometheus-node-exporter",
        "--web.listen-address",
        &[
            "--collector.disable-defaults",
            "--collector.cpu",
            "--collector.meminfo",
        ],
        &[],
    ) else {
        return;
    };
    let url = format!("http://127.0.0.1:{port}/metrics");
    let dir = tempfile::tempdir().unwrap();
    let r = yardstick(
        dir.path(),
        &[
            "run",
            "--db",
            "null://",
            "-p",
            "operationcount=1000000000",
            "--duration",
            "3s",
            "--status-interval",
            "500ms",
            "--observe",
            &url,
            "-q",
            "--out",
            "r.json",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = read_json(&dir.path().join("r.json"));
    assert_schema_valid(&v);
    assert_eq!(
        source(&v, "exporter http://127.0.0.1")["state"],
        "ok",
        "{}",
        v["observation"]["sources"]
    );
    let prefix = format!("remote.127.0.0.1:{port}");
    // yardstick's user is user and nice; its system, system, irq and softirq
    for (theirs, ours) in [
        (&["user", "nice"][..], "host.cpu.user"),
        (&["system", "irq", "softirq"][..], "host.cpu.system"),
    ] {
        let a: f64 = theirs
            .iter()
            .map(|mode| {
                series(&v, &format!("{prefix}.node_cpu_seconds_total.mode={mode}"))["measured"]
                    .as_f64()
                    .unwrap()
            })
            .sum();
        let b = series(&v, ours)["measured"].as_f64().unwrap();
        assert!(close(a, b), "{theirs:?} {a} vs {ours} {b}");
    }
    assert_eq!(
        series(&v, &format!("{prefix}.node_memory_MemTotal_bytes"))["kind"],
        "gauge"
    );
    let total = series(&v, &format!("{prefix}.node_memory_MemTotal_bytes"))["max"]
        .as_f64()
        .unwrap();
    assert_eq!(
        total,
        v["host"]["memory_bytes"].as_f64().unwrap(),
        "the same MemTotal"
    );
}

#[test]
fn postgres_exporter_agrees_with_the_servers_own_commit_count_and_a_dead_one_is_one_warning() {
    if !POSTGRES.available() {
        return;
    }
    let dsn = "postgresql://bench:benchpw@127.0.0.1:55432/ycsb?sslmode=disable";
    // runs: prometheus-postgres-exporter
    let Some((_exporter, port)) = exporter(
        "prometheus-postgres-exporter",
        "--web.listen-address",
        &[],
        &[("DATA_SOURCE_NAME", dsn)],
    ) else {
        return;
    };
    let url = format!("http://127.0.0.1:{port}/metrics");
    let dir = tempfile::tempdir().unwrap();
    let table = format!("table=exported_{}", std::process::id());
    let dead = format!("http://127.0.0.1:{}/metrics", free_port());
    let (r, v) = load_and_run(
        dir.path(),
        &POSTGRES.url(),
        "workloada",
        &[
            "-p",
            &table,
            "--status-interval",
            "500ms",
            "--observe",
            &url,
            "--observe",
            &dead,
        ],
    );
    let theirs = series(
        &v,
        &format!("remote.127.0.0.1:{port}.pg_stat_database_xact_commit.datname=ycsb"),
    )["measured"]
        .as_f64()
        .unwrap();
    let ours = series(&v, "db.commits")["measured"].as_f64().unwrap();
    assert!(
        close(theirs, ours),
        "the exporter's {theirs} commits, the server's {ours}"
    );
    let warned: Vec<&str> = r.stderr.lines().filter(|l| l.contains(&dead)).collect();
    assert_eq!(warned.len(), 1, "{}", r.stderr);
    assert!(
        warned[0].contains("check that the exporter runs"),
        "{warned:?}"
    );
    assert_eq!(source(&v, &format!("exporter {dead}"))["samples"], 0);
}

#[cfg(feature = "rocksdb")]
#[test]
fn rocksdb_keeps_its_files_per_level_and_compact_moves_them_down() {
    let dir = tempfile::tempdir().unwrap();
    // small memtables and no automatic compaction: the load leaves its
    // flushes in L0, as RocksDB's bulk-load recipe does
    let db = format!(
        "rocksdb://{}?write_buffer_size=64KiB&auto_compaction=false",
        dir.path().join("db").display()
    );
    let (_, before) = load_and_run(
        dir.path(),
        &db,
        "workloadc",
        &["--status-interval", "100ms"],
    );
    assert_eq!(source(&before, "rocksdb")["state"], "ok");
    let l0 = series(&before, "db.level.L0.files")["max"]
        .as_f64()
        .unwrap();
    assert!(l0 >= 2.0, "{}", before["observation"]["series"]);
    assert!(series(&before, "db.compaction.pending_bytes")["max"].is_number());
    let c = yardstick(dir.path(), &["compact", "--db", &db]);
    assert_eq!(c.code, 0, "{}", c.stderr);
    assert!(
        c.stdout.contains("compacted in ")
            && c.stdout.contains(&format!("files per level L0 {l0}")),
        "{}",
        c.stdout
    );
    let (_, after) = run_c_again(dir.path(), &db);
    assert_eq!(series(&after, "db.level.L0.files")["max"], 0.0);
    assert_one_error_with_code(
        &yardstick(dir.path(), &["compact", "--db", "null://"]),
        2,
        "has no manual compaction: compact works on rocksdb, leveldb and wiredtiger",
    );
}

/// Runs workload C again on what `load_and_run` loaded, into r2.json.
fn run_c_again(dir: &std::path::Path, db: &str) -> (Run, Value) {
    let r = yardstick(
        dir,
        &[
            "run",
            "--db",
            db,
            "-P",
            "workloadc",
            "-p",
            "recordcount=2000",
            "-p",
            "operationcount=6000",
            "--status-interval",
            "100ms",
            "-q",
            "--out",
            "r2.json",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = read_json(&dir.join("r2.json"));
    assert_schema_valid(&v);
    (r, v)
}
