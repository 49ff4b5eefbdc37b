//! `mysql://user:password@host:port/database`: MySQL and MariaDB through the
//! async `mysql_async` driver. One connection per in-flight slot, every
//! statement prepared when the session opens (server-side prepared statements,
//! binary protocol), YCSB's table layout (`usertable`, `YCSB_KEY` primary key,
//! one column per field).
//!
//! Connections set CLIENT_FOUND_ROWS, so an UPDATE that writes the value a row
//! already has still counts the row as found (MySQL otherwise reports 0
//! affected rows and the update would look like a missing key).
use crate::net::run_cold;
use crate::sql::{Dialect, Placeholder, Statements as Sql, Upsert};
use crate::url::Target;
use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Opts, OptsBuilder, Params, Row, SslOpts, Statement, Value};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;
pub mod tpcc;

use crate::registry::{Capabilities, Descriptor, Registered};
use yardstick_core::binding::*;

/// yardstick's own URL options (the driver's are not passed through).
pub const OPTIONS: &[&str] = &[
    "flavor",
    "upsert",
    "engine",
    "tls",
    "tls_ca",
    "tls_insecure",
    "connect_timeout",
];

/// Server variables recorded with every result.
const SETTINGS: &[&str] = &[
    "version_comment",
    "innodb_buffer_pool_size",
    "innodb_flush_log_at_trx_commit",
    "innodb_doublewrite",
    "innodb_log_file_size",
    "sync_binlog",
    "log_bin",
    "binlog_format",
    "transaction_isolation",
    "tx_isolation",
    "max_connections",
    "default_storage_engine",
    // TiDB's
    "tidb_txn_mode",
    "tidb_retry_limit",
    "tidb_disable_txn_auto_retry",
];

/// TiDB's errors that ask the client to retry the transaction: write
/// conflict, retryable transaction error, schema changed under it.
const TIDB_RETRYABLE: &[u16] = &[9007, 8002, 8022, 8028];
/// TiDB's storage-layer unavailability: PD or TiKV timeouts, region unavailable.
const TIDB_UNAVAILABLE: &[u16] = &[9001, 9002, 9005];

// MySQL/MariaDB error codes
const ER_DUP_ENTRY: u16 = 1062;
const ER_LOCK_DEADLOCK: u16 = 1213;
const ER_LOCK_WAIT_TIMEOUT: u16 = 1205;
const ER_ACCESS_DENIED: u16 = 1045;
const ER_DBACCESS_DENIED: u16 = 1044;
const ER_BAD_DB: u16 = 1049;
const ER_CON_COUNT: u16 = 1040;
const ER_QUERY_INTERRUPTED: u16 = 1317;
const ER_STATEMENT_TIMEOUT: u16 = 3024;

pub struct MysqlBinding {
    opts: Opts,
    server: String,
    connect_timeout: Duration,
    sql: Arc<Sql>,
    key_last_in_update: bool,
    open: OpenOptions,
    /// flavor=tidb: TiDB's schema, error codes and retry policy.
    tidb: bool,
    info: EngineInfo,
}

fn connect_error(server: &str, user: &str, db: &str, e: &mysql_async::Error) -> BindingError {
    match e {
        mysql_async::Error::Server(s) => match s.code {
            ER_ACCESS_DENIED => BindingError::Unavailable(format!(
                "{server} refused user {user}: wrong user or password; fix the credentials in --db"
            )),
            ER_DBACCESS_DENIED => BindingError::Unavailable(format!(
                "{server}: user {user} may not use database {db}; GRANT it or name another database in --db"
            )),
            ER_BAD_DB => BindingError::Unavailable(format!(
                "database {db} does not exist on {server}: create it (CREATE DATABASE {db}) or name another in --db"
            )),
            ER_CON_COUNT => BindingError::Unavailable(format!(
                "{server} has no free connections: raise max_connections or lower --threads x --concurrency"
            )),
            _ => BindingError::Unavailable(format!("{server}: {}", s.message)),
        },
        other => BindingError::Unavailable(format!(
            "cannot connect to {server}: {other}; check that the server runs and the URL is right"
        )),
    }
}

