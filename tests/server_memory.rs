//! `--server-memory-limit`: a database server on this machine runs the phase
//! in a memory cgroup of its own and goes back afterwards; and `matrix` runs
//! the storage-engine experiment over MariaDB's InnoDB and MyRocks, each
//! server capped by the budgets. Private servers (`scripts/services
//! mariadb-node`), since a cap on a shared one would squeeze other tests.
//! Needs root (moving another user's process between cgroups): CI runs as
//! root; elsewhere the tests are skipped with the reason.
use crate::common::*;

fn root_or_skip() -> bool {
    if is_root() {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "CI runs as root for the server memory caps"
    );
    eprintln!(
        "skipped: --server-memory-limit moves a server's process between cgroups, which needs root"
    );
    false
}

/// A private MariaDB with `args` (`rocksdb` first for MyRocks), and its URL.
fn mariadb(args: &[&str], engine: &str) -> (PrivateServer, String) {
    let port = free_port();
    let mut all = vec![port.to_string()];
    all.extend(strings(args));
    let server = PrivateServer::start("mariadb-node", &all, port);
    let url = format!("mysql://bench:benchpw@127.0.0.1:{port}/ycsb?engine={engine}");
    (server, url)
}

/// The memory cgroup a process is in (cgroup v1's memory line, or v2's).
fn memory_cgroup(pid: u32) -> String {
    let text = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap();
    text.lines()
        .find(|l| {
            l.split(':')
                .nth(1)
                .is_some_and(|c| c.split(',').any(|x| x == "memory"))
        })
        .or_else(|| text.lines().find(|l| l.starts_with("0::")))
        .unwrap()
        .to_string()
}

