//! `postgres://user:password@host:port/database`: PostgreSQL through the async
//! tokio-postgres driver. One connection per in-flight slot, every statement
//! prepared when the session opens, YCSB's JDBC table layout (`usertable`,
//! `YCSB_KEY` primary key, `FIELD0..n` TEXT) so tables loaded by YCSB work.
use crate::net::run_cold;
use crate::sql::{Dialect, Placeholder, Statements as Sql, Upsert};
use crate::url::Target;
use std::collections::BTreeMap;
use std::str::FromStr;
use std::sync::Arc;
use tokio_postgres::error::SqlState;
use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, Config, NoTls, Statement};
pub mod tpcc;

use crate::registry::{Capabilities, Descriptor, Registered};
use yardstick_core::binding::*;

/// URL options: the driver's (`connect_timeout`, `application_name`,
/// `options`, `sslmode`) and yardstick's own.
pub const OPTIONS: &[&str] = &[
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
const DRIVER_OPTIONS: &[&str] = &["connect_timeout", "application_name", "options", "sslmode"];

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
pub enum Flavor {
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

pub struct PostgresBinding {
    ep: Endpoint,
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
        _ => BindingError::Unavailable(format!("cannot connect to {server}: {e}; check that the server runs and the URL is right")),
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
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(std::time::Duration::from_secs(10));
    }
    if config.get_application_name().is_none() {
        config.application_name("yardstick");
    }
    let ca = target.param("sslrootcert");
    let insecure = target.param("tls_insecure") == Some("true");
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
        let dialect = Dialect {
            placeholder: Placeholder::Dollar,
            upsert: if flavor == Flavor::Cockroach {
                Upsert::UpsertInto
            } else {
                Upsert::OnConflict
            },
        };
        let sql = Arc::new(Sql::new(&opts.schema.table, &opts.schema.fields, dialect));
        let info = run_cold(async {
            let client = connect(&ep).await?;
            prepare_table(&client, &ep.config, &sql, opts.create, flavor, sharding).await?;
            let version: String = client
                .query_one("SHOW server_version", &[])
                .await
                .map(|r| r.get(0))
                .map_err(|e| BindingError::Unavailable(format!("{}: {e}", describe(&ep.config))))?;
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
        .map_err(|e| BindingError::Unavailable(format!("{}: {e}", describe(config))))?
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
                BindingError::Unavailable(format!("cannot create table {}: {e}", sql.table))
            })?;
        return Ok(());
    }
    crate::sql::check_columns(&sql.table, &sql.fields, &cols)
}

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
struct Live {
    client: Client,
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
        insert: client
            .prepare(match insert_mode {
                InsertMode::Insert => &sql.insert_all,
                InsertMode::Upsert => &sql.upsert_all,
            })
            .await?,
        update_one: prepare_all(
            client,
            match update_mode {
                UpdateMode::Upsert => &sql.upsert_one,
                UpdateMode::Update => &sql.update_one,
            },
        )
        .await?,
        delete: client.prepare(&sql.delete).await?,
    })
}

impl Binding for PostgresBinding {
    type Session = PostgresSession;

    async fn session(&self) -> Result<PostgresSession, BindingError> {
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
        Ok(s)
    }

    fn info(&self) -> EngineInfo {
        self.info.clone()
    }

