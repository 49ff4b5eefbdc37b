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
//! no timer: [`Bounded`](yardstick_core::bounded::Bounded) bounds each call.
//!
//! A call abandoned at its timeout keeps its place in the queue, so the
//! replies after it still reach their owners; its own reply is dropped.
use std::cell::RefCell;
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::rc::{Rc, Weak};
use std::task::{Context, Poll, Waker};
use tokio::io::{AsyncReadExt, AsyncWrite};
use tokio::net::TcpStream;

/// A RESP2 reply to GET or SET.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Reply {
    /// `+OK` or another status.
    Status,
    /// `$-1` (GET of a missing key, SET NX/XX refused).
    Nil,
    Bulk(Vec<u8>),
    Int(i64),
    /// `-ERR ...`: the server's error line.
    Error(String),
}

/// Spare reply buffers a pipe keeps at least room for.
const SPARE: usize = 16;

/// The connection broke (or could not be made): every call on it fails.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Broken(pub String);

enum Slot {
    /// No reply yet; the owner's waker once it waited.
    Waiting(Option<Waker>),
    Answered(Reply),
    /// The owner gave up before its reply came; the reply is dropped.
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
    out: Vec<u8>,
    written: usize,
    inbuf: Vec<u8>,
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
    broken: Option<Broken>,
    /// Buffers of bulk replies given back by their readers: a GET's value
    /// is copied out of the input once, into one of these, and swapped into
    /// the record it was read for (no allocation, no second copy).
    spare: Vec<Vec<u8>>,
}

pub(super) struct Pipe {
    st: RefCell<State>,
}

