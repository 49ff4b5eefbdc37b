//! `yardstick load` and `yardstick run`: resolve properties, open the target,
//! run with a status line, write the result atomically, print the summary.
mod before;
mod resolve;
mod summary;

use crate::memlimit;
use crate::status::StatusLine;
use crate::{workloads, CliError, OnError, PhaseArgs};
pub(crate) use resolve::resolve_properties;
use resolve::{context, default_seed, phase_name};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::SystemTime;
pub(crate) use summary::print_summary;
use yardstick_bindings::WithBinding;
use yardstick_core::binding::{Binding, BindingError, EngineInfo, OpenOptions};
use yardstick_core::op::OpKind;
use yardstick_core::result::{
    self, BindingInfo, HostInfo, Redactor, ResultContext, RunResult, Semantics,
};
use yardstick_core::run::converge::Until;
use yardstick_core::run::{self, Control, RunOutput, RunSpec};
use yardstick_core::workload::properties as p;
use yardstick_core::workload::{CoreConfig, Phase, Properties, SharedState};
/// Checks `phase`'s arguments as [`execute`] does before any work, without
/// doing any: what suites and matrices ask of every phase they plan.
pub(crate) fn check(a: &PhaseArgs, phase: Phase) -> Result<(), CliError> {
    checked(a, phase, false).map(|_| ())
}

/// The properties, workload name and configuration of valid arguments; the
/// first thing wrong with them otherwise.
fn checked(
    a: &PhaseArgs,
    phase: Phase,
    demo: bool,
) -> Result<(Properties, String, CoreConfig), CliError> {
    if phase == Phase::Run && a.clear {
        return Err(CliError::bad_input(
            "--clear applies to the load phase: use it with `yardstick load`",
        ));
    }
    a.faults.faults()?;
    if let Some(u) = &a.until {
        if phase == Phase::Load {
            return Err(CliError::bad_input(
                "--until applies to the run phase: use it with `yardstick run`",
            ));
        }
        Until::parse_all(u).map_err(CliError::bad_input)?;
    }
    if phase == Phase::Run && a.batch.is_some() {
        return Err(CliError::bad_input(
            "--batch applies to the load phase: use it with `yardstick load`",
        ));
    }
    let (props, workload) = resolve_properties(a, demo)?;
    let mut props = props;
    let mut config = CoreConfig::from_properties(&props).map_err(CliError::bad_input)?;
    if let Some((i, n)) = a.instance {
        if a.db.is_none() {
            return Err(CliError::bad_input(
                "--instance needs --db: the instances of one run share one database",
            ));
        }
        if phase == Phase::Load {
            // this instance's part of the load range
            let (start, count) = (config.insert_start, config.insert_count);
            let from = start + count * i / n;
            let to = start + count * (i + 1) / n;
            let src = format!("--instance {i}/{n}");
            props
                .set(p::INSERT_START, &from.to_string(), &src)
                .and_then(|_| props.set(p::INSERT_COUNT, &(to - from).to_string(), &src))
                .map_err(CliError::bad_input)?;
            config = CoreConfig::from_properties(&props).map_err(CliError::bad_input)?;
        } else {
            config.instance = (i, n);
        }
    }
    if let Some(url) = &a.db {
        // the error line is redacted where it is printed
        yardstick_bindings::check_url(url).map_err(CliError::bad_input)?;
        if a.verify {
            crate::verify::check_readable(url)?;
        }
    }
    Ok((props, workload, config))
}

