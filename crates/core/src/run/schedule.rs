//! Rate schedules for open-loop runs (`--target 1000@30s,2000@30s`): a
//! piecewise-linear rate over time. Operation i is intended at the time t
//! where the operations scheduled so far, N(t) = ∫ rate, reach i; inside a
//! segment whose rate goes linearly from `a` to `a + b·τ`, N is
//! `a·τ + b·τ²/2`, solved exactly, so intended start times follow the
//! schedule without rounding drift (a constant rate gives i / rate, as the
//! plain pacer does).
//!
//! Forms: steps `RATE@DURATION` and ramps `FROM..TO@DURATION`, joined by
//! commas; or `file:PATH`, a (time, rate) pair per line joined linearly (the
//! same time twice is a step).
use std::time::Duration;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ScheduleError {
    #[error("'{0}' is not a rate step: write RATE@DURATION (1000@30s) or a ramp FROM..TO@DURATION (100..2000@60s), joined by commas")]
    BadStep(String),
    #[error("'{0}' is not a rate: give operations per second, 0 or more")]
    BadRate(String),
    #[error("{0}")]
    BadDuration(#[from] crate::units::DurationError),
    #[error(
        "the rate schedule has no time in it: give each step a duration above 0, e.g. 1000@30s"
    )]
    Empty,
    #[error("the rate schedule schedules no operation: give a step a rate above 0")]
    NoOperations,
    #[error("line {line} of the schedule file: {why}")]
    File { line: usize, why: String },
    #[error("cannot read the schedule file {0}")]
    Unreadable(String),
}

/// One piece: from `start_s` for `len_s` seconds, the rate goes linearly from
/// `from` to `to` operations per second.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Segment {
    pub start_s: f64,
    pub len_s: f64,
    pub from: f64,
    pub to: f64,
    /// Operations scheduled before this segment.
    pub ops_before: f64,
}

impl Segment {
    fn slope(&self) -> f64 {
        (self.to - self.from) / self.len_s
    }

    /// Operations scheduled in the first `tau` seconds of the segment.
    fn ops_within(&self, tau: f64) -> f64 {
        let tau = tau.clamp(0.0, self.len_s);
        self.from * tau + 0.5 * self.slope() * tau * tau
    }

    fn ops(&self) -> f64 {
        0.5 * (self.from + self.to) * self.len_s
    }

    /// Seconds into the segment at which `k` operations have been scheduled
    /// (0 <= k <= ops()): the root of from·τ + slope·τ²/2 = k in the form
    /// that stays exact when the slope is 0 or the rate starts at 0.
    fn time_for(&self, k: f64) -> f64 {
        if k <= 0.0 {
            return 0.0;
        }
        let (a, b) = (self.from, self.slope());
        let disc = (a * a + 2.0 * b * k).max(0.0);
        let den = a + disc.sqrt();
        if den <= 0.0 {
            return self.len_s;
        }
        (2.0 * k / den).min(self.len_s)
    }
}

/// A rate schedule: its segments back to back from time 0.
#[derive(Debug, Clone, PartialEq)]
pub struct Schedule {
    /// How it was written, for the result and messages.
    pub text: String,
    segments: Vec<Segment>,
}

impl Schedule {
    /// Steps and ramps (`1000@30s,100..2000@1m`) or `file:PATH`.
    pub fn parse(text: &str) -> Result<Self, ScheduleError> {
        if let Some(path) = text.trim().strip_prefix("file:") {
            let body = std::fs::read_to_string(path)
                .map_err(|e| ScheduleError::Unreadable(format!("{path}: {e}")))?;
            let mut s = Self::from_points_text(&body)?;
            s.text = text.trim().to_string();
            return Ok(s);
        }
        let mut pieces = Vec::new();
        for step in text.split(',').map(str::trim) {
            let (rates, len) = step
                .split_once('@')
                .ok_or_else(|| ScheduleError::BadStep(step.to_string()))?;
            let len = crate::units::parse_duration(len)?.as_secs_f64();
            let (from, to) = match rates.split_once("..") {
                Some((f, t)) => (rate(f)?, rate(t)?),
                None => (rate(rates)?, rate(rates)?),
            };
            pieces.push((len, from, to));
        }
        Self::from_pieces(text.trim(), pieces)
    }

