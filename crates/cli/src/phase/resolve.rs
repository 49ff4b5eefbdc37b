//! Resolving a phase's properties: built-in defaults, -P files, -p overrides
//! and flags, and the demo workload of a bare `yardstick run`.
use super::*;
use crate::args::Target;

/// Properties used by `yardstick run` with no -P, -p or --db: a short,
/// meaningful workload A against the embedded default.
const DEMO: &[(&str, &str)] = &[
    (p::RECORD_COUNT, "50000"),
    (p::OPERATION_COUNT, "1000000"),
    (p::MAX_EXECUTION_TIME, "10"),
];

pub(super) fn phase_name(phase: Phase) -> &'static str {
    match phase {
        Phase::Load => "load",
        Phase::Run => "run",
    }
}

/// Resolves properties: built-in defaults, -P files in order, -p overrides, then flags.
pub(crate) fn resolve_properties(
    a: &PhaseArgs,
    demo: bool,
) -> Result<(Properties, String), CliError> {
    let mut props = Properties::new();
    let files: Vec<PathBuf> = if a.property_files.is_empty() {
        vec![PathBuf::from("workloada")]
    } else {
        a.property_files.clone()
    };
    let mut names = Vec::new();
    for f in &files {
        if let Some((name, text)) = workloads::builtin(f) {
            props
                .load_str(text, &format!("{name} (built in)"))
                .map_err(CliError::bad_input)?;
            names.push(name.to_string());
        } else {
            props.load_file(f).map_err(CliError::bad_input)?;
            names.push(
                f.file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| "custom".into()),
            );
        }
    }
    if demo {
        for (k, v) in DEMO {
            props
                .set(k, v, "default of a run without --db")
                .map_err(CliError::bad_input)?;
        }
    }
    for o in &a.properties {
        props.set_override(o).map_err(CliError::bad_input)?;
    }
    let flag = |props: &mut Properties, name: &str, value: String, src: &str| {
        props.set(name, &value, src).map_err(CliError::bad_input)
    };
    if let Some(t) = a.threads {
        flag(&mut props, p::THREAD_COUNT, t.to_string(), "--threads")?;
    }
    // a schedule sets the mean rate and lasts its length, as --duration would
    let mut duration = a.duration;
    match &a.target {
        Some(Target::Rate(t)) => flag(&mut props, p::TARGET, t.to_string(), "--target")?,
        Some(Target::Schedule(s)) => {
            flag(&mut props, p::TARGET, s.mean_rate().to_string(), "--target")?;
            if a.duration.is_some_and(|d| d > s.duration()) {
                return Err(CliError::bad_input(format!(
                    "--duration is longer than the --target schedule ({:.1} s): lengthen the schedule's last step, or leave --duration out",
                    s.duration().as_secs_f64()
                )));
            }
            duration = duration.or(Some(s.duration()));
        }
        None => {}
    }
    if let Some(d) = duration {
        flag(
            &mut props,
            p::MAX_EXECUTION_TIME,
            d.as_secs_f64().to_string(),
            "--duration",
        )?;
        // --duration makes the run time-bounded: a workload file's operationcount
        // does not cut it short (an explicit -p operationcount still does).
        let from_override = props
            .explicit()
            .get(p::OPERATION_COUNT)
            .is_some_and(|v| v.source == "-p");
        if !from_override {
            flag(
                &mut props,
                p::OPERATION_COUNT,
                "0".into(),
                "--duration (time-bounded run)",
            )?;
        }
    }
    // availability around a fault is measured per interval: 1 s by default
    let fault_interval = (!a.faults.at.is_empty()
        && !props.explicit().contains_key(p::STATUS_INTERVAL))
    .then_some(std::time::Duration::from_secs(1));
    if let Some(d) = a.status_interval.or(fault_interval) {
        flag(
            &mut props,
            p::STATUS_INTERVAL,
            d.as_secs_f64().to_string(),
            "--status-interval",
        )?;
    }
    if let Some(n) = a.batch {
        flag(&mut props, p::BATCH_SIZE, n.to_string(), "--batch")?;
    }
    if let Some(n) = a.retries {
        flag(&mut props, p::RETRY_LIMIT, n.to_string(), "--retries")?;
    }
    let workload = if names.is_empty() {
        "custom".to_string()
    } else {
        names.join("+")
    };
    Ok((props, workload))
}

pub(super) fn default_seed() -> u64 {
    let t = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default();
    yardstick_core::rng::derive_seed(t.as_nanos() as u64, &[std::process::id() as u64])
}

/// Everything about the phase that the runner does not measure.
#[allow(clippy::too_many_arguments)]
pub(super) fn context<'a>(
    command_line: &[String],
    workload: &str,
    props: &'a Properties,
    spec: &'a RunSpec,
    config: &CoreConfig,
    binding: BindingInfo,
    redactor: &'a Redactor,
    extra_warnings: Vec<String>,
) -> ResultContext<'a> {
    ResultContext {
        command_line: command_line.to_vec(),
        workload: workload.to_string(),
        properties: props,
        spec,
        semantics: Semantics {
            insert: config.insert_mode,
            update: config.update_mode,
            read_modify_write: "read, then update with the configured update semantics".into(),
        },
        binding,
        host: HostInfo::capture(),
        redactor,
        warnings: props
            .warnings
            .iter()
            .cloned()
            .chain(extra_warnings)
            .collect(),
    }
}
