//! Runner behaviour with a scripted binding: insertion retries, failed session
//! opens, worker panics and the `--max-errors` budget.
use super::execute::{backoff, retryable};
use super::*;
use crate::binding::{EngineInfo, Fields, Outcome, Session, Status};
use crate::op::OpKind;
use crate::run::RunSpec;
use crate::workload::{CoreConfig, Properties};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

/// A binding that fails every insert `insert_failures` times before it
/// succeeds, and refuses sessions after the first `sessions` ones.
struct Fake {
    insert_failures: u32,
    sessions: u32,
    opened: AtomicU32,
    attempts: Arc<AtomicU32>,
}
struct FakeSession(u32, Arc<AtomicU32>);

impl Fake {
    fn new(insert_failures: u32, sessions: u32) -> Self {
        Fake {
            insert_failures,
            sessions,
            opened: AtomicU32::new(0),
            attempts: Arc::new(AtomicU32::new(0)),
        }
    }
}

impl Binding for Fake {
    type Session = FakeSession;
    async fn session(&self) -> Result<FakeSession, BindingError> {
        assert!(self.sessions != u32::MAX - 1, "a bug in a binding");
        if self.opened.fetch_add(1, Ordering::SeqCst) >= self.sessions {
            return Err(BindingError::Unavailable("too many connections".into()));
        }
        Ok(FakeSession(self.insert_failures, self.attempts.clone()))
    }
    fn info(&self) -> EngineInfo {
        EngineInfo::default()
    }
}

impl Session for FakeSession {
    async fn read(&mut self, _: &[u8], _: Fields, _: &mut Record) -> Outcome {
        Outcome::ok(1, 0)
    }
    async fn scan(&mut self, _: &[u8], _: u64, _: Fields, _: &mut ScanRows) -> Outcome {
        Outcome::ok(0, 0)
    }
    async fn update(&mut self, _: &[u8], _: &WriteSet) -> Outcome {
        Outcome::ok(0, 0)
    }
    async fn insert(&mut self, _: &[u8], _: &WriteSet) -> Outcome {
        let n = self.1.fetch_add(1, Ordering::SeqCst);
        if n % (self.0 + 1) < self.0 {
            Outcome::failed(Status::Unavailable, "try again")
        } else {
            Outcome::ok(0, 0)
        }
    }
    async fn delete(&mut self, _: &[u8]) -> Outcome {
        Outcome::ok(0, 0)
    }
}

/// The core workload of `kv` (`name=value` overrides).
fn config(kv: &[&str]) -> CoreConfig {
    let mut p = Properties::new();
    for o in kv {
        p.set_override(o).unwrap();
    }
    CoreConfig::from_properties(&p).unwrap()
}

fn run(
    b: Fake,
    phase: Phase,
    kv: &[&str],
    concurrency: usize,
) -> (Result<crate::run::RunOutput, BindingError>, u32) {
    let c = config(kv);
    let spec = RunSpec::from_config(phase, &c, concurrency, Duration::ZERO, 1).unwrap();
    let attempts = b.attempts.clone();
    let out = crate::run::run(
        &Ycsb::new(Arc::new(b), Arc::new(SharedState::new(c)), phase),
        &spec,
        &crate::run::Control::default(),
        &mut |_| {},
    );
    (out, attempts.load(Ordering::SeqCst))
}

fn load(limit: &str, failures: u32) -> (crate::run::RunOutput, u32) {
    let retry = format!("core_workload_insertion_retry_limit={limit}");
    let kv = [
        "recordcount=5",
        "fieldcount=1",
        &retry,
        "core_workload_insertion_retry_interval=0.001",
    ];
    let (out, attempts) = run(Fake::new(failures, u32::MAX), Phase::Load, &kv, 1);
    (out.unwrap(), attempts)
}

