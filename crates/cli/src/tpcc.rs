//! `yardstick tpcc load|run|check`: TPC-C with tpmC, per-transaction latency
//! and the consistency conditions. The work is in `yardstick_bindings::tpcc`.
use crate::{CliError, EXIT_BAD_INPUT, EXIT_FAILED, EXIT_INTERRUPTED};
use clap::{Args, Subcommand};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime};
use yardstick_bindings::tpcc::{self, check, load, run, DbError, Isolation, LoadMethod};
use yardstick_core::result::{self, ClientInfo, ErrorSample, HostInfo, Tool};
use yardstick_core::tpcc::result::{Database, TpccConfig, TpccResult, TPCC_SCHEMA_VERSION};
use yardstick_core::tpcc::Constants;

#[derive(Subcommand, Debug)]
pub enum TpccCommand {
    /// Create the nine tables and load W warehouses (and the 100,000 items);
    /// an interrupted load resumes where it stopped.
    Load(LoadArgs),
    /// Run the five transactions in the standard mix from T terminals; the
    /// consistency checks follow unless --no-check.
    Run(RunArgs),
    /// Check the consistency conditions 1-4 of the specification.
    Check {
        /// Target database URL, as loaded by `yardstick tpcc load`.
        #[arg(long, value_name = "URL")]
        db: String,
    },
}

#[derive(Args, Debug)]
pub struct LoadArgs {
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
pub struct RunArgs {
    /// Target database URL, as loaded by `yardstick tpcc load`.
    #[arg(long, value_name = "URL")]
    pub db: String,
    /// Warehouses the terminals use (at most the loaded count).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub warehouses: u32,
    /// Terminals (each a thread with its own connection and home warehouse).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub terminals: u32,
    /// Measured time, e.g. 60s, 10m.
    #[arg(long, value_parser = crate::parse_duration_arg, default_value = "60s")]
    pub duration: Duration,
    /// Run this long before measuring.
    #[arg(long, value_parser = crate::parse_duration_arg, default_value = "0s")]
    pub warmup: Duration,
    /// Keying and think times of the specification (clause 5.2.5.7); off by
    /// default: terminals submit back to back.
    #[arg(long)]
    pub spec_timing: bool,
    /// Isolation level of the transactions: read-committed (PostgreSQL's
    /// default here), repeatable-read (MySQL/MariaDB's) or serializable
    /// (SQLite's only level).
    #[arg(long, value_name = "LEVEL")]
    pub isolation: Option<String>,
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
    /// Seconds between time-series points.
    #[arg(long, value_parser = crate::parse_duration_arg, default_value = "1s")]
    pub status_interval: Duration,
    /// No status line.
    #[arg(long, short)]
    pub quiet: bool,
}

/// The URL's scheme, for the result's name and database section.
fn scheme(url: &str) -> String {
    url.split("://").next().unwrap_or("").to_ascii_lowercase()
}

fn parse_isolation(s: Option<&str>) -> Result<Option<Isolation>, CliError> {
    s.map(|s| {
        Isolation::parse(s).ok_or_else(|| {
            CliError::bad_input(format!(
                "--isolation {s} is not a level yardstick tpcc runs: use {}",
                Isolation::NAMES
            ))
        })
    })
    .transpose()
}

/// Opens one TPC-C connection through the registry, at `isolation` or the
/// binding's default; an error is the user's to fix, with the URL's secrets removed.
fn open(url: &str, create: bool, isolation: Option<Isolation>) -> Result<tpcc::Opened, CliError> {
    tpcc::open(url, create, isolation).map_err(|e| {
        let mut r = result::Redactor::default();
        r.add_url(url);
        CliError::bad_input(r.redact(&e.message))
    })
}

fn db_err<'a>(what: &str, url: &'a str) -> impl Fn(DbError) -> CliError + 'a {
    let what = what.to_string();
    move |e: DbError| {
        let mut r = result::Redactor::default();
        r.add_url(url);
        CliError::failed(format!("{what}: {}", r.redact(&e.message)))
    }
}

