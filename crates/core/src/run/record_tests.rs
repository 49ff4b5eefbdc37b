//! The recorder's own behaviour: intervals, where a stamped operation's end
//! falls, and what a trace keeps.
use super::*;

#[test]
fn interval_indices_are_aligned_to_measurement_start() {
    let ms = Instant::now() + Duration::from_secs(10);
    let iv = Intervals {
        measure_start: ms,
        length: Duration::from_secs(1),
    };
    assert_eq!(iv.index_of(ms), 0);
    assert_eq!(iv.index_of(ms + Duration::from_millis(999)), 0);
    assert_eq!(iv.index_of(ms + Duration::from_millis(1000)), 1);
    assert_eq!(iv.index_of(ms - Duration::from_millis(1)), -1);
    assert_eq!(iv.index_of(ms - Duration::from_millis(1000)), -1);
    assert_eq!(iv.index_of(ms - Duration::from_millis(1001)), -2);
    assert_eq!(iv.start_of(-1), ms - Duration::from_secs(1));
    assert_eq!(iv.start_of(2), ms + Duration::from_secs(2));
}

#[test]
fn a_traced_operation_carries_its_response_time_from_the_first_attempt() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.trace");
    let sink = Arc::new(crate::trace::Sink::create(&path, &Default::default()).unwrap());
    sink.started(std::time::SystemTime::now());
    let (tx, _rx) = mpsc::channel();
    let t0 = Instant::now();
    let iv = Intervals {
        measure_start: t0,
        length: Duration::from_secs(1),
    };
    let clock = Clock::new();
    let budget = Arc::new(ErrorBudget::default());
    let mut ws = WorkerState::new(0, iv, t0, tx, clock.clone(), budget, None);
    ws.trace = Some(sink.worker());
    let first = clock.raw();
    let (retry, end) = (
        stamp_after(&clock, first, 30_000),
        stamp_after(&clock, first, 50_000),
    );
    let ok = Outcome::ok(1, 0);
    let traced = |first| Traced {
        key: b"k",
        keynum: None,
        first,
        arg: 0,
    };
    // one attempt, then one retried: response from the first attempt's start
    ws.record_traced(
        OpKind::Read,
        &ok,
        Origin::Stamp(first),
        (first, end),
        || traced(first),
    );
    ws.record_traced(
        OpKind::Read,
        &ok,
        Origin::Stamp(first),
        (retry, end),
        || traced(first),
    );
    drop(ws);
    sink.finish();
    let t = crate::trace::read(&path).unwrap();
    let lat: Vec<u64> = t.ops.iter().map(|o| o.latency_ns).collect();
    assert_eq!(lat.len(), 2);
    assert!(
        lat.iter().all(|&l| (50_000..50_100).contains(&l)),
        "{lat:?}"
    );
}

/// The raw stamp `ns` after stamp `from`, as `clock` counts.
fn stamp_after(clock: &quanta::Clock, from: u64, ns: u64) -> u64 {
    let mut to = from;
    while clock.delta_as_nanos(from, to) < ns {
        to += 1 + (ns - clock.delta_as_nanos(from, to)) / 4;
    }
    to
}

#[test]
fn a_stamped_end_falls_in_the_warm_up_the_measurement_or_past_the_deadline() {
    // seconds apart, so a stall of the test's thread cannot move a moment
    // behind the anchor the worker re-takes at the interval's end
    let (tx, _rx) = mpsc::channel();
    let t0 = Instant::now();
    let s = Duration::from_secs;
    let iv = Intervals {
        measure_start: t0 + s(50),
        length: s(100),
    };
    let clock = Clock::new();
    let budget = Arc::new(ErrorBudget::default());
    let deadline = Some(t0 + s(100));
    let mut ws = WorkerState::new(0, iv, t0, tx, clock.clone(), budget, deadline);
    let raw0 = clock.raw();
    let ok = Outcome::ok(1, 0);
    let at = |ws: &mut WorkerState, after: u64| {
        let end = stamp_after(&clock, raw0, after * 1_000_000_000);
        ws.record(
            OpKind::Read,
            &ok,
            Origin::Stamp(end - 1000),
            end - 1000,
            end,
        )
    };
    let warm = at(&mut ws, 10);
    assert!(!warm.measured && !warm.past_deadline, "{warm:?}");
    assert_eq!(ws.index(), -1);
    let measured = at(&mut ws, 60);
    assert!(measured.measured && !measured.past_deadline, "{measured:?}");
    // the end moved the worker into the first measured interval
    assert_eq!(ws.index(), 0);
    let late = at(&mut ws, 150);
    assert!(late.measured && late.past_deadline, "{late:?}");
    // where a stamp falls is where its Instant falls
    let a = ws.anchor;
    for t in [t0 + s(50), t0 + s(100), t0 + s(2_000)] {
        let st = a.stamp_of(&clock, t);
        assert!(a.instant(&clock, st) >= t && a.instant(&clock, st - 1) < t);
    }
}
