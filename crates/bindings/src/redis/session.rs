//! Redis sessions: each operation as the commands (or Lua script) of the
//! record model, their replies mapped to statuses.
//!
//! The driver's paths (redis-rs calls, the hash model, partial updates,
//! scans) are awaited through `Box::pin`: inline, their large futures sized
//! every pipelined GET and SET's state, which every slot keeps in cache.
//!
//! A session bounds its calls itself: the pipe's commands by the pipe's
//! one timer, from the start stamp the session gives each (see
//! [`piped!`]), every other path by the session's own timer (see
//! [`bounded!`]).
use super::*;
use super::pipe::Arg;
use super::pipe_session::{answered, deleted, got, stored, written, Cmd};
use std::time::Duration;
use yardstick_core::bounded::{timed_out, CallTimer, Elapsed};
use yardstick_core::error::ServerError;

mod batch;

impl Binding for RedisBinding {
    type Session = RedisSession;

    async fn session(&self) -> Result<Self::Session, BindingError> {
        let mut session = RedisSession {
            inner: self.inner.clone(),
            con: None,
            pipe: None,
            key: Vec::new(),
            value: Vec::new(),
            batch_script_loaded: false,
            start: 0,
            timer: CallTimer::default(),
            limit: self.timeout,
        };
        if session.resp() {
            // the driver's connection only when a call needs it (a batch, a CAS)
            session.open_pipe().await?;
        } else {
            let con = self
                .inner
                .session_connection()
                .await
                .map_err(|e| open_error(&self.inner.server, &e))?;
            session.con = Some(Box::new(con));
        }
        Ok(session)
    }

    fn info(&self) -> EngineInfo {
        self.info.clone()
    }

    fn op_timeout(&self) -> Option<std::time::Duration> {
        Some(self.timeout)
    }

    /// INFO of one server; a cluster's nodes are not observed one by one.
    fn statistics(&self) -> Option<Box<dyn yardstick_core::observe::Source>> {
        (!self.inner.is_cluster()).then(|| {
            Box::new(yardstick_core::observe::remote::Driven::new(
                super::stats::RedisStats::new(self.inner.clone()),
            )) as Box<dyn yardstick_core::observe::Source>
        })
    }
}

pub struct RedisSession {
    pub(super) inner: Arc<Inner>,
    /// `None` after it broke (the next operation reconnects). Boxed: pipe
    /// sessions never use it, and inline it split their hot fields.
    con: Option<Box<Con>>,
    /// `client=resp`: the connection GET, SET and DEL go over.
    pub(super) pipe: Option<std::rc::Rc<super::pipe::Pipe>>,
    pub(super) key: Vec<u8>,
    pub(super) value: Vec<u8>,
    /// The batch script is in the server's script cache (EVALSHA works).
    batch_script_loaded: bool,
    /// The start of the call being made ([`CallTimer::start`]), taken at
    /// its first poll: its commands on the pipe and [`bounded!`] count
    /// the limit from there.
    pub(super) start: u64,
    /// Bounds the calls off the pipe (the driver's), by `limit`. Its sleep
    /// is made at the first of those: a session that only uses the pipe
    /// has none.
    pub(super) timer: CallTimer,
    pub(super) limit: Duration,
}

/// A driver error in one line: the server's error prefix and message, or
/// the chain of causes.
pub(super) fn error_text(e: &RedisError) -> String {
    match e.code() {
        Some(code) => ServerError::new("Redis", code, e.detail().unwrap_or_default()).to_string(),
        None => yardstick_core::error::chain(e),
    }
}

fn status_of(e: &RedisError) -> Status {
    if e.is_timeout() {
        Status::Timeout
    } else if e.is_io_error()
        || e.is_connection_dropped()
        || e.is_connection_refusal()
        || e.is_unrecoverable_error()
    {
        Status::Unavailable
    } else {
        Status::Error
    }
}

impl RedisSession {
    /// Makes sure the session has a connection, reconnecting if it broke.
    async fn connected(&mut self) -> Result<(), Outcome> {
        if self.con.is_none() {
            match self.inner.connect_session().await {
                Ok(c) => self.con = Some(Box::new(c)),
                Err(e) => return Err(Outcome::failed(status_of(&e), error_text(&e))),
            }
        }
        Ok(())
    }

    fn failed(&mut self, e: RedisError) -> Outcome {
        let status = status_of(&e);
        if status == Status::Unavailable || status == Status::Timeout {
            self.con = None;
        }
        Outcome::failed(status, error_text(&e))
    }

    pub(super) fn full_key(&mut self, key: &[u8]) {
        self.key.clear();
        self.key.extend_from_slice(&self.inner.prefix);
        self.key.extend_from_slice(key);
    }

