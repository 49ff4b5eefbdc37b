//! The `yardstick` command line: argument parsing and dispatch. The work is
//! done by the core, bindings and report crates.
//!
//! Exit codes: 0 success; 1 the run could not finish or its result could not
//! be written; 2 bad input or a target that cannot be used (nothing ran);
//! 130 interrupted by Ctrl-C (the partial result was written).
mod compare;
mod list;
mod matrix;
mod memlimit;
mod phase;
mod report;
mod status;
mod suite;
mod tpcc;
mod workloads;

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;
use yardstick_core::run::Control;

pub(crate) const EXIT_FAILED: i32 = 1;
pub(crate) const EXIT_BAD_INPUT: i32 = 2;
pub(crate) const EXIT_INTERRUPTED: i32 = 130;

/// An error that ends the command, with its exit code.
#[derive(Debug)]
pub(crate) struct CliError {
    pub code: i32,
    pub message: String,
}

impl std::fmt::Display for CliError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CliError {}

impl From<yardstick_orchestrate::Error> for CliError {
    fn from(e: yardstick_orchestrate::Error) -> Self {
        match e {
            yardstick_orchestrate::Error::BadInput(m) => CliError::bad_input(m),
            yardstick_orchestrate::Error::Failed(m) => CliError::failed(m),
        }
    }
}

impl CliError {
    pub(crate) fn bad_input(message: impl std::fmt::Display) -> Self {
        CliError {
            code: EXIT_BAD_INPUT,
            message: message.to_string(),
        }
    }
    pub(crate) fn failed(message: impl std::fmt::Display) -> Self {
        CliError {
            code: EXIT_FAILED,
            message: message.to_string(),
        }
    }
}

#[derive(Parser, Debug)]
#[command(
    name = "yardstick",
    version,
    about = "Database benchmark suite: YCSB workloads with exact latency measurement and reproducible results"
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub(crate) enum Command {
    /// Load the data set (YCSB's load phase: recordcount inserts).
    Load(PhaseArgs),
    /// Run the workload's operation mix (YCSB's transaction phase). Without --db,
    /// loads a small data set into SQLite in a temporary directory first.
    Run(PhaseArgs),
    /// The storage-engine experiment: load each engine (--db, repeatable) once,
    /// then run every test preset under every memory budget, each cell a
    /// capped process with its own result, tied together by index.json.
    Matrix(matrix::MatrixArgs),
    /// A sequence of loads and runs per target as one command: ycsb (load, A,
    /// B, C, F, D, reload, E), ydb (the same with a p99 bound search), scaling
    /// (several data sizes), mixes (batch loads and custom mixes); --repeat,
    /// --records and --slo apply to each. index.json ties the results
    /// together; the same command resumes an interrupted suite.
    Suite(suite::SuiteArgs),
    /// Merge the results of several instances of one run into one: histograms
    /// added exactly, counts summed, throughput over the window all measured.
    Merge {
        /// Result files of the instances.
        #[arg(required = true, num_args = 2..)]
        files: Vec<PathBuf>,
        /// The merged result file.
        #[arg(short = 'o', long = "out", value_name = "FILE")]
        out: PathBuf,
    },
    /// Compare two results: per operation, throughput and latency, the change,
    /// and whether it is statistically significant; warns when the runs
    /// measured different things.
    Compare {
        /// The baseline result.
        a: PathBuf,
        /// The result compared with it.
        b: PathBuf,
    },
    /// TPC-C: load W warehouses, run the five transactions from T terminals
    /// (tpmC, per-transaction latency), check the consistency conditions.
    #[command(subcommand)]
    Tpcc(tpcc::TpccCommand),
    /// Write a report of results, suites (their directory or index.json) and
    /// matrices: one self-contained HTML file with inline SVG charts, or its
    /// tables as Markdown or CSV.
    Report {
        /// Result files, index.json files, or directories holding them.
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
        /// The report file; its extension (.html, .md, .csv) picks the format.
        #[arg(short = 'o', long = "out", value_name = "FILE")]
        out: PathBuf,
        /// html, md or csv (default: from the file's extension, else html).
        #[arg(long, value_enum)]
        format: Option<report::ReportFormat>,
        /// The report's title.
        #[arg(long)]
        title: Option<String>,
    },
    /// List bindings, built-in workloads or properties with their defaults.
    List {
        #[arg(value_enum, default_value = "all")]
        what: ListWhat,
    },
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ListWhat {
    All,
    Bindings,
    Workloads,
    Properties,
}

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
    /// Target operations per second over all threads: open loop on one global schedule (sets target).
    #[arg(long, value_name = "OPS")]
    pub target: Option<f64>,
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
    /// Load phase: insert N records per call with the binding's bulk path
    /// (multi-row INSERT, COPY, pipelines); sets db.batchsize.
    #[arg(long, value_name = "N")]
    pub batch: Option<u64>,
    /// Load phase: delete every record of the table first (TRUNCATE where the
    /// database has it), so the load starts from an empty table; recorded in
    /// the result.
    #[arg(long)]
    pub clear: bool,
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
pub(crate) fn parse_time_arg(s: &str) -> Result<std::time::SystemTime, String> {
    if let Ok(secs) = s.trim().parse::<f64>() {
        // a number too large for a Duration or a SystemTime is refused below, not a panic
        if let Some(t) = Duration::try_from_secs_f64(secs)
            .ok()
            .and_then(|d| std::time::UNIX_EPOCH.checked_add(d))
        {
            return Ok(t);
        }
    }
    yardstick_core::result::time::parse_rfc3339(s.trim()).ok_or_else(|| {
        format!("'{s}' is not a time: use RFC 3339 in UTC (2026-11-22T10:00:00Z) or Unix seconds")
    })
}

/// `3G`, `512MiB`, `1.5GiB`, or plain bytes; at least 16 MiB.
pub(crate) fn parse_size_arg(s: &str) -> Result<u64, String> {
    let v = yardstick_bindings::url::parse_bytes(s)
        .ok_or_else(|| format!("'{s}' is not a size: use for example 3G, 512MiB or 1.5GiB"))?;
    if v < 16 << 20 {
        return Err(format!(
            "'{s}' is too small to run a benchmark process in: give at least 16MiB"
        ));
    }
    Ok(v)
}

/// A duration flag: `30s`, `5m`, `1.5h`, `250ms` ([`yardstick_core::units`]).
pub(crate) fn parse_duration_arg(s: &str) -> Result<Duration, String> {
    yardstick_core::units::parse_duration(s).map_err(|e| e.to_string())
}

/// Runs the command line `args` (program name first) and returns the exit code.
pub fn main_with_args(args: Vec<OsString>) -> i32 {
    let parsed = list::command()
        .try_get_matches_from(&args)
        .and_then(|m| <Cli as clap::FromArgMatches>::from_arg_matches(&m));
    let cli = match parsed {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { EXIT_BAD_INPUT } else { 0 };
            let _ = e.print();
            return code;
        }
    };
    let command_line: Vec<String> = args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let result = match &cli.command {
        Command::List { what } => list::print(*what),
        Command::Matrix(a) => matrix::execute(a),
        Command::Suite(a) => suite::execute(a),
        Command::Tpcc(t) => tpcc::execute(t, command_line.clone()),
        Command::Report {
            inputs,
            out,
            format,
            title,
        } => report::execute(inputs, out, *format, title.as_deref()),
        Command::Merge { files, out } => merge_files(files, out),
        Command::Compare { a, b } => compare::execute(a, b),
        Command::Load(a) => phase::execute(
            a,
            yardstick_core::workload::Phase::Load,
            command_line,
            &control(),
        ),
        Command::Run(a) => phase::execute(
            a,
            yardstick_core::workload::Phase::Run,
            command_line,
            &control(),
        ),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("yardstick: error: {}", e.message);
            e.code
        }
    }
}

