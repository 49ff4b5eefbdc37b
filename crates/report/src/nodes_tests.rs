use super::*;
use crate::html::Entry;
use crate::tpcc::TpccEntry;
use yardstick_core::result::RunResult;
use yardstick_core::tpcc::result::TpccResult;

fn tags(list: &[(&str, &str)]) -> BTreeMap<String, String> {
    list.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// A real null:// run at `ops` operations per second, tagged.
fn run(ops: f64, t: &[(&str, &str)]) -> Entry {
    let mut r: RunResult =
        serde_json::from_str(include_str!("testdata/observed-run.json")).unwrap();
    r.totals.ops_per_sec = ops;
    r.tags = tags(t);
    Entry::from_result("r.json".into(), r)
}

/// A real TPC-C run (SQLite, one warehouse) at `tpmc`, tagged.
fn tpcc(tpmc: f64, t: &[(&str, &str)]) -> TpccEntry {
    let mut r: TpccResult = serde_json::from_str(include_str!("testdata/tpcc-run.json")).unwrap();
    r.tpmc = tpmc;
    r.tags = tags(t);
    TpccEntry {
        file: "t.json".into(),
        result: r,
        label: None,
    }
}

fn rows(inputs: &Inputs) -> Vec<Vec<String>> {
    section(inputs).map_or(vec![], |s| s.tables[0].rows.clone())
}

#[test]
fn efficiency_is_against_the_smallest_clusters_throughput_per_core() {
    // the YDB report's arithmetic: 3 nodes x 16 cores at 48,000 is 1,000 per
    // core; 8 nodes x 16 cores at 96,000 is 96,000 / (1,000 x 128) = 75%
    let inputs = Inputs {
        entries: vec![
            run(96_000.0, &[("nodes", "8"), ("cores", "16")]),
            run(48_000.0, &[("nodes", "3"), ("cores", "16")]),
            // a repetition at 3 nodes: the mean is 48,000
            run(47_000.0, &[("nodes", "3"), ("cores", "16")]),
            run(49_000.0, &[("nodes", "3"), ("cores", "16")]),
        ],
        ..Inputs::default()
    };
    let r = rows(&inputs);
    assert_eq!(r.len(), 2, "{r:?}");
    assert_eq!(
        r[0][1..],
        ["3", "48", "3", "48000 ops/s", "16000", "1000.0", "100.0"]
    );
    assert_eq!(
        r[1][1..],
        ["8", "128", "1", "96000 ops/s", "12000", "750.0", "75.0"]
    );
    assert!(r[0][0].starts_with("workloada · null"), "{r:?}");
    let s = section(&inputs).unwrap();
    assert_eq!(s.charts.len(), 1);
    assert!(s.charts[0].contains("linear from 48 cores"));
}

#[test]
fn without_cores_the_node_is_the_unit_and_other_tags_make_other_series() {
    let inputs = Inputs {
        entries: vec![
            run(10_000.0, &[("nodes", "1"), ("build", "a")]),
            run(18_000.0, &[("nodes", "2"), ("build", "a")]),
            // another build is another series; one size alone is no scaling
            run(9_000.0, &[("nodes", "1"), ("build", "b")]),
            // not a node count: left out
            run(1.0, &[("nodes", "many"), ("build", "a")]),
            run(1.0, &[("nodes", "0"), ("build", "a")]),
        ],
        ..Inputs::default()
    };
    let r = rows(&inputs);
    assert_eq!(r.len(), 2, "{r:?}");
    assert!(r[0][0].ends_with("[build=a]"), "{r:?}");
    assert_eq!((r[0][2].as_str(), r[0][6].as_str()), ("-", "-"));
    assert_eq!(r[1][7], "90.0");
}

#[test]
fn tpcc_runs_scale_by_tpmc() {
    let inputs = Inputs {
        tpcc: vec![
            tpcc(30_000.0, &[("nodes", "3"), ("cores", "4")]),
            tpcc(60_000.0, &[("nodes", "6"), ("cores", "4")]),
        ],
        ..Inputs::default()
    };
    let r = rows(&inputs);
    assert_eq!(r.len(), 2, "{r:?}");
    assert!(r[0][0].starts_with("tpcc · sqlite"), "{r:?}");
    assert_eq!(r[1][4], "60000 tpmC");
    assert_eq!(r[1][7], "100.0");
}

#[test]
fn untagged_results_make_no_section() {
    let inputs = Inputs {
        entries: vec![run(1.0, &[]), run(2.0, &[("step", "x")])],
        ..Inputs::default()
    };
    assert!(section(&inputs).is_none());
}
