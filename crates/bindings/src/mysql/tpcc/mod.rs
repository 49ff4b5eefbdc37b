//! TPC-C on MySQL and MariaDB (InnoDB): a transaction's independent
//! statements go together as one multi-statement text query with their
//! values inlined as escaped literals (one round trip where prepared
//! statements would take one each; START TRANSACTION and COMMIT ride along
//! with the first and last), the rest as server-side prepared statements on
//! the binary protocol; the isolation level set per session (REPEATABLE READ,
//! InnoDB's default, unless asked otherwise) with `SELECT ... FOR UPDATE` on
//! the rows a transaction changes, deadlocks and lock-wait timeouts retried,
//! timestamps in UTC, and the loader's fast path is `LOAD DATA LOCAL INFILE`
//! of tab-separated rows streamed from memory (no SQL to parse), or a
//! multi-row INSERT of escaped literals (one round trip per ~1 MiB of rows)
//! where the server disables local_infile.
use crate::tpcc::{
    Conn, DbError, Done, ErrorKind, Isolation, Opened, Pending, Row, Stmt, Support, TextRows, Value,
};
use crate::url::Target;
use mysql_async::consts::ColumnType;
use mysql_async::prelude::Queryable;
use mysql_async::Statement;
use std::collections::HashMap;
use std::time::SystemTime;

// InnoDB's retryable errors: deadlock, lock wait timeout
const ER_LOCK_DEADLOCK: u16 = 1213;
const ER_LOCK_WAIT_TIMEOUT: u16 = 1205;
// LOAD DATA LOCAL refused: local_infile off (MySQL 5.7 and MariaDB before
// 10.5; MySQL 8; MariaDB 10.5 and later)
const ER_NOT_ALLOWED_COMMAND: u16 = 1148;
const ER_LOAD_DATA_LOCAL_DISABLED: u16 = 3948;
const ER_LOAD_INFILE_CAPABILITY_DISABLED: u16 = 4166;
// CREATE INDEX of an index that exists
const ER_DUP_KEYNAME: u16 = 1061;
/// TiDB's write conflict and retryable transaction errors.
const TIDB_RETRYABLE: &[u16] = &[9007, 8002, 8022, 8028];

/// Statement text of a multi-row INSERT stops growing at this size (the
/// servers' default max_allowed_packet is 16 MiB or more).
const INSERT_BYTES: usize = 1 << 20;

pub struct MysqlConn {
    conn: mysql_async::Conn,
    statements: HashMap<usize, Statement>,
    tidb: bool,
    /// The server does not treat backslash as an escape (sql_mode
    /// NO_BACKSLASH_ESCAPES): literals double quotes only.
    no_backslash_escapes: bool,
    /// START TRANSACTION and deferred statements not sent yet.
    pending: Pending,
    /// The server takes LOAD DATA LOCAL INFILE (until it refuses it).
    local_infile: bool,
    pub version: String,
    /// "mysql", "mariadb" or "tidb".
    pub name: String,
    /// The server variables recorded with the result.
    pub settings: std::collections::BTreeMap<String, String>,
}

/// MySQL's and MariaDB's entry in the registry's TPC-C dispatch.
pub(crate) const SUPPORT: Support = Support {
    open: |target, _create, isolation| Box::pin(async move {
        let c = MysqlConn::open(target, isolation).await?;
        let engine = yardstick_core::binding::EngineInfo {
            name: c.name.clone(),
            version: c.version.clone(),
            settings: c.settings.clone(),
        };
        Ok(Opened {
            conn: Box::new(c),
            engine,
            isolation: crate::tpcc::locking(isolation),
            statements: MysqlConn::STATEMENTS,
            timeout: Some(target.op_timeout().map_err(DbError::other)?),
        })
    }),
    default_isolation: Isolation::RepeatableRead,
};

impl MysqlConn {
    /// How the terminals send statements, for the result.
    pub(crate) const STATEMENTS: &'static str = "a transaction's independent statements as one multi-statement text query with escaped literals (START TRANSACTION with the first, COMMIT with the last); the others as prepared statements (binary protocol)";

