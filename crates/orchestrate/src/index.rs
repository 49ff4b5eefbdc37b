//! The index files of suites and matrices (`index.json` in their output
//! directory): typed, versioned, with a published JSON Schema beside the
//! result's (`schema/suite-index.schema.json`, `schema/matrix-index.schema.json`).
//! `yardstick report` reads them through these types.
use crate::slo::{Point, Slo};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;
use yardstick_core::result::read::{self, ReadError};

/// The suite index format this version writes and reads.
pub const SUITE_SCHEMA_VERSION: u32 = 1;
/// The matrix index format this version writes and reads.
pub const MATRIX_SCHEMA_VERSION: u32 = 1;
/// The `kind` of a suite index.
pub(crate) const SUITE_KIND: &str = "yardstick suite";
/// The `kind` of a matrix index.
pub(crate) const MATRIX_KIND: &str = "yardstick storage-engine matrix";

/// Indexes written before the field existed are version 1.
fn first_version() -> u32 {
    1
}

/// The built-in sequences of `yardstick suite`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum SuiteName {
    /// YCSB's recommended sequence: load, A, B, C, F, D, reload, E.
    Ycsb,
    /// The YDB report: the YCSB sequence with INSERT/UPDATE semantics, Zipfian
    /// requests, and the maximum throughput under p99 < 50 ms per workload.
    Ydb,
    /// The YugabyteDB report: the YCSB sequence at two data sizes (default
    /// 1M and 10M records), reporting the throughput drop and latency rise.
    Scaling,
    /// The MongoDB/Cassandra/HBase report: 10 fields of 10 bytes, single and
    /// batch (3,000 records) loads, then its five custom mixes.
    Mixes,
}

/// Whether a step loads the data or runs a workload on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum PhaseKind {
    Load,
    Run,
}

/// Where a step of a suite is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum StepStatus {
    /// Not started yet.
    Pending,
    /// Started; an index left in this state was interrupted by a kill.
    Running,
    Ok,
    Failed,
    /// Stopped by Ctrl-C; the partial result is kept, the step runs again on resume.
    Interrupted,
    /// Not run because the load it needs failed; pending again on the next invocation.
    Skipped,
    /// Not run: the repetitions before it had converged (`--until`).
    Converged,
}

impl StepStatus {
    pub fn name(self) -> &'static str {
        match self {
            StepStatus::Pending => "pending",
            StepStatus::Running => "running",
            StepStatus::Ok => "ok",
            StepStatus::Failed => "failed",
            StepStatus::Interrupted => "interrupted",
            StepStatus::Skipped => "skipped",
            StepStatus::Converged => "converged",
        }
    }
}

/// A phase of the plan: one step for one target, data size and repetition.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct StepRecord {
    pub id: String,
    /// Index into `targets`.
    pub target: usize,
    pub records: u64,
    pub repetition: u32,
    pub step: String,
    pub description: String,
    pub phase: PhaseKind,
    pub workload: String,
    pub status: StepStatus,
    pub exit_code: Option<i32>,
    /// The state of the data when the phase started: clean right after a
    /// load, otherwise dirty with the phases that wrote since.
    pub data_before: Option<DataState>,
    /// The phase's result file, relative to the index.
    pub result: Option<String>,
    pub ops_per_sec: Option<f64>,
    /// p50, p99 and mean of each operation, microseconds.
    pub latency_us: BTreeMap<String, BTreeMap<String, f64>>,
    pub slo: Option<SloOutcome>,
    /// The first record number no insert of this phase took: the next run
    /// phase of the chain uses it as `recordcount`, so it reads the records
    /// earlier phases inserted and inserts new keys.
    #[serde(default)]
    pub next_insert_keynum: Option<u64>,
    pub started_at: Option<String>,
    pub ended_at: Option<String>,
}

/// Whether the data is as loaded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Cleanliness {
    Clean,
    Dirty,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DataState {
    pub state: Cleanliness,
    pub written_since_load: Vec<String>,
}

