//! The future of one call's reply on a [`Pipe`], and its place in the
//! queue when it is dropped unanswered.
use super::{Failed, Pipe, Reply, Slot};
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// The reply to a command [`Pipe::send`] queued. Dropped before it is
/// ready (a call given up), it leaves its place in the queue so the
/// replies after it still reach their owners.
pub(in crate::redis) struct Answer<'a> {
    pipe: &'a Pipe,
    ticket: u64,
    /// Whether this command's owner writes the batch it is in.
    flushes: bool,
    /// Whether every session of the pipe had a command queued with this
    /// one: the batch is whole, and this command's first poll writes it.
    completes: bool,
    first: bool,
    done: bool,
}

impl<'a> Answer<'a> {
    pub(super) fn new(pipe: &'a Pipe, ticket: u64, flushes: bool, completes: bool) -> Self {
        Answer {
            pipe,
            ticket,
            flushes,
            completes,
            first: true,
            done: false,
        }
    }
}

impl Future for Answer<'_> {
    type Output = Result<Reply, Failed>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let (pipe, ticket) = (self.pipe, self.ticket);
        // The first to append yields at once, so the other sessions of the
        // thread add their commands before its next poll writes them all;
        // the others wait for their replies without a poll of their own
        // meanwhile (a poll runs the whole chain of the operation's futures).
        if std::mem::take(&mut self.first) {
            if self.flushes && !self.completes {
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            let mut st = pipe.st.borrow_mut();
            // the first, yielded, is still to run: it writes or reads for this one
            let waits = st.flusher.is_some_and(|t| t != ticket);
            if self.completes && st.broken.is_none() {
                // the batch is whole: written now, not at the first's next
                // poll, after the round's other woken slots (up to all of
                // the thread's) while the server had none of it
                if let Err(e) = pipe.flush(&mut st, cx) {
                    st.break_with(e);
                }
            }
            if waits && st.broken.is_none() {
                if let Some(Slot::Waiting { waker, .. }) = st.slot_mut(ticket) {
                    *waker = Some(cx.waker().clone());
                    return Poll::Pending;
                }
            }
        }
        let r = pipe.poll_reply(ticket, cx);
        self.done = r.is_ready();
        r
    }
}

impl Drop for Answer<'_> {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        let Ok(mut st) = self.pipe.st.try_borrow_mut() else {
            return;
        };
        let ticket = self.ticket;
        match st.slot_mut(ticket) {
            Some(s @ (Slot::Waiting { .. } | Slot::Late)) => *s = Slot::Abandoned,
            Some(s @ Slot::Answered(_)) => {
                *s = Slot::Done;
                st.pop_done();
            }
            _ => {}
        }
        st.left(ticket);
    }
}
