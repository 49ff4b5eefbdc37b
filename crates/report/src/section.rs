//! What every report section is made of, shared by the run sections
//! (`html`) and TPC-C's (`tpcc`): a section's charts and tables, and the
//! number formats they use.
use yardstick_core::stats::ci::mean_ci;

/// A table of the report; the Markdown and CSV exports are these tables.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub id: String,
    pub title: String,
    pub columns: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

/// One section of the report: its charts (SVG) and the tables behind them.
pub(crate) struct Section {
    pub(crate) id: &'static str,
    pub(crate) title: String,
    pub(crate) intro: String,
    pub(crate) charts: Vec<String>,
    pub(crate) tables: Vec<Table>,
}

/// Microseconds for the tables' µs columns, with the digits a
/// sub-microsecond value needs (0.180, not 0.2 or 0).
pub(crate) fn us(ns: f64) -> String {
    if ns >= 100_000.0 {
        format!("{:.0}", ns / 1e3)
    } else if ns >= 1_000.0 {
        format!("{:.1}", ns / 1e3)
    } else {
        format!("{:.3}", ns / 1e3)
    }
}

pub(crate) fn ms_axis(v: f64) -> String {
    crate::svg::short(v)
}

pub(crate) fn pct_axis(v: f64) -> String {
    format!("{}%", crate::svg::short(v))
}

/// Keeps first-seen order.
pub(crate) fn ordered<T: PartialEq + Clone>(items: impl Iterator<Item = T>) -> Vec<T> {
    let mut v: Vec<T> = Vec::new();
    for i in items {
        if !v.contains(&i) {
            v.push(i);
        }
    }
    v
}

/// A mean and its 95% confidence half-width as text, and as numbers.
pub(crate) fn ci_text(x: &[f64], digits: usize) -> (String, String, Option<f64>, Option<f64>) {
    match mean_ci(x, 0.95) {
        None => ("-".into(), "".into(), None, None),
        Some(c) => (
            format!("{:.*}", digits, c.mean),
            c.half_width
                .map(|h| format!("±{:.*}", digits, h))
                .unwrap_or_default(),
            Some(c.mean),
            c.half_width,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn microseconds_keep_the_digits_sub_microsecond_values_need() {
        assert_eq!(us(180.0), "0.180");
        assert_eq!(us(40.0), "0.040");
        assert_eq!(us(12_345.0), "12.3");
        assert_eq!(us(250_000.0), "250");
    }
}
