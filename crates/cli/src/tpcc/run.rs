//! `yardstick tpcc run`: checks the load, runs the terminals on the core
//! runner (status line, signals, pacing, warm-up) or, with --memory-limit,
//! runs itself capped and writes the result if the cap kills it; then the
//! consistency checks, the result file and the summary.
use super::{block_on, db_err, open, redact, scheme, summary, RunArgs};
use crate::memlimit;
use crate::status::StatusLine;
use crate::{CliError, EXIT_BAD_INPUT, EXIT_FAILED};
use std::path::Path;
use std::time::{Duration, SystemTime};
use yardstick_bindings::tpcc::run::{measured, Terminals};
use yardstick_bindings::tpcc::trips::Sending;
use yardstick_bindings::tpcc::{check, load, Isolation};
use yardstick_core::result::{self, ClientInfo, HostInfo, Tool};
use yardstick_core::run::{self, RunSpec};
use yardstick_core::tpcc::result::{Database, TpccConfig, TpccResult, TPCC_SCHEMA_VERSION};
use yardstick_core::tpcc::Constants;
use yardstick_core::workload::Phase;

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

/// Threads and terminals per thread: one thread per terminal unless --threads.
fn layout(a: &RunArgs) -> Result<(usize, usize), CliError> {
    let threads = a.threads.unwrap_or(a.terminals);
    if !a.terminals.is_multiple_of(threads) {
        return Err(CliError::bad_input(format!(
            "--terminals {} is not a multiple of --threads {threads}: every thread serves the same number of terminals; choose --threads among the divisors of {}",
            a.terminals, a.terminals
        )));
    }
    Ok((threads as usize, (a.terminals / threads) as usize))
}

/// The run's parts of the result that do not depend on what was measured.
struct Frame {
    command_line: Vec<String>,
    seed: u64,
    database: Database,
    config: TpccConfig,
}

impl Frame {
    /// A result of this run with no figures yet, incomplete until said otherwise.
    fn result(self, started: SystemTime, ended: SystemTime, elapsed_s: f64) -> TpccResult {
        TpccResult {
            schema_version: TPCC_SCHEMA_VERSION,
            kind: "tpcc".into(),
            tool: Tool {
                name: "yardstick".into(),
                version: env!("CARGO_PKG_VERSION").into(),
            },
            command_line: self.command_line,
            seed: self.seed,
            database: self.database,
            config: self.config,
            host: HostInfo::capture(),
            started_at: result::time::rfc3339(started),
            ended_at: result::time::rfc3339(ended),
            elapsed_s,
            complete: false,
            interrupted: false,
            incomplete_reason: None,
            tpmc: 0.0,
            tpm_total: 0.0,
            transactions: Default::default(),
            time_series: Vec::new(),
            checks: Vec::new(),
            round_trips: None,
            client: ClientInfo {
                cpu_seconds: 0.0,
                cpu_cores_used: 0.0,
                cores_available: yardstick_core::run::cpu::available_cores(),
                cpu_ns_per_op: 0.0,
                peak_rss_bytes: None,
                floor: None,
                histogram: None,
                limited: None,
            },
            warnings: Vec::new(),
            error_samples: Vec::new(),
            memory_limit: None,
            tags: Default::default(),
            observation: None,
        }
    }
}

