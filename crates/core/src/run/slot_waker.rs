//! The wakers of a worker's slots ([`super::slots::Slots`]). A pipelined
//! call clones its slot's waker, and the connection's reader wakes it with
//! the reply: with `Arc`-counted wakers (futures' `ArcWake`) that was three
//! locked instructions an operation (the clone's count, the wake's bit, the
//! drop's count), each ~20 cycles on the development host: the `lock or`
//! alone held 4% of a pipelined Redis GET's client CPU in `perf`. Here the
//! thread that polls the slots, while it polls them, counts and marks with
//! plain instructions; any other thread, or this one outside the poll
//! (tokio's reactor between rounds), takes the atomic way.
use futures_util::task::AtomicWaker;
use std::cell::Cell;
use std::ptr::NonNull;
use std::sync::atomic::{fence, AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::task::{RawWaker, RawWakerVTable, Waker};

thread_local! {
    /// The wakers whose slots this thread is polling now, if any.
    static POLLING: Cell<*const Shared> = const { Cell::new(std::ptr::null()) };
}

/// The owner's share of the count: far above any number of clones, so the
/// atomic count cannot reach zero while the owner lives, whichever way the
/// clones are counted and dropped.
const OWNER: usize = 1 << (usize::BITS - 2);

struct Shared {
    /// Slots woken from another thread, or outside the poll: one bit each.
    bits: Box<[AtomicU64]>,
    /// Slots woken by the polling thread in its poll.
    local: Box<[Cell<u64>]>,
    /// Who polls the slots, woken when a slot is woken outside the poll.
    parent: AtomicWaker,
    /// The owner is polling: a slot woken now is polled in this round, and
    /// waking the runtime would cost it an empty round.
    polling: AtomicBool,
    /// References counted atomically, the owner's `OWNER` among them.
    refs: AtomicUsize,
    /// References counted by the polling thread in its poll (negative when
    /// it dropped more clones than it made).
    local_refs: Cell<isize>,
    /// Each slot's waker points at its seat.
    seats: Box<[Seat]>,
    /// Counts frees, for the tests.
    #[cfg(test)]
    freed: std::sync::Arc<AtomicUsize>,
}

#[cfg(test)]
impl Drop for Shared {
    fn drop(&mut self) {
        self.freed.fetch_add(1, Ordering::SeqCst);
    }
}

struct Seat {
    shared: *const Shared,
    index: usize,
}

/// Whether this thread is polling `s`'s slots now: only then may it touch
/// `local` and `local_refs`, which no other thread does.
#[inline(always)]
fn in_poll(s: *const Shared) -> bool {
    POLLING.with(|p| p.get() == s)
}

static VTABLE: RawWakerVTable = RawWakerVTable::new(clone, wake, wake_by_ref, drop_waker);

/// The seat a waker's `data` points at, and its `Shared`.
///
/// # Safety
/// `data` is a seat of a live `Shared`: every waker holds a reference,
/// counted at its clone (or the owner's, for the wakers
/// [`Polling::waker`] lends).
unsafe fn seat<'a>(data: *const ()) -> (&'a Seat, &'a Shared) {
    // SAFETY: as the caller promises, the seat and its `Shared` are alive.
    unsafe {
        let seat = &*data.cast::<Seat>();
        (seat, &*seat.shared)
    }
}

// The vtable's functions: `data` is always a waker's, so `seat` may take it.

unsafe fn clone(data: *const ()) -> RawWaker {
    // SAFETY: a waker's data.
    let (seat, s) = unsafe { seat(data) };
    if in_poll(seat.shared) {
        s.local_refs.set(s.local_refs.get() + 1);
    } else {
        s.refs.fetch_add(1, Ordering::Relaxed);
    }
    RawWaker::new(data, &VTABLE)
}

unsafe fn wake(data: *const ()) {
    // SAFETY: a waker's data; the wake comes before the drop of its count.
    unsafe {
        wake_by_ref(data);
        drop_waker(data);
    }
}

unsafe fn wake_by_ref(data: *const ()) {
    // SAFETY: a waker's data.
    let (seat, s) = unsafe { seat(data) };
    let (word, bit) = (seat.index / 64, 1u64 << (seat.index % 64));
    if in_poll(seat.shared) {
        s.local[word].set(s.local[word].get() | bit);
    } else {
        s.bits[word].fetch_or(bit, Ordering::SeqCst);
        if !s.polling.load(Ordering::SeqCst) {
            s.parent.wake();
        }
    }
}

unsafe fn drop_waker(data: *const ()) {
    // SAFETY: a waker's data.
    let (seat, s) = unsafe { seat(data) };
    if in_poll(seat.shared) {
        s.local_refs.set(s.local_refs.get() - 1);
    } else {
        // SAFETY: this waker's reference, counted atomically or by a
        // poll that has ended (the owner's drop moved that count over).
        unsafe { release(seat.shared, 1) }
    }
}

