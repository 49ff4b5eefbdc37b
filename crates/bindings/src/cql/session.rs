//! CQL sessions: prepared statements on the shared driver session, LWT for
//! insert and update semantics, errors mapped to statuses.
use super::*;
use yardstick_core::bounded::Bounded;

impl Binding for CqlBinding {
    type Session = Bounded<CqlSessionHandle>;

    async fn session(&self) -> Result<Self::Session, BindingError> {
        let me = std::thread::current().id();
        let existing = self
            .inner
            .sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .find(|(t, _)| *t == me)
            .map(|(_, s)| s.clone());
        let shared = match existing {
            Some(s) => s,
            None => {
                // created on this worker's runtime, which runs its connections
                let s = connect(&self.inner, true).await?;
                let st = prepare(&s, &self.inner).await?;
                let shared = Arc::new((s, st));
                self.inner
                    .sessions
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push((me, shared.clone()));
                shared
            }
        };
        let session = CqlSessionHandle {
            shared,
            fields: self.inner.fields.len(),
        };
        Ok(Bounded::new(session, self.inner.timeout))
    }

    fn info(&self) -> EngineInfo {
        self.info.clone()
    }

    /// The virtual tables of the URL's first node.
    fn statistics(&self) -> Option<Box<dyn yardstick_core::observe::Source>> {
        Some(Box::new(yardstick_core::observe::remote::Driven::new(
            super::stats::CqlStats::new(self.inner.clone()),
        )))
    }

    fn op_timeout(&self) -> Option<std::time::Duration> {
        Some(self.inner.timeout)
    }
}

/// A slot's handle on its thread's driver session.
pub struct CqlSessionHandle {
    shared: Arc<Shared>,
    fields: usize,
}

fn status_of(e: &ExecutionError) -> Status {
    use scylla::errors::DbError;
    match e {
        ExecutionError::RequestTimeout(_) => Status::Timeout,
        ExecutionError::ConnectionPoolError(_) | ExecutionError::EmptyPlan => Status::Unavailable,
        ExecutionError::LastAttemptError(RequestAttemptError::DbError(db, _)) => match db {
            DbError::ReadTimeout { .. } | DbError::WriteTimeout { .. } => Status::Timeout,
            DbError::Unavailable { .. } | DbError::Overloaded | DbError::IsBootstrapping => {
                Status::Unavailable
            }
            _ => Status::Error,
        },
        ExecutionError::LastAttemptError(RequestAttemptError::BrokenConnectionError(_)) => {
            Status::Unavailable
        }
        _ => Status::Error,
    }
}

fn failed(e: ExecutionError) -> Outcome {
    Outcome::failed(status_of(&e), yardstick_core::error::chain(&e))
}

/// Whether a lightweight transaction applied (its first column, `[applied]`).
fn applied(r: scylla::response::query_result::QueryResult) -> Result<bool, Outcome> {
    let rows = r
        .into_rows_result()
        .map_err(|e| Outcome::failed(Status::Error, e))?;
    let row: Option<Row> = rows
        .maybe_first_row::<Row>()
        .map_err(|e| Outcome::failed(Status::Error, e))?;
    Ok(matches!(
        row.and_then(|r| r.columns.into_iter().next().flatten()),
        Some(CqlValue::Boolean(true))
    ))
}

fn copy_columns(row: Row, first: usize, fields: Fields, total: usize, out: &mut Record) -> u64 {
    let mut bytes = 0;
    let mut cols = row.columns.into_iter().skip(first);
    for (_, field) in fields.columns(total) {
        if let Some(Some(CqlValue::Blob(v))) = cols.next() {
            bytes += v.len() as u64;
            out.set(field, &v);
        }
    }
    bytes
}

/// The bound values of an INSERT: the key, then every field (unset ones null).
fn insert_row(key: &str, values: &WriteSet, fields: usize) -> Vec<Option<CqlValue>> {
    let mut row: Vec<Option<CqlValue>> = Vec::with_capacity(fields + 1);
    row.push(Some(CqlValue::Text(key.to_string())));
    row.resize(fields + 1, None);
    for (i, v) in values.iter() {
        row[i + 1] = Some(CqlValue::Blob(v.to_vec()));
    }
    row
}

fn key_text(key: &[u8]) -> Result<&str, Outcome> {
    std::str::from_utf8(key)
        .map_err(|_| Outcome::failed(Status::Error, "CQL keys are text: the key is not UTF-8"))
}

impl Session for CqlSessionHandle {
    async fn read(&mut self, key: &[u8], fields: Fields, out: &mut Record) -> Outcome {
        let key = match key_text(key) {
            Ok(k) => k,
            Err(o) => return o,
        };
        let (s, st) = &*self.shared;
        let stmt = match fields {
            Fields::All => &st.read_all,
            Fields::One(i) => &st.read_one[i],
        };
        let r = match s.execute_unpaged(stmt, (key,)).await {
            Ok(r) => r,
            Err(e) => return failed(e),
        };
        match r.into_rows_result().map(|r| r.maybe_first_row::<Row>()) {
            Ok(Ok(Some(row))) => Outcome::ok(1, copy_columns(row, 0, fields, self.fields, out)),
            Ok(Ok(None)) => Outcome::of(Status::NotFound),
            Ok(Err(e)) => Outcome::failed(Status::Error, e),
            Err(e) => Outcome::failed(Status::Error, e),
        }
    }

