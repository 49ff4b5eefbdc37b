//! The Kubernetes Indexed Job example under deploy/kubernetes, without a
//! cluster: the pods' script from job.yaml runs as three local processes
//! (JOB_COMPLETION_INDEX 0..2) against one SQLite database, their combined
//! output stands in for the pod logs, and collect.sh extracts and merges the
//! results. run.sh is checked with a stand-in kubectl that keeps the manifest.
use crate::common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn deploy() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/kubernetes")
}

/// The shell script between the BEGIN/END INSTANCE SCRIPT markers of job.yaml.
fn instance_script() -> String {
    let yaml = std::fs::read_to_string(deploy().join("job.yaml")).unwrap();
    let lines: Vec<&str> = yaml.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.trim() == "# BEGIN INSTANCE SCRIPT")
        .expect("BEGIN marker");
    let end = lines
        .iter()
        .position(|l| l.trim() == "# END INSTANCE SCRIPT")
        .expect("END marker");
    let indent = lines[start].len() - lines[start].trim_start().len();
    lines[start..=end]
        .iter()
        .map(|l| l.get(indent..).unwrap_or("").to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Runs the pods of one phase locally; returns the directory of their logs.
fn run_pods(dir: &Path, phase: &str, args: &str, logs: &Path) {
    std::fs::create_dir_all(logs).unwrap();
    let script = instance_script();
    // a margin for three process starts on a busy CI host: an instance that
    // starts late still overlaps the others, which are paced to last seconds
    let start = std::time::SystemTime::now() + std::time::Duration::from_secs(4);
    let start = format!(
        "{}",
        start
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs()
    );
    let children: Vec<_> = (0..3)
        .map(|i| {
            let log = std::fs::File::create(logs.join(format!("yardstick-{i}-x{i}.log"))).unwrap();
            Command::new("sh")
                .arg("-c")
                .arg(&script)
                .current_dir(dir)
                .env("JOB_COMPLETION_INDEX", i.to_string())
                .env("INSTANCES", "3")
                .env("START_AT", &start)
                .env("PHASE", phase)
                .env("YARDSTICK_ARGS", args)
                .env("DB_URL", "sqlite://k8s.db")
                // each pod serves metrics; here on a port of its own
                .env("METRICS_LISTEN", "127.0.0.1:0")
                .env("YARDSTICK", bin())
                .stdout(log.try_clone().unwrap())
                .stderr(log)
                .stdin(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success(), "an instance of {phase} failed");
    }
}

fn collect(dir: &Path, logs: &Path, out: &str) -> Run {
    let o = Command::new("sh")
        .arg(deploy().join("collect.sh"))
        .arg("yardstick")
        .arg(out)
        .current_dir(dir)
        .env("LOGS_FROM", logs)
        .env("YARDSTICK", bin())
        .output()
        .unwrap();
    Run {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

#[test]
fn the_job_script_runs_instances_whose_logs_collect_and_merge() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    run_pods(
        d,
        "load",
        "-P workloada -p recordcount=1500 --threads 1 --target 500",
        &d.join("load-logs"),
    );
    let log = std::fs::read_to_string(d.join("load-logs/yardstick-0-x0.log")).unwrap();
    assert!(
        log.contains("yardstick: metrics at http://127.0.0.1:"),
        "{log}"
    );
    let c = collect(d, &d.join("load-logs"), "loaded");
    assert_eq!(c.code, 0, "{}", c.stderr);
    let merged = read_json(&d.join("loaded/merged.json"));
    assert_eq!(
        merged["totals"]["operations"], 1500,
        "three thirds of the load"
    );
    assert_eq!(merged["merged"]["files"].as_array().unwrap().len(), 3);

    run_pods(
        d,
        "run",
        "-P workloadd -p recordcount=1500 -p operationcount=900 --threads 1 --seed 7 --target 300",
        &d.join("run-logs"),
    );
    // a pod that failed before writing its result
    std::fs::write(
        d.join("run-logs/yardstick-3-dead.log"),
        "yardstick: error: cannot connect\n",
    )
    .unwrap();
    let c = collect(d, &d.join("run-logs"), "ran");
    assert_eq!(c.code, 0, "{}", c.stderr);
    assert!(
        c.stderr.contains("yardstick-3-dead.log holds no result"),
        "{}",
        c.stderr
    );
    let merged = read_json(&d.join("ran/merged.json"));
    assert_schema_valid(&merged);
    assert_eq!(merged["totals"]["operations"], 2700);
    let mut instances: Vec<u64> = std::fs::read_dir(d.join("ran/instances"))
        .unwrap()
        .map(|e| {
            read_json(&e.unwrap().path())["instance"]["index"]
                .as_u64()
                .unwrap()
        })
        .collect();
    instances.sort();
    assert_eq!(instances, [0, 1, 2]);
    // the inserts of the three instances took distinct keys
    let c = rusqlite::Connection::open(d.join("k8s.db")).unwrap();
    let rows: i64 = c
        .query_row("SELECT COUNT(*) FROM usertable", [], |r| r.get(0))
        .unwrap();
    let inserted = merged["operations"]["INSERT"]["statuses"]["ok"]
        .as_i64()
        .unwrap_or(0);
    assert_eq!(rows, 1500 + inserted);
}

#[test]
fn the_pods_expose_their_metrics_port_for_prometheus() {
    let yaml = std::fs::read_to_string(deploy().join("job.yaml")).unwrap();
    for want in [
        "prometheus.io/scrape: \"true\"",
        "prometheus.io/port: \"9400\"",
        "prometheus.io/path: /metrics",
        "containerPort: 9400",
        "value: \"0.0.0.0:9400\"",
    ] {
        assert!(yaml.contains(want), "job.yaml lacks {want}");
    }
    assert!(instance_script().contains("--metrics-listen \"$METRICS_LISTEN\""));
}

#[test]
fn run_sh_sets_the_instance_count_and_a_common_start_time() {
    let dir = tempfile::tempdir().unwrap();
    let fake = dir.path().join("bin");
    std::fs::create_dir(&fake).unwrap();
    let manifest = dir.path().join("applied.yaml");
    let kubectl = fake.join("kubectl");
    std::fs::write(
        &kubectl,
        format!("#!/bin/sh\ncat > '{}'\n", manifest.display()),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&kubectl, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        fake.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let o = Command::new("sh")
        .arg(deploy().join("run.sh"))
        .args(["5", "120"])
        .env("PATH", path)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let yaml = std::fs::read_to_string(&manifest).unwrap();
    assert!(yaml.contains("completionMode: Indexed"));
    assert!(yaml.contains("completions: 5 # INSTANCES"), "{yaml}");
    assert!(yaml.contains("parallelism: 5 # INSTANCES"));
    assert!(yaml.contains("value: \"5\" # INSTANCES"));
    let start = yaml
        .lines()
        .find(|l| l.contains("# START_AT"))
        .and_then(|l| l.split('"').nth(1))
        .unwrap();
    let t = yardstick_core::result::time::parse_rfc3339(start).expect("an RFC 3339 start");
    let ahead = t
        .duration_since(std::time::SystemTime::now())
        .expect("the start is in the future")
        .as_secs();
    assert!((100..=121).contains(&ahead), "{ahead} s ahead");
}
