use super::*;
use std::sync::mpsc::{channel, Sender};

/// What a scripted source does at each sample.
enum Step {
    Values(f64),
    Fail,
    Unavailable,
    /// Blocks until the test lets it go.
    Block(Receiver<()>),
}

struct Scripted {
    steps: std::vec::IntoIter<Step>,
    /// Told after every sample.
    done: Sender<()>,
}

impl Source for Scripted {
    fn name(&self) -> String {
        "scripted".into()
    }

    fn sample(&mut self) -> Result<Vec<Value>, SourceError> {
        let r = match self.steps.next() {
            Some(Step::Values(v)) => Ok(vec![
                Value::counter("t.count", "operations", v),
                Value::gauge("t.level", "bytes", v / 10.0),
            ]),
            Some(Step::Fail) => Err(SourceError::Failed("no answer".into())),
            Some(Step::Unavailable) => Err(SourceError::Unavailable("not here; do this".into())),
            Some(Step::Block(rx)) => {
                let _ = rx.recv();
                Ok(vec![])
            }
            None => Ok(vec![]),
        };
        let _ = self.done.send(());
        r
    }

    fn configuration(&mut self) -> BTreeMap<String, String> {
        BTreeMap::from([("setting".into(), "on".into())])
    }
}

fn scripted(steps: Vec<Step>) -> (Observer, Receiver<()>) {
    let (done, rx) = channel();
    let src = Scripted {
        steps: steps.into_iter(),
        done,
    };
    let o = Observer::start(vec![Box::new(src)], Duration::from_secs(60));
    // the first sample, at start
    rx.recv().unwrap();
    wait_taken(&o, 1);
    (o, rx)
}

fn wait_taken(o: &Observer, n: u64) {
    let end = Instant::now() + Duration::from_secs(10);
    while taken(o) < n && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn point(index: i64, warmup: bool) -> IntervalPoint {
    IntervalPoint {
        index,
        t_s: index as f64,
        length_s: 1.0,
        warmup,
        ops: 0,
        errors: 0,
        not_found: 0,
        duplicate_key: 0,
        ops_per_sec: 0.0,
        late: 0,
        client_cpu_cores: 0.0,
        intended_ops_per_sec: None,
        per_op: vec![],
    }
}

/// Ticks and waits until the source has sampled and written it down.
fn tick(o: &mut Observer, done: &Receiver<()>, p: IntervalPoint) {
    let before = taken(o);
    o.tick(&p);
    done.recv().unwrap();
    wait_taken(o, before + 1);
}

/// Samples written down so far, over every source.
fn taken(o: &Observer) -> u64 {
    o.running.iter().map(|r| r.log.lock().unwrap().taken).sum()
}

#[test]
fn counters_become_rates_and_the_measured_increase_leaves_out_warm_up() {
    let steps = [0.0, 10.0, 30.0, 60.0]
        .map(Step::Values)
        .into_iter()
        .collect();
    let (mut o, done) = scripted(steps);
    tick(&mut o, &done, point(-1, true));
    tick(&mut o, &done, point(1, false));
    tick(&mut o, &done, point(2, false));
    let f = o.finish(Duration::from_secs(5));
    let (obs, warnings) = (f.observation, f.warnings);
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(obs.index, vec![-1, 1, 2]);
    let c = &obs.series["t.count"];
    assert_eq!(
        (c.kind, c.unit.as_str(), c.total_unit.as_deref()),
        (Kind::Counter, "operations/s", Some("operations"))
    );
    assert!(
        c.values.iter().all(|v| v.is_some_and(|r| r > 0.0)),
        "{:?}",
        c.values
    );
    // from the warm-up's sample (10) to the last (60)
    assert_eq!(c.measured, Some(50.0));
    let g = &obs.series["t.level"];
    assert_eq!(g.values, vec![Some(1.0), Some(3.0), Some(6.0)]);
    assert_eq!((g.measured, g.max), (Some(4.5), Some(6.0)));
    let s = &obs.sources[0];
    assert_eq!((s.state, s.samples, s.missed), (SourceState::Ok, 3, 0));
    assert_eq!(obs.configuration["scripted"]["setting"], "on");
}

#[test]
fn a_failed_sample_is_missing_and_warned_about_once() {
    let steps = vec![Step::Values(0.0), Step::Fail, Step::Fail, Step::Values(5.0)];
    let (mut o, done) = scripted(steps);
    for i in 1..=3 {
        tick(&mut o, &done, point(i, false));
    }
    let w = o.take_warnings();
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].starts_with("observation: scripted: no answer"),
        "{w:?}"
    );
    let obs = o.finish(Duration::from_secs(5)).observation;
    let c = &obs.series["t.count"];
    // the rate after the gap spans it
    assert_eq!(&c.values[..2], &[None, None]);
    assert!(c.values[2].is_some());
    assert_eq!(c.measured, Some(5.0));
    let s = &obs.sources[0];
    assert_eq!((s.state, s.samples, s.missed), (SourceState::Partial, 1, 2));
    assert!(s.message.as_deref().unwrap().contains("2 samples failed"));
}

