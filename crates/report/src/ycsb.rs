//! YCSB's text output (`[OVERALL], RunTime(ms), ...`) as YCSB's
//! hdrhistogram measurement prints it, field type for field type, so that
//! scripts written for YCSB parse it unchanged:
//! - `RunTime(ms)`, `Operations`, `MinLatency(us)`, `MaxLatency(us)`, the
//!   percentiles and `Return=` counts are integers (YCSB records whole
//!   microseconds, truncated); `Throughput(ops/sec)` and `AverageLatency(us)`
//!   are doubles as Java's `Double.toString` writes them (`1234.5`, `100.0`,
//!   `1.2345678E7`).
//! - `[OP]` is the service time (YCSB's default `measurement.interval=op`);
//!   an open-loop run adds `[Intended-OP]`, the response time from the
//!   intended start, as YCSB's `measurement.interval=both` does.
//! - Statuses take YCSB's names: `OK`, `NOT_FOUND`, `UNEXPECTED_STATE`,
//!   `SERVICE_UNAVAILABLE`, and `ERROR` for the failures YCSB does not name
//!   (timeouts, conflicts, duplicate keys).
use std::collections::BTreeMap;
use std::fmt::Write;
use yardstick_core::result::{OpResult, RunResult};
use yardstick_core::stats::{decode_histogram, Summary};

fn ycsb_status(s: &str) -> &'static str {
    match s {
        "ok" | "rolled_back" => "OK",
        "not_found" => "NOT_FOUND",
        "verify_failed" => "UNEXPECTED_STATE",
        "unavailable" => "SERVICE_UNAVAILABLE",
        _ => "ERROR",
    }
}

/// `d` as Java's `Double.toString` writes it: plain decimals with at least
/// one digit after the point from 10^-3 up to 10^7, else `d.dddE±n`; the
/// shortest digits that read back as `d` (as Java does since JDK 19).
pub fn java_double(d: f64) -> String {
    if d.is_nan() {
        return "NaN".into();
    }
    if d.is_infinite() {
        return if d > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    let a = d.abs();
    if a == 0.0 || (1e-3..1e7).contains(&a) {
        let s = format!("{d}");
        return if s.contains('.') { s } else { s + ".0" };
    }
    let s = format!("{d:e}");
    let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let mantissa = if mantissa.contains('.') {
        mantissa.to_string()
    } else {
        format!("{mantissa}.0")
    };
    format!("{mantissa}E{exp}")
}

/// A latency distribution in whole microseconds, as YCSB records it.
struct Micros {
    count: u64,
    mean: f64,
    min: u64,
    max: u64,
    quantiles: [u64; 2],
}

/// YCSB's default `hdrhistogram.percentiles` (95,99), named as its
/// `ordinal()` names them.
const PERCENTILES: [(&str, f64); 2] = [("95th", 95.0), ("99th", 99.0)];

impl Micros {
    /// From the encoded histogram (each recorded value truncated to whole
    /// microseconds, as YCSB's `(end - start) / 1000` is), or from the
    /// summary when the histogram cannot be read.
    fn of(encoded: Option<&str>, summary: &Summary) -> Micros {
        let us = |ns: u64| ns / 1000;
        let from_summary = || Micros {
            count: summary.count,
            mean: summary.mean / 1000.0,
            min: us(summary.min),
            max: us(summary.max),
            quantiles: [summary.p95, summary.p99].map(us),
        };
        let Some(h) = encoded.and_then(|e| decode_histogram(e).ok()) else {
            return from_summary();
        };
        if h.is_empty() {
            return from_summary();
        }
        let sum: f64 = h
            .iter_recorded()
            .map(|v| us(v.value_iterated_to()) as f64 * v.count_at_value() as f64)
            .sum();
        Micros {
            count: h.len(),
            mean: sum / h.len() as f64,
            min: us(h.min()),
            max: us(h.max()),
            quantiles: PERCENTILES.map(|(_, p)| us(h.value_at_percentile(p))),
        }
    }

    fn write(&self, out: &mut String, name: &str) {
        let _ = writeln!(out, "[{name}], Operations, {}", self.count);
        let _ = writeln!(
            out,
            "[{name}], AverageLatency(us), {}",
            java_double(self.mean)
        );
        let _ = writeln!(out, "[{name}], MinLatency(us), {}", self.min);
        let _ = writeln!(out, "[{name}], MaxLatency(us), {}", self.max);
        for ((label, _), v) in PERCENTILES.iter().zip(self.quantiles) {
            let _ = writeln!(out, "[{name}], {label}PercentileLatency(us), {v}");
        }
    }
}

fn statuses(o: &OpResult) -> BTreeMap<&'static str, u64> {
    let mut by_name = BTreeMap::new();
    for (status, n) in &o.statuses {
        *by_name.entry(ycsb_status(status)).or_insert(0) += n;
    }
    by_name
}

pub fn ycsb_text(r: &RunResult) -> String {
    let mut out = String::new();
    let runtime_ms = (r.elapsed_s * 1000.0).round() as u64;
    let _ = writeln!(out, "[OVERALL], RunTime(ms), {runtime_ms}");
    // YCSB's own formula: every operation done over the whole milliseconds
    let throughput = 1000.0 * r.totals.operations as f64 / runtime_ms as f64;
    let _ = writeln!(
        out,
        "[OVERALL], Throughput(ops/sec), {}",
        java_double(throughput)
    );
    let open_loop = r.runner.loop_mode == "open";
    for (name, o) in &r.operations {
        let h = &o.histograms;
        Micros::of(Some(&h.service), &o.service_time_ns).write(&mut out, name);
        for (status, n) in statuses(o) {
            let _ = writeln!(out, "[{name}], Return={status}, {n}");
        }
        if let Some(f) = &o.failed_response_time_ns {
            Micros::of(h.failed.as_deref(), f).write(&mut out, &format!("{name}-FAILED"));
        }
    }
    if open_loop {
        for (name, o) in &r.operations {
            Micros::of(Some(&o.histograms.response), &o.response_time_ns)
                .write(&mut out, &format!("Intended-{name}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_are_written_as_java_writes_them() {
        for (d, java) in [
            (0.0, "0.0"),
            (100.0, "100.0"),
            (1234.5678, "1234.5678"),
            (0.001, "0.001"),
            (0.0001, "1.0E-4"),
            (9_999_999.5, "9999999.5"),
            (1e7, "1.0E7"),
            (12_345_678.9, "1.23456789E7"),
            (f64::INFINITY, "Infinity"),
            (f64::NAN, "NaN"),
        ] {
            assert_eq!(java_double(d), java, "{d}");
        }
    }

    #[test]
    fn statuses_take_ycsbs_names() {
        assert_eq!(ycsb_status("ok"), "OK");
        assert_eq!(ycsb_status("verify_failed"), "UNEXPECTED_STATE");
        assert_eq!(ycsb_status("unavailable"), "SERVICE_UNAVAILABLE");
        for s in ["timeout", "conflict", "duplicate_key", "error"] {
            assert_eq!(ycsb_status(s), "ERROR");
        }
    }
}