#[test]
fn failed_load_inserts_are_retried_up_to_the_limit_and_counted() {
    let (out, attempts) = load("2", 2);
    let ins = out.total.ops[OpKind::Insert.index()].as_ref().unwrap();
    assert_eq!(
        ins.statuses[Status::Ok.index()],
        5,
        "every insert succeeds on its third attempt"
    );
    assert_eq!(out.total.retries(), 10);
    assert_eq!(attempts, 15);
    let (out, _) = load("1", 2);
    let ins = out.total.ops[OpKind::Insert.index()].as_ref().unwrap();
    assert!(
        ins.statuses[Status::Unavailable.index()] > 0,
        "one retry is not enough"
    );
}

#[test]
fn more_errors_than_max_errors_stop_the_run() {
    let kv = ["recordcount=100000", "fieldcount=1", "threadcount=2"];
    let c = config(&kv);
    let mut spec = RunSpec::from_config(Phase::Load, &c, 1, Duration::ZERO, 1).unwrap();
    spec.max_errors = Some(10);
    // every insert fails (billions of failures before a success)
    let b = Arc::new(Fake::new(u32::MAX - 2, u32::MAX));
    let out = crate::run::run(
        &Ycsb::new(b, Arc::new(SharedState::new(c)), Phase::Load),
        &spec,
        &crate::run::Control::default(),
        &mut |_| {},
    )
    .unwrap();
    assert!(out.stopped_by_errors);
    let failed = out.total.total_errors();
    assert!(
        (11..100).contains(&failed),
        "stopped soon after the 11th failure: {failed}"
    );
}

#[test]
fn a_panicking_worker_is_an_error_not_a_hang() {
    let kv = ["recordcount=10", "operationcount=100", "threadcount=2"];
    let (out, _) = run(Fake::new(0, u32::MAX - 1), Phase::Run, &kv, 1);
    let e = out.expect_err("the run must fail");
    assert!(e.to_string().contains("a bug in a binding"), "{e}");
}

#[test]
fn a_session_that_cannot_open_stops_the_run_before_it_starts() {
    let kv = ["recordcount=10", "operationcount=100", "threadcount=3"];
    let (out, _) = run(Fake::new(0, 1), Phase::Run, &kv, 2);
    let e = out.expect_err("the run must not start");
    assert!(e.to_string().contains("too many connections"));
}

fn run_inserts(retry_limit: &str) -> crate::run::RunOutput {
    let limit = format!("retry.limit={retry_limit}");
    let kv = [
        "recordcount=5",
        "operationcount=12",
        "fieldcount=1",
        "readproportion=0",
        "updateproportion=0",
        "insertproportion=1",
        "retry.backoff=0.001",
        &limit,
    ];
    run(Fake::new(2, u32::MAX), Phase::Run, &kv, 1).0.unwrap()
}

#[test]
fn run_phase_operations_that_fail_retryably_are_retried_with_backoff_and_counted() {
    let out = run_inserts("2");
    let ins = out.total.ops[OpKind::Insert.index()].as_ref().unwrap();
    assert_eq!(
        ins.statuses[Status::Ok.index()],
        12,
        "third attempts succeed"
    );
    assert_eq!(ins.statuses[Status::Unavailable.index()], 0);
    assert_eq!(out.total.retries(), 24);
    // response time covers both backoffs (1 ms and 2 ms, each at least 0.8
    // of it), service time the last attempt only
    let (response, service) = (ins.response.min(), ins.service.min());
    assert!(response >= 2_400_000, "response {response} ns");
    assert!(service < response, "service {service} ns");
    let out = run_inserts("0");
    let ins = out.total.ops[OpKind::Insert.index()].as_ref().unwrap();
    assert_eq!(out.total.retries(), 0);
    assert_eq!(
        ins.statuses[Status::Unavailable.index()],
        8,
        "without retries two of every three attempts fail"
    );
}

