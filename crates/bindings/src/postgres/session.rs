//! PostgreSQL sessions: prepared statements per connection, each operation
//! as one statement (or COPY for batches), errors mapped to statuses by SQLSTATE.
use super::*;
use yardstick_core::bounded::Bounded;

/// Statements prepared on one connection.
struct Prepared {
    read_all: Statement,
    read_one: Vec<Statement>,
    scan_all: Statement,
    scan_one: Vec<Statement>,
    insert: Statement,
    update_one: Vec<Statement>,
    delete: Statement,
}

/// A connection with its prepared statements.
pub(super) struct Live {
    pub(super) client: Client,
    st: Prepared,
    /// Multi-row INSERTs prepared on first use, by row count.
    batch: std::collections::HashMap<usize, Statement>,
}

pub struct PostgresSession {
    /// `None` after the connection closed; the next operation reconnects.
    live: Option<Live>,
    ep: Endpoint,
    sql: Arc<Sql>,
    fields: usize,
    update_mode: UpdateMode,
    insert_mode: InsertMode,
    batch: BatchMode,
}

async fn prepare_all(c: &Client, list: &[String]) -> Result<Vec<Statement>, tokio_postgres::Error> {
    let mut out = Vec::with_capacity(list.len());
    for s in list {
        out.push(c.prepare(s).await?);
    }
    Ok(out)
}

async fn prepare(
    client: &Client,
    sql: &Sql,
    insert_mode: InsertMode,
    update_mode: UpdateMode,
) -> Result<Prepared, tokio_postgres::Error> {
    Ok(Prepared {
        read_all: client.prepare(&sql.read_all).await?,
        read_one: prepare_all(client, &sql.read_one).await?,
        scan_all: client.prepare(&sql.scan_all).await?,
        scan_one: prepare_all(client, &sql.scan_one).await?,
        insert: client.prepare(sql.insert_for(insert_mode)).await?,
        update_one: prepare_all(client, sql.update_one_for(update_mode)).await?,
        delete: client.prepare(&sql.delete).await?,
    })
}

impl Binding for PostgresBinding {
    type Session = Bounded<PostgresSession>;

    async fn session(&self) -> Result<Self::Session, BindingError> {
        let mut s = PostgresSession {
            live: None,
            ep: self.ep.clone(),
            sql: self.sql.clone(),
            fields: self.opts.schema.fields.len(),
            update_mode: self.opts.update_mode,
            insert_mode: self.opts.insert_mode,
            batch: self.batch,
        };
        s.connect().await?;
        Ok(Bounded::new(s, self.timeout))
    }

    fn statistics(&self) -> Option<Box<dyn yardstick_core::observe::Source>> {
        (self.flavor == super::Flavor::Postgres)
            .then(|| {
                Box::new(yardstick_core::observe::remote::Driven::new(
                    super::stats::PgStats::new(self.ep.clone()),
                )) as Box<dyn yardstick_core::observe::Source>
            })
    }

    fn info(&self) -> EngineInfo {
        self.info.clone()
    }

    fn op_timeout(&self) -> Option<std::time::Duration> {
        Some(self.timeout)
    }

    fn disk_bytes(&self) -> Option<u64> {
        let table = self.sql.table.clone();
        if self.flavor != Flavor::Postgres {
            return None;
        }
        run_cold(self.side_limit, async {
            let client = connect(&self.ep).await?;
            let row = client
                .query_one(
                    "SELECT pg_total_relation_size($1::text::regclass)::BIGINT",
                    &[&table],
                )
                .await
                .map_err(|e| BindingError::Io(error_text(&e)))?;
            Ok(row.get::<_, i64>(0) as u64)
        })
        .ok()
    }

    fn conflict_retries(&self) -> Option<u32> {
        // CockroachDB and YugabyteDB run at SERIALIZABLE (or snapshot) isolation
        // and ask clients to retry serialization failures (40001).
        (self.flavor != Flavor::Postgres).then_some(10)
    }
}