impl Pipe {
    /// Connects, logs in and selects `db` (each checked before the pipe is used).
    pub(super) async fn connect(
        addr: (&str, u16),
        user: Option<&str>,
        password: Option<&str>,
        db: i64,
        timeout: std::time::Duration,
    ) -> Result<Rc<Pipe>, Broken> {
        let io = match tokio::time::timeout(timeout, TcpStream::connect(addr)).await {
            Ok(Ok(io)) => io,
            Ok(Err(e)) => return Err(Broken(e.to_string())),
            Err(_) => return Err(Broken(format!("no connection within {timeout:?}"))),
        };
        let _ = io.set_nodelay(true);
        let pipe = Rc::new(Pipe {
            st: RefCell::new(State {
                io,
                out: Vec::with_capacity(16 * 1024),
                written: 0,
                inbuf: Vec::with_capacity(64 * 1024),
                head: 0,
                slots: VecDeque::new(),
                answered: 0,
                reader: None,
                flusher: None,
                broken: None,
                spare: Vec::new(),
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

    /// Takes back the buffer of a bulk reply for the next one (emptied; a
    /// few kept, one per call in flight is the most a pipe needs).
    pub(super) fn recycle(&self, mut buf: Vec<u8>) {
        let mut st = self.st.borrow_mut();
        if st.spare.len() < st.slots.len().max(SPARE) && buf.capacity() > 0 {
            buf.clear();
            st.spare.push(buf);
        }
    }

    /// Reply buffers kept for later replies.
    #[cfg(test)]
    pub(super) fn spares(&self) -> usize {
        self.st.borrow().spare.len()
    }

    /// Sends one command (its arguments) and waits for its reply.
    pub(super) async fn call(&self, args: &[&[u8]]) -> Result<Reply, Broken> {
        let (ticket, flushes) = {
            let mut st = self.st.borrow_mut();
            if let Some(b) = &st.broken {
                return Err(b.clone());
            }
            encode(&mut st.out, args);
            st.slots.push_back(Slot::Waiting(None));
            let ticket = st.head + st.slots.len() as u64 - 1;
            let flushes = st.flusher.is_none();
            if flushes {
                st.flusher = Some(ticket);
            }
            (ticket, flushes)
        };
        let mut guard = Pending {
            pipe: self,
            ticket,
            done: false,
        };
        // The first to append yields at once, so the other sessions of the
        // thread add their commands before its next poll writes them all;
        // the others wait for their replies without a poll of their own
        // meanwhile (a poll runs the whole chain of the operation's futures).
        let mut first = true;
        let r = std::future::poll_fn(|cx| {
            if std::mem::take(&mut first) {
                if flushes {
                    cx.waker().wake_by_ref();
                    return Poll::Pending;
                }
                let mut st = self.st.borrow_mut();
                if st.flusher.is_some() && st.broken.is_none() {
                    if let Some(Slot::Waiting(w)) = st.slot_mut(ticket) {
                        *w = Some(cx.waker().clone());
                        return Poll::Pending;
                    }
                }
            }
            self.poll_reply(ticket, cx)
        })
        .await;
        guard.done = true;
        r
    }

    fn poll_reply(&self, ticket: u64, cx: &mut Context<'_>) -> Poll<Result<Reply, Broken>> {
        let mut st = self.st.borrow_mut();
        if let Some(r) = st.take(ticket) {
            return Poll::Ready(Ok(r));
        }
        if let Some(b) = &st.broken {
            return Poll::Ready(Err(b.clone()));
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
            return Poll::Ready(Ok(r));
        }
        if let Some(b) = &st.broken {
            return Poll::Ready(Err(b.clone()));
        }
        // the latest poller holds the socket's readiness; the others wait
        // for the reader to wake them with their replies
        if let Some(Slot::Waiting(w)) = st.slot_mut(ticket) {
            *w = Some(cx.waker().clone());
        }
        Poll::Pending
    }

    /// Writes what is buffered; registers for writability when the socket is full.
    fn flush(&self, st: &mut State, cx: &mut Context<'_>) -> Result<(), String> {
        while st.written < st.out.len() {
            let State {
                io, out, written, ..
            } = st;
            match Pin::new(io).poll_write(cx, &out[*written..]) {
                Poll::Ready(Ok(0)) => return Err("the connection took no more bytes".into()),
                Poll::Ready(Ok(n)) => *written += n,
                Poll::Ready(Err(e)) => return Err(e.to_string()),
                Poll::Pending => return Ok(()),
            }
        }
        st.out.clear();
        st.written = 0;
        st.flusher = None;
        Ok(())
    }

    /// Reads and parses what has arrived, while replies are owed. When the
    /// socket has nothing, `ticket`'s caller is the one it wakes.
    fn fill(&self, st: &mut State, ticket: u64, cx: &mut Context<'_>) -> Result<(), String> {
        while st.answered < st.slots.len() {
            st.inbuf.reserve(16 * 1024);
            let State { io, inbuf, .. } = &mut *st;
            match std::pin::pin!(io.read_buf(inbuf)).poll(cx) {
                Poll::Ready(Ok(0)) => return Err("the server closed the connection".into()),
                Poll::Ready(Ok(_)) => st.parse()?,
                Poll::Ready(Err(e)) => return Err(e.to_string()),
                Poll::Pending => {
                    st.reader = Some(ticket);
                    return Ok(());
                }
            }
        }
        Ok(())
    }
}

impl State {
    fn slot_mut(&mut self, ticket: u64) -> Option<&mut Slot> {
        let i = ticket.checked_sub(self.head)?;
        self.slots.get_mut(i as usize)
    }

    /// The reply of `ticket` when it came; drops the finished slots at the front.
    fn take(&mut self, ticket: u64) -> Option<Reply> {
        let slot = self.slot_mut(ticket)?;
        let r = match std::mem::replace(slot, Slot::Done) {
            Slot::Answered(r) => r,
            other => {
                *slot = other;
                return None;
            }
        };
        self.pop_done();
        self.left(ticket);
        Some(r)
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
                Slot::Waiting(w) => w.take(),
                _ => None,
            });
        if let Some(w) = waiting {
            w.wake();
        }
    }

    /// Hands every complete reply in the input to its slot, in order.
    fn parse(&mut self) -> Result<(), String> {
        let mut pos = 0;
        while self.answered < self.slots.len() {
            let Some((reply, used)) = parse_reply(&self.inbuf[pos..], &mut self.spare)? else {
                break;
            };
            pos += used;
            let slot = &mut self.slots[self.answered];
            self.answered += 1;
            match std::mem::replace(slot, Slot::Done) {
                Slot::Waiting(w) => {
                    *slot = Slot::Answered(reply);
                    if let Some(w) = w {
                        w.wake();
                    }
                }
                Slot::Abandoned => {}
                Slot::Answered(_) | Slot::Done => unreachable!("a slot is answered once"),
            }
        }
        self.inbuf.drain(..pos);
        self.pop_done();
        if self.answered == self.slots.len() && !self.inbuf.is_empty() {
            return Err("the server sent a reply nobody asked for".into());
        }
        Ok(())
    }

    fn break_with(&mut self, why: String) {
        self.broken = Some(Broken(why));
        for s in &mut self.slots {
            if let Slot::Waiting(w) = s {
                if let Some(w) = w.take() {
                    w.wake();
                }
            }
        }
    }
}

/// Marks a call's slot abandoned when its future is dropped before its reply.
struct Pending<'a> {
    pipe: &'a Pipe,
    ticket: u64,
    done: bool,
}

impl Drop for Pending<'_> {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        let Ok(mut st) = self.pipe.st.try_borrow_mut() else {
            return;
        };
        let ticket = self.ticket;
        match st.slot_mut(ticket) {
            Some(s @ Slot::Waiting(_)) => *s = Slot::Abandoned,
            Some(s @ Slot::Answered(_)) => {
                *s = Slot::Done;
                st.pop_done();
            }
            _ => {}
        }
        st.left(ticket);
    }
}