async fn connect(opts: &Opts, timeout: Duration) -> Result<Conn, mysql_async::Error> {
    match tokio::time::timeout(timeout, Conn::new(opts.clone())).await {
        Ok(r) => r,
        Err(_) => Err(mysql_async::Error::Io(mysql_async::IoError::Io(
            std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!("no answer within {timeout:?} (connect_timeout)"),
            ),
        ))),
    }
}

/// The connection options of a `mysql://` URL, shared by the YCSB binding
/// and TPC-C.
pub(crate) struct Endpoint {
    pub(crate) opts: Opts,
    /// "MySQL at host:port", for messages.
    pub(crate) server: String,
    pub(crate) user: String,
    pub(crate) db: String,
    pub(crate) connect_timeout: Duration,
    upsert: Upsert,
    pub(crate) tidb: bool,
    engine: String,
    tls: bool,
}

pub(crate) fn endpoint(target: &Target) -> Result<Endpoint, BindingError> {
    let url = target.url.as_str();
    crate::net::use_ring_for_tls();
    target.allow_only(OPTIONS)?;
    // the driver only knows mysql://
    let base = format!("mysql://{}", target.rest);
    let parsed = Opts::from_url(&base).map_err(|e| {
        BindingError::Config(format!(
            "{} is not a MySQL URL ({e}); use mysql://user:password@host:port/database",
            yardstick_core::result::redact_url(url)
        ))
    })?;
    let db = parsed.db_name().map(str::to_string).ok_or_else(|| {
        BindingError::Config(
            "the MySQL URL names no database: use mysql://user:password@host:port/database".into(),
        )
    })?;
    let user = parsed.user().unwrap_or("root").to_string();
    let server = format!("MySQL at {}:{}", parsed.ip_or_hostname(), parsed.tcp_port());
    let upsert = match target.param("upsert").unwrap_or("on_duplicate_key") {
            "on_duplicate_key" => Upsert::OnDuplicateKey,
            "replace" => Upsert::Replace,
            other => {
                return Err(BindingError::Config(format!(
                    "upsert={other} is not known: use upsert=on_duplicate_key (INSERT ... ON DUPLICATE KEY UPDATE) or upsert=replace (REPLACE INTO)"
                )))
            }
        };
    let tidb = match target.param("flavor").unwrap_or("mysql") {
        "mysql" | "mariadb" => false,
        "tidb" => true,
        other => {
            return Err(BindingError::Config(format!(
                "flavor={other} is not known: use mysql (also for MariaDB) or tidb"
            )))
        }
    };
    let engine = target.param("engine").unwrap_or("InnoDB").to_string();
    if !engine
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        return Err(BindingError::Config(format!(
            "engine={engine} is not a storage engine name (for example InnoDB, MyRocks, Aria)"
        )));
    }
    let connect_timeout = target.duration("connect_timeout", 10)?;
    let ssl = match (
        target.param("tls"),
        target.param("tls_ca"),
        target.param("tls_insecure"),
    ) {
        (None | Some("false"), None, None) => None,
        (None | Some("true"), ca, insecure) => {
            let mut s = SslOpts::default();
            if let Some(ca) = ca {
                if !std::path::Path::new(ca).is_file() {
                    return Err(BindingError::Config(format!(
                            "tls_ca={ca} is not a readable file; give the PEM file of the CA that signed the server's certificate"
                        )));
                }
                s = s.with_root_certs(vec![std::path::PathBuf::from(ca).into()]);
            }
            if insecure == Some("true") {
                s = s.with_danger_accept_invalid_certs(true);
            }
            Some(s)
        }
        (Some(other), _, _) => {
            return Err(BindingError::Config(format!(
                "tls={other} is not true or false (tls_ca and tls_insecure need tls on)"
            )))
        }
    };
    let tls = ssl.is_some();
    let driver_opts: Opts = OptsBuilder::from_opts(parsed)
        .client_found_rows(true)
        .tcp_nodelay(true)
        .prefer_socket(false)
        .stmt_cache_size(0)
        .ssl_opts(ssl)
        .into();
    Ok(Endpoint {
        opts: driver_opts,
        server,
        user,
        db,
        connect_timeout,
        upsert,
        tidb,
        engine,
        tls,
    })
}

