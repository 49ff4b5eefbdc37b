//! YCSB's text output (`[OVERALL], RunTime(ms), ...`), as its hdrhistogram
//! measurement type prints it, so scripts that parse YCSB output keep working.
use std::fmt::Write;
use yardstick_core::result::RunResult;

fn ycsb_status(s: &str) -> String {
    match s {
        "ok" => "OK".into(),
        "verify_failed" => "UNEXPECTED_STATE".into(),
        "unavailable" => "SERVICE_UNAVAILABLE".into(),
        other => other.to_ascii_uppercase(),
    }
}

pub fn ycsb_text(r: &RunResult) -> String {
    let mut out = String::new();
    let us = |ns: u64| ns as f64 / 1000.0;
    let _ = writeln!(out, "[OVERALL], RunTime(ms), {:.0}", r.elapsed_s * 1000.0);
    let _ = writeln!(
        out,
        "[OVERALL], Throughput(ops/sec), {}",
        r.totals.ops_per_sec
    );
    for (name, o) in &r.operations {
        let s = &o.response_time_ns;
        let ok = o.statuses.get("ok").copied().unwrap_or(0);
        let _ = writeln!(out, "[{name}], Operations, {ok}");
        let _ = writeln!(out, "[{name}], AverageLatency(us), {}", s.mean / 1000.0);
        let _ = writeln!(out, "[{name}], MinLatency(us), {}", us(s.min));
        let _ = writeln!(out, "[{name}], MaxLatency(us), {}", us(s.max));
        let _ = writeln!(out, "[{name}], 50thPercentileLatency(us), {}", us(s.p50));
        let _ = writeln!(out, "[{name}], 95thPercentileLatency(us), {}", us(s.p95));
        let _ = writeln!(out, "[{name}], 99thPercentileLatency(us), {}", us(s.p99));
        let _ = writeln!(out, "[{name}], 99.9PercentileLatency(us), {}", us(s.p999));
        for (status, n) in &o.statuses {
            let _ = writeln!(out, "[{name}], Return={}, {n}", ycsb_status(status));
        }
        if let Some(f) = &o.failed_response_time_ns {
            let failed = format!("{name}-FAILED");
            let _ = writeln!(out, "[{failed}], Operations, {}", f.count);
            let _ = writeln!(out, "[{failed}], AverageLatency(us), {}", f.mean / 1000.0);
            let _ = writeln!(out, "[{failed}], 95thPercentileLatency(us), {}", us(f.p95));
            let _ = writeln!(out, "[{failed}], 99thPercentileLatency(us), {}", us(f.p99));
        }
    }
    out
}
