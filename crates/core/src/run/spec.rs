//! What to run: phase, threads, concurrency, stop conditions, pacing, seed.
use crate::workload::{CoreConfig, Phase};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::Arc;
use std::time::Duration;

#[derive(Debug, Clone)]
pub struct RunSpec {
    pub phase: Phase,
    pub threads: usize,
    /// In-flight operations per thread.
    pub concurrency: usize,
    /// Stop after this many measured operations (run phase).
    pub operation_count: Option<u64>,
    /// Stop after this long, not counting warm-up.
    pub duration: Option<Duration>,
    /// Run this long before measuring; its operations are excluded from statistics.
    pub warmup: Duration,
    /// Operations per second over all slots (open loop); `None`: closed loop.
    pub target: Option<f64>,
    pub seed: u64,
    /// (index, count) of this process among the instances of one run.
    pub instance: (u64, u64),
    pub status_interval: Duration,
    /// Operations the phase is expected to perform, for the progress bar.
    pub expected_ops: Option<u64>,
    /// Stop the run once more operations than this failed with an error status.
    pub max_errors: Option<u64>,
    /// The binding's limit on one call: after the measured time, calls still
    /// waiting this long (and a second) are abandoned, so a stalled database
    /// cannot hold the run. `None`: wait for every call.
    pub op_timeout: Option<Duration>,
    /// `--until`: end the run once these confidence intervals are narrow
    /// enough (the duration or count still bounds it).
    pub until: Vec<super::converge::Until>,
    /// `--trace`: every operation is written to this trace.
    pub trace: Option<Arc<crate::trace::Sink>>,
    /// Open loop on a timetable (a replay): operation i of the run is
    /// intended at t0 + `timetable[i]` ns, and the run ends after the last;
    /// `target` then only states the mean rate.
    pub timetable: Option<Arc<[u64]>>,
    /// Open loop on a rate schedule (`--target 1000@30s,2000@30s`), from the
    /// start of measurement (a warm-up runs at its first rate); `target`
    /// then states its mean rate and `duration` its length.
    pub rate_schedule: Option<Arc<super::schedule::Schedule>>,
    /// `--at`: commands run at offsets into the measured phase.
    pub faults: Vec<super::faults::Fault>,
    /// How paced slots (and `null://`'s latency) wait.
    pub pacing: Pacing,
}

/// How a paced slot waits for its intended start (property `pacing`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Pacing {
    /// On a kernel timer that wakes it just before the start, then spins the
    /// last microseconds: the thread sleeps, a start is late only when the
    /// host wakes the thread later than it recently did.
    #[default]
    Sleep,
    /// Sleeps to 2 ms before the start and yields through the rest: starts
    /// within a microsecond, a core busy while any slot of the thread waits.
    Spin,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum SpecError {
    #[error("--threads must be at least 1")]
    NoThreads,
    #[error("--concurrency must be between 1 and 1024")]
    BadConcurrency,
    #[error("the run has no end: set operationcount (-p operationcount=N), --duration or maxexecutiontime")]
    Unbounded,
    #[error("recordcount is 0: set -p recordcount=N (or -P a workload file that sets it)")]
    NoRecords,
}

impl RunSpec {
    /// Builds the spec of `phase` from the workload configuration.
    pub fn from_config(
        phase: Phase,
        c: &CoreConfig,
        concurrency: usize,
        warmup: Duration,
        seed: u64,
    ) -> Result<Self, SpecError> {
        if concurrency == 0 || concurrency > 1024 {
            return Err(SpecError::BadConcurrency);
        }
        if c.record_count == 0 {
            return Err(SpecError::NoRecords);
        }
        let operation_count = match phase {
            Phase::Load => None,
            Phase::Run => (c.operation_count > 0).then_some(c.operation_count),
        };
        if phase == Phase::Run && operation_count.is_none() && c.max_execution_time.is_none() {
            return Err(SpecError::Unbounded);
        }
        Ok(RunSpec {
            phase,
            threads: c.thread_count,
            concurrency,
            operation_count,
            duration: c.max_execution_time,
            warmup,
            target: c.target,
            seed,
            instance: (0, 1),
            status_interval: c.status_interval,
            max_errors: None,
            op_timeout: None,
            until: Vec::new(),
            trace: None,
            timetable: None,
            rate_schedule: None,
            faults: Vec::new(),
            pacing: c.pacing,
            expected_ops: match phase {
                Phase::Load => Some(c.insert_count),
                Phase::Run => operation_count,
            },
        })
    }

