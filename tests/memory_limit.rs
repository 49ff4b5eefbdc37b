//! `--memory-limit`: the phase runs in a memory cgroup; a run that fits
//! records the cap and its peak, a run that does not is killed by the cgroup's
//! OOM killer and still leaves a result that says so. Needs a memory cgroup
//! this process may create (root on cgroup v1 or a delegated v2 subtree): CI
//! has one; elsewhere the test is skipped with the reason.
use crate::common::*;

fn cgroups_usable(dir: &std::path::Path) -> bool {
    let r = yardstick(
        dir,
        &[
            "load",
            "--db",
            "null://",
            "-P",
            "workloadc",
            "-p",
            "recordcount=10",
            "-q",
            "--memory-limit",
            "64M",
            "--out",
            "probe.json",
        ],
    );
    if r.code == 0 {
        return true;
    }
    assert!(r.stderr.contains("need a memory cgroup"), "{}", r.stderr);
    if std::env::var_os("CI").is_some() {
        panic!("CI needs a memory cgroup for --memory-limit: {}", r.stderr);
    }
    eprintln!("skipped: {}", r.stderr.trim());
    false
}

#[test]
fn a_capped_load_records_its_limit_and_an_oom_kill_leaves_a_result_that_says_so() {
    let dir = tempfile::tempdir().unwrap();
    if !cgroups_usable(dir.path()) {
        return;
    }
    let db = format!("sqlite://{}", dir.path().join("db.sqlite").display());
    let r = yardstick(
        dir.path(),
        &[
            "load",
            "--db",
            &db,
            "-P",
            "workloadc",
            "-p",
            "recordcount=5000",
            "-q",
            "--memory-limit",
            "256M",
            "--out",
            "load.json",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = read_json(&dir.path().join("load.json"));
    assert_schema_valid(&v);
    let m = &v["memory_limit"];
    assert_eq!(m["bytes"], 256u64 << 20);
    assert_eq!(m["oom_killed"], false);
    assert!(m["mechanism"].as_str().unwrap().starts_with("cgroup v"));
    let peak = m["peak_bytes"].as_u64().unwrap();
    assert!(peak > 0 && peak <= 256 << 20, "{peak}");
    assert!(v["complete"].as_bool().unwrap());
    assert_eq!(v["totals"]["operations"], 5000);

    // an in-memory store of ~300 MB cannot fit in 48 MiB
    let r = yardstick(
        dir.path(),
        &[
            "load",
            "--db",
            "null://?store=memory",
            "-P",
            "workloadc",
            "-p",
            "recordcount=300000",
            "-q",
            "--memory-limit",
            "48M",
            "--out",
            "oom.json",
        ],
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("killed by the memory limit"),
        "{}",
        r.stderr
    );
    let v = read_json(&dir.path().join("oom.json"));
    assert_schema_valid(&v);
    assert_eq!(v["memory_limit"]["oom_killed"], true);
    assert_eq!(v["complete"], false);
    assert!(v["warnings"][0]
        .as_str()
        .unwrap()
        .starts_with("killed by the memory limit"));
}

#[test]
fn impossible_limits_are_refused_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let r = yardstick(
        dir.path(),
        &[
            "load",
            "--db",
            "null://",
            "-P",
            "workloadc",
            "--memory-limit",
            "1K",
        ],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("at least 16MiB"), "{}", r.stderr);
    let r = yardstick(dir.path(), &["run", "--memory-limit", "1G"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("--memory-limit needs --db"),
        "{}",
        r.stderr
    );
    assert!(results_in(dir.path()).is_empty());
}