/// Drops `n` atomically counted references; frees `s` with the last.
///
/// # Safety
/// The caller holds `n` references to a live `s` and uses none after.
unsafe fn release(s: *const Shared, n: usize) {
    // SAFETY: alive while the caller's references are counted.
    let refs = unsafe { &(*s).refs };
    if refs.fetch_sub(n, Ordering::Release) == n {
        // every other reference's last use happened before the free
        fence(Ordering::Acquire);
        // SAFETY: the last reference: made by `Box::leak` in `Wakers::new`.
        drop(unsafe { Box::from_raw(s.cast_mut()) });
    }
}

/// The wakers of `n` slots, every slot woken to start; owned by the joiner.
pub(super) struct Wakers {
    shared: NonNull<Shared>,
}

impl Wakers {
    pub(super) fn new(n: usize) -> Self {
        let shared = Box::new(Shared {
            bits: (0..n.div_ceil(64))
                .map(|w| {
                    let left = n - w * 64;
                    AtomicU64::new(if left >= 64 { !0 } else { (1 << left) - 1 })
                })
                .collect(),
            local: (0..n.div_ceil(64)).map(|_| Cell::new(0)).collect(),
            parent: AtomicWaker::new(),
            polling: AtomicBool::new(false),
            refs: AtomicUsize::new(OWNER),
            local_refs: Cell::new(0),
            seats: Box::new([]),
            #[cfg(test)]
            freed: Default::default(),
        });
        let shared = NonNull::from(Box::leak(shared));
        let seats = (0..n)
            .map(|index| Seat {
                shared: shared.as_ptr(),
                index,
            })
            .collect();
        // SAFETY: not shared yet: no waker points at it.
        unsafe { (*shared.as_ptr()).seats = seats };
        Wakers { shared }
    }

    fn shared(&self) -> &Shared {
        // SAFETY: the owner's reference keeps it alive.
        unsafe { self.shared.as_ref() }
    }

    pub(super) fn words(&self) -> usize {
        self.shared().bits.len()
    }

    /// Starts a poll of the slots on this thread, until the guard drops
    /// (unwinding included): wakes from this thread are counted plainly.
    pub(super) fn polling(&mut self, parent: &Waker) -> Polling<'_> {
        let s = self.shared();
        s.parent.register(parent);
        s.polling.store(true, Ordering::SeqCst);
        let before = POLLING.with(|p| p.replace(self.shared.as_ptr()));
        Polling {
            wakers: self,
            before,
        }
    }

    /// Whether any slot is woken and not yet taken.
    pub(super) fn any_woken(&self) -> bool {
        let s = self.shared();
        s.local.iter().any(|w| w.get() != 0) || s.bits.iter().any(|b| b.load(Ordering::SeqCst) != 0)
    }
}

impl Drop for Wakers {
    fn drop(&mut self) {
        // the plain count joins the atomic one; the owner's share goes:
        // the clones still alive keep the rest until their own drop
        let local = self.shared().local_refs.replace(0);
        let owner_and_local = OWNER.wrapping_sub(local as usize);
        let s = self.shared.as_ptr();
        // SAFETY: the owner's reference is still counted.
        unsafe { release(s, owner_and_local) }
    }
}

/// A poll of the slots in progress on this thread.
pub(super) struct Polling<'a> {
    wakers: &'a mut Wakers,
    before: *const Shared,
}

impl Polling<'_> {
    /// Takes word `w`'s woken slots.
    #[inline]
    pub(super) fn take(&self, w: usize) -> u64 {
        let s = self.wakers.shared();
        let theirs = if s.bits[w].load(Ordering::Relaxed) != 0 {
            s.bits[w].swap(0, Ordering::SeqCst)
        } else {
            0
        };
        s.local[w].take() | theirs
    }

    /// Whether a slot of word `w` was woken since it was last taken.
    #[inline]
    pub(super) fn woken(&self, w: usize) -> bool {
        let s = self.wakers.shared();
        s.local[w].get() != 0 || s.bits[w].load(Ordering::Relaxed) != 0
    }

    /// Marks `bits` of word `w` woken again, for the next round.
    pub(super) fn put_back(&self, w: usize, bits: u64) {
        let s = self.wakers.shared();
        s.local[w].set(s.local[w].get() | bits);
    }

    /// Slot `i`'s waker, lent for one poll: a clone of it is counted, the
    /// loan itself is the owner's.
    #[inline]
    pub(super) fn waker(&self, i: usize) -> std::mem::ManuallyDrop<Waker> {
        let seat: *const Seat = &self.wakers.shared().seats[i];
        // SAFETY: the seat lives as long as the owner's reference; the
        // loan is never dropped, so it takes no count of its own.
        std::mem::ManuallyDrop::new(unsafe { Waker::from_raw(RawWaker::new(seat.cast(), &VTABLE)) })
    }
}

