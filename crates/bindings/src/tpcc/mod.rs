//! TPC-C against SQL databases: the schema, the loader, the five transactions
//! and the consistency checks, written once against [`Conn`], a small async
//! connection interface each database implements (one connection per
//! terminal; the terminals are slots of the core runner, [`run::Terminals`]). Statements use `?` placeholders and ` FOR UPDATE`;
//! each database's connection puts them in its dialect once, when it prepares
//! them, with its binding's [`crate::sql::Dialect::statement`] (MySQL's is
//! this portable form itself). A connection lives beside its binding (`sqlite/tpcc.rs`,
//! `postgres/tpcc.rs`, `mysql/tpcc.rs`) and is found through the registry
//! ([`Support`] in the binding's descriptor); [`open`] opens any of them.
pub mod check;
pub mod load;
pub mod loader;
mod open;
pub mod run;
mod text;
pub mod trips;
pub mod txn;

pub use open::{locking, open, support, Opened, Support};

pub use text::{rows_from_text, TextRows};

pub use yardstick_core::tpcc::{RowSink, Value};

/// The isolation level terminals run their transactions at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isolation {
    ReadCommitted,
    RepeatableRead,
    Serializable,
}

impl Isolation {
    pub const NAMES: &'static str = "read-committed, repeatable-read or serializable";

    pub fn parse(s: &str) -> Option<Isolation> {
        Some(
            match s.to_ascii_lowercase().replace(['_', ' '], "-").as_str() {
                "read-committed" | "rc" => Isolation::ReadCommitted,
                "repeatable-read" | "rr" | "snapshot" => Isolation::RepeatableRead,
                "serializable" => Isolation::Serializable,
                _ => return None,
            },
        )
    }

    /// The SQL name, e.g. `READ COMMITTED`.
    pub fn sql(self) -> &'static str {
        match self {
            Isolation::ReadCommitted => "READ COMMITTED",
            Isolation::RepeatableRead => "REPEATABLE READ",
            Isolation::Serializable => "SERIALIZABLE",
        }
    }
}

impl std::fmt::Display for Isolation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.sql().to_ascii_lowercase())
    }
}

/// A current-thread runtime for a thread that opens connections outside
/// the runner (a loader's, a checker's, an index build's): a connection
/// lives on the runtime that opened it.
pub fn runtime() -> Result<tokio::runtime::Runtime, DbError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| DbError::other(format!("cannot start a runtime: {e}")))
}

/// Runs `f` to its end on a [`runtime`] of the calling thread (which must
/// not be running one).
pub fn block_on<T>(f: impl std::future::Future<Output = Result<T, DbError>>) -> Result<T, DbError> {
    runtime()?.block_on(f)
}

/// How the loader writes rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadMethod {
    /// The database's fast path ([`Conn::load`]).
    Fast,
    /// One prepared single-row INSERT per row, a transaction per batch: the
    /// baseline the fast path is measured against.
    Insert,
}

/// The single-row INSERT of `table` (all columns, `?` placeholders), made
/// once per table for the life of the process (statements are cached by the
/// address of their text).
pub(crate) fn insert_sql(table: &str) -> &'static str {
    use std::sync::{Mutex, OnceLock};
    static MADE: OnceLock<Mutex<Vec<(String, &'static str)>>> = OnceLock::new();
    let mut made = MADE
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    if let Some((_, sql)) = made.iter().find(|(t, _)| t == table) {
        return sql;
    }
    let cols = yardstick_core::tpcc::columns(table);
    let sql: &'static str = Box::leak(
        format!(
            "INSERT INTO {table} ({}) VALUES ({})",
            cols.join(", "),
            vec!["?"; cols.len()].join(", ")
        )
        .into_boxed_str(),
    );
    made.push((table.to_string(), sql));
    sql
}