    /// A file's (time, rate) pairs, one per line (`# comments`, blank lines
    /// ignored); time in seconds or with a unit (30s, 2m). The first time is 0.
    pub fn from_points_text(body: &str) -> Result<Self, ScheduleError> {
        let mut points: Vec<(f64, f64)> = Vec::new();
        for (n, raw) in body.lines().enumerate() {
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let bad = |why: String| ScheduleError::File { line: n + 1, why };
            let mut f = line.split(|c: char| c.is_whitespace() || c == ',');
            let f: Vec<&str> = f.by_ref().filter(|s| !s.is_empty()).collect();
            let [t, r] = f[..] else {
                return Err(bad(format!(
                    "'{line}' is not a pair: write TIME RATE, e.g. 30s 2000"
                )));
            };
            let t = match t.parse::<f64>() {
                Ok(v) if v.is_finite() && v >= 0.0 => v,
                _ => crate::units::parse_duration(t)
                    .map_err(|e| bad(e.to_string()))?
                    .as_secs_f64(),
            };
            let r = rate(r).map_err(|e| bad(e.to_string()))?;
            match points.last() {
                None if t != 0.0 => {
                    return Err(bad(format!(
                        "the first time is {t} s: a schedule starts at 0"
                    )))
                }
                Some(&(prev, _)) if t < prev => {
                    return Err(bad(format!(
                        "time {t} s comes before the line above's {prev} s: list the times in order"
                    )))
                }
                _ => points.push((t, r)),
            }
        }
        let pieces = points
            .windows(2)
            .filter(|w| w[1].0 > w[0].0)
            .map(|w| (w[1].0 - w[0].0, w[0].1, w[1].1))
            .collect();
        Self::from_pieces("file", pieces)
    }

    fn from_pieces(text: &str, pieces: Vec<(f64, f64, f64)>) -> Result<Self, ScheduleError> {
        let mut segments = Vec::new();
        let (mut start_s, mut ops_before) = (0.0, 0.0);
        for (len_s, from, to) in pieces.into_iter().filter(|p| p.0 > 0.0) {
            let s = Segment {
                start_s,
                len_s,
                from,
                to,
                ops_before,
            };
            start_s += len_s;
            ops_before += s.ops();
            segments.push(s);
        }
        if segments.is_empty() {
            return Err(ScheduleError::Empty);
        }
        if ops_before < 1.0 {
            return Err(ScheduleError::NoOperations);
        }
        Ok(Schedule {
            text: text.to_string(),
            segments,
        })
    }

    pub fn segments(&self) -> &[Segment] {
        &self.segments
    }

    /// The schedule's length.
    pub fn duration(&self) -> Duration {
        Duration::from_secs_f64(self.len_s())
    }

    fn len_s(&self) -> f64 {
        self.segments.last().map_or(0.0, |s| s.start_s + s.len_s)
    }

    /// Operations the whole schedule intends.
    pub fn total_ops(&self) -> f64 {
        self.segments.last().map_or(0.0, |s| s.ops_before + s.ops())
    }

    /// Mean rate over the schedule.
    pub fn mean_rate(&self) -> f64 {
        self.total_ops() / self.len_s()
    }

    /// The same schedule after `lead` seconds at its first rate: a warm-up
    /// runs at the rate measurement starts with.
    pub fn preceded_by(&self, lead: Duration) -> Schedule {
        let lead = lead.as_secs_f64();
        if lead <= 0.0 {
            return self.clone();
        }
        let first = self.segments[0].from;
        let mut pieces = vec![(lead, first, first)];
        pieces.extend(self.segments.iter().map(|s| (s.len_s, s.from, s.to)));
        Self::from_pieces(&self.text, pieces).unwrap_or_else(|_| self.clone())
    }

    /// Operations scheduled in the first `t` seconds: N(t).
    pub fn ops_until(&self, t: f64) -> f64 {
        let i = self.segments.partition_point(|s| s.start_s <= t);
        match i.checked_sub(1) {
            None => 0.0,
            Some(i) => {
                let s = &self.segments[i];
                s.ops_before + s.ops_within(t - s.start_s)
            }
        }
    }

    /// The intended rate at `t` seconds (0 after the end).
    pub fn rate_at(&self, t: f64) -> f64 {
        self.segments
            .iter()
            .find(|s| t >= s.start_s && t < s.start_s + s.len_s)
            .map_or(0.0, |s| s.from + s.slope() * (t - s.start_s))
    }

