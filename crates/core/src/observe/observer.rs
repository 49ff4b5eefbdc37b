//! The observer: one thread per source, fed a tick at each interval close
//! without waiting, and the series its samples make.
use super::record::{Observation, Series, SourceRecord, SourceState};
use super::{Kind, Source, SourceError, Value};
use crate::run::cpu::thread_cpu_time;
use crate::run::IntervalPoint;
use std::collections::{BTreeMap, HashMap};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// What one source's thread has found so far.
#[derive(Default)]
struct Log {
    name: String,
    /// The sample taken when the source started, before the first tick.
    baseline: Option<Sample>,
    /// Kept samples by tick number (1 for the first tick).
    samples: Vec<(u64, Sample)>,
    /// Unsupported or unavailable: the source stopped, and why.
    stopped: Option<(SourceState, String)>,
    failures: u64,
    /// Samples that came back after the next tick: abandoned.
    late: u64,
    cpu: Duration,
    busy: Duration,
    taken: u64,
    warnings: Vec<String>,
    configuration: BTreeMap<String, String>,
}

#[derive(Clone)]
struct Sample {
    at: Instant,
    values: Vec<Value>,
}

struct Running {
    tx: Option<SyncSender<(u64, Instant)>>,
    log: Arc<Mutex<Log>>,
    thread: Option<JoinHandle<()>>,
}

/// The sources of one phase, sampled at every interval close.
pub struct Observer {
    running: Vec<Running>,
    /// index, t_s, warm-up of each tick's interval.
    ticks: Vec<(i64, f64, bool)>,
    warned: usize,
    warnings: Vec<String>,
}

impl Observer {
    /// Starts a thread per source; each takes its first sample at once. A
    /// sample that takes longer than `limit` after its tick is abandoned.
    pub fn start(sources: Vec<Box<dyn Source>>, limit: Duration) -> Observer {
        let mut running = Vec::new();
        let mut warnings = Vec::new();
        for src in sources {
            let name = src.name();
            // room for the final sliver's tick, which follows the last full one at once
            let (tx, rx) = sync_channel(2);
            let log = Arc::new(Mutex::new(Log {
                name: name.clone(),
                ..Log::default()
            }));
            let l = log.clone();
            let thread = std::thread::Builder::new()
                .name(format!("observe {name}"))
                .spawn(move || serve(src, rx, l, limit));
            match thread {
                Ok(t) => running.push(Running {
                    tx: Some(tx),
                    log,
                    thread: Some(t),
                }),
                Err(e) => {
                    warnings.push(format!("observation: cannot start a thread for {name}: {e}; the run goes on without it"));
                    if let Ok(mut l) = log.lock() {
                        l.stopped = Some((SourceState::Unavailable, format!("no thread: {e}")));
                    }
                    running.push(Running {
                        tx: None,
                        log,
                        thread: None,
                    });
                }
            }
        }
        Observer {
            running,
            ticks: Vec::new(),
            warned: 0,
            warnings,
        }
    }

    /// An interval closed: every source samples, on its own thread. Never
    /// waits: a source still busy with the last tick misses this one.
    pub fn tick(&mut self, p: &IntervalPoint) {
        self.ticks.push((p.index, p.t_s, p.warmup));
        let seq = self.ticks.len() as u64;
        for r in &self.running {
            if let Some(tx) = &r.tx {
                match tx.try_send((seq, Instant::now())) {
                    Ok(()) | Err(TrySendError::Full(_)) | Err(TrySendError::Disconnected(_)) => {}
                }
            }
        }
        for r in &self.running {
            // the source's thread holds the lock only to write down a sample
            if let Ok(mut l) = r.log.try_lock() {
                self.warnings.append(&mut l.warnings);
            }
        }
    }

    /// Adds warnings found before the start (handed out with the rest).
    pub fn warn(&mut self, mut warnings: Vec<String>) {
        self.warnings.append(&mut warnings);
    }

    /// Warnings not handed out yet, one line each.
    pub fn take_warnings(&mut self) -> Vec<String> {
        let new = self.warnings[self.warned..].to_vec();
        self.warned = self.warnings.len();
        new
    }

    /// The latest value of every series (a counter as its last rate), for
    /// the metrics endpoint.
    pub fn latest(&self) -> Vec<(String, &'static str, f64)> {
        let mut out = Vec::new();
        for r in &self.running {
            let Ok(l) = r.log.try_lock() else { continue };
            let n = l.samples.len();
            let Some((_, last)) = l.samples.last() else {
                continue;
            };
            let prev = if n >= 2 {
                Some(&l.samples[n - 2].1)
            } else {
                l.baseline.as_ref()
            };
            let before = prev.map(|p| (p.at, by_name(p)));
            for v in &last.values {
                let x = match v.kind {
                    Kind::Gauge => Some(v.value),
                    Kind::Counter => before.as_ref().and_then(|(at, b)| {
                        rate((*at, *b.get(v.name.as_str())?), (last.at, v.value))
                    }),
                };
                if let Some(x) = x {
                    let unit = if v.kind == Kind::Counter {
                        per_second(v.unit)
                    } else {
                        v.unit
                    };
                    out.push((v.name.clone(), unit, x));
                }
            }
        }
        out
    }

