//! Assembles a `RunResult` from what the runner measured and the run's context,
//! and derives the warnings a careful engineer would want to see.
use super::*;
use crate::binding::Status;
use crate::op::OpKind;
use crate::run::{RunOutput, RunSpec};
use crate::stats::{encode_histogram, Summary};
use crate::workload::Properties;

/// Everything about a run that the runner does not measure.
pub struct ResultContext<'a> {
    pub command_line: Vec<String>,
    pub workload: String,
    pub properties: &'a Properties,
    pub spec: &'a RunSpec,
    pub semantics: Semantics,
    pub binding: BindingInfo,
    pub host: HostInfo,
    pub redactor: &'a Redactor,
    /// Warnings gathered before the run (ignored properties, ...).
    pub warnings: Vec<String>,
}

/// Process CPU above this share of all cores means the client may be the bottleneck.
const SATURATED: f64 = 0.9;

/// The verdict on the client: limited when its worker threads used
/// (nearly) all the CPU they can, when one worker thread was busy (nearly)
/// all the time, or when paced operations started more than 1 ms late at p99.
fn client_limit(
    saturated: bool,
    cpu_of_usable: f64,
    worker_busy: &[f64],
    schedule: Option<&Schedule>,
) -> ClientLimit {
    let lag_p99 = schedule.map(|s| s.start_lag_ns.p99);
    let late = lag_p99.is_some_and(|l| l > 1_000_000);
    let (busiest, busy) = worker_busy
        .iter()
        .copied()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .unwrap_or((0, 0.0));
    let full = busy >= SATURATED;
    let reason = if saturated {
        format!(
            "its worker threads used {:.0}% of the CPU they can use; add --threads or machines, or the database is faster than measured",
            cpu_of_usable * 100.0
        )
    } else if full {
        format!(
            "worker thread {busiest} was busy {:.0}% of the run (its CPU time less its waits for the schedule); add --threads, or the database is faster than measured",
            busy * 100.0
        )
    } else if late {
        format!(
            "paced operations started {:.2} ms late at p99; add --threads or --concurrency, or lower --target",
            lag_p99.unwrap_or(0) as f64 / 1e6
        )
    } else {
        format!(
            "not limited: its worker threads used {:.0}% of the CPU they can use, the busiest {:.0}% of its time{}",
            cpu_of_usable * 100.0,
            busy * 100.0,
            lag_p99
                .map(|l| format!(", paced operations started {:.3} ms late at p99", l as f64 / 1e6))
                .unwrap_or_default()
        )
    };
    ClientLimit {
        client_limited: saturated || full || late,
        cpu_of_usable,
        worker_busy: worker_busy.to_vec(),
        start_lag_p99_ns: lag_p99,
        reason,
    }
}

/// The histograms' resolution and the range the run's values reached.
fn histogram_info(total: &crate::stats::Recorder) -> HistogramInfo {
    let highest_ns = total
        .ops
        .iter()
        .flatten()
        .map(|o| o.response.max().max(o.service.max()).max(o.failed.max()))
        .max()
        .unwrap_or(0);
    HistogramInfo {
        significant_digits: crate::stats::SIGNIFICANT_DIGITS,
        lowest_ns: 1,
        highest_ns,
        clamped: total.clamped,
    }
}

/// [value, cumulative fraction] points of `h`: HdrHistogram's percentile
/// iteration, so points crowd toward the tail where latency plots need them.
pub fn cdf(h: &hdrhistogram::Histogram<u64>) -> Vec<[f64; 2]> {
    if h.is_empty() {
        return Vec::new();
    }
    let mut points: Vec<[f64; 2]> = Vec::new();
    for v in h.iter_quantiles(5) {
        let x = h.highest_equivalent(v.value_iterated_to()) as f64;
        let q = v.quantile_iterated_to();
        match points.last_mut() {
            // one point per value: the highest fraction reached at it
            Some(p) if p[0] == x => p[1] = q,
            _ => points.push([x, q]),
        }
    }
    points
}