    async fn scan(
        &mut self,
        start: &[u8],
        count: u64,
        fields: Fields,
        out: &mut ScanRows,
    ) -> Outcome {
        let start = match key_text(start) {
            Ok(k) => k,
            Err(o) => return o,
        };
        let (s, st) = &*self.shared;
        let stmt = match fields {
            Fields::All => &st.scan_all,
            Fields::One(i) => &st.scan_one[i],
        };
        let limit = count.min(i32::MAX as u64) as i32;
        let r = match s.execute_unpaged(stmt, (start, limit)).await {
            Ok(r) => r,
            Err(e) => return failed(e),
        };
        let rows = match r.into_rows_result() {
            Ok(r) => r,
            Err(e) => return Outcome::failed(Status::Error, e),
        };
        let iter = match rows.rows::<Row>() {
            Ok(i) => i,
            Err(e) => return Outcome::failed(Status::Error, e),
        };
        let (mut n, mut bytes) = (0, 0);
        for row in iter {
            let row = match row {
                Ok(r) => r,
                Err(e) => return Outcome::failed(Status::Error, e),
            };
            let key = match row.columns.first() {
                Some(Some(CqlValue::Text(k))) => k.clone(),
                _ => String::new(),
            };
            bytes += copy_columns(row, 1, fields, self.fields, out.push(key.as_bytes()));
            n += 1;
        }
        Outcome::ok(n, bytes)
    }

    async fn update(&mut self, key: &[u8], values: &WriteSet) -> Outcome {
        let key = match key_text(key) {
            Ok(k) => k,
            Err(o) => return o,
        };
        let (s, st) = &*self.shared;
        // one statement per field written; YCSB's updates write one field
        for (i, v) in values.iter() {
            match s.execute_unpaged(&st.update_one[i], (v, key)).await {
                Ok(r) if st.update_lwt => match applied(r) {
                    Ok(true) => {}
                    Ok(false) => return Outcome::of(Status::NotFound),
                    Err(o) => return o,
                },
                Ok(_) => {}
                Err(e) => return failed(e),
            }
        }
        Outcome::ok(0, values.bytes())
    }

    async fn insert(&mut self, key: &[u8], values: &WriteSet) -> Outcome {
        let key = match key_text(key) {
            Ok(k) => k,
            Err(o) => return o,
        };
        let (s, st) = &*self.shared;
        let row = insert_row(key, values, self.fields);
        match s.execute_unpaged(&st.insert, row).await {
            Ok(r) if st.insert_lwt => match applied(r) {
                Ok(true) => Outcome::ok(0, values.bytes()),
                Ok(false) => Outcome::of(Status::DuplicateKey),
                Err(o) => o,
            },
            Ok(_) => Outcome::ok(0, values.bytes()),
            Err(e) => failed(e),
        }
    }

    async fn delete(&mut self, key: &[u8]) -> Outcome {
        let key = match key_text(key) {
            Ok(k) => k,
            Err(o) => return o,
        };
        let (s, st) = &*self.shared;
        match s.execute_unpaged(&st.delete, (key,)).await {
            Ok(r) => match applied(r) {
                Ok(true) => Outcome::ok(0, 0),
                Ok(false) => Outcome::of(Status::NotFound),
                Err(o) => o,
            },
            Err(e) => failed(e),
        }
    }

    /// TRUNCATE: the table's files go at once, where deleting record by
    /// record takes minutes and leaves a tombstone per record for the reads
    /// that follow to skip.
    async fn clear(&mut self) -> Result<Option<u64>, BindingError> {
        let (s, st) = &*self.shared;
        s.query_unpaged(st.truncate.as_str(), ())
            .await
            .map(|_| None)
            .map_err(|e| {
                BindingError::Io(format!(
                    "cannot truncate the table: {}",
                    yardstick_core::error::chain(&e)
                ))
            })
    }

    /// Upserts go out as one unlogged batch (YCSB-style bulk load); inserts
    /// with `insert` semantics are lightweight transactions, which a
    /// multi-partition batch cannot hold, so they go out concurrently instead.
    async fn insert_batch(&mut self, batch: &Batch) -> Outcome {
        if batch.is_empty() {
            return Outcome::ok(0, 0);
        }
        let (s, st) = &*self.shared;
        let mut rows: Vec<Vec<Option<CqlValue>>> = Vec::with_capacity(batch.len());
        for (key, values) in batch.rows() {
            let key = match key_text(key) {
                Ok(k) => k,
                Err(o) => return o,
            };
            rows.push(insert_row(key, values, self.fields));
        }
        if st.insert_lwt {
            let results = futures_util::future::join_all(
                rows.iter().map(|r| s.execute_unpaged(&st.insert, r)),
            )
            .await;
            let mut inserted = 0;
            let mut first: Option<Outcome> = None;
            for r in results {
                let o = match r {
                    Ok(r) => match applied(r) {
                        Ok(true) => Outcome::ok(1, 0),
                        Ok(false) => Outcome::of(Status::DuplicateKey),
                        Err(o) => o,
                    },
                    Err(e) => failed(e),
                };
                if o.status().is_ok() {
                    inserted += 1;
                } else if first.is_none() {
                    first = Some(o);
                }
            }
            return match first {
                Some(mut o) => {
                    o.set_rows(inserted);
                    o
                }
                None => Outcome::ok(inserted, batch.bytes()),
            };
        }
        let mut b = CqlBatch::new(BatchType::Unlogged);
        for _ in 0..rows.len() {
            b.append_statement(st.insert.clone());
        }
        b.set_consistency(
            self.shared
                .1
                .insert
                .get_consistency()
                .unwrap_or(Consistency::One),
        );
        match s.batch(&b, rows).await {
            Ok(_) => Outcome::ok(batch.len() as u64, batch.bytes()),
            Err(e) if e.to_string().contains("Batch too large") => Outcome::failed(
                Status::Error,
                format!(
                    "{e} (raise batch_size_fail_threshold in cassandra.yaml, or lower --batch)"
                ),
            ),
            Err(e) => failed(e),
        }
    }
}
