//! TPC-C against SQL databases: the schema, the loader, the five transactions
//! and the consistency checks, written once against [`Conn`], a small
//! synchronous connection interface each database implements (one connection
//! per terminal thread). Statements use `?` placeholders and ` FOR UPDATE`;
//! each database's connection rewrites them to its own dialect once, when it
//! prepares them.
pub mod check;
pub mod load;
#[cfg(feature = "mysql")]
pub mod mysql;
#[cfg(feature = "postgres")]
pub mod postgres;
pub mod run;
#[cfg(feature = "sqlite")]
pub mod sqlite;
pub mod txn;

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
pub fn insert_sql(table: &str) -> &'static str {
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

pub type Row = Vec<Value>;

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
pub fn one_by_one<C: Conn + ?Sized>(c: &mut C, stmts: Vec<Stmt>) -> Result<Vec<Done>, DbError> {
    stmts
        .into_iter()
        .map(|s| match s {
            Stmt::Query(sql, params) => c.query(sql, &params).map(Done::Rows),
            Stmt::Exec(sql, params) => c.execute(sql, &params).map(Done::Count),
        })
        .collect()
}

/// Bytes per piece of [`TextRows`] text.
const PIECE: usize = 64 << 10;

/// Rows as tab-separated text with backslash escapes and `\N` for NULL:
/// PostgreSQL's `COPY ... FROM STDIN` text format and MySQL's `LOAD DATA`
/// default; `now` is the text of a timestamp column's load time. Written by
/// the row generators directly ([`RowSink`]: no value in between) or from
/// values ([`TextRows::from_rows`]). Kept in pieces of whole rows and about
/// [`PIECE`] bytes, sent one after another: buffers the allocator keeps
/// reusing, where one of several MiB per batch came fresh from the kernel,
/// zeroed, each time.
pub struct TextRows {
    now: String,
    pieces: Vec<Vec<u8>>,
    buf: Vec<u8>,
    rows: usize,
    /// No column of the current row written yet.
    row_start: bool,
    digits: itoa::Buffer,
}

impl TextRows {
    pub fn new(now: &str) -> TextRows {
        TextRows {
            now: now.to_string(),
            pieces: Vec::new(),
            buf: Vec::with_capacity(PIECE + 1024),
            rows: 0,
            row_start: true,
            digits: itoa::Buffer::new(),
        }
    }

    pub fn from_rows(rows: &[Row], now: &str) -> TextRows {
        let mut t = TextRows::new(now);
        for row in rows {
            for v in row {
                match v {
                    Value::Null => t.null(),
                    Value::Int(n) => t.int(*n),
                    Value::Num(f) => t.num(*f),
                    Value::Now => t.now(),
                    Value::Text(s) => t.text(s),
                }
            }
            t.end_row();
        }
        t
    }

    /// Rows written.
    pub fn len(&self) -> usize {
        self.rows
    }

    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    /// The text, in pieces of whole rows.
    pub fn into_pieces(mut self) -> Vec<Vec<u8>> {
        if !self.buf.is_empty() {
            self.pieces.push(self.buf);
        }
        self.pieces
    }

    fn column(&mut self) -> &mut Vec<u8> {
        if !self.row_start {
            self.buf.push(b'\t');
        }
        self.row_start = false;
        &mut self.buf
    }

    /// Any text, escaped.
    pub fn text(&mut self, t: &str) {
        let buf = self.column();
        if !t
            .bytes()
            .any(|b| matches!(b, b'\\' | b'\t' | b'\n' | b'\r'))
        {
            buf.extend_from_slice(t.as_bytes());
            return;
        }
        for b in t.bytes() {
            match b {
                b'\\' => buf.extend_from_slice(b"\\\\"),
                b'\t' => buf.extend_from_slice(b"\\t"),
                b'\n' => buf.extend_from_slice(b"\\n"),
                b'\r' => buf.extend_from_slice(b"\\r"),
                b => buf.push(b),
            }
        }
    }
}

impl RowSink for TextRows {
    fn int(&mut self, v: i64) {
        self.column();
        self.buf.extend_from_slice(self.digits.format(v).as_bytes());
    }
    fn num(&mut self, v: f64) {
        self.column();
        fixed4(&mut self.buf, v, &mut self.digits);
    }
    fn alnum(&mut self, write: impl FnOnce(&mut Vec<u8>)) {
        let buf = self.column();
        let start = buf.len();
        write(buf);
        debug_assert!(buf[start..].iter().all(u8::is_ascii_alphanumeric));
    }
    fn now(&mut self) {
        self.column();
        self.buf.extend_from_slice(self.now.as_bytes());
    }
    fn null(&mut self) {
        self.column().extend_from_slice(b"\\N");
    }
    fn end_row(&mut self) {
        self.buf.push(b'\n');
        self.rows += 1;
        self.row_start = true;
        if self.buf.len() >= PIECE {
            let full = std::mem::replace(&mut self.buf, Vec::with_capacity(PIECE + 1024));
            self.pieces.push(full);
        }
    }
}