    /// Runs one of the hash model's write scripts; returns its integer reply.
    async fn hash_script(
        &mut self,
        which: fn(&Scripts) -> &Script,
        key: &[u8],
        values: Option<&WriteSet>,
    ) -> Result<i64, Outcome> {
        self.full_key(key);
        let inner = self.inner.clone();
        let script = which(&inner.scripts);
        let mut inv = script.key(&self.key[..]);
        if !inner.is_cluster() {
            // a cluster keeps no index: record and index could sit on different slots
            inv.key(&inner.index[..]);
        }
        inv.arg(key);
        if let Some(values) = values {
            for (i, v) in values.iter() {
                inv.arg(&inner.field_names[i][..]).arg(v);
            }
        }
        self.connected().await?;
        let con = self.con.as_deref_mut().expect("connected above");
        match inv.invoke_async::<i64>(con).await {
            Ok(n) => Ok(n),
            Err(e) => Err(self.failed(e)),
        }
    }

    async fn read_hash(&mut self, fields: Fields, out: &mut Record) -> Outcome {
        if let Err(o) = self.connected().await {
            return o;
        }
        match self.read_hash_fields(fields, out).await {
            Ok(Some(bytes)) => Outcome::ok(1, bytes),
            Ok(None) => Outcome::of(Status::NotFound),
            Err(e) => self.failed(e),
        }
    }

    async fn read_hash_fields(
        &mut self,
        fields: Fields,
        out: &mut Record,
    ) -> Result<Option<u64>, RedisError> {
        let inner = self.inner.clone();
        let con = self.con.as_deref_mut().expect("connected by the caller");
        match fields {
            Fields::All => {
                let mut cmd = redis::cmd("HMGET");
                cmd.arg(&self.key[..]);
                for f in &inner.field_names {
                    cmd.arg(&f[..]);
                }
                let vals: Vec<Option<Vec<u8>>> = cmd.query_async(con).await?;
                Ok(copy_fields(
                    vals.iter().enumerate().map(|(i, v)| (i, v.as_deref())),
                    out,
                ))
            }
            Fields::One(i) => {
                let v: Option<Vec<u8>> = redis::cmd("HGET")
                    .arg(&self.key[..])
                    .arg(&inner.field_names[i][..])
                    .query_async(con)
                    .await?;
                Ok(copy_fields(std::iter::once((i, v.as_deref())), out))
            }
        }
    }

    async fn get(&mut self) -> Result<Option<Vec<u8>>, Outcome> {
        if self.resp() {
            return got(self.resp_call(Cmd::Get).await);
        }
        Box::pin(self.get_by_driver()).await
    }

    async fn get_by_driver(&mut self) -> Result<Option<Vec<u8>>, Outcome> {
        self.connected().await?;
        let con = self.con.as_deref_mut().expect("connected above");
        match redis::cmd("GET").arg(&self.key[..]).query_async(con).await {
            Ok(v) => Ok(v),
            Err(e) => Err(self.failed(e)),
        }
    }

    /// `DEL key`: how many keys went.
    async fn del(&mut self) -> Result<i64, Outcome> {
        if self.resp() {
            return deleted(self.resp_call(Cmd::Del).await);
        }
        Box::pin(self.del_by_driver()).await
    }

    async fn del_by_driver(&mut self) -> Result<i64, Outcome> {
        self.connected().await?;
        let con = self.con.as_deref_mut().expect("connected above");
        match redis::cmd("DEL").arg(&self.key[..]).query_async(con).await {
            Ok(n) => Ok(n),
            Err(e) => Err(self.failed(e)),
        }
    }

    /// `SET key value [NX|XX]`: whether the server stored it.
    async fn set(&mut self, cond: Option<&str>) -> Result<bool, Outcome> {
        if self.resp() {
            return stored(self.resp_call(Cmd::Set(None, cond)).await);
        }
        Box::pin(self.set_by_driver(cond)).await
    }

    async fn set_by_driver(&mut self, cond: Option<&str>) -> Result<bool, Outcome> {
        self.connected().await?;
        let con = self.con.as_deref_mut().expect("connected above");
        let mut cmd = redis::cmd("SET");
        cmd.arg(&self.key[..]).arg(&self.value[..]);
        if let Some(c) = cond {
            cmd.arg(c);
        }
        match cmd.query_async::<Value>(con).await {
            Ok(Value::Nil) => Ok(false),
            Ok(_) => Ok(true),
            Err(e) => Err(self.failed(e)),
        }
    }

