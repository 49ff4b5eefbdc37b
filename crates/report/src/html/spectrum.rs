//! The percentile spectrum (HdrHistogram's plot): latency against percentile
//! on a log scale of 1/(1-p), so that 90%, 99%, 99.9%, 99.99% and 99.999%
//! are evenly spaced and the tail is as wide as the body. Open-loop runs
//! draw the service time (dashed) beside the response time: the gap
//! between them is the queueing a closed loop would have hidden.
use crate::svg::{Line, LineChart};
use yardstick_core::result::{OpResult, RunResult};
use yardstick_core::stats::decode_histogram;

/// The x of percentile 99.999%: the spectrum's right edge.
const TAIL: f64 = 1e5;

/// (1/(1-q), latency in µs) along the histogram, from its encoding.
pub(super) fn points(encoded: &str) -> Vec<(f64, f64)> {
    let Ok(h) = decode_histogram(encoded) else {
        return Vec::new();
    };
    if h.is_empty() {
        return Vec::new();
    }
    let mut pts: Vec<(f64, f64)> = h
        .iter_quantiles(5)
        .map(|v| {
            let q = v.quantile_iterated_to();
            let x = if q >= 1.0 - 1.0 / TAIL {
                TAIL
            } else {
                1.0 / (1.0 - q)
            };
            (x, h.highest_equivalent(v.value_iterated_to()) as f64 / 1e3)
        })
        .collect();
    // one point per x: the highest latency there
    pts.dedup_by(|b, a| {
        if a.0 == b.0 {
            a.1 = a.1.max(b.1);
            true
        } else {
            false
        }
    });
    pts
}

/// The axis's labels: the percentile each 1/(1-p) stands for.
pub(super) fn percentile_axis(x: f64) -> String {
    if x <= 1.0 {
        return "0%".into();
    }
    let p = 100.0 * (1.0 - 1.0 / x);
    let s = format!("{p:.5}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    format!("{s}%")
}

/// The lines of `op` of one run: response time, and service time dashed
/// when the run was paced.
pub(super) fn lines(label: &str, r: &RunResult, op: &str, o: &OpResult) -> Vec<Line> {
    let mut out = vec![Line {
        name: format!("{label} · {op}"),
        points: points(&o.histograms.response),
        dashed: false,
        markers: false,
    }];
    if r.runner.loop_mode == "open" {
        out.push(Line {
            name: format!("{label} · {op} service time"),
            points: points(&o.histograms.service),
            dashed: true,
            markers: false,
        });
    }
    out.retain(|l| !l.points.is_empty());
    out
}

/// The suites' latency bounds as targets: `p99<20ms` is a dashed line at
/// 20 ms from the left edge up to the 99th percentile, which the spectrum
/// must stay under.
pub(super) fn targets(inputs: &super::Inputs) -> Vec<Line> {
    let mut texts: Vec<String> = inputs
        .suites
        .iter()
        .filter_map(|(_, s)| s.slo.clone())
        .collect();
    texts.sort();
    texts.dedup();
    texts.iter().filter_map(|t| target(t)).collect()
}

fn target(text: &str) -> Option<Line> {
    let slo = yardstick_orchestrate::slo::Slo::parse(text).ok()?;
    let x = (1.0 / (1.0 - slo.percentile / 100.0)).min(TAIL);
    let y = slo.bound_ns as f64 / 1e3;
    Some(Line {
        name: format!("target {text}"),
        points: vec![(1.0, y), (x, y)],
        dashed: true,
        markers: true,
    })
}

pub(super) fn chart(group: &str, lines: Vec<Line>) -> String {
    LineChart {
        title: format!("Latency by percentile · {group}"),
        x_label: "percentile (log scale of 1/(1-p), up to 99.999%)".into(),
        y_label: "latency (µs, log scale)".into(),
        lines,
        x_log: true,
        y_log: true,
        x_fmt: Some(percentile_axis),
        y_fmt: Some(crate::section::ms_axis),
        marks: Vec::new(),
        stacked: false,
    }
    .render()
}

#[cfg(test)]
mod tests {
    use super::*;
    use yardstick_core::stats::{encode_histogram, new_histogram};

    #[test]
    fn a_bound_is_a_target_up_to_its_percentile() {
        let t = target("p99<20ms").unwrap();
        assert_eq!(t.points.len(), 2);
        assert!((t.points[1].0 - 100.0).abs() < 1e-6, "{:?}", t.points);
        assert_eq!(t.points[0].1, 20_000.0);
        assert!(t.dashed && t.name == "target p99<20ms");
        assert!(target("p99 under 20ms").is_none());
    }

    #[test]
    fn the_axis_names_the_percentiles() {
        assert_eq!(percentile_axis(1.0), "0%");
        assert_eq!(percentile_axis(10.0), "90%");
        assert_eq!(percentile_axis(100.0), "99%");
        assert_eq!(percentile_axis(1e3), "99.9%");
        assert_eq!(percentile_axis(1e5), "99.999%");
    }

    #[test]
    fn points_rise_along_the_tail_up_to_99_999() {
        let mut h = new_histogram();
        for i in 1..=100_000u64 {
            h.record(i * 10).unwrap();
        }
        let pts = points(&encode_histogram(&h));
        assert!(pts.len() > 20, "{}", pts.len());
        assert!(
            pts.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1),
            "{pts:?}"
        );
        let last = pts.last().unwrap();
        assert_eq!(last.0, TAIL);
        // the maximum, 1 ms, in µs to the histogram's precision
        assert!((last.1 - 1000.0).abs() < 1.0, "{last:?}");
        // every point's latency is the one its percentile says: the value
        // at quantile q of 10..1,000,000 ns is about q ms
        for &(x, us) in &pts[..pts.len() - 1] {
            let q = 1.0 - 1.0 / x;
            assert!((us - 1000.0 * q).abs() < 2.0 + 0.002 * us, "{x} {us}");
        }
        assert!(points("not a histogram").is_empty());
    }
}