/// Tab-separated rows ([`TextRows`]) back as values: `\N` as NULL, every
/// other field as unescaped text.
pub fn rows_from_text<P: AsRef<[u8]>>(pieces: &[P]) -> Vec<Row> {
    let mut rows = Vec::new();
    for piece in pieces {
        for line in piece.as_ref().split(|&b| b == b'\n') {
            if line.is_empty() {
                continue;
            }
            let row = line
                .split(|&b| b == b'\t')
                .map(|field| {
                    if field == b"\\N" {
                        return Value::Null;
                    }
                    let mut out = Vec::with_capacity(field.len());
                    let mut bytes = field.iter();
                    while let Some(&b) = bytes.next() {
                        out.push(if b == b'\\' {
                            match bytes.next() {
                                Some(b't') => b'\t',
                                Some(b'n') => b'\n',
                                Some(b'r') => b'\r',
                                Some(&other) => other,
                                None => b'\\',
                            }
                        } else {
                            b
                        });
                    }
                    Value::Text(String::from_utf8_lossy(&out).into_owned())
                })
                .collect();
            rows.push(row);
        }
    }
    rows
}

/// `f` with four decimals, as `format!("{f:.4}")` writes the loader's
/// amounts (whole cents or ten-thousandths) without float formatting's
/// exact-digit machinery.
fn fixed4(buf: &mut Vec<u8>, f: f64, digits: &mut itoa::Buffer) {
    let scaled = (f * 10_000.0).round();
    if !scaled.is_finite() || scaled.abs() >= 9e15 {
        use std::io::Write as _;
        let _ = write!(buf, "{f:.4}");
        return;
    }
    let scaled = scaled as i64;
    if scaled < 0 {
        buf.push(b'-');
    }
    let abs = scaled.unsigned_abs();
    buf.extend_from_slice(digits.format(abs / 10_000).as_bytes());
    buf.push(b'.');
    let frac = digits.format(abs % 10_000 + 10_000).as_bytes();
    buf.extend_from_slice(&frac[1..]);
}

