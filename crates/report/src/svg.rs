//! Inline SVG charts for the HTML report: grouped bars (with confidence-
//! interval whiskers) and lines on linear or logarithmic axes. Every chart has
//! a title, labelled axes with units, and a legend; text is escaped.
use std::fmt::Write as _;

/// Tableau 10: distinguishable, and readable in grey.
pub(crate) const PALETTE: &[&str] = &[
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#bab0ac",
];

const W: f64 = 760.0;
const PLOT_H: f64 = 260.0;
const LEFT: f64 = 78.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 34.0;
const LEGEND_ROW: f64 = 18.0;

pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A number for an axis or a label: `0.25`, `12`, `3.5k`, `1.2M`.
pub fn short(v: f64) -> String {
    let a = v.abs();
    let (x, suffix) = if a >= 1e9 {
        (v / 1e9, "G")
    } else if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e4 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    let s = if x == x.trunc() || x.abs() >= 100.0 {
        format!("{x:.0}")
    } else if x.abs() >= 10.0 {
        format!("{x:.1}")
    } else if x.abs() >= 1.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.3}")
    };
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    };
    format!("{s}{suffix}")
}

/// Ticks of a linear axis from 0 (or `lo`) to at least `hi`: about five, at
/// 1, 2, 2.5 or 5 times a power of ten.
pub(crate) fn linear_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let hi = if hi > lo { hi } else { lo + 1.0 };
    let raw = (hi - lo) / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let start = (lo / step).floor() * step;
    let mut ticks = Vec::new();
    let mut t = start;
    while ticks.len() < 50 {
        ticks.push(t);
        if t >= hi - step * 1e-9 {
            break;
        }
        t += step;
    }
    ticks
}

/// Decades covering [lo, hi] (both > 0).
pub(crate) fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let lo = lo.max(f64::MIN_POSITIVE);
    let a = lo.log10().floor() as i32;
    let b = (hi.max(lo * 10.0)).log10().ceil() as i32;
    (a..=b.max(a + 1)).map(|e| 10f64.powi(e)).collect()
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct Axis {
    lo: f64,
    hi: f64,
    log: bool,
}

impl Axis {
    fn new(lo: f64, hi: f64, log: bool) -> (Axis, Vec<f64>) {
        let ticks = if log {
            log_ticks(lo, hi)
        } else {
            linear_ticks(lo, hi)
        };
        let axis = Axis {
            lo: ticks[0],
            hi: *ticks.last().unwrap_or(&1.0),
            log,
        };
        (axis, ticks)
    }

    /// 0..1 along the axis.
    fn frac(&self, v: f64) -> f64 {
        if self.log {
            let v = v.max(self.lo);
            (v.log10() - self.lo.log10()) / (self.hi.log10() - self.lo.log10())
        } else {
            (v - self.lo) / (self.hi - self.lo)
        }
    }
}

fn legend(out: &mut String, names: &[(String, &str, bool)], y0: f64) -> f64 {
    let mut x = LEFT;
    let mut y = y0;
    for (name, color, dashed) in names {
        let w = 26.0 + 6.5 * name.chars().count().min(48) as f64;
        if x + w > W - RIGHT && x > LEFT {
            x = LEFT;
            y += LEGEND_ROW;
        }
        if *dashed {
            let _ = write!(
                out,
                r#"<line x1="{x}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="{color}" stroke-width="2" stroke-dasharray="4 3"/>"#,
                y - 4.0,
                x + 16.0,
                y - 4.0
            );
        } else {
            let _ = write!(
                out,
                r#"<rect x="{x}" y="{:.1}" width="12" height="10" fill="{color}"/>"#,
                y - 9.0
            );
        }
        let _ = write!(
            out,
            r#"<text x="{:.1}" y="{y:.1}" font-size="11">{}</text>"#,
            x + 18.0,
            escape(&shorten(name, 48))
        );
        x += w;
    }
    y + LEGEND_ROW
}

/// `name` in at most `max` characters: a long one keeps its start and its
/// end, where the legends put what tells lines of one target apart (the
/// operation, "service time").
pub(crate) fn shorten(name: &str, max: usize) -> String {
    let n = name.chars().count();
    if n <= max {
        return name.to_string();
    }
    let tail = (max - 1) / 2;
    let head = max - 1 - tail;
    let start: String = name.chars().take(head).collect();
    let end: String = name.chars().skip(n - tail).collect();
    format!("{start}…{end}")
}

