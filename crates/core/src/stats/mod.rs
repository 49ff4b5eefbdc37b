//! Measurement: mergeable latency recorders, percentile summaries, histogram
//! (de)serialization and goodness-of-fit helpers.
pub mod chi2;
pub mod ci;
pub mod recorder;
pub mod summary;
pub mod welch;

pub use recorder::{OpRecorder, Recorder};
pub use summary::{decode_histogram, encode_histogram, new_histogram, Summary};
