//! The suite's index (`index.json`): the plan's steps with their status and
//! results, the state of the data before each, and the summary rows.
use super::*;

/// A phase of the plan: one step for one target, data size and repetition.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct StepRecord {
    pub id: String,
    /// Index into `targets`.
    pub target: usize,
    pub records: u64,
    pub repetition: u32,
    pub step: String,
    pub description: String,
    /// "load" or "run".
    pub phase: String,
    pub workload: String,
    /// pending, ok, failed or interrupted.
    pub status: String,
    pub exit_code: Option<i32>,
    /// The state of the data when the phase started: "clean" right after a
    /// load, otherwise "dirty" with the phases that wrote since.
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

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DataState {
    pub state: String,
    pub written_since_load: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SloOutcome {
    pub bound: Slo,
    /// The closed-loop probe: the most the target did, and its percentile.
    pub max_ops_per_sec: f64,
    pub max_value_ns: Option<u64>,
    pub probe_result: Option<String>,
    /// "met": the knee is the answer; "unmet": no rate met the bound.
    pub status: String,
    pub knee_ops_per_sec: Option<f64>,
    pub knee_value_ns: Option<u64>,
    pub message: String,
    /// Every open-loop step, by target rate.
    pub curve: Vec<Point>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Index {
    pub kind: String,
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
    pub steps: Vec<StepRecord>,
    /// Per target, data size and step: mean and 95% CI over repetitions.
    pub summary: Vec<SummaryRow>,
    /// With several data sizes: each size against the smallest.
    pub scaling: Vec<ScalingRow>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Stat {
    pub n: usize,
    pub mean: f64,
    pub stdev: f64,
    /// Half-width of the 95% confidence interval; absent with one repetition.
    pub ci95: Option<f64>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
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
