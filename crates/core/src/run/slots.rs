//! Joins a worker's slots: polls only the slots that were woken, and lets a
//! slot that yields run again in the same round, after the others. A slot
//! woken by the slot just polled (in its word of 64) runs next: a pipelined
//! connection's reader parses the replies of the connection's other slots
//! into the thread's reply buffers and wakes them; run before the next
//! connection's reader, they use and give back those buffers while they are
//! in cache (run after every reader of the round, up to 200 replies, 200
//! KB, were parsed before the first was used: 29.1 -> 23.2 L2 misses per
//! pipelined Redis GET in cachegrind's model, -5% client CPU paired).
//!
//! Why not `join_all`: past 30 futures it is a `FuturesUnordered`, which
//! hands control back to the runtime as soon as two of its futures wake
//! themselves while polled. A slot yields on purpose (a pipelined call
//! yields once so that the other slots of its connection append their
//! commands before one write takes them all), so with `join_all` every two
//! operations cost a round of the runtime and an `epoll_wait` (measured:
//! 25,029 calls for 50,000 Redis GETs at depth 16). Here a round polls every
//! woken slot, then the ones that woke again, up to twice the number of
//! slots or until tokio's cooperative budget is spent, before it returns
//! to the runtime.
use super::slot_waker::Wakers;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// The slots' futures, run to completion; their outputs in slot order.
pub(crate) struct Slots<F: Future> {
    futures: Vec<Option<Pin<Box<F>>>>,
    outputs: Vec<Option<F::Output>>,
    wakers: Wakers,
    running: usize,
}

impl<F: Future> Slots<F> {
    pub(crate) fn new(futures: impl IntoIterator<Item = F>) -> Self {
        let futures: Vec<_> = futures.into_iter().map(|f| Some(Box::pin(f))).collect();
        let n = futures.len();
        Slots {
            outputs: (0..n).map(|_| None).collect(),
            futures,
            wakers: Wakers::new(n),
            running: n,
        }
    }
}

// only the boxed futures are pinned; outputs are moved out freely
impl<F: Future> Unpin for Slots<F> {}