    /// Stops the sources, giving each up to `wait` to finish its last
    /// sample (a stalled one is left behind), and builds the series.
    pub fn finish(mut self, wait: Duration) -> Finished {
        for r in &mut self.running {
            r.tx = None;
        }
        let deadline = Instant::now() + wait;
        let mut stalled = vec![false; self.running.len()];
        for (i, r) in self.running.iter_mut().enumerate() {
            if let Some(t) = r.thread.take() {
                while !t.is_finished() && Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(2));
                }
                if t.is_finished() {
                    let _ = t.join();
                } else {
                    stalled[i] = true; // detached: it ends with the process
                }
            }
        }
        let mut obs = Observation {
            index: self.ticks.iter().map(|t| t.0).collect(),
            t_s: self.ticks.iter().map(|t| t.1).collect(),
            ..Observation::default()
        };
        for (r, stalled) in self.running.iter().zip(stalled) {
            let Ok(mut l) = r.log.lock() else { continue };
            self.warnings.append(&mut l.warnings);
            if stalled {
                self.warnings.push(format!(
                    "observation: {} did not answer within {:.1} s of the end and was abandoned; its last interval is missing",
                    l.name,
                    wait.as_secs_f64()
                ));
            }
            build(&l, &self.ticks, stalled, &mut obs);
        }
        Finished {
            observation: obs,
            shown: self.warned,
            warnings: self.warnings,
        }
    }
}

/// What a stopped observer leaves.
pub struct Finished {
    pub observation: Observation,
    /// Every warning of the phase, one line each.
    pub warnings: Vec<String>,
    /// How many of them [`Observer::take_warnings`] handed out already.
    pub shown: usize,
}

impl Finished {
    /// The warnings not handed out yet.
    pub fn unshown(&self) -> &[String] {
        &self.warnings[self.shown.min(self.warnings.len())..]
    }
}