    /// Connects and sets the session's isolation level; a server that
    /// refuses the level is an error naming it.
    pub async fn open(target: &Target, isolation: Isolation) -> Result<MysqlConn, DbError> {
        let ep = crate::mysql::endpoint(target).map_err(DbError::other)?;
        let mut conn = crate::mysql::open_conn(&ep)
            .await
            .map_err(DbError::other)?;
        let (version, sql_mode): (String, String) = conn
            .query_first("SELECT VERSION(), @@SESSION.sql_mode")
            .await
            .map_err(err_plain)?
            .unwrap_or_default();
        let level = isolation.sql();
        conn.query_drop(format!(
            "SET SESSION TRANSACTION ISOLATION LEVEL {level}; SET time_zone = '+00:00'"
        ))
        .await
        .map_err(|e| {
            DbError::other(format!(
                "{} refuses isolation level {level} ({}); choose another with --isolation",
                ep.server,
                err_plain(e)
            ))
        })?;
        let mut settings = crate::mysql::server_settings(&mut conn).await;
        let name = crate::mysql::engine_name(&version);
        if name != "tidb" {
            let engine = super::engine::of_tpcc_tables(&mut conn, &ep).await?;
            super::engine::record(&mut conn, &engine, &mut settings).await;
            settings.insert("table_engine".into(), engine);
        }
        Ok(MysqlConn {
            conn,
            statements: HashMap::new(),
            tidb: ep.tidb || name == "tidb",
            no_backslash_escapes: sql_mode.contains("NO_BACKSLASH_ESCAPES"),
            pending: Pending::default(),
            local_infile: true,
            version,
            name: name.into(),
            settings,
        })
    }

    fn err(&self, e: mysql_async::Error) -> DbError {
        let retry = match &e {
            mysql_async::Error::Server(s) => {
                s.code == ER_LOCK_DEADLOCK
                    || s.code == ER_LOCK_WAIT_TIMEOUT
                    || (self.tidb && TIDB_RETRYABLE.contains(&s.code))
            }
            _ => false,
        };
        DbError {
            kind: if retry {
                ErrorKind::Retry
            } else {
                ErrorKind::Other
            },
            ..err_plain(e)
        }
    }

    async fn statement(&mut self, sql: &'static str) -> Result<Statement, DbError> {
        if let Some(s) = self.statements.get(&(sql.as_ptr() as usize)) {
            return Ok(s.clone());
        }
        let st = self.conn.prep(sql).await.map_err(|e| self.err(e))?;
        self.statements.insert(sql.as_ptr() as usize, st.clone());
        Ok(st)
    }

    /// Sends a pending START TRANSACTION, the deferred statements, `stmts`
    /// and `end` (COMMIT) as one multi-statement query and returns the
    /// answers to `stmts`. The server stops at the first failing statement.
    async fn send(&mut self, stmts: Vec<Stmt>, end: Option<&str>) -> Result<Vec<Done>, DbError> {
        let (begin, all, skip) = self.pending.take(stmts);
        let now = literal_now();
        let mut sql = String::with_capacity(256 * (all.len() + 2));
        if begin {
            sql.push_str("START TRANSACTION;");
        }
        for s in &all {
            let (text, params) = match s {
                Stmt::Query(t, p) | Stmt::Exec(t, p) => (*t, p),
            };
            inline(&mut sql, text, params, &now, self.no_backslash_escapes)?;
            sql.push(';');
        }
        if let Some(end) = end {
            sql.push_str(end);
        } else {
            sql.pop();
        }
        let conn = &mut self.conn;
        let r = async move {
            let mut res = conn.query_iter(sql).await?;
            if begin {
                res.collect::<mysql_async::Row>().await?;
            }
            let mut out = Vec::with_capacity(all.len());
            for s in &all {
                out.push(match s {
                    Stmt::Exec(..) => {
                        let n = res.affected_rows();
                        res.collect::<mysql_async::Row>().await?;
                        Done::Count(n)
                    }
                    Stmt::Query(..) => Done::Rows(rows(res.collect::<mysql_async::Row>().await?)),
                });
            }
            res.drop_result().await?;
            Ok::<_, mysql_async::Error>(out)
        }
        .await;
        let mut out = r.map_err(|e| self.err(e))?;
        out.drain(..skip);
        Ok(out)
    }