#[test]
fn backoff_doubles_up_to_a_cap_with_bounded_jitter() {
    let base = Duration::from_millis(10);
    for salt in 0..50 {
        let b1 = backoff(base, 1, salt).as_secs_f64();
        let b3 = backoff(base, 3, salt).as_secs_f64();
        let b20 = backoff(base, 20, salt).as_secs_f64();
        assert!((0.008..=0.012).contains(&b1), "{b1}");
        assert!((0.032..=0.048).contains(&b3), "{b3}");
        assert!((0.8..=1.2).contains(&b20), "{b20}");
    }
    assert!(
        !retryable(Status::NotFound) && !retryable(Status::Error) && retryable(Status::Conflict)
    );
}

/// Reads YCSB's deterministic value of field0 (8 bytes) in a buffer of its
/// own and counts the records the harness gives back with that value in.
struct Lender(Arc<AtomicU32>, Arc<AtomicU32>);

impl Binding for Lender {
    type Session = Lender;
    async fn session(&self) -> Result<Lender, BindingError> {
        Ok(Lender(self.0.clone(), self.1.clone()))
    }
    fn info(&self) -> EngineInfo {
        EngineInfo::default()
    }
}

impl Session for Lender {
    async fn read(&mut self, key: &[u8], _: Fields, out: &mut Record) -> Outcome {
        self.0.fetch_add(1, Ordering::SeqCst);
        let mut v = Vec::new();
        crate::workload::keys::deterministic_value(key, "field0", 8, &mut v);
        out.put(0, v);
        Outcome::ok(1, 8)
    }
    async fn scan(&mut self, _: &[u8], _: u64, _: Fields, _: &mut ScanRows) -> Outcome {
        Outcome::ok(0, 0)
    }
    async fn update(&mut self, _: &[u8], _: &WriteSet) -> Outcome {
        Outcome::ok(1, 0)
    }
    async fn insert(&mut self, _: &[u8], _: &WriteSet) -> Outcome {
        Outcome::ok(1, 0)
    }
    async fn delete(&mut self, _: &[u8]) -> Outcome {
        Outcome::ok(1, 0)
    }
    fn release(&mut self, rec: &mut Record) {
        if rec.take(0).is_some_and(|v| v.len() == 8) {
            self.1.fetch_add(1, Ordering::SeqCst);
        }
    }
}

#[test]
fn every_read_is_released_after_its_value_was_verified() {
    let kv = [
        "recordcount=50",
        "operationcount=400",
        "fieldcount=1",
        "fieldlength=8",
        "dataintegrity=true",
        "readproportion=0.5",
        "updateproportion=0",
        "readmodifywriteproportion=0.5",
    ];
    let c = config(&kv);
    let spec = RunSpec::from_config(Phase::Run, &c, 3, Duration::ZERO, 1).unwrap();
    let (reads, released) = (Arc::default(), Arc::<AtomicU32>::default());
    let b = Arc::new(Lender(Arc::clone(&reads), released.clone()));
    let out = crate::run::run(
        &Ycsb::new(b, Arc::new(SharedState::new(c)), Phase::Run),
        &spec,
        &crate::run::Control::default(),
        &mut |_| {},
    )
    .unwrap();
    let ok = |k: OpKind| {
        out.total.ops[k.index()]
            .as_ref()
            .map_or(0, |o| o.statuses[Status::Ok.index()])
    };
    // a release before the check would leave it nothing to verify: the
    // reads of read-modify-writes are counted as reads too
    let reads = reads.load(Ordering::SeqCst);
    assert!(ok(OpKind::ReadModifyWrite) > 0 && reads > 0);
    assert_eq!(
        (ok(OpKind::Read), out.total.total_errors()),
        (reads.into(), 0)
    );
    assert_eq!(released.load(Ordering::SeqCst), reads);
}

/// Takes its calls' starts as a time limit does, counting its calls and
/// those the worker lent a stamp: (calls, lent).
#[derive(Clone, Default)]
struct Borrower(Arc<(AtomicU32, AtomicU32)>);