/// The engine a server's version string names: tidb, mariadb or mysql.
pub(crate) fn engine_name(version: &str) -> &'static str {
    let v = version.to_ascii_lowercase();
    if v.contains("tidb") {
        "tidb"
    } else if v.contains("mariadb") {
        "mariadb"
    } else {
        "mysql"
    }
}

/// The server variables recorded with every result (those it has).
pub(crate) async fn server_settings(c: &mut Conn) -> BTreeMap<String, String> {
    let mut settings = BTreeMap::new();
    for name in SETTINGS {
        let row: Option<(String, Option<String>)> = c
            .query_first(format!("SHOW VARIABLES LIKE '{name}'"))
            .await
            .unwrap_or(None);
        if let Some((_, Some(v))) = row {
            settings.insert((*name).to_string(), v);
        }
    }
    settings
}

/// Opens one connection to the endpoint, with a clear message when that fails.
pub(crate) async fn open_conn(ep: &Endpoint) -> Result<Conn, BindingError> {
    connect(&ep.opts, ep.connect_timeout)
        .await
        .map_err(|e| connect_error(&ep.server, &ep.user, &ep.db, &e))
}

impl Registered for MysqlBinding {
    const DESCRIPTOR: Descriptor = Descriptor {
        schemes: &["mysql", "mariadb"],
        flavours: &["mysql", "mariadb", "tidb"],
        description: "MySQL / MariaDB (mysql_async): server-side prepared statements, one connection per in-flight operation",
        example: "mysql://user:password@127.0.0.1:3306/ycsb",
        docs: "docs/bindings/mysql.md",
        options: OPTIONS,
        capabilities: Capabilities {
            batch_load: true,
            scan: true,
            tpcc: Some(tpcc::SUPPORT),
        },
    };

    fn open(target: &Target, opts: &OpenOptions) -> Result<Self, BindingError> {
        let Endpoint {
            opts: driver_opts,
            server,
            user,
            db,
            connect_timeout,
            upsert,
            tidb,
            engine,
            tls,
        } = endpoint(target)?;
        let dialect = Dialect {
            placeholder: Placeholder::Question,
            upsert,
        };
        let sql = Arc::new(Sql::new(&opts.schema.table, &opts.schema.fields, dialect));
        let info = run_cold(async {
            let mut c = connect(&driver_opts, connect_timeout)
                .await
                .map_err(|e| connect_error(&server, &user, &db, &e))?;
            prepare_table(
                &mut c,
                &server,
                &sql,
                &create_table(&sql, &engine, tidb),
                opts.create,
            )
            .await?;
            let version: String = c
                .query_first("SELECT VERSION()")
                .await
                .map_err(|e| BindingError::Unavailable(format!("{server}: {e}")))?
                .unwrap_or_default();
            let mut settings = server_settings(&mut c).await;
            let table_engine: Option<String> = c
                .exec_first(
                    "SELECT ENGINE FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?",
                    (sql.table.clone(),),
                )
                .await
                .unwrap_or(None);
            if let Some(e) = table_engine {
                settings.insert("table_engine".into(), e);
            }
            settings.insert(
                "statements".into(),
                "server-side prepared per session; autocommit; CLIENT_FOUND_ROWS".into(),
            );
            settings.insert(
                "upsert".into(),
                match upsert {
                    Upsert::Replace => "REPLACE INTO (whole records)",
                    _ => "INSERT ... ON DUPLICATE KEY UPDATE",
                }
                .into(),
            );
            settings.insert("tls".into(), tls.to_string());
            let _ = c.disconnect().await;
            settings.insert("flavor".into(), if tidb { "tidb" } else { "mysql" }.into());
            let name = engine_name(&version);
            Ok::<_, BindingError>(EngineInfo {
                name: name.into(),
                version,
                settings,
            })
        })?;
        Ok(MysqlBinding {
            opts: driver_opts,
            server: server.replace(
                "MySQL",
                if info.name == "mariadb" {
                    "MariaDB"
                } else {
                    "MySQL"
                },
            ),
            connect_timeout,
            sql,
            key_last_in_update: dialect.key_last_in_update(),
            open: opts.clone(),
            tidb,
            info,
        })
    }
}

