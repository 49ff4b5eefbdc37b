//! The values of a write: (field, bytes) pairs in buffers reused between
//! calls, whose random bytes may be owed: made at their first use, in the
//! set's own buffers or straight into a binding's output.
//!
//! A pipelined SET of a 1 KB value made the value in the slot's buffer
//! and copied it into the connection's output: 256 slots' buffers, a
//! quarter of a megabyte written and read again per round of the slots,
//! in a core's 512 KB L2 (cachegrind: 36 misses of its model a SET, 21
//! with the value made where it is sent). A binding that copies values
//! into an output of its own ([`WriteSet::write_entry`]) now has them made
//! there; every other use ([`WriteSet::iter`]) makes them in the set first.
use super::Session;
use crate::rng::{write_bytes, Filler};
use std::cell::{Cell, UnsafeCell};
use std::mem::MaybeUninit;

/// Values to write: (field index, bytes) pairs, buffers reused between calls.
#[derive(Default)]
pub struct WriteSet {
    /// Each entry's field and buffer. The buffers' bytes are written
    /// through `&self` only by `settle`, while owed, and no reference into
    /// them is out then: every method that gives one out settles first,
    /// and a settled set is not written through `&self` again. The set is
    /// not `Sync`, so no other thread reads them meanwhile.
    entries: UnsafeCell<Vec<(usize, Vec<u8>)>>,
    len: usize,
    /// Kept beside the entries, not with the fillers: a set that owes
    /// nothing is not slowed by a line it does not use.
    state: Cell<State>,
    /// Which of `fillers` is at the owed bytes' start; the other is past
    /// them once they are made.
    at: Cell<usize>,
    /// The set's own fillers (no other buffer shares their bytes), made
    /// at its first owing. Each fill reads one and writes the other, so a
    /// value made again (a retry) is the same bytes.
    fillers: Option<Box<[Cell<Filler>; 2]>>,
    /// Whether the stream may leave the set's random values owed (a set
    /// for a session that takes them so, [`Self::owing`]).
    may_owe: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum State {
    /// The bytes are in the entries.
    #[default]
    Settled,
    /// The entries' lengths are set; their bytes are the filler's next.
    Owed,
    /// Owed, and written out (to a binding's output): the other filler is
    /// past them.
    Lent,
}

impl WriteSet {
    /// A set whose random values the stream leaves owed, for a session
    /// that makes them where it sends them ([`Session::TAKES_OWED_VALUES`]);
    /// a default set gets them made in its buffers, before the call.
    pub fn owing() -> Self {
        WriteSet {
            may_owe: true,
            ..WriteSet::default()
        }
    }

    /// A set for sessions of type `S`: [`Self::owing`] when they take
    /// owed values.
    pub fn for_session<S: Session>() -> Self {
        if S::TAKES_OWED_VALUES {
            WriteSet::owing()
        } else {
            WriteSet::default()
        }
    }

    /// Whether the stream may leave the values owed (see [`Self::owing`]).
    #[inline]
    pub(crate) fn may_owe(&self) -> bool {
        self.may_owe
    }

    #[inline]
    pub fn clear(&mut self) {
        if self.state.get() == State::Lent {
            self.at.set(1 - self.at.get());
        }
        self.state.set(State::Settled);
        self.len = 0;
    }

    /// Appends field `field` and returns its buffer, cleared, to fill.
    #[inline]
    pub fn push(&mut self, field: usize) -> &mut Vec<u8> {
        // the owed entries made first: a later fill is of owed ones only
        self.settle();
        let buf = self.push_reuse(field);
        buf.clear();
        buf
    }

    /// Appends field `field` and returns its buffer with the previous call's
    /// contents: a caller that overwrites every byte resizes instead of
    /// clearing, so a value of unchanged length is not zeroed first. The
    /// set owes nothing (the stream pushes after a `clear`).
    #[inline]
    pub(crate) fn push_reuse(&mut self, field: usize) -> &mut Vec<u8> {
        debug_assert_eq!(self.state.get(), State::Settled);
        let entries = self.entries.get_mut();
        if self.len == entries.len() {
            entries.push((field, Vec::new()));
        }
        let e = &mut entries[self.len];
        e.0 = field;
        self.len += 1;
        &mut e.1
    }

    /// The entries pushed since the last `clear` (their buffers sized, not
    /// filled) get random bytes from the set's own filler, made at their
    /// first use; `seed` makes that filler at the set's first owing.
    #[inline]
    pub(crate) fn owe(&mut self, seed: impl FnOnce() -> Filler) {
        debug_assert_eq!(self.state.get(), State::Settled);
        if self.fillers.is_none() {
            let f = seed();
            self.fillers = Some(Box::new([Cell::new(f), Cell::new(f)]));
        }
        self.state.set(State::Owed);
    }