/// One connection of one terminal or loader thread.
pub trait Conn {
    fn begin(&mut self) -> Result<(), DbError>;
    fn commit(&mut self) -> Result<(), DbError>;
    fn rollback(&mut self) -> Result<(), DbError>;
    /// Runs a query (prepared once per connection) and returns its rows.
    fn query(&mut self, sql: &'static str, params: &[Value]) -> Result<Vec<Row>, DbError>;
    /// Runs a statement and returns the rows it changed.
    fn execute(&mut self, sql: &'static str, params: &[Value]) -> Result<u64, DbError>;
    /// Runs DDL or other unprepared statements.
    fn batch(&mut self, sql: &str) -> Result<(), DbError>;
    /// Runs one of [`INDEXES`], doing nothing when the index exists.
    fn create_index(&mut self, ddl: &str) -> Result<(), DbError> {
        self.batch(&ddl.replacen("CREATE INDEX", "CREATE INDEX IF NOT EXISTS", 1))
    }
    /// Inserts `rows` into `table` (its columns in [`yardstick_core::tpcc::COLUMNS`]
    /// order) with the database's fast path, as one transaction.
    fn load(&mut self, table: &str, rows: &[Row]) -> Result<(), DbError>;
    /// When the fast path takes tab-separated text ([`Conn::load_text`]):
    /// the load time as that text, for timestamp columns. `None` (the
    /// default): the loader hands it values ([`Conn::load`]).
    fn text_load_time(&self) -> Option<String> {
        None
    }
    /// [`Conn::load`] of rows written as tab-separated text.
    fn load_text(&mut self, table: &str, text: TextRows) -> Result<(), DbError> {
        self.load(table, &rows_from_text(&text.into_pieces()))
    }
    /// Runs statements in order within the current transaction and returns
    /// what each returned, stopping at the first error. A driver that can
    /// sends them all before reading the answers (one round trip instead of
    /// one per statement); the default runs them [`one_by_one`].
    fn pipeline(&mut self, stmts: Vec<Stmt>) -> Result<Vec<Done>, DbError> {
        one_by_one(self, stmts)
    }
    /// Statements whose answers the transaction does not need: a driver
    /// that pipelines may hold them and send them with the next statements
    /// or the commit, where their errors surface; the default runs them now.
    fn defer(&mut self, stmts: Vec<Stmt>) -> Result<(), DbError> {
        one_by_one(self, stmts).map(|_| ())
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
pub const SCHEMA: &[&str] = &[
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
pub const TABLES: &[&str] = &[
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
pub fn warehouse_column(table: &str) -> Option<&'static str> {
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

/// `?` placeholders as `$1, $2, ...` (PostgreSQL).
pub fn numbered_placeholders(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 16);
    let mut n = 0;
    let mut quoted = false;
    for c in sql.chars() {
        if c == '\'' {
            quoted = !quoted;
        }
        if c == '?' && !quoted {
            n += 1;
            out.push('$');
            out.push_str(&n.to_string());
        } else {
            out.push(c);
        }
    }
    out
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
    fn tab_separated_rows_escape_and_mark_nulls() {
        let rows = vec![vec![
            Value::Int(7),
            Value::Text("a\tb\\c\nd".into()),
            Value::Null,
            Value::Num(12.5),
            Value::Now,
        ]];
        let text = TextRows::from_rows(&rows, "2026-01-02 03:04:05");
        assert_eq!(text.len(), 1);
        let pieces = text.into_pieces();
        assert_eq!(
            pieces,
            vec![b"7\ta\\tb\\\\c\\nd\t\\N\t12.5000\t2026-01-02 03:04:05\n".to_vec()]
        );
        // and back: NULL, the rest as unescaped text
        assert_eq!(
            rows_from_text(&pieces),
            vec![vec![
                Value::Text("7".into()),
                Value::Text("a\tb\\c\nd".into()),
                Value::Null,
                Value::Text("12.5000".into()),
                Value::Text("2026-01-02 03:04:05".into()),
            ]]
        );
        // whole rows per piece, nothing lost between pieces
        let many: Vec<Row> = (0..5000)
            .map(|i| vec![Value::Int(i), Value::Text("x".repeat(40))])
            .collect();
        let pieces = TextRows::from_rows(&many, "").into_pieces();
        assert!(pieces.len() > 2, "{}", pieces.len());
        assert!(pieces
            .iter()
            .all(|p| p.len() < PIECE + 100 && p.ends_with(b"\n")));
        let back = rows_from_text(&pieces);
        assert_eq!(back.len(), 5000);
        assert!(back
            .iter()
            .enumerate()
            .all(|(i, r)| r[0] == Value::Text(i.to_string())));
    }

    #[test]
    fn generated_rows_written_as_text_equal_their_values_written_as_text() {
        use yardstick_core::tpcc::{rows, Constants, Random};
        let k = Constants {
            c_last: 3,
            c_id: 4,
            ol_i_id: 5,
        };
        // each generator drawing from two equal streams, one into values and
        // one into text
        let mut values = rows::Values::default();
        let mut direct = TextRows::new("2026-01-02 03:04:05");
        let (mut a, mut b) = (Random::new(9, k), Random::new(9, k));
        for i in 1..=50 {
            rows::item(&mut a, i, &mut values);
            rows::item(&mut b, i, &mut direct);
            rows::warehouse(&mut a, i, &mut values);
            rows::warehouse(&mut b, i, &mut direct);
            rows::stock(&mut a, 1, i, &mut values);
            rows::stock(&mut b, 1, i, &mut direct);
            rows::district(&mut a, 1, i, &mut values);
            rows::district(&mut b, 1, i, &mut direct);
            rows::customer(&mut a, 1, 1, i * 50, &mut values);
            rows::customer(&mut b, 1, 1, i * 50, &mut direct);
            rows::history(&mut a, 1, 1, i, &mut values);
            rows::history(&mut b, 1, 1, i, &mut direct);
        }
        let from_values = TextRows::from_rows(&values.rows, "2026-01-02 03:04:05");
        assert_eq!(direct.len(), 300);
        assert_eq!(from_values.into_pieces(), direct.into_pieces());

        struct OrderText([TextRows; 3]);
        impl rows::OrderSinks for OrderText {
            type Sink = TextRows;
            fn orders(&mut self) -> &mut TextRows {
                &mut self.0[0]
            }
            fn lines(&mut self) -> &mut TextRows {
                &mut self.0[1]
            }
            fn new_orders(&mut self) -> &mut TextRows {
                &mut self.0[2]
            }
        }
        let mut values = rows::OrderValues::default();
        let mut direct = OrderText(std::array::from_fn(|_| TextRows::new("now")));
        for o_id in 2095..=2105 {
            rows::order(&mut a, 1, 2, o_id, o_id - 2000, &mut values);
            rows::order(&mut b, 1, 2, o_id, o_id - 2000, &mut direct);
        }
        let [orders, lines, new_orders] = direct.0;
        assert_eq!((orders.len(), new_orders.len()), (11, 5));
        for (v, t) in [
            (values.orders, orders),
            (values.lines, lines),
            (values.new_orders, new_orders),
        ] {
            assert_eq!(
                TextRows::from_rows(&v.rows, "now").into_pieces(),
                t.into_pieces()
            );
        }
    }

    #[test]
    fn amounts_are_written_as_float_formatting_would() {
        let mut digits = itoa::Buffer::new();
        let mut check = |f: f64| {
            let mut buf = Vec::new();
            fixed4(&mut buf, f, &mut digits);
            assert_eq!(String::from_utf8(buf).unwrap(), format!("{f:.4}"), "{f}");
        };
        for k in -100_000..100_000 {
            check(f64::from(k) / 100.0);
            check(f64::from(k) / 10_000.0);
        }
        for f in [0.0, 1e12 + 0.25, -3_000_000.5, 5e20, f64::NAN] {
            check(f);
        }
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
    fn placeholders_are_numbered_outside_quotes() {
        assert_eq!(
            numbered_placeholders("SELECT a FROM t WHERE b = ? AND c = '?' AND d = ?"),
            "SELECT a FROM t WHERE b = $1 AND c = '?' AND d = $2"
        );
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
