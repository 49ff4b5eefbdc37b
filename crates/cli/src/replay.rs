//! `yardstick replay FILE --db URL`: plays a trace (`--trace`) or a Redis
//! MONITOR capture back open-loop, each operation at its own time (scaled by
//! `--speed`), and writes a result like a run's. The work is
//! [`yardstick_core::run::replay`]; this module reads the file, opens the
//! database and writes the result.
use crate::phase::print_summary;
use crate::status::StatusLine;
use crate::{parse_duration_arg, CliError, Format};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use yardstick_bindings::WithBinding;
use yardstick_core::binding::{Binding, BindingError, OpenOptions};
use yardstick_core::op::OpKind;
use yardstick_core::result::{
    self, BindingInfo, HostInfo, Redactor, Replayed, ResultContext, Semantics,
};
use yardstick_core::run::replay::{timetable, Replay};
use yardstick_core::run::{self, Control, RunOutput, RunSpec};
use yardstick_core::trace::{self, TraceOp, MAGIC};
use yardstick_core::workload::{CoreConfig, Phase, Properties, SharedState};

#[derive(clap::Args, Debug)]
pub(crate) struct ReplayArgs {
    /// A trace written by --trace, or a Redis MONITOR capture (text).
    pub file: PathBuf,
    /// The database to play it against.
    #[arg(long, value_name = "URL")]
    pub db: String,
    /// Play at this multiple of the recorded rate (2: twice as fast, 0.5: half).
    #[arg(long, default_value_t = 1.0)]
    pub speed: f64,
    /// Worker threads.
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// Operations in flight per thread: at least the rate times the latency,
    /// or operations start late (which the result shows).
    #[arg(long, default_value_t = 16)]
    pub concurrency: usize,
    /// Property override name=value (the shape of written values: fieldcount,
    /// fieldlength, table); a trace's own properties apply first.
    #[arg(short = 'p', value_name = "NAME=VALUE")]
    pub properties: Vec<String>,
    /// Stop after this long, even if the trace goes on.
    #[arg(long, value_parser = parse_duration_arg)]
    pub duration: Option<Duration>,
    /// Result file (default: a new file under --results-dir).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Directory for result files.
    #[arg(long, value_name = "DIR", default_value = "results")]
    pub results_dir: PathBuf,
    /// Summary format on standard output.
    #[arg(long, value_enum, default_value = "table")]
    pub format: Format,
    /// Trace the replay itself to FILE.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    #[command(flatten)]
    pub live: crate::live::LiveArgs,
    #[command(flatten)]
    pub faults: crate::live::FaultArgs,
    /// No status line.
    #[arg(long, short)]
    pub quiet: bool,
}

/// The file read: its operations and how to describe them.
struct Source {
    ops: Vec<TraceOp>,
    format: &'static str,
    properties: BTreeMap<String, String>,
    skipped: BTreeMap<String, u64>,
}

fn read_source(path: &Path) -> Result<Source, CliError> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| {
        CliError::bad_input(format!(
            "cannot read {name}: {e}; give a trace or a Redis MONITOR capture"
        ))
    })?;
    if bytes.starts_with(MAGIC) {
        let t = trace::read(path).map_err(CliError::bad_input)?;
        return Ok(Source {
            ops: t.ops,
            format: "trace",
            properties: t.header.properties,
            skipped: BTreeMap::new(),
        });
    }
    let text = String::from_utf8(bytes).map_err(|_| {
        CliError::bad_input(format!(
            "{name} is neither a yardstick trace nor a Redis MONITOR capture (text)"
        ))
    })?;
    let m = trace::read_monitor(&text, &name).map_err(CliError::bad_input)?;
    Ok(Source {
        ops: m.trace.ops,
        format: "redis-monitor",
        properties: BTreeMap::new(),
        skipped: m.skipped,
    })
}