/// YCSB's table: keys in byte order (ascii_bin) so scans order as on every
/// other binding; TiDB clusters the rows by the primary key (its default for
/// new tables varies by version, so it is said explicitly).
fn create_table(sql: &Sql, engine: &str, tidb: bool) -> String {
    let fields: Vec<String> = sql.fields.iter().map(|f| format!("{f} LONGBLOB")).collect();
    if tidb {
        format!(
            "CREATE TABLE IF NOT EXISTS {} (YCSB_KEY VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NOT NULL, {}, PRIMARY KEY (YCSB_KEY) CLUSTERED)",
            sql.table,
            fields.join(", ")
        )
    } else {
        format!(
            "CREATE TABLE IF NOT EXISTS {} (YCSB_KEY VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NOT NULL PRIMARY KEY, {}) ENGINE={engine}",
            sql.table,
            fields.join(", ")
        )
    }
}

async fn prepare_table(
    c: &mut Conn,
    server: &str,
    sql: &Sql,
    create_table: &str,
    create: bool,
) -> Result<(), BindingError> {
    let cols: Vec<String> = c
        .exec(
            "SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?",
            (sql.table.clone(),),
        )
        .await
        .map_err(|e| BindingError::Unavailable(format!("{server}: {e}")))?;
    if cols.is_empty() {
        if !create {
            return Err(BindingError::Unavailable(format!(
                "table {} does not exist in {server}: run `yardstick load` with the same --db and properties first",
                sql.table
            )));
        }
        c.query_drop(create_table).await.map_err(|e| {
            BindingError::Unavailable(format!("cannot create table {}: {e}", sql.table))
        })?;
        return Ok(());
    }
    crate::sql::check_columns(&sql.table, &sql.fields, &cols)
}

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
    conn: Option<Conn>,
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
        insert: c
            .prep(match o.insert_mode {
                InsertMode::Insert => sql.insert_all.as_str(),
                InsertMode::Upsert => sql.upsert_all.as_str(),
            })
            .await?,
        update_one: prepare_list(
            c,
            if o.update_mode == UpdateMode::Upsert {
                &sql.upsert_one
            } else {
                &sql.update_one
            },
        )
        .await?,
        delete: c.prep(sql.delete.as_str()).await?,
    })
}

impl Binding for MysqlBinding {
    type Session = MysqlSession;

    async fn session(&self) -> Result<MysqlSession, BindingError> {
        let user = self.opts.user().unwrap_or("root").to_string();
        let db = self.opts.db_name().unwrap_or("").to_string();
        let mut conn = connect(&self.opts, self.connect_timeout)
            .await
            .map_err(|e| connect_error(&self.server, &user, &db, &e))?;
        let st = prepare(&mut conn, &self.sql, &self.open)
            .await
            .map_err(|e| {
                BindingError::Unavailable(format!(
                    "cannot prepare statements on {}: {e}",
                    self.server
                ))
            })?;
        Ok(MysqlSession {
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
        })
    }

    fn info(&self) -> EngineInfo {
        self.info.clone()
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
        run_cold(async move {
            let mut c = connect(&opts, timeout)
                .await
                .map_err(|e| BindingError::Io(e.to_string()))?;
            let n: Option<u64> = c
                .exec_first(
                    "SELECT CAST(DATA_LENGTH + INDEX_LENGTH AS UNSIGNED) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?",
                    (table,),
                )
                .await
                .map_err(|e| BindingError::Io(e.to_string()))?;
            let _ = c.disconnect().await;
            n.ok_or_else(|| BindingError::Io("no such table".into()))
        })
        .ok()
    }
}

fn status_of(e: &mysql_async::Error) -> Status {
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
            .map_err(|e| Outcome::failed(status_of(&e), e))?;
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
            .map_err(|e| Outcome::failed(status_of(&e), e))?;
        self.conn = Some(c);
        self.st = Some(st);
        self.batch.clear();
        Ok(())
    }

    fn failed(&mut self, e: mysql_async::Error) -> Outcome {
        let status = status_of(&e);
        if status == Status::DuplicateKey {
            return Outcome::status(status);
        }
        if status == Status::Unavailable {
            self.conn = None;
            self.st = None;
        }
        Outcome::failed(status, e)
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
            self.insert_mode == InsertMode::Upsert,
            self.update_mode == UpdateMode::Upsert,
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
            Ok(()) if conn.affected_rows() == 0 => Outcome::status(Status::NotFound),
            Ok(()) => Outcome::ok(0, values.bytes()),
            Err(e) => self.failed(e),
        }
    }
}