pub fn execute(cmd: &TpccCommand, command_line: Vec<String>) -> Result<i32, CliError> {
    match cmd {
        TpccCommand::Load(a) => load_cmd(a),
        TpccCommand::Run(a) => run_cmd(a, command_line),
        TpccCommand::Check { db } => {
            let mut o = open(db, false, None)?;
            let s = load::state(&mut o.conn).map_err(db_err("cannot read the load state", db))?;
            if !s.schema {
                return Err(CliError::bad_input(
                    "no TPC-C schema in this database: run `yardstick tpcc load` first",
                ));
            }
            let checks = check::run(&mut o.conn).map_err(db_err("the checks failed", db))?;
            print_checks(&checks);
            Ok(if checks.iter().all(|c| c.pass) {
                0
            } else {
                EXIT_FAILED
            })
        }
    }
}

fn load_cmd(a: &LoadArgs) -> Result<i32, CliError> {
    let isolation = None;
    let method = if a.method == "insert" {
        LoadMethod::Insert
    } else {
        LoadMethod::Fast
    };
    let mut o = open(&a.db, true, isolation)?;
    let control = crate::control();
    if a.drop {
        load::drop_all(&mut o.conn).map_err(db_err("cannot drop the tables", &a.db))?;
    }
    let k = load::prepare(&mut o.conn, a.seed, method)
        .map_err(db_err("cannot create the schema", &a.db))?;
    let state = load::state(&mut o.conn).map_err(db_err("cannot read the load state", &a.db))?;
    let todo: Vec<u32> = (1..=a.warehouses)
        .filter(|w| !state.warehouses.contains(w))
        .collect();
    load::clear(&mut o.conn, &todo)
        .map_err(db_err("cannot delete what an interrupted load left", &a.db))?;
    // ITEM is one more unit of work for the loaders (first, as it is small)
    let units: Vec<Option<u32>> = (!state.items)
        .then_some(None)
        .into_iter()
        .chain(todo.iter().map(|&w| Some(w)))
        .collect();
    if state.loaded() > 0 {
        eprintln!(
            "yardstick tpcc: warehouses {:?} are loaded already; loading {} more",
            state.warehouses,
            todo.len()
        );
    }
    let rows = AtomicU64::new(0);
    let started = Instant::now();
    let expected = todo.len() as u64 * yardstick_core::tpcc::rows_per_warehouse()
        + if state.items { 0 } else { 100_000 };
    let progress = |n: u64| {
        rows.fetch_add(n, Ordering::Relaxed);
    };
    let stop = control.stop.clone();
    let finished = std::sync::atomic::AtomicBool::new(false);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let failure: std::sync::Mutex<Option<CliError>> = std::sync::Mutex::new(None);
    std::thread::scope(|scope| {
        if !a.quiet {
            scope.spawn(|| {
                while !finished.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(200));
                    let n = rows.load(Ordering::Relaxed);
                    let secs = started.elapsed().as_secs_f64().max(1e-9);
                    eprint!(
                        "\r\x1b[2Kloading: {n} of ~{expected} rows ({:.0}%) · {:.0} rows/s",
                        100.0 * n as f64 / expected.max(1) as f64,
                        n as f64 / secs
                    );
                }
                eprintln!();
            });
        }
        let loaders: Vec<_> = (0..a.loaders.min(units.len().max(1) as u32))
            .map(|_| {
                scope.spawn(|| {
                    let mut conn = match open(&a.db, true, isolation) {
                        Ok(o) => o.conn,
                        Err(e) => {
                            failure
                                .lock()
                                .unwrap_or_else(|p| p.into_inner())
                                .get_or_insert(e);
                            return;
                        }
                    };
                    loop {
                        if stop.load(Ordering::SeqCst)
                            || failure.lock().map(|f| f.is_some()).unwrap_or(true)
                        {
                            return;
                        }
                        let i = next.fetch_add(1, Ordering::SeqCst);
                        let Some(&unit) = units.get(i) else { return };
                        let loaded = match unit {
                            None => load::items(&mut conn, a.seed, k, method, &progress),
                            Some(w) => load::warehouse(&mut conn, w, a.seed, k, method, &progress),
                        };
                        if let Err(e) = loaded {
                            let what = match unit {
                                None => "ITEM".to_string(),
                                Some(w) => format!("warehouse {w}"),
                            };
                            failure
                                .lock()
                                .unwrap_or_else(|p| p.into_inner())
                                .get_or_insert(db_err(&format!("loading {what} failed"), &a.db)(e));
                            return;
                        }
                    }
                })
            })
            .collect();
        for l in loaders {
            let _ = l.join();
        }
        // the progress line ends after the loaders
        finished.store(true, Ordering::Relaxed);
    });
    if let Some(e) = failure.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e);
    }
    if stop.load(Ordering::SeqCst) {
        eprintln!("yardstick tpcc: interrupted; run the same command again to finish the load");
        return Ok(EXIT_INTERRUPTED);
    }
    // the secondary indexes a fast load left for the end (a no-op where they exist)
    let connect = || {
        open(&a.db, true, isolation)
            .map(|o| o.conn)
            .map_err(|e| DbError::other(e.message))
    };
    load::create_indexes(&mut o.conn, &connect)
        .map_err(db_err("cannot create the secondary indexes", &a.db))?;
    let secs = started.elapsed().as_secs_f64();
    let n = rows.load(Ordering::Relaxed);
    println!(
        "loaded {n} rows in {secs:.1} s ({:.0} rows/s): {} warehouses with {} loaders into {} ({})",
        n as f64 / secs.max(1e-9),
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

fn run_cmd(a: &RunArgs, command_line: Vec<String>) -> Result<i32, CliError> {
    let isolation = parse_isolation(a.isolation.as_deref())?;
    let mut o = open(&a.db, false, isolation)?;
    let state = load::state(&mut o.conn).map_err(db_err("cannot read the load state", &a.db))?;
    if !state.schema {
        return Err(CliError::bad_input(
            "no TPC-C schema in this database: run `yardstick tpcc load --warehouses W` with the same --db first",
        ));
    }
    let loaded = state.loaded();
    if !state.complete_up_to(a.warehouses) {
        return Err(CliError {
            code: EXIT_BAD_INPUT,
            message: if loaded == 0 || !state.items {
                format!("the TPC-C load is incomplete (items loaded: {}, warehouses: {loaded}): rerun `yardstick tpcc load --warehouses {}` to finish it", state.items, a.warehouses)
            } else if state.indexes_deferred
                && (1..=a.warehouses).all(|w| state.warehouses.contains(&w))
            {
                format!("the TPC-C load stopped before building its secondary indexes: rerun `yardstick tpcc load --warehouses {}` to finish it", a.warehouses)
            } else {
                format!("--warehouses {} but {loaded} are loaded: use --warehouses {loaded} or load more with `yardstick tpcc load --warehouses {}`", a.warehouses, a.warehouses)
            },
        });
    }
    let load_k = state.constants.ok_or_else(|| {
        CliError::bad_input("the load's NURand constants are missing from tpcc_meta: reload with `yardstick tpcc load --drop`")
    })?;
    let out_path = match &a.out {
        Some(p) => p.clone(),
        None => result::default_result_path(
            &a.results_dir,
            SystemTime::now(),
            "run",
            "tpcc",
            &scheme(&a.db),
        ),
    };
    result::check_writable(&out_path).map_err(|e| {
        CliError::bad_input(format!(
            "cannot write the result file {}: {e}; choose another --out or --results-dir",
            out_path.display()
        ))
    })?;
    let run_k = Constants::for_run(
        &load_k,
        &mut yardstick_core::rng::Rng::new(yardstick_core::rng::derive_seed(a.seed, &[0x5c])),
    );
    let plan = run::Plan {
        warehouses: a.warehouses,
        terminals: a.terminals,
        duration: a.duration,
        warmup: a.warmup,
        spec_timing: a.spec_timing,
        retry_limit: a.retries,
        seed: a.seed,
        constants: run_k,
        interval: a.status_interval.max(Duration::from_millis(100)),
    };
    let control = crate::control();
    let started_at = SystemTime::now();
    if !a.quiet {
        eprintln!(
            "yardstick tpcc: {} terminals on {} warehouses for {:.0} s{} ({})",
            a.terminals,
            a.warehouses,
            a.duration.as_secs_f64(),
            if a.warmup.is_zero() {
                String::new()
            } else {
                format!(" after a {:.0} s warm-up", a.warmup.as_secs_f64())
            },
            if a.spec_timing {
                "keying and think times of the specification"
            } else {
                "no keying or think time"
            }
        );
    }
    let db = a.db.clone();
    let m = run::run(
        &plan,
        || {
            open(&db, false, isolation)
                .map(|o| o.conn)
                .map_err(|e| DbError::other(e.message))
        },
        &control.stop,
    );
    let ended_at = SystemTime::now();
    let mut warnings = Vec::new();
    if let Some(f) = &m.failed {
        warnings.push(f.clone());
    }
    let errors: u64 = m.transactions.values().map(|t| t.errors).sum();
    if errors > 0 {
        warnings.push(format!("{errors} transactions failed (after retries)"));
    }
    let cores = yardstick_core::run::cpu::available_cores();
    let total: u64 = m.transactions.values().map(|t| t.count).sum();
    let cpu_s = m.cpu.as_secs_f64();
    let elapsed = m.elapsed.as_secs_f64();
    let used = if elapsed > 0.0 { cpu_s / elapsed } else { 0.0 };
    if used > 0.9 * cores as f64 {
        warnings.push(format!(
            "client CPU saturated: the benchmark process used {used:.2} of {cores} cores (SQLite runs inside it); the client may be the bottleneck"
        ));
    }
    let checks = if a.no_check || m.failed.is_some() {
        Vec::new()
    } else {
        check::run(&mut o.conn).map_err(db_err("the consistency checks failed to run", &a.db))?
    };
    for c in checks.iter().filter(|c| !c.pass) {
        warnings.push(format!(
            "consistency condition {} fails: {}",
            c.condition, c.detail
        ));
    }
    let r = TpccResult {
        schema_version: TPCC_SCHEMA_VERSION,
        kind: "tpcc".into(),
        tool: Tool {
            name: "yardstick".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        },
        command_line: command_line
            .iter()
            .map(|s| {
                let mut red = result::Redactor::default();
                red.add_url(&a.db);
                red.redact(s)
            })
            .collect(),
        seed: a.seed,
        database: Database {
            scheme: scheme(&a.db),
            url: result::redact_url(&a.db),
            engine: o.engine.clone(),
            isolation: o.isolation.clone(),
            statements: o.statements.into(),
        },
        config: TpccConfig {
            warehouses: a.warehouses,
            warehouses_loaded: loaded,
            terminals: a.terminals,
            duration_s: a.duration.as_secs_f64(),
            warmup_s: a.warmup.as_secs_f64(),
            spec_timing: a.spec_timing,
            retry_limit: a.retries,
            load_constants: load_k,
            run_constants: run_k,
        },
        host: HostInfo::capture(),
        started_at: result::time::rfc3339(started_at),
        ended_at: result::time::rfc3339(ended_at),
        elapsed_s: elapsed,
        complete: !m.interrupted && m.failed.is_none(),
        interrupted: m.interrupted,
        tpmc: m.tpmc,
        tpm_total: m.tpm_total,
        transactions: m.transactions,
        time_series: m.series,
        checks,
        client: ClientInfo {
            cpu_seconds: cpu_s,
            cpu_cores_used: used,
            cores_available: cores,
            cpu_ns_per_op: if total > 0 {
                cpu_s * 1e9 / total as f64
            } else {
                0.0
            },
        },
        warnings,
        error_samples: m
            .error_samples
            .into_iter()
            .map(|(op, message, count)| ErrorSample {
                op,
                status: "error".into(),
                message,
                count,
            })
            .collect(),
    };
    let text = serde_json::to_vec_pretty(&r)
        .map_err(|e| CliError::failed(format!("cannot encode the result: {e}")))?;
    result::write_atomic(&out_path, &text).map_err(|e| {
        CliError::failed(format!(
            "cannot write the result file {}: {e}",
            out_path.display()
        ))
    })?;
    print!("{}", summary(&r));
    println!("result: {}", out_path.display());
    if let Some(f) = &m.failed {
        return Err(CliError::bad_input(f.clone()));
    }
    Ok(if r.interrupted {
        EXIT_INTERRUPTED
    } else if r.checks.iter().any(|c| !c.pass) || errors > 0 && total == 0 {
        EXIT_FAILED
    } else {
        0
    })
}

fn print_checks(checks: &[yardstick_core::tpcc::result::Check]) {
    print!("{}", checks_text(checks));
}

fn checks_text(checks: &[yardstick_core::tpcc::result::Check]) -> String {
    let mut s = String::new();
    for c in checks {
        s.push_str(&format!(
            "  condition {} {}: {} ({})\n",
            c.condition,
            if c.pass { "PASS" } else { "FAIL" },
            c.name,
            c.detail
        ));
    }
    s
}

/// The text summary of a TPC-C result.
pub fn summary(r: &TpccResult) -> String {
    use yardstick_report::fmt::latency;
    let mut s = format!(
        "yardstick tpcc · {} {} · {} warehouses · {} terminals · {:.1} s · {} · isolation: {}\n\n  tpmC {:.0} · tpmTotal {:.0} · client CPU {:.2} cores ({:.0} µs per transaction)\n\n",
        r.database.engine.name,
        r.database.engine.version,
        r.config.warehouses,
        r.config.terminals,
        r.elapsed_s,
        if r.config.spec_timing {
            "keying and think times"
        } else {
            "no think time"
        },
        r.database.isolation,
        r.tpmc,
        r.tpm_total,
        r.client.cpu_cores_used,
        r.client.cpu_ns_per_op / 1e3
    );
    s.push_str(&format!(
        "  {:<13} {:>9} {:>6} {:>9} {:>8} {:>7} {:>6} {:>9} {:>9} {:>9} {:>9} {:>9}\n",
        "transaction",
        "count",
        "share",
        "committed",
        "rollback",
        "retries",
        "errors",
        "mean",
        "p50",
        "p90",
        "p99",
        "max"
    ));
    for t in yardstick_core::tpcc::Txn::ALL {
        if let Some(x) = r.transactions.get(t.name()) {
            let l = &x.response_time_ns;
            s.push_str(&format!(
                "  {:<13} {:>9} {:>5.1}% {:>9} {:>8} {:>7} {:>6} {:>9} {:>9} {:>9} {:>9} {:>9}\n",
                t.name(),
                x.count,
                x.share * 100.0,
                x.committed,
                x.rolled_back,
                x.retries,
                x.errors,
                latency(l.mean),
                latency(l.p50 as f64),
                latency(l.p90 as f64),
                latency(l.p99 as f64),
                latency(l.max as f64)
            ));
        }
    }
    if !r.checks.is_empty() {
        s.push_str("\n  consistency:\n");
        s.push_str(&checks_text(&r.checks).replace("  condition", "    condition"));
    }
    for w in &r.warnings {
        s.push_str(&format!("\nwarning: {w}"));
    }
    if !r.warnings.is_empty() {
        s.push('\n');
    }
    s
}
