//! memcached sessions: each operation as its text-protocol commands, replies
//! mapped to statuses.
use super::*;
use yardstick_core::bounded::Bounded;

impl Binding for MemcachedBinding {
    type Session = Bounded<MemcachedSession>;

    async fn session(&self) -> Result<Self::Session, BindingError> {
        let conn = Conn::connect(self.inner.endpoint()).await.map_err(|e| {
            BindingError::Unavailable(format!(
                "cannot connect to memcached at {}: {e}",
                self.inner.addr
            ))
        })?;
        let session = MemcachedSession {
            inner: self.inner.clone(),
            conn: Some(conn),
            key: Vec::new(),
            value: Vec::new(),
            encoded: Vec::new(),
        };
        Ok(Bounded::new(session, self.inner.timeout))
    }

    fn info(&self) -> EngineInfo {
        self.info.clone()
    }

    fn op_timeout(&self) -> Option<std::time::Duration> {
        Some(self.inner.timeout)
    }
}

pub struct MemcachedSession {
    inner: Arc<Inner>,
    /// `None` after the connection broke or timed out; the next operation reconnects.
    conn: Option<Conn>,
    key: Vec<u8>,
    value: Vec<u8>,
    encoded: Vec<u8>,
}

/// What one operation does on the connection, run under the timeout.
enum Op<'a> {
    Read(Fields, &'a mut Record),
    Write(&'a WriteSet, bool),
    Delete,
}

impl MemcachedSession {
    fn set_key(&mut self, key: &[u8]) -> Result<(), Outcome> {
        self.key.clear();
        self.key.extend_from_slice(&self.inner.prefix);
        self.key.extend_from_slice(key);
        if self.key.len() > MAX_KEY || self.key.iter().any(|b| *b <= b' ' || *b == 0x7f) {
            return Err(Outcome::failed(
                Status::Error,
                "memcached keys are at most 250 bytes without spaces or control characters",
            ));
        }
        Ok(())
    }

    async fn run(&mut self, key: &[u8], op: Op<'_>) -> Outcome {
        if let Err(o) = self.set_key(key) {
            return o;
        }
        if self.conn.is_none() {
            match Conn::connect(self.inner.endpoint()).await {
                Ok(c) => self.conn = Some(c),
                Err(e) => return Outcome::failed(e.status(), e),
            }
        }
        let timeout = self.inner.timeout;
        let result = tokio::time::timeout(timeout, self.exec(op))
            .await
            .unwrap_or(Err(ConnError::Timeout));
        match result {
            Ok(o) => o,
            Err(e) => {
                if !e.keeps_connection() {
                    // the reply stream is out of step: start over on a new connection
                    self.conn = None;
                }
                Outcome::failed(e.status(), e)
            }
        }
    }

    async fn exec(&mut self, op: Op<'_>) -> Result<Outcome, ConnError> {
        let inner = &*self.inner;
        let c = self.conn.as_mut().expect("connected by run");
        let n = inner.fields;
        match op {
            Op::Read(fields, out) => match c.get(&self.key, false, &mut self.value).await? {
                None => Ok(Outcome::of(Status::NotFound)),
                Some(_) => Ok(match kv::decode(n, &self.value, fields, out) {
                    Ok(bytes) => Outcome::ok(1, bytes),
                    Err(e) => Outcome::failed(Status::Error, e),
                }),
            },
            Op::Delete => Ok(match c.delete(&self.key).await? {
                Reply::Deleted => Outcome::ok(0, 0),
                Reply::NotFound => Outcome::of(Status::NotFound),
                r => Outcome::failed(Status::Error, format!("delete answered {r:?}")),
            }),
            Op::Write(values, insert) => {
                let upsert = if insert {
                    inner.insert_mode == InsertMode::Upsert
                } else {
                    inner.update_mode == UpdateMode::Upsert
                };
                let bytes = values.bytes();
                if insert || kv::is_whole(n, values) {
                    kv::encode(n, values, &mut self.encoded);
                    let verb = match (insert, upsert) {
                        (_, true) => "set",
                        (true, false) => "add",
                        (false, false) => "replace",
                    };
                    return Ok(match c.store(verb, &self.key, &self.encoded, None).await? {
                        Reply::Stored => Outcome::ok(0, bytes),
                        Reply::NotStored if insert => Outcome::of(Status::DuplicateKey),
                        Reply::NotStored => Outcome::of(Status::NotFound),
                        r => Outcome::failed(Status::Error, format!("{verb} answered {r:?}")),
                    });
                }
                for _ in 0..CAS_ATTEMPTS {
                    match c.get(&self.key, true, &mut self.value).await? {
                        None if !upsert => return Ok(Outcome::of(Status::NotFound)),
                        None => {
                            kv::encode(n, values, &mut self.encoded);
                            if let Reply::Stored =
                                c.store("add", &self.key, &self.encoded, None).await?
                            {
                                return Ok(Outcome::ok(0, bytes));
                            }
                        }
                        Some(cas) => {
                            if let Err(e) = kv::merge(n, &self.value, values, &mut self.encoded) {
                                return Ok(Outcome::failed(Status::Error, e));
                            }
                            match c.store("cas", &self.key, &self.encoded, Some(cas)).await? {
                                Reply::Stored => return Ok(Outcome::ok(0, bytes)),
                                Reply::NotFound if !upsert => {
                                    return Ok(Outcome::of(Status::NotFound))
                                }
                                _ => {}
                            }
                        }
                    }
                }
                Ok(Outcome::failed(
                    Status::Conflict,
                    format!("record changed under {CAS_ATTEMPTS} cas attempts in a row"),
                ))
            }
        }
    }
}

impl Session for MemcachedSession {
    /// A call abandoned at its timeout may leave a reply on the way: the
    /// next call connects anew.
    fn abandoned(&mut self) {
        self.conn = None;
    }

    async fn read(&mut self, key: &[u8], fields: Fields, out: &mut Record) -> Outcome {
        self.run(key, Op::Read(fields, out)).await
    }

    async fn scan(&mut self, _: &[u8], _: u64, _: Fields, _: &mut ScanRows) -> Outcome {
        Outcome::failed(Status::Error, "memcached cannot scan")
    }

    async fn clear(&mut self) -> Result<Option<u64>, BindingError> {
        Err(BindingError::Unsupported("memcached cannot list its keys to delete them: restart it (or send it flush_all) to start from an empty cache".into()))
    }

    async fn update(&mut self, key: &[u8], values: &WriteSet) -> Outcome {
        self.run(key, Op::Write(values, false)).await
    }

    async fn insert(&mut self, key: &[u8], values: &WriteSet) -> Outcome {
        self.run(key, Op::Write(values, true)).await
    }

    async fn delete(&mut self, key: &[u8]) -> Outcome {
        self.run(key, Op::Delete).await
    }
}