/// The unit of a counter's rate.
fn per_second(unit: &'static str) -> &'static str {
    match unit {
        "s" => "cores",
        "bytes" => "bytes/s",
        "operations" => "operations/s",
        "busy s" => "fraction busy",
        _ => "per second",
    }
}

/// A counter's rate from `a` at `t0` to `b` at `t1`.
fn rate((t0, a): (Instant, f64), (t1, b): (Instant, f64)) -> Option<f64> {
    let dt = t1.checked_duration_since(t0)?.as_secs_f64();
    // a counter that went back (a process restarted) gives no rate
    (b >= a && dt > 0.0).then(|| (b - a) / dt)
}

/// A sample's values by name.
fn by_name(s: &Sample) -> HashMap<&str, f64> {
    s.values
        .iter()
        .map(|v| (v.name.as_str(), v.value))
        .collect()
}

/// The source's thread: a first sample, then one per tick received.
fn serve(
    mut src: Box<dyn Source>,
    rx: Receiver<(u64, Instant)>,
    log: Arc<Mutex<Log>>,
    limit: Duration,
) {
    let name = src.name();
    lower_priority();
    let take = |src: &mut Box<dyn Source>| {
        let (t0, c0) = (Instant::now(), thread_cpu_time());
        let r = src.sample();
        let spent = (t0.elapsed(), thread_cpu_time().saturating_sub(c0));
        (t0, r, spent)
    };
    let record = |seq: u64,
                  sent: Instant,
                  (at, r, (busy, cpu)): (
        Instant,
        Result<Vec<Value>, SourceError>,
        (Duration, Duration),
    ),
                  src: &mut Box<dyn Source>|
     -> bool {
        let more = src.warnings();
        let Ok(mut l) = log.lock() else { return false };
        l.cpu += cpu;
        l.busy += busy;
        l.taken += 1;
        l.warnings.extend(
            more.into_iter()
                .map(|w| format!("observation: {name}: {w}")),
        );
        // a sample later than an interval after its tick is abandoned
        if seq > 0 && sent.elapsed() > limit {
            l.late += 1;
            return true;
        }
        match r {
            Ok(values) => {
                let s = Sample { at, values };
                if seq == 0 {
                    l.baseline = Some(s);
                } else {
                    l.samples.push((seq, s));
                }
                true
            }
            Err(SourceError::Failed(why)) => {
                l.failures += 1;
                if l.failures == 1 {
                    l.warnings.push(format!("observation: {name}: {why} (the run goes on; the samples it fails are missing)"));
                }
                true
            }
            Err(SourceError::Unavailable(why)) => {
                l.warnings.push(format!(
                    "observation: {name}: {why} (the run goes on without it)"
                ));
                l.stopped = Some((SourceState::Unavailable, why));
                false
            }
            Err(SourceError::Unsupported(why)) => {
                l.stopped = Some((SourceState::Unsupported, why));
                false
            }
        }
    };
    let first = take(&mut src);
    if !record(0, Instant::now(), first, &mut src) {
        return;
    }
    while let Ok((seq, sent)) = rx.recv() {
        let r = take(&mut src);
        if !record(seq, sent, r, &mut src) {
            return;
        }
    }
    let config = src.configuration();
    if let Ok(mut l) = log.lock() {
        l.configuration = config;
    }
}

/// Sampling yields to the run's own threads when they want the CPU: this
/// thread runs at nice 10 (a tenth of a normal thread's share on a busy
/// core; ample for a sample of a millisecond a second).
fn lower_priority() {
    // SAFETY: gettid has no preconditions; setpriority on this thread's own
    // id changes only its own scheduling weight (a failure leaves it as is).
    unsafe {
        let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
        libc::setpriority(libc::PRIO_PROCESS, tid, 10);
    }
}

/// One source's series and record, added to `obs`.
fn build(l: &Log, ticks: &[(i64, f64, bool)], stalled: bool, obs: &mut Observation) {
    let n = ticks.len();
    let first_measured = ticks.iter().position(|t| !t.2).unwrap_or(n) as u64;
    // the baseline (where there is one) then the kept samples, and every
    // value's column over them, looked up once
    let all: Vec<(u64, &Sample)> = l
        .baseline
        .iter()
        .map(|s| (0, s))
        .chain(l.samples.iter().map(|(q, s)| (*q, s)))
        .collect();
    let mut columns: BTreeMap<&str, (Kind, &'static str, Vec<Option<f64>>)> = BTreeMap::new();
    for (i, (_, s)) in all.iter().enumerate() {
        for v in &s.values {
            let c = columns
                .entry(&v.name)
                .or_insert_with(|| (v.kind, v.unit, vec![None; all.len()]));
            c.2[i] = Some(v.value);
        }
    }
    let first = usize::from(l.baseline.is_some());
    for (name, (kind, unit, column)) in columns {
        let mut values = vec![None; n];
        // the last sample before measurement (the first one, taken at the
        // start, where no warm-up sample came back), and the last of it
        let (mut start, mut end) = ((first == 1).then_some(0), None);
        let mut gauges = Vec::new();
        for p in first..all.len() {
            let (seq, s) = all[p];
            let measured = seq > first_measured;
            let own = column[p];
            values[(seq - 1) as usize] = match kind {
                Kind::Gauge => own,
                Kind::Counter => p
                    .checked_sub(1)
                    .and_then(|q| rate((all[q].1.at, column[q]?), (s.at, own?))),
            };
            if measured {
                end = Some(p);
                if let Some(g) = own.filter(|_| kind == Kind::Gauge) {
                    gauges.push(g);
                }
            } else {
                start = Some(p);
            }
        }
        let value_of = |p: usize| column[p];
        let (measured, max) = match kind {
            Kind::Counter => (
                start
                    .and_then(value_of)
                    .zip(end.and_then(value_of))
                    .filter(|(a, b)| b >= a)
                    .map(|(a, b)| b - a),
                values
                    .iter()
                    .zip(ticks)
                    .filter(|(_, t)| !t.2)
                    .filter_map(|(v, _)| *v)
                    .reduce(f64::max),
            ),
            Kind::Gauge => (
                (!gauges.is_empty()).then(|| gauges.iter().sum::<f64>() / gauges.len() as f64),
                gauges.iter().copied().reduce(f64::max),
            ),
        };
        obs.series.insert(
            name.to_string(),
            Series {
                source: l.name.clone(),
                kind,
                unit: if kind == Kind::Counter {
                    per_second(unit)
                } else {
                    unit
                }
                .to_string(),
                total_unit: (kind == Kind::Counter).then(|| unit.to_string()),
                values,
                measured,
                max,
            },
        );
    }
    let kept = l.samples.len() as u64;
    let (state, message) = match (&l.stopped, stalled) {
        (Some((s, why)), _) => (*s, Some(why.clone())),
        (None, true) => (SourceState::Stalled, None),
        (None, false) if kept < n as u64 || l.failures > 0 => (SourceState::Partial, None),
        _ => (SourceState::Ok, None),
    };
    let message = message.or_else(|| {
        (l.failures + l.late > 0).then(|| {
            format!("{} samples failed, {} came back more than an interval after their tick and were dropped", l.failures, l.late)
        })
    });
    obs.sources.push(SourceRecord {
        name: l.name.clone(),
        state,
        message,
        samples: kept,
        missed: (n as u64).saturating_sub(kept),
        cpu_s: l.cpu.as_secs_f64(),
        mean_sample_ms: if l.taken > 0 {
            l.busy.as_secs_f64() * 1e3 / l.taken as f64
        } else {
            0.0
        },
    });
    if !l.configuration.is_empty() {
        obs.configuration
            .insert(l.name.clone(), l.configuration.clone());
    }
}

#[cfg(test)]
#[path = "observer_tests.rs"]
mod tests;
