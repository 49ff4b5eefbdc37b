//! `yardstick compare`: a real difference is reported as significant with
//! its size, differing specifications are warned about, bad files refused.
use crate::common::*;

fn run(dir: &std::path::Path, latency: &str, records: &str, out: &str) {
    let db = format!("null://?latency={latency}");
    let r = yardstick(
        dir,
        &[
            "run",
            "--db",
            &db,
            "-P",
            "workloada",
            "-p",
            &format!("recordcount={records}"),
            "--duration",
            "3s",
            "--status-interval",
            "250ms",
            "-q",
            "--out",
            out,
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
}

#[test]
fn a_tenfold_service_time_is_significant_and_spec_differences_are_warned() {
    let _quiet = quiet_machine();
    let dir = tempfile::tempdir().unwrap();
    // the null binding sleeps for its latency, and a busy machine oversleeps
    // by up to a few hundred microseconds: a tenfold difference still shows as
    // more than a halving
    run(dir.path(), "100us", "1000", "a.json");
    run(dir.path(), "1ms", "2000", "b.json");
    let r = yardstick(dir.path(), &["compare", "a.json", "b.json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let out = &r.stdout;
    assert!(
        out.contains("WARNING: recordcount differs: 1000 vs 2000"),
        "{out}"
    );
    assert!(out.contains("WARNING: binding options differ"), "{out}");
    // the change column, as a number
    let change = |row: &str| -> f64 {
        let field = row.split_whitespace().find(|f| f.ends_with('%')).unwrap();
        field.trim_end_matches('%').parse().unwrap()
    };
    for op in ["ALL", "READ", "UPDATE"] {
        let row = out
            .lines()
            .find(|l| l.starts_with(op) && l.contains("ops/s"))
            .unwrap_or_else(|| panic!("no {op} row: {out}"));
        assert!(
            row.ends_with(" significant") && !row.contains("not significant"),
            "{row}"
        );
        let c = change(row);
        assert!(
            (-100.0..-50.0).contains(&c),
            "throughput should drop by more than half: {row}"
        );
    }
    // the mean latency rises as the throughput falls (a closed loop); whether
    // a latency change is significant, and how far the tail moves, depend on
    // a busy machine's scheduling stalls (one stalled interval widens the
    // spread), so for latency only the size of the mean's change is checked
    let row = |metric: &str| {
        out.lines()
            .find(|l| l.starts_with("READ") && l.contains(metric))
            .unwrap_or_else(|| panic!("no READ {metric} row: {out}"))
    };
    let mean = row("mean latency");
    assert!(
        change(mean) > 100.0,
        "the mean latency should more than double: {mean}"
    );
    assert!(row("p99 latency").contains('%'), "{out}");
}

#[test]
fn damaged_inputs_are_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    run(dir.path(), "10us", "100", "a.json");
    std::fs::write(dir.path().join("bad.json"), "{\"schema_version\": 1").unwrap();
    let r = yardstick(dir.path(), &["compare", "a.json", "bad.json"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("bad.json") && r.stderr.contains("truncated"),
        "{}",
        r.stderr
    );
    let r = yardstick(dir.path(), &["compare", "a.json", "missing.json"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("cannot read"), "{}", r.stderr);
}
