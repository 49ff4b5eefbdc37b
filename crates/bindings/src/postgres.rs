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
use yardstick_core::binding::*;

/// yardstick's own URL options (everything else goes to the driver).
pub const OPTIONS: &[&str] = &["connect_timeout", "application_name", "options"];

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

/// PostgreSQL's dialect: `$n` placeholders, `ON CONFLICT ... DO UPDATE` upserts.
const DIALECT: Dialect = Dialect {
    placeholder: Placeholder::Dollar,
    upsert: Upsert::OnConflict,
};

pub struct PostgresBinding {
    config: Config,
    sql: Arc<Sql>,
    opts: OpenOptions,
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

async fn connect(config: &Config) -> Result<Client, BindingError> {
    let (client, connection) = config
        .connect(NoTls)
        .await
        .map_err(|e| connect_error(config, &e))?;
    // The connection runs as a task of the current (worker) runtime.
    tokio::spawn(async move {
        let _ = connection.await;
    });
    Ok(client)
}

impl PostgresBinding {
    pub fn open(target: &Target, url: &str, opts: &OpenOptions) -> Result<Self, BindingError> {
        target.allow_only(OPTIONS)?;
        let mut config = Config::from_str(url).map_err(|e| {
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
        let sql = Arc::new(Sql::new(&opts.schema.table, &opts.schema.fields, DIALECT));
        let info = run_cold(async {
            let client = connect(&config).await?;
            prepare_table(&client, &config, &sql, opts.create).await?;
            let version: String = client
                .query_one("SHOW server_version", &[])
                .await
                .map(|r| r.get(0))
                .map_err(|e| BindingError::Unavailable(format!("{}: {e}", describe(&config))))?;
            let mut settings = BTreeMap::new();
            for name in SETTINGS {
                if let Ok(row) = client.query_one(&format!("SHOW {name}"), &[]).await {
                    settings.insert((*name).to_string(), row.get::<_, String>(0));
                }
            }
            settings.insert(
                "statements".into(),
                "prepared per session; autocommit".into(),
            );
            Ok::<_, BindingError>(EngineInfo {
                name: "postgresql".into(),
                version,
                settings,
            })
        })?;
        Ok(PostgresBinding {
            config,
            sql,
            opts: opts.clone(),
            info,
        })
    }
}

async fn prepare_table(
    client: &Client,
    config: &Config,
    sql: &Sql,
    create: bool,
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
            .batch_execute(&format!(
                "CREATE TABLE IF NOT EXISTS {} (YCSB_KEY VARCHAR(255) PRIMARY KEY, {})",
                sql.table,
                fields.join(", ")
            ))
            .await
            .map_err(|e| {
                BindingError::Unavailable(format!("cannot create table {}: {e}", sql.table))
            })?;
        return Ok(());
    }
    let missing: Vec<&String> = sql
        .fields
        .iter()
        .filter(|f| !cols.iter().any(|c| c.eq_ignore_ascii_case(f)))
        .collect();
    if !missing.is_empty() {
        return Err(BindingError::Config(format!(
            "table {} has no column {}: it was loaded with other fieldcount/fieldnameprefix; load again or use the same properties",
            sql.table,
            missing.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
        )));
    }
    Ok(())
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

pub struct PostgresSession {
    client: Client,
    st: Prepared,
    sql: Arc<Sql>,
    fields: usize,
    update_mode: UpdateMode,
    insert_mode: InsertMode,
}

async fn prepare_all(c: &Client, list: &[String]) -> Result<Vec<Statement>, tokio_postgres::Error> {
    let mut out = Vec::with_capacity(list.len());
    for s in list {
        out.push(c.prepare(s).await?);
    }
    Ok(out)
}

impl Binding for PostgresBinding {
    type Session = PostgresSession;

    async fn session(&self) -> Result<PostgresSession, BindingError> {
        let client = connect(&self.config).await?;
        let sql = &self.sql;
        let failed = |e: tokio_postgres::Error| {
            BindingError::Unavailable(format!(
                "cannot prepare statements on {}: {e}",
                describe(&self.config)
            ))
        };
        let upsert = self.opts.update_mode == UpdateMode::Upsert;
        let st = Prepared {
            read_all: client.prepare(&sql.read_all).await.map_err(failed)?,
            read_one: prepare_all(&client, &sql.read_one).await.map_err(failed)?,
            scan_all: client.prepare(&sql.scan_all).await.map_err(failed)?,
            scan_one: prepare_all(&client, &sql.scan_one).await.map_err(failed)?,
            insert: client
                .prepare(match self.opts.insert_mode {
                    InsertMode::Insert => &sql.insert_all,
                    InsertMode::Upsert => &sql.upsert_all,
                })
                .await
                .map_err(failed)?,
            update_one: prepare_all(
                &client,
                if upsert {
                    &sql.upsert_one
                } else {
                    &sql.update_one
                },
            )
            .await
            .map_err(failed)?,
            delete: client.prepare(&sql.delete).await.map_err(failed)?,
        };
        Ok(PostgresSession {
            client,
            st,
            sql: self.sql.clone(),
            fields: self.opts.schema.fields.len(),
            update_mode: self.opts.update_mode,
            insert_mode: self.opts.insert_mode,
        })
    }

    fn info(&self) -> EngineInfo {
        self.info.clone()
    }

    fn disk_bytes(&self) -> Option<u64> {
        let table = self.sql.table.clone();
        run_cold(async {
            let client = connect(&self.config).await?;
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
        Some(_) => Outcome::failed(Status::Error, e),
        None if e.is_closed() => Outcome::failed(Status::Unavailable, e),
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

impl PostgresSession {
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
        let result = match (insert, all_in_order, one) {
            (true, true, _) => self.client.execute(&self.st.insert, &params).await,
            (false, _, Some(i)) => self.client.execute(&self.st.update_one[i], &params).await,
            _ => {
                let kind = Sql::kind(
                    insert,
                    self.insert_mode == InsertMode::Upsert,
                    self.update_mode == UpdateMode::Upsert,
                );
                let sql = self.sql.write_subset(values.iter().map(|(i, _)| i), kind);
                self.client.execute(sql.as_str(), &params).await
            }
        };
        match result {
            Ok(0) => Outcome::status(Status::NotFound),
            Ok(_) => Outcome::ok(0, values.bytes()),
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
        let st = match fields {
            Fields::All => &self.st.read_all,
            Fields::One(i) => &self.st.read_one[i],
        };
        match self.client.query_opt(st, &[&key]).await {
            Ok(Some(row)) => Outcome::ok(1, copy_row(&row, 0, fields, self.fields, out)),
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
        let st = match fields {
            Fields::All => &self.st.scan_all,
            Fields::One(i) => &self.st.scan_one[i],
        };
        let limit = count.min(i64::MAX as u64) as i64;
        match self.client.query(st, &[&start, &limit]).await {
            Ok(rows) => {
                let mut bytes = 0;
                for row in &rows {
                    let key: &str = row.try_get(0).unwrap_or_default();
                    bytes += copy_row(row, 1, fields, self.fields, out.push(key.as_bytes()));
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
        match self.client.execute(&self.st.delete, &[&key]).await {
            Ok(0) => Outcome::status(Status::NotFound),
            Ok(_) => Outcome::ok(0, 0),
            Err(e) => outcome_of(e),
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
        let name = crate::net::unique_name("conf");
        let base = server_url();
        run_cold(async {
            let client = connect(&Config::from_str(&base).unwrap()).await?;
            client
                .batch_execute(&format!("CREATE DATABASE {name}"))
                .await
                .map_err(|e| BindingError::Io(e.to_string()))
        })?;
        let url = format!("{}/{name}", base.rsplit_once('/').unwrap().0);
        PostgresBinding::open(&Target::parse(&url)?, &url, opts)
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
            PostgresBinding::open(&Target::parse(u).unwrap(), u, &opts(true))
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
}