/// Runs `phase` (and, for `run` without --db, the load before it).
pub(crate) fn execute(
    a: &PhaseArgs,
    phase: Phase,
    command_line: Vec<String>,
    control: &Control,
) -> Result<i32, CliError> {
    let demo = phase == Phase::Run
        && a.db.is_none()
        && a.property_files.is_empty()
        && a.properties.is_empty();
    let (props, workload, config) = checked(a, phase, demo)?;
    let tags = a.live.tag_map()?;
    for w in &props.warnings {
        eprintln!("yardstick: warning: {w}");
    }
    let seed = a.seed.unwrap_or_else(default_seed);
    // Without --db: SQLite in a temporary directory, loaded first when running.
    let temp;
    let url = match &a.db {
        Some(u) => u.clone(),
        None => {
            temp = tempfile::Builder::new()
                .prefix("yardstick-")
                .tempdir()
                .map_err(|e| CliError::bad_input(format!("cannot create a temporary directory: {e}; set TMPDIR to a writable directory")))?;
            let url = format!("sqlite://{}/yardstick.db", temp.path().display());
            eprintln!(
                "yardstick: no --db given: using SQLite in {} (deleted on exit; pass --db sqlite:///path.db to keep it)",
                temp.path().display()
            );
            if demo {
                eprintln!(
                    "yardstick: workloada with recordcount=50000, then operationcount=1000000 or maxexecutiontime=10 s, whichever comes first (change with -P/-p)"
                );
            }
            url
        }
    };
    let phases: Vec<Phase> = if a.db.is_none() && phase == Phase::Run {
        vec![Phase::Load, Phase::Run]
    } else {
        vec![phase]
    };
    // Every result path is checked before any work starts.
    let started = SystemTime::now();
    let scheme = url.split("://").next().unwrap_or("db").to_ascii_lowercase();
    let mut outputs = Vec::new();
    for &ph in &phases {
        let path = match (&a.out, ph == phase) {
            (Some(o), true) => o.clone(),
            _ => result::default_result_path(
                &a.results_dir,
                started,
                phase_name(ph),
                &workload,
                &scheme,
            ),
        };
        result::check_writable(&path).map_err(|e| {
            CliError::bad_input(format!(
                "cannot write the result file {}: {e}; choose another --out or --results-dir",
                path.display()
            ))
        })?;
        outputs.push(path);
    }
    crate::trace::check(a.trace.as_deref())?;
    let mut redactor = Redactor::default();
    redactor.add_url(&url);
    if let Some(limit) = a.memory_limit {
        if std::env::var_os(memlimit::CHILD_ENV).is_none() {
            if a.db.is_none() {
                return Err(CliError::bad_input(
                    "--memory-limit needs --db: name the database whose process is capped",
                ));
            }
            return before::run_capped(
                control,
                a,
                phase,
                limit,
                &props,
                &config,
                &workload,
                &url,
                seed,
                &command_line,
                &outputs[0],
                &redactor,
            );
        }
    }
    let mut code = 0;
    for (ph, out_path) in phases.iter().zip(outputs) {
        // The load that precedes a run without --db loads everything: time limits
        // apply to the run.
        let mut cfg = config.clone();
        if phases.len() > 1 && *ph == Phase::Load {
            cfg.max_execution_time = None;
        }
        let (mut r, state) = run_one(
            a,
            *ph,
            &props,
            &cfg,
            &workload,
            &url,
            seed,
            &command_line,
            control,
            &redactor,
            a.trace.as_deref().filter(|_| *ph == phase),
            &out_path,
        )?;
        r.tags = tags.clone();
        // the summary reaches the screen even when the file cannot be written
        let written = crate::verify::write_with_keys(&out_path, &mut r, Some(&state));
        print_summary(
            a.format,
            &r,
            written.as_ref().ok().map(|()| out_path.as_path()),
            phases.len() > 1 && *ph == Phase::Load,
        );
        if let Some(v) = &r.verification {
            crate::verify::print_findings(v);
            if !v.passed() {
                code = crate::EXIT_FAILED;
            }
        }
        written?;
        if r.trace.as_ref().is_some_and(|t| !t.complete) {
            code = crate::EXIT_FAILED;
        }
        if r.interrupted {
            code = control.exit_code();
            break;
        }
        if !r.complete {
            code = crate::EXIT_FAILED;
            break;
        }
    }
    Ok(code)
}