    /// Seconds from the start at which operation `i` is intended; `None` when
    /// the schedule ends before it. `cursor` is the segment the previous call
    /// ended in: callers asking in increasing order pay no search.
    pub fn time_of(&self, i: u64, cursor: &mut usize) -> Option<f64> {
        let k = i as f64;
        if k >= self.total_ops() {
            return None;
        }
        let mut c = (*cursor).min(self.segments.len() - 1);
        if self.segments[c].ops_before > k {
            c = 0;
        }
        while c + 1 < self.segments.len() && self.segments[c + 1].ops_before <= k {
            c += 1;
        }
        *cursor = c;
        let s = &self.segments[c];
        Some(s.start_s + s.time_for(k - s.ops_before))
    }
}

/// One segment of a schedule as the run went: what it intended and what the
/// time series measured over it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StepRate {
    pub start_s: f64,
    pub end_s: f64,
    pub from_ops_per_sec: f64,
    pub to_ops_per_sec: f64,
    pub intended_operations: f64,
    /// Operations completed in the segment (an interval that straddles two
    /// segments is shared by their overlap).
    pub operations: f64,
    pub achieved_ops_per_sec: f64,
}

impl Schedule {
    /// Each segment's intended and achieved operations, from the measured
    /// points of a run's time series.
    pub fn steps(&self, series: &[super::IntervalPoint]) -> Vec<StepRate> {
        self.segments
            .iter()
            .map(|s| {
                let (a, b) = (s.start_s, s.start_s + s.len_s);
                let operations: f64 = series
                    .iter()
                    .filter(|p| !p.warmup && p.length_s > 0.0)
                    .map(|p| {
                        let (pa, pb) = (p.t_s - p.length_s, p.t_s);
                        let overlap = (pb.min(b) - pa.max(a)).max(0.0);
                        p.ops as f64 * overlap / p.length_s
                    })
                    .sum();
                StepRate {
                    start_s: a,
                    end_s: b,
                    from_ops_per_sec: s.from,
                    to_ops_per_sec: s.to,
                    intended_operations: s.ops(),
                    operations,
                    achieved_ops_per_sec: operations / s.len_s,
                }
            })
            .collect()
    }
}

