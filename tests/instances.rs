//! `--instance i/n` and `--start-at`: three processes load their thirds of one
//! SQLite table, then run workload D (which inserts) together; the merged
//! result adds up, no key was inserted twice, and the table holds exactly the
//! loaded records plus every acknowledged insert.
use crate::common::*;

fn spawn(dir: &std::path::Path, args: &[String]) -> std::process::Child {
    std::process::Command::new(bin())
        .args(args)
        .current_dir(dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

fn together(
    dir: &std::path::Path,
    phase: &str,
    db: &str,
    extra: &[&str],
) -> Vec<serde_json::Value> {
    let at = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
        + 1.5;
    let children: Vec<_> = (0..3)
        .map(|i| {
            let mut args = strings(&[
                phase,
                "--db",
                db,
                "-P",
                "workloadd",
                "-p",
                "recordcount=3000",
                "--seed",
                "11",
                "--instance",
                &format!("{i}/3"),
                "--start-at",
                &format!("{at:.3}"),
                "-q",
                "--out",
                &format!("{phase}{i}.json"),
            ]);
            args.extend(strings(extra));
            spawn(dir, &args)
        })
        .collect();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    (0..3)
        .map(|i| read_json(&dir.join(format!("{phase}{i}.json"))))
        .collect()
}

fn rows(db: &std::path::Path) -> u64 {
    let c = rusqlite::Connection::open(db).unwrap();
    c.query_row("SELECT count(*) FROM usertable", [], |r| r.get(0))
        .unwrap()
}

#[test]
fn three_instances_load_their_parts_insert_disjoint_keys_and_merge() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("db.sqlite");
    let db = format!("sqlite://{}?busy_timeout=60s", file.display());
    let loads = together(dir.path(), "load", &db, &[]);
    let mut starts: Vec<u64> = loads
        .iter()
        .map(|v| {
            v["properties"]["insertstart"]
                .as_str()
                .unwrap()
                .parse()
                .unwrap()
        })
        .collect();
    starts.sort();
    assert_eq!(starts, [0, 1000, 2000]);
    for (i, v) in loads.iter().enumerate() {
        assert_eq!(v["instance"]["count"], 3);
        assert_eq!(count(v, "INSERT"), 1000, "instance {i}");
    }
    assert_eq!(rows(&file), 3000, "every record loaded once");

    // paced to last a second: unpaced, each instance's 3,000 operations
    // took milliseconds, and on a loaded host one instance's sessions could
    // open after another had finished, leaving the merge no common window
    let runs = together(
        dir.path(),
        "run",
        &db,
        &["-p", "operationcount=3000", "--target", "3000"],
    );
    let mut inserted = 0;
    for v in &runs {
        let statuses = &op(v, "INSERT")["statuses"];
        assert!(
            statuses["duplicate_key"].is_null(),
            "a key was inserted twice: {statuses}"
        );
        inserted += statuses["ok"].as_u64().unwrap();
        assert!(
            op(v, "READ")["statuses"]["not_found"].is_null(),
            "read a key never inserted"
        );
    }
    assert!(inserted > 0);
    assert_eq!(
        rows(&file),
        3000 + inserted,
        "the table holds every acknowledged insert once"
    );

    let r = yardstick(
        dir.path(),
        &[
            "merge",
            "run0.json",
            "run1.json",
            "run2.json",
            "-o",
            "merged.json",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let m = read_json(&dir.path().join("merged.json"));
    assert_schema_valid(&m);
    assert_eq!(m["totals"]["operations"], 9000);
    assert_eq!(m["instance"]["count"], 3);
    let read_ok: u64 = runs.iter().map(|v| count(v, "READ")).sum();
    assert_eq!(count(&m, "READ"), read_ok);
    assert!(!m["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w.as_str().unwrap().contains("no instance numbers")));
}

#[test]
fn bad_instances_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    for (args, expect) in [
        (
            vec!["load", "--db", "null://", "--instance", "3/3"],
            "is not an instance",
        ),
        (vec!["load", "--instance", "0/2"], "--instance needs --db"),
        (
            vec!["run", "--db", "null://", "--start-at", "soon"],
            "is not a time",
        ),
    ] {
        let r = yardstick(dir.path(), &args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains(expect), "{args:?}: {}", r.stderr);
    }
}