/// `*N $len arg ...` in RESP2, appended in place: one reservation for the
/// whole command and one copy per argument. Appended piece by piece (a
/// capacity check and a `memcpy` call for each of a SET's ten pieces, the
/// lengths through `itoa`) it cost ~330 instructions a SET, a tenth of a
/// pipelined SET's client CPU.
fn encode(out: &mut Vec<u8>, args: &[&[u8]]) {
    // a header is a tag, at most 20 digits and CRLF; an argument its bytes and CRLF
    let room = HEAD + args.iter().map(|a| HEAD + a.len() + 2).sum::<usize>();
    out.reserve(room);
    // SAFETY: `reserve` made room for `room` bytes past the length and
    // what is written below is at most that; every byte up to the new
    // length is written before it is set.
    unsafe {
        let start = out.as_mut_ptr();
        let mut p = head(start.add(out.len()), b'*', args.len());
        for a in args {
            p = head(p, b'$', a.len());
            std::ptr::copy_nonoverlapping(a.as_ptr(), p, a.len());
            p = p.add(a.len());
            p.cast::<[u8; 2]>().write_unaligned(*b"\r\n");
            p = p.add(2);
        }
        out.set_len(p.offset_from(start) as usize);
    }
}

/// The most a RESP header takes: a tag, a `usize`'s 20 digits and CRLF.
const HEAD: usize = 23;

/// Writes `tag`, `n` in decimal and CRLF at `p`; returns where they end.
/// Numbers under 10,000 (every count and key, most values) take a branch or
/// two and a table of digit pairs instead of a division per digit.
///
/// # Safety
/// `p` must have room for [`HEAD`] bytes.
#[inline(always)]
unsafe fn head(p: *mut u8, tag: u8, n: usize) -> *mut u8 {
    // SAFETY: the caller gives room for the tag, up to 20 digits and CRLF.
    unsafe {
        p.write(tag);
        let d = p.add(1);
        let pair = |at: *mut u8, k: usize| {
            at.cast::<[u8; 2]>()
                .write_unaligned([PAIRS[2 * k], PAIRS[2 * k + 1]])
        };
        let end = if n < 10 {
            d.write(b'0' + n as u8);
            d.add(1)
        } else if n < 100 {
            pair(d, n);
            d.add(2)
        } else if n < 10_000 {
            let (hi, lo) = (n / 100, n % 100);
            if hi < 10 {
                d.write(b'0' + hi as u8);
                pair(d.add(1), lo);
                d.add(3)
            } else {
                pair(d, hi);
                pair(d.add(2), lo);
                d.add(4)
            }
        } else {
            let digits = n.ilog10() as usize + 1;
            let (mut m, mut at) = (n, d.add(digits));
            while m > 0 {
                at = at.sub(1);
                at.write(b'0' + (m % 10) as u8);
                m /= 10;
            }
            d.add(digits)
        };
        end.cast::<[u8; 2]>().write_unaligned(*b"\r\n");
        end.add(2)
    }
}

/// "00" to "99", two bytes each.
const PAIRS: [u8; 200] = {
    let mut t = [0u8; 200];
    let mut k = 0;
    while k < 100 {
        t[2 * k] = b'0' + (k / 10) as u8;
        t[2 * k + 1] = b'0' + (k % 10) as u8;
        k += 1;
    }
    t
};

/// One reply from the start of `b` and the bytes it took; `None` when it
/// has not fully arrived. A bulk reply goes into a buffer of `spare` when
/// there is one.
fn parse_reply(b: &[u8], spare: &mut Vec<Vec<u8>>) -> Result<Option<(Reply, usize)>, String> {
    let Some(eol) = b.windows(2).position(|w| w == b"\r\n") else {
        return Ok(None);
    };
    let line = &b[1..eol];
    let text = || String::from_utf8_lossy(line).into_owned();
    let int = || {
        resp_int(line).ok_or_else(|| format!("a malformed RESP length or integer: {:?}", text()))
    };
    let reply = match b[0] {
        b'+' => Reply::Status,
        b'-' => Reply::Error(text()),
        b':' => Reply::Int(int()?),
        b'$' => {
            let len = int()?;
            if len < 0 {
                Reply::Nil
            } else {
                let (start, len) = (eol + 2, len as usize);
                if b.len() < start + len + 2 {
                    return Ok(None);
                }
                let mut v = spare.pop().unwrap_or_default();
                v.extend_from_slice(&b[start..start + len]);
                return Ok(Some((Reply::Bulk(v), start + len + 2)));
            }
        }
        other => {
            return Err(format!(
                "an unexpected RESP reply type {:?} to GET or SET",
                other as char
            ))
        }
    };
    Ok(Some((reply, eol + 2)))
}

/// A RESP length or integer: an optional minus and 1 to 19 decimal digits,
/// nothing else. By hand: through `str::from_utf8` and `str::parse` it
/// was ~120 instructions of every GET's reply (~4% of a pipelined GET).
fn resp_int(line: &[u8]) -> Option<i64> {
    let (negative, digits) = match line {
        [b'-', rest @ ..] => (true, rest),
        _ => (false, line),
    };
    if digits.is_empty() || digits.len() > 19 {
        return None;
    }
    let mut n = 0u64;
    for &d in digits {
        let v = d.wrapping_sub(b'0');
        if v > 9 {
            return None;
        }
        n = n * 10 + v as u64;
    }
    // 19 digits fit a u64; the sign's range is checked here
    if negative {
        0i64.checked_sub_unsigned(n)
    } else {
        i64::try_from(n).ok()
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