impl Drop for Polling<'_> {
    fn drop(&mut self) {
        POLLING.with(|p| p.set(self.before));
        // a wake after this store wakes the runtime; one before it set a bit
        self.wakers.shared().polling.store(false, Ordering::SeqCst);
    }
}

// SAFETY: the owner and its clones may move to other threads: a thread
// touches the plain fields only while it polls (`in_poll`), and the owner
// polls from one thread at a time (`&mut`).
unsafe impl Send for Wakers {}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn noop() -> Waker {
        futures_util::task::noop_waker()
    }

    /// How many references the owner's `Shared` has beside its own.
    fn clones(w: &Wakers) -> isize {
        let s = w.shared();
        s.refs.load(Ordering::SeqCst) as isize - OWNER as isize + s.local_refs.get()
    }

    #[test]
    fn clones_counted_either_way_free_the_wakers_once_after_the_last() {
        let mut w = Wakers::new(3);
        let freed = w.shared().freed.clone();
        // made in the poll (plain count), one dropped outside it (atomic)
        let (kept, moved) = {
            let p = w.polling(&noop());
            let a = (*p.waker(0)).clone();
            let b = (*p.waker(1)).clone();
            let c = (*p.waker(2)).clone();
            drop(c);
            (a, b)
        };
        assert_eq!(clones(&w), 2);
        // made outside (atomic), dropped in the poll (plain)
        let outside = (*w.polling(&noop()).waker(2)).clone();
        {
            let _p = w.polling(&noop());
            drop(outside);
        }
        assert_eq!(clones(&w), 2);
        drop(w);
        // the owner is gone; its clones keep the wakers, on any thread
        assert_eq!(freed.load(Ordering::SeqCst), 0);
        std::thread::spawn(move || {
            moved.wake_by_ref();
            moved.wake();
        })
        .join()
        .unwrap();
        assert_eq!(freed.load(Ordering::SeqCst), 0);
        drop(kept);
        assert_eq!(freed.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_wake_in_the_poll_is_taken_there_and_one_outside_wakes_the_parent() {
        struct Flag(AtomicBool);
        impl futures_util::task::ArcWake for Flag {
            fn wake_by_ref(f: &Arc<Self>) {
                f.0.store(true, Ordering::SeqCst);
            }
        }
        let flag = Arc::new(Flag(AtomicBool::new(false)));
        let parent = futures_util::task::waker(flag.clone());
        let mut w = Wakers::new(70);
        {
            // every slot starts woken
            let p = w.polling(&parent);
            assert_eq!(p.take(0), !0);
            assert_eq!(p.take(1), (1 << 6) - 1);
            assert!(!p.woken(1));
            // slot 65 wakes slot 66 in the poll: no round of the runtime
            p.waker(66).wake_by_ref();
            assert!(p.woken(1));
            assert_eq!(p.take(1), 1 << 2);
        }
        assert!(!flag.0.load(Ordering::SeqCst));
        assert!(!w.any_woken());
        // the same slot woken outside the poll, by this thread or another
        let waker = (*w.polling(&parent).waker(66)).clone();
        waker.wake_by_ref();
        assert!(flag.0.load(Ordering::SeqCst));
        assert!(w.any_woken());
        flag.0.store(false, Ordering::SeqCst);
        let p = w.polling(&parent);
        assert_eq!(p.take(1), 1 << 2);
        std::thread::spawn(move || waker.wake()).join().unwrap();
        // woken while polled: taken in this round, the parent left alone
        assert!(!flag.0.load(Ordering::SeqCst));
        assert_eq!(p.take(1), 1 << 2);
    }

    #[test]
    fn a_poll_nested_in_a_poll_counts_only_its_own_wakers_plainly() {
        let mut outer = Wakers::new(1);
        let mut inner = Wakers::new(1);
        let p = outer.polling(&noop());
        let from_outer = (*p.waker(0)).clone();
        {
            let q = inner.polling(&noop());
            // the outer's waker, in the inner's poll: the atomic way
            let again = from_outer.clone();
            from_outer.wake_by_ref();
            assert_eq!(q.take(0), 1);
            assert!(!q.woken(0));
            drop(again);
        }
        // the outer poll resumes: its own wakes are plain again
        assert_eq!(p.take(0), 1);
        from_outer.wake_by_ref();
        assert_eq!(p.take(0), 1);
        drop(from_outer);
        drop(p);
        assert_eq!(clones(&outer), 0);
        assert_eq!(clones(&inner), 0);
    }
}
