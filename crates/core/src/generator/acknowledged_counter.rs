//! YCSB's `AcknowledgedCounterGenerator`: run-phase inserts take numbers from a
//! shared counter, and `limit()` is the highest number below which every insert
//! has been acknowledged. Key choosers never pick a key above `limit()`, so reads
//! never target a record whose insert has not finished (go-ycsb#317).
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};

/// How many inserts may be outstanding (taken but not acknowledged) at once.
pub(crate) const WINDOW: usize = 1 << 20;
const MASK: u64 = (WINDOW as u64) - 1;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("more than {WINDOW} inserts are unacknowledged; lower the concurrency")]
pub(crate) struct WindowFull;

/// Keeps a hot atomic on its own cache line: `next` is written by inserts while
/// every read loads `limit`.
#[repr(align(64))]
#[derive(Debug)]
struct Padded<T>(T);

pub struct AcknowledgedCounter {
    next: Padded<AtomicU64>,
    /// Highest contiguous acknowledged value; -1 before the first when start is 0.
    limit: Padded<AtomicI64>,
    window: Box<[AtomicBool]>,
    /// Try-lock: only one thread advances `limit` at a time, the others move on.
    advancing: AtomicBool,
}

impl std::fmt::Debug for AcknowledgedCounter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AcknowledgedCounter")
            .field("next", &self.next.0)
            .field("limit", &self.limit.0)
            .finish()
    }
}

impl AcknowledgedCounter {
    /// Numbers start at `start`; everything below `start` counts as acknowledged.
    pub fn new(start: u64) -> Self {
        let window = (0..WINDOW).map(|_| AtomicBool::new(false)).collect();
        AcknowledgedCounter {
            next: Padded(AtomicU64::new(start)),
            limit: Padded(AtomicI64::new(start as i64 - 1)),
            window,
            advancing: AtomicBool::new(false),
        }
    }

    #[inline]
    pub fn next(&self) -> u64 {
        self.next.0.fetch_add(1, Ordering::Relaxed)
    }

    /// The next value `next` would hand out: every value below it was issued.
    pub fn issued(&self) -> u64 {
        self.next.0.load(Ordering::Relaxed)
    }

    /// Highest value v such that every value <= v was acknowledged (or -1).
    #[inline]
    pub fn limit(&self) -> i64 {
        self.limit.0.load(Ordering::Acquire)
    }

    /// Marks `value` done and advances the limit over every contiguous done value.
    pub(crate) fn acknowledge(&self, value: u64) -> Result<(), WindowFull> {
        let slot = &self.window[(value & MASK) as usize];
        if slot.swap(true, Ordering::AcqRel) {
            return Err(WindowFull);
        }
        loop {
            if self
                .advancing
                .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_err()
            {
                return Ok(()); // another thread is advancing and will see our slot
            }
            let before = self.limit.0.load(Ordering::Relaxed);
            let mut index = before + 1;
            loop {
                let s = &self.window[(index as u64 & MASK) as usize];
                if !s.load(Ordering::Acquire) || index - before > WINDOW as i64 {
                    break;
                }
                s.store(false, Ordering::Release);
                index += 1;
            }
            self.limit.0.store(index - 1, Ordering::Release);
            self.advancing.store(false, Ordering::Release);
            // A slot acknowledged while we held the lock may be right after the new
            // limit; look again so it is not stranded.
            let next_slot = &self.window[((index as u64) & MASK) as usize];
            if !next_slot.load(Ordering::Acquire) {
                return Ok(());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn limit_advances_only_over_contiguous_acknowledgements() {
        let c = AcknowledgedCounter::new(100);
        assert_eq!(c.limit(), 99);
        let (a, b, d) = (c.next(), c.next(), c.next());
        assert_eq!((a, b, d), (100, 101, 102));
        c.acknowledge(b).unwrap();
        assert_eq!(c.limit(), 99, "100 is still outstanding");
        c.acknowledge(a).unwrap();
        assert_eq!(c.limit(), 101);
        c.acknowledge(d).unwrap();
        assert_eq!(c.limit(), 102);
        assert_eq!(AcknowledgedCounter::new(0).limit(), -1);
    }

    #[test]
    fn concurrent_acknowledgements_reach_the_end() {
        let c = Arc::new(AcknowledgedCounter::new(0));
        let hs: Vec<_> = (0..4)
            .map(|_| {
                let c = c.clone();
                std::thread::spawn(move || {
                    for _ in 0..50_000 {
                        let v = c.next();
                        c.acknowledge(v).unwrap();
                        assert!(c.limit() < 200_000);
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(c.limit(), 199_999);
    }

    #[test]
    fn double_acknowledgement_of_an_outstanding_slot_is_reported() {
        let c = AcknowledgedCounter::new(0);
        let _ = c.next();
        let v = c.next();
        c.acknowledge(v).unwrap();
        assert_eq!(c.acknowledge(v), Err(WindowFull));
    }
}
