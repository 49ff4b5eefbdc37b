//! `yardstick verify` and `--verify` on SQLite: every insert read back, the
//! findings in the result and the exit code, and the results it refuses to
//! judge. The runs with a server killed and restarted are with their servers
//! (postgres.rs: nothing lost with fsync on; kv_servers.rs: Redis without
//! persistence loses what it acknowledged).
use crate::common::*;
use std::path::Path;

/// Loads 1000 records with dataintegrity into `db` with --verify, then runs
/// workload D (5% inserts); returns (load.json, run.json).
fn load_and_run_d(dir: &Path, db: &str) -> (serde_json::Value, serde_json::Value) {
    let l = yardstick(
        dir,
        &[
            "load",
            "--db",
            db,
            "-P",
            "workloadd",
            "-p",
            "recordcount=1000",
            "-p",
            "dataintegrity=true",
            "--verify",
            "-q",
            "--out",
            "load.json",
        ],
    );
    assert_eq!(l.code, 0, "{}", l.stderr);
    assert!(
        l.stdout.contains(
            "verify: 1000 keys read: 1000 acknowledged present, 0 lost, 0 with other values"
        ),
        "{}",
        l.stdout
    );
    let r = yardstick(
        dir,
        &[
            "run",
            "--db",
            db,
            "-P",
            "workloadd",
            "-p",
            "recordcount=1000",
            "-p",
            "operationcount=4000",
            "-p",
            "dataintegrity=true",
            "-q",
            "--out",
            "run.json",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let (load, run) = (
        read_json(&dir.join("load.json")),
        read_json(&dir.join("run.json")),
    );
    assert_schema_valid(&load);
    assert_schema_valid(&run);
    (load, run)
}

#[test]
fn every_acknowledged_insert_of_a_load_and_a_run_is_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}/v.db", dir.path().display());
    let (load, run) = load_and_run_d(dir.path(), &db);
    let ins = &load["inserts"];
    assert_eq!(
        (ins["first"].as_u64(), ins["end"].as_u64()),
        (Some(0), Some(1000))
    );
    assert_eq!(ins["acknowledged"], 1000);
    assert_eq!(
        (ins["failed"].as_u64(), ins["unknown"].as_u64()),
        (Some(0), Some(0))
    );
    assert!(
        ins.get("keys_file").is_none(),
        "no side file when all were acknowledged"
    );
    assert_eq!(load["verification"]["checked"], 1000);
    assert_eq!(load["verification"]["lost"], 0);
    assert_eq!(load["verification"]["values_checked"], true);
    // the run's inserts continue past the load's records
    let new = run["inserts"]["acknowledged"].as_u64().unwrap();
    assert_eq!(new, count(&run, "INSERT"));
    assert_eq!(run["inserts"]["first"], 1000);
    assert_eq!(run["runner"]["next_insert_keynum"], run["inserts"]["end"]);
    let v = yardstick(
        dir.path(),
        &["verify", "--db", &db, "load.json", "run.json", "-q"],
    );
    assert_eq!(v.code, 0, "{}{}", v.stdout, v.stderr);
    let expect = format!(
        "verify: {} keys read: {} acknowledged present, 0 lost, 0 with other values",
        1000 + new,
        1000 + new
    );
    assert!(v.stdout.contains(&expect), "{}", v.stdout);
}

#[test]
fn lost_and_changed_records_fail_the_verification() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}/v.db", dir.path().display());
    load_and_run_d(dir.path(), &db);
    // a second, empty database stands in for one that lost everything
    let empty = format!("sqlite://{}/empty.db", dir.path().display());
    let e = yardstick(
        dir.path(),
        &[
            "load",
            "--db",
            &empty,
            "-p",
            "recordcount=1",
            "-q",
            "--out",
            "e.json",
        ],
    );
    assert_eq!(e.code, 0, "{}", e.stderr);
    let v = yardstick(dir.path(), &["verify", "--db", &empty, "run.json", "-q"]);
    assert_eq!(v.code, 1, "{}{}", v.stdout, v.stderr);
    assert!(v.stdout.contains("0 acknowledged present"), "{}", v.stdout);
    assert!(
        v.stdout.contains("\n  lost user"),
        "keys named: {}",
        v.stdout
    );
    assert!(
        v.stdout.contains("the database lost acknowledged writes"),
        "{}",
        v.stdout
    );
}

#[test]
fn results_that_cannot_be_judged_are_refused_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let db = format!("sqlite://{}/v.db", d.display());
    load_and_run_d(d, &db);
    let refused = |files: &[&str], expect: &str| {
        let mut args = vec!["verify", "--db", &db, "-q"];
        args.extend(files);
        assert_one_error(&yardstick(d, &args), "verify", expect);
    };
    refused(
        &["load.json", "load.json"],
        "load.json and load.json inserted the same keys",
    );
    let edited = |name: &str, edit: &dyn Fn(&mut serde_json::Value)| {
        let mut v = read_json(&d.join("run.json"));
        edit(&mut v);
        std::fs::write(d.join(name), serde_json::to_vec(&v).unwrap()).unwrap();
    };
    edited("old.json", &|v| {
        v.as_object_mut().unwrap().remove("inserts");
    });
    refused(&["old.json"], "old.json has no record of its inserts");
    edited("nokeys.json", &|v| v["inserts"]["unknown"] = 2.into());
    refused(
        &["nokeys.json"],
        "counts 2 unacknowledged inserts but names no file",
    );
    edited("gone.json", &|v| {
        v["inserts"]["unknown"] = 2.into();
        v["inserts"]["keys_file"] = "gone.json.inserts.tsv".into();
    });
    refused(&["gone.json"], "cannot read");
    std::fs::write(d.join("bad.json.inserts.tsv"), "12\tuser12\tmaybe\n").unwrap();
    edited("bad.json", &|v| {
        v["inserts"]["unknown"] = 1.into();
        v["inserts"]["keys_file"] = "bad.json.inserts.tsv".into();
    });
    refused(
        &["bad.json"],
        "line 1: not `keynum<TAB>key<TAB>failed|unknown`",
    );
    edited("deletes.json", &|v| {
        let read = v["operations"]["READ"].clone();
        v["operations"]["DELETE"] = read;
    });
    refused(&["deletes.json"], "the run deleted records");
}
