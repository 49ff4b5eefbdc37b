//! Live metrics of a run in the Prometheus text format (0.0.4) and in
//! OpenMetrics 1.0, whichever the scraper asks for: operations by operation
//! and status and failures (counters), response- and service-time
//! histograms, intended and achieved rate, client CPU, and an info metric
//! naming the run. The sampler's interval closes update a [`Snapshot`]
//! (no cost on the operation path); a scrape renders the latest one.
//!
//! Counters cover measured operations only, so their last values equal the
//! result's totals; `yardstick_warmup` is 1 while the warm-up runs.
pub mod server;

use crate::binding::Status;
use crate::run::IntervalView;
use hdrhistogram::Histogram;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Histogram bucket bounds, seconds: 10 µs to 10 s, 1-2.5-5 steps.
pub const BOUNDS_S: [f64; 19] = [
    1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
    1.0, 2.5, 5.0, 10.0,
];

/// What names the run in `yardstick_run_info`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunInfo {
    pub run_id: String,
    pub command: String,
    pub workload: String,
    pub database: String,
    pub tags: BTreeMap<String, String>,
}

/// A histogram as cumulative bucket counts.
#[derive(Debug, Clone, Default, PartialEq)]
struct Buckets {
    cumulative: Vec<u64>,
    count: u64,
    sum_s: f64,
}