/// Reads a result file, or says in one line why it is not one.
/// Writes a result file atomically (a reader never sees half of it).
pub(crate) fn write_json(
    path: &std::path::Path,
    value: &impl serde::Serialize,
) -> Result<(), CliError> {
    let text = serde_json::to_vec_pretty(value)
        .map_err(|e| CliError::failed(format!("cannot encode the result: {e}")))?;
    yardstick_core::result::write_atomic(path, &text).map_err(|e| {
        CliError::failed(format!(
            "cannot write the result file {}: {e}",
            path.display()
        ))
    })
}

pub(crate) fn read_result(
    path: &std::path::Path,
) -> Result<yardstick_core::result::RunResult, CliError> {
    yardstick_core::result::read::read(path).map_err(CliError::bad_input)
}

fn merge_files(files: &[PathBuf], out: &std::path::Path) -> Result<i32, CliError> {
    let results = files
        .iter()
        .map(|f| Ok((f.display().to_string(), read_result(f)?)))
        .collect::<Result<Vec<_>, CliError>>()?;
    yardstick_core::result::check_writable(out).map_err(|e| {
        CliError::bad_input(format!(
            "cannot write {}: {e}; choose another -o",
            out.display()
        ))
    })?;
    let mut merged = yardstick_core::result::merge::merge(results)
        .map_err(|e| CliError::bad_input(e.to_string()))?;
    merged.command_line = std::env::args().collect();
    write_json(out, &merged)?;
    print!("{}", yardstick_report::summary_table(&merged));
    println!(
        "
merged {} results: {}",
        files.len(),
        out.display()
    );
    Ok(0)
}

/// What suites and matrices run their phases with: this executable.
pub(crate) fn env<'a>(
    control: &'a Control,
    say: &'a dyn Fn(&str),
) -> Result<yardstick_orchestrate::Env<'a>, CliError> {
    let exe = std::env::current_exe()
        .map_err(|e| CliError::failed(format!("cannot find the yardstick executable: {e}")))?;
    Ok(yardstick_orchestrate::Env { exe, control, say })
}

/// Ctrl-C asks the run to stop and write its partial result; a second Ctrl-C
/// exits at once.
pub(crate) fn control() -> Control {
    let control = Control::default();
    let stop = control.stop.clone();
    let _ = ctrlc::set_handler(move || {
        if stop.swap(true, std::sync::atomic::Ordering::SeqCst) {
            eprintln!("\nyardstick: interrupted again, exiting without waiting");
            std::process::exit(EXIT_INTERRUPTED);
        }
        eprintln!(
            "\nyardstick: stopping; writing the partial result (Ctrl-C again to exit at once)"
        );
    });
    control
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn a_cli_error_displays_its_message_and_is_an_error() {
        let e: Box<dyn std::error::Error> =
            Box::new(CliError::bad_input("--threads 0: give 1 or more"));
        assert_eq!(e.to_string(), "--threads 0: give 1 or more");
        assert_eq!(CliError::failed("x").code, EXIT_FAILED);
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
