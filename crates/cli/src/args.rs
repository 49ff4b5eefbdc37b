//! The arguments `load` and `run` share, and the parsers of flag values
//! (instances, start times, sizes, durations) with their accepted forms.
use clap::{Args, ValueEnum};
use std::path::PathBuf;
use std::time::Duration;

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Format {
    /// A summary table for people.
    Table,
    /// YCSB's own text output ([OVERALL], RunTime(ms), ...).
    Ycsb,
    /// The result JSON.
    Json,
}

#[derive(Args, Debug, Clone)]
pub(crate) struct PhaseArgs {
    /// Target database URL (null://, sqlite:///path.db). Default: SQLite in a temporary directory.
    #[arg(long, value_name = "URL")]
    pub db: Option<String>,
    /// YCSB property file, or a built-in workload name (workloada..workloadf); repeatable.
    #[arg(short = 'P', value_name = "FILE")]
    pub property_files: Vec<PathBuf>,
    /// Property override name=value; repeatable; wins over -P files.
    #[arg(short = 'p', value_name = "NAME=VALUE")]
    pub properties: Vec<String>,
    /// Worker threads (sets threadcount).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Operations in flight per thread (for network databases).
    #[arg(long, default_value_t = 1)]
    pub concurrency: usize,
    /// Target operations per second over all threads: open loop on one
    /// global schedule (sets target). Or a rate schedule: steps
    /// `1000@30s,2000@30s`, ramps `100..5000@1m`, or `file:PATH` of (time,
    /// rate) lines joined linearly; the run then lasts the schedule.
    #[arg(long, value_name = "OPS|SCHEDULE", value_parser = parse_target_arg)]
    pub target: Option<Target>,
    /// Stop after this long, warm-up not included (sets maxexecutiontime), e.g. 30s, 5m.
    /// A workload file's operationcount is then ignored; -p operationcount=N still applies.
    #[arg(long, value_parser = parse_duration_arg)]
    pub duration: Option<Duration>,
    /// Run this long before measuring; excluded from statistics.
    #[arg(long, value_parser = parse_duration_arg, default_value = "0s")]
    pub warmup: Duration,
    /// Seed of every random choice; the same seed and spec replay the same operation stream.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Result file (default: a new file under --results-dir).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Directory for result files named by time, phase, workload and binding.
    #[arg(long, value_name = "DIR", default_value = "results")]
    pub results_dir: PathBuf,
    /// Summary format on standard output.
    #[arg(long, value_enum, default_value = "table")]
    pub format: Format,
    /// Time between status lines and time-series points (sets status.interval), 100ms to 1h, e.g. 1s.
    #[arg(long, value_parser = parse_duration_arg)]
    pub status_interval: Option<Duration>,
    /// No status line.
    #[arg(long, short)]
    pub quiet: bool,
    /// Stop the run (partial result, exit code 1) once more than N operations
    /// failed with an error status; not_found and duplicate_key do not count.
    /// Default: never stop for errors, count them.
    #[arg(long, value_name = "N")]
    pub max_errors: Option<u64>,
    /// What an operation error does: `stop` ends the run at the first one
    /// (same as --max-errors 0), `continue` counts them and goes on (the default).
    #[arg(long, value_enum, conflicts_with = "max_errors")]
    pub on_error: Option<OnError>,
    /// Retry an operation that failed with conflict, timeout or unavailable up
    /// to N times, with exponential backoff (sets retry.limit; retries are
    /// counted in the result and latency covers every attempt).
    #[arg(long, value_name = "N")]
    pub retries: Option<u32>,
    /// This process is instance I of N of one run (0-based, e.g. 2/8): a load
    /// inserts its N-th part of the key range; a run's new records take keys
    /// no other instance takes, while reads and updates cover the whole key
    /// space. Results record it; `yardstick merge` combines them.
    #[arg(long, value_name = "I/N", value_parser = parse_instance_arg)]
    pub instance: Option<(u64, u64)>,
    /// Start measuring at this wall-clock time (RFC 3339 UTC such as
    /// 2026-11-22T10:00:00Z, or Unix seconds), so instances start together.
    #[arg(long, value_name = "TIME", value_parser = parse_time_arg)]
    pub start_at: Option<std::time::SystemTime>,
    /// Cap the memory of the benchmark process, engine and page cache included,
    /// e.g. 3G or 512MiB: the phase runs as a child in a memory cgroup of its
    /// own (cgroup v1 or v2; root or a delegated subtree), after cached pages
    /// are dropped. An OOM kill is recorded in the result. Needs --db.
    #[arg(long, value_name = "SIZE", value_parser = parse_size_arg)]
    pub memory_limit: Option<u64>,
    /// Cap the memory of the database server for the phase, page cache
    /// included, e.g. 1G: the server on this machine that listens on the
    /// --db URL's port moves, with its children, into a memory cgroup of its
    /// own (root), cached pages are dropped, and it moves back afterwards.
    /// The cap, the server's peak and any OOM kill are recorded in the result.
    #[arg(long, value_name = "SIZE", value_parser = parse_size_arg)]
    pub server_memory_limit: Option<u64>,
    /// Load phase: insert N records per call with the binding's bulk path
    /// (multi-row INSERT, COPY, pipelines); sets db.batchsize.
    #[arg(long, value_name = "N")]
    pub batch: Option<u64>,
    /// Load phase: delete every record of the table first (TRUNCATE where the
    /// database has it), so the load starts from an empty table; recorded in
    /// the result.
    #[arg(long)]
    pub clear: bool,
    /// Run phase: end once the 95% confidence interval of throughput is
    /// narrower than the bound, relative to its mean (`ci<2%`), or of every
    /// operation's p99 (`p99 ci<5%`); both with a comma. Judged from 10
    /// intervals on, over the series' effective size (autocorrelation
    /// accounted for, as compare does); --duration or operationcount still
    /// bound the run.
    #[arg(long, value_name = "COND")]
    pub until: Option<String>,
    /// After the phase, read back every record it inserted: lost acknowledged
    /// inserts, changed values (dataintegrity=true) and refused inserts that
    /// are present all the same fail the command (exit 1); see `yardstick verify`.
    #[arg(long)]
    pub verify: bool,
    /// Write every operation (intended and actual start, operation, key,
    /// status, latency in ns) to FILE, a compact binary trace
    /// (docs/trace.md) that `yardstick replay` plays back.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    #[command(flatten)]
    pub live: crate::live::LiveArgs,
    #[command(flatten)]
    pub faults: crate::live::FaultArgs,
}

