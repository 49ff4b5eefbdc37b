//! `yardstick tpcc load|run|check`: TPC-C with tpmC, per-transaction latency
//! and the consistency conditions. The work is in `yardstick_bindings::tpcc`
//! (the loader, the terminals as the core runner's work, the checks); this
//! module parses arguments, prints and writes results.
mod run;
mod summary;

use crate::{CliError, EXIT_FAILED};
use clap::{Args, Subcommand};
use std::path::PathBuf;
use std::time::Duration;
pub(crate) use summary::summary;
use yardstick_bindings::tpcc::loader::{self, LoadError, LoadOutcome, LoadPlan};
use yardstick_bindings::tpcc::{self, check, load, DbError, Isolation, LoadMethod};
use yardstick_core::result;

#[derive(Subcommand, Debug)]
pub(crate) enum TpccCommand {
    /// Create the nine tables and load W warehouses (and the 100,000 items);
    /// an interrupted load resumes where it stopped.
    Load(LoadArgs),
    /// Run the five transactions in the standard mix from T terminals; the
    /// consistency checks follow unless --no-check.
    Run(Box<RunArgs>),
    /// Check the consistency conditions of clause 3.3.2 that hold after runs (1-10, 12).
    Check {
        /// Target database URL, as loaded by `yardstick tpcc load`.
        #[arg(long, value_name = "URL")]
        db: String,
    },
}

#[derive(Args, Debug)]
pub(crate) struct LoadArgs {
    /// Target database URL, for example sqlite:///path.db or postgres://user:password@host/db.
    #[arg(long, value_name = "URL")]
    pub db: String,
    /// Warehouses (the scale factor; about 100 MB each).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub warehouses: u32,
    /// Loader threads, each loading whole warehouses (SQLite takes one writer
    /// at a time, so more do not help there).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub loaders: u32,
    /// Seed of the generated data.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Drop the TPC-C tables first and load from scratch.
    #[arg(long)]
    pub drop: bool,
    /// fast: each database's bulk path (COPY on PostgreSQL, LOAD DATA LOCAL
    /// INFILE on MySQL/MariaDB, or multi-row INSERT where the server refuses
    /// it, one transaction per batch on SQLite), secondary indexes built at
    /// the end; insert: one prepared single-row INSERT per row (the baseline
    /// to compare with).
    #[arg(long, default_value = "fast", value_parser = ["fast", "insert"])]
    pub method: String,
    /// No progress line.
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Args, Debug)]
pub(crate) struct RunArgs {
    /// Target database URL, as loaded by `yardstick tpcc load`.
    #[arg(long, value_name = "URL")]
    pub db: String,
    /// Warehouses the terminals use (at most the loaded count).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub warehouses: u32,
    /// Terminals (each with its own connection and home warehouse).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub terminals: u32,
    /// Worker threads the terminals share (default: one per terminal);
    /// --terminals must be a multiple. With --spec-timing terminals mostly
    /// think, so a few threads serve many.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub threads: Option<u32>,
    /// Measured time, e.g. 60s, 10m.
    #[arg(long, value_parser = crate::parse_duration_arg, default_value = "60s")]
    pub duration: Duration,
    /// Run this long before measuring.
    #[arg(long, value_parser = crate::parse_duration_arg, default_value = "0s")]
    pub warmup: Duration,
    /// Transactions per second over all terminals (open loop: latency is
    /// measured from each transaction's place on the schedule); default:
    /// closed loop, each terminal submits when its last transaction ends.
    #[arg(long, value_name = "RATE")]
    pub target: Option<f64>,
    /// Keying and think times of the specification (clause 5.2.5.7); off by
    /// default: terminals submit back to back.
    #[arg(long, conflicts_with = "target")]
    pub spec_timing: bool,
    /// Isolation level of the transactions: read-committed (PostgreSQL's
    /// default here), repeatable-read (MySQL/MariaDB's) or serializable
    /// (SQLite's only level).
    #[arg(long, value_name = "LEVEL")]
    pub isolation: Option<String>,
    /// How a transaction's statements are sent: pipelined (the default:
    /// statements whose answers are not needed go with the next ones) or
    /// one-by-one (each waits for its answer, BEGIN and COMMIT included, as
    /// go-tpc, BenchmarkSQL and HammerDB send; see docs/tpcc.md).
    #[arg(long, value_name = "MODE", default_value = "pipelined")]
    pub sending: String,
    /// Retries of a transaction that hit a serialization failure, deadlock or busy database.
    #[arg(long, default_value_t = 10)]
    pub retries: u32,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Skip the consistency checks after the run.
    #[arg(long)]
    pub no_check: bool,
    /// Result file (default: a new file under --results-dir).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    #[arg(long, value_name = "DIR", default_value = "results")]
    pub results_dir: PathBuf,
    /// Time between time-series points and status lines, e.g. 1s, 500ms.
    #[arg(long, value_parser = crate::parse_duration_arg, default_value = "1s")]
    pub status_interval: Duration,
    /// Run the terminals in a memory cgroup capped at SIZE (e.g. 512M, 2G),
    /// as `yardstick run --memory-limit` does.
    #[arg(long, value_name = "SIZE", value_parser = crate::parse_size_arg)]
    pub memory_limit: Option<u64>,
    /// No status line.
    #[arg(long, short)]
    pub quiet: bool,
    #[command(flatten)]
    pub live: crate::live::LiveArgs,
}