    pub fn slots(&self) -> u64 {
        (self.threads * self.concurrency) as u64
    }

    /// Operations slot `slot` performs when the run is bounded by count.
    pub(crate) fn quota(&self, slot: u64) -> Option<u64> {
        self.operation_count.map(|n| {
            let s = self.slots();
            n / s + u64::from(slot < n % s)
        })
    }
}

/// Requests from outside the run: a signal (SIGINT, SIGTERM, SIGHUP) asks it
/// to stop and write what it measured; a process started on its behalf (a
/// memory-capped phase, a suite's phase) gets the signal passed on.
#[derive(Debug, Clone, Default)]
pub struct Control {
    pub stop: Arc<AtomicBool>,
    /// The signal that asked for the stop (0: none, or a stop by other means).
    pub signal: Arc<AtomicI32>,
    /// The child process working on this process's behalf (0: none), which
    /// gets any signal this process gets.
    pub child: Arc<AtomicI32>,
}

impl Control {
    /// Asks the run to stop because of signal `sig`; false when a stop was
    /// asked for already.
    pub fn stop_for(&self, sig: i32) -> bool {
        let first = !self.stop.swap(true, Ordering::SeqCst);
        if first {
            self.signal.store(sig, Ordering::SeqCst);
        }
        first
    }

    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }

    /// What stopped the run, in words: "SIGTERM", "SIGINT (Ctrl-C)", ...
    pub fn cause(&self) -> String {
        signal_name(self.signal.load(Ordering::SeqCst))
    }

    /// Starts `cmd` in a process group of its own (so a terminal's Ctrl-C
    /// reaches it once, through this process) as the run's child, and waits
    /// for it; a signal this process gets meanwhile is passed on to it (by
    /// the signal handling that watches `child`).
    pub fn run_child(
        &self,
        cmd: &mut std::process::Command,
    ) -> std::io::Result<std::process::ExitStatus> {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
        let mut child = cmd.spawn()?;
        let pid = child.id() as i32;
        self.child.store(pid, Ordering::SeqCst);
        // a signal that came before the child was registered is passed on now
        let sig = self.signal.load(Ordering::SeqCst);
        if sig != 0 {
            // SAFETY: kill(2) has no memory-safety preconditions; `pid` is our
            // own child, not yet waited for.
            unsafe { libc::kill(pid, sig) };
        }
        let status = child.wait();
        self.child.store(0, Ordering::SeqCst);
        status
    }

    /// The conventional exit code of a process a signal stopped: 128 + the
    /// signal's number (130 for Ctrl-C, also when no signal is known).
    pub fn exit_code(&self) -> i32 {
        match self.signal.load(Ordering::SeqCst) {
            0 => 130,
            sig => 128 + sig,
        }
    }
}

/// A signal's name for people.
pub fn signal_name(sig: i32) -> String {
    match sig {
        0 => "a stop request".into(),
        1 => "SIGHUP".into(),
        2 => "SIGINT (Ctrl-C)".into(),
        9 => "SIGKILL".into(),
        15 => "SIGTERM".into(),
        n => format!("signal {n}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::Properties;

    #[test]
    fn quotas_split_the_count_exactly() {
        let mut p = Properties::new();
        p.set_override("recordcount=10").unwrap();
        p.set_override("operationcount=10").unwrap();
        p.set_override("threadcount=3").unwrap();
        let c = CoreConfig::from_properties(&p).unwrap();
        let s = RunSpec::from_config(Phase::Run, &c, 1, Duration::ZERO, 1).unwrap();
        let q: Vec<u64> = (0..3).map(|i| s.quota(i).unwrap()).collect();
        assert_eq!(q, vec![4, 3, 3]);
        let mut p2 = p.clone();
        p2.set_override("operationcount=0").unwrap();
        let c = CoreConfig::from_properties(&p2).unwrap();
        assert_eq!(
            RunSpec::from_config(Phase::Run, &c, 1, Duration::ZERO, 1).unwrap_err(),
            SpecError::Unbounded
        );
        assert!(RunSpec::from_config(Phase::Load, &c, 1, Duration::ZERO, 1).is_ok());
        assert_eq!(
            RunSpec::from_config(Phase::Load, &c, 0, Duration::ZERO, 1).unwrap_err(),
            SpecError::BadConcurrency
        );
    }
}
