//! TPC-C on SQLite: every transaction is `BEGIN IMMEDIATE` (SQLite allows
//! one writer; taking the write lock first makes transactions serializable
//! without lock-upgrade failures), `FOR UPDATE` is dropped (the write lock
//! already excludes other writers), a busy database is a retryable error, and
//! the loader inserts each batch in one transaction with one prepared
//! statement.
use crate::tpcc::{Conn, DbError, ErrorKind, Isolation, Opened, Row, Support, Value};
use crate::url::Target;
use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{Connection, ToSql};
use std::collections::HashMap;

pub struct SqliteConn {
    conn: Connection,
    /// Statement texts rewritten for SQLite, by the address of the original.
    rewritten: HashMap<usize, String>,
    pub version: String,
    pub path: std::path::PathBuf,
}

struct P<'a>(&'a Value);

impl ToSql for P<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match self.0 {
            Value::Int(v) => ToSqlOutput::from(*v),
            Value::Num(v) => ToSqlOutput::from(*v),
            Value::Text(t) => ToSqlOutput::from(t.as_str()),
            Value::Now => ToSqlOutput::from(now()),
            Value::Null => ToSqlOutput::from(rusqlite::types::Null),
        })
    }
}

fn now() -> String {
    yardstick_core::result::time::rfc3339(std::time::SystemTime::now())
}

fn err(e: rusqlite::Error) -> DbError {
    let busy = matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    );
    DbError {
        kind: if busy {
            ErrorKind::Retry
        } else {
            ErrorKind::Other
        },
        message: e.to_string(),
    }
}

/// SQLite's entry in the registry's TPC-C dispatch.
pub(crate) const SUPPORT: Support = Support {
    open: |target, create, isolation| Box::pin(async move {
        let c = SqliteConn::open(target, create, isolation)?;
        let engine = yardstick_core::binding::EngineInfo {
            name: "sqlite".into(),
            version: c.version.clone(),
            settings: Default::default(),
        };
        Ok(Opened {
            conn: Box::new(c),
            engine,
            isolation: "serializable (BEGIN IMMEDIATE: one writing transaction at a time)".into(),
            statements: SqliteConn::STATEMENTS,
            timeout: None,
        })
    }),
    default_isolation: Isolation::Serializable,
};

impl SqliteConn {
    /// How the terminals run statements, for the result.
    pub(crate) const STATEMENTS: &'static str =
        "prepared statements (cached per connection), in process, one after another";

    /// Opens `sqlite:///path.db` (the YCSB binding's URL options apply);
    /// `create` allows a new file. SQLite's transactions are serializable;
    /// asking for another level is an error.
    pub fn open(target: &Target, create: bool, isolation: Isolation) -> Result<SqliteConn, DbError> {
        if isolation != Isolation::Serializable {
            return Err(DbError::other(format!(
                "SQLite runs every transaction serializable and has no {} level: use --isolation serializable (the default for sqlite://)",
                isolation.sql()
            )));
        }
        let (path, settings) = crate::sqlite::settings_of(target).map_err(DbError::other)?;
        if !create && !path.exists() {
            return Err(DbError::other(format!(
                "SQLite database {} does not exist: run `yardstick tpcc load` with the same --db first",
                path.display()
            )));
        }
        let conn = crate::sqlite::connect(&path, &settings, create).map_err(DbError::other)?;
        let version: String = conn
            .query_row("SELECT sqlite_version()", [], |r| r.get(0))
            .map_err(err)?;
        Ok(SqliteConn {
            conn,
            rewritten: HashMap::new(),
            version,
            path,
        })
    }

    fn sql(&mut self, sql: &'static str) -> &str {
        self.rewritten
            .entry(sql.as_ptr() as usize)
            .or_insert_with(|| super::DIALECT.statement(sql))
    }
}

fn value(v: ValueRef<'_>) -> Value {
    match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::Int(i),
        ValueRef::Real(f) => Value::Num(f),
        ValueRef::Text(t) | ValueRef::Blob(t) => {
            Value::Text(String::from_utf8_lossy(t).into_owned())
        }
    }
}

#[async_trait::async_trait(?Send)]
impl Conn for SqliteConn {
    async fn begin(&mut self) -> Result<(), DbError> {
        self.conn.execute_batch("BEGIN IMMEDIATE").map_err(err)
    }

    async fn commit(&mut self) -> Result<(), DbError> {
        self.conn.execute_batch("COMMIT").map_err(err)
    }

    async fn rollback(&mut self) -> Result<(), DbError> {
        if self.conn.is_autocommit() {
            return Ok(());
        }
        self.conn.execute_batch("ROLLBACK").map_err(err)
    }

    async fn query(&mut self, sql: &'static str, params: &[Value]) -> Result<Vec<Row>, DbError> {
        let text = self.sql(sql).to_string();
        let mut st = self.conn.prepare_cached(&text).map_err(err)?;
        let n = st.column_count();
        let ps: Vec<P> = params.iter().map(P).collect();
        let mut rows = st
            .query(rusqlite::params_from_iter(ps.iter()))
            .map_err(err)?;
        let mut out = Vec::new();
        while let Some(r) = rows.next().map_err(err)? {
            let mut row = Vec::with_capacity(n);
            for i in 0..n {
                row.push(value(r.get_ref(i).map_err(err)?));
            }
            out.push(row);
        }
        Ok(out)
    }

    async fn execute(&mut self, sql: &'static str, params: &[Value]) -> Result<u64, DbError> {
        let text = self.sql(sql).to_string();
        let mut st = self.conn.prepare_cached(&text).map_err(err)?;
        let ps: Vec<P> = params.iter().map(P).collect();
        st.execute(rusqlite::params_from_iter(ps.iter()))
            .map(|n| n as u64)
            .map_err(err)
    }

    async fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        self.conn.execute_batch(sql).map_err(err)
    }

    async fn load(&mut self, table: &str, rows: &[Row]) -> Result<(), DbError> {
        let cols = yardstick_core::tpcc::columns(table);
        let sql = format!(
            "INSERT INTO {table} ({}) VALUES ({})",
            cols.join(", "),
            vec!["?"; cols.len()].join(", ")
        );
        self.conn.execute_batch("BEGIN IMMEDIATE").map_err(err)?;
        let r = (|| {
            let mut st = self.conn.prepare_cached(&sql).map_err(err)?;
            for row in rows {
                let ps: Vec<P> = row.iter().map(P).collect();
                st.execute(rusqlite::params_from_iter(ps.iter()))
                    .map_err(err)?;
            }
            Ok(())
        })();
        match r {
            Ok(()) => self.conn.execute_batch("COMMIT").map_err(err),
            Err(e) => {
                let _ = self.conn.execute_batch("ROLLBACK");
                Err(e)
            }
        }
    }
}
