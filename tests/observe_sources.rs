//! The database sources read through a database's own interfaces
//! (Cassandra's virtual tables, etcd's metrics page, HBase's JMX bean) and
//! the MySQL and Redis exporters, against the real test servers: each
//! reports what the run did, and an exporter agrees with the server's own
//! counters as yardstick reads them.
use crate::common::*;
use crate::observe::{close, exporter, series, source};
use serde_json::Value;

/// The measured increase of counter `name`.
fn measured(v: &Value, name: &str) -> f64 {
    series(v, name)["measured"]
        .as_f64()
        .unwrap_or_else(|| panic!("no {name}: {}", v["observation"]["sources"]))
}

/// Loads 2000 records, then runs workload A at a steady 2,000 operations a
/// second for 3 s (so two readers of one counter, sampled milliseconds
/// apart, see nearly the same increase), with `extra` on the run.
fn paced_run(dir: &std::path::Path, url: &str, extra: &[&str]) -> Value {
    let base = [
        "--db",
        url,
        "-P",
        "workloada",
        "-p",
        "recordcount=2000",
        "-q",
    ];
    let mut load = vec!["load"];
    load.extend(base);
    // the load needs the run's table
    load.extend(
        extra
            .windows(2)
            .filter(|w| w[0] == "-p")
            .flat_map(|w| [w[0], w[1]]),
    );
    let l = yardstick(dir, &load);
    assert_eq!(l.code, 0, "{}", l.stderr);
    let mut run = vec!["run"];
    run.extend(base);
    run.extend([
        "--target",
        "2000",
        "--duration",
        "3s",
        "--status-interval",
        "500ms",
        "--out",
        "r.json",
    ]);
    run.extend(extra);
    let r = yardstick(dir, &run);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!r.stderr.contains("benchpw"));
    let v = read_json(&dir.join("r.json"));
    assert!(!serde_json::to_string(&v).unwrap().contains("benchpw"));
    v
}

#[test]
fn cassandra_reports_its_thread_pools_and_compactions_from_its_virtual_tables() {
    if !CASSANDRA.available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (_, v) = load_and_run(
        dir.path(),
        &crate::cql::url("observed"),
        "workloada",
        &["--status-interval", "500ms"],
    );
    let s = source(&v, "cassandra");
    assert!(s["state"] == "ok" || s["state"] == "partial", "{s}");
    // every request of the run went through the native transport pool
    let requests = measured(&v, "db.pool.requests.completed");
    assert!(
        requests >= 5000.0,
        "{requests} requests for 6000 operations"
    );
    assert!(measured(&v, "db.pool.mutation.completed") > 0.0);
    assert_eq!(series(&v, "db.pool.read.pending")["kind"], "gauge");
    assert!(series(&v, "db.compaction.running")["max"].is_number());
    assert!(series(&v, "db.disk.bytes")["max"].is_number());
    let config = &v["observation"]["configuration"]["cassandra"];
    assert!(config["concurrent_reads"].is_string(), "{config}");
    // the node's JVM is found by the port it listens on
    assert!(measured(&v, "process.cpu") > 0.0);
}

#[test]
fn etcd_reports_its_own_metrics_page() {
    if !ETCD.available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let url = format!("{}?prefix=observed{}/", ETCD.url(), std::process::id());
    let (_, v) = load_and_run(
        dir.path(),
        &url,
        "workloada",
        &["--status-interval", "500ms"],
    );
    let s = source(&v, "etcd");
    assert_eq!(s["state"], "ok", "{s}");
    // the run's 3,000 or so updates were proposals every member applied
    let committed = measured(&v, "db.etcd_server_proposals_committed_total");
    assert!(committed >= 2000.0, "{committed} proposals committed");
    // the test cluster runs with --unsafe-no-fsync: no WAL fsyncs, but the
    // backend still commits
    assert_eq!(
        measured(&v, "db.etcd_disk_wal_fsync_duration_seconds_count"),
        0.0
    );
    assert!(measured(&v, "db.etcd_disk_backend_commit_duration_seconds_count") > 0.0);
    assert_eq!(
        series(&v, "db.etcd_disk_wal_fsync_duration_seconds_sum")["kind"],
        "counter"
    );
    assert!(
        series(&v, "db.etcd_mvcc_db_total_size_in_bytes")["max"]
            .as_f64()
            .unwrap()
            > 0.0
    );
}

