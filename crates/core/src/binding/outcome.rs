//! What one call returned, in two words. An outcome crosses every layer of
//! futures between a database and the runner; at five words it crossed each
//! through memory, and perf showed those copies stalling the core (a wide
//! load over the narrower stores that had just written it) at null://'s
//! floor. Two words come back from a call in registers.
use super::Status;
use std::fmt;
use std::ptr::NonNull;

/// What one call returned: its status, the records it returned, the payload
/// bytes it moved and, for a failure, the database's own message.
pub struct Outcome {
    /// The status's index in the low byte, the rows above it.
    head: u64,
    tail: Tail,
}

impl Outcome {
    #[inline]
    pub fn ok(rows: u64, bytes: u64) -> Self {
        Self::new(Status::Ok, rows, bytes)
    }

    /// A status without rows, bytes or message.
    #[inline]
    pub fn of(status: Status) -> Self {
        Self::new(status, 0, 0)
    }

    /// Rows beyond 2^56 and bytes beyond 2^63 in one call are held at those
    /// bounds (no call returns that much).
    #[inline]
    pub fn new(status: Status, rows: u64, bytes: u64) -> Self {
        Outcome {
            head: head(status, rows),
            tail: Tail::bytes(bytes),
        }
    }

    #[cold]
    /// A failure and what the database said, cut to one short line
    /// ([`crate::error::shorten`]).
    pub fn failed(status: Status, detail: impl fmt::Display) -> Self {
        let detail = detail.to_string();
        // one allocation when the text is short already (the usual case)
        let detail = match crate::error::shorten(&detail) {
            std::borrow::Cow::Borrowed(_) => detail,
            std::borrow::Cow::Owned(short) => short,
        };
        Outcome {
            head: head(status, 0),
            tail: Tail::detail(detail.into_boxed_str()),
        }
    }

    #[inline]
    pub fn status(&self) -> Status {
        // a match, not `Status::ALL[i]`: the indices are the variants' own
        // values, so it compiles to the byte itself (the table's bounds
        // check and load cost ~10 instructions an operation)
        match self.head & 0xff {
            0 => Status::Ok,
            1 => Status::NotFound,
            2 => Status::DuplicateKey,
            3 => Status::VerifyFailed,
            4 => Status::Conflict,
            5 => Status::Timeout,
            6 => Status::Unavailable,
            7 => Status::Error,
            _ => Status::RolledBack,
        }
    }

    /// Records returned (reads: 0 or 1; scans: rows; batches: records written).
    #[inline]
    pub fn rows(&self) -> u64 {
        self.head >> 8
    }

    /// Payload bytes read or written (none for a failure with a message).
    #[inline]
    pub fn bytes(&self) -> u64 {
        self.tail.bytes_of()
    }

    /// The database's own message for a failure, kept for the first few errors.
    pub fn detail(&self) -> Option<&str> {
        self.tail.detail_of()
    }

    #[inline]
    pub fn set_status(&mut self, status: Status) {
        self.head = head(status, self.rows());
    }

    #[inline]
    pub fn set_rows(&mut self, rows: u64) {
        self.head = head(self.status(), rows);
    }

    /// This outcome with `rows` (a batch's records written before a failure).
    #[inline]
    pub fn with_rows(mut self, rows: u64) -> Self {
        self.set_rows(rows);
        self
    }
}

#[inline]
fn head(status: Status, rows: u64) -> u64 {
    status.index() as u64 | rows.min(u64::MAX >> 8) << 8
}

impl Clone for Outcome {
    fn clone(&self) -> Self {
        Outcome {
            head: self.head,
            tail: match self.detail() {
                Some(d) => Tail::detail(d.into()),
                None => Tail(self.tail.0),
            },
        }
    }
}

impl PartialEq for Outcome {
    fn eq(&self, other: &Self) -> bool {
        self.head == other.head && self.bytes() == other.bytes() && self.detail() == other.detail()
    }
}

impl Eq for Outcome {}