    /// Writes `values` to a string-model record.
    async fn write_string(&mut self, key: &[u8], values: &WriteSet, insert: bool) -> Outcome {
        self.full_key(key);
        let n = self.inner.field_names.len();
        if insert || kv::is_whole(n, values) {
            let cond = self.write_cond(insert);
            // counted while the values are in cache, not after the reply
            let bytes = values.bytes();
            // one field over the pipe: the field is the value, sent as it
            // is (no copy into the session's value first)
            let stored = match kv::as_stored(n, values) {
                Some(v) if self.resp() => stored(self.resp_call(Cmd::Set(Some(Arg::Bytes(v)), cond)).await),
                _ => {
                    kv::encode(n, values, &mut self.value);
                    self.set(cond).await
                }
            };
            return written(stored, insert, bytes);
        }
        let upsert = self.write_cond(insert).is_none();
        Box::pin(self.write_partial(values, upsert)).await
    }

    /// A partial update of a string-model record (the session's key):
    /// read, merge, compare-and-set.
    async fn write_partial(&mut self, values: &WriteSet, upsert: bool) -> Outcome {
        let n = self.inner.field_names.len();
        for _ in 0..CAS_ATTEMPTS {
            let old = match self.get().await {
                Ok(v) => v,
                Err(o) => return o,
            };
            let Some(old) = old else {
                if !upsert {
                    return Outcome::of(Status::NotFound);
                }
                kv::encode(n, values, &mut self.value);
                match self.set(Some("NX")).await {
                    Ok(true) => return Outcome::ok(0, values.bytes()),
                    Ok(false) => continue,
                    Err(o) => return o,
                }
            };
            if let Err(e) = kv::merge(n, &old, values, &mut self.value) {
                return Outcome::failed(Status::Error, e);
            }
            let inner = self.inner.clone();
            let mut inv = inner.scripts.cas.key(&self.key[..]);
            inv.arg(&old[..]).arg(&self.value[..]);
            if let Err(o) = self.connected().await {
                return o;
            }
            let con = self.con.as_deref_mut().expect("connected above");
            match inv.invoke_async::<i64>(con).await {
                Ok(1) => return Outcome::ok(0, values.bytes()),
                Ok(_) => continue,
                Err(e) => return self.failed(e),
            }
        }
        Outcome::failed(
            Status::Conflict,
            format!("record changed under {CAS_ATTEMPTS} compare-and-set attempts in a row"),
        )
    }

    async fn write_hash(&mut self, key: &[u8], values: &WriteSet, insert: bool) -> Outcome {
        let which: fn(&Scripts) -> &Script =
            match (insert, self.inner.insert_mode, self.inner.update_mode) {
                (true, InsertMode::Insert, _) => |s| &s.insert_nx,
                (true, InsertMode::Upsert, _) | (false, _, UpdateMode::Upsert) => |s| &s.upsert,
                (false, _, UpdateMode::Update) => |s| &s.update_xx,
            };
        if values.is_empty() {
            return Outcome::failed(
                Status::Error,
                "a Redis hash cannot be written with no fields",
            );
        }
        match self.hash_script(which, key, Some(values)).await {
            Ok(1) => Outcome::ok(0, values.bytes()),
            Ok(_) if insert => Outcome::of(Status::DuplicateKey),
            Ok(_) => Outcome::of(Status::NotFound),
            Err(o) => o,
        }
    }

    /// A scan of the hash model's key index.
    async fn scan_index(
        &mut self,
        start: &[u8],
        count: u64,
        fields: Fields,
        out: &mut ScanRows,
    ) -> Outcome {
        let inner = self.inner.clone();
        if let Err(o) = self.connected().await {
            return o;
        }
        let con = self.con.as_deref_mut().expect("connected above");
        let mut min = Vec::with_capacity(start.len() + 1);
        min.push(b'[');
        min.extend_from_slice(start);
        let keys: Vec<Vec<u8>> = match redis::cmd("ZRANGE")
            .arg(&inner.index[..])
            .arg(min)
            .arg("+")
            .arg("BYLEX")
            .arg("LIMIT")
            .arg(0)
            .arg(count)
            .query_async(con)
            .await
        {
            Ok(k) => k,
            Err(e) => return self.failed(e),
        };
        if keys.is_empty() {
            return Outcome::ok(0, 0);
        }
        let mut pipe = redis::pipe();
        for k in &keys {
            let mut full = inner.prefix.clone();
            full.extend_from_slice(k);
            match fields {
                Fields::All => {
                    let c = pipe.cmd("HMGET").arg(full);
                    for f in &inner.field_names {
                        c.arg(&f[..]);
                    }
                }
                Fields::One(i) => {
                    pipe.cmd("HMGET").arg(full).arg(&inner.field_names[i][..]);
                }
            }
        }
        let con = self.con.as_deref_mut().expect("connected above");
        let rows: Vec<Vec<Option<Vec<u8>>>> = match pipe.query_async(con).await {
            Ok(r) => r,
            Err(e) => return self.failed(e),
        };
        let (mut n, mut bytes) = (0, 0);
        for (k, vals) in keys.iter().zip(&rows) {
            // a record deleted between the index read and the HMGET is skipped
            if vals.iter().all(Option::is_none) {
                continue;
            }
            let rec = out.push(k);
            let cols = fields
                .columns(inner.field_names.len())
                .map(|(c, f)| (f, vals.get(c).and_then(|v| v.as_deref())));
            bytes += copy_fields(cols, rec).unwrap_or(0);
            n += 1;
        }
        Outcome::ok(n, bytes)
    }
}