pub(super) fn run_cmd(a: &RunArgs, command_line: Vec<String>) -> Result<i32, CliError> {
    a.live.tag_map()?;
    let isolation = parse_isolation(a.isolation.as_deref())?;
    let (threads, per_thread) = layout(a)?;
    let sending = Sending::parse(&a.sending).ok_or_else(|| {
        CliError::bad_input(format!("--sending {}: give {}", a.sending, Sending::NAMES))
    })?;
    if let Some(t) = a.target.filter(|t| !(t.is_finite() && *t > 0.0)) {
        return Err(CliError::bad_input(format!(
            "--target {t}: give a positive rate of transactions per second"
        )));
    }
    let (state, engine, iso, statements, timeout) = block_on(async {
        let mut o = open(&a.db, isolation).await?;
        let state = load::state(&mut o.conn)
            .await
            .map_err(db_err("cannot read the load state", &a.db))?;
        Ok((state, o.engine, o.isolation, o.statements, o.timeout))
    })?;
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
    let frame = Frame {
        command_line: command_line.iter().map(|s| redact(&a.db, s)).collect(),
        seed: a.seed,
        database: Database {
            scheme: scheme(&a.db),
            url: result::redact_url(&a.db),
            engine,
            isolation: iso,
            statements: statements.into(),
        },
        config: TpccConfig {
            warehouses: a.warehouses,
            warehouses_loaded: loaded,
            terminals: a.terminals,
            threads: threads as u32,
            target_per_sec: a.target,
            duration_s: a.duration.as_secs_f64(),
            warmup_s: a.warmup.as_secs_f64(),
            spec_timing: a.spec_timing,
            retry_limit: a.retries,
            load_constants: load_k,
            run_constants: run_k,
        },
    };
    if let Some(limit) = a.memory_limit {
        if std::env::var_os(memlimit::CHILD_ENV).is_none() {
            return run_capped(
                &crate::control()?,
                a,
                limit,
                &command_line,
                &out_path,
                frame,
            );
        }
    }
    let terminals = Terminals {
        url: a.db.clone(),
        isolation,
        warehouses: a.warehouses,
        spec_timing: a.spec_timing,
        retry_limit: a.retries,
        seed: a.seed,
        constants: run_k,
        timeout,
        sending,
        trips: Default::default(),
    };
    let spec = RunSpec {
        phase: Phase::Run,
        threads,
        concurrency: per_thread,
        operation_count: None,
        duration: Some(a.duration),
        warmup: a.warmup,
        target: a.target,
        seed: a.seed,
        instance: (0, 1),
        status_interval: a.status_interval.max(Duration::from_millis(100)),
        expected_ops: None,
        max_errors: None,
        op_timeout: timeout,
        until: Vec::new(),
        trace: None,
        timetable: None,
        rate_schedule: None,
        faults: Vec::new(),
        pacing: Default::default(),
    };
    if !a.quiet {
        eprintln!(
            "yardstick tpcc: {} terminals on {} warehouses ({threads} threads) for {:.0} s{} ({})",
            a.terminals,
            a.warehouses,
            a.duration.as_secs_f64(),
            if a.warmup.is_zero() {
                String::new()
            } else {
                format!(" after a {:.0} s warm-up", a.warmup.as_secs_f64())
            },
            match (a.spec_timing, a.target) {
                (true, _) => "keying and think times of the specification".to_string(),
                (false, Some(t)) => format!("open loop at {t} transactions/s"),
                (false, None) => "no keying or think time".to_string(),
            }
        );
    }
    let control = crate::control()?;
    let workload = format!("tpcc {}w", a.warehouses);
    let metrics = a.live.metrics(&out_path, "tpcc", &workload, &a.db)?;
    let mut status = StatusLine::new(a.quiet, "tpcc").with_metrics(metrics);
    let scheme = a.db.split("://").next().unwrap_or("").to_ascii_lowercase();
    let mut observer = a
        .live
        .observation(&a.db, spec.status_interval)
        .map(|p| p.start_with(yardstick_bindings::statistics(&a.db), None, &scheme));
    let out = run::run(&terminals, &spec, &control, &mut |v| {
        status.interval(v, observer.as_mut())
    });
    status.finish();
    let observed = observer.map(|o| crate::observe::stop(o, &spec));
    let out = out.map_err(|e| CliError::bad_input(redact(&a.db, &e.to_string())))?;
    let m = measured(&out);
    let mut warnings = Vec::new();
    if m.errors > 0 {
        warnings.push(format!("{} transactions failed (after retries)", m.errors));
    }
    let total: u64 = m.transactions.values().map(|t| t.count).sum();
    let cores = yardstick_core::run::cpu::available_cores();
    let cpu_s = out.cpu.as_secs_f64();
    let elapsed = out.measured_elapsed.as_secs_f64();
    let used = if elapsed > 0.0 { cpu_s / elapsed } else { 0.0 };
    if used > 0.9 * threads.min(cores) as f64 {
        warnings.push(format!(
            "client CPU saturated: the benchmark process used {used:.2} cores with {threads} worker thread(s) on {cores} cores (SQLite runs inside it); the client may be the bottleneck"
        ));
    }
    if let Some(cause) = &out.stop_cause {
        warnings.push(format!(
            "run interrupted by {cause}: this is a partial result"
        ));
    }
    let stalled = out.stalled_at_end().then(|| {
        format!(
            "the database stopped answering at the end: transactions timed out{} after the measured time was up",
            timeout.map_or(String::new(), |t| format!(" (timeout {t:?})"))
        )
    });
    if let Some(s) = &stalled {
        warnings.push(format!(
            "{s}; the result is incomplete and the consistency checks were skipped"
        ));
    }
    let checks = if a.no_check || stalled.is_some() {
        Vec::new()
    } else {
        block_on(async {
            let mut o = open(&a.db, isolation).await?;
            check::run(&mut o.conn)
                .await
                .map_err(db_err("the consistency checks failed to run", &a.db))
        })?
    };
    for c in checks.iter().filter(|c| !c.pass) {
        warnings.push(format!(
            "consistency condition {} fails: {}",
            c.condition, c.detail
        ));
    }
    let mut r = frame.result(out.started_at, out.ended_at, elapsed);
    r.tags = a.live.tag_map()?;
    r.complete = !out.interrupted && stalled.is_none();
    r.interrupted = out.interrupted;
    r.incomplete_reason = out
        .stop_cause
        .as_ref()
        .map(|cause| format!("interrupted by {cause}"))
        .or(stalled);
    r.tpmc = m.tpmc;
    r.tpm_total = m.tpm_total;
    r.transactions = m.transactions;
    r.time_series = m.series;
    r.checks = checks;
    r.round_trips = Some(terminals.round_trips());
    r.client = ClientInfo {
        cpu_seconds: cpu_s,
        cpu_cores_used: used,
        cores_available: cores,
        cpu_ns_per_op: if total > 0 {
            cpu_s * 1e9 / total as f64
        } else {
            0.0
        },
        peak_rss_bytes: yardstick_core::run::cpu::peak_rss_bytes(),
        floor: None,
        histogram: None,
        limited: None,
    };
    r.observation = observed.map(|o| crate::observe::keep(o, total, &mut warnings));
    r.warnings = warnings;
    r.error_samples = m.error_samples;
    r.memory_limit = memlimit::child_record();
    // the summary reaches the screen even when the file cannot be written
    let written = crate::write_json(&out_path, &r);
    print!("{}", summary(&r));
    if written.is_ok() {
        println!("result: {}", out_path.display());
    }
    written?;
    Ok(if r.interrupted {
        control.exit_code()
    } else if !r.complete || r.checks.iter().any(|c| !c.pass) || m.errors > 0 && total == 0 {
        EXIT_FAILED
    } else {
        0
    })
}

