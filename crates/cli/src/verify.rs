//! `yardstick verify` and `--verify`: read back every insert of YCSB phases
//! and say whether the database kept what it acknowledged. The judging is
//! [`yardstick_core::run::verify`]; this module finds the phases' records
//! (results and their side files), opens the database and prints the findings.
use crate::status::StatusLine;
use crate::{read_result, CliError};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use yardstick_bindings::WithBinding;
use yardstick_core::binding::{Binding, BindingError, OpenOptions};
use yardstick_core::result::inserts::{self, Verification};
use yardstick_core::result::{Redactor, RunResult};
use yardstick_core::run::verify::{Plan, PlanError, Segment, Verify};
use yardstick_core::run::{self, Control, RunSpec};
use yardstick_core::workload::{CoreConfig, Phase, Properties, SharedState};

#[derive(clap::Args, Debug)]
pub(crate) struct VerifyArgs {
    /// The database the phases wrote to.
    #[arg(long, value_name = "URL")]
    pub db: String,
    /// Result files of the load and run phases whose inserts to read back
    /// (each with its `.inserts.tsv` side file when it has one).
    #[arg(required = true)]
    pub results: Vec<PathBuf>,
    /// Reading threads.
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// Reads in flight per thread.
    #[arg(long, default_value_t = 8)]
    pub concurrency: usize,
    /// No status line.
    #[arg(long, short)]
    pub quiet: bool,
}

/// `yardstick verify`: exit 0 when every acknowledged insert is there, 1 when
/// any was lost or changed, a refused one is present, or a key went unread.
pub(crate) fn execute(a: &VerifyArgs, control: &Control) -> Result<i32, CliError> {
    yardstick_bindings::check_url(&a.db).map_err(CliError::bad_input)?;
    check_readable(&a.db)?;
    crate::check_slots(a.threads, a.concurrency)?;
    let mut segments = Vec::new();
    for path in &a.results {
        segments.push(segment(path, &read_result(path)?)?);
    }
    let plan = Plan::new(segments).map_err(|e| {
        let name = |i: usize| a.results[i - 1].display().to_string();
        CliError::bad_input(match e {
            PlanError::Overlap(i, j) => format!(
                "{} and {} inserted the same keys: verify one of them",
                name(i),
                name(j)
            ),
            PlanError::Layout(i) => format!(
                "{} has another table layout (table or fields) than {}: verify them apart",
                name(i),
                name(1)
            ),
            PlanError::Empty => e.to_string(),
        })
    })?;
    let mut redactor = Redactor::default();
    redactor.add_url(&a.db);
    let c = plan.config().clone();
    let spec = spec(a.threads, a.concurrency, &c);
    let opts = OpenOptions {
        schema: c.schema(),
        insert_mode: c.insert_mode,
        update_mode: c.update_mode,
        create: false,
        sessions: a.threads * a.concurrency,
        data_integrity: c.data_integrity,
        scans: false,
    };
    let reading = ReadBack {
        plan,
        spec,
        control,
        quiet: a.quiet,
    };
    let found = yardstick_bindings::open(&a.db, &opts, reading)
        .map_err(|e| CliError::bad_input(redactor.redact(&e.to_string())))?
        .map_err(|e| CliError::failed(redactor.redact(&e.to_string())))?;
    print_findings(&found);
    if control.stop.load(std::sync::atomic::Ordering::SeqCst) {
        return Ok(control.exit_code());
    }
    Ok(if found.passed() {
        0
    } else {
        crate::EXIT_FAILED
    })
}

/// `null://` without a store answers every read: reading it back would
/// find everything, so it is refused.
pub(crate) fn check_readable(url: &str) -> Result<(), CliError> {
    // the URL was checked already; one that does not parse has nothing to say here
    let Ok(t) = yardstick_bindings::Target::parse(url) else {
        return Ok(());
    };
    if t.scheme == "null" && t.params.get("store").map(String::as_str) != Some("memory") {
        return Err(CliError::bad_input(
            "null:// stores nothing, so there is nothing to read back: verify with null://?store=memory or a database",
        ));
    }
    Ok(())
}

