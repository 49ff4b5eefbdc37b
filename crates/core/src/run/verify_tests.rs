//! A load through a store that refuses some inserts and later loses or
//! changes records, then the read-back: each finding counted where it belongs.
use super::*;
use crate::binding::{EngineInfo, Outcome, ScanRows, Session, WriteSet};
use crate::run::{run, Control, RunSpec, Ycsb};
use crate::workload::Properties;
use std::collections::BTreeMap;
use std::time::Duration;

type Table = Arc<Mutex<BTreeMap<Vec<u8>, Vec<Vec<u8>>>>>;

/// An in-memory store whose every `refuse`-th insert fails with an error.
struct Store {
    table: Table,
    refuse: u64,
    calls: Arc<AtomicU64>,
}
struct StoreSession(Table, u64, Arc<AtomicU64>);

impl Binding for Store {
    type Session = StoreSession;
    async fn session(&self) -> Result<StoreSession, BindingError> {
        Ok(StoreSession(
            self.table.clone(),
            self.refuse,
            self.calls.clone(),
        ))
    }
    fn info(&self) -> EngineInfo {
        EngineInfo::default()
    }
}

impl Session for StoreSession {
    async fn read(&mut self, key: &[u8], _: Fields, out: &mut Record) -> Outcome {
        match self.0.lock().unwrap().get(key) {
            Some(values) => {
                for (i, v) in values.iter().enumerate() {
                    out.set(i, v);
                }
                Outcome::ok(1, 0)
            }
            None => Outcome::failed(Status::NotFound, "absent"),
        }
    }
    async fn scan(&mut self, _: &[u8], _: u64, _: Fields, _: &mut ScanRows) -> Outcome {
        Outcome::ok(0, 0)
    }
    async fn update(&mut self, _: &[u8], _: &WriteSet) -> Outcome {
        Outcome::ok(0, 0)
    }
    async fn insert(&mut self, key: &[u8], values: &WriteSet) -> Outcome {
        if self.2.fetch_add(1, Ordering::SeqCst) % self.1 == self.1 - 1 {
            return Outcome::failed(Status::Error, "refused");
        }
        let row = values.iter().map(|(_, v)| v.to_vec()).collect();
        self.0.lock().unwrap().insert(key.to_vec(), row);
        Outcome::ok(1, 0)
    }
    async fn delete(&mut self, _: &[u8]) -> Outcome {
        Outcome::ok(0, 0)
    }
}

fn config(kv: &[&str]) -> CoreConfig {
    let mut p = Properties::new();
    for o in kv {
        p.set_override(o).unwrap();
    }
    CoreConfig::from_properties(&p).unwrap()
}

fn spec(c: &CoreConfig) -> RunSpec {
    RunSpec::from_config(Phase::Load, c, 2, Duration::ZERO, 1).unwrap()
}

/// Loads 100 records (every 10th insert refused), returns the store and the
/// phase's segment.
fn loaded() -> (Arc<Store>, Segment) {
    let c = config(&[
        "recordcount=100",
        "fieldcount=2",
        "fieldlength=8",
        "dataintegrity=true",
    ]);
    let store = Arc::new(Store {
        table: Table::default(),
        refuse: 10,
        calls: Arc::default(),
    });
    let state = Arc::new(SharedState::new(c.clone()));
    let out = run(
        &Ycsb::new(store.clone(), state.clone(), Phase::Load),
        &spec(&c),
        &Control::default(),
        &mut |_| {},
    )
    .unwrap();
    let ins = out.total.ops[OpKind::Insert.index()].as_ref().unwrap();
    assert_eq!(ins.statuses[Status::Error.index()], 10);
    assert_eq!((state.ledger.failed(), state.ledger.unknown()), (10, 0));
    (store, Segment::of(state, Phase::Load))
}

fn verify(store: Arc<Store>, segments: Vec<Segment>) -> Verification {
    let c = segments[0].state.config.clone();
    let v = Verify::new(store, Plan::new(segments).unwrap());
    run(&v, &spec(&c), &Control::default(), &mut |_| {}).unwrap();
    v.findings(0.0)
}

#[test]
fn a_faithful_store_keeps_every_acknowledged_insert() {
    let (store, seg) = loaded();
    assert_eq!((seg.first, seg.end), (0, 100));
    let found = verify(store, vec![seg]);
    assert_eq!(found.checked, 100);
    assert_eq!(found.acknowledged_present, 90);
    assert_eq!(found.failed_absent, 10);
    assert!(found.values_checked);
    assert!(found.passed(), "{}", found.line());
}

#[test]
fn lost_changed_and_refused_but_present_records_are_each_found() {
    let (store, seg) = loaded();
    let failed: Vec<u64> = seg.fates.keys().copied().collect();
    let mut key = Vec::new();
    let stream = Stream::new(&seg.state, 1);
    {
        let mut t = store.table.lock().unwrap();
        let acked: Vec<Vec<u8>> = t.keys().take(2).cloned().collect();
        t.remove(&acked[0]);
        t.get_mut(&acked[1]).unwrap()[0] = b"changed!".to_vec();
        // a refused insert that the store kept all the same
        stream.key(&seg.state, failed[0], &mut key);
        t.insert(key.clone(), vec![b"x".to_vec(), b"y".to_vec()]);
    }
    let found = verify(store, vec![seg]);
    assert_eq!(
        (found.lost, found.differing, found.failed_present),
        (1, 1, 1),
        "{}",
        found.line()
    );
    assert_eq!(found.acknowledged_present, 88);
    assert!(!found.passed());
    let named = format!("failed but present {}", String::from_utf8_lossy(&key));
    assert!(found.examples.contains(&named), "{:?}", found.examples);
    assert!(found.line().contains("1 lost"), "{}", found.line());
}

#[test]
fn unanswered_inserts_are_counted_either_way() {
    let (store, mut seg) = loaded();
    let failed: Vec<u64> = seg.fates.keys().copied().collect();
    seg.fates.insert(failed[0], Fate::Unknown);
    // an unanswered insert that did land
    let ack = (0..100).find(|k| !seg.fates.contains_key(k)).unwrap();
    seg.fates.insert(ack, Fate::Unknown);
    let found = verify(store, vec![seg]);
    assert_eq!((found.unknown_absent, found.unknown_present), (1, 1));
    assert!(found.passed(), "{}", found.line());
}

#[test]
fn overlapping_or_empty_phases_are_refused() {
    let (_, seg) = loaded();
    let (_, again) = loaded();
    let err = Plan::new(vec![seg, again]).err();
    assert_eq!(err, Some(PlanError::Overlap(1, 2)));
    let c = config(&["recordcount=100"]);
    let empty = Segment::of(Arc::new(SharedState::new(c)), Phase::Run);
    assert_eq!(Plan::new(vec![empty]).err(), Some(PlanError::Empty));
}