    /// Whether [`Conn::load`] tries `LOAD DATA LOCAL INFILE` before
    /// multi-row INSERTs (it does until the server refuses it).
    pub fn use_local_infile(&mut self, on: bool) {
        self.local_infile = on;
    }

    /// Sends a pending START TRANSACTION and the deferred statements.
    async fn flush(&mut self) -> Result<(), DbError> {
        if self.pending.any() {
            self.send(Vec::new(), None).await?;
        }
        Ok(())
    }

    /// One `LOAD DATA LOCAL INFILE` statement (atomic in InnoDB) whose file
    /// is the `rows` tab-separated rows in `pieces`. LOCAL turns row errors
    /// into warnings, so any warning, or a row count other than the rows
    /// sent, is an error.
    async fn load_data(
        &mut self,
        table: &str,
        pieces: Vec<bytes::Bytes>,
        rows: usize,
    ) -> Result<(), mysql_async::Error> {
        use futures_util::StreamExt;
        self.conn.set_infile_handler(async move {
            Ok(futures_util::stream::iter(pieces.into_iter().map(Ok::<_, std::io::Error>)).boxed())
        });
        // no CHARACTER SET: the file is read in the database's character
        // set, the one the tables were created with, so no field is
        // converted (TPC-C's generated text is ASCII, the same bytes in any
        // of them); naming utf8mb4 for latin1 tables (MariaDB's default)
        // cost the server a quarter more time on the wide tables
        let sql = format!(
            "LOAD DATA LOCAL INFILE 'yardstick-{table}' INTO TABLE {table} ({})",
            yardstick_core::tpcc::columns(table).join(", ")
        );
        let conn = &mut self.conn;
        async move {
            conn.query_drop(sql).await?;
            let loaded = conn.affected_rows();
            if conn.get_warnings() > 0 || loaded != rows as u64 {
                let warning: Option<(String, u32, String)> =
                    conn.query_first("SHOW WARNINGS LIMIT 1").await?;
                return Err(mysql_async::Error::Other(
                    format!(
                        "LOAD DATA into {table} stored {loaded} of {rows} rows{}",
                        warning.map_or(String::new(), |(_, code, m)| format!(
                            " (warning {code}: {m})"
                        ))
                    )
                    .into(),
                ));
            }
            Ok(())
        }
        .await
    }

    async fn simple(&mut self, sql: &str) -> Result<(), DbError> {
        self.flush().await?;
        let r = self.conn.query_drop(sql).await;
        r.map_err(|e| self.err(e))
    }
}

pub(crate) fn err_plain(e: mysql_async::Error) -> DbError {
    DbError::other(crate::mysql::error_text(&e))
}

fn now() -> mysql_async::Value {
    let (y, mo, d, h, mi, s, ms) = yardstick_core::result::time::parts(SystemTime::now());
    mysql_async::Value::Date(
        y as u16,
        mo as u8,
        d as u8,
        h as u8,
        mi as u8,
        s as u8,
        ms * 1000,
    )
}

fn param(v: &Value) -> mysql_async::Value {
    match v {
        Value::Null => mysql_async::Value::NULL,
        Value::Int(i) => mysql_async::Value::Int(*i),
        Value::Num(f) => mysql_async::Value::Double(*f),
        Value::Text(t) => mysql_async::Value::Bytes(t.as_bytes().to_vec()),
        Value::Now => now(),
    }
}

fn value(v: mysql_async::Value, ty: ColumnType) -> Value {
    use mysql_async::Value as M;
    match v {
        M::NULL => Value::Null,
        M::Int(i) => Value::Int(i),
        M::UInt(u) => Value::Int(i64::try_from(u).unwrap_or(i64::MAX)),
        M::Float(f) => Value::Num(f.into()),
        M::Double(f) => Value::Num(f),
        M::Bytes(b) => {
            let t = String::from_utf8_lossy(&b).into_owned();
            match ty {
                ColumnType::MYSQL_TYPE_NEWDECIMAL | ColumnType::MYSQL_TYPE_DECIMAL => {
                    t.trim().parse().map_or(Value::Text(t), Value::Num)
                }
                ColumnType::MYSQL_TYPE_LONGLONG
                | ColumnType::MYSQL_TYPE_LONG
                | ColumnType::MYSQL_TYPE_INT24
                | ColumnType::MYSQL_TYPE_SHORT
                | ColumnType::MYSQL_TYPE_TINY => {
                    t.trim().parse().map_or(Value::Text(t), Value::Int)
                }
                _ => Value::Text(t),
            }
        }
        M::Date(y, mo, d, h, mi, s, us) => Value::Text(format!(
            "{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{:03}Z",
            us / 1000
        )),
        M::Time(neg, d, h, mi, s, _) => Value::Text(format!(
            "{}{}:{mi:02}:{s:02}",
            if neg { "-" } else { "" },
            u64::from(d) * 24 + u64::from(h)
        )),
    }
}