/// `yardstick replay`: exit 0 when the replay ran to its end, 1 when it
/// could not, 130-ish when a signal stopped it.
pub(crate) fn execute(
    a: &ReplayArgs,
    command_line: Vec<String>,
    control: &Control,
) -> Result<i32, CliError> {
    yardstick_bindings::check_url(&a.db).map_err(CliError::bad_input)?;
    crate::check_slots(a.threads, a.concurrency)?;
    a.live.tag_map()?;
    let faults = a.faults.faults()?;
    if !(a.speed.is_finite() && a.speed > 0.0) {
        return Err(CliError::bad_input(
            "--speed must be a positive number (2 plays twice as fast, 0.5 half as fast)",
        ));
    }
    let src = read_source(&a.file)?;
    let name = a.file.display().to_string();
    let mut props = Properties::new();
    for (k, v) in src.properties.iter().filter(|(_, v)| !v.is_empty()) {
        props
            .set(k, v, "the trace")
            .map_err(|e| CliError::bad_input(format!("{name}: {e}")))?;
    }
    for kv in &a.properties {
        props.set_override(kv).map_err(CliError::bad_input)?;
    }
    let config = CoreConfig::from_properties(&props).map_err(CliError::bad_input)?;
    let recorded = src.ops.len() as u64;
    let t = timetable(src.ops, a.speed).map_err(|e| CliError::bad_input(format!("{name}: {e}")))?;
    let (ops, table, batches) = (t.ops, t.at, t.batches);
    let mut skipped = src.skipped;
    if batches > 0 {
        skipped.insert(OpKind::BatchInsert.name().into(), batches);
    }
    let span_ns = ops.last().map_or(0, |o| o.at_ns()) - ops.first().map_or(0, |o| o.at_ns());
    let out_path = a.out.clone().unwrap_or_else(|| {
        let scheme =
            a.db.split("://")
                .next()
                .unwrap_or("db")
                .to_ascii_lowercase();
        result::default_result_path(
            &a.results_dir,
            SystemTime::now(),
            "replay",
            "trace",
            &scheme,
        )
    });
    result::check_writable(&out_path).map_err(|e| {
        CliError::bad_input(format!(
            "cannot write the result file {}: {e}; choose another --out or --results-dir",
            out_path.display()
        ))
    })?;
    crate::trace::check(a.trace.as_deref())?;
    let mut redactor = Redactor::default();
    redactor.add_url(&a.db);
    let workload = format!(
        "replay:{}",
        a.file
            .file_name()
            .map_or(name.clone(), |f| f.to_string_lossy().into())
    );
    let played = table.len() as u64;
    let mean_rate = (span_ns > 0).then(|| played as f64 / (span_ns as f64 / 1e9 / a.speed));
    let spec = RunSpec {
        phase: Phase::Run,
        threads: a.threads,
        concurrency: a.concurrency,
        operation_count: None,
        duration: a.duration,
        warmup: Duration::ZERO,
        target: Some(mean_rate.unwrap_or(1.0)),
        seed: 1,
        instance: (0, 1),
        status_interval: config.status_interval,
        expected_ops: Some(played),
        max_errors: None,
        op_timeout: None,
        until: Vec::new(),
        trace: crate::trace::open(a.trace.as_deref(), &workload, &a.db, &props, &redactor)?,
        timetable: Some(table),
        rate_schedule: None,
        faults,
        pacing: config.pacing,
    };
    let opts = OpenOptions {
        schema: config.schema(),
        insert_mode: config.insert_mode,
        update_mode: config.update_mode,
        create: true,
        sessions: a.threads * a.concurrency,
        data_integrity: false,
        scans: ops.iter().any(|o| o.op == OpKind::Scan),
    };
    let metrics = a.live.metrics(&out_path, "replay", &workload, &a.db)?;
    let mut status = StatusLine::new(a.quiet, "replay").with_metrics(metrics);
    let play = Play {
        ops: ops.into(),
        shared: Arc::new(SharedState::new(config.clone())),
        spec: &spec,
        control,
        status: &mut status,
    };
    let opened = yardstick_bindings::open(&a.db, &opts, play);
    status.finish();
    let (out, engine, op_timeout) = opened
        .map_err(|e| CliError::bad_input(redactor.redact(&e.to_string())))?
        .map_err(|e| CliError::failed(redactor.redact(&e.to_string())))?;
    let spec = RunSpec { op_timeout, ..spec };
    let ctx = ResultContext {
        command_line,
        workload,
        properties: &props,
        spec: &spec,
        semantics: Semantics {
            insert: config.insert_mode,
            update: config.update_mode,
            read_modify_write: "read, then update with the configured update semantics".into(),
        },
        binding: BindingInfo {
            scheme: a.db.split("://").next().unwrap_or("").to_ascii_lowercase(),
            url: result::redact_url(&a.db),
            engine,
            disk_bytes_before: None,
            disk_bytes_after: None,
            compression_ratio: None,
            cleared: None,
        },
        host: HostInfo::capture(),
        redactor: &redactor,
        warnings: props.warnings.clone(),
    };
    let mut r = result::build_result(ctx, &out);
    r.tags = a.live.tag_map()?;
    r.replayed = Some(Replayed {
        file: name,
        format: src.format.into(),
        operations: recorded,
        speed: a.speed,
        span_s: span_ns as f64 / 1e9,
        skipped,
    });
    r.trace = crate::trace::close(a.trace.as_deref(), spec.trace.as_deref(), &mut r.warnings);
    let written = crate::write_json(&out_path, &r);
    print_summary(
        a.format,
        &r,
        written.as_ref().ok().map(|()| out_path.as_path()),
        false,
    );
    written?;
    Ok(if r.interrupted {
        control.exit_code()
    } else if !r.complete || r.trace.as_ref().is_some_and(|t| !t.complete) {
        crate::EXIT_FAILED
    } else {
        0
    })
}

struct Play<'a> {
    ops: Arc<[TraceOp]>,
    shared: Arc<SharedState>,
    spec: &'a RunSpec,
    control: &'a Control,
    status: &'a mut StatusLine,
}

impl WithBinding for Play<'_> {
    type Output = Result<
        (
            RunOutput,
            yardstick_core::binding::EngineInfo,
            Option<Duration>,
        ),
        BindingError,
    >;

    fn call<B: Binding>(self, binding: Arc<B>) -> Self::Output {
        let engine = binding.info();
        let spec = RunSpec {
            op_timeout: binding.op_timeout(),
            ..self.spec.clone()
        };
        let work = Replay {
            binding,
            ops: self.ops,
            shared: self.shared,
            slots: spec.slots(),
        };
        let status = self.status;
        let out = run::run(&work, &spec, self.control, &mut |v| status.update(v))?;
        Ok((out, engine, spec.op_timeout))
    }
}
