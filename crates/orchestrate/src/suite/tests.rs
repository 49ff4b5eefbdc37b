//! Tests of the suite: presets, planning, resume, summaries and the printed table.
use super::*;

#[test]
fn the_ycsb_sequence_is_the_recommended_order() {
    let names: Vec<&str> = YCSB.iter().map(|s| s.name).collect();
    assert_eq!(names, ["load", "a", "b", "c", "f", "d", "reload", "e"]);
    assert!(!YCSB[3].writes, "C only reads");
    let m: Vec<&str> = MIXES.iter().map(|s| s.name).collect();
    assert_eq!(m[1], "batch-load");
    assert_eq!(MIXES[1].batch, Some(3000));
}

fn rec(step: &str, status: StepStatus) -> StepRecord {
    StepRecord {
        id: step.into(),
        target: 0,
        records: 10,
        repetition: 1,
        step: step.into(),
        description: String::new(),
        phase: PhaseKind::Run,
        workload: String::new(),
        status,
        exit_code: None,
        data_before: None,
        result: None,
        ops_per_sec: None,
        latency_us: BTreeMap::new(),
        slo: None,
        next_insert_keynum: None,
        started_at: None,
        ended_at: None,
    }
}

#[test]
fn the_data_state_follows_the_writes_since_the_last_load() {
    let plan: Vec<StepRecord> = ["load", "a", "b", "c", "f", "d", "reload", "e"]
        .iter()
        .enumerate()
        .map(|(i, s)| {
            rec(
                s,
                if i < 4 {
                    StepStatus::Ok
                } else if i == 4 {
                    StepStatus::Interrupted
                } else {
                    StepStatus::Pending
                },
            )
        })
        .collect();
    let st = |i| data_before(&plan, YCSB, i);
    assert_eq!(st(0).state, Cleanliness::Clean);
    assert_eq!(st(1).state, Cleanliness::Clean);
    assert_eq!(st(2).written_since_load, ["a"]);
    // C runs on data A and B rewrote; C itself writes nothing
    assert_eq!(st(3).written_since_load, ["a", "b"]);
    assert_eq!(st(5).written_since_load, ["a", "b", "f (interrupted)"]);
    let mut done = plan.clone();
    for s in &mut done {
        s.status = StepStatus::Ok;
    }
    assert_eq!(data_before(&done, YCSB, 7).state, Cleanliness::Clean);
}

#[test]
fn summaries_average_repetitions_and_scaling_compares_sizes() {
    let mut steps = Vec::new();
    for (records, rep, ops, p99) in [
        (10u64, 1u32, 100.0, 10.0),
        (10, 2, 120.0, 14.0),
        (1000, 1, 55.0, 30.0),
        (1000, 2, 55.0, 30.0),
    ] {
        let mut s = rec("a", StepStatus::Ok);
        s.records = records;
        s.repetition = rep;
        s.ops_per_sec = Some(ops);
        s.latency_us.insert(
            "UPDATE".into(),
            [("p99".to_string(), p99), ("mean".to_string(), p99 / 2.0)].into(),
        );
        steps.push(s);
    }
    let mut index = SuiteIndex {
        kind: String::new(),
        schema_version: SUITE_SCHEMA_VERSION,
        suite: SuiteName::Scaling,
        tool_version: String::new(),
        fingerprint: String::new(),
        targets: vec!["null://".into()],
        records: vec![10, 1000],
        repeat: 2,
        until: None,
        seed: 1,
        duration_s: 1.0,
        warmup_s: 0.0,
        threads: 1,
        load_threads: 1,
        concurrency: 1,
        properties: vec![],
        slo: None,
        steps,
        summary: vec![],
        scaling: vec![],
    };
    summarize(&mut index);
    assert_eq!(index.summary.len(), 2);
    let small = &index.summary[0];
    let ops = small.ops_per_sec.as_ref().unwrap();
    assert_eq!((ops.n, ops.mean), (2, 110.0));
    // t(0.975, 1) * stdev / sqrt(2) = 12.706 * 14.142 / 1.414
    assert!((ops.ci95.unwrap() - 127.06).abs() < 0.1);
    assert_eq!(index.scaling.len(), 1);
    let s = &index.scaling[0];
    assert!((s.ops_per_sec_change_pct.unwrap() + 50.0).abs() < 1e-9);
    assert!((s.p99_change_pct["UPDATE"] - 150.0).abs() < 1e-9);
    assert!(table(&index).contains("throughput -50%"));
}

#[test]
fn fingerprints_change_with_any_part() {
    let a = fingerprint(&["x".into(), "y".into()]);
    assert_eq!(a, fingerprint(&["x".into(), "y".into()]));
    assert_ne!(a, fingerprint(&["xy".into()]));
    assert_ne!(a, fingerprint(&["x".into(), "z".into()]));
}
