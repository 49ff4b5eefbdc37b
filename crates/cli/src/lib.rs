//! The `yardstick` command line: argument parsing and dispatch. The work is
//! done by the core, bindings and report crates.
//!
//! Exit codes: 0 success; 1 the run could not finish or its result could not
//! be written; 2 bad input or a target that cannot be used (nothing ran);
//! 130 interrupted by Ctrl-C (the partial result was written).
mod args;
mod compact;
mod compare;
mod errline;
mod list;
mod live;
mod matrix;
mod memlimit;
mod observe;
mod phase;
mod replay;
mod report;
mod results;
mod secrets;
mod server_memory;
mod signals;
mod status;
mod suite;
mod tpcc;
mod trace;
mod verify;
mod workloads;

pub(crate) use args::{parse_duration_arg, parse_size_arg, Format, OnError, PhaseArgs};
use clap::{Parser, Subcommand, ValueEnum};
use std::ffi::OsString;
use std::path::PathBuf;
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
        /// The baseline: a result file, or a selector such as tag:build=a
        /// (tag:KEY=VALUE, db:SCHEME, workload:NAME, joined by commas) that
        /// picks results under --results-dir.
        a: PathBuf,
        /// The result compared with it, or a selector; selectors that pick
        /// several results pair them by command, database and workload.
        b: PathBuf,
        /// Where selectors look for results.
        #[arg(long, value_name = "DIR", default_value = "results")]
        results_dir: PathBuf,
    },
    /// List the results under a directory as a table (date, command,
    /// database, workload, tags, throughput, p99, complete), filtered by
    /// tag, database and workload.
    Results(results::ResultsArgs),
    /// TPC-C: load W warehouses, run the five transactions from T terminals
    /// (tpmC, per-transaction latency), check the consistency conditions.
    #[command(subcommand)]
    Tpcc(tpcc::TpccCommand),
    /// Write a report of results, suites (their directory or index.json) and
    /// matrices: one self-contained HTML file with inline SVG charts, or its
    /// tables as Markdown or CSV.
    Report {
        /// Result files, index.json files, directories holding them, or
        /// selectors such as tag:build=a that pick results under --results-dir.
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
        /// Where selectors look for results.
        #[arg(long, value_name = "DIR", default_value = "results")]
        results_dir: PathBuf,
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
    /// Read back every record the given load and run phases inserted and
    /// report lost acknowledged inserts, values other than the ones written
    /// (dataintegrity=true) and refused inserts that are present; exit 1 when
    /// any is found. See docs/verify.md.
    Verify(verify::VerifyArgs),
    /// Play a trace (written by --trace) or a Redis MONITOR capture against a
    /// database, open loop: every operation at its recorded time (scaled by
    /// --speed), response time measured from it. See docs/trace.md.
    Replay(replay::ReplayArgs),
    /// Compact an embedded engine's data fully (RocksDB, LevelDB,
    /// WiredTiger): what "after a manual compaction" measures after. Prints
    /// the time, the bytes on disk and the files per level before and after.
    Compact(compact::CompactArgs),
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

/// Runs the command line `args` (program name first) and returns the exit code.
pub fn main_with_args(args: Vec<OsString>) -> i32 {
    secrets::register_secrets(&args);
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
            let line = errline::clap_error_line(&e, &args);
            eprintln!(
                "yardstick: error: {}",
                yardstick_core::result::redact::redact(&line)
            );
            return EXIT_BAD_INPUT;
        }
    };
    if let Some(f) = &cli.password_file {
        if let Err(e) = secrets::read_password_file(f) {
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
            results_dir,
        } => {
            let mut catalogue = results::Catalogue::new(results_dir);
            inputs
                .iter()
                .map(|i| catalogue.resolve(i))
                .collect::<Result<Vec<_>, _>>()
                .and_then(|paths| report::execute(&paths.concat(), out, *format, title.as_deref()))
        }
        Command::Merge { files, out, force } => merge_files(files, out, *force),
        Command::Compare { a, b, results_dir } => {
            results::pairs(a, b, results_dir).and_then(|pairs| compare::execute_pairs(&pairs))
        }
        Command::Results(a) => results::execute(a),
        Command::Compact(a) => compact::execute(a),
        Command::Verify(a) => control().and_then(|c| verify::execute(a, &c)),
        Command::Replay(a) => control().and_then(|c| replay::execute(a, command_line, &c)),
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
            eprintln!("yardstick: error: {}", errline::error_line(&message));
            e.code
        }
    }
}

/// The reading or replaying slots (`verify`, `replay`): threads x concurrency.
pub(crate) fn check_slots(threads: usize, concurrency: usize) -> Result<(), CliError> {
    if threads == 0 || concurrency == 0 || concurrency > 1024 {
        return Err(CliError::bad_input(
            "--threads must be at least 1 and --concurrency between 1 and 1024",
        ));
    }
    Ok(())
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

/// The TPC-C result in `path`, or None when the file is another kind.
pub(crate) fn read_tpcc(
    path: &std::path::Path,
) -> Result<Option<yardstick_core::tpcc::result::TpccResult>, CliError> {
    let v = yardstick_core::result::read::json(path, "result").map_err(CliError::bad_input)?;
    tpcc_of(path, v)
}

/// `v` read as a TPC-C result when its `kind` says it is one.
pub(crate) fn tpcc_of(
    path: &std::path::Path,
    v: serde_json::Value,
) -> Result<Option<yardstick_core::tpcc::result::TpccResult>, CliError> {
    use yardstick_core::tpcc::result::{TpccResult, TPCC_SCHEMA_VERSION};
    if v["kind"].as_str() != Some("tpcc") {
        return Ok(None);
    }
    let name = path.display();
    let result: TpccResult = serde_json::from_value(v).map_err(|e| {
        CliError::bad_input(format!(
            "{name}: not a TPC-C result this version reads ({e}); was it written by another yardstick version?"
        ))
    })?;
    if result.schema_version != TPCC_SCHEMA_VERSION {
        return Err(CliError::bad_input(format!(
            "{name}: TPC-C result schema version {} but this yardstick reads version {TPCC_SCHEMA_VERSION}; use the yardstick that wrote it",
            result.schema_version
        )));
    }
    Ok(Some(result))
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
    Ok(yardstick_orchestrate::Env {
        exe,
        control,
        say,
        check: &check_phase,
    })
}

/// The check of a suite's or matrix's phase: `args` parsed as the command
/// line of `yardstick load|run` and checked as that phase would.
fn check_phase(args: &[String]) -> Result<(), String> {
    let line = std::iter::once("yardstick".to_string()).chain(args.iter().cloned());
    let cli = list::command()
        .try_get_matches_from(line)
        .and_then(|m| <Cli as clap::FromArgMatches>::from_arg_matches(&m))
        .map_err(|e| {
            let args: Vec<OsString> = args.iter().map(OsString::from).collect();
            errline::clap_error_line(&e, &args)
        })?;
    let checked = match &cli.command {
        Command::Load(a) => phase::check(a, yardstick_core::workload::Phase::Load),
        Command::Run(a) => phase::check(a, yardstick_core::workload::Phase::Run),
        _ => return Err("a planned phase is neither load nor run".into()),
    };
    checked.map_err(|e| e.message)
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
    fn a_cli_error_displays_its_message_and_is_an_error() {
        let e: Box<dyn std::error::Error> =
            Box::new(CliError::bad_input("--threads 0: give 1 or more"));
        assert_eq!(e.to_string(), "--threads 0: give 1 or more");
        assert_eq!(CliError::failed("x").code, EXIT_FAILED);
    }
}