impl Buckets {
    fn of(h: &Histogram<u64>) -> Self {
        Buckets {
            cumulative: BOUNDS_S
                .iter()
                .map(|b| h.count_between(0, (b * 1e9) as u64))
                .collect(),
            count: h.len(),
            sum_s: h.mean() * h.len() as f64 / 1e9,
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
struct OpSnap {
    name: &'static str,
    statuses: Vec<(&'static str, u64)>,
    failures: u64,
    response: Buckets,
    service: Buckets,
}

/// The run as of its last closed interval.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Snapshot {
    ops: Vec<OpSnap>,
    intended: Option<f64>,
    achieved: f64,
    cpu_cores: f64,
    cpu_seconds: f64,
    late: u64,
    warmup: bool,
    elapsed_s: f64,
    finished: bool,
    /// The observation's latest values: name, unit, value.
    observed: Vec<(String, &'static str, f64)>,
}

impl Snapshot {
    /// Takes in an interval the sampler closed; `total` is the measured
    /// operations so far.
    pub fn update(&mut self, v: &IntervalView) {
        let (p, total) = (v.point, v.total);
        self.ops = total
            .ops
            .iter()
            .zip(crate::op::OpKind::ALL)
            .filter_map(|(o, kind)| {
                let o = o.as_deref()?;
                Some(OpSnap {
                    name: kind.name(),
                    statuses: Status::ALL
                        .iter()
                        .map(|s| (s.name(), o.with_status(*s)))
                        .filter(|(_, n)| *n > 0)
                        .collect(),
                    failures: o.failures(),
                    response: Buckets::of(&o.response),
                    service: Buckets::of(&o.service),
                })
            })
            .collect();
        self.intended = p.intended_ops_per_sec;
        self.achieved = p.ops_per_sec;
        self.cpu_cores = p.client_cpu_cores;
        self.cpu_seconds += p.client_cpu_cores * p.length_s;
        self.late = total.late;
        self.warmup = p.warmup;
        self.elapsed_s = p.t_s.max(0.0);
        self.finished = v.finished;
    }

    /// Takes in the observation's latest values (a counter as its rate).
    pub fn observed(&mut self, values: Vec<(String, &'static str, f64)>) {
        self.observed = values;
    }
}

/// The two exposition formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Prometheus text 0.0.4.
    Prometheus,
    /// OpenMetrics 1.0 text.
    OpenMetrics,
}

impl Format {
    /// The one a scraper's Accept header prefers.
    pub fn negotiate(accept: &str) -> Format {
        if accept.contains("application/openmetrics-text") {
            Format::OpenMetrics
        } else {
            Format::Prometheus
        }
    }

    pub fn content_type(self) -> &'static str {
        match self {
            Format::Prometheus => "text/plain; version=0.0.4; charset=utf-8",
            Format::OpenMetrics => "application/openmetrics-text; version=1.0.0; charset=utf-8",
        }
    }
}

/// A label value with `\`, `"` and newlines escaped.
fn esc(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// A tag key as a label name: `tag_` and the key with other characters as `_`.
fn tag_label(k: &str) -> String {
    let k: String = k
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    format!("tag_{k}")
}

/// A float as both formats read it.
fn num(v: f64) -> String {
    if v.is_finite() {
        format!("{v}")
    } else if v.is_nan() {
        "NaN".into()
    } else if v > 0.0 {
        "+Inf".into()
    } else {
        "-Inf".into()
    }
}

struct Out {
    text: String,
    format: Format,
}

impl Out {
    /// HELP and TYPE of a family; `name` without `_total`/`_info`.
    fn family(&mut self, name: &str, kind: &str, help: &str) {
        let (shown, kind) = match (self.format, kind) {
            (Format::Prometheus, "counter") => (format!("{name}_total"), "counter"),
            (Format::Prometheus, "info") => (format!("{name}_info"), "gauge"),
            _ => (name.to_string(), kind),
        };
        let _ = writeln!(self.text, "# HELP {shown} {help}");
        let _ = writeln!(self.text, "# TYPE {shown} {kind}");
    }

    fn sample(&mut self, name: &str, labels: &[(&str, &str)], value: &str) {
        let l: Vec<String> = labels
            .iter()
            .map(|(k, v)| format!("{k}=\"{}\"", esc(v)))
            .collect();
        let labels = if l.is_empty() {
            String::new()
        } else {
            format!("{{{}}}", l.join(","))
        };
        let _ = writeln!(self.text, "{name}{labels} {value}");
    }

    fn histogram(&mut self, name: &str, help: &str, ops: &[OpSnap], pick: fn(&OpSnap) -> &Buckets) {
        self.family(name, "histogram", help);
        for o in ops {
            let b = pick(o);
            for (bound, n) in BOUNDS_S.iter().zip(&b.cumulative) {
                let le = num(*bound);
                self.sample(
                    &format!("{name}_bucket"),
                    &[("operation", o.name), ("le", &le)],
                    &n.to_string(),
                );
            }
            self.sample(
                &format!("{name}_bucket"),
                &[("operation", o.name), ("le", "+Inf")],
                &b.count.to_string(),
            );
            self.sample(
                &format!("{name}_sum"),
                &[("operation", o.name)],
                &num(b.sum_s),
            );
            self.sample(
                &format!("{name}_count"),
                &[("operation", o.name)],
                &b.count.to_string(),
            );
        }
    }
}

/// The exposition of `s` for the run `info` in `format`.
pub fn render(info: &RunInfo, s: &Snapshot, format: Format) -> String {
    let mut o = Out {
        text: String::new(),
        format,
    };
    o.family(
        "yardstick_run",
        "info",
        "The run: its id (the result file's name), command, workload, database and --tag labels.",
    );
    let tags: Vec<(String, String)> = info
        .tags
        .iter()
        .map(|(k, v)| (tag_label(k), v.clone()))
        .collect();
    let mut labels: Vec<(&str, &str)> = vec![
        ("run_id", &info.run_id),
        ("command", &info.command),
        ("workload", &info.workload),
        ("database", &info.database),
    ];
    labels.extend(tags.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    o.sample("yardstick_run_info", &labels, "1");

    o.family(
        "yardstick_operations",
        "counter",
        "Measured operations by operation and status (warm-up excluded).",
    );
    for op in &s.ops {
        for (status, n) in &op.statuses {
            o.sample(
                "yardstick_operations_total",
                &[("operation", op.name), ("status", status)],
                &n.to_string(),
            );
        }
    }
    o.family(
        "yardstick_errors",
        "counter",
        "Measured operations that failed (a missing key or a duplicate insert is not a failure).",
    );
    for op in &s.ops {
        o.sample(
            "yardstick_errors_total",
            &[("operation", op.name)],
            &op.failures.to_string(),
        );
    }
    o.histogram(
        "yardstick_response_time_seconds",
        "Response time of completed operations: from the intended start (open loop) or the start.",
        &s.ops,
        |x| &x.response,
    );
    o.histogram(
        "yardstick_service_time_seconds",
        "Service time of completed operations: from the actual start.",
        &s.ops,
        |x| &x.service,
    );
    if let Some(i) = s.intended {
        o.family(
            "yardstick_intended_rate",
            "gauge",
            "Operations per second the pacing intended over the last interval (open loop).",
        );
        o.sample("yardstick_intended_rate", &[], &num(i));
    }
    let gauges: [(&str, &str, f64); 5] = [
        (
            "yardstick_achieved_rate",
            "Operations per second completed in the last interval.",
            s.achieved,
        ),
        (
            "yardstick_client_cpu_cores",
            "CPU the benchmark process used in the last interval, in cores.",
            s.cpu_cores,
        ),
        (
            "yardstick_elapsed_seconds",
            "Measured time so far.",
            s.elapsed_s,
        ),
        (
            "yardstick_warmup",
            "1 while the warm-up runs, else 0.",
            f64::from(u8::from(s.warmup)),
        ),
        (
            "yardstick_finished",
            "1 once the run has ended, else 0.",
            f64::from(u8::from(s.finished)),
        ),
    ];
    for (name, help, v) in gauges {
        o.family(name, "gauge", help);
        o.sample(name, &[], &num(v));
    }
    o.family(
        "yardstick_client_cpu_seconds",
        "counter",
        "CPU the benchmark process used since the run started.",
    );
    o.sample(
        "yardstick_client_cpu_seconds_total",
        &[],
        &num(s.cpu_seconds),
    );
    o.family(
        "yardstick_late_operations",
        "counter",
        "Open loop: measured operations that started more than 1 ms after their intended time.",
    );
    o.sample("yardstick_late_operations_total", &[], &s.late.to_string());
    if !s.observed.is_empty() {
        o.family(
            "yardstick_observed",
            "gauge",
            "The observation's latest values by name (host.cpu.user, process.cpu, db.wait.*): a counter's rate per second, a gauge's level; see docs/observe.md.",
        );
        for (name, unit, v) in &s.observed {
            o.sample(
                "yardstick_observed",
                &[("name", name), ("unit", unit)],
                &num(*v),
            );
        }
    }
    if format == Format::OpenMetrics {
        o.text.push_str("# EOF\n");
    }
    o.text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::op::OpKind;
    use crate::run::IntervalPoint;
    use crate::stats::Recorder;

    fn snapshot() -> Snapshot {
        let mut rec = Recorder::new();
        for status in [Status::Ok, Status::Ok, Status::Error] {
            rec.record(OpKind::Read, status, 30_000, 20_000, 1, 100);
        }
        let point = IntervalPoint {
            index: 3,
            t_s: 4.0,
            length_s: 1.0,
            warmup: false,
            ops: 3,
            errors: 1,
            not_found: 0,
            duplicate_key: 0,
            ops_per_sec: 3.0,
            late: 0,
            client_cpu_cores: 0.5,
            intended_ops_per_sec: Some(4.0),
            per_op: Vec::new(),
        };
        let view = IntervalView {
            point: &point,
            total_ops: 3,
            total_errors: 1,
            avg_ops_per_sec: 3.0,
            progress: None,
            finished: false,
            shown: true,
            total: &rec,
        };
        let mut s = Snapshot::default();
        s.update(&view);
        s.observed(vec![("host.cpu.user".into(), "cores", 0.25)]);
        s
    }

    fn info() -> RunInfo {
        RunInfo {
            run_id: "r\"1".into(),
            command: "run".into(),
            workload: "workloada".into(),
            database: "null".into(),
            tags: [("build.id".to_string(), "a".to_string())].into(),
        }
    }

    #[test]
    fn both_formats_carry_the_counters_histograms_and_info() {
        let s = snapshot();
        let p = render(&info(), &s, Format::Prometheus);
        assert!(
            p.contains("# TYPE yardstick_operations_total counter\n"),
            "{p}"
        );
        assert!(p.contains("yardstick_operations_total{operation=\"READ\",status=\"ok\"} 2\n"));
        assert!(p.contains("yardstick_operations_total{operation=\"READ\",status=\"error\"} 1\n"));
        assert!(p.contains("yardstick_errors_total{operation=\"READ\"} 1\n"));
        assert!(p.contains("# TYPE yardstick_run_info gauge\n"));
        assert!(
            p.contains("yardstick_observed{name=\"host.cpu.user\",unit=\"cores\"} 0.25\n"),
            "{p}"
        );
        assert!(p.contains("run_id=\"r\\\"1\""), "label values are escaped");
        assert!(p.contains("tag_build_id=\"a\""));
        // 30 µs: above the 25 µs bound, within 50 µs; the two completed ones
        assert!(p.contains(
            "yardstick_response_time_seconds_bucket{operation=\"READ\",le=\"0.000025\"} 0\n"
        ));
        assert!(p.contains(
            "yardstick_response_time_seconds_bucket{operation=\"READ\",le=\"0.00005\"} 2\n"
        ));
        assert!(p.contains("yardstick_response_time_seconds_count{operation=\"READ\"} 2\n"));
        assert!(p.contains("yardstick_intended_rate 4\n"));
        assert!(p.contains("yardstick_client_cpu_seconds_total 0.5\n"));
        assert!(!p.contains("# EOF"));
        let om = render(&info(), &s, Format::OpenMetrics);
        assert!(om.contains("# TYPE yardstick_operations counter\n"), "{om}");
        assert!(om.contains("# TYPE yardstick_run info\n"));
        assert!(om.ends_with("# EOF\n"));
        // every sample line is NAME{labels} VALUE, the value a number
        for line in p.lines().chain(om.lines()).filter(|l| !l.starts_with('#')) {
            let v = line.rsplit(' ').next().unwrap();
            assert!(v.parse::<f64>().is_ok() || v == "+Inf", "{line}");
        }
    }

    #[test]
    fn the_format_follows_the_accept_header() {
        assert_eq!(
            Format::negotiate("application/openmetrics-text;version=1.0.0,text/plain;q=0.5"),
            Format::OpenMetrics
        );
        assert_eq!(Format::negotiate("text/plain"), Format::Prometheus);
        assert_eq!(Format::negotiate(""), Format::Prometheus);
    }
}