    /// Makes the owed bytes in the entries now (what [`Self::iter`] does
    /// first).
    #[inline]
    fn settle(&self) {
        if self.state.get() != State::Settled {
            self.make();
        }
    }

    #[inline(never)]
    fn make(&self) {
        // SAFETY: owed, so no reference into the entries is out (see
        // `entries`: `settled` is the only giver of lasting ones, and it
        // settles first); this is the one write through `&self`, and
        // nothing it calls reaches the set.
        let entries = unsafe { &mut *self.entries.get() };
        // SAFETY: no other reference to the cell is out (only `make` and
        // `fill` make them, and they end with them).
        let from = unsafe { &mut *self.fillers()[self.at.get()].as_ptr() };
        // in place: the start is not needed again once the bytes are in
        // the set (the other filler, if they were lent, is where this one
        // ends)
        from.fill_all(
            entries[..self.len]
                .iter_mut()
                .map(|(_, v)| v.as_mut_slice()),
        );
        self.state.set(State::Settled);
    }

    /// Runs `fill` with the filler at the owed bytes' start and the other,
    /// which it leaves past them.
    #[inline(always)]
    fn fill(&self, fill: impl FnOnce(&Filler, &mut Filler)) {
        let (fillers, at) = (self.fillers(), self.at.get());
        // SAFETY: two distinct cells, and no reference to either is out:
        // only this function makes them, and they end with it.
        let (from, to) = unsafe { (&*fillers[at].as_ptr(), &mut *fillers[1 - at].as_ptr()) };
        fill(from, to);
    }

    /// The fillers of a set that owes (made at its first owing).
    #[inline(always)]
    fn fillers(&self) -> &[Cell<Filler>; 2] {
        self.fillers
            .as_deref()
            .expect("a set that owes has its fillers")
    }

    /// The values' buffers, to fill in place (the set owes nothing).
    #[inline]
    pub(crate) fn values_mut(&mut self) -> impl Iterator<Item = &mut [u8]> {
        debug_assert_eq!(self.state.get(), State::Settled);
        self.entries.get_mut()[..self.len]
            .iter_mut()
            .map(|(_, v)| v.as_mut_slice())
    }

    /// The entries, settled: no write through `&self` follows while the
    /// reference lives (see `entries`).
    #[inline]
    fn settled(&self) -> &[(usize, Vec<u8>)] {
        self.settle();
        // SAFETY: settled, so nothing writes the entries until `&mut self`.
        unsafe { &(&*self.entries.get())[..self.len] }
    }

    /// Entry `k`'s field and length, its bytes left as they are.
    #[inline]
    fn shape(&self, k: usize) -> (usize, usize) {
        // SAFETY: the reference ends here, before any write (see `entries`).
        let (f, v) = unsafe { &(&*self.entries.get())[..self.len][k] };
        (*f, v.len())
    }

    #[inline]
    pub fn iter(&self) -> impl Iterator<Item = (usize, &[u8])> + Clone {
        self.settled().iter().map(|(f, v)| (*f, v.as_slice()))
    }

    /// Each entry's field and length, owed bytes left owed.
    #[inline]
    pub fn lengths(&self) -> impl Iterator<Item = (usize, usize)> + Clone + '_ {
        (0..self.len).map(|k| self.shape(k))
    }

    /// Writes entry `k`'s bytes (the `k`-th of [`Self::lengths`]) into
    /// `dst`, which is its length, for a binding that copies values into
    /// an output of its own: a lone owed value is made there, not in the
    /// set (the same bytes every time, so a retry sends what the first try
    /// did), anything else is copied.
    ///
    /// # Panics
    /// When `dst` is not entry `k`'s length or there is no entry `k`.
    #[inline]
    pub fn write_entry(&self, k: usize, dst: &mut [MaybeUninit<u8>]) {
        let (_, len) = self.shape(k);
        assert_eq!(dst.len(), len, "entry {k}'s length");
        if self.len == 1 && self.state.get() != State::Settled {
            self.fill(|from, to| from.fill_uninit_into(to, dst));
            self.state.set(State::Lent);
            return;
        }
        write_bytes(dst, &self.settled()[k].1);
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The values' bytes, owed ones included (their lengths are set).
    #[inline]
    pub fn bytes(&self) -> u64 {
        // SAFETY: the reference ends here, before any write (see `entries`).
        let entries = unsafe { &(&*self.entries.get())[..self.len] };
        entries.iter().map(|(_, v)| v.len() as u64).sum()
    }
}

/// A copy with the bytes made (and fillers of its own at its first owing).
impl Clone for WriteSet {
    fn clone(&self) -> Self {
        WriteSet {
            entries: UnsafeCell::new(self.iter().map(|(f, v)| (f, v.to_vec())).collect()),
            len: self.len,
            may_owe: self.may_owe,
            ..WriteSet::default()
        }
    }
}

impl std::fmt::Debug for WriteSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests;
