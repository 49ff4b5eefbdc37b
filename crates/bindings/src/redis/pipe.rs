//! The string model's GET and SET over a RESP connection of yardstick's own
//! (`client=resp`, the default for `model=string` on one node without TLS).
//!
//! Why: redis-rs's multiplexed connection sends each request through a
//! channel to a driver task and each reply back through a one-shot channel,
//! with an allocation for the command and a timer per request; at 16
//! requests in flight per connection that cost twice redis-benchmark's CPU
//! per request. Here the sessions of one worker thread that share a
//! connection append their commands to one buffer, which the first of them
//! to run again writes in one system call; whichever of them runs reads,
//! parses the replies in order and wakes their owners. No task, no channel,
//! and one timer per connection, not per request or session: each call's
//! slot keeps its start stamp, and the call that reads for the others
//! (`reader`) polls the pipe's one [`CallTimer`] with the oldest waiting
//! call's start, once per round of reads. A timer of each session's own,
//! polled at every call (`Bounded`), cost 12% of a pipelined SET's client
//! CPU and 8% of a GET's (depth 16, getrusage, median of 10 and 6 paired
//! rounds; cachegrind, a SET: 2,698-2,759 -> 2,545-2,579 instructions,
//! 4.2 -> 2.0 mispredicted indirect jumps).
//!
//! A call past its limit (or abandoned) keeps its place in the queue, so
//! the replies after it still reach their owners; its own reply is dropped.
use std::cell::RefCell;
use std::collections::VecDeque;
use std::future::Future;
use std::io::IoSlice;
use std::pin::Pin;
use std::rc::{Rc, Weak};
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll, Waker};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWrite};
use tokio::net::TcpStream;
use yardstick_core::bounded::CallTimer;

mod answer;
mod resp;
pub(super) use answer::Answer;
#[cfg(test)]
use resp::resp_int;
use resp::{encode, parse_reply};
pub(super) use resp::{Arg, Reply};

/// The most reply buffers a thread keeps for later replies. A bound only:
/// a buffer is made when none is spare, so the pool holds no more than
/// were in use at once.
const SPARE: usize = 4096;

/// What the pipes of one thread share: the input every read lands in, the
/// buffers bulk replies are copied into, and the output commands are
/// encoded into. Each pipe with its own (64 KB of input, a buffer per call
/// in flight, ~17 KB of output per batch of 1 KB SETs) kept ~0.5 MB in use
/// at depth 16 on 16 connections, the core's whole L2 cache; shared, one
/// batch's bytes are read, copied and encoded where the previous batch's
/// were, and a value's buffer, given back before the next pipe's replies
/// are parsed, takes one of them at once.
#[derive(Default)]
struct Scratch {
    input: Vec<u8>,
    spare: Vec<Vec<u8>>,
    /// Commands of one pipe (`owner`) not yet written. Most of a pipe's
    /// batch is appended by its sessions one after another and written by
    /// the first of them right after, so one pipe at a time collects here;
    /// a pipe that appends while another collects uses its own buffer.
    out: Vec<u8>,
    owner: Option<u64>,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// `f` on this thread's [`Scratch`]; an error once the thread is ending.
fn with_scratch<T>(f: impl FnOnce(&mut Scratch) -> T) -> Result<T, String> {
    SCRATCH
        .try_with(|s| f(&mut s.borrow_mut()))
        .map_err(|_| "the thread is ending".to_string())
}

/// The connection broke (or could not be made): every call on it fails.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Broken(pub String);

/// Why a call on the pipe has no reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Failed {
    Broken(Broken),
    /// None came within the limit (the pipe's): the connection stays.
    Late(Duration),
}

enum Slot {
    /// No reply yet: the owner's waker once it waited, and the call's
    /// start (a cycle stamp), its limit counted from there.
    Waiting { waker: Option<Waker>, start: u64 },
    Answered(Reply),
    /// Past its limit with no reply: its owner, woken, is to be told.
    Late,
    /// The owner gave up (or was told it is late) before its reply came;
    /// the reply is dropped.
    Abandoned,
    /// Taken by its owner, or answered after it was abandoned.
    Done,
}