impl<F: Future> Future for Slots<F> {
    type Output = Vec<F::Output>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let words = this.wakers.words();
        let polling = this.wakers.polling(cx.waker());
        let mut budget = 2 * this.futures.len();
        'round: while this.running > 0 {
            let mut polled_any = false;
            for w in 0..words {
                let mut bits = polling.take(w);
                // slots of this word that woke themselves while polled
                let mut yielded = 0u64;
                while bits != 0 {
                    let i = w * 64 + bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    polled_any = true;
                    let Some(f) = this.futures[i].as_mut() else {
                        continue;
                    };
                    let waker = polling.waker(i);
                    let mut slot_cx = Context::from_waker(&waker);
                    if let Poll::Ready(out) = f.as_mut().poll(&mut slot_cx) {
                        this.futures[i] = None;
                        this.outputs[i] = Some(out);
                        this.running -= 1;
                    }
                    // the slots this one woke in its word (a connection's
                    // reader waking the others it read replies for) run
                    // next, in this pass, while their replies are in cache;
                    // a slot that woke itself (a yield) waits for the next
                    // round, after the others
                    if polling.woken(w) {
                        let woke = polling.take(w);
                        yielded |= woke & (1 << (i % 64));
                        bits |= woke & !yielded;
                    }
                    budget = budget.saturating_sub(1);
                    // tokio's budget spent too: its resources answer
                    // Pending until the runtime has had its turn
                    if budget == 0 || !tokio::task::coop::has_budget_remaining() {
                        // the rest of this word waits for the next round
                        polling.put_back(w, bits | yielded);
                        break 'round;
                    }
                }
                polling.put_back(w, yielded);
            }
            if !polled_any {
                break;
            }
        }
        drop(polling);
        if this.running == 0 {
            return Poll::Ready(this.outputs.iter_mut().filter_map(Option::take).collect());
        }
        if this.wakers.any_woken() {
            // slots still woken: another round, after the runtime's
            cx.waker().wake_by_ref();
        }
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::{Cell, RefCell};
    use std::rc::Rc;
    use std::task::Waker;

    /// Yields `n` times (waking itself), logging each poll.
    async fn yielder(id: usize, n: usize, log: Rc<RefCell<Vec<usize>>>) -> usize {
        for _ in 0..n {
            let mut yielded = false;
            std::future::poll_fn(|cx| {
                log.borrow_mut().push(id);
                if yielded {
                    Poll::Ready(())
                } else {
                    yielded = true;
                    cx.waker().wake_by_ref();
                    Poll::Pending
                }
            })
            .await;
        }
        id * 10
    }

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    #[test]
    fn outputs_come_in_slot_order_and_a_yield_runs_after_the_others() {
        let log = Rc::new(RefCell::new(Vec::new()));
        let slots = Slots::new((0..3).map(|i| yielder(i, 1, log.clone())));
        assert_eq!(runtime().block_on(slots), vec![0, 10, 20]);
        // every slot appends (first poll) before any runs on (second)
        assert_eq!(*log.borrow(), vec![0, 1, 2, 0, 1, 2]);
    }

    /// Slot 1 waits for slot 2, which wakes it and yields; the others log
    /// one poll each. Every poll is logged.
    async fn waker_and_woken(
        id: usize,
        log: Rc<RefCell<Vec<usize>>>,
        parked: Rc<RefCell<Option<Waker>>>,
    ) -> usize {
        match id {
            1 => {
                std::future::poll_fn(|cx| {
                    log.borrow_mut().push(id);
                    if parked.borrow().is_some() {
                        *parked.borrow_mut() = Some(cx.waker().clone());
                        return Poll::Pending;
                    }
                    Poll::Ready(())
                })
                .await
            }
            2 => {
                if let Some(w) = parked.borrow_mut().take() {
                    w.wake();
                }
                yielder(id, 1, log).await;
            }
            _ => log.borrow_mut().push(id),
        }
        id
    }

    #[test]
    fn a_slot_woken_by_another_runs_next_and_one_that_yields_after_the_others() {
        let log = Rc::new(RefCell::new(Vec::new()));
        // slot 1 waits until slot 2 takes its waker
        let parked = Rc::new(RefCell::new(Some(futures_util::task::noop_waker())));
        let slots = Slots::new((0..4).map(|i| waker_and_woken(i, log.clone(), parked.clone())));
        assert_eq!(runtime().block_on(slots), vec![0, 1, 2, 3]);
        // slot 1, woken by 2, runs before 3 (woken from the start): the
        // replies a connection's reader parsed are used while in cache;
        // slot 2's yield waits for the next round
        assert_eq!(*log.borrow(), vec![0, 1, 2, 1, 3, 2]);
    }

    /// Rounds of the runtime (polls of `f`) until `f` is done.
    fn rounds<F: Future>(f: F) -> (F::Output, usize) {
        let polls = Rc::new(Cell::new(0));
        let counted = CountPolls {
            inner: Box::pin(f),
            polls: polls.clone(),
        };
        let out = runtime().block_on(counted);
        (out, polls.get())
    }

    #[test]
    fn a_round_takes_every_woken_slot_where_join_all_took_two() {
        // 100 slots, each yielding 5 times: 600 polls of slots
        let log = Rc::new(RefCell::new(Vec::new()));
        let (out, ours) = rounds(Slots::new((0..100).map(|i| yielder(i, 5, log.clone()))));
        assert_eq!(out.len(), 100);
        assert_eq!(log.borrow().len(), 100 * 5 * 2);
        // up to 200 polls of slots a round
        assert_eq!(ours, 3);
        let (out, theirs) = rounds(futures_util::future::join_all(
            (0..100).map(|i| yielder(i, 5, log.clone())),
        ));
        assert_eq!(out.len(), 100);
        assert!(theirs >= 250, "join_all: {theirs} rounds");
    }

    #[test]
    fn a_slot_woken_from_another_thread_is_polled() {
        type Shared = std::sync::Arc<std::sync::Mutex<(Option<u32>, Option<Waker>)>>;
        let shared: Shared = Default::default();
        let theirs = shared.clone();
        let waiting = std::future::poll_fn(move |cx| {
            let mut s = shared.lock().unwrap();
            match s.0 {
                Some(v) => Poll::Ready(v),
                None => {
                    s.1 = Some(cx.waker().clone());
                    Poll::Pending
                }
            }
        });
        let sender = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(50));
            let mut s = theirs.lock().unwrap();
            s.0 = Some(7);
            if let Some(w) = s.1.take() {
                w.wake();
            }
        });
        let out = runtime().block_on(Slots::new([waiting]));
        sender.join().unwrap();
        assert_eq!(out, vec![7]);
    }

    #[test]
    fn a_slot_woken_by_the_runtime_between_rounds_is_polled() {
        // tokio's timer wakes the slots from this thread, outside the
        // joiner's poll: the joiner must be woken, or this never ends
        let sleepers = Slots::new((0..3u64).map(|i| async move {
            tokio::time::sleep(std::time::Duration::from_millis(5 * i)).await;
            i
        }));
        let out = runtime().block_on(async {
            tokio::time::timeout(std::time::Duration::from_secs(10), sleepers).await
        });
        assert_eq!(out, Ok(vec![0, 1, 2]));
    }

    #[test]
    fn no_slots_are_done_at_once() {
        let none: Vec<std::future::Ready<u8>> = Vec::new();
        assert!(runtime().block_on(Slots::new(none)).is_empty());
    }

    struct CountPolls<F> {
        inner: Pin<Box<F>>,
        polls: Rc<Cell<usize>>,
    }

    impl<F: Future> Future for CountPolls<F> {
        type Output = F::Output;
        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
            self.polls.set(self.polls.get() + 1);
            self.inner.as_mut().poll(cx)
        }
    }
}
