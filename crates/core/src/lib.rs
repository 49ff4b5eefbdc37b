//! yardstick's model, with no database dependency.
//!
//! | module | what it holds |
//! |---|---|
//! | [`binding`] | the `Binding`/`Session` contract, `Status`, `Outcome`, semantics |
//! | [`bounded`] | a session whose calls end within a time limit |
//! | [`generator`] | YCSB's distributions, one per file, each statistically tested |
//! | [`workload`] | properties, the core workload's configuration, keys, operation streams |
//! | [`run`] | threads x slots, open/closed-loop pacing, interval sampling |
//! | [`trace`] | operation traces written during a run, read for replay (also Redis MONITOR captures) |
//! | [`metrics`] | the live run in Prometheus/OpenMetrics text, served over HTTP |
//! | [`observe`] | what the host, the server process and the database did during a run |
//! | [`stats`] | mergeable HdrHistogram recorders and summaries |
//! | [`result`] | the versioned JSON result, environment capture, secret redaction |
//! | `conformance` | the suite every binding must pass (feature `testing`) |
//! | [`error`] | database errors in one line: the server's own code, the chain of causes |
//! | [`units`] | durations, read the same in flags, properties and URL options |
pub mod binding;
pub mod bounded;
#[cfg(feature = "testing")]
pub mod conformance;
pub mod error;
pub mod generator;
pub mod metrics;
pub mod observe;
pub mod op;
pub mod result;
pub mod rng;
pub mod run;
pub mod stats;
pub mod tpcc;
pub mod trace;
pub mod units;
pub mod workload;