struct State {
    /// The socket, read and written through tokio's `AsyncRead`/`AsyncWrite`:
    /// a short read or write tells it the socket is drained or full, so the
    /// next poll waits for the reactor instead of a system call that would
    /// only say EAGAIN (`try_read` kept the stale readiness: 4 in 10 reads
    /// at depth 16 came back empty).
    io: TcpStream,
    /// Tells this pipe's commands in the thread's output from another's.
    id: u64,
    /// Commands not yet written that came while the thread's output held
    /// another pipe's (or that the socket did not take): written before
    /// the pipe's commands in the thread's output, which are newer.
    out: Vec<u8>,
    /// Bytes of `out` written.
    written: usize,
    /// The start of a reply whose end has not arrived: the next read
    /// appends to it (the thread's input takes the reads otherwise).
    partial: Vec<u8>,
    /// Ticket of `slots[0]`.
    head: u64,
    slots: VecDeque<Slot>,
    /// Slots at the front that have had their reply.
    answered: usize,
    /// The call whose waker the socket holds for readability (the latest to
    /// find nothing to read): when it leaves, another waiting call takes over.
    reader: Option<u64>,
    /// The call that appended first since the last write and yielded: its
    /// next poll writes what the others appended meanwhile.
    flusher: Option<u64>,
    /// Commands appended since the last write that took them all.
    queued: usize,
    broken: Option<Broken>,
    /// Each call's limit, from its start.
    limit: Duration,
    /// Armed for the oldest waiting call's deadline, by the reader.
    timer: CallTimer,
}

pub(super) struct Pipe {
    st: RefCell<State>,
}

impl Pipe {
    /// Connects, logs in and selects `db` (each checked before the pipe is
    /// used); each later call on it gets no more than `limit` from its start.
    pub(super) async fn connect(
        addr: (&str, u16),
        user: Option<&str>,
        password: Option<&str>,
        db: i64,
        timeout: Duration,
        limit: Duration,
    ) -> Result<Rc<Pipe>, Broken> {
        let io = match tokio::time::timeout(timeout, TcpStream::connect(addr)).await {
            Ok(Ok(io)) => io,
            Ok(Err(e)) => return Err(Broken(e.to_string())),
            Err(_) => return Err(Broken(format!("no connection within {timeout:?}"))),
        };
        let _ = io.set_nodelay(true);
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let pipe = Rc::new(Pipe {
            st: RefCell::new(State {
                io,
                id: NEXT.fetch_add(1, Ordering::Relaxed),
                out: Vec::new(),
                written: 0,
                partial: Vec::new(),
                head: 0,
                slots: VecDeque::new(),
                answered: 0,
                reader: None,
                flusher: None,
                queued: 0,
                broken: None,
                limit,
                timer: CallTimer::default(),
            }),
        });
        let mut hello: Vec<&[u8]> = Vec::new();
        if let Some(pw) = password {
            hello.push(b"AUTH");
            if let Some(u) = user {
                hello.push(u.as_bytes());
            }
            hello.push(pw.as_bytes());
        }
        let setup = async {
            if !hello.is_empty() {
                check(pipe.call(&hello).await?)?;
            }
            if db != 0 {
                check(pipe.call(&[b"SELECT", db.to_string().as_bytes()]).await?)?;
            }
            Ok(())
        };
        match tokio::time::timeout(timeout, setup).await {
            Ok(r) => r.map(|()| pipe),
            Err(_) => Err(Broken(format!("no answer to the login within {timeout:?}"))),
        }
    }

    /// Takes back the buffer of a bulk reply for a later one (emptied),
    /// for any pipe of this thread.
    pub(super) fn recycle(&self, mut buf: Vec<u8>) {
        let _ = with_scratch(|s| {
            if s.spare.len() < SPARE && buf.capacity() > 0 {
                buf.clear();
                s.spare.push(buf);
            }
        });
    }

    /// Reply buffers this thread keeps for later replies.
    #[cfg(test)]
    pub(super) fn spares(&self) -> usize {
        with_scratch(|s| s.spare.len()).unwrap_or(0)
    }

