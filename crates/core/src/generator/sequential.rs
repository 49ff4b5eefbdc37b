//! YCSB's `SequentialGenerator`: walks the range in order and wraps around. The
//! position is shared by all workers, so together they visit keys in order.
use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Debug)]
pub struct Sequential {
    start: u64,
    interval: u64,
    position: AtomicU64,
}

impl Sequential {
    pub fn new(start: u64, end: u64) -> Self {
        Sequential {
            start,
            interval: end - start + 1,
            position: AtomicU64::new(0),
        }
    }

    #[inline]
    pub fn next(&self) -> u64 {
        self.start + self.position.fetch_add(1, Ordering::Relaxed) % self.interval
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walks_in_order_and_wraps() {
        let g = Sequential::new(5, 7);
        let got: Vec<u64> = (0..7).map(|_| g.next()).collect();
        assert_eq!(got, vec![5, 6, 7, 5, 6, 7, 5]);
    }
}