fn outcome_of(e: tokio_postgres::Error) -> Outcome {
    match e.code() {
        Some(c) if *c == SqlState::UNIQUE_VIOLATION => Outcome::of(Status::DuplicateKey),
        Some(c)
            if *c == SqlState::T_R_SERIALIZATION_FAILURE
                || *c == SqlState::T_R_DEADLOCK_DETECTED =>
        {
            Outcome::failed(Status::Conflict, error_text(&e))
        }
        Some(c) if *c == SqlState::QUERY_CANCELED || *c == SqlState::LOCK_NOT_AVAILABLE => {
            Outcome::failed(Status::Timeout, error_text(&e))
        }
        Some(c)
            if *c == SqlState::ADMIN_SHUTDOWN
                || *c == SqlState::CRASH_SHUTDOWN
                || *c == SqlState::CANNOT_CONNECT_NOW =>
        {
            Outcome::failed(Status::Unavailable, error_text(&e))
        }
        Some(_) => Outcome::failed(Status::Error, error_text(&e)),
        None => Outcome::failed(Status::Unavailable, error_text(&e)),
    }
}

/// Keys and values are text in YCSB's layout; yardstick's are ASCII.
fn text(b: &[u8]) -> Result<&str, Outcome> {
    std::str::from_utf8(b).map_err(|_| {
        Outcome::failed(
            Status::Error,
            "key or value is not UTF-8 text, which YCSB's TEXT columns require",
        )
    })
}

/// Appends `v` to a COPY text-format row, escaping what the format reserves.
fn copy_escape(v: &[u8], out: &mut Vec<u8>) {
    for &b in v {
        match b {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            _ => out.push(b),
        }
    }
}

impl PostgresSession {
    async fn connect(&mut self) -> Result<(), BindingError> {
        let client = connect(&self.ep).await?;
        let st = prepare(&client, &self.sql, self.insert_mode, self.update_mode)
            .await
            .map_err(|e| {
                BindingError::Unavailable(format!(
                    "cannot prepare statements on {}: {}",
                    describe(&self.ep.config),
                    error_text(&e)
                ))
            })?;
        self.live = Some(Live {
            client,
            st,
            batch: Default::default(),
        });
        Ok(())
    }

    /// The live connection, reconnecting once after the last one closed.
    pub(super) async fn live(&mut self) -> Result<&mut Live, Outcome> {
        if self.live.as_ref().is_some_and(|l| l.client.is_closed()) {
            self.live = None;
        }
        if self.live.is_none() {
            self.connect()
                .await
                .map_err(|e| Outcome::failed(Status::Unavailable, e))?;
        }
        Ok(self.live.as_mut().expect("connected above"))
    }

    async fn write(&mut self, key: &[u8], values: &WriteSet, insert: bool) -> Outcome {
        let key = match text(key) {
            Ok(k) => k,
            Err(o) => return o,
        };
        let mut vals: Vec<&str> = Vec::with_capacity(values.len());
        for (_, v) in values.iter() {
            match text(v) {
                Ok(t) => vals.push(t),
                Err(o) => return o,
            }
        }
        let mut params: Vec<&(dyn ToSql + Sync)> = Vec::with_capacity(vals.len() + 1);
        params.push(&key);
        params.extend(vals.iter().map(|v| v as &(dyn ToSql + Sync)));
        let all_in_order =
            values.len() == self.fields && values.iter().enumerate().all(|(n, (i, _))| n == i);
        let one = (values.len() == 1)
            .then(|| values.iter().next().map(|(i, _)| i))
            .flatten();
        let kind = Sql::kind(
            insert,
            self.insert_mode,
            self.update_mode,
        );
        let sql = self.sql.clone();
        let live = match self.live().await {
            Ok(l) => l,
            Err(o) => return o,
        };
        let result = match (insert, all_in_order, one) {
            (true, true, _) => live.client.execute(&live.st.insert, &params).await,
            (false, _, Some(i)) => live.client.execute(&live.st.update_one[i], &params).await,
            _ => {
                let text = sql.write_subset(values.iter().map(|(i, _)| i), kind);
                live.client.execute(text.as_str(), &params).await
            }
        };
        match result {
            Ok(0) => Outcome::of(Status::NotFound),
            Ok(_) => Outcome::ok(0, values.bytes()),
            Err(e) => outcome_of(e),
        }
    }

