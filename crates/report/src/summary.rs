//! The summary printed after a run: what ran, how fast, the latency
//! percentiles per operation, and every warning.
use crate::fmt::{latency, rate, thousands};
use std::fmt::Write;
use yardstick_core::result::{OpResult, RunResult};
use yardstick_core::stats::Summary;

fn row(out: &mut String, name: &str, count: u64, ok_pct: f64, s: &Summary) {
    let _ = writeln!(
        out,
        "  {name:<18} {:>11} {:>6.2}% {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
        thousands(count),
        ok_pct,
        latency(s.mean),
        latency(s.p50 as f64),
        latency(s.p90 as f64),
        latency(s.p95 as f64),
        latency(s.p99 as f64),
        latency(s.p999 as f64),
        latency(s.p9999 as f64),
        latency(s.max as f64),
    );
}

/// One row per operation, latencies taken by `pick`.
fn table(out: &mut String, r: &RunResult, pick: impl Fn(&OpResult) -> &Summary) {
    for (name, o) in &r.operations {
        let ok = o.statuses.get("ok").copied().unwrap_or(0);
        row(
            out,
            name,
            o.count,
            100.0 * ok as f64 / o.count.max(1) as f64,
            pick(o),
        );
    }
}

fn header(out: &mut String, title: &str) {
    let _ = writeln!(out, "  {title}");
    let _ = writeln!(
        out,
        "  {:<18} {:>11} {:>7} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "operation", "count", "ok", "mean", "p50", "p90", "p95", "p99", "p99.9", "p99.99", "max"
    );
}

pub fn summary_table(r: &RunResult) -> String {
    let mut out = String::new();
    let engine = &r.binding.engine;
    let sched = r.schedule.as_ref().and_then(|s| s.rate_schedule.as_deref());
    let loop_mode = match (r.runner.target_ops_per_sec, sched) {
        (Some(t), Some(text)) => format!("open loop on {text} (mean {} ops/s)", rate(t)),
        (Some(t), None) => format!("open loop at {} ops/s", rate(t)),
        (None, _) => "closed loop".to_string(),
    };
    let _ = writeln!(
        out,
        "yardstick {} · {} · {} {} · {} thread(s) x {} in flight · {} · seed {}",
        match r.phase {
            yardstick_core::workload::Phase::Load => "load",
            yardstick_core::workload::Phase::Run => "run",
        },
        r.workload,
        engine.name,
        engine.version,
        r.runner.threads,
        r.runner.concurrency,
        loop_mode,
        r.seed
    );
    let _ = writeln!(
        out,
        "  semantics: insert={} update={} read-modify-write={}  ·  {}",
        serde_json::to_value(r.semantics.insert)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default(),
        serde_json::to_value(r.semantics.update)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default(),
        r.semantics.read_modify_write,
        r.binding.url
    );
    let _ = writeln!(
        out,
        "  elapsed {:.2} s · {} operations · {} ops/s · {} errors · client CPU {:.2} cores ({:.0} ns/op){}{}",
        r.elapsed_s,
        thousands(r.totals.operations),
        rate(r.totals.ops_per_sec),
        thousands(r.totals.errors),
        r.client.cpu_cores_used,
        r.client.cpu_ns_per_op,
        r.client
            .peak_rss_bytes
            .map(|b| format!(", peak memory {:.1} MiB", b as f64 / 1048576.0))
            .unwrap_or_default(),
        if r.totals.warmup_operations > 0 {
            format!(" · {} warm-up operations excluded", thousands(r.totals.warmup_operations))
        } else {
            String::new()
        }
    );
    out.push('\n');
    let open = r.runner.target_ops_per_sec.is_some();
    header(
        &mut out,
        if open {
            "response time (from intended start), successful operations"
        } else {
            "latency, successful operations"
        },
    );
    table(&mut out, r, |o| &o.response_time_ns);
    if open {
        out.push('\n');
        header(
            &mut out,
            "service time (from actual start), successful operations",
        );
        table(&mut out, r, |o| &o.service_time_ns);
        if let Some(s) = &r.schedule {
            let _ = writeln!(
                out,
                "\n  schedule: {:.1}% of target achieved · {} late starts (>1 ms, {:.2}%) · start lag p99 {} max {} · ended {} behind · {} never started",
                100.0 * s.achieved_fraction_of_target,
                thousands(s.late_operations),
                100.0 * s.late_fraction,
                latency(s.start_lag_ns.p99 as f64),
                latency(s.start_lag_ns.max as f64),
                latency(s.final_lag_ns as f64),
                thousands(s.unstarted_operations)
            );
            if !s.steps.is_empty() {
                let _ = writeln!(
                    out,
                    "  {:<16} {:>12} {:>12} {:>9}",
                    "step (s)", "intended/s", "achieved/s", "achieved"
                );
            }
            for st in &s.steps {
                let intended = if st.from_ops_per_sec == st.to_ops_per_sec {
                    rate(st.from_ops_per_sec)
                } else {
                    format!("{}..{}", rate(st.from_ops_per_sec), rate(st.to_ops_per_sec))
                };
                let _ = writeln!(
                    out,
                    "  {:<16} {:>12} {:>12} {:>8.1}%",
                    format!("{:.1}-{:.1}", st.start_s, st.end_s),
                    intended,
                    rate(st.achieved_ops_per_sec),
                    100.0 * st.operations / st.intended_operations.max(1e-9)
                );
            }
        }
    }
    faults(&mut out, r);
    let failures: Vec<String> = r
        .operations
        .iter()
        .flat_map(|(name, o)| {
            o.statuses
                .iter()
                .filter(|(s, _)| s.as_str() != "ok")
                .map(move |(s, n)| format!("{name} {s} {}", thousands(*n)))
        })
        .collect();
    if !failures.is_empty() {
        let _ = writeln!(out, "\n  not ok: {}", failures.join(" · "));
    }
    if let Some(o) = r.operations.get("BATCH-INSERT") {
        let _ = writeln!(
            out,
            "  BATCH-INSERT: {} records in {} batches ({:.1} per batch) · {} records/s",
            thousands(o.rows),
            thousands(o.count),
            o.rows as f64 / o.count.max(1) as f64,
            rate(o.rows as f64 / r.elapsed_s.max(1e-9))
        );
    }
    for (name, o) in &r.operations {
        if let Some(s) = &o.scan_rows {
            let _ = writeln!(
                out,
                "  {name}: {:.1} records per scan on average (p50 {}, max {})",
                s.mean, s.p50, s.max
            );
        }
    }
    for e in &r.error_samples {
        let _ = writeln!(
            out,
            "  error ({}x): {} {}: {}",
            e.count, e.op, e.status, e.message
        );
    }
    for w in &r.warnings {
        let _ = writeln!(out, "\n  WARNING: {w}");
    }
    if !r.complete {
        let _ = writeln!(out, "\n  PARTIAL RESULT: the run did not finish");
    }
    out
}

