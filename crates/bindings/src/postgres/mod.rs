//! `postgres://user:password@host:port/database`: PostgreSQL through the async
//! tokio-postgres driver. One connection per in-flight slot, every statement
//! prepared when the session opens, YCSB's JDBC table layout (`usertable`,
//! `YCSB_KEY` primary key, `FIELD0..n` TEXT) so tables loaded by YCSB work.
use yardstick_core::observe::remote::Driven;
use yardstick_core::run::run_cold;
use crate::sql::{Dialect, Placeholder, Statements as Sql, Upsert};
use crate::url::Target;
use std::collections::BTreeMap;
use std::str::FromStr;
use std::sync::Arc;
use tokio_postgres::error::SqlState;
use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, Config, NoTls, Statement};
pub mod tpcc;

mod passfile;
mod session;
mod stats;

pub use session::PostgresSession;
use crate::registry::{Capabilities, Descriptor, Registered};
use yardstick_core::binding::*;
use yardstick_core::error::ServerError;

/// URL options: the driver's (`connect_timeout`, `application_name`,
/// `options`, `sslmode`) and yardstick's own.
pub(crate) const OPTIONS: &[&str] = &[
    "timeout",
    "connect_timeout",
    "application_name",
    "options",
    "sslmode",
    "sslrootcert",
    "tls_insecure",
    "batch",
    "flavor",
    "sharding",
];

/// The options the driver parses itself.
const DRIVER_OPTIONS: &[&str] = &["application_name", "options", "sslmode"];

/// How a batch of the load phase is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BatchMode {
    /// One multi-row `INSERT ... VALUES (...), (...)` per batch.
    Values,
    /// `COPY ... FROM STDIN` (text format): insert semantics only.
    Copy,
}

/// Which database speaks the PostgreSQL protocol at the other end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flavor {
    Postgres,
    /// CockroachDB: `UPSERT INTO`, serialization failures (40001) retried by the runner.
    Cockroach,
    /// YugabyteDB YSQL: hash- or range-sharded primary key, 40001 retried by the runner.
    Yugabyte,
}

/// Connection settings shared by the binding and its sessions.
#[derive(Clone)]
pub(crate) struct Endpoint {
    pub(crate) config: Config,
    tls: Option<tokio_postgres_rustls::MakeRustlsConnect>,
}

/// Server settings recorded with every result.
const SETTINGS: &[&str] = &[
    "shared_buffers",
    "synchronous_commit",
    "fsync",
    "wal_level",
    "full_page_writes",
    "max_wal_size",
    "checkpoint_timeout",
    "default_transaction_isolation",
    "max_connections",
    "effective_cache_size",
];

/// PostgreSQL's SQL (and its flavours' upsert).
pub(crate) fn dialect(flavor: Flavor) -> Dialect {
    Dialect {
        placeholder: Placeholder::Dollar,
        upsert: if flavor == Flavor::Cockroach {
            Upsert::UpsertInto
        } else {
            Upsert::OnConflict
        },
        row_locks: true,
    }
}

pub(crate) struct PostgresBinding {
    ep: Endpoint,
    /// Each call's limit (the URL's `timeout`).
    timeout: std::time::Duration,
    /// The limit on a sizing call on a connection of its own.
    side_limit: std::time::Duration,
    sql: Arc<Sql>,
    opts: OpenOptions,
    batch: BatchMode,
    flavor: Flavor,
    info: EngineInfo,
}

fn describe(config: &Config) -> String {
    let host = config
        .get_hosts()
        .first()
        .map(|h| match h {
            tokio_postgres::config::Host::Tcp(s) => s.clone(),
            tokio_postgres::config::Host::Unix(p) => p.display().to_string(),
        })
        .unwrap_or_else(|| "localhost".into());
    let port = config.get_ports().first().copied().unwrap_or(5432);
    format!("PostgreSQL at {host}:{port}")
}

/// A driver error in one line: the server's message, detail and SQLSTATE, or
/// the chain of causes (the driver's own text is only "db error").
pub(crate) fn error_text(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => {
            let message = match db.detail() {
                Some(d) => format!("{}: {d}", db.message()),
                None => db.message().to_string(),
            };
            ServerError::new("SQLSTATE", db.code().code(), message).to_string()
        }
        None => yardstick_core::error::chain(e),
    }
}

