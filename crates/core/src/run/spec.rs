//! What to run: phase, threads, concurrency, stop conditions, pacing, seed.
use crate::workload::{CoreConfig, Phase};
use std::sync::atomic::AtomicBool;
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

/// Signals from outside the run (Ctrl-C).
#[derive(Debug, Clone, Default)]
pub struct Control {
    pub stop: Arc<AtomicBool>,
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
