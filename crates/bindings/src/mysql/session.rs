//! MySQL/MariaDB sessions: server-side prepared statements per connection,
//! errors mapped to statuses by the server's error number.
use super::*;
use yardstick_core::bounded::Bounded;

struct Prepared {
    read_all: Statement,
    read_one: Vec<Statement>,
    scan_all: Statement,
    scan_one: Vec<Statement>,
    insert: Statement,
    update_one: Vec<Statement>,
    delete: Statement,
}

pub struct MysqlSession {
    pub(super) conn: Option<Conn>,
    st: Option<Prepared>,
    binding_opts: Opts,
    connect_timeout: Duration,
    sql: Arc<Sql>,
    fields: usize,
    insert_mode: InsertMode,
    update_mode: UpdateMode,
    key_last_in_update: bool,
    /// Multi-row INSERTs prepared on first use, by row count.
    batch: std::collections::HashMap<usize, Statement>,
}

async fn prepare_list(c: &mut Conn, list: &[String]) -> Result<Vec<Statement>, mysql_async::Error> {
    let mut out = Vec::with_capacity(list.len());
    for s in list {
        out.push(c.prep(s.as_str()).await?);
    }
    Ok(out)
}

async fn prepare(c: &mut Conn, sql: &Sql, o: &OpenOptions) -> Result<Prepared, mysql_async::Error> {
    Ok(Prepared {
        read_all: c.prep(sql.read_all.as_str()).await?,
        read_one: prepare_list(c, &sql.read_one).await?,
        scan_all: c.prep(sql.scan_all.as_str()).await?,
        scan_one: prepare_list(c, &sql.scan_one).await?,
        insert: c.prep(sql.insert_for(o.insert_mode)).await?,
        update_one: prepare_list(c, sql.update_one_for(o.update_mode)).await?,
        delete: c.prep(sql.delete.as_str()).await?,
    })
}

impl Binding for MysqlBinding {
    type Session = Bounded<MysqlSession>;

    fn statistics(&self) -> Option<Box<dyn yardstick_core::observe::Source>> {
        Some(Box::new(yardstick_core::observe::remote::Driven::new(
            super::stats::MysqlStats::new(self.opts.clone(), self.connect_timeout),
        )))
    }

    async fn session(&self) -> Result<Self::Session, BindingError> {
        let user = self.opts.user().unwrap_or("root").to_string();
        let db = self.opts.db_name().unwrap_or("").to_string();
        let mut conn = connect(&self.opts, self.connect_timeout)
            .await
            .map_err(|e| connect_error(&self.server, &user, &db, &e))?;
        let st = prepare(&mut conn, &self.sql, &self.open)
            .await
            .map_err(|e| {
                BindingError::Unavailable(format!(
                    "cannot prepare statements on {}: {}",
                    self.server,
                    error_text(&e)
                ))
            })?;
        let session = MysqlSession {
            conn: Some(conn),
            st: Some(st),
            binding_opts: self.opts.clone(),
            connect_timeout: self.connect_timeout,
            sql: self.sql.clone(),
            fields: self.open.schema.fields.len(),
            insert_mode: self.open.insert_mode,
            update_mode: self.open.update_mode,
            key_last_in_update: self.key_last_in_update,
            batch: Default::default(),
        };
        Ok(Bounded::new(session, self.timeout))
    }

    fn info(&self) -> EngineInfo {
        self.info.clone()
    }

    fn op_timeout(&self) -> Option<Duration> {
        Some(self.timeout)
    }

    fn conflict_retries(&self) -> Option<u32> {
        // TiDB's optimistic and pessimistic transactions report write
        // conflicts (9007) that clients are expected to retry
        self.tidb.then_some(10)
    }

    fn disk_bytes(&self) -> Option<u64> {
        let table = self.sql.table.clone();
        let opts = self.opts.clone();
        let timeout = self.connect_timeout;
        run_cold(self.connect_timeout.saturating_add(self.timeout), async move {
            let mut c = connect(&opts, timeout)
                .await
                .map_err(|e| BindingError::Io(error_text(&e)))?;
            let n: Option<u64> = c
                .exec_first(
                    "SELECT CAST(DATA_LENGTH + INDEX_LENGTH AS UNSIGNED) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?",
                    (table,),
                )
                .await
                .map_err(|e| BindingError::Io(error_text(&e)))?;
            let _ = c.disconnect().await;
            n.ok_or_else(|| BindingError::Io("no such table".into()))
        })
        .ok()
    }
}