#[allow(clippy::too_many_arguments)]
fn run_one(
    a: &PhaseArgs,
    phase: Phase,
    props: &Properties,
    config: &CoreConfig,
    workload: &str,
    url: &str,
    seed: u64,
    command_line: &[String],
    control: &Control,
    redactor: &Redactor,
    trace: Option<&Path>,
    out: &Path,
) -> Result<(RunResult, Arc<SharedState>), CliError> {
    if control.stop.load(Ordering::SeqCst) {
        return Err(CliError {
            code: control.exit_code(),
            message: "interrupted before the run started".into(),
        });
    }
    let mut spec = RunSpec::from_config(phase, config, a.concurrency, a.warmup, seed)
        .map_err(CliError::bad_input)?;
    spec.instance = a.instance.unwrap_or((0, 1));
    spec.faults = a.faults.faults()?;
    if let Some(crate::args::Target::Schedule(s)) = &a.target {
        spec.rate_schedule = Some(s.clone());
    }
    // parsed once already, by `checked`
    spec.until = a
        .until
        .as_deref()
        .map(Until::parse_all)
        .transpose()
        .map_err(CliError::bad_input)?
        .unwrap_or_default();
    spec.trace = crate::trace::open(trace, workload, url, props, redactor)?;
    // up before --start-at, so a scraper sees the run waiting
    let metrics = a.live.metrics(out, phase_name(phase), workload, url)?;
    before::wait_for_start(a.start_at, control)?;
    spec.max_errors = match a.on_error {
        Some(OnError::Stop) => Some(0),
        Some(OnError::Continue) => None,
        None => a.max_errors,
    };
    let opts = OpenOptions {
        schema: config.schema(),
        insert_mode: config.insert_mode,
        update_mode: config.update_mode,
        create: phase == Phase::Load,
        sessions: spec.threads * spec.concurrency,
        data_integrity: config.data_integrity,
        scans: phase == Phase::Run && config.proportion(OpKind::Scan) > 0.0,
    };
    let mut status = StatusLine::new(a.quiet, phase_name(phase)).with_metrics(metrics);
    let exec = Exec {
        spec: &spec,
        config: config.clone(),
        retry_limit_set: props.explicit().contains_key(p::RETRY_LIMIT),
        control,
        status: &mut status,
        clear: a.clear && phase == Phase::Load,
        verify: a.verify.then_some(a.quiet),
        observe: a.live.observation(url, spec.status_interval),
    };
    let caps = a
        .server_memory_limit
        .map(|limit| crate::server_memory::cap(url, limit))
        .transpose()?;
    let opened = yardstick_bindings::open(url, &opts, exec);
    status.finish();
    let server_memory = caps.map(|c| c.release()).unwrap_or_default();
    let opened = opened
        .map_err(|e| CliError::bad_input(redactor.redact(&e.to_string())))?
        .map_err(|e| CliError::bad_input(redactor.redact(&e.to_string())))?;
    let out = opened.out;
    let state = opened.state;
    spec.op_timeout = opened.op_timeout;
    let next_insert_keynum = opened.next_insert_keynum;
    let extra: Vec<String> = opened
        .retries
        .map(|n| {
            format!("retry.limit={n}: the binding asks for conflicts (serialization failures) to be retried; set retry.limit to choose otherwise")
        })
        .into_iter()
        .collect();
    let binding = BindingInfo {
        scheme: url.split("://").next().unwrap_or("").to_ascii_lowercase(),
        url: result::redact_url(url),
        engine: opened.engine,
        disk_bytes_before: opened.disk_before,
        disk_bytes_after: opened.disk_after,
        compression_ratio: None,
        cleared: opened.cleared,
    };
    let ctx = context(
        command_line,
        workload,
        props,
        &spec,
        config,
        binding,
        redactor,
        extra,
    );
    let mut result = result::build_result(ctx, &out);
    result.trace = crate::trace::close(trace, spec.trace.as_deref(), &mut result.warnings);
    result.inserts = Some(result::inserts::Inserts::of(&state, phase));
    result.verification = opened.verification;
    if let Some(o) = opened.observation {
        let ops = result.totals.operations;
        result.observation = Some(crate::observe::keep(o, ops, &mut result.warnings));
    }
    if phase == Phase::Run && config.instance.1 == 1 {
        result.runner.next_insert_keynum = Some(next_insert_keynum);
    }
    if phase == Phase::Load {
        let written: u64 = result.operations.values().map(|o| o.bytes).sum();
        result.binding.compression_ratio = result.binding.load_compression_ratio(written);
    }
    crate::server_memory::note(&mut result.warnings, &server_memory);
    result.server_memory = server_memory;
    if let Some(m) = memlimit::child_record() {
        if m.page_cache.starts_with("not dropped") {
            result.warnings.push(format!("page cache {}", m.page_cache));
        }
        result.memory_limit = Some(m);
    }
    Ok((result, state))
}