#[test]
fn hbase_reports_its_region_servers_bean_and_a_wrong_info_port_is_one_warning() {
    if !crate::hbase::HBASE.available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let url = crate::hbase::url("observed", "");
    let v = paced_run(dir.path(), &url, &[]);
    let s = source(&v, "hbase");
    assert!(s["state"] == "ok" || s["state"] == "partial", "{s}");
    // the bean is refreshed every hbase.regionserver.metrics.period (1 s on
    // the test server): the run's reads and writes show in it
    let reads = measured(&v, "db.read_requests");
    assert!(
        reads > 0.0,
        "{reads} reads: {}",
        series(&v, "db.read_requests")
    );
    assert!(measured(&v, "db.write_requests") > 0.0);
    assert!(series(&v, "db.regions")["max"].as_f64().unwrap() >= 1.0);
    assert_eq!(series(&v, "db.memstore.bytes")["kind"], "gauge");
    // an info port nothing listens on: one warning that names the option
    let (gateway, _) = url.split_once('?').unwrap();
    let wrong = format!("{gateway}?info=127.0.0.1:{}", free_port());
    let r = yardstick(
        dir.path(),
        &[
            "run",
            "--db",
            &wrong,
            "-P",
            "workloadc",
            "-p",
            "recordcount=2000",
            "-p",
            "operationcount=500",
            "-q",
            "--out",
            "w.json",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let warned: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| l.contains("info=HOST:PORT"))
        .collect();
    assert!(!warned.is_empty(), "{}", r.stderr);
    assert!(!r.stderr.contains("panicked"));
}

#[test]
fn mysqld_exporter_agrees_with_the_servers_own_status() {
    if !MARIADB.available() {
        return;
    }
    let dsn = "bench:benchpw@(127.0.0.1:53306)/";
    // runs: prometheus-mysqld-exporter
    let Some((_exporter, port)) = exporter(
        "prometheus-mysqld-exporter",
        "--web.listen-address",
        &[],
        &[("DATA_SOURCE_NAME", dsn)],
    ) else {
        return;
    };
    let url = format!("http://127.0.0.1:{port}/metrics");
    let dir = tempfile::tempdir().unwrap();
    let table = format!("table=mysqld_exported_{}", std::process::id());
    let v = paced_run(
        dir.path(),
        &MARIADB.url(),
        &["-p", &table, "--observe", &url],
    );
    // the run's updates (the exporter's own queries read the buffer pool
    // hard, so its page reads are not the run's)
    let theirs = measured(
        &v,
        &format!("remote.127.0.0.1:{port}.mysql_global_status_commands_total.command=update"),
    );
    let ours = measured(&v, "db.com.update");
    assert!(ours >= 2000.0, "{ours} updates");
    assert!(
        close(theirs, ours),
        "the exporter's {theirs} updates, the server's {ours}"
    );
}

#[test]
fn redis_exporter_agrees_with_redis_info() {
    if !REDIS.available() {
        return;
    }
    // runs: prometheus-redis-exporter
    let Some((_exporter, port)) = exporter(
        "prometheus-redis-exporter",
        "-web.listen-address",
        &["-redis.addr", "redis://127.0.0.1:56379"],
        &[("REDIS_PASSWORD", "benchpw")],
    ) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let url = format!("{}?prefix=exported{}:", REDIS.url(), std::process::id());
    let metrics = format!("http://127.0.0.1:{port}/metrics");
    let v = paced_run(dir.path(), &url, &["--observe", &metrics]);
    let theirs = measured(
        &v,
        &format!("remote.127.0.0.1:{port}.redis_commands_processed_total"),
    );
    let ours = measured(&v, "db.commands");
    assert!(
        close(theirs, ours),
        "the exporter's {theirs} commands, INFO's {ours}"
    );
    assert!(ours >= 5000.0, "{ours} commands for 6,000 operations");
}

#[test]
fn myrocks_reports_its_files_per_level_beside_its_status() {
    if !MARIADB.available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let url = "mysql://bench:benchpw@127.0.0.1:53307/ycsb?engine=rocksdb";
    let table = format!("table=levels_{}", std::process::id());
    let (r, v) = load_and_run(
        dir.path(),
        url,
        "workloada",
        &["-p", &table, "--status-interval", "500ms"],
    );
    let s = source(&v, "mysql");
    assert_eq!(s["state"], "ok", "{s}");
    assert!(measured(&v, "db.rocksdb.rows_read") > 0.0);
    // the tree per level, as for the embedded RocksDB (L0 at least, even
    // while everything is still in the memtable)
    assert_eq!(series(&v, "db.level.L0.files")["kind"], "gauge");
    assert!(series(&v, "db.level.L0.bytes")["max"].is_number());
    assert!(!r.stderr.contains("per level left out"), "{}", r.stderr);
}