pub(super) fn status_of(e: &mysql_async::Error) -> Status {
    match e {
        mysql_async::Error::Server(s) => match s.code {
            ER_DUP_ENTRY => Status::DuplicateKey,
            ER_LOCK_DEADLOCK => Status::Conflict,
            ER_LOCK_WAIT_TIMEOUT | ER_QUERY_INTERRUPTED | ER_STATEMENT_TIMEOUT => Status::Timeout,
            c if TIDB_RETRYABLE.contains(&c) => Status::Conflict,
            c if TIDB_UNAVAILABLE.contains(&c) => Status::Unavailable,
            _ => Status::Error,
        },
        mysql_async::Error::Io(_) => Status::Unavailable,
        mysql_async::Error::Driver(mysql_async::DriverError::ConnectionClosed) => {
            Status::Unavailable
        }
        _ => Status::Error,
    }
}

/// Copies the selected fields of `row`, from column `first`, into `out`.
fn copy_row(row: &Row, first: usize, fields: Fields, total: usize, out: &mut Record) -> u64 {
    let mut bytes = 0;
    for (c, field) in fields.columns(total) {
        if let Some(Value::Bytes(b)) = row.as_ref(first + c) {
            bytes += b.len() as u64;
            out.set(field, b);
        }
    }
    bytes
}

impl MysqlSession {
    /// The connection and statements, reconnecting (and re-preparing) after a
    /// broken connection.
    async fn ready(&mut self) -> Result<(), Outcome> {
        if self.conn.is_some() && self.st.is_some() {
            return Ok(());
        }
        let mut c = connect(&self.binding_opts, self.connect_timeout)
            .await
            .map_err(|e| Outcome::failed(status_of(&e), error_text(&e)))?;
        let o = OpenOptions {
            schema: Schema {
                table: self.sql.table.clone(),
                fields: self.sql.fields.clone(),
            },
            insert_mode: self.insert_mode,
            update_mode: self.update_mode,
            create: false,
            sessions: 1,
            data_integrity: false,
            scans: false,
        };
        let st = prepare(&mut c, &self.sql, &o)
            .await
            .map_err(|e| Outcome::failed(status_of(&e), error_text(&e)))?;
        self.conn = Some(c);
        self.st = Some(st);
        self.batch.clear();
        Ok(())
    }

    fn failed(&mut self, e: mysql_async::Error) -> Outcome {
        let status = status_of(&e);
        if status == Status::DuplicateKey {
            return Outcome::of(status);
        }
        if status == Status::Unavailable {
            self.conn = None;
            self.st = None;
        }
        Outcome::failed(status, error_text(&e))
    }

    async fn write(&mut self, key: &[u8], values: &WriteSet, insert: bool) -> Outcome {
        if let Err(o) = self.ready().await {
            return o;
        }
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
        let key_last = !insert && kind == crate::sql::WriteKind::Update && self.key_last_in_update;
        let mut params: Vec<Value> = Vec::with_capacity(values.len() + 1);
        if !key_last {
            params.push(Value::Bytes(key.to_vec()));
        }
        params.extend(values.iter().map(|(_, v)| Value::Bytes(v.to_vec())));
        if key_last {
            params.push(Value::Bytes(key.to_vec()));
        }
        let params = Params::Positional(params);
        let st = self.st.as_ref().expect("prepared by ready");
        let conn = self.conn.as_mut().expect("connected by ready");
        let result = match (insert, all_in_order, one) {
            (true, true, _) => conn.exec_drop(&st.insert, params).await,
            (false, _, Some(i)) => conn.exec_drop(&st.update_one[i], params).await,
            _ => {
                let sql = self.sql.write_subset(values.iter().map(|(i, _)| i), kind);
                conn.exec_drop(sql, params).await
            }
        };
        match result {
            Ok(()) if conn.affected_rows() == 0 => Outcome::of(Status::NotFound),
            Ok(()) => Outcome::ok(0, values.bytes()),
            Err(e) => self.failed(e),
        }
    }
}

impl Session for MysqlSession {
    /// A request abandoned at its timeout leaves the protocol halfway: the
    /// next call connects anew.
    fn abandoned(&mut self) {
        self.conn = None;
        self.st = None;
    }

    async fn read(&mut self, key: &[u8], fields: Fields, out: &mut Record) -> Outcome {
        if let Err(o) = self.ready().await {
            return o;
        }
        let st = self.st.as_ref().expect("prepared by ready");
        let stmt = match fields {
            Fields::All => &st.read_all,
            Fields::One(i) => &st.read_one[i],
        };
        let conn = self.conn.as_mut().expect("connected by ready");
        match conn
            .exec_first::<Row, _, _>(stmt, Params::Positional(vec![Value::Bytes(key.to_vec())]))
            .await
        {
            Ok(Some(row)) => Outcome::ok(1, copy_row(&row, 0, fields, self.fields, out)),
            Ok(None) => Outcome::of(Status::NotFound),
            Err(e) => self.failed(e),
        }
    }