/// `--target`: a constant rate or a rate schedule.
#[derive(Debug, Clone)]
pub(crate) enum Target {
    Rate(f64),
    Schedule(std::sync::Arc<yardstick_core::run::Schedule>),
}

pub(crate) fn parse_target_arg(s: &str) -> Result<Target, String> {
    if let Ok(r) = s.trim().parse::<f64>() {
        if !(r.is_finite() && r >= 0.0) {
            return Err(format!(
                "'{s}' is not a rate: give operations per second, e.g. --target 10000"
            ));
        }
        return Ok(Target::Rate(r));
    }
    if !s.contains('@') && !s.trim().starts_with("file:") {
        return Err(format!(
            "'{s}' is neither a rate nor a rate schedule: give operations per second (10000), steps (1000@30s,2000@30s), a ramp (100..5000@1m) or file:PATH"
        ));
    }
    yardstick_core::run::Schedule::parse(s)
        .map(|s| Target::Schedule(std::sync::Arc::new(s)))
        .map_err(|e| e.to_string())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum OnError {
    Stop,
    Continue,
}

/// `I/N` with 0 <= I < N.
pub(crate) fn parse_instance_arg(s: &str) -> Result<(u64, u64), String> {
    let bad = || format!("'{s}' is not an instance: write I/N with 0 <= I < N, e.g. 0/3");
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let (i, n): (u64, u64) = (
        i.trim().parse().map_err(|_| bad())?,
        n.trim().parse().map_err(|_| bad())?,
    );
    if n == 0 || i >= n {
        return Err(bad());
    }
    Ok((i, n))
}

/// RFC 3339 UTC (`2026-11-22T10:00:00Z`) or Unix seconds.
/// A start time no more than [`MAX_START_AHEAD`] ahead.
pub(crate) fn parse_time_arg(s: &str) -> Result<std::time::SystemTime, String> {
    let number = s.trim().parse::<f64>().ok().and_then(|secs| {
        // a number too large for a Duration or a SystemTime is refused below, not a panic
        Duration::try_from_secs_f64(secs)
            .ok()
            .and_then(|d| std::time::UNIX_EPOCH.checked_add(d))
    });
    let t = number
        .or_else(|| yardstick_core::result::time::parse_rfc3339(s.trim()))
        .ok_or_else(|| {
            format!(
                "'{s}' is not a time: use RFC 3339 in UTC (2026-11-22T10:00:00Z) or Unix seconds"
            )
        })?;
    if let Ok(ahead) = t.duration_since(std::time::SystemTime::now()) {
        if ahead > MAX_START_AHEAD {
            return Err(format!(
                "'{s}' is {:.1} hours from now: instances start together within a day; give a time less than 24 hours ahead",
                ahead.as_secs_f64() / 3600.0
            ));
        }
    }
    Ok(t)
}

/// How far ahead `--start-at` may be: a day (further is a typo, and a wait
/// nobody watches).
const MAX_START_AHEAD: Duration = Duration::from_secs(24 * 3600);

/// `3G`, `512MiB`, `1.5GiB`, or plain bytes; at least 16 MiB.
pub(crate) fn parse_size_arg(s: &str) -> Result<u64, String> {
    let v = yardstick_bindings::url::parse_bytes(s)
        .ok_or_else(|| format!("'{s}' is not a size: use for example 3G, 512MiB or 1.5GiB"))?;
    if v < 16 << 20 {
        return Err(format!(
            "'{s}' is too small to run a benchmark process in: give at least 16MiB"
        ));
    }
    if let Some(total) = yardstick_core::result::env::memory_bytes().filter(|t| v > *t) {
        return Err(format!(
            "'{s}' is more than this machine's memory ({:.1} GiB), so it caps nothing: give at most {}MiB",
            total as f64 / (1u64 << 30) as f64,
            total >> 20
        ));
    }
    Ok(v)
}

/// A duration flag: `30s`, `5m`, `1.5h`, `250ms` ([`yardstick_core::units`]).
/// At most [`yardstick_core::units::MAX_RUN_TIME`].
pub(crate) fn parse_duration_arg(s: &str) -> Result<Duration, String> {
    let d = yardstick_core::units::parse_duration(s).map_err(|e| e.to_string())?;
    let max = yardstick_core::units::MAX_RUN_TIME;
    if d > max {
        return Err(format!(
            "'{s}' is longer than {} days: give at most {}d, or split a longer soak into runs",
            max.as_secs() / 86_400,
            max.as_secs() / 86_400
        ));
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_start_more_than_a_day_ahead_is_refused() {
        let in_days = |d: u64| {
            let t = std::time::SystemTime::now() + Duration::from_secs(d * 86_400 + 60);
            let secs = t.duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
            parse_time_arg(&secs.to_string())
        };
        assert!(in_days(0).is_ok());
        let e = in_days(3).unwrap_err();
        assert!(
            e.contains("72.0 hours from now") && e.contains("less than 24 hours"),
            "{e}"
        );
    }

    #[test]
    fn instances_and_start_times_parse() {
        assert_eq!(parse_instance_arg("2/8"), Ok((2, 8)));
        assert!(parse_instance_arg("3/3").is_err());
        assert!(parse_instance_arg("1/0").is_err());
        assert!(parse_instance_arg("one").is_err());
        assert_eq!(
            parse_time_arg("1795305600"),
            Ok(std::time::UNIX_EPOCH + Duration::from_secs(1_795_305_600))
        );
        assert_eq!(
            parse_time_arg("2026-11-22T00:00:00Z"),
            parse_time_arg("1795305600")
        );
        assert!(parse_time_arg("tomorrow").is_err());
        assert!(parse_time_arg("1e300").is_err());
        assert!(parse_time_arg("-5").is_err());
    }

    #[test]
    fn durations_parse_with_units() {
        assert_eq!(parse_duration_arg("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration_arg("5m"), Ok(Duration::from_secs(300)));
        assert_eq!(parse_duration_arg("250ms"), Ok(Duration::from_millis(250)));
        assert!(parse_duration_arg("2").unwrap_err().contains("has no unit"));
        assert!(parse_duration_arg("soon").is_err());
        assert!(parse_duration_arg("3 fortnights").is_err());
    }
}