    /// Sends one command (its arguments) and waits for its reply; the
    /// calls in flight with it go out in the same write.
    pub(super) async fn call(&self, args: &[&[u8]]) -> Result<Reply, Broken> {
        let args: Vec<Arg<'_>> = args.iter().map(|a| Arg::Bytes(a)).collect();
        match self.send(&args, usize::MAX, CallTimer::now())?.await {
            Ok(r) => Ok(r),
            Err(Failed::Broken(b)) => Err(b),
            Err(Failed::Late(limit)) => Err(Broken(format!("no answer within {limit:?}"))),
        }
    }

    /// Queues one command (its arguments) of one of the `sharers` sessions
    /// of the pipe, a call started at `start` ([`CallTimer::start`]); the
    /// returned future waits for its reply. Queued apart
    /// from the waiting, a session's call is one future over the pipe's
    /// state, not a chain of `async fn`s each with its own line of state
    /// to fetch from memory at every operation.
    pub(super) fn send(
        &self,
        args: &[Arg<'_>],
        sharers: usize,
        start: u64,
    ) -> Result<Answer<'_>, Broken> {
        let mut st = self.st.borrow_mut();
        if let Some(b) = &st.broken {
            return Err(b.clone());
        }
        st.append(args);
        st.slots.push_back(Slot::Waiting { waker: None, start });
        st.queued += 1;
        let ticket = st.head + st.slots.len() as u64 - 1;
        let flushes = st.flusher.is_none();
        if flushes {
            st.flusher = Some(ticket);
        }
        Ok(Answer::new(self, ticket, flushes, st.queued >= sharers))
    }

    fn poll_reply(&self, ticket: u64, cx: &mut Context<'_>) -> Poll<Result<Reply, Failed>> {
        let mut st = self.st.borrow_mut();
        if let Some(r) = st.take(ticket) {
            return Poll::Ready(r);
        }
        if let Some(b) = &st.broken {
            return Poll::Ready(Err(Failed::Broken(b.clone())));
        }
        if let Err(e) = self.flush(&mut st, cx) {
            st.break_with(e);
        }
        if st.broken.is_none() {
            if let Err(e) = self.fill(&mut st, ticket, cx) {
                st.break_with(e);
            }
        }
        if let Some(r) = st.take(ticket) {
            return Poll::Ready(r);
        }
        if let Some(b) = &st.broken {
            return Poll::Ready(Err(Failed::Broken(b.clone())));
        }
        // the reader, staying: it keeps the time too
        if st.reader == Some(ticket) {
            st.expire(cx);
            if let Some(r) = st.take(ticket) {
                return Poll::Ready(r);
            }
        }
        // the latest poller holds the socket's readiness (and the timer);
        // the others wait for the reader to wake them with their replies
        st.wait(ticket, cx);
        Poll::Pending
    }

    /// Writes what is buffered (the pipe's own commands, then its commands
    /// in the thread's output, in one system call); registers for
    /// writability when the socket is full.
    fn flush(&self, st: &mut State, cx: &mut Context<'_>) -> Result<(), String> {
        let id = st.id;
        with_scratch(|s| {
            let held = if s.owner == Some(id) { &s.out[..] } else { &[] };
            let mut sent = 0;
            let r = loop {
                let own = &st.out[st.written..];
                let rest = &held[sent..];
                if own.is_empty() && rest.is_empty() {
                    break Ok(());
                }
                let bufs = [IoSlice::new(own), IoSlice::new(rest)];
                match Pin::new(&mut st.io).poll_write_vectored(cx, &bufs) {
                    Poll::Ready(Ok(0)) => break Err("the connection took no more bytes".into()),
                    Poll::Ready(Ok(n)) => {
                        let from_own = n.min(own.len());
                        st.written += from_own;
                        sent += n - from_own;
                    }
                    Poll::Ready(Err(e)) => break Err(e.to_string()),
                    Poll::Pending => break Ok(()),
                }
            };
            // what the socket did not take waits in the pipe's own buffer,
            // freeing the thread's for the next pipe
            if s.owner == Some(id) {
                st.out.extend_from_slice(&s.out[sent..]);
                s.out.clear();
                s.owner = None;
            }
            r
        })??;
        if st.written == st.out.len() {
            st.out.clear();
            st.written = 0;
            st.flusher = None;
            st.queued = 0;
        }
        Ok(())
    }

