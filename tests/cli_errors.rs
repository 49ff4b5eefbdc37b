//! End-to-end: bad input gives one line naming the problem and the fix, exit
//! code 2, no panic, and never touches an earlier result file.
use crate::common::*;

fn assert_bad_input(dir: &std::path::Path, args: &[&str], expect: &str) {
    assert_one_error(&yardstick(dir, args), &format!("{args:?}"), expect);
}

#[test]
fn bad_input_is_one_clear_line_and_exit_code_2() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("keep.json"), "earlier result").unwrap();
    let keep = ["--out", "keep.json"];
    let with = |args: &[&'static str]| -> Vec<&'static str> {
        [&["run", "--db", "null://"][..], args, &keep[..]].concat()
    };
    assert_bad_input(
        d,
        &with(&["-p", "recordcont=10"]),
        "did you mean 'recordcount'",
    );
    assert_bad_input(
        d,
        &with(&["-p", "operationcount=many"]),
        "operationcount=many",
    );
    assert_bad_input(
        d,
        &with(&["-p", "readproportion=0", "-p", "updateproportion=0"]),
        "every operation proportion is 0",
    );
    assert_bad_input(
        d,
        &with(&["-p", "requestdistribution=pareto"]),
        "requestdistribution",
    );
    assert_bad_input(
        d,
        &with(&["-P", "no/such/workload"]),
        "cannot read property file no/such/workload",
    );
    assert_bad_input(d, &with(&["-p", "noequals"]), "expected -p name=value");
    assert_bad_input(d, &with(&["-p", "operationcount=0"]), "the run has no end");
    // bad --db URLs: tests/bad_urls.rs
    assert_bad_input(
        d,
        &["run", "--db", "oracle://db", "--out", "keep.json"],
        "known schemes: null, sqlite",
    );
    assert_bad_input(
        d,
        &["run", "--db", "null://", "--out", "keep.json/sub/r.json"],
        "cannot write the result file",
    );
    assert_eq!(
        std::fs::read_to_string(d.join("keep.json")).unwrap(),
        "earlier result",
        "an earlier result is never destroyed"
    );
    // clap's own errors also exit 2
    let r = yardstick(d, &["run", "--threads", "lots"]);
    assert_eq!(r.code, 2);
}

#[test]
fn passwords_never_appear_in_output_or_results() {
    let dir = tempfile::tempdir().unwrap();
    let r = yardstick(
        dir.path(),
        &[
            "run",
            "--db",
            "null://bench:hunter2@db.example:5432",
            "-p",
            "operationcount=1000",
            "--out",
            "r.json",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let file = std::fs::read_to_string(dir.path().join("r.json")).unwrap();
    for (what, text) in [
        ("stdout", &r.stdout),
        ("stderr", &r.stderr),
        ("result", &file),
    ] {
        assert!(!text.contains("hunter2"), "the password leaked into {what}");
    }
    assert!(file.contains("null://bench:***@db.example:5432"));
    let e = yardstick(
        dir.path(),
        &["run", "--db", "sqlite:///no/dir/x.db?password=hunter2"],
    );
    assert!(!e.stderr.contains("hunter2") && e.code == 2, "{}", e.stderr);
}

#[test]
fn max_errors_stops_the_run_writes_the_partial_result_and_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}/t.db", dir.path().display());
    let l = yardstick(
        dir.path(),
        &["load", "--db", &db, "-p", "recordcount=500", "-q"],
    );
    assert_eq!(l.code, 0, "{}", l.stderr);
    // loaded with random values, verified as YCSB's deterministic ones: every read fails
    let r = yardstick(
        dir.path(),
        &[
            "run",
            "--db",
            &db,
            "-P",
            "workloadc",
            "-p",
            "recordcount=500",
            "-p",
            "operationcount=100000",
            "-p",
            "dataintegrity=true",
            "--max-errors",
            "20",
            "-q",
            "--out",
            "r.json",
        ],
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    let v = read_json(&dir.path().join("r.json"));
    assert_schema_valid(&v);
    assert_eq!(v["complete"], false);
    assert_eq!(v["runner"]["max_errors"], 20);
    let failed = op(&v, "READ")["statuses"]["verify_failed"]
        .as_u64()
        .unwrap();
    assert!((21..1000).contains(&failed), "{failed}");
    assert!(v["warnings"].to_string().contains("--max-errors"));
}