/// Copies present values into `out`: `None` when no field was present.
fn copy_fields<'a>(
    vals: impl Iterator<Item = (usize, Option<&'a [u8]>)>,
    out: &mut Record,
) -> Option<u64> {
    let mut bytes = 0;
    let mut any = false;
    for (i, v) in vals {
        if let Some(v) = v {
            out.set(i, v);
            bytes += v.len() as u64;
            any = true;
        }
    }
    any.then_some(bytes)
}

impl Session for RedisSession {
    const TAKES_CALL_START: bool = true;
    /// A whole one-field record's value is made in the pipe's output
    /// (`pipe_write`); every other path reads it, which makes it first.
    const TAKES_OWED_VALUES: bool = true;

    /// A call abandoned at its timeout may leave a reply on the way: the
    /// next call connects anew (a pipe keeps the abandoned call's place, so
    /// the replies after it still reach their callers).
    fn abandoned(&mut self) {
        self.con = None;
    }

    /// A one-field string value was the pipe's reply buffer: back to the
    /// pipe, for the next reply to land in while it is still in cache.
    fn release(&mut self, rec: &mut Record) {
        if self.inner.model == Model::String && self.inner.field_names.len() == 1 {
            if let Some(buf) = rec.take(0) {
                self.recycle(buf);
            }
        }
    }

    async fn read(&mut self, key: &[u8], fields: Fields, out: &mut Record) -> Outcome {
        self.start = CallTimer::start();
        self.full_key(key);
        match self.inner.model {
            Model::Hash => {
                bounded!(self, Box::pin(self.read_hash(fields, out))).unwrap_or_else(|o| o)
            }
            Model::String => {
                // the GET over the pipe awaited here (see `piped!`)
                let value = match piped!(self, self.queue(Cmd::Get)) {
                    Some(r) => got(r),
                    None => bounded!(self, self.get()).and_then(|r| r),
                };
                match value {
                    Ok(Some(v)) => {
                        let n = self.inner.field_names.len();
                        let (decoded, spare) = kv::decode_owned(n, v, fields, out);
                        self.recycle(spare);
                        match decoded {
                            Ok(bytes) => Outcome::ok(1, bytes),
                            Err(e) => Outcome::failed(Status::Error, e),
                        }
                    }
                    Ok(None) => Outcome::of(Status::NotFound),
                    Err(o) => o,
                }
            }
        }
    }

    async fn scan(
        &mut self,
        first: &[u8],
        count: u64,
        fields: Fields,
        out: &mut ScanRows,
    ) -> Outcome {
        self.start = CallTimer::start();
        if self.inner.model == Model::String {
            return Outcome::failed(Status::Error, "model=string keeps no key index to scan");
        }
        if self.inner.is_cluster() {
            return Outcome::failed(Status::Error, "a Redis Cluster keeps no key index to scan");
        }
        bounded!(self, Box::pin(self.scan_index(first, count, fields, out)))
            .unwrap_or_else(|o| o)
    }

    async fn update(&mut self, key: &[u8], values: &WriteSet) -> Outcome {
        write_record!(self, key, values, false)
    }

    async fn insert(&mut self, key: &[u8], values: &WriteSet) -> Outcome {
        write_record!(self, key, values, true)
    }

    /// One pipeline per batch: every record's write goes out before the first
    /// reply is read (one round trip). Not atomic: the outcome counts the
    /// records written and reports the first refusal.
    async fn insert_batch(&mut self, batch: &Batch) -> Outcome {
        self.start = CallTimer::start();
        bounded!(self, Box::pin(self.write_batch(batch))).unwrap_or_else(|o| o)
    }

    async fn delete(&mut self, key: &[u8]) -> Outcome {
        self.start = CallTimer::start();
        let n = match self.inner.model {
            Model::Hash => {
                bounded!(self, Box::pin(self.hash_script(|s| &s.delete, key, None)))
                    .and_then(|r| r)
            }
            Model::String => {
                self.full_key(key);
                bounded!(self, self.del()).and_then(|r| r)
            }
        };
        match n {
            Ok(0) => Outcome::of(Status::NotFound),
            Ok(_) => Outcome::ok(0, 0),
            Err(o) => o,
        }
    }
}