impl Cleanliness {
    pub fn name(self) -> &'static str {
        match self {
            Cleanliness::Clean => "clean",
            Cleanliness::Dirty => "dirty",
        }
    }
}

impl DataState {
    /// "clean", "dirty" or "dirty (after a, b)".
    pub fn describe(&self) -> String {
        let state = self.state.name();
        if self.written_since_load.is_empty() {
            state.to_string()
        } else {
            format!("{state} (after {})", self.written_since_load.join(", "))
        }
    }
}

/// Whether an SLO search found a rate that met the bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum SloStatus {
    /// The knee is the answer.
    Met,
    /// No rate met the bound; the closed-loop probe is kept.
    Unmet,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SloOutcome {
    pub bound: Slo,
    /// The closed-loop probe: the most the target did, and its percentile.
    pub max_ops_per_sec: f64,
    pub max_value_ns: Option<u64>,
    pub probe_result: Option<String>,
    pub status: SloStatus,
    pub knee_ops_per_sec: Option<f64>,
    pub knee_value_ns: Option<u64>,
    pub message: String,
    /// Every open-loop step, by target rate.
    pub curve: Vec<Point>,
}

/// `index.json` of `yardstick suite`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SuiteIndex {
    /// Always "yardstick suite".
    pub kind: String,
    /// The version of this format; readers refuse another.
    #[serde(default = "first_version")]
    pub schema_version: u32,
    pub suite: SuiteName,
    pub tool_version: String,
    /// A hash of everything that defines the suite (URLs included): a rerun
    /// with the same hash resumes, another is refused.
    pub fingerprint: String,
    /// The targets, passwords redacted.
    pub targets: Vec<String>,
    pub records: Vec<u64>,
    pub repeat: u32,
    pub seed: u64,
    pub duration_s: f64,
    pub warmup_s: f64,
    pub threads: usize,
    pub load_threads: usize,
    pub concurrency: usize,
    /// Properties given to every phase (preset and -p).
    pub properties: Vec<String>,
    pub slo: Option<String>,
    /// `--until`: the bound repetitions stop at, and how it is judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<String>,
    pub steps: Vec<StepRecord>,
    /// Per target, data size and step: mean and 95% CI over repetitions.
    pub summary: Vec<SummaryRow>,
    /// With several data sizes: each size against the smallest.
    pub scaling: Vec<ScalingRow>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Stat {
    pub n: usize,
    pub mean: f64,
    pub stdev: f64,
    /// Half-width of the 95% confidence interval; absent with one repetition.
    pub ci95: Option<f64>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SummaryRow {
    pub target: usize,
    pub records: u64,
    pub step: String,
    pub ops_per_sec: Option<Stat>,
    /// Per operation: p99 in microseconds.
    pub p99_us: BTreeMap<String, Stat>,
    pub mean_us: BTreeMap<String, Stat>,
    /// SLO searches: the knee throughput.
    pub slo_ops_per_sec: Option<Stat>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ScalingRow {
    pub target: usize,
    pub step: String,
    pub base_records: u64,
    pub records: u64,
    pub ops_per_sec_change_pct: Option<f64>,
    /// Per operation: change of p99 and of mean latency, percent.
    pub p99_change_pct: BTreeMap<String, f64>,
    pub mean_change_pct: BTreeMap<String, f64>,
}

/// What a matrix cell came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum CellStatus {
    Ok,
    /// Killed by its memory budget: a finding, not a failure.
    Oom,
    Failed,
}

/// A test of the matrix as the index records it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct MatrixTest {
    pub name: String,
    pub description: String,
    pub threads: usize,
    pub read_proportion: f64,
}

/// One engine's load.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct MatrixLoad {
    /// The URL, passwords redacted.
    pub db: String,
    /// The load's result file, relative to the index.
    pub result: Option<String>,
    pub inserts_per_sec: Option<f64>,
    pub disk_bytes: Option<u64>,
    pub compression_ratio: Option<f64>,
    pub engine: Option<String>,
    pub version: Option<String>,
}