/// The inserts `r` (read from `path`) recorded, as a segment to read back.
fn segment(path: &Path, r: &RunResult) -> Result<Segment, CliError> {
    let name = path.display();
    let Some(ins) = &r.inserts else {
        return Err(CliError::bad_input(format!(
            "{name} has no record of its inserts (a TPC-C or merged result, or one written before yardstick recorded them): give the results of the YCSB load and run phases"
        )));
    };
    if r.operations.get("DELETE").is_some_and(|d| d.count > 0) {
        return Err(CliError::bad_input(format!(
            "{name}: the run deleted records, so an absent key may be a deleted one, not a lost one; verify phases without deletes"
        )));
    }
    if !ins.keys_complete {
        return Err(CliError::bad_input(format!(
            "{name}: more inserts went unacknowledged than the run kept the keys of, so an absent key cannot be judged; verify a shorter phase"
        )));
    }
    let keys = match &ins.keys_file {
        Some(f) => inserts::read_keys(&path.parent().unwrap_or(Path::new("")).join(f))
            .map_err(CliError::bad_input)?,
        None if ins.failed + ins.unknown > 0 => {
            return Err(CliError::bad_input(format!(
                "{name} counts {} unacknowledged inserts but names no file of their keys; it was not written whole, run the phase again",
                ins.failed + ins.unknown
            )))
        }
        None => Vec::new(),
    };
    let mut props = Properties::new();
    // an empty value is a property left unset (its default applies)
    for (k, v) in r.properties.iter().filter(|(_, v)| !v.is_empty()) {
        props
            .set(k, v, "the result")
            .map_err(|e| CliError::bad_input(format!("{name}: {e}")))?;
    }
    let mut config = CoreConfig::from_properties(&props)
        .map_err(|e| CliError::bad_input(format!("{name}: {e}")))?;
    if r.phase == Phase::Run {
        config.instance = (r.instance.index, r.instance.count);
    }
    Ok(Segment::from_record(config, ins, keys))
}

/// How the read-back runs: like a load, to the last key.
fn spec(threads: usize, concurrency: usize, c: &CoreConfig) -> RunSpec {
    RunSpec {
        phase: Phase::Load,
        threads,
        concurrency,
        operation_count: None,
        duration: None,
        warmup: std::time::Duration::ZERO,
        target: None,
        seed: 1,
        instance: (0, 1),
        status_interval: c.status_interval,
        expected_ops: None,
        max_errors: None,
        op_timeout: None,
        until: Vec::new(),
        trace: None,
        timetable: None,
        rate_schedule: None,
        faults: Vec::new(),
        pacing: c.pacing,
    }
}

struct ReadBack<'a> {
    plan: Plan,
    spec: RunSpec,
    control: &'a Control,
    quiet: bool,
}

impl WithBinding for ReadBack<'_> {
    type Output = Result<Verification, BindingError>;

    fn call<B: Binding>(self, binding: Arc<B>) -> Self::Output {
        let timeout = binding.op_timeout();
        read_back(
            binding,
            self.plan,
            RunSpec {
                op_timeout: timeout,
                ..self.spec
            },
            self.control,
            self.quiet,
        )
    }
}

/// Reads back `plan` through `binding` (with a status line unless `quiet`).
fn read_back<B: Binding>(
    binding: Arc<B>,
    plan: Plan,
    mut spec: RunSpec,
    control: &Control,
    quiet: bool,
) -> Result<Verification, BindingError> {
    let v = Verify::new(binding, plan);
    spec.expected_ops = Some(v.total());
    let started = std::time::Instant::now();
    let mut status = StatusLine::new(quiet, "verify");
    let out = run::run(&v, &spec, control, &mut |p| status.update(p));
    status.finish();
    out?;
    Ok(v.findings(started.elapsed().as_secs_f64()))
}

/// `--verify` after a phase: its inserts, read back through the binding it ran on.
pub(crate) fn after_phase<B: Binding>(
    binding: Arc<B>,
    state: Arc<SharedState>,
    phase: Phase,
    spec: &RunSpec,
    control: &Control,
    quiet: bool,
) -> Result<Verification, BindingError> {
    let mut read = self::spec(spec.threads, spec.concurrency, &state.config);
    read.op_timeout = spec.op_timeout;
    read.status_interval = spec.status_interval;
    // a phase that inserted nothing has nothing to read back
    match Plan::new(vec![Segment::of(state, phase)]) {
        Ok(plan) => read_back(binding, plan, read, control, quiet),
        Err(_) => Ok(Verification::default()),
    }
}

/// The findings: one line, then the keys named as examples.
pub(crate) fn print_findings(v: &Verification) {
    println!("{} ({:.2} s)", v.line(), v.seconds);
    for e in &v.examples {
        println!("  {e}");
    }
    if v.lost > 0 {
        println!("  the database lost acknowledged writes");
    }
}

/// Writes `r` to `path` and, when some of its inserts went unacknowledged,
/// their keys to the side file next to it (named in the result).
pub(crate) fn write_with_keys(
    path: &Path,
    r: &mut RunResult,
    state: Option<&SharedState>,
) -> Result<(), CliError> {
    if let (Some(ins), Some(state)) = (&mut r.inserts, state) {
        if ins.failed + ins.unknown > 0 {
            let name = inserts::keys_file_name(path);
            let side = path.with_file_name(&name);
            inserts::write_keys(state, &side).map_err(|e| {
                CliError::failed(format!(
                    "cannot write the keys of unacknowledged inserts to {}: {e}",
                    side.display()
                ))
            })?;
            ins.keys_file = Some(name);
        }
    }
    crate::write_json(path, r)
}
