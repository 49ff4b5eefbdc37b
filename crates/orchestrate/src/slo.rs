//! `--slo "p99<50ms"`: the maximum throughput whose latency percentile stays
//! under a bound (the YDB report's headline metric). A closed-loop probe finds
//! the most the target does; then open-loop steps at fractions of it, coarse
//! first, then a bisection between the last rate that met the bound and the
//! first that did not.
use serde::{Deserialize, Serialize};
use yardstick_core::result::RunResult;

/// A latency bound: a percentile of one operation's (or every operation's)
/// response time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Slo {
    /// The text it was parsed from, e.g. `read:p99<10ms`.
    pub text: String,
    /// YCSB's operation name (READ, UPDATE, ...), or `None` for all together.
    pub op: Option<String>,
    /// The percentile, e.g. 99.0.
    pub percentile: f64,
    pub bound_ns: u64,
}

/// A bound that does not parse: the text and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--slo '{text}' {why}: write [OPERATION:]pNN<LATENCY, e.g. p99<50ms or read:p99.9<10ms")]
pub struct SloError {
    pub text: String,
    pub why: &'static str,
}

const OPS: &[(&str, &str)] = &[
    ("read", "READ"),
    ("update", "UPDATE"),
    ("insert", "INSERT"),
    ("scan", "SCAN"),
    ("read-modify-write", "READ-MODIFY-WRITE"),
    ("rmw", "READ-MODIFY-WRITE"),
    ("delete", "DELETE"),
];

impl Slo {
    /// `p99<50ms`, `p99.9<10ms`, `read:p95<2ms`, `all:p99<500us`.
    pub fn parse(s: &str) -> Result<Slo, SloError> {
        let bad = |why: &'static str| SloError {
            text: s.to_string(),
            why,
        };
        let text = s.trim();
        let (op, rest) = match text.split_once(':') {
            Some((op, rest)) => {
                let op = op.trim().to_ascii_lowercase();
                if op == "all" {
                    (None, rest)
                } else {
                    let name = OPS
                        .iter()
                        .find(|(n, _)| *n == op)
                        .map(|(_, y)| y.to_string())
                        .ok_or_else(|| bad("names an unknown operation (use read, update, insert, scan, read-modify-write, delete or all)"))?;
                    (Some(name), rest)
                }
            }
            None => (None, text),
        };
        let (pct, bound) = rest
            .split_once('<')
            .ok_or_else(|| bad("has no '<' bound"))?;
        let pct: f64 = pct
            .trim()
            .strip_prefix(['p', 'P'])
            .and_then(|p| p.parse().ok())
            .filter(|p: &f64| *p > 0.0 && *p < 100.0)
            .ok_or_else(|| bad("has no percentile between p0 and p100"))?;
        let bound = bound.trim().trim_start_matches('=');
        let split = bound
            .find(|c: char| c.is_alphabetic() || c == 'µ')
            .unwrap_or(bound.len());
        let (num, unit) = bound.split_at(split);
        let v: f64 = num
            .trim()
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite() && *v > 0.0)
            .ok_or_else(|| bad("has no positive latency"))?;
        let scale = match unit.trim() {
            "ns" => 1.0,
            "us" | "µs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            _ => return Err(bad("has a latency without a unit (ns, us, ms or s)")),
        };
        Ok(Slo {
            text: text.to_string(),
            op,
            percentile: pct,
            bound_ns: (v * scale).round() as u64,
        })
    }

    /// The bound's percentile of `r`'s successful operations (exact, from the
    /// stored histograms), or `None` when it did none of that operation.
    pub fn value_ns(&self, r: &RunResult) -> Option<u64> {
        crate::merged_response(r, |name| self.op.as_deref().is_none_or(|o| o == name))
            .map(|h| h.value_at_quantile(self.percentile / 100.0))
    }

    /// Whether a step met the bound: the percentile under it, the target rate
    /// achieved (95%) and at most 1% errors.
    pub(crate) fn judge(&self, r: &RunResult, target: f64) -> Point {
        let value = self.value_ns(r);
        let achieved = r.totals.ops_per_sec;
        // not_found and duplicate_key are outcomes, not failures
        let failed: u64 = r
            .operations
            .values()
            .flat_map(|o| o.statuses.iter())
            .filter(|(s, _)| !matches!(s.as_str(), "ok" | "not_found" | "duplicate_key"))
            .map(|(_, n)| *n)
            .sum();
        let errors = failed as f64 / (r.totals.operations.max(1)) as f64;
        let mut why = Vec::new();
        match value {
            Some(v) if v > self.bound_ns => why.push(format!(
                "p{} {} over the bound",
                self.percentile,
                crate::slo::fmt_ns(v)
            )),
            None => why.push("no successful operation to measure".to_string()),
            _ => {}
        }
        if achieved < 0.95 * target {
            why.push(format!(
                "achieved {achieved:.0} ops/s of {target:.0} targeted"
            ));
        }
        if errors > 0.01 {
            why.push(format!("{:.1}% errors", errors * 100.0));
        }
        if !r.complete {
            why.push("incomplete".into());
        }
        Point {
            target,
            achieved,
            value_ns: value,
            pass: why.is_empty(),
            why: why.join("; "),
            result: None,
        }
    }
}

pub(crate) fn fmt_ns(v: u64) -> String {
    let v = v as f64;
    if v >= 1e9 {
        format!("{:.2} s", v / 1e9)
    } else if v >= 1e6 {
        format!("{:.2} ms", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.1} µs", v / 1e3)
    } else {
        format!("{v:.0} ns")
    }
}