/// The URL's scheme, for the result's name and database section.
fn scheme(url: &str) -> String {
    url.split("://").next().unwrap_or("").to_ascii_lowercase()
}

/// `text` without the secrets of `url`.
fn redact(url: &str, text: &str) -> String {
    let mut r = result::Redactor::default();
    r.add_url(url);
    r.redact(text)
}

/// A database error as the user sees it, the URL's secrets removed: with
/// what failed (exit 1), or alone when opening failed (the user's to fix, exit 2).
fn db_err<'a>(what: &'a str, url: &'a str) -> impl Fn(DbError) -> CliError + 'a {
    move |e: DbError| {
        let text = redact(url, &e.message);
        if what.is_empty() {
            CliError::bad_input(text)
        } else {
            CliError::failed(format!("{what}: {text}"))
        }
    }
}

/// Runs `f` on a runtime of this thread (connections opened in it live there).
fn block_on<T>(f: impl std::future::Future<Output = Result<T, CliError>>) -> Result<T, CliError> {
    tpcc::runtime().map_err(CliError::failed)?.block_on(f)
}

/// Opens one TPC-C connection; an error is the user's to fix (exit 2).
async fn open(url: &str, isolation: Option<Isolation>) -> Result<tpcc::Opened, CliError> {
    tpcc::open(url, false, isolation)
        .await
        .map_err(db_err("", url))
}

pub(crate) fn execute(cmd: &TpccCommand, command_line: Vec<String>) -> Result<i32, CliError> {
    match cmd {
        TpccCommand::Load(a) => load_cmd(a),
        TpccCommand::Run(a) => run::run_cmd(a, command_line),
        TpccCommand::Check { db } => {
            let checks = block_on(async {
                let mut o = open(db, None).await?;
                let s = load::state(&mut o.conn)
                    .await
                    .map_err(db_err("cannot read the load state", db))?;
                if !s.schema {
                    return Err(CliError::bad_input(
                        "no TPC-C schema in this database: run `yardstick tpcc load` first",
                    ));
                }
                check::run(&mut o.conn)
                    .await
                    .map_err(db_err("the checks failed", db))
            })?;
            print!("{}", summary::checks_text(&checks));
            Ok(if checks.iter().all(|c| c.pass) {
                0
            } else {
                EXIT_FAILED
            })
        }
    }
}

/// The load's progress line on stderr.
struct LoadLine {
    quiet: bool,
}

impl loader::Progress for LoadLine {
    fn start(&self, kept: &[u32], loading: usize) {
        if !kept.is_empty() {
            eprintln!(
                "yardstick tpcc: warehouses {kept:?} are loaded already; loading {loading} more"
            );
        }
    }

    fn rows(&self, n: u64, expected: u64, elapsed: Duration) {
        if !self.quiet {
            eprint!(
                "\r\x1b[2Kloading: {n} of ~{expected} rows ({:.0}%) · {:.0} rows/s",
                100.0 * n as f64 / expected.max(1) as f64,
                n as f64 / elapsed.as_secs_f64().max(1e-9)
            );
        }
    }
}

fn load_cmd(a: &LoadArgs) -> Result<i32, CliError> {
    let method = if a.method == "insert" {
        LoadMethod::Insert
    } else {
        LoadMethod::Fast
    };
    // an unreachable server or a bad URL is refused before anything starts
    tpcc::support(&a.db).map_err(db_err("", &a.db))?;
    let plan = LoadPlan {
        url: a.db.clone(),
        warehouses: a.warehouses,
        loaders: a.loaders,
        seed: a.seed,
        method,
        drop: a.drop,
    };
    let control = crate::control()?;
    let line = LoadLine { quiet: a.quiet };
    let outcome = loader::run(&plan, &control.stop, &line);
    if !a.quiet {
        eprintln!();
    }
    let outcome = outcome.map_err(|e| match e {
        LoadError::Open(e) => db_err("", &a.db)(e),
        LoadError::Failed(e) => CliError::failed(redact(&a.db, &e.message)),
    })?;
    match outcome {
        LoadOutcome::Interrupted => {
            eprintln!("yardstick tpcc: interrupted; run the same command again to finish the load");
            Ok(control.exit_code())
        }
        LoadOutcome::Done { rows, elapsed, .. } => {
            let secs = elapsed.as_secs_f64();
            println!(
                "loaded {rows} rows in {secs:.1} s ({:.0} rows/s): {} warehouses with {} loaders into {} ({})",
                rows as f64 / secs.max(1e-9),
                a.warehouses,
                a.loaders,
                result::redact_url(&a.db),
                match method {
                    LoadMethod::Fast => "fast path",
                    LoadMethod::Insert => "row-by-row INSERT",
                }
            );
            Ok(0)
        }
    }
}
