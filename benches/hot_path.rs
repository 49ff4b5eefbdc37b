//! Criterion benchmarks of the per-operation hot path: choosing a key, building
//! the key and the values, choosing the operation, recording a latency, and
//! the whole worker loop over a binding that does nothing.
//! Run with `cargo bench --bench hot_path`; the whole-harness figures come from
//! `scripts/selfbench.sh` (null:// runs, CPU per operation).
use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use std::sync::Arc;
use std::time::Duration;
use yardstick_core::binding::{
    Binding, BindingError, EngineInfo, Fields, Outcome, Record, ScanRows, Session, Status, WriteSet,
};
use yardstick_core::bounded::Bounded;
use yardstick_core::op::OpKind;
use yardstick_core::rng::Rng;
use yardstick_core::run::{run, Control, RunSpec, Ycsb};
use yardstick_core::stats::Recorder;
use yardstick_core::workload::{CoreConfig, Phase, Properties, SharedState, Stream};

fn shared(kv: &[&str]) -> SharedState {
    let mut p = Properties::new();
    for o in kv {
        p.set_override(o).expect("valid property");
    }
    SharedState::new(CoreConfig::from_properties(&p).expect("valid config"))
}

fn key_choice(c: &mut Criterion) {
    let mut g = c.benchmark_group("plan_op");
    g.throughput(Throughput::Elements(1));
    for dist in ["uniform", "zipfian", "latest", "hotspot"] {
        let s = shared(&[
            "recordcount=1000000",
            "operationcount=1000000",
            "readproportion=1",
            "updateproportion=0",
            &format!("requestdistribution={dist}"),
        ]);
        let mut st = Stream::new(&s, 1);
        g.bench_function(dist, |b| b.iter(|| black_box(st.next_run_op(&s))));
    }
    g.finish();
}

fn key_and_values(c: &mut Criterion) {
    let s = shared(&["recordcount=1000000"]);
    let mut st = Stream::new(&s, 1);
    let mut key = Vec::new();
    let mut n = 0u64;
    // into a run's key buffer, as an operation builds it; and into a Vec,
    // as a load batch does
    let mut buf = yardstick_core::workload::keys::KeyBuf::default();
    c.bench_function("build_key_hashed", |b| {
        b.iter(|| {
            n = n.wrapping_add(7919) % 1_000_000;
            st.key_to(&s, black_box(n), &mut buf);
            black_box(buf.as_bytes());
        })
    });
    c.bench_function("build_key_hashed_vec", |b| {
        b.iter(|| {
            n = n.wrapping_add(7919) % 1_000_000;
            st.key(&s, black_box(n), &mut key);
        })
    });
    let mut ws = WriteSet::default();
    let mut g = c.benchmark_group("values");
    g.throughput(Throughput::Bytes(1000));
    g.bench_function("all_fields_10x100B", |b| {
        b.iter(|| st.values(&s, b"user1", Fields::All, &mut ws))
    });
    // the pipelined SET's shape: one field of 1,000 bytes
    let one = shared(&["recordcount=1000000", "fieldcount=1", "fieldlength=1000"]);
    let mut st1 = Stream::new(&one, 1);
    g.bench_function("one_field_1000B", |b| {
        b.iter(|| st1.values(&one, b"user1", Fields::All, &mut ws))
    });
    g.finish();
    let mut rng = Rng::new(1);
    let mut buf = vec![0u8; 1024];
    c.bench_function("fill_printable_1KiB", |b| {
        b.iter(|| rng.fill_printable(black_box(&mut buf)))
    });
}

fn recording(c: &mut Criterion) {
    let mut r = Recorder::new();
    let mut rng = Rng::new(2);
    c.bench_function("record_latency", |b| {
        b.iter(|| {
            let v = 1_000 + rng.below(1_000_000);
            r.record(OpKind::Read, Status::Ok, black_box(v), v, 1, 100);
        })
    });
    c.bench_function("clock_read_os", |b| {
        b.iter(|| black_box(std::time::Instant::now()))
    });
    let clock = quanta::Clock::new();
    c.bench_function("clock_read_stamp", |b| b.iter(|| black_box(clock.raw())));
}

/// The floor of one workload C operation as the performance issue defines
/// it: two time stamps, one key draw (the operation's plan and its key's
/// bytes, Zipfian over a million records) and one histogram record (the
/// single write of an operation whose response time is its service time,
/// as a closed loop's is), with nothing between the stamps. Beside `worker_loop/workloadc` in one run,
/// the difference is the harness's own machinery (the slot's future, the
/// binding's call, the interval and stop checks).
fn floor(c: &mut Criterion) {
    let s = shared(&[
        "recordcount=1000000",
        "readproportion=1",
        "updateproportion=0",
        "requestdistribution=zipfian",
    ]);
    let mut st = Stream::new(&s, 1);
    let mut key = yardstick_core::workload::keys::KeyBuf::default();
    let mut r = Recorder::new();
    let clock = quanta::Clock::new();
    let mut g = c.benchmark_group("floor");
    g.throughput(Throughput::Elements(1));
    g.bench_function("stamps_key_record", |b| {
        b.iter(|| {
            let op = st.next_run_op(&s);
            st.key_to(&s, op.keynum, &mut key);
            let start = clock.raw();
            black_box(key.as_bytes());
            let end = clock.raw();
            let ns = clock.delta_as_nanos(start, end);
            r.record_same(OpKind::Read, Status::Ok, ns, 1, 0);
        })
    });
    g.finish();
}