impl fmt::Debug for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Outcome")
            .field("status", &self.status())
            .field("rows", &self.rows())
            .field("bytes", &self.bytes())
            .field("detail", &self.detail())
            .finish()
    }
}

/// A count of bytes (shifted left, the low bit set) or a failure's message
/// (a `Box<Box<str>>`, aligned, so its low bit is clear). Never null: the
/// spare value keeps `Poll<Outcome>` at two words.
struct Tail(NonNull<Box<str>>);

// SAFETY: a Tail is a number or owns a Box<Box<str>>, which is Send.
unsafe impl Send for Tail {}
// SAFETY: a Tail is a number or owns a Box<Box<str>>, which is Sync.
unsafe impl Sync for Tail {}

const _: () = assert!(usize::BITS == 64, "an outcome's bytes fill a 64-bit word");

impl Tail {
    #[inline]
    fn bytes(n: u64) -> Tail {
        let word = std::num::NonZeroUsize::MIN | (n.min(u64::MAX >> 1) << 1) as usize;
        // a number, never dereferenced: no provenance
        Tail(NonNull::without_provenance(word))
    }

    fn detail(text: Box<str>) -> Tail {
        Tail(NonNull::from(Box::leak(Box::new(text))))
    }

    #[inline]
    fn is_count(&self) -> bool {
        self.0.addr().get() & 1 == 1
    }

    #[inline]
    fn bytes_of(&self) -> u64 {
        if self.is_count() {
            (self.0.addr().get() >> 1) as u64
        } else {
            0
        }
    }

    fn detail_of(&self) -> Option<&str> {
        if self.is_count() {
            return None;
        }
        // SAFETY: an even tail is the pointer `detail` leaked, owned by self
        Some(unsafe { &**self.0.as_ref() })
    }
}

impl Drop for Tail {
    #[inline]
    fn drop(&mut self) {
        if !self.is_count() {
            // SAFETY: an even tail is the box `detail` leaked, dropped once here
            drop(unsafe { Box::from_raw(self.0.as_ptr()) });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::task::Poll;

    #[test]
    fn an_outcome_is_two_words_and_so_is_its_poll() {
        assert_eq!(std::mem::size_of::<Outcome>(), 16);
        assert_eq!(std::mem::size_of::<Poll<Outcome>>(), 16);
        assert_eq!(std::mem::size_of::<Option<Outcome>>(), 16);
    }

    #[test]
    fn every_status_rows_and_bytes_come_back_as_given() {
        for s in Status::ALL {
            for (rows, bytes) in [(0, 0), (1, 1000), (u32::MAX as u64 + 7, 1 << 40)] {
                let o = Outcome::new(s, rows, bytes);
                assert_eq!((o.status(), o.rows(), o.bytes()), (s, rows, bytes));
                assert_eq!(o.detail(), None);
            }
        }
        // held at the bounds, never wrapped
        let o = Outcome::ok(u64::MAX, u64::MAX);
        assert_eq!((o.rows(), o.bytes()), (u64::MAX >> 8, u64::MAX >> 1));
    }

    #[test]
    fn a_failure_keeps_its_message_through_clones_and_changes() {
        let mut o = Outcome::failed(Status::Timeout, "server said no");
        assert_eq!(o.status(), Status::Timeout);
        assert_eq!((o.rows(), o.bytes()), (0, 0));
        assert_eq!(o.detail(), Some("server said no"));
        let c = o.clone();
        o.set_rows(3);
        o.set_status(Status::Error);
        assert_eq!((o.status(), o.rows()), (Status::Error, 3));
        assert_eq!(o.detail(), Some("server said no"));
        drop(o);
        assert_eq!(c.detail(), Some("server said no"));
        assert_eq!(c, Outcome::failed(Status::Timeout, "server said no"));
        assert_ne!(c, Outcome::of(Status::Timeout));
        assert_ne!(Outcome::ok(1, 2), Outcome::ok(1, 3));
        let text = format!("{c:?}");
        assert!(
            text.contains("Timeout") && text.contains("server said no"),
            "{text}"
        );
    }
}
