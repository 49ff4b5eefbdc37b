//! The harness's own floor, measured at the start of every run: what timing
//! and recording one operation costs on this machine, and the clock's
//! resolution. Latencies near the floor say more about the client than
//! about the database.
use crate::binding::Status;
use crate::op::OpKind;
use crate::stats::Recorder;
use serde::{Deserialize, Serialize};
use std::time::Instant;

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Floor {
    /// Two time stamps and one record into a recorder, per operation.
    pub ns_per_op: f64,
    /// The smallest nonzero difference of two consecutive time stamps.
    pub clock_resolution_ns: u64,
}

/// Rounds timed: well under a millisecond on a current machine, so that
/// instances started together still measure together.
const ROUNDS: u64 = 20_000;

/// Times `ROUNDS` empty operations through the measurement path a worker
/// takes: its clock's stamps and scaling, and the one histogram write of
/// an operation whose response time is its service time.
pub fn measure_floor() -> Floor {
    let clock = super::clock::Clock::shared();
    let mut rec = Recorder::new();
    let mut resolution = u64::MAX;
    let started = Instant::now();
    for i in 0..ROUNDS {
        let a = clock.raw();
        let b = clock.raw();
        let d = clock.nanos(a, b);
        if d > 0 {
            resolution = resolution.min(d);
        }
        // values that vary, as real latencies do, so buckets differ
        rec.record_same(OpKind::Read, Status::Ok, d + (i & 1023), 1, 0);
    }
    std::hint::black_box(&rec);
    Floor {
        ns_per_op: started.elapsed().as_nanos() as f64 / ROUNDS as f64,
        clock_resolution_ns: if resolution == u64::MAX {
            0
        } else {
            resolution
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_floor_is_measured_not_assumed() {
        let f = measure_floor();
        // above nothing and far below a millisecond on any machine that runs us
        assert!(f.ns_per_op > 0.0 && f.ns_per_op < 1e6, "{f:?}");
        assert!(f.clock_resolution_ns < 1_000_000, "{f:?}");
    }
}