#[test]
fn an_unavailable_source_stops_with_one_warning_and_the_others_go_on() {
    let (done, rx) = channel();
    let bad = Scripted {
        steps: vec![Step::Unavailable].into_iter(),
        done: done.clone(),
    };
    let good = Scripted {
        steps: vec![Step::Values(1.0), Step::Values(2.0)].into_iter(),
        done,
    };
    let absent = super::super::Absent {
        name: "database".into(),
        why: "this binding reports no statistics".into(),
        warn: false,
    };
    let mut o = Observer::start(
        vec![Box::new(bad), Box::new(good), Box::new(absent)],
        Duration::from_secs(60),
    );
    rx.recv().unwrap();
    rx.recv().unwrap();
    wait_taken(&o, 2);
    tick(&mut o, &rx, point(1, false));
    let f = o.finish(Duration::from_secs(5));
    let (obs, warnings) = (f.observation, f.warnings);
    assert_eq!(
        warnings,
        vec!["observation: scripted: not here; do this (the run goes on without it)"]
    );
    let states: Vec<SourceState> = obs.sources.iter().map(|s| s.state).collect();
    assert_eq!(
        states,
        vec![
            SourceState::Unavailable,
            SourceState::Ok,
            SourceState::Unsupported
        ]
    );
    assert_eq!(
        obs.sources[2].message.as_deref(),
        Some("this binding reports no statistics")
    );
    assert_eq!(obs.series["t.level"].values, vec![Some(0.2)]);
}

#[test]
fn a_stalled_source_misses_its_intervals_and_is_abandoned_at_the_end() {
    let (release, blocked) = channel();
    let steps = vec![Step::Values(0.0), Step::Values(1.0), Step::Block(blocked)];
    let (mut o, done) = scripted(steps);
    tick(&mut o, &done, point(1, false));
    // the third sample blocks: these ticks do not wait for it
    for i in 2..=4 {
        o.tick(&point(i, false));
    }
    let f = o.finish(Duration::from_millis(50));
    let (obs, warnings) = (f.observation, f.warnings);
    let s = &obs.sources[0];
    assert_eq!((s.state, s.samples, s.missed), (SourceState::Stalled, 1, 3));
    assert!(
        warnings.iter().any(|w| w.contains("was abandoned")),
        "{warnings:?}"
    );
    assert_eq!(
        obs.series["t.level"].values,
        vec![Some(0.1), None, None, None]
    );
    let _ = release.send(());
}

#[test]
fn the_latest_values_are_rates_and_levels() {
    let (mut o, done) = scripted(vec![Step::Values(0.0), Step::Values(100.0)]);
    tick(&mut o, &done, point(1, false));
    let latest = o.latest();
    assert!(
        latest
            .iter()
            .any(|(n, u, v)| n == "t.count" && *u == "operations/s" && *v > 0.0),
        "{latest:?}"
    );
    assert!(latest.contains(&("t.level".to_string(), "bytes", 10.0)));
}

/// Sleeps through every sample but the first.
struct Slow(bool);

impl Source for Slow {
    fn name(&self) -> String {
        "slow".into()
    }

    fn sample(&mut self) -> Result<Vec<Value>, SourceError> {
        if std::mem::replace(&mut self.0, true) {
            std::thread::sleep(Duration::from_millis(100));
        }
        Ok(vec![Value::gauge("s.level", "bytes", 1.0)])
    }
}

#[test]
fn a_sample_later_than_an_interval_after_its_tick_is_dropped() {
    let mut o = Observer::start(vec![Box::new(Slow(false))], Duration::from_millis(10));
    wait_taken(&o, 1);
    o.tick(&point(1, false));
    wait_taken(&o, 2);
    let obs = o.finish(Duration::from_secs(5)).observation;
    let s = &obs.sources[0];
    assert_eq!((s.state, s.samples, s.missed), (SourceState::Partial, 0, 1));
    assert!(
        s.message
            .as_deref()
            .unwrap()
            .contains("1 came back more than an interval after"),
        "{s:?}"
    );
    assert_eq!(obs.series["s.level"].values, vec![None]);
}
