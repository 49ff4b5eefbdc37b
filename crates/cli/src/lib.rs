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
mod signals;
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
    /// Read the database password from FILE (its first line) instead of the
    /// URL, where `ps` shows it to every user; YARDSTICK_PASSWORD and each
    /// database's own variable (PGPASSWORD, PGPASSFILE, MYSQL_PWD,
    /// REDISCLI_AUTH, ETCDCTL_PASSWORD) work too. A password in the URL wins.
    #[arg(long, global = true, value_name = "FILE")]
    pub password_file: Option<PathBuf>,
}

/// The variables passwords come from, masked in every output.
const PASSWORD_VARIABLES: &[&str] = &[
    yardstick_bindings::url::PASSWORD_ENV,
    "PGPASSWORD",
    "MYSQL_PWD",
    "REDISCLI_AUTH",
    "ETCDCTL_PASSWORD",
];

/// Masks every secret this process was given (arguments, password
/// variables) in all it prints and writes.
fn register_secrets(args: &[OsString]) {
    use yardstick_core::result::redact;
    for a in args {
        redact::register_in(&a.to_string_lossy());
    }
    for v in PASSWORD_VARIABLES {
        if let Ok(p) = std::env::var(v) {
            redact::register(&p);
        }
    }
}

/// `--password-file`: its first line becomes YARDSTICK_PASSWORD, for the
/// bindings and for the phases a suite runs as child processes.
fn read_password_file(path: &std::path::Path) -> Result<(), CliError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        CliError::bad_input(format!(
            "cannot read --password-file {}: {e}; give a readable file holding the password",
            path.display()
        ))
    })?;
    let password = text.lines().next().unwrap_or("").trim_end_matches('\r');
    if password.is_empty() {
        return Err(CliError::bad_input(format!(
            "--password-file {} is empty: put the password on its first line",
            path.display()
        )));
    }
    yardstick_core::result::redact::register(password);
    // before any thread starts: nothing reads the environment concurrently
    std::env::set_var(yardstick_bindings::url::PASSWORD_ENV, password);
    Ok(())
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
        /// Merge results whose configurations differ (phase, workload,
        /// database, semantics, properties), with a warning naming what
        /// differs. The same run twice is refused even so.
        #[arg(long)]
        force: bool,
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
    Ok(v)
}

/// A duration flag: `30s`, `5m`, `1.5h`, `250ms` ([`yardstick_core::units`]).
pub(crate) fn parse_duration_arg(s: &str) -> Result<Duration, String> {
    yardstick_core::units::parse_duration(s).map_err(|e| e.to_string())
}

/// Runs the command line `args` (program name first) and returns the exit code.
pub fn main_with_args(args: Vec<OsString>) -> i32 {
    register_secrets(&args);
    let parsed = list::command()
        .try_get_matches_from(&args)
        .and_then(|m| <Cli as clap::FromArgMatches>::from_arg_matches(&m));
    let cli = match parsed {
        Ok(c) => c,
        // --help and --version
        Err(e) if !e.use_stderr() => {
            let _ = e.print();
            return 0;
        }
        Err(e) => {
            let line = clap_error_line(&e, &args);
            eprintln!(
                "yardstick: error: {}",
                yardstick_core::result::redact::redact(&line)
            );
            return EXIT_BAD_INPUT;
        }
    };
    if let Some(f) = &cli.password_file {
        if let Err(e) = read_password_file(f) {
            eprintln!("yardstick: error: {}", e.message);
            return e.code;
        }
    }
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
        Command::Merge { files, out, force } => merge_files(files, out, *force),
        Command::Compare { a, b } => compare::execute(a, b),
        Command::Load(a) => control().and_then(|c| {
            phase::execute(a, yardstick_core::workload::Phase::Load, command_line, &c)
        }),
        Command::Run(a) => control().and_then(|c| {
            phase::execute(a, yardstick_core::workload::Phase::Run, command_line, &c)
        }),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            // whatever produced it, no secret leaves in an error
            let message = yardstick_core::result::redact::redact(&e.message);
            eprintln!("yardstick: error: {}", error_line(&message));
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

fn merge_files(files: &[PathBuf], out: &std::path::Path, force: bool) -> Result<i32, CliError> {
    for (i, f) in files.iter().enumerate() {
        let same = files[..i].iter().find(|g| {
            g == &f || matches!((g.canonicalize(), f.canonicalize()), (Ok(a), Ok(b)) if a == b)
        });
        if let Some(g) = same {
            return Err(CliError::bad_input(format!(
                "{} and {} are the same file: give each instance's result once",
                g.display(),
                f.display()
            )));
        }
    }
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
    let mut merged = yardstick_core::result::merge::merge(results, force)
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

/// An error message as one line of sane length: a server can answer with a
/// megabyte of text over many lines.
fn error_line(message: &str) -> String {
    const MAX: usize = 500;
    let one: String = message.split_whitespace().collect::<Vec<_>>().join(" ");
    if one.chars().count() <= MAX {
        return one;
    }
    let cut: String = one.chars().take(MAX).collect();
    format!("{cut}... ({} more characters)", one.chars().count() - MAX)
}

/// A command-line error of clap's in one line: its first paragraph and its
/// tips, and where the accepted arguments are listed.
fn clap_error_line(e: &clap::Error, args: &[OsString]) -> String {
    let text = e.to_string();
    let mut parts: Vec<String> = Vec::new();
    for (i, para) in text.split("\n\n").enumerate() {
        let para = para.trim();
        if i == 0 || para.starts_with("tip:") {
            let joined: Vec<&str> = para.lines().map(str::trim).collect();
            parts.push(joined.join(" "));
        }
    }
    let line = parts.join("; ");
    let line = line.strip_prefix("error: ").unwrap_or(&line).to_string();
    // the subcommand, for the help that lists its arguments
    let sub = args
        .get(1)
        .map(|a| a.to_string_lossy().into_owned())
        .filter(|a| !a.starts_with('-') && list::command().find_subcommand(a).is_some());
    match sub {
        Some(sub) => format!("{line}; see yardstick {sub} --help"),
        None => format!("{line}; see yardstick --help"),
    }
}

/// The process's control: SIGINT, SIGTERM and SIGHUP ask the run to stop
/// ([`signals`]).
pub(crate) fn control() -> Result<Control, CliError> {
    signals::control()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clap_errors_are_one_line_with_the_help_to_read() {
        let err = |args: &[&str]| {
            let args: Vec<OsString> = args.iter().map(OsString::from).collect();
            let e = list::command().try_get_matches_from(&args).unwrap_err();
            clap_error_line(&e, &args)
        };
        let e = err(&["yardstick", "run", "--threads", "lots"]);
        assert!(!e.contains('\n'), "{e}");
        assert!(e.starts_with("invalid value 'lots' for '--threads"), "{e}");
        assert!(e.ends_with("see yardstick run --help"), "{e}");
        let e = err(&["yardstick", "tpcc", "run", "--db", "sqlite://x"]);
        assert!(e.contains("--warehouses"), "{e}");
        let e = err(&["yardstick", "rnu"]);
        assert!(e.contains("unrecognized subcommand 'rnu'"), "{e}");
        assert!(e.ends_with("see yardstick --help"), "{e}");
    }

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
