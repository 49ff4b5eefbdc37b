//! Helpers for the end-to-end tests: run the real `yardstick` binary in a
//! temporary working directory and read what it wrote.
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

pub(crate) struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Held by the tests whose figures depend on timing (statistical
/// comparisons, the SLO search) and by those that load the machine with
/// hundreds of short processes (the bad-input corpus), so the two never
/// overlap on a small machine.
pub(crate) fn quiet_machine() -> std::sync::MutexGuard<'static, ()> {
    static QUIET: std::sync::Mutex<()> = std::sync::Mutex::new(());
    QUIET.lock().unwrap_or_else(|p| p.into_inner())
}

pub(crate) fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_yardstick")
}

pub(crate) fn yardstick(dir: &Path, args: &[&str]) -> Run {
    let out: Output = Command::new(bin())
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the yardstick binary runs");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

pub(crate) fn read_json(path: &Path) -> serde_json::Value {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    serde_json::from_str(&text).expect("result files are JSON")
}

pub(crate) fn results_in(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir.join("results"))
        .map(|r| r.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default();
    v.sort();
    v
}

/// Validates `value` against the repository's result JSON Schema.
pub(crate) fn assert_schema_valid(value: &serde_json::Value) {
    assert_matches_schema(value, "result.schema.json");
}

/// Validates a TPC-C result against the repository's TPC-C result schema.
pub(crate) fn assert_tpcc_schema_valid(value: &serde_json::Value) {
    assert_matches_schema(value, "tpcc-result.schema.json");
}

/// Validates `value` against `schema/NAME`.
pub(crate) fn assert_matches_schema(value: &serde_json::Value, name: &str) {
    let errors = schema_errors(value, name);
    assert!(
        errors.is_empty(),
        "{} does not match schema/{name}:\n{}",
        value["kind"].as_str().unwrap_or("the result"),
        errors.join("\n")
    );
}

/// Where `value` breaks `schema/NAME`, one line each.
pub(crate) fn schema_errors(value: &serde_json::Value, name: &str) -> Vec<String> {
    let schema_path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("schema")
        .join(name);
    let schema: serde_json::Value = read_json(&schema_path);
    // the TPC-C schema refers to the YCSB one's definitions by its $id
    let shared = read_json(&schema_path.with_file_name("result.schema.json"));
    let validator = jsonschema::options()
        .with_resource(
            "https://yardstick.dev/schema/result-v1.json",
            jsonschema::Resource::from_contents(shared).expect("result.schema.json is a schema"),
        )
        .build(&schema)
        .expect("the schema itself is valid");
    validator
        .iter_errors(value)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect()
}

pub(crate) fn op<'a>(result: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    &result["operations"][name]
}

pub(crate) fn count(result: &serde_json::Value, name: &str) -> u64 {
    op(result, name)["count"].as_u64().unwrap_or(0)
}