/// The current time as a DATETIME literal's text (UTC, microseconds).
fn literal_now() -> String {
    let (y, mo, d, h, mi, s, ms) = yardstick_core::result::time::parts(SystemTime::now());
    format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}.{ms:03}")
}

/// Appends `sql` with each `?` replaced by the next parameter as a literal.
fn inline(
    out: &mut String,
    sql: &str,
    params: &[Value],
    now: &str,
    no_backslash_escapes: bool,
) -> Result<(), DbError> {
    let mut values = params.iter();
    for (k, part) in sql.split('?').enumerate() {
        if k > 0 {
            let v = values.next().ok_or_else(|| {
                DbError::other(format!("too few parameters for statement: {sql}"))
            })?;
            literal(out, v, now, no_backslash_escapes);
        }
        out.push_str(part);
    }
    if values.next().is_some() {
        return Err(DbError::other(format!(
            "too many parameters for statement: {sql}"
        )));
    }
    Ok(())
}

/// Rows with values typed by their columns.
fn rows(rows: Vec<mysql_async::Row>) -> Vec<Row> {
    rows.into_iter()
        .map(|row| {
            let types: Vec<ColumnType> =
                row.columns_ref().iter().map(|c| c.column_type()).collect();
            row.unwrap()
                .into_iter()
                .zip(types)
                .map(|(v, t)| value(v, t))
                .collect()
        })
        .collect()
}

/// Appends `v` as a SQL literal.
fn literal(out: &mut String, v: &Value, now: &str, no_backslash_escapes: bool) {
    use std::fmt::Write as _;
    match v {
        Value::Null => out.push_str("NULL"),
        Value::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Value::Num(f) => {
            let _ = write!(out, "{f:.4}");
        }
        Value::Now => {
            out.push('\'');
            out.push_str(now);
            out.push('\'');
        }
        Value::Text(t) => {
            out.push('\'');
            for c in t.chars() {
                match c {
                    '\'' => out.push_str("''"),
                    '\\' if !no_backslash_escapes => out.push_str("\\\\"),
                    '\0' if !no_backslash_escapes => out.push_str("\\0"),
                    c => out.push(c),
                }
            }
            out.push('\'');
        }
    }
}

/// Multi-row INSERT statements of at most about [`INSERT_BYTES`] each.
fn insert_statements(
    table: &str,
    rows: &[Row],
    now: &str,
    no_backslash_escapes: bool,
) -> Vec<String> {
    let head = format!(
        "INSERT INTO {table} ({}) VALUES ",
        yardstick_core::tpcc::columns(table).join(", ")
    );
    let mut out = Vec::new();
    let mut sql = head.clone();
    for row in rows {
        if sql.len() > head.len() {
            sql.push(',');
        }
        sql.push('(');
        for (i, v) in row.iter().enumerate() {
            if i > 0 {
                sql.push(',');
            }
            literal(&mut sql, v, now, no_backslash_escapes);
        }
        sql.push(')');
        if sql.len() >= INSERT_BYTES {
            out.push(std::mem::replace(&mut sql, head.clone()));
        }
    }
    if sql.len() > head.len() {
        out.push(sql);
    }
    out
}

#[async_trait::async_trait(?Send)]
impl Conn for MysqlConn {
    async fn begin(&mut self) -> Result<(), DbError> {
        self.pending.begin();
        Ok(())
    }

    async fn commit(&mut self) -> Result<(), DbError> {
        if self.pending.commit_is_empty() {
            return Ok(());
        }
        self.send(Vec::new(), Some("COMMIT")).await.map(|_| ())
    }