#[test]
fn a_capped_server_records_its_cap_and_goes_back_where_it_was() {
    if !root_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (server, url) = mariadb(&["rocksdb", "--rocksdb-block-cache-size=32M"], "rocksdb");
    let before = memory_cgroup(server.pid());
    let load = yardstick(
        dir.path(),
        &[
            "load",
            "--db",
            &url,
            "-P",
            "workloadc",
            "-p",
            "recordcount=3000",
            "-q",
            "--out",
            "load.json",
        ],
    );
    assert_eq!(load.code, 0, "{}", load.stderr);
    let r = yardstick(
        dir.path(),
        &[
            "run",
            "--db",
            &url,
            "-P",
            "workloadc",
            "-p",
            "recordcount=3000",
            "--duration",
            "2s",
            "--server-memory-limit",
            "512M",
            "-q",
            "--out",
            "run.json",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = read_json(&dir.path().join("run.json"));
    assert_schema_valid(&v);
    let s = &v["server_memory"][0];
    assert_eq!(s["pid"].as_u64(), Some(server.pid() as u64), "{s}");
    assert_eq!(s["program"], "mariadbd");
    assert_eq!(s["limit"]["bytes"].as_u64(), Some(512 << 20));
    assert_eq!(s["limit"]["oom_killed"], false);
    assert_eq!(s["alive_after"], true);
    let peak = s["limit"]["peak_bytes"].as_u64().unwrap();
    assert!(peak > 0 && peak <= 512 << 20, "{s}");
    assert_eq!(
        v["binding"]["engine"]["settings"]["table_engine"], "ROCKSDB",
        "{}",
        v["binding"]["engine"]
    );
    assert!(v["totals"]["operations"].as_u64().unwrap() > 0);
    let held = s["resident_bytes_before"].as_u64().unwrap();
    if s["charges_moved"] == false {
        // what the server held stays charged elsewhere: the cgroup gets the rest
        assert_eq!(
            s["cgroup_limit_bytes"].as_u64(),
            Some((512 << 20) - held),
            "{s}"
        );
    }
    assert_eq!(memory_cgroup(server.pid()), before, "the server went back");
    // a cap smaller than what the server holds is refused before any work
    let r = yardstick(
        dir.path(),
        &[
            "run",
            "--db",
            &url,
            "-P",
            "workloadc",
            "-p",
            "recordcount=3000",
            "--duration",
            "1s",
            "--server-memory-limit",
            &(held / 2).to_string(),
            "-q",
            "--out",
            "small.json",
        ],
    );
    assert_one_error(
        &r,
        "a cap below the server's memory",
        "restart the server with a smaller cache",
    );
    assert!(!dir.path().join("small.json").exists());
    assert_eq!(
        memory_cgroup(server.pid()),
        before,
        "the refused cap left the server where it was"
    );
    // an embedded engine has no server to cap
    let db = format!("sqlite://{}", dir.path().join("x.db").display());
    let r = yardstick(
        dir.path(),
        &["load", "--db", &db, "--server-memory-limit", "1G", "-q"],
    );
    assert_one_error(&r, "embedded", "use --memory-limit");
    // nothing listens there
    let r = yardstick(
        dir.path(),
        &[
            "run",
            "--db",
            &format!("mysql://u:secretpw@127.0.0.1:{}/db", free_port()),
            "--server-memory-limit",
            "1G",
            "-q",
        ],
    );
    assert_one_error(&r, "no server", "no process listens on");
}

#[test]
fn the_matrix_runs_innodb_and_myrocks_each_under_the_budgets() {
    if !root_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (_innodb, innodb) = mariadb(&["--innodb-buffer-pool-size=32M"], "innodb");
    let (_rocks, rocks) = mariadb(&["rocksdb", "--rocksdb-block-cache-size=32M"], "rocksdb");
    let r = yardstick(
        dir.path(),
        &[
            "matrix",
            "--db",
            &innodb,
            "--db",
            &rocks,
            "--budgets",
            "384M,none",
            "--tests",
            "read,write-1",
            "--records",
            "2000",
            "--duration",
            "1s",
            "--warmup",
            "200ms",
            "--out-dir",
            "out",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!r.stdout.contains("benchpw"), "{}", r.stdout);
    // the printed table tells the two servers apart
    for engine in ["mysql-ycsb-innodb", "mysql-ycsb-rocksdb"] {
        assert_eq!(r.stdout.matches(engine).count(), 4, "{}", r.stdout);
    }
    let index = read_json(&dir.path().join("out/index.json"));
    assert_matches_schema(&index, "matrix-index.schema.json");
    let cells = index["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 2 * 2 * 2);
    let mut engines = std::collections::BTreeSet::new();
    for c in cells {
        assert_eq!(c["status"], "ok", "{c}");
        let v = read_json(&dir.path().join("out").join(c["result"].as_str().unwrap()));
        engines.insert(
            v["binding"]["engine"]["settings"]["table_engine"]
                .as_str()
                .unwrap()
                .to_string(),
        );
        if c["budget"] == "384M" {
            assert_eq!(
                v["server_memory"][0]["limit"]["bytes"].as_u64(),
                Some(384 << 20),
                "{c}"
            );
            assert!(v["memory_limit"].is_null(), "the client is not capped");
            assert!(c["peak_memory_bytes"].as_u64().unwrap() > 0, "{c}");
        } else {
            assert!(v["server_memory"].is_null(), "{c}");
        }
    }
    assert_eq!(engines, ["InnoDB", "ROCKSDB"].map(String::from).into());
    for l in index["loads"].as_array().unwrap() {
        let v = read_json(&dir.path().join("out").join(l["result"].as_str().unwrap()));
        assert!(
            !v["binding"]["cleared"].is_null(),
            "a server's table is emptied first: {}",
            v["binding"]
        );
    }
}

/// scripts/storage-engines: the five engines in one command, tiny.
#[test]
fn the_storage_engine_script_runs_libraries_and_servers_in_one_matrix() {
    if !root_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/storage-engines");
    let out = dir.path().join("out");
    // runs: scripts/storage-engines
    let r = std::process::Command::new(&script)
        .args([
            "--cache",
            "16M",
            "--budgets",
            "512M",
            "--tests",
            "read",
            "--records",
            "500",
        ])
        .args(["--duration", "500ms", "--warmup", "100ms", "--out-dir"])
        .arg(&out)
        .env("YARDSTICK", bin())
        .env("YARDSTICK_SE_DIR", dir.path().join("work"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert!(r.status.success(), "{stderr}");
    let index = read_json(&out.join("index.json"));
    let engines: Vec<&str> = index["loads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["engine"].as_str().unwrap())
        .collect();
    assert_eq!(
        engines,
        ["rocksdb", "leveldb", "wiredtiger", "mariadb", "mariadb"]
    );
    let cells = index["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 5);
    assert!(cells.iter().all(|c| c["status"] == "ok"), "{cells:?}");
    // the servers are stopped again; the script names the ports it chose
    let ports: Vec<&str> = stderr
        .lines()
        .find(|l| l.contains("starting MariaDB with InnoDB on"))
        .expect(&stderr)
        .split("127.0.0.1:")
        .skip(1)
        .map(|p| p.split(|c: char| !c.is_ascii_digit()).next().unwrap())
        .collect();
    assert_eq!(ports.len(), 2, "{stderr}");
    for port in ports {
        let port: u16 = port.parse().unwrap();
        assert!(
            port < 32768,
            "{port} is in the range of outgoing connections"
        );
        assert!(
            std::net::TcpStream::connect(("127.0.0.1", port)).is_err(),
            "{port} still open"
        );
    }
}
