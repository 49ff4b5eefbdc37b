//! The versioned JSON result of one load or run: everything needed to trust,
//! reproduce, merge and compare it. Written atomically.
pub mod availability;
pub mod build;
pub mod env;
pub mod inserts;
pub mod merge;
pub mod read;
pub mod redact;
pub mod time;
pub mod write;

pub use build::{build_result, ResultContext};
pub use env::HostInfo;
pub use redact::{redact_url, Redactor};
pub use write::{check_writable, default_result_path, write_atomic};

use crate::binding::{EngineInfo, InsertMode, UpdateMode};
use crate::run::IntervalPoint;
use crate::stats::Summary;
use crate::workload::Phase;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Bumped whenever a field changes meaning or disappears.
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RunResult {
    pub schema_version: u32,
    pub tool: Tool,
    pub command_line: Vec<String>,
    pub phase: Phase,
    /// Workload name: the property files' names, or "custom".
    pub workload: String,
    pub seed: u64,
    pub instance: Instance,
    /// Every known property with its resolved value.
    pub properties: BTreeMap<String, String>,
    /// Properties set explicitly, with the file:line or flag that set them.
    pub explicit_properties: BTreeMap<String, ExplicitProperty>,
    pub semantics: Semantics,
    pub binding: BindingInfo,
    pub runner: RunnerInfo,
    pub host: HostInfo,
    pub started_at: String,
    pub ended_at: String,
    /// Seconds of measurement (warm-up excluded).
    pub elapsed_s: f64,
    /// False when the run was interrupted or stopped early: the figures are partial.
    pub complete: bool,
    pub interrupted: bool,
    /// Why the figures are partial (`complete: false`), in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incomplete_reason: Option<String>,
    pub totals: Totals,
    /// Keyed by YCSB's operation names: READ, UPDATE, INSERT, SCAN, READ-MODIFY-WRITE, DELETE.
    pub operations: BTreeMap<String, OpResult>,
    /// Open loop only: how well the client kept to the schedule.
    pub schedule: Option<Schedule>,
    pub client: ClientInfo,
    pub time_series: Vec<IntervalPoint>,
    pub warnings: Vec<String>,
    pub error_samples: Vec<ErrorSample>,
    /// `--memory-limit`: the cap the benchmark process (engine included) ran under.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_limit: Option<MemoryLimit>,
    /// `--server-memory-limit`: the caps the database servers ran under.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub server_memory: Vec<ServerMemory>,
    /// YCSB phases: the inserts the database acknowledged, refused and left
    /// unanswered (the keys of the latter two in a side file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inserts: Option<inserts::Inserts>,
    /// `--until`: the confidence intervals the run stopped on (or did not reach).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub convergence: Option<crate::run::converge::Convergence>,
    /// `--verify`: what reading back every insert found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verification: Option<inserts::Verification>,
    /// `--trace`: the trace the run wrote.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceFile>,
    /// `yardstick replay`: what was played back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replayed: Option<Replayed>,
    /// `--tag KEY=VALUE`: labels for `yardstick results` and the `tag:`
    /// selectors of compare and report.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tags: BTreeMap<String, String>,
    /// `--at`: the commands run during measurement, each with the run's
    /// availability around it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub faults: Vec<crate::run::faults::FaultRecord>,
    /// `yardstick merge`: the instance results this one combines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged: Option<Merged>,
    /// What the host, the server process and the database did during the
    /// phase, aligned with `time_series` (absent with `--observe off`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observation: Option<crate::observe::Observation>,
}

impl RunResult {
    /// Operations per second with batched inserts counted by the records they
    /// carry (a batch load's `totals.ops_per_sec` counts batches): what charts
    /// and suite summaries compare.
    pub fn records_per_sec(&self) -> f64 {
        match self.operations.get("BATCH-INSERT") {
            Some(b) if self.elapsed_s > 0.0 => {
                let others: u64 = self
                    .operations
                    .iter()
                    .filter(|(k, _)| k.as_str() != "BATCH-INSERT")
                    .map(|(_, o)| o.count)
                    .sum();
                (b.rows + others) as f64 / self.elapsed_s
            }
            _ => self.totals.ops_per_sec,
        }
    }
}

