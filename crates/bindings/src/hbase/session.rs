//! HBase sessions: one gateway connection each, every operation one call
//! under the operation timeout; a broken or timed-out connection is dropped
//! and the next operation opens a new one.
use super::client::{CallError, Conn};
use super::*;
use yardstick_core::bounded::Bounded;

impl Binding for HbaseBinding {
    type Session = Bounded<HbaseSession>;

    async fn session(&self) -> Result<Self::Session, BindingError> {
        let conn = Conn::connect(&self.inner.addr, self.inner.connect_timeout)
            .await
            .map_err(|e| {
                BindingError::Unavailable(format!(
                    "cannot connect to the HBase Thrift2 gateway at {}: {e}",
                    self.inner.addr
                ))
            })?;
        let session = HbaseSession {
            inner: self.inner.clone(),
            conn: Some(conn),
        };
        Ok(Bounded::new(session, self.inner.timeout))
    }

    fn info(&self) -> EngineInfo {
        self.info.clone()
    }

    /// The region server's JMX bean on the info server.
    fn statistics(&self) -> Option<Box<dyn yardstick_core::observe::Source>> {
        Some(match super::stats::HbaseStats::new(&self.info_addr) {
            Ok(s) => Box::new(s),
            Err(why) => Box::new(yardstick_core::observe::Absent { name: "hbase".into(), why, warn: true }),
        })
    }

    fn op_timeout(&self) -> Option<std::time::Duration> {
        Some(self.inner.timeout)
    }
}

pub(crate) struct HbaseSession {
    inner: Arc<Inner>,
    /// `None` after the connection broke or timed out.
    conn: Option<Conn>,
}

impl HbaseSession {
    /// Runs `call` on the connection (opening one when there is none) under
    /// the timeout, and makes its outcome; a failure is said with its cause.
    async fn run<T>(
        &mut self,
        call: impl AsyncFnOnce(&mut Conn, &Inner) -> Result<T, CallError>,
        outcome: impl FnOnce(T) -> Outcome,
    ) -> Outcome {
        let inner = &*self.inner;
        if self.conn.is_none() {
            match Conn::connect(&inner.addr, inner.connect_timeout).await {
                Ok(c) => self.conn = Some(c),
                Err(e) => {
                    let e = CallError::Io(e);
                    return Outcome::failed(e.status(), e);
                }
            }
        }
        let Some(conn) = self.conn.as_mut() else {
            return Outcome::of(Status::Unavailable);
        };
        let result = tokio::time::timeout(inner.timeout, call(conn, inner))
            .await
            .unwrap_or(Err(CallError::Timeout));
        match result {
            Ok(v) => outcome(v),
            Err(e) => {
                if e.breaks_connection() {
                    self.conn = None;
                }
                Outcome::failed(e.status(), e)
            }
        }
    }
}

/// The field a read selects, `None` for all.
fn field_of(fields: Fields) -> Option<usize> {
    match fields {
        Fields::All => None,
        Fields::One(f) => Some(f),
    }
}

impl Session for HbaseSession {
    /// A call abandoned at its timeout may leave a reply on the way: the
    /// next call connects anew.
    fn abandoned(&mut self) {
        self.conn = None;
    }

    async fn read(&mut self, key: &[u8], fields: Fields, out: &mut Record) -> Outcome {
        let f = field_of(fields);
        self.run(
            async |c, i| c.get(&i.layout, key, f, out).await,
            |(cells, bytes)| {
                if cells == 0 {
                    Outcome::of(Status::NotFound)
                } else {
                    Outcome::ok(1, bytes)
                }
            },
        )
        .await
    }

    async fn scan(
        &mut self,
        start: &[u8],
        count: u64,
        fields: Fields,
        out: &mut ScanRows,
    ) -> Outcome {
        let f = field_of(fields);
        let mut rows = 0;
        let outcome = self
            .run(
                async |c, i| {
                    let bytes = c.scan(&i.layout, start, count, f, out).await?;
                    rows = out.len() as u64;
                    Ok(bytes)
                },
                |bytes| Outcome::ok(0, bytes),
            )
            .await;
        outcome.with_rows(rows)
    }

    async fn update(&mut self, key: &[u8], values: &WriteSet) -> Outcome {
        let check = (self.inner.update_mode == UpdateMode::Update).then_some(true);
        let bytes = values.bytes();
        self.run(
            async |c, i| c.put(&i.layout, key, values, check).await,
            |done| match done {
                true => Outcome::ok(0, bytes),
                false => Outcome::of(Status::NotFound),
            },
        )
        .await
    }

    async fn insert(&mut self, key: &[u8], values: &WriteSet) -> Outcome {
        let check = (self.inner.insert_mode == InsertMode::Insert).then_some(false);
        let bytes = values.bytes();
        self.run(
            async |c, i| c.put(&i.layout, key, values, check).await,
            |done| match done {
                true => Outcome::ok(0, bytes),
                false => Outcome::of(Status::DuplicateKey),
            },
        )
        .await
    }

    async fn delete(&mut self, key: &[u8]) -> Outcome {
        self.run(
            async |c, i| c.delete(&i.layout, key).await,
            |done| match done {
                true => Outcome::ok(0, 0),
                false => Outcome::of(Status::NotFound),
            },
        )
        .await
    }

    /// One `putMultiple` with upsert semantics; with insert semantics each
    /// record is its own checked put (HBase has no multi-row conditional put).
    async fn insert_batch(&mut self, batch: &Batch) -> Outcome {
        if self.inner.insert_mode == InsertMode::Insert {
            let mut inserted = 0;
            for (key, values) in batch.rows() {
                let out = self.insert(key, values).await;
                if !out.status().is_ok() {
                    return out.with_rows(inserted);
                }
                inserted += 1;
            }
            return Outcome::ok(inserted, batch.bytes());
        }
        let n = batch.len() as u64;
        self.run(
            async |c, i| c.put_multiple(&i.layout, batch.rows(), batch.len()).await,
            |()| Outcome::ok(n, batch.bytes()),
        )
        .await
    }

    /// Truncates the table (disable, truncate keeping its regions, enable).
    async fn clear(&mut self) -> Result<Option<u64>, BindingError> {
        let out = self
            .run(
                async |c, i| c.truncate(&i.namespace, &i.name).await,
                |()| Outcome::ok(0, 0),
            )
            .await;
        match out.status() {
            Status::Ok => Ok(None),
            _ => Err(BindingError::Io(format!(
                "cannot truncate the table: {}",
                out.detail().unwrap_or(out.status().name())
            ))),
        }
    }
}
