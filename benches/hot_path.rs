//! Criterion benchmarks of the per-operation hot path: choosing a key, building
//! the key and the values, choosing the operation, recording a latency.
//! Run with `cargo bench --bench hot_path`; the whole-harness figures come from
//! `scripts/selfbench.sh` (null:// runs, CPU per operation).
use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use yardstick_core::binding::{Fields, Status, WriteSet};
use yardstick_core::op::OpKind;
use yardstick_core::rng::Rng;
use yardstick_core::stats::Recorder;
use yardstick_core::workload::{CoreConfig, Properties, SharedState, Stream};

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
    c.bench_function("build_key_hashed", |b| {
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

criterion_group!(benches, key_choice, key_and_values, recording);
criterion_main!(benches);