/// Why a statement failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// A serialization failure, deadlock or lock timeout: the transaction
    /// may succeed when retried.
    Retry,
    /// No answer within the URL's timeout: the connection was dropped.
    Timeout,
    Other,
}

#[derive(Debug, Clone, PartialEq)]
pub struct DbError {
    pub kind: ErrorKind,
    pub message: String,
}

impl DbError {
    pub fn other(m: impl std::fmt::Display) -> DbError {
        DbError {
            kind: ErrorKind::Other,
            message: m.to_string(),
        }
    }
}

impl std::fmt::Display for DbError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for DbError {}

pub(crate) type Row = Vec<Value>;

/// One statement of a [`Conn::pipeline`].
#[derive(Debug, Clone, PartialEq)]
pub enum Stmt {
    /// A query whose rows are wanted.
    Query(&'static str, Vec<Value>),
    /// A change whose count of affected rows is wanted.
    Exec(&'static str, Vec<Value>),
}

/// What one statement of a pipeline returned.
#[derive(Debug, Clone, PartialEq)]
pub enum Done {
    Rows(Vec<Row>),
    Count(u64),
}

impl Done {
    /// The rows of a query (none for a change).
    pub fn rows(self) -> Vec<Row> {
        match self {
            Done::Rows(r) => r,
            Done::Count(_) => Vec::new(),
        }
    }

    /// The rows a change affected (the rows returned, for a query).
    pub fn count(&self) -> u64 {
        match self {
            Done::Rows(r) => r.len() as u64,
            Done::Count(n) => *n,
        }
    }
}

/// What a pipelining connection has not sent yet: a BEGIN, which goes out
/// with the transaction's first statements, and deferred statements, which
/// go out with the next ones or the COMMIT.
#[derive(Debug, Default)]
pub(crate) struct Pending {
    begin: bool,
    deferred: Vec<Stmt>,
}

#[cfg_attr(not(any(feature = "postgres", feature = "mysql")), allow(dead_code))]
impl Pending {
    pub(crate) fn begin(&mut self) {
        self.begin = true;
    }

    pub(crate) fn defer(&mut self, stmts: Vec<Stmt>) {
        self.deferred.extend(stmts);
    }

    /// Something waits to be sent.
    pub(crate) fn any(&self) -> bool {
        self.begin || !self.deferred.is_empty()
    }

    /// A commit of a transaction that sent nothing and has nothing to send:
    /// forgotten without a round trip.
    pub(crate) fn commit_is_empty(&mut self) -> bool {
        let empty = self.begin && self.deferred.is_empty();
        if empty {
            self.begin = false;
        }
        empty
    }

    /// Forgets what was not sent; true when the server never saw the
    /// transaction (so there is nothing to roll back there).
    pub(crate) fn rollback(&mut self) -> bool {
        self.deferred.clear();
        std::mem::take(&mut self.begin)
    }

    /// Takes everything to send ahead of `stmts`: whether BEGIN goes first,
    /// the deferred statements followed by `stmts`, and how many of them
    /// were deferred.
    pub(crate) fn take(&mut self, stmts: Vec<Stmt>) -> (bool, Vec<Stmt>, usize) {
        let mut all = std::mem::take(&mut self.deferred);
        let deferred = all.len();
        all.extend(stmts);
        (std::mem::take(&mut self.begin), all, deferred)
    }
}

/// Runs a pipeline's statements one after another, each waiting for the
/// last one's answer: what a driver that cannot pipeline does.
pub(crate) async fn one_by_one<C: Conn + ?Sized>(
    c: &mut C,
    stmts: Vec<Stmt>,
) -> Result<Vec<Done>, DbError> {
    let mut out = Vec::with_capacity(stmts.len());
    for s in stmts {
        out.push(match s {
            Stmt::Query(sql, params) => Done::Rows(c.query(sql, &params).await?),
            Stmt::Exec(sql, params) => Done::Count(c.execute(sql, &params).await?),
        });
    }
    Ok(out)
}

/// One connection of one terminal or loader. Its methods are async so that a
/// terminal is a slot of the core runner (many per worker thread); a driver
/// without async IO (SQLite) does its work before its future first returns.
/// It lives on the thread and runtime that opened it.
#[async_trait::async_trait(?Send)]
pub trait Conn {
    async fn begin(&mut self) -> Result<(), DbError>;
    async fn commit(&mut self) -> Result<(), DbError>;
    async fn rollback(&mut self) -> Result<(), DbError>;
    /// Runs a query (prepared once per connection) and returns its rows.
    async fn query(&mut self, sql: &'static str, params: &[Value]) -> Result<Vec<Row>, DbError>;
    /// Runs a statement and returns the rows it changed.
    async fn execute(&mut self, sql: &'static str, params: &[Value]) -> Result<u64, DbError>;
    /// Runs DDL or other unprepared statements.
    async fn batch(&mut self, sql: &str) -> Result<(), DbError>;
    /// Runs one of [`INDEXES`], doing nothing when the index exists.
    async fn create_index(&mut self, ddl: &str) -> Result<(), DbError> {
        self.batch(&ddl.replacen("CREATE INDEX", "CREATE INDEX IF NOT EXISTS", 1))
            .await
    }
    /// Inserts `rows` into `table` (its columns in [`yardstick_core::tpcc::COLUMNS`]
    /// order) with the database's fast path, as one transaction.
    async fn load(&mut self, table: &str, rows: &[Row]) -> Result<(), DbError>;
    /// When the fast path takes tab-separated text ([`Conn::load_text`]):
    /// the load time as that text, for timestamp columns. `None` (the
    /// default): the loader hands it values ([`Conn::load`]).
    fn text_load_time(&self) -> Option<String> {
        None
    }
    /// [`Conn::load`] of rows written as tab-separated text.
    async fn load_text(&mut self, table: &str, text: TextRows) -> Result<(), DbError> {
        self.load(table, &rows_from_text(&text.into_pieces())).await
    }
    /// Runs statements in order within the current transaction and returns
    /// what each returned, stopping at the first error. A driver that can
    /// sends them all before reading the answers (one round trip instead of
    /// one per statement); the default runs them [`one_by_one`].
    async fn pipeline(&mut self, stmts: Vec<Stmt>) -> Result<Vec<Done>, DbError> {
        one_by_one(self, stmts).await
    }
    /// Statements whose answers the transaction does not need: a driver
    /// that pipelines may hold them and send them with the next statements
    /// or the commit, where their errors surface; the default runs them now.
    async fn defer(&mut self, stmts: Vec<Stmt>) -> Result<(), DbError> {
        one_by_one(self, stmts).await.map(|_| ())
    }
}

/// Reads a column as an integer (NULL as 0).
pub fn int(row: &Row, i: usize) -> i64 {
    match row.get(i) {
        Some(Value::Int(v)) => *v,
        Some(Value::Num(v)) => *v as i64,
        Some(Value::Text(t)) => t.trim().parse().unwrap_or(0),
        _ => 0,
    }
}

/// Reads a column as a number (NULL as 0).
pub fn num(row: &Row, i: usize) -> f64 {
    match row.get(i) {
        Some(Value::Int(v)) => *v as f64,
        Some(Value::Num(v)) => *v,
        Some(Value::Text(t)) => t.trim().parse().unwrap_or(0.0),
        _ => 0.0,
    }
}

pub fn text(row: &Row, i: usize) -> String {
    match row.get(i) {
        Some(Value::Text(t)) => t.clone(),
        Some(Value::Int(v)) => v.to_string(),
        Some(Value::Num(v)) => v.to_string(),
        _ => String::new(),
    }
}

pub fn is_null(row: &Row, i: usize) -> bool {
    matches!(row.get(i), None | Some(Value::Null))
}

/// The nine tables with the specification's columns and primary keys, and
/// the loader's bookkeeping. Money is DECIMAL(12,2), rates DECIMAL(4,4).
pub(crate) const SCHEMA: &[&str] = &[
    "CREATE TABLE warehouse (w_id INTEGER NOT NULL, w_name VARCHAR(10), w_street_1 VARCHAR(20), w_street_2 VARCHAR(20), w_city VARCHAR(20), w_state CHAR(2), w_zip CHAR(9), w_tax DECIMAL(4,4), w_ytd DECIMAL(12,2), PRIMARY KEY (w_id))",
    "CREATE TABLE district (d_id INTEGER NOT NULL, d_w_id INTEGER NOT NULL, d_name VARCHAR(10), d_street_1 VARCHAR(20), d_street_2 VARCHAR(20), d_city VARCHAR(20), d_state CHAR(2), d_zip CHAR(9), d_tax DECIMAL(4,4), d_ytd DECIMAL(12,2), d_next_o_id INTEGER, PRIMARY KEY (d_w_id, d_id))",
    "CREATE TABLE customer (c_id INTEGER NOT NULL, c_d_id INTEGER NOT NULL, c_w_id INTEGER NOT NULL, c_first VARCHAR(16), c_middle CHAR(2), c_last VARCHAR(16), c_street_1 VARCHAR(20), c_street_2 VARCHAR(20), c_city VARCHAR(20), c_state CHAR(2), c_zip CHAR(9), c_phone CHAR(16), c_since TIMESTAMP NULL, c_credit CHAR(2), c_credit_lim DECIMAL(12,2), c_discount DECIMAL(4,4), c_balance DECIMAL(12,2), c_ytd_payment DECIMAL(12,2), c_payment_cnt INTEGER, c_delivery_cnt INTEGER, c_data VARCHAR(500), PRIMARY KEY (c_w_id, c_d_id, c_id))",
    "CREATE TABLE history (h_c_id INTEGER, h_c_d_id INTEGER, h_c_w_id INTEGER, h_d_id INTEGER, h_w_id INTEGER, h_date TIMESTAMP NULL, h_amount DECIMAL(6,2), h_data VARCHAR(24))",
    "CREATE TABLE oorder (o_id INTEGER NOT NULL, o_d_id INTEGER NOT NULL, o_w_id INTEGER NOT NULL, o_c_id INTEGER, o_entry_d TIMESTAMP NULL, o_carrier_id INTEGER, o_ol_cnt INTEGER, o_all_local INTEGER, PRIMARY KEY (o_w_id, o_d_id, o_id))",
    "CREATE TABLE new_order (no_o_id INTEGER NOT NULL, no_d_id INTEGER NOT NULL, no_w_id INTEGER NOT NULL, PRIMARY KEY (no_w_id, no_d_id, no_o_id))",
    "CREATE TABLE order_line (ol_o_id INTEGER NOT NULL, ol_d_id INTEGER NOT NULL, ol_w_id INTEGER NOT NULL, ol_number INTEGER NOT NULL, ol_i_id INTEGER, ol_supply_w_id INTEGER, ol_delivery_d TIMESTAMP NULL, ol_quantity INTEGER, ol_amount DECIMAL(6,2), ol_dist_info CHAR(24), PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number))",
    "CREATE TABLE item (i_id INTEGER NOT NULL, i_im_id INTEGER, i_name VARCHAR(24), i_price DECIMAL(5,2), i_data VARCHAR(50), PRIMARY KEY (i_id))",
    "CREATE TABLE stock (s_i_id INTEGER NOT NULL, s_w_id INTEGER NOT NULL, s_quantity INTEGER, s_dist_01 CHAR(24), s_dist_02 CHAR(24), s_dist_03 CHAR(24), s_dist_04 CHAR(24), s_dist_05 CHAR(24), s_dist_06 CHAR(24), s_dist_07 CHAR(24), s_dist_08 CHAR(24), s_dist_09 CHAR(24), s_dist_10 CHAR(24), s_ytd INTEGER, s_order_cnt INTEGER, s_remote_cnt INTEGER, s_data VARCHAR(50), PRIMARY KEY (s_w_id, s_i_id))",
    "CREATE TABLE tpcc_meta (name VARCHAR(40) NOT NULL, value VARCHAR(200), PRIMARY KEY (name))",
];

/// The secondary indexes the transactions need (by-name customer lookups,
/// a customer's last order). The fast load builds them after the rows are
/// in (one sorted build instead of an index insert per row); the row-by-row
/// load creates them with the tables.
pub const INDEXES: &[&str] = &[
    "CREATE INDEX customer_name ON customer (c_w_id, c_d_id, c_last, c_first)",
    "CREATE INDEX oorder_customer ON oorder (o_w_id, o_d_id, o_c_id, o_id)",
];

/// The tables, in the order the loader fills them per warehouse.
pub(crate) const TABLES: &[&str] = &[
    "warehouse",
    "district",
    "customer",
    "history",
    "oorder",
    "new_order",
    "order_line",
    "stock",
    "item",
];

/// The warehouse column of each table (to delete a half-loaded warehouse).
pub(crate) fn warehouse_column(table: &str) -> Option<&'static str> {
    Some(match table {
        "warehouse" => "w_id",
        "district" => "d_w_id",
        "customer" => "c_w_id",
        "history" => "h_w_id",
        "oorder" => "o_w_id",
        "new_order" => "no_w_id",
        "order_line" => "ol_w_id",
        "stock" => "s_w_id",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pending_sends_begin_and_deferred_statements_ahead_once() {
        let stmt = |k: i64| Stmt::Exec("UPDATE t SET v = ?", vec![Value::Int(k)]);
        let mut p = Pending::default();
        assert!(!p.any());
        p.begin();
        assert!(p.commit_is_empty() && !p.any());
        p.begin();
        p.defer(vec![stmt(1)]);
        assert!(!p.commit_is_empty());
        assert_eq!(p.take(vec![stmt(2)]), (true, vec![stmt(1), stmt(2)], 1));
        assert!(!p.any());
        p.begin();
        p.defer(vec![stmt(3)]);
        assert!(p.rollback() && !p.any());
        p.defer(vec![stmt(4)]);
        assert!(!p.rollback() && !p.any());
    }

    #[test]
    fn isolation_names_parse_and_single_row_inserts_are_made_once() {
        assert_eq!(
            Isolation::parse("read-committed"),
            Some(Isolation::ReadCommitted)
        );
        assert_eq!(
            Isolation::parse("REPEATABLE_READ"),
            Some(Isolation::RepeatableRead)
        );
        assert_eq!(
            Isolation::parse("serializable"),
            Some(Isolation::Serializable)
        );
        assert_eq!(Isolation::parse("read-uncommitted"), None);
        assert_eq!(Isolation::ReadCommitted.to_string(), "read committed");
        let a = insert_sql("new_order");
        assert_eq!(
            a,
            "INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (?, ?, ?)"
        );
        assert_eq!(a.as_ptr(), insert_sql("new_order").as_ptr());
        assert_ne!(a.as_ptr(), insert_sql("item").as_ptr());
    }

    #[test]
    fn every_loaded_table_has_a_schema_and_columns() {
        for t in TABLES {
            assert!(
                SCHEMA
                    .iter()
                    .any(|s| s.starts_with(&format!("CREATE TABLE {t} ("))),
                "{t}"
            );
            let cols = yardstick_core::tpcc::columns(t);
            assert!(!cols.is_empty(), "{t}");
            let ddl = SCHEMA
                .iter()
                .find(|s| s.starts_with(&format!("CREATE TABLE {t} (")))
                .unwrap();
            for c in cols {
                assert!(ddl.contains(&format!("{c} ")), "{t}.{c}");
            }
        }
    }
}
