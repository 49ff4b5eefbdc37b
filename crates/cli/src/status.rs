//! The live status line: rewritten in place on a terminal, one plain line per
//! interval otherwise (logs, CI), nothing with --quiet; and the metrics
//! endpoint (`--metrics-listen`), which sees every interval the line does.
use std::io::Write;
use yardstick_core::op::OpKind;
use yardstick_core::run::IntervalView;
use yardstick_report::fmt::{latency, rate, thousands};

pub(crate) struct StatusLine {
    tty: bool,
    quiet: bool,
    drawn: bool,
    label: String,
    metrics: Option<yardstick_core::metrics::server::Exporter>,
}

impl StatusLine {
    pub(crate) fn new(quiet: bool, label: &str) -> Self {
        use std::io::IsTerminal;
        let tty = std::io::stderr().is_terminal();
        StatusLine {
            tty,
            quiet,
            drawn: false,
            label: label.to_string(),
            metrics: None,
        }
    }

    /// Also hands every interval to this metrics endpoint.
    pub(crate) fn with_metrics(
        mut self,
        metrics: Option<yardstick_core::metrics::server::Exporter>,
    ) -> Self {
        self.metrics = metrics;
        self
    }

    pub(crate) fn line(&self, v: &IntervalView) -> String {
        let p = v.point;
        let clock = if p.warmup {
            format!("warm-up {:>6.1}s", p.t_s)
        } else {
            format!("{:>7.1}s", p.t_s)
        };
        let mut s = format!(
            "[{} {clock}] {} ops  {} ops/s (avg {})",
            self.label,
            thousands(v.total_ops),
            rate(p.ops_per_sec),
            rate(v.avg_ops_per_sec)
        );
        // TPC-C: completed New-Orders per minute, the headline figure
        if let Some(no) = p.per_op.iter().find(|o| o.op == OpKind::NewOrder) {
            let per_min = (no.count - no.errors) as f64 * 60.0 / p.length_s.max(1e-9);
            s.push_str(&format!("  tpmC {}", rate(per_min)));
        }
        for op in &p.per_op {
            // an empty histogram (every operation of the interval failed) reads 0
            let lat = |ns: u64| {
                if ns == 0 {
                    "-".to_string()
                } else {
                    latency(ns as f64)
                }
            };
            s.push_str(&format!(
                "  {} p50 {} p99 {}",
                op.op.name(),
                lat(op.p50_ns),
                lat(op.p99_ns)
            ));
        }
        if v.total_errors > 0 {
            s.push_str(&format!("  errors {}", thousands(v.total_errors)));
        }
        if p.late > 0 {
            s.push_str(&format!("  late {}", thousands(p.late)));
        }
        if let Some(f) = v.progress {
            let width = 20;
            let done = (f * width as f64).round() as usize;
            s.push_str(&format!(
                "  [{}{}] {:>3.0}%",
                "#".repeat(done),
                ".".repeat(width - done.min(width)),
                f * 100.0
            ));
        }
        s
    }

    pub(crate) fn update(&mut self, v: &IntervalView) {
        if let Some(m) = &self.metrics {
            m.snapshot().update(v);
        }
        if self.quiet || !v.shown {
            return;
        }
        let line = self.line(v);
        let mut err = std::io::stderr().lock();
        if self.tty {
            let _ = write!(err, "\r\x1b[2K{line}");
            self.drawn = true;
        } else {
            let _ = writeln!(err, "{line}");
        }
        let _ = err.flush();
    }

    /// An interval closed: the observation (if any) samples it, then the
    /// line and the metrics endpoint show it.
    pub(crate) fn interval(
        &mut self,
        v: &IntervalView,
        observer: Option<&mut yardstick_core::observe::Observer>,
    ) {
        if let Some(o) = observer {
            o.tick(v.point);
            self.observed(o);
        }
        self.update(v);
    }

    /// The observation at an interval's close: its new warnings on lines of
    /// their own, its latest values to the metrics endpoint.
    fn observed(&mut self, o: &mut yardstick_core::observe::Observer) {
        if let Some(m) = &self.metrics {
            m.snapshot().observed(o.latest());
        }
        for w in o.take_warnings() {
            self.warn(&w);
        }
    }

    /// A warning line, above the in-place line.
    pub(crate) fn warn(&mut self, w: &str) {
        let mut err = std::io::stderr().lock();
        if self.drawn {
            let _ = write!(err, "\r\x1b[2K");
            self.drawn = false;
        }
        let _ = writeln!(err, "yardstick: warning: {w}");
    }

    /// Ends the in-place line so following output starts on its own line.
    pub(crate) fn finish(&mut self) {
        if self.drawn {
            let _ = writeln!(std::io::stderr());
            self.drawn = false;
        }
    }
}
