//! Observation around a phase: the plan comes from `--observe`,
//! `--server-pid`, `--data-dir` and the URL ([`crate::live::LiveArgs`]); the
//! sampler's interval closes tick it; at the end it is stopped and its
//! series go into the result with the figures per operation.
use yardstick_core::observe::{Finished, Observation, Observer};
use yardstick_core::run::RunSpec;

/// The longest a source's last sample may take after the run before it is
/// abandoned: an interval, at most a second.
fn finish_wait(spec: &RunSpec) -> std::time::Duration {
    spec.status_interval.min(std::time::Duration::from_secs(1))
}

/// Stops `o`.
pub(crate) fn stop(o: Observer, spec: &RunSpec) -> Finished {
    o.finish(finish_wait(spec))
}

/// The observation for the result: figures per operation (of `operations`,
/// transactions for TPC-C) derived, the warnings not shown yet shown, and
/// every one kept with the result's.
pub(crate) fn keep(f: Finished, operations: u64, warnings: &mut Vec<String>) -> Observation {
    for w in f.unshown() {
        eprintln!("yardstick: warning: {w}");
    }
    warnings.extend(f.warnings);
    let mut obs = f.observation;
    obs.derive(operations);
    obs
}