pub fn build_result(ctx: ResultContext<'_>, out: &RunOutput) -> RunResult {
    let spec = ctx.spec;
    let r = ctx.redactor;
    let mut warnings = ctx.warnings;
    let faults = super::availability::of_run(out, r);
    warnings.extend(super::availability::warnings(&faults));
    let total = &out.total;
    let counted = total.counted_ops();
    let errors = total.total_errors();
    let elapsed = out.measured_elapsed.as_secs_f64();
    let ops_per_sec = out.ops_per_sec();

    let mut operations = BTreeMap::new();
    for kind in OpKind::ALL {
        // a kind seen only in a retry that never ended has no figures
        let Some(o) = total.ops[kind.index()].as_ref().filter(|o| o.count() > 0) else {
            continue;
        };
        let statuses = Status::ALL
            .iter()
            .filter(|s| o.statuses[s.index()] > 0)
            .map(|s| (s.name().to_string(), o.statuses[s.index()]))
            .collect();
        operations.insert(
            kind.name().to_string(),
            OpResult {
                count: o.count(),
                statuses,
                response_time_ns: Summary::of(&o.response),
                service_time_ns: Summary::of(&o.service),
                failed_response_time_ns: (!o.failed.is_empty()).then(|| Summary::of(&o.failed)),
                rows: o.rows,
                bytes: o.bytes,
                scan_rows: o.scan_rows.as_ref().map(Summary::of),
                response_cdf: cdf(&o.response),
                histograms: Histograms {
                    response: encode_histogram(&o.response),
                    service: encode_histogram(&o.service),
                    failed: (!o.failed.is_empty()).then(|| encode_histogram(&o.failed)),
                    scan_rows: o.scan_rows.as_ref().map(encode_histogram),
                },
            },
        );
    }

    let schedule = spec.target.map(|target| {
        let lag = total.lag.as_ref().map(Summary::of).unwrap_or_default();
        let started = lag.count.max(1);
        Schedule {
            late_operations: total.late,
            late_fraction: total.late as f64 / started as f64,
            start_lag_ns: lag,
            final_lag_ns: out.final_lag_ns,
            unstarted_operations: out.unstarted,
            achieved_fraction_of_target: ops_per_sec / target,
            rate_schedule: spec.rate_schedule.as_ref().map(|s| s.text.clone()),
            steps: spec
                .rate_schedule
                .as_ref()
                .map(|s| s.steps(&out.series))
                .unwrap_or_default(),
        }
    });
    let mut target_missed = false;
    if let (Some(s), Some(target)) = (&schedule, spec.target) {
        if s.late_fraction > 0.01 || s.unstarted_operations > 0 || s.final_lag_ns > 100_000_000 {
            target_missed = true;
            warnings.push(format!(
                "target rate missed: {:.0} ops/s of {target:.0} requested; {} operations ({:.1}%) started more than 1 ms late, the client ended {:.3} s behind schedule and {} scheduled operations never started; response times include the delay",
                ops_per_sec,
                s.late_operations,
                s.late_fraction * 100.0,
                s.final_lag_ns as f64 / 1e9,
                s.unstarted_operations
            ));
        }
    }

    let cores = crate::run::cpu::available_cores();
    let cpu_s = out.cpu.as_secs_f64();
    let cores_used = if elapsed > 0.0 { cpu_s / elapsed } else { 0.0 };
    // spinning for the schedule is CPU but not work: it does not saturate
    // (the workers' waits span the warm-up too; their measured share counts)
    let whole = elapsed + spec.warmup.as_secs_f64();
    let waited_s = out.waited.as_secs_f64() * if whole > 0.0 { elapsed / whole } else { 0.0 };
    let working = if elapsed > 0.0 {
        (cpu_s - waited_s).max(0.0) / elapsed
    } else {
        0.0
    };
    // The workers can use at most one core each: a client using (nearly) all of
    // min(threads, cores) is the bottleneck, whatever the machine's size.
    let usable = spec.threads.min(cores) as f64;
    let saturated = elapsed > 0.5 && working > SATURATED * usable;
    let limited = client_limit(
        saturated,
        working / usable,
        &out.worker_busy,
        schedule.as_ref(),
    );
    if limited.client_limited && !saturated && !target_missed {
        warnings.push(format!("client-limited: {}", limited.reason));
    }
    let histogram = histogram_info(total);
    if histogram.clamped > 0 {
        warnings.push(format!(
            "{} values were beyond the latency histograms' range and were clamped to {} ns; the highest latencies are understated",
            histogram.clamped, histogram.highest_ns
        ));
    }
    if saturated {
        warnings.push(format!(
            "client CPU saturated: the benchmark process worked {:.2} cores with {} worker thread(s) on {cores} cores; the client (or an embedded engine running in it) may be the bottleneck",
            working, spec.threads
        ));
    }
    if errors > 0 {
        let by_status: Vec<String> = Status::ALL
            .iter()
            .filter(|s| !s.completes())
            .filter_map(|s| {
                let n: u64 = total
                    .ops
                    .iter()
                    .flatten()
                    .map(|o| o.statuses[s.index()])
                    .sum();
                (n > 0).then(|| format!("{} {n}", s.name()))
            })
            .collect();
        warnings.push(format!(
            "{errors} operations did not succeed ({:.2}%): {}",
            100.0 * errors as f64 / total.total_ops().max(1) as f64,
            by_status.join(", ")
        ));
    }
    if let Some(c) = out.convergence.as_ref().filter(|c| !c.reached) {
        let widths: Vec<String> = c
            .estimates
            .iter()
            .map(|e| {
                format!(
                    "{} ±{:.1}%",
                    e.op.as_deref().unwrap_or("throughput"),
                    e.relative * 100.0
                )
            })
            .collect();
        warnings.push(format!(
            "--until {} was not reached before the run's limit ({}); give a longer --duration or a wider bound",
            c.until.join(","),
            widths.join(", ")
        ));
    }
    if out.stopped_by_errors {
        warnings.push(format!(
            "run stopped early: more than {} operations failed (--max-errors); this is a partial result",
            spec.max_errors.unwrap_or(0)
        ));
    }
    let stopped_by = out.stop_cause.as_deref().unwrap_or("a stop request");
    // the database stopped answering at the end: the last interval is not a measurement
    let limit = spec
        .op_timeout
        .map_or(String::new(), |t| format!(" (timeout {t:?})"));
    let stalled_end = if out.abandoned > 0 {
        Some(format!(
            "the database stopped answering at the end: {} calls were still waiting{limit} a second after the time was up and were abandoned, uncounted",
            out.abandoned
        ))
    } else if total.timeouts_after_end > 0 {
        Some(format!(
            "the database stopped answering at the end: {} operations timed out{limit} after the measured time was up",
            total.timeouts_after_end
        ))
    } else {
        None
    };
    if let Some(s) = &stalled_end {
        warnings.push(format!("{s}; the result is incomplete"));
    }
    let stalled = stalled_end.clone();
    if out.interrupted {
        warnings.push(format!(
            "run interrupted by {stopped_by}: this is a partial result"
        ));
    }
    if out.late_reports > 0 {
        warnings.push(format!(
            "{} interval reports arrived after their interval closed (very slow operations); they count in the totals but not in the time series",
            out.late_reports
        ));
    }
    let retries = total.retries();
    if retries > 0 {
        warnings.push(format!(
            "{retries} attempts were retries of failed operations (retry.limit, core_workload_insertion_retry_limit); latency covers every attempt"
        ));
    }

    let explicit_properties = ctx
        .properties
        .explicit()
        .iter()
        .map(|(k, v)| {
            (
                k.clone(),
                ExplicitProperty {
                    value: r.redact(&v.value),
                    source: v.source.clone(),
                },
            )
        })
        .collect();

    RunResult {
        schema_version: SCHEMA_VERSION,
        tool: Tool {
            name: "yardstick".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        },
        command_line: ctx.command_line.iter().map(|a| r.redact(a)).collect(),
        phase: spec.phase,
        workload: ctx.workload,
        seed: spec.seed,
        instance: Instance {
            index: spec.instance.0,
            count: spec.instance.1,
        },
        properties: ctx
            .properties
            .resolved()
            .into_iter()
            .map(|(k, v)| (k, r.redact(&v)))
            .collect(),
        explicit_properties,
        semantics: ctx.semantics,
        binding: ctx.binding,
        runner: RunnerInfo {
            threads: spec.threads,
            concurrency: spec.concurrency,
            loop_mode: if spec.target.is_some() {
                "open"
            } else {
                "closed"
            }
            .into(),
            target_ops_per_sec: spec.target,
            operation_count: spec.operation_count,
            duration_s: spec.duration.map(|d| d.as_secs_f64()),
            warmup_s: spec.warmup.as_secs_f64(),
            status_interval_s: spec.status_interval.as_secs_f64(),
            max_errors: spec.max_errors,
            next_insert_keynum: None,
        },
        host: ctx.host,
        started_at: time::rfc3339(out.started_at),
        ended_at: time::rfc3339(out.ended_at),
        elapsed_s: elapsed,
        complete: !out.interrupted && !out.stopped_by_errors && stalled_end.is_none(),
        interrupted: out.interrupted,
        incomplete_reason: if out.interrupted {
            Some(format!("interrupted by {stopped_by}"))
        } else if out.stopped_by_errors {
            Some(format!(
                "stopped early: more than {} operations failed (--max-errors)",
                spec.max_errors.unwrap_or(0)
            ))
        } else {
            stalled
        },
        totals: Totals {
            operations: counted,
            errors,
            ops_per_sec,
            warmup_operations: out.warmup_ops,
            retries,
        },
        operations,
        schedule,
        client: ClientInfo {
            cpu_seconds: cpu_s,
            cpu_cores_used: cores_used,
            cores_available: cores,
            cpu_ns_per_op: if counted > 0 {
                cpu_s * 1e9 / counted as f64
            } else {
                0.0
            },
            peak_rss_bytes: out.peak_rss_bytes,
            floor: out.floor,
            histogram: Some(histogram),
            limited: Some(limited),
        },
        time_series: out.series.clone(),
        warnings: warnings.iter().map(|w| r.redact(w)).collect(),
        error_samples: total
            .error_samples
            .iter()
            .map(|(k, s, m, n)| ErrorSample {
                op: k.name().into(),
                status: s.name().into(),
                message: r.redact(m),
                count: *n,
            })
            .collect(),
        memory_limit: None,
        server_memory: Vec::new(),
        observation: None,
        inserts: None,
        verification: None,
        tags: Default::default(),
        faults,
        trace: None,
        replayed: None,
        convergence: out.convergence.clone(),
        merged: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::RunSpec;
    use crate::stats::Recorder;
    use crate::workload::{CoreConfig, Phase};
    use std::time::{Duration, SystemTime};

    #[test]
    fn the_cdf_rises_to_one_at_the_maximum_and_crowds_the_tail() {
        let mut h =
            hdrhistogram::Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3).unwrap();
        for v in 1..=10_000u64 {
            h.record(v * 1000).unwrap();
        }
        let c = cdf(&h);
        assert!(c
            .windows(2)
            .all(|w| w[0][0] < w[1][0] && w[0][1] <= w[1][1]));
        let last = c.last().unwrap();
        assert_eq!(last[1], 1.0);
        assert_eq!(last[0], h.highest_equivalent(h.max()) as f64);
        // the median sits near 5 ms, and there are more points above p90 than below p50
        let median = c.iter().find(|p| p[1] >= 0.5).unwrap()[0];
        assert!((4.9e6..5.2e6).contains(&median), "{median}");
        let tail = c.iter().filter(|p| p[1] > 0.9).count();
        let body = c.iter().filter(|p| p[1] < 0.5).count();
        assert!(tail > body, "{tail} points above p90, {body} below p50");
        assert!(cdf(&hdrhistogram::Histogram::<u64>::new(3).unwrap()).is_empty());
    }

    fn result_with_cpu(threads: &str, cpu_s: f64, target: Option<&str>, busy: &[f64]) -> RunResult {
        let mut props = Properties::new();
        props.set_override("recordcount=10").unwrap();
        props
            .set_override(&format!("threadcount={threads}"))
            .unwrap();
        if let Some(t) = target {
            props.set_override(&format!("target={t}")).unwrap();
        }
        let c = CoreConfig::from_properties(&props).unwrap();
        let spec = RunSpec::from_config(Phase::Load, &c, 1, Duration::ZERO, 1).unwrap();
        let mut total = Recorder::new();
        for _ in 0..1000 {
            total.record(OpKind::Insert, Status::Ok, 1000, 900, 0, 100);
            total.record_lag(5_000_000);
        }
        let out = RunOutput {
            faults: Vec::new(),
            total,
            series: Vec::new(),
            started_at: SystemTime::UNIX_EPOCH,
            ended_at: SystemTime::UNIX_EPOCH,
            measured_elapsed: Duration::from_secs(2),
            warmup_ops: 0,
            interrupted: false,
            abandoned: 0,
            stop_cause: None,
            unstarted: 0,
            final_lag_ns: 0,
            cpu: Duration::from_secs_f64(cpu_s),
            late_reports: 0,
            stopped_by_errors: false,
            convergence: None,
            floor: None,
            peak_rss_bytes: None,
            worker_busy: busy.to_vec(),
            waited: Duration::ZERO,
        };
        let r = Redactor::default();
        let ctx = ResultContext {
            command_line: vec![],
            workload: "w".into(),
            properties: &props,
            spec: &spec,
            semantics: Semantics {
                insert: c.insert_mode,
                update: c.update_mode,
                read_modify_write: "x".into(),
            },
            binding: BindingInfo {
                scheme: "null".into(),
                url: "null://".into(),
                engine: Default::default(),
                disk_bytes_before: None,
                disk_bytes_after: None,
                compression_ratio: None,
                cleared: None,
            },
            host: HostInfo::default(),
            redactor: &r,
            warnings: vec![],
        };
        build_result(ctx, &out)
    }

    #[test]
    fn saturation_is_judged_against_the_threads_the_client_can_use() {
        let busy = result_with_cpu("1", 1.9, None, &[]);
        assert!(
            busy.warnings
                .iter()
                .any(|w| w.contains("client CPU saturated")),
            "{:?}",
            busy.warnings
        );
        assert!((busy.client.cpu_ns_per_op - 1.9e6).abs() < 1.0);
        let idle = result_with_cpu("1", 0.4, None, &[0.3]);
        assert!(idle.warnings.is_empty(), "{:?}", idle.warnings);
        // the verdict on the client, recorded either way
        let verdict = |r: &RunResult| r.client.limited.clone().unwrap();
        assert!(verdict(&busy).client_limited);
        assert!(
            verdict(&busy).reason.contains("95%"),
            "{}",
            verdict(&busy).reason
        );
        assert!(!verdict(&idle).client_limited);
        assert!(verdict(&idle).reason.starts_with("not limited"));
        let h = idle.client.histogram.clone().unwrap();
        assert_eq!((h.significant_digits, h.clamped), (3, 0));
        assert!((1000..1002).contains(&h.highest_ns), "{h:?}");
    }

    #[test]
    fn a_worker_busy_all_the_time_limits_the_client() {
        // little CPU over both cores, but one worker thread never idle
        let r = result_with_cpu("2", 1.0, None, &[0.2, 0.96]);
        let v = r.client.limited.clone().unwrap();
        assert!(v.client_limited, "{v:?}");
        assert!(
            v.reason.contains("worker thread 1 was busy 96%"),
            "{}",
            v.reason
        );
        assert_eq!(v.worker_busy, vec![0.2, 0.96]);
        assert!(r
            .warnings
            .iter()
            .any(|w| w.starts_with("client-limited: worker thread 1")));
        let calm = result_with_cpu("2", 1.0, None, &[0.2, 0.5]);
        let v = calm.client.limited.clone().unwrap();
        assert!(!v.client_limited, "{v:?}");
        assert!(v.reason.contains("the busiest 50%"), "{}", v.reason);
    }

    #[test]
    fn late_starts_warn_that_the_target_was_missed() {
        let r = result_with_cpu("1", 0.1, Some("2000"), &[]);
        let s = r.schedule.as_ref().unwrap();
        assert_eq!(s.late_operations, 1000);
        assert!((s.achieved_fraction_of_target - 0.25).abs() < 1e-9);
        assert!(
            r.warnings.iter().any(|w| w.contains("target rate missed")),
            "{:?}",
            r.warnings
        );
        // started 5 ms late: the client limited the result
        let v = r.client.limited.clone().unwrap();
        assert!(
            v.client_limited && v.reason.contains("late at p99"),
            "{v:?}"
        );
        assert!(v.start_lag_p99_ns.unwrap() >= 5_000_000);
    }
}
