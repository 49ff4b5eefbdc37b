//! `--start-at` and `--memory-limit`: what a phase does before it runs (wait
//! for its start time) and instead of running here (run as a capped child).
use super::context;
use crate::memlimit;
use crate::{CliError, PhaseArgs};
use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::SystemTime;
use yardstick_core::binding::EngineInfo;
use yardstick_core::result::{self, BindingInfo, Redactor};
use yardstick_core::run::{Control, RunOutput, RunSpec};
use yardstick_core::workload::{CoreConfig, Phase, Properties};

/// `--start-at`: sleeps until the given time (Ctrl-C still stops).
pub(super) fn wait_for_start(at: Option<SystemTime>, control: &Control) -> Result<(), CliError> {
    let Some(at) = at else {
        return Ok(());
    };
    match at.duration_since(SystemTime::now()) {
        Ok(wait) => {
            eprintln!(
                "yardstick: waiting {:.1} s for --start-at {}",
                wait.as_secs_f64(),
                result::time::rfc3339(at)
            );
            let end = std::time::Instant::now() + wait;
            while std::time::Instant::now() < end {
                if control.stop.load(Ordering::SeqCst) {
                    return Err(CliError {
                        code: control.exit_code(),
                        message: "interrupted before the run started".into(),
                    });
                }
                std::thread::sleep(
                    (end - std::time::Instant::now()).min(std::time::Duration::from_millis(50)),
                );
            }
        }
        Err(late) => eprintln!(
            "yardstick: warning: --start-at {} passed {:.1} s ago; starting now",
            result::time::rfc3339(at),
            late.duration().as_secs_f64()
        ),
    }
    Ok(())
}

/// `--memory-limit`: runs this same command as a child in a memory cgroup and
/// waits for it. The child writes its own result; when the cgroup's OOM
/// killer (or any signal) ends it, this process writes the result instead.
#[allow(clippy::too_many_arguments)]
pub(super) fn run_capped(
    control: &Control,
    a: &PhaseArgs,
    phase: Phase,
    limit: u64,
    props: &Properties,
    config: &CoreConfig,
    workload: &str,
    url: &str,
    seed: u64,
    command_line: &[String],
    out_path: &Path,
    redactor: &Redactor,
) -> Result<i32, CliError> {
    let mut extra: Vec<String> = Vec::new();
    if a.out.is_none() {
        extra.extend(["--out".into(), out_path.display().to_string()]);
    }
    if a.seed.is_none() {
        extra.extend(["--seed".into(), seed.to_string()]);
    }
    let killed = match memlimit::run_capped(control, limit, command_line, &extra)? {
        memlimit::Capped::Exited(code) => return Ok(code),
        memlimit::Capped::Killed(k) => k,
    };
    let spec = RunSpec::from_config(phase, config, a.concurrency, a.warmup, seed)
        .map_err(CliError::bad_input)?;
    let scheme = url.split("://").next().unwrap_or("").to_ascii_lowercase();
    let binding = BindingInfo {
        scheme: scheme.clone(),
        url: result::redact_url(url),
        engine: EngineInfo {
            name: scheme,
            version: "unknown (the benchmark process was killed)".into(),
            settings: Default::default(),
        },
        cleared: None,
        disk_bytes_before: None,
        disk_bytes_after: None,
        compression_ratio: None,
    };
    let ctx = context(
        command_line,
        workload,
        props,
        &spec,
        config,
        binding,
        redactor,
        vec![killed.why.clone()],
    );
    let out = RunOutput {
        faults: Vec::new(),
        total: Default::default(),
        series: Vec::new(),
        started_at: killed.started,
        ended_at: SystemTime::now(),
        measured_elapsed: killed.elapsed,
        warmup_ops: 0,
        interrupted: false,
        abandoned: 0,
        stop_cause: None,
        unstarted: 0,
        final_lag_ns: 0,
        cpu: Default::default(),
        late_reports: 0,
        stopped_by_errors: false,
        convergence: None,
        floor: None,
        peak_rss_bytes: None,
        worker_busy: Vec::new(),
        waited: std::time::Duration::ZERO,
    };
    let mut r = result::build_result(ctx, &out);
    // no figures: the result is incomplete, and its first warning says why
    r.complete = false;
    r.incomplete_reason = Some(killed.why.clone());
    r.memory_limit = Some(killed.record);
    r.tags = a.live.tag_map()?;
    crate::write_json(out_path, &r)?;
    eprintln!("yardstick: {}", killed.why);
    eprintln!("result: {}", out_path.display());
    Ok(crate::EXIT_FAILED)
}
