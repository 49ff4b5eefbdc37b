//! What a session sends over its [`Pipe`] (`client=resp`): the string
//! model's GET, SET and DEL, their replies mapped as the driver's are.
use super::pipe::{self, Answer, Arg, Broken, Failed, Pipe, Reply};
use super::session::RedisSession;
use super::{BindingError, Server};
use crate::kv;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use yardstick_core::binding::{InsertMode, Outcome, Status, UpdateMode, WriteSet};
use yardstick_core::bounded::timed_out;
use yardstick_core::error::ServerError;

/// The reply to the command `$queued` (a [`RedisSession::queue`]) gave,
/// awaited in the method that calls this: `None` when the session has no
/// connection to queue on. A broken connection is dropped. A macro, so
/// that a call over the pipe is no `async fn` of its own: each layer of
/// `async fn` is a state machine entered at both polls of every operation,
/// with a line of per-slot state to fetch (a pipelined SET through two
/// more, `write_string` and `resp_call`, a GET through `get` and
/// `resp_call`; cachegrind, pipelined at depth 16: a SET 2,866 -> 2,695
/// instructions and 13.2 -> 4.1 mispredicted indirect jumps, a GET 2,419
/// -> 2,349 and 7.9 -> 4.3).
/// The pipe bounds the call: past the limit from the session's `start`,
/// its reply is a timeout (and dropped when it comes, in the pipe).
macro_rules! piped {
    ($s:ident, $queued:expr) => {{
        let r = match $queued {
            Some(Ok(answer)) => Some(answered(answer.await)),
            Some(Err(o)) => Some(Err((o, true))),
            None => None,
        };
        if let Some(Err((_, true))) = &r {
            $s.pipe = None;
        }
        r.map(|r| r.map_err(|(o, _)| o))
    }};
}

/// The session's write of record `$key` in its model, awaited in the
/// session's own method: a whole one-field record over the pipe as its
/// `SET` (see [`piped!`]), any other through `write_string` or
/// `write_hash` (see [`bounded!`]).
macro_rules! write_record {
    ($s:ident, $key:expr, $values:expr, $insert:expr) => {{
        $s.start = CallTimer::start();
        match $s.inner.model {
            Model::Hash => {
                bounded!($s, Box::pin($s.write_hash($key, $values, $insert))).unwrap_or_else(|o| o)
            }
            Model::String => {
                // counted while the values are in cache, not after the reply
                let bytes = $values.bytes();
                match piped!($s, $s.pipe_write($key, $values, $insert)) {
                    Some(r) => written(stored(r), $insert, bytes),
                    None => {
                        bounded!($s, $s.write_string($key, $values, $insert)).unwrap_or_else(|o| o)
                    }
                }
            }
        }
    }};
}

/// Awaits `$call` (a call of the session's own, free to use all of it)
/// within the session's limit from its `start`: its output, or `Err` with
/// a timeout once it was abandoned (the session told, so a driver
/// connection left halfway through a request is dropped). The paths off
/// the pipe's GET and SET; the session's timer is the call's while it runs.
macro_rules! bounded {
    ($s:ident, $call:expr) => {{
        let (limit, start) = ($s.limit, $s.start);
        let mut timer = std::mem::take(&mut $s.timer);
        let r = {
            let mut call = std::pin::pin!($call);
            std::future::poll_fn(|cx| timer.poll(limit, start, call.as_mut(), cx)).await
        };
        $s.timer = timer;
        match r {
            Ok(out) => Ok(out),
            Err(Elapsed) => {
                $s.abandoned();
                Err(timed_out(limit))
            }
        }
    }};
}

/// Where and as whom a binding's own connections log in.
pub(crate) struct RespTarget {
    host: String,
    port: u16,
    user: Option<String>,
    password: Option<String>,
    db: i64,
    connect_timeout: Duration,
    /// Each call's limit (the URL's `timeout`), which the pipe bounds.
    limit: Duration,
    /// Tells this binding's connections from another's in a thread's list.
    id: u64,
}