/// Runs the phase once the dispatch table has opened the binding.
struct Exec<'a> {
    spec: &'a RunSpec,
    config: CoreConfig,
    /// retry.limit was given; otherwise the binding's conflict_retries applies.
    retry_limit_set: bool,
    control: &'a Control,
    status: &'a mut StatusLine,
    /// `load --clear`: empty the table before the load.
    clear: bool,
    /// `--verify`: read the inserts back after the phase (quietly or not).
    verify: Option<bool>,
    /// The sources to observe (none with `--observe off`).
    observe: Option<yardstick_core::observe::Plan>,
}

/// What a phase measured and learnt of its binding.
struct Opened {
    out: RunOutput,
    engine: EngineInfo,
    disk_before: Option<u64>,
    disk_after: Option<u64>,
    /// The retry limit the binding chose (when the user set none).
    retries: Option<u32>,
    /// The binding's limit on one call.
    op_timeout: Option<std::time::Duration>,
    next_insert_keynum: u64,
    cleared: Option<result::Cleared>,
    state: Arc<SharedState>,
    verification: Option<result::inserts::Verification>,
    /// What was observed during the phase, and the warnings not yet shown.
    observation: Option<yardstick_core::observe::Finished>,
}

impl WithBinding for Exec<'_> {
    type Output = Result<Opened, BindingError>;

    fn call<B: Binding>(self, binding: Arc<B>) -> Self::Output {
        let cleared = if self.clear {
            let started = std::time::Instant::now();
            let records = run::clear_table(&*binding).map_err(|e| {
                BindingError::Unsupported(format!("--clear: cannot empty the table: {e}"))
            })?;
            let c = result::Cleared {
                records,
                seconds: started.elapsed().as_secs_f64(),
            };
            eprintln!(
                "yardstick: emptied the table in {:.2} s{}",
                c.seconds,
                c.records
                    .map(|n| format!(" ({n} records deleted)"))
                    .unwrap_or_default()
            );
            Some(c)
        } else {
            None
        };
        // read as the phase finds the data, without the flush and the wait
        // for compactions disk_bytes does: a run right after a load starts
        // with the compaction backlog the load left, as the reports measure it
        let before = binding.data_size().or_else(|| binding.disk_bytes());
        let engine = binding.info();
        let status = self.status;
        let mut config = self.config;
        let chosen = binding
            .conflict_retries()
            .filter(|_| !self.retry_limit_set && self.spec.phase == Phase::Run);
        if let Some(n) = chosen {
            config.retry_limit = n;
        }
        let state = Arc::new(SharedState::new(config));
        let work = run::Ycsb::new(binding.clone(), state.clone(), self.spec.phase);
        let spec = RunSpec {
            op_timeout: binding.op_timeout(),
            ..self.spec.clone()
        };
        let scheme = engine.name.clone();
        let mut observer = self.observe.map(|p| p.start(&binding, &scheme));
        let out = run::run(&work, &spec, self.control, &mut |v| {
            status.interval(v, observer.as_mut())
        })?;
        // stopped before --verify reads back
        let observation = observer.map(|o| crate::observe::stop(o, &spec));
        // a database that stopped answering is not asked for its size
        let disk_after = if out.stalled_at_end() {
            None
        } else {
            binding.disk_bytes()
        };
        // an interrupted phase is not read back: the user asked to stop
        let verification = match self.verify {
            Some(quiet) if !out.interrupted => Some(crate::verify::after_phase(
                binding.clone(),
                state.clone(),
                self.spec.phase,
                &spec,
                self.control,
                quiet,
            )?),
            _ => None,
        };
        Ok(Opened {
            out,
            engine,
            disk_before: before,
            disk_after,
            retries: chosen,
            op_timeout: spec.op_timeout,
            cleared,
            next_insert_keynum: state.inserts.issued(),
            state,
            verification,
            observation,
        })
    }
}
