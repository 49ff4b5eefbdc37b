//! Latency counts on the hot path, in HdrHistogram's bucket layout (lowest
//! value 1, [`SIGNIFICANT_DIGITS`]) as a plain array: a record is an index
//! computation and an add. `hdrhistogram`'s own `record` also checks the
//! range, grows, and keeps the minimum, maximum and total count on every
//! call (about 70 instructions per operation, measured); those follow from
//! the counts when a [`Tally`] is added to a histogram at the hand-over.
use super::summary::SIGNIFICANT_DIGITS;
use hdrhistogram::Histogram;

/// Sub-buckets per bucket, as a power of two: 2 x 10^3 needs 2^11, half of
/// which are new in each bucket past the first.
const HALF_MAGNITUDE: u32 = 10;
const HALF: usize = 1 << HALF_MAGNITUDE;
/// Values under this share bucket 0.
const SUB_MASK: u64 = (2 << HALF_MAGNITUDE) - 1;
/// 64 less the unit magnitude (0) and the sub-bucket magnitude (11).
const LEADING_ZERO_BASE: u32 = 64 - (HALF_MAGNITUDE + 1);

// the layout above is the one `Histogram::new(SIGNIFICANT_DIGITS)` has
const _: () = assert!(SIGNIFICANT_DIGITS == 3);

/// Counts by HdrHistogram index; grows to the largest value recorded (every
/// `u64` has an index, under 56,320).
#[derive(Debug, Clone, Default)]
pub(crate) struct Tally {
    counts: Vec<u64>,
    /// Values recorded since the last clear.
    total: u64,
}

/// The index HdrHistogram gives `v`.
#[inline]
fn index_of(v: u64) -> usize {
    let bucket = LEADING_ZERO_BASE - (v | SUB_MASK).leading_zeros();
    let sub = (v >> bucket) as usize;
    (((bucket + 1) as usize) << HALF_MAGNITUDE) + sub - HALF
}

/// The lowest value with index `i`: recorded again, it lands at `i`.
fn value_of(i: usize) -> u64 {
    let bucket = (i >> HALF_MAGNITUDE) as i64 - 1;
    let sub = (i & (HALF - 1)) + HALF;
    if bucket < 0 {
        (sub - HALF) as u64
    } else {
        (sub as u64) << bucket
    }
}

impl Tally {
    #[inline]
    pub(crate) fn record(&mut self, v: u64) {
        let i = index_of(v);
        self.total += 1;
        match self.counts.get_mut(i) {
            Some(c) => *c += 1,
            None => self.grow(i),
        }
    }

    #[cold]
    fn grow(&mut self, i: usize) {
        // to the end of the value's bucket
        self.counts.resize((i | (HALF - 1)) + 1, 0);
        self.counts[i] += 1;
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// Adds the counts to `h`: how many values it could not hold and took
    /// at its maximum instead.
    pub(crate) fn add_to(&self, h: &mut Histogram<u64>) -> u64 {
        if self.is_empty() {
            return 0;
        }
        let mut clamped = 0;
        for (i, &n) in self.counts.iter().enumerate().filter(|(_, n)| **n > 0) {
            let v = value_of(i);
            if h.record_n(v, n).is_err() {
                h.saturating_record_n(v, n);
                clamped += n;
            }
        }
        clamped
    }

    pub(crate) fn clear(&mut self) {
        if !self.is_empty() {
            self.counts.fill(0);
            self.total = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::new_histogram;

    #[test]
    fn a_tally_added_to_a_histogram_equals_recording_there() {
        let mut rng = crate::rng::Rng::new(11);
        let mut values: Vec<u64> = (0..20_000)
            .map(|i| {
                // every magnitude, and the edges of the buckets
                let v = rng.next_u64() >> (rng.next_u64() % 64);
                match i % 4 {
                    0 => v,
                    1 => v | 2047,
                    2 => v & !2047,
                    _ => v.min(5_000_000),
                }
            })
            .collect();
        values.extend([0, 1, 1023, 1024, 2047, 2048, 2049, 4095, 4096, u64::MAX / 4]);
        let (mut direct, mut folded) = (new_histogram(), new_histogram());
        let mut t = Tally::default();
        for &v in &values {
            if direct.record(v).is_err() {
                direct.saturating_record(v);
            }
            t.record(v);
        }
        assert_eq!(t.add_to(&mut folded), 0);
        assert_eq!(folded, direct);
        assert_eq!(folded.len(), values.len() as u64);
        assert_eq!(folded.max(), direct.max());
        assert_eq!(
            folded.value_at_quantile(0.99),
            direct.value_at_quantile(0.99)
        );
    }

    #[test]
    fn indices_follow_the_layout_and_values_map_back() {
        assert_eq!(index_of(0), 0);
        assert_eq!(index_of(2047), 2047);
        assert_eq!(index_of(2048), 2048);
        assert_eq!(index_of(2049), 2048);
        assert_eq!(index_of(4096), 3072);
        assert_eq!(index_of(u64::MAX), 56_319);
        for i in 0..56_320 {
            assert_eq!(index_of(value_of(i)), i, "index {i}");
        }
    }

    #[test]
    fn clear_forgets_and_an_empty_tally_adds_nothing() {
        let mut t = Tally::default();
        t.record(5);
        t.record(1 << 40);
        assert!(!t.is_empty());
        t.clear();
        assert!(t.is_empty());
        let mut h = new_histogram();
        t.add_to(&mut h);
        assert_eq!(h.len(), 0);
        t.record(7);
        t.add_to(&mut h);
        assert_eq!((h.len(), h.max()), (1, 7));
    }

    #[test]
    fn values_beyond_the_histogram_are_counted_as_clamped() {
        let mut t = Tally::default();
        t.record(u64::MAX);
        t.record(3);
        let mut h = new_histogram();
        let clamped = t.add_to(&mut h);
        let mut direct = new_histogram();
        let expect = u64::from(direct.record(u64::MAX).is_err());
        assert_eq!(clamped, expect);
        assert_eq!(h.len(), 2);
    }
}