impl RespTarget {
    /// The target for `client=resp`, when the URL's `client` (default: resp
    /// for the string model on one node without TLS) asks for it.
    pub(super) fn choose(
        client: Option<&str>,
        string_model: bool,
        server: &Server,
        connect_timeout: Duration,
        limit: Duration,
    ) -> Result<Option<RespTarget>, BindingError> {
        let single = match server {
            Server::Single(c) => Some(c.get_connection_info()),
            Server::Cluster(_) => None,
        };
        let plain = single.and_then(|i| match i.addr() {
            redis::ConnectionAddr::Tcp(host, port) => Some((host.clone(), *port, i)),
            _ => None,
        });
        let wanted = match client {
            None => string_model,
            Some("resp") => true,
            Some("redis-rs") => false,
            Some(other) => {
                return Err(BindingError::Config(format!(
                    "unknown Redis client '{other}'; use client=resp (yardstick's own connection, model=string) or client=redis-rs"
                )))
            }
        };
        match (wanted, string_model, plain) {
            (false, _, _) => Ok(None),
            (true, true, Some((host, port, info))) => {
                static NEXT: AtomicU64 = AtomicU64::new(0);
                let r = info.redis_settings();
                Ok(Some(RespTarget {
                    host,
                    port,
                    user: r.username().map(str::to_string),
                    password: r.password().map(str::to_string),
                    db: r.db(),
                    connect_timeout,
                    limit,
                    id: NEXT.fetch_add(1, Ordering::Relaxed),
                }))
            }
            // the default falls back to the driver where the pipe cannot go
            _ if client.is_none() => Ok(None),
            (true, false, _) => Err(BindingError::Config(
                "client=resp sends GET and SET only: use it with model=string, or drop client=resp".into(),
            )),
            (true, true, None) => Err(BindingError::Config(
                "client=resp connects to one node over plain TCP: drop it for clusters and rediss://".into(),
            )),
        }
    }

    /// A connection of this thread with room, or a new one.
    async fn share_or_connect(&self, pipeline: usize) -> Result<Rc<Pipe>, Broken> {
        if let Some(p) = pipe::shared(self.id, pipeline) {
            return Ok(p);
        }
        let p = Pipe::connect(
            (&self.host, self.port),
            self.user.as_deref(),
            self.password.as_deref(),
            self.db,
            self.connect_timeout,
            self.limit,
        )
        .await?;
        pipe::offer(self.id, &p);
        Ok(p)
    }
}

impl RedisSession {
    /// Whether GET, SET and DEL go over the session's own pipe.
    pub(super) fn resp(&self) -> bool {
        self.inner.resp.is_some()
    }

    /// Opens (or shares) the session's pipe at the start.
    pub(super) async fn open_pipe(&mut self) -> Result<(), BindingError> {
        match self.pipe().await {
            Ok(_) => Ok(()),
            Err(b) => Err(super::connect_error(&self.inner.server, &b.0, false)),
        }
    }

    /// The session's pipe: the one it has, or one of this thread's with
    /// room, or a new one.
    async fn pipe(&mut self) -> Result<Rc<Pipe>, Broken> {
        if let Some(p) = &self.pipe {
            return Ok(p.clone());
        }
        let t = self.inner.resp.as_ref().expect("client=resp");
        // boxed: the connection's futures stay out of every call's state
        let p = Box::pin(t.share_or_connect(self.inner.pipeline)).await?;
        self.pipe = Some(p.clone());
        Ok(p)
    }

    /// Sends `cmd` of the session's key over its pipe (connecting first
    /// when the last one broke) and waits for the reply. One `async fn`
    /// down to the reply's own future: each layer of `async fn` was a line
    /// of per-session state fetched from memory at every operation (with
    /// 256 sessions a thread, not in cache when the session runs again).
    pub(super) async fn resp_call(&mut self, cmd: Cmd<'_>) -> Result<Reply, Outcome> {
        if self.pipe.is_none() {
            // boxed: the connection's futures stay out of every call's state
            if let Err(b) = Box::pin(self.pipe()).await {
                return Err(Outcome::failed(Status::Unavailable, b.0));
            }
        }
        match piped!(self, self.queue(cmd)) {
            Some(r) => r,
            None => Err(Outcome::failed(Status::Unavailable, "no connection")),
        }
    }

