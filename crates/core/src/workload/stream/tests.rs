use super::*;
use crate::workload::Properties;

fn shared(kv: &[&str]) -> SharedState {
    let mut p = Properties::new();
    for o in kv {
        p.set_override(o).unwrap();
    }
    SharedState::new(CoreConfig::from_properties(&p).unwrap())
}

#[test]
fn instances_insert_disjoint_keys_and_share_the_loaded_ones() {
    let mut c = shared(&["recordcount=100"]).config;
    let mut seen = std::collections::HashSet::new();
    for i in 0..3 {
        c.instance = (i, 3);
        assert_eq!(instance_key(&c, 42), 42, "loaded keys are everyone's");
        for k in 100..200 {
            assert!(
                seen.insert(instance_key(&c, k)),
                "key {k} of instance {i} taken twice"
            );
        }
    }
    // together the instances fill the range past recordcount without gaps
    assert!((100..400).all(|k| seen.contains(&k)));
    c.instance = (0, 1);
    assert_eq!(instance_key(&c, 150), 150);
}

#[test]
fn same_seed_same_operation_stream() {
    let s = shared(&[
        "recordcount=1000",
        "operationcount=1000",
        "requestdistribution=zipfian",
    ]);
    let mut a = Stream::new(&s, 42);
    let mut b = Stream::new(&s, 42);
    for _ in 0..1000 {
        let (x, y) = (a.next_run_op(&s), b.next_run_op(&s));
        assert_eq!(x, y);
    }
    let mut c = Stream::new(&s, 43);
    let differs = (0..100).any(|_| a.next_run_op(&s) != c.next_run_op(&s));
    assert!(differs);
}

#[test]
fn reads_never_target_unacknowledged_inserts() {
    // workload D shape: latest distribution and inserts growing the key space
    for dist in ["latest", "zipfian", "uniform", "exponential", "hotspot"] {
        let s = shared(&[
            "recordcount=100",
            "operationcount=10000",
            "readproportion=0.5",
            "updateproportion=0",
            "insertproportion=0.5",
            &format!("requestdistribution={dist}"),
        ]);
        let mut st = Stream::new(&s, 1);
        let mut outstanding = Vec::new();
        for i in 0..5000 {
            let op = st.next_run_op(&s);
            match op.kind {
                OpKind::Insert => outstanding.push(op.keynum),
                _ => assert!(
                    op.keynum as i64 <= s.inserts.limit(),
                    "{dist}: key {} above limit {}",
                    op.keynum,
                    s.inserts.limit()
                ),
            }
            // acknowledge every other step, out of order
            if i % 2 == 0 && outstanding.len() > 1 {
                let v = outstanding.swap_remove(1);
                s.inserts.acknowledge(v).unwrap();
            }
        }
        assert!(s.inserts.limit() >= 99);
    }
}

#[test]
fn load_ops_cover_the_insert_range_once() {
    let s = shared(&["recordcount=100", "insertstart=10", "insertcount=50"]);
    let mut st = Stream::new(&s, 1);
    let got: Vec<u64> = std::iter::from_fn(|| st.next_load_op(&s).map(|o| o.keynum)).collect();
    assert_eq!(got, (10..60).collect::<Vec<_>>());
}

#[test]
fn values_have_the_configured_lengths_and_integrity_values_verify() {
    let s = shared(&[
        "recordcount=10",
        "fieldcount=3",
        "fieldlength=20",
        "dataintegrity=true",
    ]);
    let mut st = Stream::new(&s, 1);
    let mut ws = WriteSet::default();
    let mut key = Vec::new();
    st.key(&s, 3, &mut key);
    st.values(&s, &key, Fields::All, &mut ws);
    assert_eq!(ws.len(), 3);
    let mut rec = Record::with_fields(3);
    for (i, v) in ws.iter() {
        assert_eq!(v.len(), 20);
        rec.set(i, v);
    }
    assert!(st.verify(&s, &key, Fields::All, &rec));
    rec.set(1, b"corrupted-value-here");
    assert!(!st.verify(&s, &key, Fields::All, &rec));
    assert!(st.verify(&s, &key, Fields::One(0), &rec));

    let s = shared(&[
        "recordcount=10",
        "fieldlengthdistribution=uniform",
        "minfieldlength=5",
        "fieldlength=9",
    ]);
    let mut st = Stream::new(&s, 1);
    for _ in 0..100 {
        st.values(&s, b"k", Fields::One(2), &mut ws);
        let (f, v) = ws.iter().next().unwrap();
        assert_eq!(f, 2);
        assert!((5..=9).contains(&v.len()));
    }
}

#[test]
fn operation_mix_follows_proportions() {
    let s = shared(&[
        "recordcount=100",
        "operationcount=100000",
        "readproportion=0.5",
        "updateproportion=0.3",
        "scanproportion=0.2",
    ]);
    let mut st = Stream::new(&s, 5);
    let mut counts = [0.0; OpKind::COUNT];
    for _ in 0..100_000 {
        let op = st.next_run_op(&s);
        counts[op.kind.index()] += 1.0;
        if op.kind == OpKind::Scan {
            assert!((1..=1000).contains(&op.scan_length));
        }
    }
    let obs = [counts[0], counts[1], counts[3]];
    let exp = [50_000.0, 30_000.0, 20_000.0];
    assert!(crate::stats::chi2::chi_squared(&obs, &exp).passes());
}