fn rate(s: &str) -> Result<f64, ScheduleError> {
    s.trim()
        .parse::<f64>()
        .ok()
        .filter(|r| r.is_finite() && *r >= 0.0)
        .ok_or_else(|| ScheduleError::BadRate(s.trim().to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn times(s: &Schedule) -> Vec<f64> {
        let mut c = 0;
        (0..)
            .map_while(|i| s.time_of(i, &mut c))
            .collect::<Vec<_>>()
    }

    #[test]
    fn steps_put_each_operation_at_its_rate() {
        let s = Schedule::parse("10@1s, 20@1s").unwrap();
        assert_eq!(s.total_ops(), 30.0);
        assert_eq!(s.duration(), Duration::from_secs(2));
        assert!((s.mean_rate() - 15.0).abs() < 1e-12);
        let t = times(&s);
        assert_eq!(t.len(), 30);
        for (i, t) in t.iter().enumerate() {
            let want = if i < 10 {
                i as f64 / 10.0
            } else {
                1.0 + (i - 10) as f64 / 20.0
            };
            assert!((t - want).abs() < 1e-12, "op {i}: {t} against {want}");
        }
        assert_eq!(s.rate_at(0.5), 10.0);
        assert_eq!(s.rate_at(1.5), 20.0);
        assert_eq!(s.rate_at(2.5), 0.0);
    }

    #[test]
    fn a_ramp_spaces_operations_by_the_integral_of_its_rate() {
        // 0 -> 200/s over 2 s: N(t) = 50 t², so operation i is at sqrt(i/50)
        let s = Schedule::parse("0..200@2s").unwrap();
        assert_eq!(s.total_ops(), 200.0);
        let t = times(&s);
        assert_eq!(t.len(), 200);
        for (i, t) in t.iter().enumerate() {
            assert!((t - (i as f64 / 50.0).sqrt()).abs() < 1e-9, "op {i}");
        }
        // downward: 200 -> 0, N(t) = 200 t - 50 t²
        let d = Schedule::parse("200..0@2s").unwrap();
        for (i, t) in times(&d).iter().enumerate() {
            let n = 200.0 * t - 50.0 * t * t;
            assert!((n - i as f64).abs() < 1e-6, "op {i} at {t}: N = {n}");
        }
        assert!((d.ops_until(1.0) - 150.0).abs() < 1e-9);
        assert!((d.rate_at(1.0) - 100.0).abs() < 1e-9);
    }

    #[test]
    fn counts_between_times_match_the_operations_placed_there() {
        let s = Schedule::parse("1000@0.5s,0..3000@1s,500@250ms").unwrap();
        let t = times(&s);
        for (a, b) in [(0.0, 0.3), (0.3, 0.9), (0.9, 1.6), (1.6, 1.75)] {
            let placed = t.iter().filter(|&&x| x >= a && x < b).count() as f64;
            let n = s.ops_until(b) - s.ops_until(a);
            assert!((placed - n).abs() <= 1.0, "[{a},{b}): {placed} against {n}");
        }
        // out-of-order questions still get the right segment
        let mut c = 2;
        assert_eq!(s.time_of(0, &mut c), Some(0.0));
    }

    #[test]
    fn a_file_of_points_joins_them_linearly_and_repeats_make_steps() {
        let s = Schedule::from_points_text(
            "# time rate\n0 100\n10s 100\n10s 300   # a step up\n20 300\n30s 0\n",
        )
        .unwrap();
        assert_eq!(s.segments().len(), 3);
        assert_eq!(s.duration(), Duration::from_secs(30));
        assert_eq!(s.total_ops(), 1000.0 + 3000.0 + 1500.0);
        assert_eq!(s.rate_at(25.0), 150.0);
        for (text, want) in [
            (
                "5 100\n10 200\n",
                "line 1 of the schedule file: the first time is 5 s",
            ),
            (
                "0 100\n10 200\n5 100\n",
                "line 3 of the schedule file: time 5 s comes before",
            ),
            (
                "0 100 7\n",
                "line 1 of the schedule file: '0 100 7' is not a pair",
            ),
            (
                "0 fast\n",
                "line 1 of the schedule file: 'fast' is not a rate",
            ),
            ("0 100\n", "no time in it"),
        ] {
            let e = Schedule::from_points_text(text).unwrap_err().to_string();
            assert!(e.contains(want), "{text:?}: {e}");
        }
    }

    #[test]
    fn steps_share_straddling_intervals_by_overlap() {
        let s = Schedule::parse("100@1s,300@1s").unwrap();
        let point = |t_s: f64, ops: u64, warmup: bool| super::super::IntervalPoint {
            index: 0,
            t_s,
            length_s: 0.8,
            warmup,
            ops,
            errors: 0,
            not_found: 0,
            duplicate_key: 0,
            ops_per_sec: ops as f64 / 0.8,
            late: 0,
            client_cpu_cores: 0.0,
            intended_ops_per_sec: None,
            per_op: Vec::new(),
        };
        // intervals (0,0.8] (0.8,1.6] (1.6,2.4]; the warm-up point is left out
        let series = [
            point(0.0, 999, true),
            point(0.8, 80, false),
            point(1.6, 160, false),
            point(2.4, 120, false),
        ];
        let st = s.steps(&series);
        assert_eq!(st.len(), 2);
        assert!((st[0].operations - (80.0 + 40.0)).abs() < 1e-9);
        assert!((st[1].operations - (120.0 + 60.0)).abs() < 1e-9, "{st:?}");
        assert_eq!(st[1].intended_operations, 300.0);
        assert!((st[0].achieved_ops_per_sec - 120.0).abs() < 1e-9);
    }

    #[test]
    fn a_warm_up_runs_at_the_first_rate() {
        let s = Schedule::parse("100@1s,200@1s")
            .unwrap()
            .preceded_by(Duration::from_millis(500));
        assert_eq!(s.total_ops(), 350.0);
        let mut c = 0;
        assert!((s.time_of(50, &mut c).unwrap() - 0.5).abs() < 1e-12);
        assert!((s.time_of(150, &mut c).unwrap() - 1.5).abs() < 1e-12);
    }

    #[test]
    fn bad_schedules_say_what_to_write() {
        for (text, want) in [
            ("1000", "is not a rate step"),
            ("1000@30", "has no unit"),
            ("fast@30s", "'fast' is not a rate"),
            ("-5@1s", "'-5' is not a rate"),
            ("100..@1s", "'' is not a rate"),
            ("100@0s", "no time in it"),
            ("0@10s", "schedules no operation"),
            (
                "file:/nonexistent/x",
                "cannot read the schedule file /nonexistent/x",
            ),
        ] {
            let e = Schedule::parse(text).unwrap_err().to_string();
            assert!(e.contains(want), "{text}: {e}");
        }
    }
}
