use super::*;
use yardstick_core::observe::{Kind, PerOperation, Series};

/// A real null:// run's result with its observation (trimmed to a few series).
fn run() -> RunResult {
    serde_json::from_str(include_str!("testdata/observed-run.json")).unwrap()
}

fn gauge(mean: f64) -> Series {
    Series {
        source: "postgresql".into(),
        kind: Kind::Gauge,
        unit: "sessions".into(),
        total_unit: None,
        values: vec![Some(mean)],
        measured: Some(mean),
        max: Some(mean),
    }
}

#[test]
fn the_settings_that_differ_are_listed_by_where_they_are_recorded() {
    let (mut a, mut b) = (run(), run());
    assert_eq!(config_differences(&(&a).into(), &(&b).into()), vec![]);
    let pg = |shared: &str| {
        BTreeMap::from([
            ("shared_buffers".to_string(), shared.to_string()),
            ("application_name".to_string(), "yardstick".to_string()),
        ])
    };
    a.observation
        .as_mut()
        .unwrap()
        .configuration
        .insert("postgresql".into(), pg("16384 8kB"));
    let mut with_sync = pg("32768 8kB");
    with_sync.insert("synchronous_commit".into(), "off".into());
    b.observation
        .as_mut()
        .unwrap()
        .configuration
        .insert("postgresql".into(), with_sync);
    b.runner.threads += 3;
    b.host.cores = 64;
    let d = config_differences(&(&a).into(), &(&b).into());
    let row = |g: &str, n: &str| {
        d.iter()
            .find(|x| x.group == g && x.name == n)
            .map(|x| (x.a.as_str(), x.b.as_str()))
    };
    assert_eq!(
        row("postgresql", "shared_buffers"),
        Some(("16384 8kB", "32768 8kB"))
    );
    assert_eq!(row("postgresql", "synchronous_commit"), Some(("-", "off")));
    assert_eq!(row("postgresql", "application_name"), None);
    assert!(row("client", "threads x in flight").is_some());
    assert_eq!(row("host", "cores").map(|r| r.1), Some("64"));
    assert_eq!(d.len(), 4, "{d:?}");
}

#[test]
fn server_behaviour_is_shown_per_operation_with_the_top_wait_events() {
    let (mut a, mut b) = (run(), run());
    for (r, cpu, lock) in [(&mut a, 20.0, 0.1), (&mut b, 15.0, 0.9)] {
        let o = r.observation.as_mut().unwrap();
        o.per_operation = Some(PerOperation {
            operations: 3000,
            server_cpu_us: Some(cpu),
            host_cpu_us: Some(40.0),
            ..PerOperation::default()
        });
        o.series.insert("db.wait.Lock:tuple".into(), gauge(lock));
        o.series.insert("db.wait.CPU".into(), gauge(0.5));
    }
    let t = server_table(&(&a).into(), &(&b).into(), "op");
    assert!(t.contains("server CPU per op"), "{t}");
    let line = t
        .lines()
        .find(|l| l.starts_with("server CPU per op"))
        .unwrap();
    assert!(
        line.contains("20.0 µs") && line.contains("15.0 µs") && line.contains("-25.0%"),
        "{line}"
    );
    // not observed in either run: no row
    assert!(!t.contains("server read per op"), "{t}");
    assert!(
        t.contains("top wait events A (mean active sessions): CPU 0.50, Lock:tuple 0.10"),
        "{t}"
    );
    assert!(
        t.contains("top wait events B (mean active sessions): Lock:tuple 0.90, CPU 0.50"),
        "{t}"
    );
    a.observation = None;
    assert_eq!(server_table(&(&a).into(), &(&b).into(), "op"), "");
}

#[test]
fn an_lsm_engines_level_0_and_compaction_backlog_are_compared() {
    let (mut a, mut b) = (run(), run());
    for (r, l0, pending, write) in [(&mut a, 17.0, 1.08e9, 0.08), (&mut b, 0.0, 0.0, 12.0)] {
        let o = r.observation.as_mut().unwrap();
        o.series.insert("db.level.L0.files".into(), gauge(l0));
        o.series
            .insert("db.compaction.pending_bytes".into(), gauge(pending));
        // reads found in L0 out of all found: 90% in A, none in B
        o.series.insert(
            "db.get.found.L0".into(),
            gauge(if l0 > 0.0 { 900.0 } else { 0.0 }),
        );
        o.series.insert(
            "db.get.found.L2_up".into(),
            gauge(if l0 > 0.0 { 100.0 } else { 1000.0 }),
        );
        o.per_operation = Some(PerOperation {
            host_disk_write_bytes: Some(write),
            ..PerOperation::default()
        });
    }
    let t = server_table(&(&a).into(), &(&b).into(), "op");
    let row = |label: &str| {
        t.lines()
            .find(|l| l.starts_with(label))
            .unwrap_or_else(|| panic!("{t}"))
    };
    assert!(
        row("L0 files (mean)").contains("17.0") && row("L0 files (mean)").contains("-100.0%"),
        "{t}"
    );
    assert!(row("pending compaction").contains("1080.0 MB"), "{t}");
    let found = row("reads found in L0");
    assert!(found.contains("90.00%") && found.contains("0.00%"), "{t}");
    // a fraction of a byte per operation is not rounded to 0 B
    assert!(row("host disk write per op").contains("0.08 B"), "{t}");
    assert!(row("host disk write per op").contains("12 B"), "{t}");
    assert!(row("host disk write per op").ends_with(" x150"), "{t}");
    // neither run stalled writes: no row
    assert!(!t.contains("write stall time"), "{t}");
}

#[test]
fn a_tpcc_runs_configuration_is_compared_like_a_phases() {
    let tpcc =
        || -> TpccResult { serde_json::from_str(include_str!("testdata/tpcc-run.json")).unwrap() };
    let (a, mut b) = (tpcc(), tpcc());
    assert_eq!(config_differences(&(&a).into(), &(&b).into()), vec![]);
    b.config.warehouses = 8;
    b.database.isolation = "read committed".into();
    let d = config_differences(&(&a).into(), &(&b).into());
    let names: Vec<(&str, &str)> = d
        .iter()
        .map(|d| (d.group.as_str(), d.name.as_str()))
        .collect();
    assert_eq!(names, [("client", "isolation"), ("client", "warehouses")]);
    assert_eq!((d[1].a.as_str(), d[1].b.as_str()), ("1", "8"));
    let t = server_table(&(&a).into(), &(&b).into(), "txn");
    assert!(t.contains("host CPU per txn"), "{t}");
    assert!(t.contains("over 4,674 and 4,674 transactions"), "{t}");
}
