//! The results catalogue: `--tag` stored in results, `yardstick results`
//! listing and filtering them, and `tag:` selectors in compare and report.
use crate::common::*;

fn run(d: &std::path::Path, db: &str, tags: &[&str]) {
    let mut args = vec![
        "run",
        "--db",
        db,
        "-P",
        "workloadc",
        "-p",
        "recordcount=200",
        "-p",
        "operationcount=2000",
        "-q",
    ];
    for t in tags {
        args.extend(["--tag", t]);
    }
    let r = yardstick(d, &args);
    assert_eq!(r.code, 0, "{}", r.stderr);
}

#[test]
fn tagged_results_list_filter_and_select_for_compare_and_report() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let r = yardstick(
        d,
        &[
            "load",
            "--db",
            "sqlite://c.db",
            "-P",
            "workloadc",
            "-p",
            "recordcount=200",
            "-q",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    run(d, "sqlite://c.db", &["build=a", "host=x"]);
    run(d, "sqlite://c.db", &["build=b", "host=x"]);
    run(d, "null://", &["build=b"]);
    std::fs::write(d.join("results/notes.json"), "{\"x\": 1}").unwrap();
    let tagged: Vec<serde_json::Value> = results_in(d)
        .iter()
        .filter(|p| !p.ends_with("notes.json"))
        .map(|p| read_json(p))
        .collect();
    for r in &tagged {
        assert_schema_valid(r);
    }
    assert!(tagged
        .iter()
        .any(|r| r["tags"]["build"] == "a" && r["tags"]["host"] == "x"));

    let r = yardstick(d, &["results"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert!(
        lines[0].starts_with("date") && lines[0].contains("throughput"),
        "{}",
        r.stdout
    );
    assert_eq!(lines.last(), Some(&"4 results"), "{}", r.stdout);
    assert!(r.stdout.contains("build=a,host=x"), "{}", r.stdout);
    assert!(
        r.stderr.contains("notes.json: not a yardstick result"),
        "{}",
        r.stderr
    );

    let r = yardstick(
        d,
        &[
            "results", "--tag", "build=b", "--db", "sqlite", "--format", "paths",
        ],
    );
    let paths: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(paths.len(), 1, "{}", r.stdout);
    assert_eq!(read_json(&d.join(paths[0]))["tags"]["build"], "b");
    let r = yardstick(d, &["results", "--workload", "workloadb"]);
    assert!(r.stdout.ends_with("0 results\n"), "{}", r.stdout);

    // build=b has a run on SQLite and one on null://; only the first has a
    // counterpart in build=a
    let r = yardstick(d, &["compare", "tag:build=a", "tag:build=b,db:sqlite"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout.matches("A: ").count(), 1, "{}", r.stdout);
    assert!(r.stdout.contains("READ"), "{}", r.stdout);
    let r = yardstick(d, &["compare", "tag:build=a", "tag:build=b"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("has no counterpart"), "{}", r.stderr);

    let r = yardstick(d, &["report", "tag:host=x", "-o", "r.md"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.starts_with("report of 2 results"), "{}", r.stdout);

    let r = yardstick(d, &["compare", "tag:build=zz", "tag:build=b"]);
    assert_one_error_with_code(&r, 2, "tag:build=zz selects no result in results");
    let r = yardstick(d, &["compare", "tag:host=x", "tag:build=b"]);
    assert_one_error_with_code(
        &r,
        2,
        "each need one result per command, database and workload",
    );
}