/// Where a merged result came from.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Merged {
    pub files: Vec<String>,
    pub hosts: Vec<String>,
    /// Seconds every instance was measuring: the window of `totals.ops_per_sec`.
    pub window_s: f64,
}

/// The memory cap of a run (`--memory-limit`) and what happened under it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct MemoryLimit {
    pub bytes: u64,
    /// How it was applied, e.g. "cgroup v1 memory.limit_in_bytes".
    pub mechanism: String,
    pub cgroup: String,
    /// Whether cached pages were dropped before the phase, or why not.
    pub page_cache: String,
    /// Most memory (heap and page cache) the cgroup held.
    pub peak_bytes: Option<u64>,
    /// The cgroup's OOM killer ended the benchmark process.
    pub oom_killed: bool,
}

/// A database server on this machine whose memory was capped for the phase
/// (`--server-memory-limit`), and what happened under the cap.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ServerMemory {
    /// The address it listens on, as the URL names it.
    pub server: String,
    pub pid: u32,
    /// Its program name (`/proc/PID/comm`).
    pub program: String,
    /// Processes moved into the cgroup: the server and its children.
    pub processes: usize,
    /// What the server held resident when it was capped.
    pub resident_bytes_before: Option<u64>,
    /// Whether that memory moved into the cap with the server (cgroup v1's
    /// move_charge_at_immigrate, on kernels that still have it).
    pub charges_moved: bool,
    /// The cgroup's own limit: `limit.bytes` (the budget), less what the
    /// server held where that stayed charged elsewhere.
    pub cgroup_limit_bytes: u64,
    pub limit: MemoryLimit,
    /// Whether the server was still running when the phase ended.
    pub alive_after: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Tool {
    pub name: String,
    pub version: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Instance {
    pub index: u64,
    pub count: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ExplicitProperty {
    pub value: String,
    pub source: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Semantics {
    pub insert: InsertMode,
    pub update: UpdateMode,
    /// How read-modify-write is executed.
    pub read_modify_write: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct BindingInfo {
    pub scheme: String,
    /// The target URL with passwords and tokens replaced by `***`.
    pub url: String,
    pub engine: EngineInfo,
    pub disk_bytes_before: Option<u64>,
    pub disk_bytes_after: Option<u64>,
    /// Load phases: value bytes written / bytes on disk after the load (the
    /// engine's flushed files), the achieved compression ratio.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compression_ratio: Option<f64>,
    /// `load --clear`: the table was emptied before the load.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cleared: Option<Cleared>,
}

/// How the table was emptied before a load.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Cleared {
    /// Records deleted, when the binding counts them (TRUNCATE does not).
    pub records: Option<u64>,
    pub seconds: f64,
}

impl BindingInfo {
    /// The compression ratio of a load that wrote `value_bytes`.
    pub fn load_compression_ratio(&self, value_bytes: u64) -> Option<f64> {
        let disk = self.disk_bytes_after.filter(|d| *d > 0)?;
        (value_bytes > 0).then(|| value_bytes as f64 / disk as f64)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RunnerInfo {
    pub threads: usize,
    pub concurrency: usize,
    /// "open" (paced to a target rate) or "closed".
    pub loop_mode: String,
    pub target_ops_per_sec: Option<f64>,
    pub operation_count: Option<u64>,
    pub duration_s: Option<f64>,
    pub warmup_s: f64,
    pub status_interval_s: f64,
    /// `--max-errors`: the run stops once more operations than this failed.
    pub max_errors: Option<u64>,
    /// Run phases: the first record number the run's inserts did not take
    /// (warm-up included). A later run on the same data passes it as
    /// `recordcount` so its inserts take new keys (`yardstick suite` does).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_insert_keynum: Option<u64>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Totals {
    pub operations: u64,
    pub errors: u64,
    pub ops_per_sec: f64,
    pub warmup_operations: u64,
    pub retries: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct OpResult {
    pub count: u64,
    /// Operations by status (ok, not_found, duplicate_key, ...); zero counts omitted.
    pub statuses: BTreeMap<String, u64>,
    /// Successful operations, nanoseconds, from the intended start (open loop).
    pub response_time_ns: Summary,
    /// Successful operations, nanoseconds, from the actual start.
    pub service_time_ns: Summary,
    pub failed_response_time_ns: Option<Summary>,
    pub rows: u64,
    pub bytes: u64,
    /// Scans: records returned per scan.
    pub scan_rows: Option<Summary>,
    /// The response-time distribution as [nanoseconds, cumulative fraction]
    /// points, dense in the tail (HdrHistogram's percentile iteration, 5 ticks
    /// per half distance), for CDF plots on a log axis.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub response_cdf: Vec<[f64; 2]>,
    pub histograms: Histograms,
}

/// HdrHistograms, V2-deflate encoded in base64, for exact merging.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Histograms {
    pub response: String,
    pub service: String,
    pub failed: Option<String>,
    pub scan_rows: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Schedule {
    /// Operations that started more than 1 ms after their intended time.
    pub late_operations: u64,
    pub late_fraction: f64,
    /// How late operations started, nanoseconds.
    pub start_lag_ns: Summary,
    /// How far behind schedule the client was when it stopped.
    pub final_lag_ns: u64,
    /// Scheduled operations that were never started because time ran out.
    pub unstarted_operations: u64,
    pub achieved_fraction_of_target: f64,
    /// `--target` as a rate schedule: how it was written, and each of its
    /// segments' intended against achieved rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_schedule: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<crate::run::StepRate>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ClientInfo {
    /// CPU time of the benchmark process during measurement (includes an
    /// embedded engine's own work).
    pub cpu_seconds: f64,
    pub cpu_cores_used: f64,
    pub cores_available: usize,
    pub cpu_ns_per_op: f64,
    /// Peak resident memory of the benchmark process (of the largest
    /// instance, merged), an embedded engine's included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_rss_bytes: Option<u64>,
    /// The harness's own floor, measured before the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub floor: Option<crate::run::calibrate::Floor>,
    /// The latency histograms' resolution and the range the values reached.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub histogram: Option<HistogramInfo>,
    /// Whether the client rather than the database limited the result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limited: Option<ClientLimit>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct HistogramInfo {
    /// Values are kept to this many significant digits (0.1% at 3).
    pub significant_digits: u8,
    pub lowest_ns: u64,
    /// The largest value recorded; the histograms grow to hold any value.
    pub highest_ns: u64,
    /// Values beyond what a histogram can hold, clamped (flagged in the warnings).
    pub clamped: u64,
}

/// `--trace`: the file and what it holds.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TraceFile {
    pub file: String,
    pub records: u64,
    pub bytes: u64,
    /// Every operation was written (false: a write failed; the warnings say why).
    pub complete: bool,
}

/// `yardstick replay`: the trace or capture played, and how.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Replayed {
    pub file: String,
    /// "trace" (yardstick's) or "redis-monitor".
    pub format: String,
    /// Operations in the file that were scheduled.
    pub operations: u64,
    /// The trace's rate times this (2: twice as fast).
    pub speed: f64,
    /// The trace's own span, start of its first to start of its last operation.
    pub span_s: f64,
    /// Commands of a capture without a YCSB operation, by name.
    pub skipped: BTreeMap<String, u64>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ClientLimit {
    pub client_limited: bool,
    /// Process CPU over what the worker threads can use (one core each).
    pub cpu_of_usable: f64,
    /// Per worker thread: the share of the run it was busy (its CPU time
    /// less its spinning for the schedule), warm-up included.
    #[serde(default)]
    pub worker_busy: Vec<f64>,
    /// Open loop: how late operations started, p99.
    pub start_lag_p99_ns: Option<u64>,
    pub reason: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ErrorSample {
    pub op: String,
    pub status: String,
    pub message: String,
    /// How many operations failed with this message.
    pub count: u64,
}
