//! The result of a TPC-C run: the same family as the YCSB result (schema
//! version, tool, command line, seed, redacted URL, engine, host, client CPU,
//! HdrHistograms for exact merging, time series, warnings), with tpmC,
//! per-transaction counts and latencies, and the consistency checks.
use crate::binding::EngineInfo;
use crate::result::{ClientInfo, ErrorSample, HostInfo, MemoryLimit, Tool};
use crate::stats::Summary;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub const TPCC_SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TpccResult {
    pub schema_version: u32,
    /// Always "tpcc".
    pub kind: String,
    pub tool: Tool,
    pub command_line: Vec<String>,
    pub seed: u64,
    pub database: Database,
    pub config: TpccConfig,
    pub host: HostInfo,
    pub started_at: String,
    pub ended_at: String,
    /// Seconds of measurement (warm-up excluded).
    pub elapsed_s: f64,
    pub complete: bool,
    pub interrupted: bool,
    /// Why the figures are partial (`complete: false`), in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incomplete_reason: Option<String>,
    /// New-Order transactions completed per minute (rolled-back ones included,
    /// as the specification counts them).
    pub tpmc: f64,
    /// Every completed transaction per minute.
    pub tpm_total: f64,
    /// Keyed by NEW-ORDER, PAYMENT, ORDER-STATUS, DELIVERY, STOCK-LEVEL.
    pub transactions: BTreeMap<String, TxnResult>,
    pub time_series: Vec<TpccPoint>,
    /// The consistency conditions checked after the run (empty with --no-check).
    pub checks: Vec<Check>,
    /// How the terminals sent statements and the round trips a
    /// transaction took (absent in results of versions before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round_trips: Option<RoundTrips>,
    pub client: ClientInfo,
    pub warnings: Vec<String>,
    pub error_samples: Vec<ErrorSample>,
    /// `--memory-limit`: the cgroup the terminals ran in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_limit: Option<MemoryLimit>,
    /// `--tag KEY=VALUE`: labels for `yardstick results` and selectors.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tags: BTreeMap<String, String>,
    /// What the host, the server process and the database did during the
    /// run (per transaction in `per_operation`); absent with `--observe off`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observation: Option<crate::observe::Observation>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Database {
    pub scheme: String,
    /// Passwords replaced by `***`.
    pub url: String,
    pub engine: EngineInfo,
    /// The isolation the transactions ran at, and how rows are locked.
    pub isolation: String,
    /// How the client sends a transaction's statements (prepared or text,
    /// pipelined or one round trip each).
    #[serde(default)]
    pub statements: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TpccConfig {
    pub warehouses: u32,
    /// Warehouses loaded in the database (at least `warehouses`).
    pub warehouses_loaded: u32,
    pub terminals: u32,
    /// Worker threads the terminals shared (0 in results of versions that
    /// gave each terminal a thread of its own).
    #[serde(default)]
    pub threads: u32,
    /// `--target`: transactions per second over all terminals (open loop).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_per_sec: Option<f64>,
    pub duration_s: f64,
    pub warmup_s: f64,
    /// Keying and think times of clause 5.2.5.7 (`--spec-timing`); off by
    /// default, so terminals submit back to back and tpmC is not bounded by
    /// the specification's 12.86 tpmC per warehouse.
    pub spec_timing: bool,
    /// Retries of a transaction that failed with a serialization failure,
    /// deadlock or busy database.
    pub retry_limit: u32,
    pub load_constants: super::Constants,
    pub run_constants: super::Constants,
}

/// `--sending` and what it cost in round trips.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RoundTrips {
    /// "pipelined" or "one-by-one".
    pub sending: String,
    /// Requests waited for per ended transaction, over all kinds (for
    /// SQLite, calls into the engine).
    pub per_transaction: f64,
    /// The same by kind.
    pub by_transaction: BTreeMap<String, f64>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TxnResult {
    /// Completed: committed plus rolled back as the specification requires.
    pub count: u64,
    pub committed: u64,
    /// New-Order's 1% with an unused item.
    pub rolled_back: u64,
    /// Attempts retried after a serialization failure, deadlock or busy database.
    pub retries: u64,
    /// Transactions that failed (after their retries).
    pub errors: u64,
    /// Share of all completed transactions.
    pub share: f64,
    /// Completed transactions, from first attempt to the end (retries included).
    pub response_time_ns: Summary,
    /// HdrHistogram, V2-deflate in base64.
    pub histogram: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TpccPoint {
    /// End of the interval, seconds after measurement started (negative in warm-up).
    pub t_s: f64,
    pub warmup: bool,
    pub tpmc: f64,
    pub tpm_total: f64,
    pub errors: u64,
}

/// One consistency condition of clause 3.3.2.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Check {
    pub condition: u32,
    pub name: String,
    pub pass: bool,
    /// What was compared, and where it failed.
    pub detail: String,
}