    /// Queues `cmd` of the session's key on its pipe, when it has one;
    /// `Err` when the connection broke.
    pub(super) fn queue(&self, cmd: Cmd<'_>) -> Option<Result<Answer<'_>, Outcome>> {
        let p = self.pipe.as_ref()?;
        let key = &self.key[..];
        // the sessions that share the pipe: a batch is whole once each has a command in it
        let n = Rc::strong_count(p);
        let sent = match cmd {
            Cmd::Get => p.send(&[Arg::Bytes(b"GET"), Arg::Bytes(key)], n, self.start),
            Cmd::Set(v, cond) => {
                let (set, key) = (Arg::Bytes(b"SET"), Arg::Bytes(key));
                let v = v.unwrap_or(Arg::Bytes(&self.value));
                match cond {
                    Some(c) => p.send(&[set, key, v, Arg::Bytes(c.as_bytes())], n, self.start),
                    None => p.send(&[set, key, v], n, self.start),
                }
            }
            Cmd::Del => p.send(&[Arg::Bytes(b"DEL"), Arg::Bytes(key)], n, self.start),
        };
        Some(sent.map_err(|b| Outcome::failed(Status::Unavailable, b.0)))
    }

    /// The `SET` of record `key` queued on the session's pipe when the
    /// write is one (the string model's one-field record written whole,
    /// its value sent as it is, made straight into the output when it is
    /// owed); `None` for every other write, and when the session has no
    /// connection (`write_string` makes one).
    pub(super) fn pipe_write<'s>(
        &'s mut self,
        key: &[u8],
        values: &WriteSet,
        insert: bool,
    ) -> Option<Result<Answer<'s>, Outcome>> {
        let n = self.inner.field_names.len();
        let k = kv::stored_entry(n, values)?;
        if !(insert || kv::is_whole(n, values)) {
            return None;
        }
        self.full_key(key);
        let cond = self.write_cond(insert);
        self.queue(Cmd::Set(Arg::entry(values, k), cond))
    }

    /// A whole record's `SET` condition: none for an upsert, `NX` for an
    /// insert, `XX` for an update.
    pub(super) fn write_cond(&self, insert: bool) -> Option<&'static str> {
        let upsert = if insert {
            self.inner.insert_mode == InsertMode::Upsert
        } else {
            self.inner.update_mode == UpdateMode::Upsert
        };
        match (upsert, insert) {
            (true, _) => None,
            (false, true) => Some("NX"),
            (false, false) => Some("XX"),
        }
    }

    /// Gives a GET's reply buffer back to the pipe for a later reply.
    pub(super) fn recycle(&self, buf: Vec<u8>) {
        if let Some(p) = &self.pipe {
            p.recycle(buf);
        }
    }
}

/// A reply, or the outcome it fails the call with: the server's error
/// line, a timeout, or the connection broken (`true`: the session drops it).
pub(super) fn answered(reply: Result<Reply, Failed>) -> Result<Reply, (Outcome, bool)> {
    match reply {
        Ok(Reply::Error(e)) => {
            let (code, detail) = e.split_once(' ').unwrap_or((&e, ""));
            let text = ServerError::new("Redis", code, detail).to_string();
            Err((Outcome::failed(Status::Error, text), false))
        }
        Ok(r) => Ok(r),
        Err(Failed::Broken(b)) => Err((Outcome::failed(Status::Unavailable, b.0), true)),
        // the pipe keeps the call's place: the connection stays
        Err(Failed::Late(limit)) => Err((timed_out(limit), false)),
    }
}

/// A whole record's write as an outcome: stored, or refused by its
/// condition (an insert's key taken, an update's key missing).
pub(super) fn written(stored: Result<bool, Outcome>, insert: bool, bytes: u64) -> Outcome {
    match stored {
        Ok(true) => Outcome::ok(0, bytes),
        Ok(false) if insert => Outcome::of(Status::DuplicateKey),
        Ok(false) => Outcome::of(Status::NotFound),
        Err(o) => o,
    }
}

/// A command of the session's key, over its pipe.
pub(super) enum Cmd<'a> {
    Get,
    /// `SET key value [NX|XX]`; no value: the session's own.
    Set(Option<Arg<'a>>, Option<&'a str>),
    Del,
}

/// A GET's reply: the value, if the key has one.
pub(super) fn got(r: Result<Reply, Outcome>) -> Result<Option<Vec<u8>>, Outcome> {
    match r? {
        Reply::Bulk(v) => Ok(Some(v)),
        Reply::Nil => Ok(None),
        other => Err(unexpected("GET", &other)),
    }
}

/// A SET's reply: whether the server stored the value.
pub(super) fn stored(r: Result<Reply, Outcome>) -> Result<bool, Outcome> {
    match r? {
        Reply::Status => Ok(true),
        Reply::Nil => Ok(false),
        other => Err(unexpected("SET", &other)),
    }
}

/// A DEL's reply: how many keys went.
pub(super) fn deleted(r: Result<Reply, Outcome>) -> Result<i64, Outcome> {
    match r? {
        Reply::Int(n) => Ok(n),
        other => Err(unexpected("DEL", &other)),
    }
}

fn unexpected(cmd: &str, r: &Reply) -> Outcome {
    Outcome::failed(Status::Error, format!("Redis answered {cmd} with {r:?}"))
}