fn legend_height(names: &[(String, &str, bool)]) -> f64 {
    let mut s = String::new();
    legend(&mut s, names, 0.0)
}

fn open_svg(out: &mut String, h: f64, title: &str) {
    let _ = write!(
        out,
        r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {h:.0}" width="{W}" height="{h:.0}" role="img" font-family="sans-serif"><title>{}</title><rect width="100%" height="100%" fill="#fff"/><text x="{LEFT}" y="20" font-size="14" font-weight="bold">{}</text>"##,
        escape(title),
        escape(title)
    );
}

fn y_axis(out: &mut String, axis: &Axis, ticks: &[f64], label: &str, fmt: &dyn Fn(f64) -> String) {
    let bottom = TOP + PLOT_H;
    for t in ticks {
        let y = bottom - axis.frac(*t) * PLOT_H;
        let _ = write!(
            out,
            r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#e5e5e5"/><text x="{:.1}" y="{:.1}" font-size="11" text-anchor="end">{}</text>"##,
            W - RIGHT,
            LEFT - 6.0,
            y + 4.0,
            escape(&fmt(*t))
        );
    }
    let _ = write!(
        out,
        r##"<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{bottom}" stroke="#333"/><text transform="translate(16 {:.1}) rotate(-90)" font-size="12" text-anchor="middle">{}</text>"##,
        TOP + PLOT_H / 2.0,
        escape(label)
    );
}

