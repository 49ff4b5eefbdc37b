//! Percentile summaries of HdrHistograms, and their portable encoding (V2
//! deflate, base64) so results can be merged and re-analysed exactly.
use base64::Engine;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Latency (ns) or size summary of one histogram.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub count: u64,
    pub min: u64,
    pub max: u64,
    pub mean: f64,
    pub stdev: f64,
    pub p50: u64,
    pub p90: u64,
    pub p95: u64,
    pub p99: u64,
    pub p999: u64,
    pub p9999: u64,
}

impl Summary {
    pub fn of(h: &Histogram<u64>) -> Summary {
        if h.is_empty() {
            return Summary::default();
        }
        Summary {
            count: h.len(),
            min: h.min(),
            max: h.max(),
            mean: h.mean(),
            stdev: h.stdev(),
            p50: h.value_at_quantile(0.50),
            p90: h.value_at_quantile(0.90),
            p95: h.value_at_quantile(0.95),
            p99: h.value_at_quantile(0.99),
            p999: h.value_at_quantile(0.999),
            p9999: h.value_at_quantile(0.9999),
        }
    }
}

/// A new histogram for nanosecond latencies: 3 significant digits, growing as needed.
/// The latency histograms' precision: values kept to 0.1%.
pub const SIGNIFICANT_DIGITS: u8 = 3;

pub fn new_histogram() -> Histogram<u64> {
    let mut h = Histogram::new(SIGNIFICANT_DIGITS).expect("3 significant digits is valid");
    h.auto(true);
    h
}

#[derive(Debug, thiserror::Error)]
#[error("histogram data is corrupt: {0}")]
pub struct HistogramDecodeError(String);

pub fn encode_histogram(h: &Histogram<u64>) -> String {
    let mut buf = Vec::new();
    V2DeflateSerializer::new()
        .serialize(h, &mut buf)
        .expect("serializing into memory cannot fail");
    base64::engine::general_purpose::STANDARD.encode(buf)
}

pub fn decode_histogram(s: &str) -> Result<Histogram<u64>, HistogramDecodeError> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(s)
        .map_err(|e| HistogramDecodeError(e.to_string()))?;
    let mut h: Histogram<u64> = Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .map_err(|e| {
            use hdrhistogram::serialization::DeserializeError as E;
            HistogramDecodeError(match e {
                E::IoError(e) => format!("it ends early ({e})"),
                E::InvalidCookie => "it is not an HdrHistogram".into(),
                E::UnsupportedFeature => "it uses an HdrHistogram feature not supported".into(),
                E::UnsuitableCounterType => "its counts do not fit 64 bits".into(),
                E::InvalidParameters => "its bounds are not valid".into(),
                E::EncodedArrayTooLong => "its counts run past its bounds".into(),
                E::UsizeTypeTooSmall => "it is too large for this machine".into(),
            })
        })?;
    h.auto(true);
    Ok(h)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_and_roundtrip() {
        let mut h = new_histogram();
        for v in 1..=10_000u64 {
            h.record(v * 1000).unwrap();
        }
        let s = Summary::of(&h);
        assert_eq!(s.count, 10_000);
        assert!((s.p50 as f64 - 5_000_000.0).abs() / 5e6 < 0.001);
        assert!((s.p99 as f64 - 9_900_000.0).abs() / 9.9e6 < 0.001);
        let back = decode_histogram(&encode_histogram(&h)).unwrap();
        assert_eq!(Summary::of(&back), s);
        assert!(decode_histogram("not base64!").is_err());
        assert_eq!(Summary::of(&new_histogram()), Summary::default());
    }
}