/// One step of a search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Point {
    /// Operations per second asked for (open loop).
    pub target: f64,
    pub achieved: f64,
    /// The bound's percentile at this rate.
    pub value_ns: Option<u64>,
    pub pass: bool,
    /// Why it failed, empty when it passed.
    pub why: String,
    /// The step's result file.
    pub result: Option<String>,
}

/// Coarse steps, as fractions of the closed-loop maximum.
pub(crate) const COARSE: &[f64] = &[0.2, 0.4, 0.6, 0.8, 0.9, 1.0];

/// The search's state: the closed-loop maximum and the steps so far.
#[derive(Debug, Clone)]
pub(crate) struct Search {
    pub max_rate: f64,
    pub bisections: u32,
    pub points: Vec<Point>,
}

impl Search {
    pub(crate) fn new(max_rate: f64, bisections: u32) -> Search {
        Search {
            max_rate,
            bisections,
            points: Vec::new(),
        }
    }

    /// The next rate to try, or `None` when the search is over: coarse steps
    /// up to the first failure, then bisections between the highest passing
    /// rate (or zero) and the lowest failing one, until they are within 2%.
    pub(crate) fn next(&self) -> Option<f64> {
        let tried = |t: f64| self.points.iter().any(|p| (p.target - t).abs() < 1e-9);
        let failed = self.points.iter().any(|p| !p.pass);
        if !failed {
            return COARSE
                .iter()
                .map(|f| f * self.max_rate)
                .find(|t| !tried(*t));
        }
        let lo = self
            .points
            .iter()
            .filter(|p| p.pass)
            .map(|p| p.target)
            .fold(0.0, f64::max);
        let hi = self
            .points
            .iter()
            .filter(|p| !p.pass && p.target > lo)
            .map(|p| p.target)
            .fold(f64::INFINITY, f64::min);
        let coarse_done = self
            .points
            .iter()
            .position(|p| !p.pass)
            .map_or(0, |i| i + 1);
        let bisected = self.points.len().saturating_sub(coarse_done) as u32;
        if !hi.is_finite() || bisected >= self.bisections || (hi - lo) / hi < 0.02 {
            return None;
        }
        Some((lo + hi) / 2.0)
    }

    /// The highest achieved throughput among the steps that met the bound.
    pub(crate) fn knee(&self) -> Option<&Point> {
        self.points
            .iter()
            .filter(|p| p.pass)
            .max_by(|a, b| a.achieved.total_cmp(&b.achieved))
    }

    /// When nothing met the bound: the step with the lowest percentile.
    pub(crate) fn best_unmet(&self) -> Option<&Point> {
        self.points
            .iter()
            .filter(|p| p.value_ns.is_some())
            .min_by_key(|p| p.value_ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_parse_with_operations_percentiles_and_units() {
        let s = Slo::parse("p99<50ms").unwrap();
        assert_eq!((s.op, s.percentile, s.bound_ns), (None, 99.0, 50_000_000));
        let s = Slo::parse("read:p99.9<250us").unwrap();
        assert_eq!(s.op.as_deref(), Some("READ"));
        assert_eq!((s.percentile, s.bound_ns), (99.9, 250_000));
        let s = Slo::parse(" all:P95 <= 1.5s").unwrap();
        assert_eq!((s.op, s.bound_ns), (None, 1_500_000_000));
        assert_eq!(
            Slo::parse("rmw:p50<2µs").unwrap().op.as_deref(),
            Some("READ-MODIFY-WRITE")
        );
        for bad in [
            "p99",
            "p99<50",
            "p100<1ms",
            "x:p99<1ms",
            "p99<-1ms",
            "99<1ms",
        ] {
            let e = Slo::parse(bad).unwrap_err().to_string();
            assert!(e.contains("p99<50ms"), "{bad}: {e}");
        }
    }

    /// A system whose p99 is 1 ms up to 700 ops/s and then explodes.
    fn step(s: &mut Search, knee: f64) -> bool {
        let Some(t) = s.next() else { return false };
        let pass = t <= knee;
        s.points.push(Point {
            target: t,
            achieved: t,
            value_ns: Some(if pass { 1_000_000 } else { 90_000_000 }),
            pass,
            why: String::new(),
            result: None,
        });
        true
    }

    #[test]
    fn the_search_steps_coarsely_then_bisects_to_the_knee() {
        let mut s = Search::new(1000.0, 4);
        while step(&mut s, 700.0) {}
        let targets: Vec<f64> = s.points.iter().map(|p| p.target.round()).collect();
        // 200, 400, 600 pass, 800 fails; then 700 passes, 750, 725, 712.5 fail
        assert_eq!(&targets[..4], &[200.0, 400.0, 600.0, 800.0]);
        assert_eq!(targets.len(), 8);
        let knee = s.knee().unwrap().achieved;
        assert!((700.0..=720.0).contains(&knee), "knee {knee}");
    }

    #[test]
    fn a_target_that_always_meets_the_bound_ends_at_its_maximum() {
        let mut s = Search::new(1000.0, 4);
        while step(&mut s, 1e9) {}
        assert_eq!(s.points.len(), COARSE.len());
        assert_eq!(s.knee().unwrap().achieved, 1000.0);
    }

    #[test]
    fn a_bound_never_met_bisects_toward_zero_and_reports_the_best() {
        let mut s = Search::new(1000.0, 3);
        while step(&mut s, 0.0) {}
        assert!(s.knee().is_none());
        assert_eq!(s.points.len(), 4);
        assert!(s.points.iter().all(|p| !p.pass));
        assert_eq!(s.points.last().unwrap().target, 25.0);
        assert!(s.best_unmet().is_some());
    }
}