/// Bars per group, one per series, with optional whiskers (± half-width).
#[derive(Debug, Clone, Default)]
pub(crate) struct BarChart {
    pub title: String,
    /// With its unit, e.g. "throughput (ops/s)".
    pub y_label: String,
    pub groups: Vec<String>,
    pub series: Vec<BarSeries>,
    pub log: bool,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct BarSeries {
    pub name: String,
    /// One value per group.
    pub values: Vec<Option<f64>>,
    pub errors: Vec<Option<f64>>,
}

impl BarChart {
    pub(crate) fn render(&self) -> String {
        let names: Vec<(String, &str, bool)> = self
            .series
            .iter()
            .enumerate()
            .map(|(i, s)| (s.name.clone(), PALETTE[i % PALETTE.len()], false))
            .collect();
        let h = TOP + PLOT_H + 44.0 + legend_height(&names);
        let mut out = String::new();
        open_svg(&mut out, h, &self.title);
        let vals = || {
            self.series.iter().flat_map(|s| {
                s.values.iter().enumerate().filter_map(|(i, v)| {
                    v.map(|v| v + s.errors.get(i).copied().flatten().unwrap_or(0.0))
                })
            })
        };
        let hi = vals().fold(0.0, f64::max);
        let lo_pos = vals().filter(|v| *v > 0.0).fold(f64::INFINITY, f64::min);
        let (axis, ticks) = if self.log && lo_pos.is_finite() {
            Axis::new(lo_pos, hi, true)
        } else {
            Axis::new(0.0, hi, false)
        };
        y_axis(&mut out, &axis, &ticks, &self.y_label, &short);
        let bottom = TOP + PLOT_H;
        let plot_w = W - LEFT - RIGHT;
        let gw = plot_w / self.groups.len().max(1) as f64;
        let n = self.series.len().max(1) as f64;
        let bw = (gw * 0.8 / n).min(48.0);
        for (g, group) in self.groups.iter().enumerate() {
            let gx = LEFT + g as f64 * gw + (gw - bw * n) / 2.0;
            for (k, s) in self.series.iter().enumerate() {
                let Some(v) = s.values.get(g).copied().flatten() else {
                    continue;
                };
                let top = bottom - axis.frac(v).clamp(0.0, 1.0) * PLOT_H;
                let x = gx + k as f64 * bw;
                let _ = write!(
                    out,
                    r#"<rect x="{x:.1}" y="{top:.1}" width="{:.1}" height="{:.1}" fill="{}"><title>{}: {}: {}</title></rect>"#,
                    (bw - 2.0).max(1.0),
                    (bottom - top).max(0.0),
                    PALETTE[k % PALETTE.len()],
                    escape(&s.name),
                    escape(group),
                    short(v)
                );
                if let Some(e) = s.errors.get(g).copied().flatten().filter(|e| *e > 0.0) {
                    let y1 = bottom - axis.frac(v + e).clamp(0.0, 1.0) * PLOT_H;
                    let y2 = bottom - axis.frac((v - e).max(axis.lo)).clamp(0.0, 1.0) * PLOT_H;
                    let cx = x + (bw - 2.0) / 2.0;
                    let _ = write!(
                        out,
                        r##"<path d="M{cx:.1} {y1:.1}V{y2:.1}M{:.1} {y1:.1}h6M{:.1} {y2:.1}h6" stroke="#222" fill="none"/>"##,
                        cx - 3.0,
                        cx - 3.0
                    );
                }
            }
            let label: String = group.chars().take((gw / 6.5) as usize).collect();
            let _ = write!(
                out,
                r#"<text x="{:.1}" y="{:.1}" font-size="11" text-anchor="middle">{}</text>"#,
                LEFT + g as f64 * gw + gw / 2.0,
                bottom + 16.0,
                escape(&label)
            );
        }
        let _ = write!(
            out,
            r##"<line x1="{LEFT}" y1="{bottom}" x2="{:.1}" y2="{bottom}" stroke="#333"/>"##,
            W - RIGHT
        );
        legend(&mut out, &names, bottom + 40.0);
        out.push_str("</svg>");
        out
    }
}

/// Lines through points, on linear or log axes.
#[derive(Debug, Clone, Default)]
pub(crate) struct LineChart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub lines: Vec<Line>,
    pub x_log: bool,
    pub y_log: bool,
    /// Formats the x axis's tick labels (default: `short`).
    pub x_fmt: Option<fn(f64) -> String>,
    pub y_fmt: Option<fn(f64) -> String>,
    /// Vertical marks at x with a label (faults on a time axis).
    pub marks: Vec<(f64, String)>,
    /// Each line drawn as a band on top of the ones before it (wait events
    /// adding up to the sessions waiting), on a linear y axis.
    pub stacked: bool,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Line {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    pub dashed: bool,
    /// Draw a dot at every point.
    pub markers: bool,
}

impl LineChart {
    pub(crate) fn render(&self) -> String {
        let names: Vec<(String, &str, bool)> = self
            .lines
            .iter()
            .enumerate()
            .map(|(i, l)| (l.name.clone(), PALETTE[i % PALETTE.len()], l.dashed))
            .collect();
        let h = TOP + PLOT_H + 44.0 + legend_height(&names);
        let mut out = String::new();
        open_svg(&mut out, h, &self.title);
        let bands = self.stacked.then(|| stack(&self.lines));
        let tops: Vec<Line>;
        let lines = match &bands {
            Some(b) => {
                tops = b
                    .iter()
                    .zip(&self.lines)
                    .map(|(band, l)| Line {
                        points: band.iter().map(|&(x, _, hi)| (x, hi)).collect(),
                        ..l.clone()
                    })
                    .collect();
                &tops
            }
            None => &self.lines,
        };
        let pts = || lines.iter().flat_map(|l| l.points.iter().copied());
        let ok = |v: f64, log: bool| v.is_finite() && (!log || v > 0.0);
        let xs: Vec<f64> = pts().map(|p| p.0).filter(|v| ok(*v, self.x_log)).collect();
        let ys: Vec<f64> = pts().map(|p| p.1).filter(|v| ok(*v, self.y_log)).collect();
        let range = |v: &[f64], log: bool| {
            let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            if !lo.is_finite() {
                return if log { (1.0, 10.0) } else { (0.0, 1.0) };
            }
            if log {
                (lo, hi)
            } else {
                (lo.min(0.0), hi)
            }
        };
        let (xlo, xhi) = range(&xs, self.x_log);
        let (ylo, yhi) = range(&ys, self.y_log);
        let (xa, xt) = Axis::new(xlo, xhi, self.x_log);
        let (ya, yt) = Axis::new(ylo, yhi, self.y_log);
        let yf = self.y_fmt.unwrap_or(short);
        y_axis(&mut out, &ya, &yt, &self.y_label, &yf);
        let bottom = TOP + PLOT_H;
        let plot_w = W - LEFT - RIGHT;
        let xf = self.x_fmt.unwrap_or(short);
        for t in &xt {
            let x = LEFT + xa.frac(*t) * plot_w;
            let _ = write!(
                out,
                r##"<line x1="{x:.1}" y1="{bottom}" x2="{x:.1}" y2="{:.1}" stroke="#333"/><text x="{x:.1}" y="{:.1}" font-size="11" text-anchor="middle">{}</text>"##,
                bottom + 4.0,
                bottom + 16.0,
                escape(&xf(*t))
            );
        }
        let _ = write!(
            out,
            r##"<line x1="{LEFT}" y1="{bottom}" x2="{:.1}" y2="{bottom}" stroke="#333"/><text x="{:.1}" y="{:.1}" font-size="12" text-anchor="middle">{}</text>"##,
            W - RIGHT,
            LEFT + plot_w / 2.0,
            bottom + 32.0,
            escape(&self.x_label)
        );
        for (i, band) in bands.iter().flatten().enumerate() {
            // the band between the lines below and this one's top
            let mut d = String::new();
            let at = |x: f64, y: f64| {
                (
                    LEFT + xa.frac(x).clamp(0.0, 1.0) * plot_w,
                    bottom - ya.frac(y).clamp(0.0, 1.0) * PLOT_H,
                )
            };
            for &(x, _, hi) in band {
                let (px, py) = at(x, hi);
                let _ = write!(d, "{}{px:.1} {py:.1}", if d.is_empty() { "M" } else { "L" });
            }
            for &(x, lo, _) in band.iter().rev() {
                let (px, py) = at(x, lo);
                let _ = write!(d, "L{px:.1} {py:.1}");
            }
            if !d.is_empty() {
                let _ = write!(
                    out,
                    r#"<path d="{d}Z" fill="{}" fill-opacity="0.55" stroke="none"><title>{}</title></path>"#,
                    PALETTE[i % PALETTE.len()],
                    escape(&self.lines[i].name)
                );
            }
        }
        for (i, l) in lines.iter().enumerate() {
            let color = PALETTE[i % PALETTE.len()];
            let mut d = String::new();
            let mut dots = String::new();
            for &(x, y) in &l.points {
                if !ok(x, self.x_log) || !ok(y, self.y_log) {
                    continue;
                }
                let px = LEFT + xa.frac(x).clamp(0.0, 1.0) * plot_w;
                let py = bottom - ya.frac(y).clamp(0.0, 1.0) * PLOT_H;
                let _ = write!(d, "{}{px:.1} {py:.1}", if d.is_empty() { "M" } else { "L" });
                if l.markers {
                    let _ = write!(
                        dots,
                        r#"<circle cx="{px:.1}" cy="{py:.1}" r="3" fill="{color}"><title>{}: {}, {}</title></circle>"#,
                        escape(&l.name),
                        escape(&xf(x)),
                        escape(&yf(y))
                    );
                }
            }
            if !d.is_empty() {
                let _ = write!(
                    out,
                    r#"<path d="{d}" fill="none" stroke="{color}" stroke-width="1.8"{}><title>{}</title></path>{dots}"#,
                    if l.dashed {
                        r#" stroke-dasharray="5 4""#
                    } else {
                        ""
                    },
                    escape(&l.name)
                );
            }
        }
        for (x, label) in self.marks.iter().filter(|m| ok(m.0, self.x_log)) {
            let px = LEFT + xa.frac(*x).clamp(0.0, 1.0) * plot_w;
            let _ = write!(
                out,
                r##"<g class="mark"><line x1="{px:.1}" y1="{TOP}" x2="{px:.1}" y2="{bottom}" stroke="#c0392b" stroke-width="1.2" stroke-dasharray="3 3"/><text x="{:.1}" y="{:.1}" font-size="10" fill="#c0392b">{}</text><title>{}</title></g>"##,
                px + 3.0,
                TOP + 10.0,
                escape(label),
                escape(label)
            );
        }
        legend(&mut out, &names, bottom + 56.0);
        out.push_str("</svg>");
        out
    }
}

/// Each line's band (x, bottom, top) stacked on the lines before it, at
/// every x any line has (a line without a point at some x adds nothing there).
fn stack(lines: &[Line]) -> Vec<Vec<(f64, f64, f64)>> {
    let mut xs: Vec<f64> = lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.0))
        .filter(|x| x.is_finite())
        .collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    let mut below = vec![0.0; xs.len()];
    lines
        .iter()
        .map(|l| {
            xs.iter()
                .zip(below.iter_mut())
                .map(|(&x, lo)| {
                    let y = l
                        .points
                        .iter()
                        .find(|p| p.0 == x)
                        .map_or(0.0, |p| p.1.max(0.0));
                    let band = (x, *lo, *lo + y);
                    *lo += y;
                    band
                })
                .collect()
        })
        .collect()
}

#[cfg(test)]
#[path = "svg_tests.rs"]
mod tests;