/// Turns a connection failure into one line naming the problem and the fix.
fn connect_error(config: &Config, e: &tokio_postgres::Error) -> BindingError {
    let server = describe(config);
    let user = config.get_user().unwrap_or("?");
    let db = config.get_dbname().unwrap_or(user);
    match e.code() {
        Some(c) if *c == SqlState::INVALID_PASSWORD || *c == SqlState::INVALID_AUTHORIZATION_SPECIFICATION => {
            BindingError::Unavailable(format!("{server} refused user {user}: wrong user or password; fix the credentials in --db"))
        }
        Some(c) if *c == SqlState::INVALID_CATALOG_NAME => {
            BindingError::Unavailable(format!("database {db} does not exist on {server}: create it (CREATE DATABASE {db}) or name another in --db"))
        }
        Some(c) if *c == SqlState::TOO_MANY_CONNECTIONS => BindingError::Unavailable(format!(
            "{server} has no free connections: raise max_connections or lower --threads x --concurrency"
        )),
        _ if error_text(e).contains("password missing") => BindingError::Unavailable(format!(
            "{server} asks user {user} for a password and none was given: put it in PGPASSWORD, PGPASSFILE, YARDSTICK_PASSWORD or a --password-file (or the URL)"
        )),
        _ => BindingError::Unavailable(format!("cannot connect to {server}: {}; check that the server runs and the URL is right", error_text(e))),
    }
}

/// The driver configuration and TLS of a `postgres://` URL (the YCSB binding's
/// options are accepted; TPC-C uses the same connection code).
/// The server settings recorded with every result (those it has).
pub(crate) async fn server_settings(client: &Client) -> BTreeMap<String, String> {
    let mut settings = BTreeMap::new();
    for name in SETTINGS {
        if let Ok(row) = client.query_one(&format!("SHOW {name}"), &[]).await {
            settings.insert((*name).to_string(), row.get::<_, String>(0));
        }
    }
    settings
}

pub(crate) fn endpoint(target: &Target) -> Result<Endpoint, BindingError> {
    let target = &target.with_password(&["PGPASSWORD"], false);
    let url = target.url.as_str();
    crate::net::use_ring_for_tls();
    target.allow_only(OPTIONS)?;
    // the driver parses the URL with only its own options
    let mut driver_url = url.split('?').next().unwrap_or(url).to_string();
    let driver_params: Vec<String> = target
        .params
        .iter()
        .filter(|(k, _)| DRIVER_OPTIONS.contains(&k.as_str()))
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    if !driver_params.is_empty() {
        driver_url.push('?');
        driver_url.push_str(&driver_params.join("&"));
    }
    let mut config = Config::from_str(&driver_url).map_err(|e| {
        BindingError::Config(format!(
            "{} is not a PostgreSQL URL ({e}); use postgres://user:password@host:port/database",
            yardstick_core::result::redact_url(url)
        ))
    })?;
    config.connect_timeout(target.connect_timeout()?);
    if config.get_password().is_none() {
        // no password in the URL or a variable: libpq's password file, as psql reads it
        let host = match config.get_hosts().first() {
            Some(tokio_postgres::config::Host::Tcp(h)) => h.clone(),
            _ => "localhost".into(),
        };
        let port = config.get_ports().first().copied().unwrap_or(5432);
        let user = config.get_user().unwrap_or("").to_string();
        let db = config.get_dbname().unwrap_or(&user).to_string();
        if let Some(pw) = passfile::lookup(&host, port, &db, &user) {
            yardstick_core::result::redact::register(&pw);
            config.password(pw);
        }
    }
    if config.get_application_name().is_none() {
        config.application_name("yardstick");
    }
    let ca = target.param("sslrootcert");
    let insecure = target.flag("tls_insecure")? == Some(true);
    let wants_tls = ca.is_some()
        || insecure
        || matches!(target.param("sslmode"), Some("require") | Some("prefer"));
    if (ca.is_some() || insecure) && target.param("sslmode") == Some("disable") {
        return Err(BindingError::Config(
            "sslrootcert and tls_insecure need TLS, but sslmode=disable: use sslmode=require"
                .into(),
        ));
    }
    if ca.is_some() || insecure {
        config.ssl_mode(tokio_postgres::config::SslMode::Require);
    }
    let tls = if wants_tls {
        Some(tokio_postgres_rustls::MakeRustlsConnect::new(
            crate::net::tls_config("sslrootcert", ca, insecure)?,
        ))
    } else {
        None
    };
    Ok(Endpoint { config, tls })
}