    /// One multi-row INSERT per chunk of the batch.
    async fn insert_values(&mut self, batch: &Batch) -> Outcome {
        let mut texts: Vec<&str> = Vec::with_capacity(batch.len() * (self.fields + 1));
        for (key, values) in batch.rows() {
            let whole =
                values.len() == self.fields && values.iter().enumerate().all(|(n, (i, _))| n == i);
            if !whole {
                return Outcome::failed(
                    Status::Error,
                    "a batch insert needs every field of each record",
                );
            }
            for v in std::iter::once(key).chain(values.iter().map(|(_, v)| v)) {
                match text(v) {
                    Ok(t) => texts.push(t),
                    Err(o) => return o,
                }
            }
        }
        let width = self.fields + 1;
        let per_statement = Dialect::max_rows_per_statement(self.fields);
        let upsert = self.insert_mode == InsertMode::Upsert;
        let sql = self.sql.clone();
        let live = match self.live().await {
            Ok(l) => l,
            Err(o) => return o,
        };
        let mut inserted = 0;
        for chunk in texts.chunks(per_statement * width) {
            let rows = chunk.len() / width;
            let st = match live.batch.get(&rows) {
                Some(st) => st.clone(),
                None => {
                    let text = sql
                        .dialect()
                        .insert_rows(&sql.table, &sql.fields, rows, upsert);
                    match live.client.prepare(&text).await {
                        Ok(st) => {
                            live.batch.insert(rows, st.clone());
                            st
                        }
                        Err(e) => return outcome_of(e),
                    }
                }
            };
            let params: Vec<&(dyn ToSql + Sync)> =
                chunk.iter().map(|t| t as &(dyn ToSql + Sync)).collect();
            match live.client.execute(&st, &params).await {
                Ok(n) => inserted += n,
                Err(e) => {
                    let mut o = outcome_of(e);
                    o.set_rows(inserted);
                    return o;
                }
            }
        }
        Outcome::ok(inserted, batch.bytes())
    }

    /// `COPY ... FROM STDIN` of the whole batch (insert semantics).
    async fn insert_copy(&mut self, batch: &Batch) -> Outcome {
        use futures_util::SinkExt;
        let mut buf = Vec::with_capacity(batch.bytes() as usize + batch.len() * (self.fields + 24));
        for (key, values) in batch.rows() {
            copy_escape(key, &mut buf);
            let mut slots: Vec<Option<&[u8]>> = vec![None; self.fields];
            for (i, v) in values.iter() {
                slots[i] = Some(v);
            }
            for s in slots {
                buf.push(b'\t');
                match s {
                    Some(v) => copy_escape(v, &mut buf),
                    None => buf.extend_from_slice(b"\\N"),
                }
            }
            buf.push(b'\n');
        }
        let statement = format!(
            "COPY {} (YCSB_KEY, {}) FROM STDIN",
            self.sql.table,
            self.sql.fields.join(", ")
        );
        let live = match self.live().await {
            Ok(l) => l,
            Err(o) => return o,
        };
        let sink = match live
            .client
            .copy_in::<_, bytes::Bytes>(statement.as_str())
            .await
        {
            Ok(s) => s,
            Err(e) => return outcome_of(e),
        };
        futures_util::pin_mut!(sink);
        if let Err(e) = sink.send(bytes::Bytes::from(buf)).await {
            return outcome_of(e);
        }
        match sink.finish().await {
            Ok(n) => Outcome::ok(n, batch.bytes()),
            Err(e) => outcome_of(e),
        }
    }
}