/// `--memory-limit`: the same command as a capped child, which writes its own
/// result; when a signal (the OOM killer) ends it, an incomplete result here.
fn run_capped(
    control: &yardstick_core::run::Control,
    a: &RunArgs,
    limit: u64,
    command_line: &[String],
    out_path: &Path,
    frame: Frame,
) -> Result<i32, CliError> {
    let mut extra = Vec::new();
    if a.out.is_none() {
        extra.extend(["--out".into(), out_path.display().to_string()]);
    }
    let killed = match memlimit::run_capped(control, limit, command_line, &extra)? {
        memlimit::Capped::Exited(code) => return Ok(code),
        memlimit::Capped::Killed(k) => k,
    };
    let mut frame = frame;
    frame.database.engine.version = "unknown (the benchmark process was killed)".into();
    let mut r = frame.result(
        killed.started,
        SystemTime::now(),
        killed.elapsed.as_secs_f64(),
    );
    r.warnings = vec![killed.why.clone()];
    r.tags = a.live.tag_map()?;
    r.incomplete_reason = Some(killed.why.clone());
    r.memory_limit = Some(killed.record);
    crate::write_json(out_path, &r)?;
    eprintln!("yardstick: {}", killed.why);
    eprintln!("result: {}", out_path.display());
    Ok(EXIT_FAILED)
}
