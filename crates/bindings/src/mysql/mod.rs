//! `mysql://user:password@host:port/database`: MySQL and MariaDB through the
//! async `mysql_async` driver. One connection per in-flight slot, every
//! statement prepared when the session opens (server-side prepared statements,
//! binary protocol), YCSB's table layout (`usertable`, `YCSB_KEY` primary key,
//! one column per field).
//!
//! Connections set CLIENT_FOUND_ROWS, so an UPDATE that writes the value a row
//! already has still counts the row as found (MySQL otherwise reports 0
//! affected rows and the update would look like a missing key).
use yardstick_core::run::run_cold;
use crate::sql::{Dialect, Placeholder, Statements as Sql, Upsert};
use crate::url::Target;
use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Opts, OptsBuilder, Params, Row, SslOpts, Statement, Value};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;
pub mod tpcc;

mod engine;
mod session;
mod stats;

pub use session::MysqlSession;
use crate::registry::{Capabilities, Descriptor, Registered};
use yardstick_core::binding::*;
use yardstick_core::error::ServerError;

/// yardstick's own URL options (the driver's are not passed through).
pub(crate) const OPTIONS: &[&str] = &[
    "flavor",
    "upsert",
    "engine",
    "tls",
    "tls_ca",
    "tls_insecure",
    "timeout",
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

pub(crate) struct MysqlBinding {
    opts: Opts,
    server: String,
    /// Each call's limit (the URL's `timeout`).
    timeout: Duration,
    connect_timeout: Duration,
    sql: Arc<Sql>,
    key_last_in_update: bool,
    open: OpenOptions,
    /// flavor=tidb: TiDB's schema, error codes and retry policy.
    tidb: bool,
    info: EngineInfo,
}

/// A driver error in one line: the server's message and error number, or
/// the chain of causes.
pub(crate) fn error_text(e: &mysql_async::Error) -> String {
    match e {
        mysql_async::Error::Server(s) => {
            ServerError::new("MySQL error", s.code, &s.message).to_string()
        }
        other => yardstick_core::error::chain(other),
    }
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
            _ => BindingError::Unavailable(format!("{server}: {}", error_text(e))),
        },
        other => BindingError::Unavailable(format!(
            "cannot connect to {server}: {}; check that the server runs and the URL is right",
            error_text(other)
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
    /// The `engine` option, spelled as the server does; `None` when not given.
    pub(crate) engine: Option<String>,
    tls: bool,
}

pub(crate) fn endpoint(target: &Target) -> Result<Endpoint, BindingError> {
    let target = &target.with_password(&["MYSQL_PWD"], false);
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
    let engine = target.param("engine").map(engine::parse).transpose()?;
    let connect_timeout = target.connect_timeout()?;
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
    add_variables(c, SETTINGS, &mut settings).await;
    settings
}

/// The server variables `names` (those it has) added to `settings`.
pub(crate) async fn add_variables(
    c: &mut Conn,
    names: &[&str],
    settings: &mut BTreeMap<String, String>,
) {
    for name in names {
        let row: Option<(String, Option<String>)> = c
            .query_first(format!("SHOW VARIABLES LIKE '{name}'"))
            .await
            .unwrap_or(None);
        if let Some((_, Some(v))) = row {
            settings.insert((*name).to_string(), v);
        }
    }
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
        server_port: Some(3306),
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

    fn statistics(target: &Target) -> Option<Box<dyn yardstick_core::observe::Source>> {
        let ep = endpoint(target).ok()?;
        Some(Box::new(yardstick_core::observe::remote::Driven::new(
            stats::MysqlStats::new(ep.opts, ep.connect_timeout),
        )))
    }

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
            row_locks: true,
        };
        let sql = Arc::new(Sql::new(&opts.schema.table, &opts.schema.fields, dialect));
        let info = run_cold(target.setup_limit()?, async {
            let mut c = connect(&driver_opts, connect_timeout)
                .await
                .map_err(|e| connect_error(&server, &user, &db, &e))?;
            if let (Some(e), false) = (&engine, tidb) {
                engine::check_available(&mut c, &server, e).await?;
            }
            prepare_table(
                &mut c,
                &server,
                &sql,
                &create_table(&sql, engine.as_deref().unwrap_or("InnoDB"), tidb),
                opts.create,
            )
            .await?;
            let version: String = c
                .query_first("SELECT VERSION()")
                .await
                .map_err(|e| BindingError::Unavailable(format!("{server}: {}", error_text(&e))))?
                .unwrap_or_default();
            let mut settings = server_settings(&mut c).await;
            let table_engine: Option<String> = c
                .exec_first(
                    "SELECT ENGINE FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?",
                    (sql.table.clone(),),
                )
                .await
                .unwrap_or(None);
            if let Some(has) = table_engine {
                if let Some(asked) = &engine {
                    engine::check_table(&sql.table, &has, asked)?;
                }
                engine::record(&mut c, &has, &mut settings).await;
                settings.insert("table_engine".into(), has);
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
            timeout: target.op_timeout()?,
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
        .map_err(|e| BindingError::Unavailable(format!("{server}: {}", error_text(&e))))?;
    if cols.is_empty() {
        if !create {
            return Err(BindingError::Unavailable(format!(
                "table {} does not exist in {server}: run `yardstick load` with the same --db and properties first",
                sql.table
            )));
        }
        c.query_drop(create_table).await.map_err(|e| {
            BindingError::Unavailable(format!("cannot create table {}: {}", sql.table, error_text(&e)))
        })?;
        return Ok(());
    }
    crate::sql::check_columns(&sql.table, &sql.fields, &cols)
}


#[cfg(test)]
mod tests;
