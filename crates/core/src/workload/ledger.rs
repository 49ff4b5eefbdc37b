//! Which inserts the database did not acknowledge. Every insert is
//! acknowledged unless it lands here, so the hot path records nothing for
//! the common case; `yardstick verify` reads the ledger (from the result's
//! side file) to tell a lost acknowledged write from an insert that failed.
use crate::binding::Status;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Keys kept in memory at most (16 bytes each): past it, only counts grow and
/// verify refuses to judge absent keys.
pub const LEDGER_CAP: usize = 4_000_000;

/// What became of an insert the database did not acknowledge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Fate {
    /// The database said no (an error or a conflict): the record must be absent.
    Failed,
    /// No answer: a timeout, a lost connection, or a call abandoned when the
    /// run stopped. The record may or may not be there.
    Unknown,
}

impl Fate {
    pub fn name(self) -> &'static str {
        match self {
            Fate::Failed => "failed",
            Fate::Unknown => "unknown",
        }
    }

    pub fn parse(s: &str) -> Option<Fate> {
        match s {
            "failed" => Some(Fate::Failed),
            "unknown" => Some(Fate::Unknown),
            _ => None,
        }
    }

    /// Whether a status leaves the insert's effect unknown (the request may
    /// have been applied although no answer came back).
    fn doubtful(status: Status) -> bool {
        matches!(status, Status::Timeout | Status::Unavailable)
    }
}

/// The inserts of one process that did not end acknowledged.
#[derive(Debug, Default)]
pub struct InsertLedger {
    keys: Mutex<Vec<(u64, Fate)>>,
    failed: AtomicU64,
    unknown: AtomicU64,
}

impl InsertLedger {
    /// Notes that the insert of record `keynum` (the key number the key was
    /// built from) ended as `fate`.
    pub fn note(&self, keynum: u64, fate: Fate) {
        match fate {
            Fate::Failed => &self.failed,
            Fate::Unknown => &self.unknown,
        }
        .fetch_add(1, Ordering::Relaxed);
        let mut keys = self.keys.lock().unwrap_or_else(|e| e.into_inner());
        if keys.len() < LEDGER_CAP {
            keys.push((keynum, fate));
        }
    }

    pub fn failed(&self) -> u64 {
        self.failed.load(Ordering::Relaxed)
    }

    pub fn unknown(&self) -> u64 {
        self.unknown.load(Ordering::Relaxed)
    }

    /// Whether every key noted was kept (false past [`LEDGER_CAP`]).
    pub fn complete(&self) -> bool {
        let kept = self.keys.lock().unwrap_or_else(|e| e.into_inner()).len();
        kept as u64 == self.failed() + self.unknown()
    }

    /// The keys noted, sorted by key number; `complete` as [`Self::complete`].
    pub fn keys(&self) -> (Vec<(u64, Fate)>, bool) {
        let mut keys = self.keys.lock().unwrap_or_else(|e| e.into_inner()).clone();
        keys.sort_unstable_by_key(|k| k.0);
        let complete = keys.len() as u64 == self.failed() + self.unknown();
        (keys, complete)
    }
}

/// One insert call (or one batch) in flight. Dropped unsettled - the run
/// stopped or abandoned the call - its keys are unknown; settled with an
/// answer that is not an acknowledgement, failed or unknown by that answer
/// and by whether any earlier attempt went unanswered.
pub(crate) struct Pending<'a> {
    ledger: &'a InsertLedger,
    keynums: &'a [u64],
    doubt: bool,
    fate: Option<Fate>,
}

impl<'a> Pending<'a> {
    pub(crate) fn new(ledger: &'a InsertLedger, keynums: &'a [u64]) -> Self {
        Pending {
            ledger,
            keynums,
            doubt: false,
            fate: Some(Fate::Unknown),
        }
    }

    /// An attempt that will be retried answered `status`.
    pub(crate) fn attempt(&mut self, status: Status) {
        self.doubt |= Fate::doubtful(status);
    }

    /// The last attempt answered `status`. A duplicate key counts as
    /// acknowledged: the database says the record is there (an earlier
    /// attempt that timed out may have written it).
    pub(crate) fn settle(mut self, status: Status) {
        self.fate = match status {
            Status::Ok | Status::DuplicateKey => None,
            s if self.doubt || Fate::doubtful(s) => Some(Fate::Unknown),
            _ => Some(Fate::Failed),
        };
    }
}

impl Drop for Pending<'_> {
    fn drop(&mut self) {
        if let Some(fate) = self.fate {
            for &k in self.keynums {
                self.ledger.note(k, fate);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settled(attempts: &[Status], last: Status) -> (u64, u64) {
        let ledger = InsertLedger::default();
        let mut p = Pending::new(&ledger, &[7, 8]);
        for &a in attempts {
            p.attempt(a);
        }
        p.settle(last);
        (ledger.failed(), ledger.unknown())
    }

    #[test]
    fn answers_decide_the_fate_of_every_key_of_the_call() {
        assert_eq!(settled(&[], Status::Ok), (0, 0));
        assert_eq!(settled(&[Status::Timeout], Status::DuplicateKey), (0, 0));
        assert_eq!(settled(&[], Status::Error), (2, 0));
        assert_eq!(settled(&[], Status::Conflict), (2, 0));
        assert_eq!(settled(&[], Status::Unavailable), (0, 2));
        // an error after an unanswered attempt: that attempt may have written it
        assert_eq!(settled(&[Status::Timeout], Status::Error), (0, 2));
        assert_eq!(settled(&[Status::Conflict], Status::Error), (2, 0));
    }

    #[test]
    fn an_abandoned_call_leaves_its_keys_unknown() {
        let ledger = InsertLedger::default();
        drop(Pending::new(&ledger, &[3]));
        assert_eq!(ledger.keys(), (vec![(3, Fate::Unknown)], true));
    }

    #[test]
    fn keys_come_back_sorted_and_say_when_some_were_not_kept() {
        let ledger = InsertLedger::default();
        ledger.note(9, Fate::Failed);
        ledger.note(2, Fate::Unknown);
        assert_eq!(
            ledger.keys(),
            (vec![(2, Fate::Unknown), (9, Fate::Failed)], true)
        );
        assert_eq!(Fate::parse(Fate::Failed.name()), Some(Fate::Failed));
        assert_eq!(Fate::parse("lost"), None);
        let full = InsertLedger::default();
        full.failed.store(LEDGER_CAP as u64, Ordering::Relaxed);
        full.note(1, Fate::Failed);
        assert!(!full.keys().1, "counts beyond the kept keys");
    }
}
