//! A shared counter handing out consecutive numbers (YCSB `CounterGenerator`):
//! the load phase's key sequence, shared by all workers of one process.
use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Debug)]
pub struct Counter {
    next: AtomicU64,
}

impl Counter {
    pub fn new(start: u64) -> Self {
        Counter {
            next: AtomicU64::new(start),
        }
    }

    #[inline]
    pub fn next(&self) -> u64 {
        self.next.fetch_add(1, Ordering::Relaxed)
    }

    /// The number `next` would hand out.
    pub fn peek(&self) -> u64 {
        self.next.load(Ordering::Relaxed)
    }

    /// Takes the next number if it is below `end`.
    #[inline]
    pub(crate) fn next_below(&self, end: u64) -> Option<u64> {
        self.next
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |v| {
                (v < end).then_some(v + 1)
            })
            .ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn concurrent_counter_hands_out_each_number_once() {
        let c = Arc::new(Counter::new(10));
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let c = c.clone();
                std::thread::spawn(move || {
                    let mut got = Vec::new();
                    while let Some(v) = c.next_below(10_010) {
                        got.push(v);
                    }
                    got
                })
            })
            .collect();
        let mut all: Vec<u64> = handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect();
        all.sort_unstable();
        assert_eq!(all, (10..10_010).collect::<Vec<_>>());
        assert_eq!(c.next(), 10_010);
    }
}
