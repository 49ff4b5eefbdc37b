//! `yardstick matrix`: engines x budgets x tests, one result per cell and an
//! index; a cell killed by its budget is recorded as `oom`, not lost.
use crate::common::*;

fn cgroups_usable() -> bool {
    let usable = std::path::Path::new("/sys/fs/cgroup/memory").is_dir()
        || std::path::Path::new("/sys/fs/cgroup/cgroup.controllers").exists();
    if !usable && std::env::var_os("CI").is_none() {
        eprintln!("skipped: no memory cgroup on this machine");
    }
    usable || std::env::var_os("CI").is_some()
}

#[test]
fn a_small_matrix_writes_every_cell_and_an_index() {
    let dir = tempfile::tempdir().unwrap();
    let budgets = if cgroups_usable() { "64M,none" } else { "none" };
    let db = format!("sqlite://{}", dir.path().join("a.db").display());
    let r = yardstick(
        dir.path(),
        &[
            "matrix",
            "--db",
            &db,
            "--budgets",
            budgets,
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
    let index = read_json(&dir.path().join("out/index.json"));
    assert_eq!(index["schema_version"], 1);
    assert_matches_schema(&index, "matrix-index.schema.json");
    let cells = index["cells"].as_array().unwrap();
    let n_budgets = budgets.split(',').count();
    assert_eq!(cells.len(), n_budgets * 2);
    for c in cells {
        assert_eq!(c["status"], "ok", "{c}");
        let v = read_json(&dir.path().join("out").join(c["result"].as_str().unwrap()));
        assert_schema_valid(&v);
        assert!(v["complete"].as_bool().unwrap());
        assert!(
            v["totals"]["warmup_operations"].as_u64().unwrap() > 0,
            "the warm-up ran"
        );
        let lat = &c["latency_us"];
        for k in ["mean", "p50", "p99", "stdev"] {
            assert!(lat[k].as_f64().unwrap() >= 0.0, "{k}: {c}");
        }
        assert_eq!(v["properties"]["valuegenerator"], "text");
        let op = if c["test"] == "read" {
            "READ"
        } else {
            "UPDATE"
        };
        assert!(!v["operations"][op]["response_cdf"]
            .as_array()
            .unwrap()
            .is_empty());
        if c["budget"].is_string() {
            assert_eq!(v["memory_limit"]["bytes"], 64u64 << 20);
        }
    }
    let load = &index["loads"][0];
    assert!(load["compression_ratio"].as_f64().unwrap() > 0.0);
    assert!(r.stdout.contains("p99 µs"), "{}", r.stdout);
}

#[test]
fn a_cell_killed_by_its_budget_is_recorded_as_oom() {
    if !cgroups_usable() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // an in-memory store grows with every new key: 48 MiB cannot hold 300,000 records
    let r = yardstick(
        dir.path(),
        &[
            "matrix",
            "--db",
            "null://?store=memory",
            "--budgets",
            "48M",
            "--tests",
            "write-1",
            "--records",
            "300000",
            "--duration",
            "5s",
            "--warmup",
            "0s",
            "--out-dir",
            "out",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let index = read_json(&dir.path().join("out/index.json"));
    let cell = &index["cells"][0];
    assert_eq!(cell["status"], "oom", "{cell}");
    let v = read_json(
        &dir.path()
            .join("out")
            .join(cell["result"].as_str().unwrap()),
    );
    assert_eq!(v["memory_limit"]["oom_killed"], true);
}

#[test]
fn unknown_tests_and_budgets_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let r = yardstick(
        dir.path(),
        &["matrix", "--db", "null://", "--tests", "readrandom"],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("--tests readrandom is not a test"),
        "{}",
        r.stderr
    );
    let r = yardstick(
        dir.path(),
        &["matrix", "--db", "null://", "--budgets", "lots"],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("--budgets"), "{}", r.stderr);
}