/// Loads 2000 records and runs workload A (or C) for `ops` operations; returns the run's result.
pub(crate) fn load_and_run(
    dir: &Path,
    url: &str,
    workload: &str,
    extra: &[&str],
) -> (Run, serde_json::Value) {
    let mut load = strings(&[
        "load",
        "--db",
        url,
        "-P",
        workload,
        "-p",
        "recordcount=2000",
        "--threads",
        "2",
        "-q",
        "--out",
        "l.json",
    ]);
    load.extend(strings(extra));
    let l = yardstick(dir, &load.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(l.code, 0, "{}", l.stderr);
    let mut run = strings(&[
        "run",
        "--db",
        url,
        "-P",
        workload,
        "-p",
        "recordcount=2000",
        "-p",
        "operationcount=6000",
        "--threads",
        "2",
        "--concurrency",
        "4",
        "-q",
        "--out",
        "r.json",
    ]);
    run.extend(strings(extra));
    let r = yardstick(dir, &run.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = read_json(&dir.join("r.json"));
    assert_schema_valid(&v);
    assert_eq!(v["totals"]["operations"], 6000);
    assert_eq!(v["totals"]["errors"], 0, "{}", v["warnings"]);
    (r, v)
}

/// Loads one TPC-C warehouse into SQLite's tpcc.db in `dir` and runs it
/// once per entry of `runs` (terminals, then further arguments such as
/// `--out`), each for `duration`.
pub(crate) fn tpcc_sqlite_runs(dir: &Path, duration: &str, runs: &[(&str, &[&str])]) {
    let db = "sqlite://tpcc.db";
    let l = yardstick(
        dir,
        &["tpcc", "load", "--db", db, "--warehouses", "1", "-q"],
    );
    assert_eq!(l.code, 0, "{}", l.stderr);
    for (terminals, extra) in runs {
        let mut args = vec![
            "tpcc",
            "run",
            "--db",
            db,
            "--warehouses",
            "1",
            "--terminals",
            terminals,
            "--duration",
            duration,
            "-q",
        ];
        args.extend_from_slice(extra);
        let r = yardstick(dir, &args);
        assert_eq!(r.code, 0, "{}", r.stderr);
    }
}

/// Runs yardstick with `args` in `dir`, sends it signal `sig` after `after`
/// and returns how it ended.
pub(crate) fn signalled(dir: &Path, args: &[&str], sig: i32, after: Duration) -> Run {
    let child = Command::new(bin())
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(after);
    // SAFETY: sending a signal to our own child process.
    unsafe { libc::kill(child.id() as i32, sig) };
    let out = child.wait_with_output().unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// [`signalled`] with SIGINT; its exit code.
pub(crate) fn interrupted(dir: &Path, args: &[&str], after: Duration) -> Option<i32> {
    Some(signalled(dir, args, libc::SIGINT, after).code).filter(|c| *c >= 0)
}

pub(crate) fn strings(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// The one `yardstick: error:` line of a refused command, which must name
/// `expect`; no panic.
pub(crate) fn assert_one_error(r: &Run, what: &str, expect: &str) {
    assert_eq!(r.code, 2, "{what}: exit {} stderr {}", r.code, r.stderr);
    assert_one_error_with_code(r, 2, expect);
}

/// The one `yardstick: error:` line of a command that ended with `code`,
/// which must name `expect`; no panic.
pub(crate) fn assert_one_error_with_code(r: &Run, code: i32, expect: &str) {
    assert_eq!(r.code, code, "exit {} stderr {}", r.code, r.stderr);
    let errors: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| l.starts_with("yardstick: error:"))
        .collect();
    assert_eq!(errors.len(), 1, "{}", r.stderr);
    assert!(
        errors[0].contains(expect),
        "expected {expect:?} in {:?}",
        errors[0]
    );
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
}

/// A test server `scripts/services` starts on loopback: its URL (the
/// environment variable `env` overrides it) and how to start it.
pub(crate) struct TestServer {
    pub name: &'static str,
    pub env: &'static str,
    pub url: &'static str,
    pub service: &'static str,
}

pub(crate) const POSTGRES: TestServer = TestServer {
    name: "PostgreSQL",
    env: "YARDSTICK_PG_URL",
    url: "postgres://bench:benchpw@127.0.0.1:55432/ycsb",
    service: "postgres",
};
pub(crate) const MARIADB: TestServer = TestServer {
    name: "MariaDB",
    env: "YARDSTICK_MYSQL_URL",
    url: "mysql://bench:benchpw@127.0.0.1:53306/ycsb",
    service: "mariadb",
};
pub(crate) const REDIS: TestServer = TestServer {
    name: "Redis",
    env: "YARDSTICK_REDIS_URL",
    url: "redis://:benchpw@127.0.0.1:56379",
    service: "redis",
};
pub(crate) const MEMCACHED: TestServer = TestServer {
    name: "memcached",
    env: "YARDSTICK_MEMCACHED_URL",
    url: "memcached://127.0.0.1:51211",
    service: "memcached",
};
pub(crate) const ETCD: TestServer = TestServer {
    name: "etcd",
    env: "YARDSTICK_ETCD_URL",
    url: "etcd://127.0.0.1:52379,127.0.0.1:52479,127.0.0.1:52579",
    service: "etcd",
};
pub(crate) const CASSANDRA: TestServer = TestServer {
    name: "Cassandra",
    env: "YARDSTICK_CQL_URL",
    url: "cql://127.0.0.1:59042/ycsb",
    service: "cassandra",
};
pub(crate) const FERRETDB: TestServer = TestServer {
    name: "FerretDB",
    env: "YARDSTICK_MONGODB_URL",
    url: "mongodb://127.0.0.1:57017/ycsb",
    service: "ferretdb",
};

impl TestServer {
    pub(crate) fn url(&self) -> String {
        std::env::var(self.env).unwrap_or_else(|_| self.url.into())
    }

    /// Whether it answers; outside CI a missing server skips with the
    /// reason printed, in CI it fails the test.
    pub(crate) fn available(&self) -> bool {
        yardstick_bindings::testing::server_available(
            self.name,
            &self.url(),
            &format!("scripts/services start {}", self.service),
        )
    }
}

/// `yardstick run ARGS` must stop before any work: exit code 2, a message
/// containing `expect`, no panic, no `secret` in the output, no result file.
pub(crate) fn assert_refused(dir: &Path, args: &[&str], expect: &str, secret: &str) {
    let r = yardstick(dir, args);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains(expect), "{}", r.stderr);
    assert!(
        !r.stderr.contains(secret) && !r.stderr.contains("panicked"),
        "{}",
        r.stderr
    );
    assert!(
        results_in(dir).is_empty(),
        "no result for a run that never started"
    );
}

pub(crate) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts a private server (`program args`) and waits until its port accepts.
pub(crate) fn spawn_server(program: &str, args: &[String], port: u16) -> Option<Child> {
    started(Command::new(program).args(args), program, port)
}

/// [`spawn_server`] with variables in its environment.
pub(crate) fn spawn_server_with(
    program: &str,
    args: &[String],
    env: &[(&str, &str)],
    port: u16,
) -> Option<Child> {
    started(
        Command::new(program).args(args).envs(env.iter().copied()),
        program,
        port,
    )
}

/// Spawns `cmd` (quietly) and waits until `port` accepts; `None`, with the
/// reason printed, where `program` is missing outside CI.
fn started(cmd: &mut Command, program: &str, port: u16) -> Option<Child> {
    let child = match cmd.stdout(Stdio::null()).stderr(Stdio::null()).spawn() {
        Ok(c) => c,
        Err(e) => {
            assert!(
                std::env::var_os("CI").is_none(),
                "{program} is needed in CI: {e} (scripts/services installs it)"
            );
            eprintln!("skipped: cannot start {program}: {e}");
            return None;
        }
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "{program} did not start on {port}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    Some(child)
}

/// A private server that `scripts/services SUBCOMMAND DIR ARGS...` starts in
/// a directory of its own and the test kills (`kill -9`), at the latest when
/// dropped.
pub(crate) struct PrivateServer {
    pid: String,
    _dir: tempfile::TempDir,
}

impl PrivateServer {
    /// Starts it and waits until `port` accepts connections.
    pub(crate) fn start(subcommand: &str, args: &[String], port: u16) -> PrivateServer {
        let dir = tempfile::tempdir().unwrap();
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/services");
        // runs: scripts/services
        let out = Command::new(&script)
            .arg(subcommand)
            .arg(dir.path().join("server"))
            .args(args)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let server = PrivateServer {
            pid: String::from_utf8_lossy(&out.stdout).trim().to_string(),
            _dir: dir,
        };
        let deadline = Instant::now() + Duration::from_secs(120);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "the private server did not start"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        server
    }

    pub(crate) fn pid(&self) -> u32 {
        self.pid.parse().expect("a pid")
    }

    pub(crate) fn kill(&self) {
        // runs: kill
        let _ = Command::new("kill")
            .args(["-9", &self.pid])
            .stderr(Stdio::null())
            .status();
    }
}

impl Drop for PrivateServer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Whether the tests run as root (servers then drop to their own users).
pub(crate) fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

/// A private MariaDB server in `dir` (grant tables off: any user logs in
/// without a password), started with the server options `extra`; its port.
/// For tests that kill a server or change its global settings.
pub(crate) fn private_mariadb(dir: &Path, extra: &[&str]) -> Option<(Child, u16)> {
    let data = dir.join("db");
    std::fs::create_dir(&data).unwrap();
    // a tmpdir of its own: a MariaDB server starting deletes every #sql file
    // in its tmpdir, another test's server installing included
    let tmp = dir.join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    if is_root() {
        Command::new("chown")
            .args(["-R", "mysql:mysql"])
            .arg(dir)
            .status()
            .ok()?;
    }
    let mut install = Command::new("mariadb-install-db");
    install
        .arg("--no-defaults")
        .arg(format!("--datadir={}", data.display()))
        .arg(format!("--tmpdir={}", tmp.display()));
    if is_root() {
        install.arg("--user=mysql");
    }
    let out = install.output().ok()?;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let port = free_port();
    let mut args = strings(&[
        "--no-defaults",
        "--skip-grant-tables",
        "--bind-address=127.0.0.1",
    ]);
    args.push(format!("--datadir={}", data.display()));
    args.push(format!("--tmpdir={}", tmp.display()));
    args.push(format!("--socket={}/s.sock", dir.display()));
    args.push(format!("--port={port}"));
    args.push(format!("--pid-file={}/p.pid", dir.display()));
    args.push(format!("--log-error={}/err.log", dir.display()));
    if is_root() {
        args.push("--user=mysql".into());
    }
    args.extend(strings(extra));
    spawn_server("mariadbd", &args, port).map(|c| (c, port))
}

/// A plain HTTP/1.1 GET on loopback with a bounded wait: (status code, body).
pub(crate) fn http_get(addr: &str, path: &str, accept: &str) -> Option<(u16, String)> {
    use std::io::{Read, Write};
    let sock: std::net::SocketAddr = addr.parse().ok()?;
    let mut c = std::net::TcpStream::connect_timeout(&sock, Duration::from_secs(2)).ok()?;
    c.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    write!(
        c,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nAccept: {accept}\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut raw = Vec::new();
    c.read_to_end(&mut raw).ok()?;
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n")?;
    let code = head.split(' ').nth(1)?.parse().ok()?;
    // Prometheus answers chunked; its JSON is read whole all the same
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        dechunk(body)
    } else {
        body.to_string()
    };
    Some((code, body))
}

fn dechunk(mut s: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = s.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 || rest.len() < n {
            break;
        }
        out.push_str(&rest[..n]);
        s = rest[n..].trim_start_matches("\r\n");
    }
    out
}