    /// Reads and parses what has arrived, while replies are owed. When the
    /// socket has nothing, `ticket`'s caller is the one it wakes.
    fn fill(&self, st: &mut State, ticket: u64, cx: &mut Context<'_>) -> Result<(), String> {
        while st.answered < st.slots.len() {
            // the thread's input, unless a reply's start waits for its end
            let read = if st.partial.is_empty() {
                with_scratch(|s| {
                    s.input.clear();
                    let read = st.read(&mut s.input, &mut s.spare, cx)?;
                    if let Poll::Ready(used) = read {
                        st.partial.extend_from_slice(&s.input[used..]);
                    }
                    Ok::<_, String>(read)
                })??
            } else {
                let mut input = std::mem::take(&mut st.partial);
                let read = with_scratch(|s| st.read(&mut input, &mut s.spare, cx))?;
                if let Ok(Poll::Ready(used)) = read {
                    input.drain(..used);
                }
                st.partial = input;
                read?
            };
            if read.is_pending() {
                st.reader = Some(ticket);
                return Ok(());
            }
        }
        Ok(())
    }
}

impl State {
    /// Appends a command: to the thread's output when it is free or this
    /// pipe's, else to the pipe's own.
    fn append(&mut self, args: &[Arg<'_>]) {
        let id = self.id;
        let shared = with_scratch(|s| {
            let mine = *s.owner.get_or_insert(id) == id;
            if mine {
                encode(&mut s.out, args);
            }
            mine
        });
        if shared != Ok(true) {
            encode(&mut self.out, args);
        }
    }

    /// Drops this pipe's commands from the thread's output (the pipe broke
    /// or is gone: nobody will write them).
    fn release(&mut self) {
        let id = self.id;
        let _ = with_scratch(|s| {
            if s.owner == Some(id) {
                s.out.clear();
                s.owner = None;
            }
        });
    }

    /// Reads what has arrived onto the end of `input` and hands the
    /// complete replies in it to their slots; the bytes they took.
    fn read(
        &mut self,
        input: &mut Vec<u8>,
        spare: &mut Vec<Vec<u8>>,
        cx: &mut Context<'_>,
    ) -> Result<Poll<usize>, String> {
        input.reserve(16 * 1024);
        match std::pin::pin!(self.io.read_buf(input)).poll(cx) {
            Poll::Ready(Ok(0)) => Err("the server closed the connection".into()),
            Poll::Ready(Ok(_)) => self.parse(input, spare).map(Poll::Ready),
            Poll::Ready(Err(e)) => Err(e.to_string()),
            Poll::Pending => Ok(Poll::Pending),
        }
    }

    fn slot_mut(&mut self, ticket: u64) -> Option<&mut Slot> {
        let i = ticket.checked_sub(self.head)?;
        self.slots.get_mut(i as usize)
    }

    /// `ticket`'s caller waits, to be woken through `cx`.
    fn wait(&mut self, ticket: u64, cx: &Context<'_>) {
        if let Some(Slot::Waiting { waker, .. }) = self.slot_mut(ticket) {
            *waker = Some(cx.waker().clone());
        }
    }

    /// The reply of `ticket` when it came (or that it is late); drops the
    /// finished slots at the front.
    fn take(&mut self, ticket: u64) -> Option<Result<Reply, Failed>> {
        let slot = self.slot_mut(ticket)?;
        let r = match slot {
            Slot::Answered(_) => match std::mem::replace(slot, Slot::Done) {
                Slot::Answered(r) => Ok(r),
                _ => unreachable!("matched above"),
            },
            // its reply, when it comes, is dropped
            Slot::Late => {
                *slot = Slot::Abandoned;
                Err(Failed::Late(self.limit))
            }
            _ => return None,
        };
        self.pop_done();
        self.left(ticket);
        Some(r)
    }

    /// Polled by the reader: the oldest calls still waiting past their
    /// limit are late, their owners woken; the timer is armed, to wake
    /// `cx`'s task, for the oldest of the others.
    fn expire(&mut self, cx: &mut Context<'_>) {
        while let Some((i, start)) = self.oldest_waiting() {
            if self.timer.poll_expired(self.limit, start, cx).is_pending() {
                return;
            }
            let was = std::mem::replace(&mut self.slots[i], Slot::Late);
            if let Slot::Waiting { waker: Some(w), .. } = was {
                w.wake();
            }
        }
    }

    /// The index and start of the oldest call still waiting for its reply.
    fn oldest_waiting(&self) -> Option<(usize, u64)> {
        let (answered, unanswered) = (self.answered, self.slots.range(self.answered..));
        unanswered.enumerate().find_map(|(i, s)| match s {
            Slot::Waiting { start, .. } => Some((answered + i, *start)),
            _ => None,
        })
    }

    fn pop_done(&mut self) {
        while matches!(self.slots.front(), Some(Slot::Done)) {
            self.slots.pop_front();
            self.head += 1;
            self.answered -= 1;
        }
    }

    /// `ticket`'s caller is gone: when the socket would have woken it, or
    /// it was to write what others appended, one caller still owed a reply
    /// is woken to take its place.
    fn left(&mut self, ticket: u64) {
        let mut replace = false;
        if self.reader == Some(ticket) {
            self.reader = None;
            replace = true;
        }
        if self.flusher == Some(ticket) {
            self.flusher = None;
            replace = true;
        }
        if replace {
            self.wake_one_waiting();
        }
    }

    /// Wakes one call still owed a reply, to read (or write) for the others.
    fn wake_one_waiting(&mut self) {
        let waiting = self
            .slots
            .iter_mut()
            .skip(self.answered)
            .find_map(|s| match s {
                Slot::Waiting { waker, .. } => waker.take(),
                _ => None,
            });
        if let Some(w) = waiting {
            w.wake();
        }
    }

    /// Hands every complete reply in `input` to its slot, in order; the
    /// bytes they took.
    fn parse(&mut self, input: &[u8], spare: &mut Vec<Vec<u8>>) -> Result<usize, String> {
        let mut pos = 0;
        while self.answered < self.slots.len() {
            let Some((reply, used)) = parse_reply(&input[pos..], spare)? else {
                break;
            };
            pos += used;
            let slot = &mut self.slots[self.answered];
            self.answered += 1;
            match std::mem::replace(slot, Slot::Done) {
                Slot::Waiting { waker, .. } => {
                    *slot = Slot::Answered(reply);
                    if let Some(w) = waker {
                        w.wake();
                    }
                }
                // the owner, woken to be told it is late, has its reply after all
                Slot::Late => *slot = Slot::Answered(reply),
                Slot::Abandoned => {}
                Slot::Answered(_) | Slot::Done => unreachable!("a slot is answered once"),
            }
        }
        self.pop_done();
        if self.answered == self.slots.len() && pos < input.len() {
            return Err("the server sent a reply nobody asked for".into());
        }
        Ok(pos)
    }

    fn break_with(&mut self, why: String) {
        self.broken = Some(Broken(why));
        self.release();
        for s in &mut self.slots {
            if let Slot::Waiting { waker: Some(w), .. } = s {
                w.wake_by_ref();
            }
        }
    }
}

impl Drop for State {
    fn drop(&mut self) {
        self.release();
    }
}

fn check(r: Reply) -> Result<(), Broken> {
    match r {
        Reply::Error(e) => Err(Broken(e)),
        _ => Ok(()),
    }
}

thread_local! {
    /// This thread's pipes by binding: up to `pipeline` sessions share one.
    static PIPES: RefCell<Vec<(u64, Weak<Pipe>)>> = const { RefCell::new(Vec::new()) };
}

/// A pipe of binding `id` on this thread with room for one more session.
pub(super) fn shared(id: u64, pipeline: usize) -> Option<Rc<Pipe>> {
    PIPES.with(|p| {
        let mut p = p.borrow_mut();
        p.retain(|(_, w)| w.strong_count() > 0);
        p.iter()
            .filter(|(b, _)| *b == id)
            .filter_map(|(_, w)| w.upgrade())
            .find(|pipe| {
                // the one upgraded here counts too
                Rc::strong_count(pipe) <= pipeline && pipe.st.borrow().broken.is_none()
            })
    })
}

/// Makes `pipe` available to the next sessions of binding `id` on this thread.
pub(super) fn offer(id: u64, pipe: &Rc<Pipe>) {
    PIPES.with(|p| p.borrow_mut().push((id, Rc::downgrade(pipe))));
}

#[cfg(test)]
mod tests;
