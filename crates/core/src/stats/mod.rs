//! Measurement: mergeable latency recorders, percentile summaries, histogram
//! (de)serialization and goodness-of-fit helpers.
#[cfg(test)]
pub(crate) mod chi2;
pub mod ci;
pub(crate) mod recorder;
pub mod summary;
pub(crate) mod tally;
pub mod welch;

pub use recorder::OpRecorder;
pub use recorder::Recorder;
pub use summary::{decode_histogram, encode_histogram, new_histogram, Summary, SIGNIFICANT_DIGITS};
