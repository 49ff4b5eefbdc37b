//! What a finished phase prints: the summary in the chosen format and where
//! its result went.
use crate::Format;
use std::path::Path;
use yardstick_core::result::RunResult;

/// The summary in `format`, and where the result is (`None`: it could not
/// be written, which the error that follows says).
pub(crate) fn print_summary(format: Format, r: &RunResult, path: Option<&Path>, brief: bool) {
    let at = path.map_or_else(|| "not written".into(), |p| p.display().to_string());
    match format {
        Format::Json => {
            if let Ok(s) = serde_json::to_string_pretty(r) {
                println!("{s}");
            }
            eprintln!("result: {at}");
        }
        Format::Ycsb => {
            print!("{}", yardstick_report::ycsb_text(r));
            eprintln!("result: {at}");
        }
        Format::Table if brief => {
            println!(
                "loaded {} records in {:.2} s ({} inserts/s) · result: {at}",
                yardstick_report::fmt::thousands(r.totals.operations),
                r.elapsed_s,
                yardstick_report::fmt::rate(r.totals.ops_per_sec),
            );
        }
        Format::Table => {
            print!("{}", yardstick_report::summary_table(r));
            if let Some(c) = &r.convergence {
                println!("\n{}", convergence_line(c));
            }
            println!("\nresult: {at}");
        }
    }
}

/// `--until`'s outcome in one line: whether it held, and each estimate.
fn convergence_line(c: &yardstick_core::run::converge::Convergence) -> String {
    use yardstick_report::fmt::{latency, rate};
    let estimates: Vec<String> = c
        .estimates
        .iter()
        .map(|e| {
            let value = match &e.op {
                Some(op) => format!("{op} p99 {}", latency(e.mean)),
                None => format!("{} ops/s", rate(e.mean)),
            };
            format!(
                "{value} ±{:.1}% ({} intervals, {:.1} effective)",
                e.relative * 100.0,
                e.intervals,
                e.effective_intervals
            )
        })
        .collect();
    let verdict = if c.reached { "reached" } else { "not reached" };
    format!(
        "until {}: {verdict}; {} (95% confidence)",
        c.until.join(", "),
        estimates.join("; ")
    )
}
