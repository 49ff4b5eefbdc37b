//! What a finished phase prints: the summary in the chosen format and where
//! its result went.
use crate::Format;
use std::path::Path;
use yardstick_core::result::RunResult;

/// The summary in `format`, and where the result is (`None`: it could not
/// be written, which the error that follows says).
pub(super) fn print_summary(format: Format, r: &RunResult, path: Option<&Path>, brief: bool) {
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
            println!("\nresult: {at}");
        }
    }
}