    async fn scan(
        &mut self,
        start: &[u8],
        count: u64,
        fields: Fields,
        out: &mut ScanRows,
    ) -> Outcome {
        if let Err(o) = self.ready().await {
            return o;
        }
        let st = self.st.as_ref().expect("prepared by ready");
        let stmt = match fields {
            Fields::All => &st.scan_all,
            Fields::One(i) => &st.scan_one[i],
        };
        let conn = self.conn.as_mut().expect("connected by ready");
        let params = Params::Positional(vec![Value::Bytes(start.to_vec()), Value::UInt(count)]);
        match conn.exec::<Row, _, _>(stmt, params).await {
            Ok(rows) => {
                let mut bytes = 0;
                for row in &rows {
                    let key: &[u8] = match row.as_ref(0) {
                        Some(Value::Bytes(k)) => k,
                        _ => &[],
                    };
                    bytes += copy_row(row, 1, fields, self.fields, out.push(key));
                }
                Outcome::ok(rows.len() as u64, bytes)
            }
            Err(e) => self.failed(e),
        }
    }

    async fn update(&mut self, key: &[u8], values: &WriteSet) -> Outcome {
        self.write(key, values, false).await
    }

    async fn insert(&mut self, key: &[u8], values: &WriteSet) -> Outcome {
        self.write(key, values, true).await
    }

    /// Multi-row INSERTs (or REPLACE / ON DUPLICATE KEY UPDATE), split under
    /// the protocol's 65,535-parameter limit; each statement is atomic.
    async fn insert_batch(&mut self, batch: &Batch) -> Outcome {
        if batch.is_empty() {
            return Outcome::ok(0, 0);
        }
        let width = self.fields + 1;
        let mut params: Vec<Value> = Vec::with_capacity(batch.len() * width);
        for (key, values) in batch.rows() {
            let whole =
                values.len() == self.fields && values.iter().enumerate().all(|(n, (i, _))| n == i);
            if !whole {
                return Outcome::failed(
                    Status::Error,
                    "a batch insert needs every field of each record",
                );
            }
            params.push(Value::Bytes(key.to_vec()));
            params.extend(values.iter().map(|(_, v)| Value::Bytes(v.to_vec())));
        }
        if let Err(o) = self.ready().await {
            return o;
        }
        let per_statement = Dialect::max_rows_per_statement(self.fields);
        let upsert = self.insert_mode == InsertMode::Upsert;
        let mut inserted = 0;
        let mut rest = params;
        while !rest.is_empty() {
            let tail = rest.split_off((per_statement * width).min(rest.len()));
            let chunk = std::mem::replace(&mut rest, tail);
            let rows = chunk.len() / width;
            let conn = self.conn.as_mut().expect("connected by ready");
            let st = match self.batch.get(&rows) {
                Some(st) => st.clone(),
                None => {
                    let text = self.sql.dialect().insert_rows(
                        &self.sql.table,
                        &self.sql.fields,
                        rows,
                        upsert,
                    );
                    match conn.prep(text).await {
                        Ok(st) => {
                            self.batch.insert(rows, st.clone());
                            st
                        }
                        Err(e) => return self.failed(e),
                    }
                }
            };
            let conn = self.conn.as_mut().expect("connected by ready");
            match conn.exec_drop(&st, Params::Positional(chunk)).await {
                Ok(()) => inserted += rows as u64,
                Err(e) => {
                    let mut o = self.failed(e);
                    o.set_rows(inserted);
                    return o;
                }
            }
        }
        Outcome::ok(inserted, batch.bytes())
    }

    async fn delete(&mut self, key: &[u8]) -> Outcome {
        if let Err(o) = self.ready().await {
            return o;
        }
        let st = self.st.as_ref().expect("prepared by ready");
        let conn = self.conn.as_mut().expect("connected by ready");
        match conn
            .exec_drop(
                &st.delete,
                Params::Positional(vec![Value::Bytes(key.to_vec())]),
            )
            .await
        {
            Ok(()) if conn.affected_rows() == 0 => Outcome::of(Status::NotFound),
            Ok(()) => Outcome::ok(0, 0),
            Err(e) => self.failed(e),
        }
    }

    /// TRUNCATE TABLE: the table is recreated empty, no purge work left behind.
    async fn clear(&mut self) -> Result<Option<u64>, BindingError> {
        self.ready().await.map_err(BindingError::from_outcome)?;
        let sql = format!("TRUNCATE TABLE {}", self.sql.table);
        let conn = self.conn.as_mut().expect("connected by ready");
        conn.query_drop(sql)
            .await
            .map_err(|e| BindingError::Io(error_text(&e)))?;
        Ok(None)
    }
}