/// A binding whose every call succeeds at once: `null://` without options.
struct Nothing;
struct NothingSession;

impl Binding for Nothing {
    type Session = NothingSession;
    async fn session(&self) -> Result<NothingSession, BindingError> {
        Ok(NothingSession)
    }
    fn info(&self) -> EngineInfo {
        EngineInfo::default()
    }
}

impl Session for NothingSession {
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
        Outcome::ok(0, 0)
    }
    async fn delete(&mut self, _: &[u8]) -> Outcome {
        Outcome::ok(0, 0)
    }
}

/// `Nothing` with every call under a time limit, as network bindings are:
/// the limit starts from the worker's stamp, lent to it.
struct Limited;

impl Binding for Limited {
    type Session = Bounded<NothingSession>;
    async fn session(&self) -> Result<Self::Session, BindingError> {
        Ok(Bounded::new(NothingSession, Duration::from_secs(10)))
    }
    fn info(&self) -> EngineInfo {
        EngineInfo::default()
    }
}

/// `Limited` behind a wrapper that does not take the worker's stamp: the
/// limit reads the clock itself, as before the stamp was lent.
struct Unlent;
struct UnlentSession(Bounded<NothingSession>);

impl Binding for Unlent {
    type Session = UnlentSession;
    async fn session(&self) -> Result<UnlentSession, BindingError> {
        Ok(UnlentSession(Limited.session().await?))
    }
    fn info(&self) -> EngineInfo {
        EngineInfo::default()
    }
}

impl Session for UnlentSession {
    async fn read(&mut self, k: &[u8], f: Fields, out: &mut Record) -> Outcome {
        self.0.read(k, f, out).await
    }
    async fn scan(&mut self, k: &[u8], n: u64, f: Fields, out: &mut ScanRows) -> Outcome {
        self.0.scan(k, n, f, out).await
    }
    async fn update(&mut self, k: &[u8], v: &WriteSet) -> Outcome {
        self.0.update(k, v).await
    }
    async fn insert(&mut self, k: &[u8], v: &WriteSet) -> Outcome {
        self.0.insert(k, v).await
    }
    async fn delete(&mut self, k: &[u8]) -> Outcome {
        self.0.delete(k).await
    }
}

/// Wall time of a one-thread run of `ops` operations against `binding`.
fn timed_run<B: Binding + 'static>(binding: B, ops: u64, extra: &[&str]) -> Duration {
    let ops = format!("operationcount={}", ops.max(1));
    let mut kv = vec!["recordcount=1000000", "requestdistribution=zipfian", &ops];
    kv.extend_from_slice(extra);
    let s = shared(&kv);
    let spec =
        RunSpec::from_config(Phase::Run, &s.config, 1, Duration::ZERO, 1).expect("valid spec");
    let work = Ycsb::new(Arc::new(binding), Arc::new(s), Phase::Run);
    let t = std::time::Instant::now();
    run(&work, &spec, &Control::default(), &mut |_| {}).expect("the run");
    t.elapsed()
}

/// The worker loop end to end (plan, key, values, call, time, record,
/// intervals) on one thread: wall time per operation of a run of
/// `iters` operations; workload C also with the calls under a time limit
/// (the limit's cost, with the worker's stamp lent to it and without).
fn worker_loop(c: &mut Criterion) {
    let mut g = c.benchmark_group("worker_loop");
    g.throughput(Throughput::Elements(1));
    let c_only = &["readproportion=1", "updateproportion=0"][..];
    let a_1kib = &[
        "readproportion=0.5",
        "updateproportion=0.5",
        "writeallfields=true",
    ][..];
    g.bench_function("workloadc", |b| {
        b.iter_custom(|iters| timed_run(Nothing, iters, c_only))
    });
    g.bench_function("workloadc_time_limit", |b| {
        b.iter_custom(|iters| timed_run(Limited, iters, c_only))
    });
    g.bench_function("workloadc_time_limit_unlent", |b| {
        b.iter_custom(|iters| timed_run(Unlent, iters, c_only))
    });
    g.bench_function("workloada_1KiB_updates", |b| {
        b.iter_custom(|iters| timed_run(Nothing, iters, a_1kib))
    });
    g.finish();
}

criterion_group!(
    benches,
    key_choice,
    key_and_values,
    recording,
    floor,
    worker_loop
);
criterion_main!(benches);
