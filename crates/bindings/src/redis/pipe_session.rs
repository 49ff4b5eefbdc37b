//! What a session sends over its [`Pipe`] (`client=resp`): the string
//! model's GET, SET and DEL, their replies mapped as the driver's are.
use super::pipe::{self, Broken, Pipe, Reply};
use super::session::RedisSession;
use super::{BindingError, Server};
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use yardstick_core::binding::{Outcome, Status};
use yardstick_core::error::ServerError;

/// Where and as whom a binding's own connections log in.
pub(crate) struct RespTarget {
    host: String,
    port: u16,
    user: Option<String>,
    password: Option<String>,
    db: i64,
    connect_timeout: Duration,
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
        let reply = match &self.pipe {
            Some(p) => {
                let key = &self.key[..];
                // the sessions that share the pipe: a batch is whole once each has a command in it
                let n = Rc::strong_count(p);
                let sent = match cmd {
                    Cmd::Get => p.send(&[b"GET", key], n),
                    Cmd::Set(v, cond) => {
                        let v = v.unwrap_or(&self.value);
                        match cond {
                            Some(c) => p.send(&[b"SET", key, v, c.as_bytes()], n),
                            None => p.send(&[b"SET", key, v], n),
                        }
                    }
                    Cmd::Del => p.send(&[b"DEL", key], n),
                };
                match sent {
                    Ok(answer) => answer.await,
                    Err(b) => Err(b),
                }
            }
            None => Err(Broken("no connection".into())),
        };
        match reply {
            Ok(Reply::Error(e)) => {
                let (code, detail) = e.split_once(' ').unwrap_or((&e, ""));
                Err(Outcome::failed(
                    Status::Error,
                    ServerError::new("Redis", code, detail).to_string(),
                ))
            }
            Ok(r) => Ok(r),
            Err(b) => {
                self.pipe = None;
                Err(Outcome::failed(Status::Unavailable, b.0))
            }
        }
    }

    /// Gives a GET's reply buffer back to the pipe for a later reply.
    pub(super) fn recycle(&self, buf: Vec<u8>) {
        if let Some(p) = &self.pipe {
            p.recycle(buf);
        }
    }
}

/// A command of the session's key, over its pipe.
pub(super) enum Cmd<'a> {
    Get,
    /// `SET key value [NX|XX]`; no value: the session's own.
    Set(Option<&'a [u8]>, Option<&'a str>),
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