fn copy_row(
    row: &tokio_postgres::Row,
    first: usize,
    fields: Fields,
    total: usize,
    out: &mut Record,
) -> u64 {
    let mut bytes = 0;
    for (c, field) in fields.columns(total) {
        if let Ok(Some(v)) = row.try_get::<_, Option<&str>>(first + c) {
            bytes += v.len() as u64;
            out.set(field, v.as_bytes());
        }
    }
    bytes
}

impl Session for PostgresSession {
    /// A request abandoned at its timeout: the next call connects anew.
    fn abandoned(&mut self) {
        self.live = None;
    }

    async fn read(&mut self, key: &[u8], fields: Fields, out: &mut Record) -> Outcome {
        let key = match text(key) {
            Ok(k) => k,
            Err(o) => return o,
        };
        let total = self.fields;
        let live = match self.live().await {
            Ok(l) => l,
            Err(o) => return o,
        };
        let st = match fields {
            Fields::All => &live.st.read_all,
            Fields::One(i) => &live.st.read_one[i],
        };
        match live.client.query_opt(st, &[&key]).await {
            Ok(Some(row)) => Outcome::ok(1, copy_row(&row, 0, fields, total, out)),
            Ok(None) => Outcome::of(Status::NotFound),
            Err(e) => outcome_of(e),
        }
    }

    async fn scan(
        &mut self,
        start: &[u8],
        count: u64,
        fields: Fields,
        out: &mut ScanRows,
    ) -> Outcome {
        let start = match text(start) {
            Ok(k) => k,
            Err(o) => return o,
        };
        let total = self.fields;
        let live = match self.live().await {
            Ok(l) => l,
            Err(o) => return o,
        };
        let st = match fields {
            Fields::All => &live.st.scan_all,
            Fields::One(i) => &live.st.scan_one[i],
        };
        let limit = count.min(i64::MAX as u64) as i64;
        match live.client.query(st, &[&start, &limit]).await {
            Ok(rows) => {
                let mut bytes = 0;
                for row in &rows {
                    let key: &str = row.try_get(0).unwrap_or_default();
                    bytes += copy_row(row, 1, fields, total, out.push(key.as_bytes()));
                }
                Outcome::ok(rows.len() as u64, bytes)
            }
            Err(e) => outcome_of(e),
        }
    }

    async fn update(&mut self, key: &[u8], values: &WriteSet) -> Outcome {
        self.write(key, values, false).await
    }

    async fn insert(&mut self, key: &[u8], values: &WriteSet) -> Outcome {
        self.write(key, values, true).await
    }

    async fn delete(&mut self, key: &[u8]) -> Outcome {
        let key = match text(key) {
            Ok(k) => k,
            Err(o) => return o,
        };
        let live = match self.live().await {
            Ok(l) => l,
            Err(o) => return o,
        };
        match live.client.execute(&live.st.delete, &[&key]).await {
            Ok(0) => Outcome::of(Status::NotFound),
            Ok(_) => Outcome::ok(0, 0),
            Err(e) => outcome_of(e),
        }
    }

    /// TRUNCATE: the table's files are replaced, no dead rows are left behind.
    async fn clear(&mut self) -> Result<Option<u64>, BindingError> {
        let sql = format!("TRUNCATE TABLE {}", self.sql.table);
        let live = self.live().await.map_err(BindingError::from_outcome)?;
        live.client
            .batch_execute(&sql)
            .await
            .map_err(|e| BindingError::Io(error_text(&e)))?;
        Ok(None)
    }

    async fn insert_batch(&mut self, batch: &Batch) -> Outcome {
        if batch.is_empty() {
            return Outcome::ok(0, 0);
        }
        match self.batch {
            BatchMode::Values => self.insert_values(batch).await,
            BatchMode::Copy => self.insert_copy(batch).await,
        }
    }
}