    async fn rollback(&mut self) -> Result<(), DbError> {
        if self.pending.rollback() {
            return Ok(());
        }
        self.simple("ROLLBACK").await
    }

    async fn query(&mut self, sql: &'static str, params: &[Value]) -> Result<Vec<Row>, DbError> {
        if self.pending.any() {
            let mut out = self.send(vec![Stmt::Query(sql, params.to_vec())], None).await?;
            return Ok(out.pop().map(Done::rows).unwrap_or_default());
        }
        let st = self.statement(sql).await?;
        let ps: Vec<mysql_async::Value> = params.iter().map(param).collect();
        let r: Result<Vec<mysql_async::Row>, _> = self.conn.exec(&st, ps).await;
        Ok(rows(r.map_err(|e| self.err(e))?))
    }

    async fn pipeline(&mut self, stmts: Vec<Stmt>) -> Result<Vec<Done>, DbError> {
        self.send(stmts, None).await
    }

    async fn defer(&mut self, stmts: Vec<Stmt>) -> Result<(), DbError> {
        self.pending.defer(stmts);
        Ok(())
    }

    async fn execute(&mut self, sql: &'static str, params: &[Value]) -> Result<u64, DbError> {
        if self.pending.any() {
            let out = self.send(vec![Stmt::Exec(sql, params.to_vec())], None).await?;
            return Ok(out.last().map_or(0, Done::count));
        }
        let st = self.statement(sql).await?;
        let ps: Vec<mysql_async::Value> = params.iter().map(param).collect();
        let r = self.conn.exec_drop(&st, ps).await;
        r.map_err(|e| self.err(e))?;
        Ok(self.conn.affected_rows())
    }

    async fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        self.simple(sql).await
    }

    /// MySQL has no CREATE INDEX IF NOT EXISTS (MariaDB and TiDB have):
    /// an existing index is the duplicate key name error.
    async fn create_index(&mut self, ddl: &str) -> Result<(), DbError> {
        self.flush().await?;
        match self.conn.query_drop(ddl).await {
            Err(mysql_async::Error::Server(e)) if e.code == ER_DUP_KEYNAME => Ok(()),
            r => r.map_err(|e| self.err(e)),
        }
    }

    async fn load(&mut self, table: &str, rows: &[Row]) -> Result<(), DbError> {
        let now = load_time();
        self.load_text(table, TextRows::from_rows(rows, &now)).await
    }

    fn text_load_time(&self) -> Option<String> {
        Some(load_time())
    }

    async fn load_text(&mut self, table: &str, text: TextRows) -> Result<(), DbError> {
        self.flush().await?;
        let rows = text.len();
        let pieces: Vec<bytes::Bytes> = text
            .into_pieces()
            .into_iter()
            .map(bytes::Bytes::from)
            .collect();
        if self.local_infile {
            // the clones share the pieces' bytes
            match self.load_data(table, pieces.clone(), rows).await {
                Ok(()) => return Ok(()),
                // local_infile is off: INSERT from now on
                Err(mysql_async::Error::Server(e))
                    if [
                        ER_NOT_ALLOWED_COMMAND,
                        ER_LOAD_DATA_LOCAL_DISABLED,
                        ER_LOAD_INFILE_CAPABILITY_DISABLED,
                    ]
                    .contains(&e.code) =>
                {
                    self.local_infile = false;
                }
                Err(e) => return Err(self.err(e)),
            }
        }
        // every field as a quoted string: the server converts it to the
        // column's type as LOAD DATA would
        let rows = crate::tpcc::rows_from_text(&pieces);
        let statements = insert_statements(table, &rows, "", self.no_backslash_escapes);
        self.begin().await?;
        for sql in &statements {
            if let Err(e) = self.simple(sql).await {
                let _ = self.rollback().await;
                return Err(e);
            }
        }
        self.commit().await
    }
}

/// Now as the text of a timestamp column (the session's time zone is UTC).
fn load_time() -> String {
    let (y, mo, d, h, mi, s, _) = yardstick_core::result::time::parts(SystemTime::now());
    format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}")
}

#[cfg(test)]
mod tests;