pub(crate) async fn connect(ep: &Endpoint) -> Result<Client, BindingError> {
    let config = &ep.config;
    // The connection runs as a task of the current (worker) runtime.
    let client = match &ep.tls {
        None => {
            let (client, connection) = config
                .connect(NoTls)
                .await
                .map_err(|e| connect_error(config, &e))?;
            tokio::spawn(async move {
                let _ = connection.await;
            });
            client
        }
        Some(tls) => {
            let (client, connection) = config
                .connect(tls.clone())
                .await
                .map_err(|e| connect_error(config, &e))?;
            tokio::spawn(async move {
                let _ = connection.await;
            });
            client
        }
    };
    Ok(client)
}

impl Registered for PostgresBinding {
    const DESCRIPTOR: Descriptor = Descriptor {
        schemes: &["postgres", "postgresql"],
        server_port: Some(5432),
        flavours: &["postgres", "cockroach", "yugabyte"],
        description: "PostgreSQL (tokio-postgres): prepared statements, one connection per in-flight operation",
        example: "postgres://user:password@127.0.0.1:5432/ycsb",
        docs: "docs/bindings/postgres.md",
        options: OPTIONS,
        capabilities: Capabilities {
            batch_load: true,
            scan: true,
            tpcc: Some(tpcc::SUPPORT),
        },
    };

    fn statistics(target: &Target) -> Option<Box<dyn yardstick_core::observe::Source>> {
        let flavor = target.param("flavor").unwrap_or("postgres");
        let ep = endpoint(target).ok()?;
        matches!(flavor, "postgres" | "postgresql")
            .then(|| Box::new(Driven::new(stats::PgStats::new(ep))) as Box<dyn yardstick_core::observe::Source>)
    }