    fn disk_bytes(&self) -> Option<u64> {
        let table = self.sql.table.clone();
        if self.flavor != Flavor::Postgres {
            return None;
        }
        run_cold(async {
            let client = connect(&self.ep).await?;
            let row = client
                .query_one(
                    "SELECT pg_total_relation_size($1::text::regclass)::BIGINT",
                    &[&table],
                )
                .await
                .map_err(|e| BindingError::Io(e.to_string()))?;
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
        Some(c) if *c == SqlState::UNIQUE_VIOLATION => Outcome::status(Status::DuplicateKey),
        Some(c)
            if *c == SqlState::T_R_SERIALIZATION_FAILURE
                || *c == SqlState::T_R_DEADLOCK_DETECTED =>
        {
            Outcome::failed(Status::Conflict, e)
        }
        Some(c) if *c == SqlState::QUERY_CANCELED || *c == SqlState::LOCK_NOT_AVAILABLE => {
            Outcome::failed(Status::Timeout, e)
        }
        Some(c)
            if *c == SqlState::ADMIN_SHUTDOWN
                || *c == SqlState::CRASH_SHUTDOWN
                || *c == SqlState::CANNOT_CONNECT_NOW =>
        {
            Outcome::failed(Status::Unavailable, e)
        }
        Some(_) => Outcome::failed(Status::Error, e),
        None => Outcome::failed(Status::Unavailable, e),
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
                    "cannot prepare statements on {}: {e}",
                    describe(&self.ep.config)
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
    async fn live(&mut self) -> Result<&mut Live, Outcome> {
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
            self.insert_mode == InsertMode::Upsert,
            self.update_mode == UpdateMode::Upsert,
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
            Ok(0) => Outcome::status(Status::NotFound),
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
                    o.rows = inserted;
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
            Ok(None) => Outcome::status(Status::NotFound),
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
            Ok(0) => Outcome::status(Status::NotFound),
            Ok(_) => Outcome::ok(0, 0),
            Err(e) => outcome_of(e),
        }
    }

    /// TRUNCATE: the table's files are replaced, no dead rows are left behind.
    async fn clear(&mut self) -> Result<Option<u64>, String> {
        let sql = format!("TRUNCATE TABLE {}", self.sql.table);
        let live = self.live().await.map_err(|o| {
            o.detail
                .map_or_else(|| o.status.name().to_string(), String::from)
        })?;
        live.client.batch_execute(&sql).await.map_err(|e| {
            e.as_db_error()
                .map_or(e.to_string(), |d| d.message().to_string())
        })?;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn server_url() -> String {
        std::env::var("YARDSTICK_PG_URL")
            .unwrap_or_else(|_| "postgres://bench:benchpw@127.0.0.1:55432/ycsb".into())
    }

    fn available() -> bool {
        crate::testing::server_available(
            "PostgreSQL",
            &server_url(),
            "scripts/services start postgres",
        )
    }

    /// A fresh database per check, so checks run in parallel without sharing rows.
    fn open_fresh(opts: &OpenOptions) -> Result<PostgresBinding, BindingError> {
        open_fresh_with(opts, "")
    }

    fn open_fresh_with(opts: &OpenOptions, query: &str) -> Result<PostgresBinding, BindingError> {
        let name = crate::net::unique_name("conf");
        let base = server_url();
        run_cold(async {
            let client = connect(&Endpoint {
                config: Config::from_str(&base).unwrap(),
                tls: None,
            })
            .await?;
            // the databases of earlier test processes, once per process
            static SWEPT: std::sync::Once = std::sync::Once::new();
            if !SWEPT.is_completed() {
                let rows = client
                    .query(
                        "SELECT datname FROM pg_database WHERE datname LIKE 'conf\\_%'",
                        &[],
                    )
                    .await
                    .map_err(|e| BindingError::Io(e.to_string()))?;
                let names = rows.iter().map(|r| r.get::<_, String>(0));
                for old in crate::testing::left_behind("conf", names) {
                    let _ = client
                        .batch_execute(&format!("DROP DATABASE IF EXISTS {old}"))
                        .await;
                }
                SWEPT.call_once(|| ());
            }
            client
                .batch_execute(&format!("CREATE DATABASE {name}"))
                .await
                .map_err(|e| BindingError::Io(e.to_string()))
        })?;
        let url = format!("{}/{name}{query}", base.rsplit_once('/').unwrap().0);
        PostgresBinding::open(&Target::parse(&url)?, opts)
    }

    yardstick_core::conformance_suite!(open_fresh, available);

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
        let open = |u: &str| {
            PostgresBinding::open(&Target::parse(u).unwrap(), &opts(true))
                .err()
                .unwrap()
                .to_string()
        };
        let wrong = url.replace("benchpw", "wrongpw");
        let e = open(&wrong);
        assert!(
            e.contains("wrong user or password") && !e.contains("wrongpw"),
            "{e}"
        );
        let e = open(&format!("{}/no_such_db", url.rsplit_once('/').unwrap().0));
        assert!(e.contains("database no_such_db does not exist"), "{e}");
        let e = open("postgres://bench:benchpw@127.0.0.1:1/ycsb");
        assert!(
            e.contains("cannot connect to PostgreSQL at 127.0.0.1:1"),
            "{e}"
        );
    }

    #[test]
    fn server_version_and_settings_are_recorded() {
        if !available() {
            return;
        }
        let b = open_fresh(&opts(true)).unwrap();
        let info = b.info();
        assert_eq!(info.name, "postgresql");
        assert!(
            info.version.starts_with(char::is_numeric),
            "{}",
            info.version
        );
        for s in [
            "shared_buffers",
            "synchronous_commit",
            "fsync",
            "wal_level",
            "default_transaction_isolation",
        ] {
            assert!(info.settings.contains_key(s), "{s} missing");
        }
        assert!(b.disk_bytes().is_some());
    }

    fn rt() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    fn batch(keys: &[&str]) -> Batch {
        let mut b = Batch::default();
        for k in keys {
            let (key, values) = b.push();
            key.extend_from_slice(k.as_bytes());
            for f in 0..3 {
                // COPY's reserved characters must survive the round trip
                values
                    .push(f)
                    .extend_from_slice(format!("{k}\t\\N\n{f}").as_bytes());
            }
        }
        b
    }

    #[test]
    fn copy_batches_insert_and_refuse_duplicates_and_upserts() {
        if !available() {
            return;
        }
        let upsert = OpenOptions {
            insert_mode: InsertMode::Upsert,
            ..opts(true)
        };
        let e = open_fresh_with(&upsert, "?batch=copy")
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("batch=copy cannot upsert"), "{e}");
        let b = open_fresh_with(&opts(true), "?batch=copy").unwrap();
        assert!(b.info().settings["batch"].starts_with("COPY"));
        rt().block_on(async {
            let mut s = b.session().await.unwrap();
            let out = s.insert_batch(&batch(&["k1", "k2", "k3"])).await;
            assert_eq!((out.status, out.rows), (Status::Ok, 3));
            let mut rec = Record::with_fields(3);
            assert_eq!(
                s.read(b"k2", Fields::All, &mut rec).await.status,
                Status::Ok
            );
            assert_eq!(rec.get(1), Some(&b"k2\t\\N\n1"[..]));
            let out = s.insert_batch(&batch(&["k4", "k1"])).await;
            assert_eq!(out.status, Status::DuplicateKey);
            // the failed COPY left the connection usable
            assert_eq!(
                s.read(b"k4", Fields::All, &mut rec).await.status,
                Status::NotFound
            );
        });
    }

    #[test]
    fn multi_row_batches_split_at_the_parameter_limit() {
        if !available() {
            return;
        }
        let b = open_fresh(&opts(true)).unwrap();
        let keys: Vec<String> = (0..20_000).map(|i| format!("key{i:05}")).collect();
        let refs: Vec<&str> = keys.iter().map(String::as_str).collect();
        rt().block_on(async {
            let mut s = b.session().await.unwrap();
            // 20,000 rows x 4 parameters is more than 65,535: two statements
            let out = s.insert_batch(&batch(&refs)).await;
            assert_eq!((out.status, out.rows), (Status::Ok, 20_000), "{out:?}");
            let mut rows = ScanRows::with_fields(3);
            s.scan(b"key19998", 10, Fields::All, &mut rows).await;
            assert_eq!(rows.len(), 2);
        });
    }

    #[test]
    fn tls_verifies_the_server_against_the_given_ca() {
        if !available() {
            return;
        }
        let ca = crate::testing::test_ca();
        let b = open_fresh_with(&opts(true), &format!("?sslrootcert={ca}")).unwrap();
        assert_eq!(b.info().settings["tls"], "true");
        let b = open_fresh_with(&opts(true), "?sslmode=require&tls_insecure=true").unwrap();
        assert_eq!(b.info().settings["tls"], "true");
        let b = open_fresh(&opts(true)).unwrap();
        assert_eq!(b.info().settings["tls"], "false");
        // the test CA is not among the system's roots
        let e = open_fresh_with(&opts(true), "?sslmode=require")
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("cannot connect to PostgreSQL"), "{e}");
        let e = open_fresh_with(&opts(true), "?sslrootcert=/no/such.pem")
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("cannot read sslrootcert=/no/such.pem"), "{e}");
    }

    #[test]
    fn flavors_change_the_dialect_the_schema_and_the_retry_policy() {
        let f = vec!["field0 TEXT".to_string()];
        assert_eq!(
            create_table("usertable", &f, Flavor::Yugabyte, Some("HASH")),
            "CREATE TABLE IF NOT EXISTS usertable (YCSB_KEY VARCHAR(255), field0 TEXT, PRIMARY KEY (YCSB_KEY HASH))"
        );
        assert!(create_table("usertable", &f, Flavor::Postgres, None)
            .contains("COLLATE \"C\" PRIMARY KEY"));
        assert!(!create_table("usertable", &f, Flavor::Cockroach, None).contains("COLLATE"));
        let t = |u: &str| Target::parse(u).unwrap();
        let url = "postgres://u:p@127.0.0.1:1/db?flavor=oracle";
        let e = PostgresBinding::open(&t(url), &opts(true))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("flavor=oracle is not known"), "{e}");
        let url = "postgres://u:p@127.0.0.1:1/db?sharding=hash";
        let e = PostgresBinding::open(&t(url), &opts(true))
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("sharding applies to flavor=yugabyte only"),
            "{e}"
        );
        if !available() {
            return;
        }
        assert_eq!(open_fresh(&opts(true)).unwrap().conflict_retries(), None);
        // the flavor's retry policy, over a PostgreSQL server that speaks the same protocol
        let b = open_fresh_with(&opts(true), "?flavor=cockroach").unwrap();
        assert_eq!(
            (b.conflict_retries(), b.info().name.as_str()),
            (Some(10), "cockroachdb")
        );
    }
}