impl Borrower {
    fn start(&self) -> Outcome {
        let lent = crate::run::clock::Clock::lent() != 0;
        let start = crate::run::clock::Clock::shared().call_start();
        assert!(start != 0 && crate::run::clock::Clock::lent() == 0);
        self.0 .0.fetch_add(1, Ordering::SeqCst);
        self.0 .1.fetch_add(lent as u32, Ordering::SeqCst);
        Outcome::ok(1, 0)
    }
}

impl Binding for Borrower {
    type Session = Borrower;
    async fn session(&self) -> Result<Borrower, BindingError> {
        Ok(self.clone())
    }
    fn info(&self) -> EngineInfo {
        EngineInfo::default()
    }
}

impl Session for Borrower {
    const TAKES_CALL_START: bool = true;
    async fn read(&mut self, _: &[u8], _: Fields, _: &mut Record) -> Outcome {
        self.start()
    }
    async fn scan(&mut self, _: &[u8], _: u64, _: Fields, _: &mut ScanRows) -> Outcome {
        self.start()
    }
    async fn update(&mut self, _: &[u8], _: &WriteSet) -> Outcome {
        self.start()
    }
    async fn insert(&mut self, _: &[u8], _: &WriteSet) -> Outcome {
        self.start()
    }
    async fn delete(&mut self, _: &[u8]) -> Outcome {
        self.start()
    }
    async fn insert_batch(&mut self, _: &crate::binding::Batch) -> Outcome {
        self.start()
    }
}

#[test]
fn every_call_of_a_session_that_takes_its_start_is_lent_the_workers_stamp() {
    let tsc = crate::run::clock::Clock::shared().tsc;
    for (phase, kv) in [
        (Phase::Load, &["recordcount=40"][..]),
        (Phase::Load, &["recordcount=40", "db.batchsize=8"][..]),
        (
            Phase::Run,
            &[
                "recordcount=40",
                "operationcount=400",
                "readproportion=0.3",
                "updateproportion=0.3",
                "insertproportion=0.2",
                "scanproportion=0.1",
                "readmodifywriteproportion=0.1",
            ][..],
        ),
    ] {
        let c = config(kv);
        let spec = RunSpec::from_config(phase, &c, 3, Duration::ZERO, 1).unwrap();
        let b = Borrower::default();
        let counts = b.0.clone();
        crate::run::run(
            &Ycsb::new(Arc::new(b), Arc::new(SharedState::new(c)), phase),
            &spec,
            &crate::run::Control::default(),
            &mut |_| {},
        )
        .unwrap();
        let (calls, lent) = (
            counts.0.load(Ordering::SeqCst),
            counts.1.load(Ordering::SeqCst),
        );
        assert!(calls >= 5, "{kv:?}: {calls} calls");
        // only stamps of the counter are lent
        assert_eq!(lent, if tsc { calls } else { 0 }, "{kv:?}");
    }
}

#[test]
fn closed_loop_steps_stop_at_the_slots_quota_and_at_the_loads_last_key() {
    // the steps of a slot are one loop: it must end exactly at its share
    // of operationcount (7 over 3 slots: 3, 2, 2), and a load's slots when
    // the keys run out
    let kv = [
        "recordcount=5",
        "operationcount=7",
        "readproportion=1",
        "updateproportion=0",
    ];
    let count = |out: &crate::run::RunOutput, k: OpKind| {
        out.total.ops[k.index()].as_ref().map_or(0, |o| o.count())
    };
    let (out, _) = run(Fake::new(0, u32::MAX), Phase::Run, &kv, 3);
    assert_eq!(count(&out.unwrap(), OpKind::Read), 7);
    let (out, attempts) = run(Fake::new(0, u32::MAX), Phase::Load, &kv, 2);
    assert_eq!((count(&out.unwrap(), OpKind::Insert), attempts), (5, 5));
}