/// Each `--at` command and the run's availability around it.
fn faults(out: &mut String, r: &RunResult) {
    if !r.faults.is_empty() {
        out.push_str("\n  faults (seconds from the start of measurement)\n");
    }
    let secs = |s: Option<f64>| s.map_or("-".into(), |s| format!("{s:.2}"));
    for f in &r.faults {
        let how = match (&f.note, f.exit_code) {
            (Some(n), _) => n.clone(),
            (None, Some(c)) => format!("exit {c}"),
            (None, None) => format!("signal {}", f.signal.unwrap_or(0)),
        };
        let mut cmd: String = f.command.chars().take(60).collect();
        if cmd.len() < f.command.len() {
            cmd.push('…');
        }
        let _ = writeln!(
            out,
            "  at {} s: {cmd} · ran {}-{} s, {how}",
            f.at_s,
            secs(f.started_s),
            secs(f.ended_s)
        );
        let Some(a) = &f.availability else { continue };
        let window = a.error_window.as_ref().map_or("no errors".into(), |w| {
            format!(
                "errors {:.1}-{:.1} s ({:.1} s)",
                w.start_s, w.end_s, w.seconds
            )
        });
        let recovery = match (a.baseline_ops_per_sec, a.recovery_s) {
            (None, _) => "no throughput before it to recover to".into(),
            (Some(b), Some(s)) => format!("back to 90% of {} ops/s after {s:.1} s", rate(b)),
            (Some(b), None) => format!("not back to 90% of {} ops/s by the end", rate(b)),
        };
        let p99 = |n: Option<u64>| n.map_or("-".into(), |n| latency(n as f64));
        let _ = writeln!(
            out,
            "    {window} · {} failed · {recovery} · p99 during {}, after {}",
            thousands(a.failed_operations),
            p99(a.p99_during_ns),
            p99(a.p99_after_ns)
        );
    }
}