/// Mean, median, p99 and standard deviation in microseconds over every
/// successful operation of a cell (all kinds together, histograms merged).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CellLatency {
    pub mean: f64,
    pub p50: f64,
    pub p99: f64,
    pub stdev: f64,
}

/// One engine, budget and test.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct MatrixCell {
    /// The URL, passwords redacted.
    pub db: String,
    pub engine: Option<String>,
    /// The budget as given (3G), or none.
    pub budget: Option<String>,
    pub budget_bytes: Option<u64>,
    pub test: String,
    pub threads: usize,
    pub read_proportion: f64,
    pub status: CellStatus,
    pub exit_code: i32,
    /// The cell's result file, relative to the index.
    pub result: Option<String>,
    pub ops_per_sec: Option<f64>,
    pub latency_us: Option<CellLatency>,
    pub peak_memory_bytes: Option<u64>,
    pub disk_bytes_after: Option<u64>,
}

/// `index.json` of `yardstick matrix`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct MatrixIndex {
    /// Always "yardstick storage-engine matrix".
    pub kind: String,
    /// The version of this format; readers refuse another.
    #[serde(default = "first_version")]
    pub schema_version: u32,
    pub tool_version: String,
    pub records: u64,
    pub fieldcount: u64,
    pub fieldlength: u64,
    pub values: String,
    pub duration_s: f64,
    pub warmup_s: f64,
    pub seed: u64,
    pub budgets: Vec<Option<String>>,
    pub tests: Vec<MatrixTest>,
    pub loads: Vec<MatrixLoad>,
    pub cells: Vec<MatrixCell>,
}

/// An index file, whichever kind it is.
#[derive(Debug, Clone, PartialEq)]
pub enum AnyIndex {
    Suite(SuiteIndex),
    Matrix(MatrixIndex),
}

/// The index kind `value` declares, if it is one.
pub fn kind_of(value: &serde_json::Value) -> Option<&'static str> {
    match value["kind"].as_str() {
        Some(SUITE_KIND) => Some(SUITE_KIND),
        Some(MATRIX_KIND) => Some(MATRIX_KIND),
        _ => None,
    }
}

/// Reads an index already parsed as JSON, of the kind [`kind_of`] found.
pub fn from_value(path: &Path, value: serde_json::Value) -> Result<AnyIndex, ReadError> {
    if kind_of(&value) == Some(SUITE_KIND) {
        read::versioned(path, value, "suite index", SUITE_SCHEMA_VERSION, Some(1))
            .map(AnyIndex::Suite)
    } else {
        read::versioned(path, value, "matrix index", MATRIX_SCHEMA_VERSION, Some(1))
            .map(AnyIndex::Matrix)
    }
}

/// Reads a suite index (to resume).
pub(crate) fn read_suite(path: &Path) -> Result<SuiteIndex, ReadError> {
    let value = read::json(path, "suite index")?;
    read::versioned(path, value, "suite index", SUITE_SCHEMA_VERSION, Some(1))
}

/// Reads a matrix index (before a matrix replaces it).
pub(crate) fn read_matrix(path: &Path) -> Result<MatrixIndex, ReadError> {
    let value = read::json(path, "matrix index")?;
    if kind_of(&value) == Some(SUITE_KIND) {
        return Err(ReadError::Incomplete {
            path: path.to_path_buf(),
            what: "matrix index",
            message: "it is a suite's index".into(),
        });
    }
    read::versioned(path, value, "matrix index", MATRIX_SCHEMA_VERSION, Some(1))
}

/// Writes an index atomically.
pub fn write(path: &Path, index: &impl Serialize) -> Result<(), crate::Error> {
    let text = serde_json::to_vec_pretty(index)
        .map_err(|e| crate::Error::Failed(format!("cannot encode the index: {e}")))?;
    yardstick_core::result::write_atomic(path, &text)
        .map_err(|e| crate::Error::Failed(format!("cannot write {}: {e}", path.display())))
}
