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

#[test]
fn two_tpcc_runs_compare_by_tpmc_and_a_tpcc_run_is_not_compared_with_a_ycsb_one() {
    let dir = tempfile::tempdir().unwrap();
    tpcc_sqlite_runs(
        dir.path(),
        "3s",
        &[
            ("1", &["--status-interval", "500ms", "--tag", "step=one"]),
            ("2", &["--status-interval", "500ms", "--tag", "step=two"]),
        ],
    );
    // selectors pick TPC-C results as they pick YCSB ones
    let r = yardstick(dir.path(), &["compare", "tag:step=one", "tag:step=two"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let out = &r.stdout;
    for needle in [
        "WARNING: different terminals: 1 vs 2",
        "what differs (A -> B):",
        "  client terminals: 1 -> 2",
        "host CPU per txn",
        "per txn: the server's and the host's measured increase over",
        "transaction        metric",
    ] {
        assert!(out.contains(needle), "{needle}: {out}");
    }
    let tpmc = out
        .lines()
        .find(|l| l.starts_with("ALL") && l.contains(" tpmC "))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        tpmc.contains("significant"),
        "tested on its intervals: {tpmc}"
    );
    for kind in [
        "NEW-ORDER",
        "PAYMENT",
        "DELIVERY",
        "ORDER-STATUS",
        "STOCK-LEVEL",
    ] {
        assert!(
            out.lines().any(|l| l.starts_with(kind)
                && l.contains("p99 latency")
                && l.ends_with("whole run only")),
            "{kind}: {out}"
        );
    }
    run(dir.path(), "0us", "100", "y.json");
    let one = results_in(dir.path())
        .into_iter()
        .find(|f| read_json(f)["kind"] == "tpcc")
        .unwrap();
    let one = one.to_str().unwrap();
    assert_one_error_with_code(
        &yardstick(dir.path(), &["compare", one, "y.json"]),
        2,
        "is a TPC-C result and y.json a YCSB one: compare two of one kind",
    );
}

#[test]
fn results_tagged_with_node_counts_get_their_scaling_efficiency_in_the_report() {
    let dir = tempfile::tempdir().unwrap();
    // null:// at a fixed service time: throughput follows the threads, so
    // twice the "nodes" at twice the threads scale linearly, within noise
    for (nodes, threads) in [("1", "1"), ("2", "2")] {
        let r = yardstick(
            dir.path(),
            &[
                "run",
                "--db",
                "null://?latency=1ms",
                "-P",
                "workloada",
                "--duration",
                "2s",
                "--threads",
                threads,
                "--tag",
                &format!("nodes={nodes}"),
                "--tag",
                "cores=2",
                "-q",
            ],
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
    }
    let r = yardstick(dir.path(), &["report", "results", "-o", "r.md"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let md = std::fs::read_to_string(dir.path().join("r.md")).unwrap();
    assert!(md.contains("## Scaling across nodes"), "{md}");
    let rows: Vec<Vec<&str>> = md
        .lines()
        .filter(|l| l.starts_with("| workloada · null"))
        .map(|l| l.split('|').map(str::trim).collect())
        .collect();
    assert_eq!(rows.len(), 2, "{md}");
    // | series | nodes | cores | runs | throughput | per node | per core | efficiency |
    assert_eq!((rows[0][2], rows[0][3], rows[0][8]), ("1", "2", "100.0"));
    assert_eq!((rows[1][2], rows[1][3]), ("2", "4"));
    let efficiency: f64 = rows[1][8].parse().unwrap();
    assert!((80.0..=110.0).contains(&efficiency), "{md}");
}