    fn open(target: &Target, opts: &OpenOptions) -> Result<Self, BindingError> {
        let ep = endpoint(target)?;
        let flavor = match target.param("flavor").unwrap_or("postgres") {
            "postgres" | "postgresql" => Flavor::Postgres,
            "cockroach" | "cockroachdb" => Flavor::Cockroach,
            "yugabyte" | "yugabytedb" => Flavor::Yugabyte,
            other => {
                return Err(BindingError::Config(format!(
                    "flavor={other} is not known: use postgres, cockroach or yugabyte"
                )))
            }
        };
        let sharding = match (flavor, target.param("sharding")) {
            (Flavor::Yugabyte, None | Some("hash")) => Some("HASH"),
            (Flavor::Yugabyte, Some("range")) => Some("ASC"),
            (Flavor::Yugabyte, Some(other)) => {
                return Err(BindingError::Config(format!(
                    "sharding={other} is not known: use hash or range"
                )))
            }
            (_, None) => None,
            (_, Some(_)) => {
                return Err(BindingError::Config(
                    "sharding applies to flavor=yugabyte only".into(),
                ))
            }
        };
        let batch = match target.param("batch").unwrap_or("values") {
            "values" => BatchMode::Values,
            "copy" => BatchMode::Copy,
            other => {
                return Err(BindingError::Config(format!(
                    "batch={other} is not known: use values (multi-row INSERT) or copy (COPY FROM STDIN)"
                )))
            }
        };
        if batch == BatchMode::Copy && opts.insert_mode == InsertMode::Upsert {
            return Err(BindingError::Unsupported(
                "batch=copy cannot upsert (COPY only inserts): use insert.semantics=insert or batch=values".into(),
            ));
        }
        let dialect = dialect(flavor);
        let sql = Arc::new(Sql::new(&opts.schema.table, &opts.schema.fields, dialect));
        let info = run_cold(target.setup_limit()?, async {
            let client = connect(&ep).await?;
            prepare_table(&client, &ep.config, &sql, opts.create, flavor, sharding).await?;
            let version: String = client
                .query_one("SHOW server_version", &[])
                .await
                .map(|r| r.get(0))
                .map_err(|e| BindingError::Unavailable(format!("{}: {}", describe(&ep.config), error_text(&e))))?;
            let mut settings = server_settings(&client).await;
            if let Ok(row) = client
                .query_one(
                    "SELECT ssl::text FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
                    &[],
                )
                .await
            {
                settings.insert("tls".into(), row.get::<_, String>(0));
            }
            settings.insert(
                "statements".into(),
                "prepared per session; autocommit".into(),
            );
            settings.insert(
                "batch".into(),
                match batch {
                    BatchMode::Values => "multi-row INSERT ... VALUES",
                    BatchMode::Copy => "COPY ... FROM STDIN (text)",
                }
                .into(),
            );
            settings.insert("flavor".into(), format!("{flavor:?}").to_ascii_lowercase());
            if let Some(s) = sharding {
                settings.insert("primary_key_sharding".into(), s.to_ascii_lowercase());
            }
            let name = match flavor {
                Flavor::Postgres => "postgresql",
                Flavor::Cockroach => "cockroachdb",
                Flavor::Yugabyte => "yugabytedb",
            };
            Ok::<_, BindingError>(EngineInfo {
                name: name.into(),
                version,
                settings,
            })
        })?;
        Ok(PostgresBinding {
            ep,
            timeout: target.op_timeout()?,
            side_limit: target.side_limit()?,
            sql,
            opts: opts.clone(),
            batch,
            flavor,
            info,
        })
    }
}

/// YCSB's table. Keys compare bytewise (`COLLATE "C"` on PostgreSQL) so scans
/// order as on every other binding; YugabyteDB shards the key by hash or range.
fn create_table(table: &str, fields: &[String], flavor: Flavor, sharding: Option<&str>) -> String {
    match (flavor, sharding) {
        (_, Some(s)) => format!(
            "CREATE TABLE IF NOT EXISTS {table} (YCSB_KEY VARCHAR(255), {}, PRIMARY KEY (YCSB_KEY {s}))",
            fields.join(", ")
        ),
        // CockroachDB compares strings bytewise already
        (Flavor::Cockroach, None) => format!(
            "CREATE TABLE IF NOT EXISTS {table} (YCSB_KEY VARCHAR(255) PRIMARY KEY, {})",
            fields.join(", ")
        ),
        _ => format!(
            "CREATE TABLE IF NOT EXISTS {table} (YCSB_KEY VARCHAR(255) COLLATE \"C\" PRIMARY KEY, {})",
            fields.join(", ")
        ),
    }
}

async fn prepare_table(
    client: &Client,
    config: &Config,
    sql: &Sql,
    create: bool,
    flavor: Flavor,
    sharding: Option<&str>,
) -> Result<(), BindingError> {
    let t = sql.table.to_ascii_lowercase();
    let cols: Vec<String> = client
        .query("SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1", &[&t])
        .await
        .map_err(|e| BindingError::Unavailable(format!("{}: {}", describe(config), error_text(&e))))?
        .iter()
        .map(|r| r.get::<_, String>(0))
        .collect();
    if cols.is_empty() {
        if !create {
            return Err(BindingError::Unavailable(format!(
                "table {} does not exist in {}: run `yardstick load` with the same --db and properties first",
                sql.table,
                describe(config)
            )));
        }
        let fields: Vec<String> = sql.fields.iter().map(|f| format!("{f} TEXT")).collect();
        client
            .batch_execute(&create_table(&sql.table, &fields, flavor, sharding))
            .await
            .map_err(|e| {
                BindingError::Unavailable(format!("cannot create table {}: {}", sql.table, error_text(&e)))
            })?;
        return Ok(());
    }
    crate::sql::check_columns(&sql.table, &sql.fields, &cols)
}

#[cfg(test)]
mod tests;