impl Session for MysqlSession {
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
            Ok(None) => Outcome::status(Status::NotFound),
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
                    o.rows = inserted;
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
            Ok(()) if conn.affected_rows() == 0 => Outcome::status(Status::NotFound),
            Ok(()) => Outcome::ok(0, 0),
            Err(e) => self.failed(e),
        }
    }

    /// TRUNCATE TABLE: the table is recreated empty, no purge work left behind.
    async fn clear(&mut self) -> Result<Option<u64>, String> {
        self.ready().await.map_err(|o| {
            o.detail
                .map_or_else(|| o.status.name().to_string(), String::from)
        })?;
        let sql = format!("TRUNCATE TABLE {}", self.sql.table);
        let conn = self.conn.as_mut().expect("connected by ready");
        conn.query_drop(sql).await.map_err(|e| e.to_string())?;
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server_url() -> String {
        std::env::var("YARDSTICK_MYSQL_URL")
            .unwrap_or_else(|_| "mysql://bench:benchpw@127.0.0.1:53306/ycsb".into())
    }

    fn available() -> bool {
        crate::testing::server_available("MariaDB", &server_url(), "scripts/services start mariadb")
    }

    fn open_url(url: &str, opts: &OpenOptions) -> Result<MysqlBinding, BindingError> {
        MysqlBinding::open(&Target::parse(url)?, opts)
    }

    #[test]
    fn the_version_string_names_the_engine() {
        assert_eq!(engine_name("10.11.6-MariaDB-0+deb12u1"), "mariadb");
        assert_eq!(engine_name("8.0.11-TiDB-v7.5.0"), "tidb");
        assert_eq!(engine_name("8.0.36"), "mysql");
    }

    /// A fresh database per check, so checks run in parallel without sharing rows.
    fn open_fresh_with(opts: &OpenOptions, query: &str) -> Result<MysqlBinding, BindingError> {
        open_url(&format!("{}{query}", fresh_database()?), opts)
    }

    /// The URL of a new, empty database on the test server.
    fn fresh_database() -> Result<String, BindingError> {
        let name = crate::net::unique_name("conf");
        let base = server_url();
        let admin = Opts::from_url(&base).unwrap();
        run_cold(async {
            let mut c = connect(&admin, Duration::from_secs(10))
                .await
                .map_err(|e| BindingError::Io(e.to_string()))?;
            // the databases of earlier test processes, once per process
            static SWEPT: std::sync::Once = std::sync::Once::new();
            if !SWEPT.is_completed() {
                let names: Vec<String> = c
                    .query("SHOW DATABASES LIKE 'conf\\_%'")
                    .await
                    .map_err(|e| BindingError::Io(e.to_string()))?;
                for old in crate::testing::left_behind("conf", names) {
                    let _ = c.query_drop(format!("DROP DATABASE IF EXISTS {old}")).await;
                }
                SWEPT.call_once(|| ());
            }
            c.query_drop(format!("CREATE DATABASE {name}"))
                .await
                .map_err(|e| BindingError::Io(e.to_string()))
        })?;
        Ok(format!("{}/{name}", base.rsplit_once('/').unwrap().0))
    }

    fn open_fresh(opts: &OpenOptions) -> Result<MysqlBinding, BindingError> {
        open_fresh_with(opts, "")
    }

    yardstick_core::conformance_suite!(open_fresh, available);

    mod replace {
        use super::*;

        fn open_fresh(opts: &OpenOptions) -> Result<MysqlBinding, BindingError> {
            open_fresh_with(opts, "?upsert=replace")
        }

        yardstick_core::conformance_suite!(open_fresh, available);
    }

    fn opts(create: bool) -> OpenOptions {
        OpenOptions {
            schema: Schema {
                table: "usertable".into(),
                fields: (0..3).map(|i| format!("field{i}")).collect(),
            },
            insert_mode: InsertMode::Insert,
            update_mode: UpdateMode::Update,
            create,
            sessions: 1,
            data_integrity: false,
            scans: true,
        }
    }

    #[test]
    fn bad_credentials_missing_database_and_dead_port_are_one_clear_line() {
        if !available() {
            return;
        }
        let url = server_url();
        let open = |u: &str| open_url(u, &opts(true)).err().unwrap().to_string();
        let e = open(&url.replace("benchpw", "wrongpw"));
        assert!(
            e.contains("wrong user or password") && !e.contains("wrongpw"),
            "{e}"
        );
        let e = open(&format!("{}/no_such_db", url.rsplit_once('/').unwrap().0));
        assert!(e.contains("database no_such_db does not exist"), "{e}");
        let e = open("mysql://bench:benchpw@127.0.0.1:1/ycsb");
        assert!(e.contains("cannot connect to MySQL at 127.0.0.1:1"), "{e}");
        let e = open(&format!("{url}?upsert=merge"));
        assert!(e.contains("upsert=merge is not known"), "{e}");
        let e = open(&format!("{url}?tls_ca=/no/such/ca.pem"));
        assert!(
            e.contains("tls_ca=/no/such/ca.pem is not a readable file"),
            "{e}"
        );
    }

    #[test]
    fn server_variables_are_recorded_and_tls_with_the_test_ca_works() {
        if !available() {
            return;
        }
        let b = open_fresh(&opts(true)).unwrap();
        let info = b.info();
        assert_eq!(info.name, "mariadb");
        for s in [
            "innodb_buffer_pool_size",
            "innodb_flush_log_at_trx_commit",
            "sync_binlog",
            "binlog_format",
            "table_engine",
        ] {
            assert!(info.settings.contains_key(s), "{s} missing: {info:?}");
        }
        assert_eq!(info.settings["tls"], "false");
        assert!(b.disk_bytes().is_some());
        let ca = crate::testing::test_ca();
        let b = open_fresh_with(&opts(true), &format!("?tls_ca={ca}")).unwrap();
        assert_eq!(b.info().settings["tls"], "true");
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let mut s = b.session().await.unwrap();
            let mut ws = WriteSet::default();
            for f in 0..3 {
                ws.push(f).extend_from_slice(b"over tls");
            }
            assert_eq!(s.insert(b"k", &ws).await.status, Status::Ok);
            let mut c = s.conn.take().unwrap();
            let cipher: Option<(String, String)> = c
                .query_first("SHOW SESSION STATUS LIKE 'Ssl_cipher'")
                .await
                .unwrap();
            assert!(
                !cipher.unwrap().1.is_empty(),
                "the session is not encrypted"
            );
        });
    }

    #[test]
    fn tidb_flavor_clusters_the_key_maps_its_errors_and_asks_for_retries() {
        let sql = Sql::new(
            "usertable",
            &["field0".to_string()],
            Dialect {
                placeholder: Placeholder::Question,
                upsert: Upsert::OnDuplicateKey,
            },
        );
        assert!(create_table(&sql, "InnoDB", true).ends_with("PRIMARY KEY (YCSB_KEY) CLUSTERED)"));
        assert!(create_table(&sql, "InnoDB", false).ends_with("ENGINE=InnoDB"));
        let server = |code| {
            mysql_async::Error::Server(mysql_async::ServerError {
                code,
                message: String::new(),
                state: String::new(),
            })
        };
        assert_eq!(status_of(&server(9007)), Status::Conflict);
        assert_eq!(status_of(&server(9005)), Status::Unavailable);
        let url = "mysql://u:p@127.0.0.1:1/db?flavor=oracle";
        let e = open_url(url, &opts(true)).err().unwrap().to_string();
        assert!(e.contains("flavor=oracle is not known"), "{e}");
        if !available() {
            return;
        }
        // over a MariaDB server whose table exists already (MariaDB has no
        // CLUSTERED keyword): the flavor's client side, recording and retry policy
        let db = fresh_database().unwrap();
        let plain = open_url(&db, &opts(true)).unwrap();
        assert_eq!(plain.conflict_retries(), None);
        let b = open_url(&format!("{db}?flavor=tidb"), &opts(false)).unwrap();
        assert_eq!(b.conflict_retries(), Some(10));
        assert_eq!(b.info().settings["flavor"], "tidb");
        assert_eq!(
            b.info().name,
            "mariadb",
            "the engine name comes from the server's version"
        );
    }
}
