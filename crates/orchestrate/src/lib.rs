//! Experiments over many runs: a suite (a sequence of loads and runs per
//! target, data size and repetition, resumable), the SLO search (the most
//! throughput under a latency bound), data-size scaling and repetitions with
//! confidence intervals (both parts of a suite), and the storage-engine
//! matrix (engines x memory budgets x tests).
//!
//! Every phase runs as a child `yardstick load|run` process with its own
//! result file, so a phase's memory cap, crash or Ctrl-C stays its own. A
//! plan is typed ([`suite::SuiteSpec`] -> [`suite::plan`], [`matrix::MatrixSpec`]);
//! the index files that tie the results together are typed and versioned
//! ([`index`]). The command line only parses arguments into a spec.
pub mod catalogue;
pub mod index;
pub mod matrix;
pub mod slo;
pub mod suite;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use yardstick_core::result::RunResult;
use yardstick_core::run::Control;

/// Whether a child phase's exit code says a signal (SIGHUP, SIGINT,
/// SIGTERM) stopped it after it wrote its partial result.
pub fn interrupted(code: i32) -> bool {
    matches!(code, 129 | 130 | 143)
}

/// Why an experiment could not run or finish.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The spec is wrong; nothing ran.
    #[error("{0}")]
    BadInput(String),
    /// Something failed while running.
    #[error("{0}")]
    Failed(String),
}

/// What an experiment runs its phases with.
pub struct Env<'a> {
    /// The `yardstick` executable the phases run as.
    pub exe: PathBuf,
    /// Ctrl-C: a stop between phases ends the experiment, resumable.
    pub control: &'a Control,
    /// Progress lines, one per call (the command line prints them to stderr).
    pub say: &'a dyn Fn(&str),
    /// Checks the arguments of a `yardstick load|run` as that phase would,
    /// without doing any work: every planned phase is checked before the
    /// first runs, so a typo stops the experiment at once, not hours in.
    pub check: &'a dyn Fn(&[String]) -> Result<(), String>,
}

impl Env<'_> {
    /// [`Env::check`] as this crate's error.
    fn checked(&self, args: &[String]) -> Result<(), Error> {
        (self.check)(args).map_err(Error::BadInput)
    }

    /// Runs `yardstick ARGS` with its standard output silenced, as the
    /// run's child (a signal to this process reaches it); returns its exit
    /// code (1 when a signal ended it).
    fn phase(&self, args: &[String]) -> Result<i32, Error> {
        // runs: yardstick, the executable in `exe`
        let mut cmd = Command::new(&self.exe);
        cmd.args(args).stdout(std::process::Stdio::null());
        let status = self
            .control
            .run_child(&mut cmd)
            .map_err(|e| Error::Failed(format!("cannot start yardstick: {e}")))?;
        Ok(status.code().unwrap_or(1))
    }
}

/// A file name part for a URL: its scheme and last path component.
pub fn label(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("db", url));
    let path = rest.split('?').next().unwrap_or("");
    let last = Path::new(path)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut raw = if last.is_empty() {
        scheme.to_string()
    } else {
        format!("{scheme}-{last}")
    };
    // the storage engine a server URL picks is what the file is about
    let query = rest.split_once('?').map_or("", |(_, q)| q);
    for (k, v) in query.split('&').filter_map(|kv| kv.split_once('=')) {
        if k == "engine" || k == "flavor" {
            raw = format!("{raw}-{v}");
        }
    }
    raw.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Refuses two targets whose result files would share a name, with `message`.
fn distinct_labels(dbs: &[String], message: &str) -> Result<(), Error> {
    let mut labels: Vec<String> = dbs.iter().map(|d| label(d)).collect();
    labels.sort();
    labels.dedup();
    if labels.len() == dbs.len() {
        Ok(())
    } else {
        Err(Error::BadInput(message.to_string()))
    }
}

/// Creates the output directory.
fn create_dir(dir: &Path) -> Result<(), Error> {
    std::fs::create_dir_all(dir).map_err(|e| {
        Error::BadInput(format!(
            "cannot create {}: {e}; choose another --out-dir",
            dir.display()
        ))
    })
}

/// Now, as the index files write times.
fn now() -> String {
    yardstick_core::result::time::rfc3339(std::time::SystemTime::now())
}

/// The response-time histograms of `r`'s operations that `keep` names,
/// added exactly; `None` when none has a value.
fn merged_response(
    r: &RunResult,
    keep: impl Fn(&str) -> bool,
) -> Option<hdrhistogram::Histogram<u64>> {
    let mut merged: Option<hdrhistogram::Histogram<u64>> = None;
    for (_, op) in r.operations.iter().filter(|(n, _)| keep(n)) {
        let Ok(h) = yardstick_core::stats::decode_histogram(&op.histograms.response) else {
            continue;
        };
        match &mut merged {
            Some(m) => {
                let _ = m.add(&h);
            }
            None => merged = Some(h),
        }
    }
    merged.filter(|h| !h.is_empty())
}

/// p50, p99 and mean per operation in microseconds.
fn latency_us(r: &RunResult) -> BTreeMap<String, BTreeMap<String, f64>> {
    r.operations
        .iter()
        .filter(|(_, o)| o.response_time_ns.count > 0)
        .map(|(name, o)| {
            let s = &o.response_time_ns;
            let m: BTreeMap<String, f64> = [
                ("p50", s.p50 as f64 / 1e3),
                ("p99", s.p99 as f64 / 1e3),
                ("mean", s.mean / 1e3),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
            (name.clone(), m)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_name_engine_and_directory_safely() {
        assert_eq!(
            label("rocksdb:///data/rocks?cache_size=1GiB"),
            "rocksdb-rocks"
        );
        assert_eq!(label("sqlite://x/bench.db"), "sqlite-bench_db");
        assert_eq!(label("null://"), "null");
        assert_eq!(
            label("mysql://u:p@127.0.0.1:53307/ycsb?engine=rocksdb&timeout=5s"),
            "mysql-ycsb-rocksdb"
        );
        let two = ["sqlite://a/x.db".to_string(), "sqlite://b/x.db".to_string()];
        assert!(distinct_labels(&two, "x").is_err());
        assert!(distinct_labels(&two[..1], "x").is_ok());
    }
}
