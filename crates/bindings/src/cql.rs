//! `cql://[user:password@]host:port[,host:port...]/keyspace`: Apache Cassandra,
//! ScyllaDB and YugabyteDB YCQL through the `scylla` driver (token- and
//! shard-aware routing of prepared statements, one driver session per worker
//! thread shared by that thread's in-flight operations).
//!
//! YCSB's table: `usertable (y_id text PRIMARY KEY, field0 blob, ...)`. In CQL
//! a plain INSERT or UPDATE is an upsert, so `insert` semantics use
//! `INSERT ... IF NOT EXISTS` and `update` semantics `UPDATE ... IF EXISTS`
//! (lightweight transactions: a Paxos round each); `upsert` semantics use the
//! plain statements, which is what YCSB's own binding measures. A delete is
//! `DELETE ... IF EXISTS` so a missing key reads as `NotFound`. A scan is YCSB's:
//! `WHERE token(y_id) >= token(?) LIMIT ?`, in token order (key order only
//! under ByteOrderedPartitioner).
use crate::net::run_cold;
use crate::url::Target;
use scylla::client::session::Session as CqlSession;
use scylla::client::session_builder::SessionBuilder;
use scylla::errors::{ExecutionError, RequestAttemptError};
use scylla::statement::batch::{Batch as CqlBatch, BatchType};
use scylla::statement::prepared::PreparedStatement;
use scylla::statement::{Consistency, SerialConsistency};
use scylla::value::{CqlValue, Row};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::thread::ThreadId;
use std::time::Duration;
use crate::registry::{Capabilities, Descriptor, Registered};
use yardstick_core::binding::*;

/// yardstick's own URL options.
pub const OPTIONS: &[&str] = &[
    "consistency",
    "serial_consistency",
    "replication",
    "connect_timeout",
    "tls_ca",
    "tls_insecure",
];

struct Statements {
    read_all: PreparedStatement,
    read_one: Vec<PreparedStatement>,
    scan_all: PreparedStatement,
    scan_one: Vec<PreparedStatement>,
    insert: PreparedStatement,
    update_one: Vec<PreparedStatement>,
    delete: PreparedStatement,
    /// Whether writes are lightweight transactions (their rows say `[applied]`).
    insert_lwt: bool,
    update_lwt: bool,
}

/// A driver session with its prepared statements, shared by one thread's slots.
type Shared = (CqlSession, Statements);

struct Inner {
    nodes: Vec<String>,
    user: Option<(String, String)>,
    keyspace: String,
    table: String,
    fields: Vec<String>,
    consistency: Consistency,
    serial: SerialConsistency,
    connect_timeout: Duration,
    tls: Option<Arc<rustls::ClientConfig>>,
    insert_mode: InsertMode,
    update_mode: UpdateMode,
    /// One driver session (a pool per node) per worker thread.
    sessions: Mutex<Vec<(ThreadId, Arc<Shared>)>>,
}

pub struct CqlBinding {
    inner: Arc<Inner>,
    info: EngineInfo,
}

fn parse_consistency(v: &str) -> Option<Consistency> {
    Some(match v.to_ascii_lowercase().as_str() {
        "any" => Consistency::Any,
        "one" => Consistency::One,
        "two" => Consistency::Two,
        "three" => Consistency::Three,
        "quorum" => Consistency::Quorum,
        "all" => Consistency::All,
        "local_quorum" => Consistency::LocalQuorum,
        "each_quorum" => Consistency::EachQuorum,
        "local_one" => Consistency::LocalOne,
        _ => return None,
    })
}

fn valid_name(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

async fn connect(inner: &Inner, keyspace: bool) -> Result<CqlSession, BindingError> {
    let mut b = SessionBuilder::new()
        .known_nodes(&inner.nodes)
        .connection_timeout(inner.connect_timeout);
    if let Some((u, p)) = &inner.user {
        b = b.user(u, p);
    }
    if let Some(tls) = &inner.tls {
        b = b.tls_context(Some(tls.clone()));
    }
    if keyspace {
        b = b.use_keyspace(&inner.keyspace, false);
    }
    b.build().await.map_err(|e| {
        let text = e.to_string();
        let nodes = inner.nodes.join(",");
        if text.contains("Authentication") || text.contains("credentials") {
            BindingError::Unavailable(format!(
                "Cassandra at {nodes} refused the login: wrong user or password; fix the credentials in --db"
            ))
        } else if text.contains("Keyspace") && text.contains("does not exist") {
            BindingError::Unavailable(format!(
                "keyspace {} does not exist at {nodes}: run `yardstick load` with the same --db first",
                inner.keyspace
            ))
        } else {
            BindingError::Unavailable(format!(
                "cannot connect to Cassandra at {nodes}: {text}; check that the nodes run and the URL is right"
            ))
        }
    })
}

async fn prepare(s: &CqlSession, inner: &Inner) -> Result<Statements, BindingError> {
    let t = &inner.table;
    let cols = inner.fields.join(", ");
    let marks = vec!["?"; inner.fields.len()].join(", ");
    let insert_lwt = inner.insert_mode == InsertMode::Insert;
    let update_lwt = inner.update_mode == UpdateMode::Update;
    let prep = |text: String| async move {
        let mut st = s
            .prepare(text.clone())
            .await
            .map_err(|e| BindingError::Unavailable(format!("cannot prepare `{text}`: {e}")))?;
        st.set_consistency(inner.consistency);
        st.set_serial_consistency(Some(inner.serial));
        Ok::<_, BindingError>(st)
    };
    let mut read_one = Vec::new();
    let mut scan_one = Vec::new();
    let mut update_one = Vec::new();
    for f in &inner.fields {
        read_one.push(prep(format!("SELECT {f} FROM {t} WHERE y_id = ?")).await?);
        scan_one.push(
            prep(format!(
                "SELECT y_id, {f} FROM {t} WHERE token(y_id) >= token(?) LIMIT ?"
            ))
            .await?,
        );
        update_one.push(
            prep(format!(
                "UPDATE {t} SET {f} = ? WHERE y_id = ?{}",
                if update_lwt { " IF EXISTS" } else { "" }
            ))
            .await?,
        );
    }
    Ok(Statements {
        read_all: prep(format!("SELECT {cols} FROM {t} WHERE y_id = ?")).await?,
        read_one,
        scan_all: prep(format!(
            "SELECT y_id, {cols} FROM {t} WHERE token(y_id) >= token(?) LIMIT ?"
        ))
        .await?,
        scan_one,
        insert: prep(format!(
            "INSERT INTO {t} (y_id, {cols}) VALUES (?, {marks}){}",
            if insert_lwt { " IF NOT EXISTS" } else { "" }
        ))
        .await?,
        update_one,
        delete: prep(format!("DELETE FROM {t} WHERE y_id = ? IF EXISTS")).await?,
        insert_lwt,
        update_lwt,
    })
}

impl Registered for CqlBinding {
    const DESCRIPTOR: Descriptor = Descriptor {
        schemes: &["cql"],
        flavours: &[],
        description: "Cassandra / ScyllaDB / YugabyteDB YCQL (scylla driver): prepared statements, token-aware routing, LWT for insert/update semantics, unlogged batches",
        example: "cql://127.0.0.1:9042/ycsb?consistency=quorum&replication=3",
        docs: "docs/bindings/cql.md",
        options: OPTIONS,
        capabilities: Capabilities {
            batch_load: true,
            scan: true,
            tpcc: None,
        },
    };

    fn open(target: &Target, opts: &OpenOptions) -> Result<Self, BindingError> {
        crate::net::use_ring_for_tls();
        target.allow_only(OPTIONS)?;
        let (authority, path) = target
            .rest
            .split_once('/')
            .unwrap_or((target.rest.as_str(), ""));
        let keyspace = path.trim_matches('/').to_string();
        if !valid_name(&keyspace) {
            return Err(BindingError::Config(
                "the cql URL names no keyspace: use cql://host:9042/keyspace (letters, digits, _)"
                    .into(),
            ));
        }
        let (user, hosts) = match authority.rsplit_once('@') {
            Some((u, h)) => {
                let (name, pw) = u.split_once(':').unwrap_or((u, ""));
                (Some((name.to_string(), pw.to_string())), h)
            }
            None => (None, authority),
        };
        let nodes: Vec<String> = hosts
            .split(',')
            .filter(|h| !h.is_empty())
            .map(|h| {
                if h.contains(':') {
                    h.to_string()
                } else {
                    format!("{h}:9042")
                }
            })
            .collect();
        if nodes.is_empty() {
            return Err(BindingError::Config(
                "cql:// needs a node: cql://host:9042/keyspace".into(),
            ));
        }
        let consistency = match target.param("consistency") {
            None => Consistency::One,
            Some(v) => parse_consistency(v).ok_or_else(|| {
                BindingError::Config(format!(
                    "consistency={v} is not a CQL consistency level: use one, quorum, local_quorum, all, ..."
                ))
            })?,
        };
        let serial = match target.param("serial_consistency").unwrap_or("serial") {
            "serial" => SerialConsistency::Serial,
            "local_serial" => SerialConsistency::LocalSerial,
            other => {
                return Err(BindingError::Config(format!(
                    "serial_consistency={other} is not known: use serial or local_serial"
                )))
            }
        };
        let replication: u32 = match target.param("replication") {
            None => 1,
            Some(v) => v.parse().ok().filter(|n| *n >= 1).ok_or_else(|| {
                BindingError::Config(format!(
                    "replication={v} is not a replication factor (a whole number >= 1)"
                ))
            })?,
        };
        let connect_timeout = target.duration("connect_timeout", 10)?;
        let tls = match (target.param("tls_ca"), target.param("tls_insecure")) {
            (None, None) => None,
            (ca, insecure) => Some(Arc::new(crate::net::tls_config(
                "tls_ca",
                ca,
                insecure == Some("true"),
            )?)),
        };
        for name in std::iter::once(&opts.schema.table).chain(&opts.schema.fields) {
            if !valid_name(name) {
                return Err(BindingError::Config(format!(
                    "{name} is not a CQL identifier: use letters, digits and _ in table and field names"
                )));
            }
        }
        let inner = Inner {
            nodes,
            user,
            keyspace,
            table: opts.schema.table.clone(),
            fields: opts.schema.fields.clone(),
            consistency,
            serial,
            connect_timeout,
            tls,
            insert_mode: opts.insert_mode,
            update_mode: opts.update_mode,
            sessions: Mutex::new(Vec::new()),
        };
        let (version, partitioner, rf) = run_cold(async {
            let s = connect(&inner, false).await?;
            let fail = |e: ExecutionError| BindingError::Unavailable(format!("Cassandra: {e}"));
            let ks = &inner.keyspace;
            let exists = s
                .query_unpaged(
                    "SELECT replication FROM system_schema.keyspaces WHERE keyspace_name = ?",
                    (ks.as_str(),),
                )
                .await
                .map_err(fail)?
                .into_rows_result()
                .map(|r| r.rows_num() > 0)
                .unwrap_or(false);
            if !exists && !opts.create {
                return Err(BindingError::Unavailable(format!(
                    "keyspace {ks} does not exist at {}: run `yardstick load` with the same --db first",
                    inner.nodes.join(",")
                )));
            }
            let cols: Vec<String> = inner.fields.iter().map(|f| format!("{f} blob")).collect();
            if opts.create {
                s.query_unpaged(
                    format!("CREATE KEYSPACE IF NOT EXISTS {ks} WITH replication = {{'class': 'SimpleStrategy', 'replication_factor': {replication}}}"),
                    (),
                )
                .await
                .map_err(fail)?;
                s.query_unpaged(
                    format!(
                        "CREATE TABLE IF NOT EXISTS {ks}.{} (y_id text PRIMARY KEY, {})",
                        inner.table,
                        cols.join(", ")
                    ),
                    (),
                )
                .await
                .map_err(fail)?;
                s.await_schema_agreement().await.map_err(|e| {
                    BindingError::Unavailable(format!("Cassandra schema agreement: {e}"))
                })?;
            } else {
                let n = s
                    .query_unpaged(
                        "SELECT column_name FROM system_schema.columns WHERE keyspace_name = ? AND table_name = ?",
                        (ks.as_str(), inner.table.to_ascii_lowercase()),
                    )
                    .await
                    .map_err(fail)?
                    .into_rows_result()
                    .map(|r| r.rows_num())
                    .unwrap_or(0);
                if n == 0 {
                    return Err(BindingError::Unavailable(format!(
                        "table {ks}.{} does not exist: run `yardstick load` with the same --db and properties first",
                        inner.table
                    )));
                }
            }
            let local = s
                .query_unpaged("SELECT release_version, partitioner FROM system.local", ())
                .await
                .map_err(fail)?
                .into_rows_result()
                .ok()
                .and_then(|r| r.maybe_first_row::<(String, String)>().ok().flatten())
                .unwrap_or_default();
            let rf = s
                .query_unpaged(
                    "SELECT replication FROM system_schema.keyspaces WHERE keyspace_name = ?",
                    (ks.as_str(),),
                )
                .await
                .map_err(fail)?
                .into_rows_result()
                .ok()
                .and_then(|r| {
                    r.maybe_first_row::<(BTreeMap<String, String>,)>()
                        .ok()
                        .flatten()
                })
                .and_then(|(m,)| m.get("replication_factor").cloned())
                .unwrap_or_else(|| "unknown".into());
            Ok((local.0, local.1, rf))
        })?;
        let mut settings = BTreeMap::new();
        settings.insert("consistency".into(), format!("{consistency:?}"));
        settings.insert("serial_consistency".into(), format!("{serial:?}"));
        settings.insert("replication_factor".into(), rf);
        settings.insert("partitioner".into(), partitioner);
        settings.insert("tls".into(), inner.tls.is_some().to_string());
        settings.insert(
            "scan_order".into(),
            "token order (token(y_id) >= token(start))".into(),
        );
        settings.insert(
            "writes".into(),
            format!(
                "insert: {}; update: {}",
                if inner.insert_mode == InsertMode::Insert {
                    "INSERT IF NOT EXISTS (LWT)"
                } else {
                    "INSERT"
                },
                if inner.update_mode == UpdateMode::Update {
                    "UPDATE IF EXISTS (LWT)"
                } else {
                    "UPDATE"
                }
            ),
        );
        Ok(CqlBinding {
            inner: Arc::new(inner),
            info: EngineInfo {
                name: "cassandra".into(),
                version,
                settings,
            },
        })
    }
}

impl Binding for CqlBinding {
    type Session = CqlSessionHandle;

    async fn session(&self) -> Result<CqlSessionHandle, BindingError> {
        let me = std::thread::current().id();
        let existing = self
            .inner
            .sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .find(|(t, _)| *t == me)
            .map(|(_, s)| s.clone());
        let shared = match existing {
            Some(s) => s,
            None => {
                // created on this worker's runtime, which runs its connections
                let s = connect(&self.inner, true).await?;
                let st = prepare(&s, &self.inner).await?;
                let shared = Arc::new((s, st));
                self.inner
                    .sessions
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push((me, shared.clone()));
                shared
            }
        };
        Ok(CqlSessionHandle {
            shared,
            fields: self.inner.fields.len(),
        })
    }

    fn info(&self) -> EngineInfo {
        self.info.clone()
    }
}

/// A slot's handle on its thread's driver session.
pub struct CqlSessionHandle {
    shared: Arc<Shared>,
    fields: usize,
}

fn status_of(e: &ExecutionError) -> Status {
    use scylla::errors::DbError;
    match e {
        ExecutionError::RequestTimeout(_) => Status::Timeout,
        ExecutionError::ConnectionPoolError(_) | ExecutionError::EmptyPlan => Status::Unavailable,
        ExecutionError::LastAttemptError(RequestAttemptError::DbError(db, _)) => match db {
            DbError::ReadTimeout { .. } | DbError::WriteTimeout { .. } => Status::Timeout,
            DbError::Unavailable { .. } | DbError::Overloaded | DbError::IsBootstrapping => {
                Status::Unavailable
            }
            _ => Status::Error,
        },
        ExecutionError::LastAttemptError(RequestAttemptError::BrokenConnectionError(_)) => {
            Status::Unavailable
        }
        _ => Status::Error,
    }
}

fn failed(e: ExecutionError) -> Outcome {
    Outcome::failed(status_of(&e), e)
}

/// Whether a lightweight transaction applied (its first column, `[applied]`).
fn applied(r: scylla::response::query_result::QueryResult) -> Result<bool, Outcome> {
    let rows = r
        .into_rows_result()
        .map_err(|e| Outcome::failed(Status::Error, e))?;
    let row: Option<Row> = rows
        .maybe_first_row::<Row>()
        .map_err(|e| Outcome::failed(Status::Error, e))?;
    Ok(matches!(
        row.and_then(|r| r.columns.into_iter().next().flatten()),
        Some(CqlValue::Boolean(true))
    ))
}

fn copy_columns(row: Row, first: usize, fields: Fields, total: usize, out: &mut Record) -> u64 {
    let mut bytes = 0;
    let mut cols = row.columns.into_iter().skip(first);
    for (_, field) in fields.columns(total) {
        if let Some(Some(CqlValue::Blob(v))) = cols.next() {
            bytes += v.len() as u64;
            out.set(field, &v);
        }
    }
    bytes
}

/// The bound values of an INSERT: the key, then every field (unset ones null).
fn insert_row(key: &str, values: &WriteSet, fields: usize) -> Vec<Option<CqlValue>> {
    let mut row: Vec<Option<CqlValue>> = Vec::with_capacity(fields + 1);
    row.push(Some(CqlValue::Text(key.to_string())));
    row.resize(fields + 1, None);
    for (i, v) in values.iter() {
        row[i + 1] = Some(CqlValue::Blob(v.to_vec()));
    }
    row
}

fn key_text(key: &[u8]) -> Result<&str, Outcome> {
    std::str::from_utf8(key)
        .map_err(|_| Outcome::failed(Status::Error, "CQL keys are text: the key is not UTF-8"))
}

impl Session for CqlSessionHandle {
    async fn read(&mut self, key: &[u8], fields: Fields, out: &mut Record) -> Outcome {
        let key = match key_text(key) {
            Ok(k) => k,
            Err(o) => return o,
        };
        let (s, st) = &*self.shared;
        let stmt = match fields {
            Fields::All => &st.read_all,
            Fields::One(i) => &st.read_one[i],
        };
        let r = match s.execute_unpaged(stmt, (key,)).await {
            Ok(r) => r,
            Err(e) => return failed(e),
        };
        match r.into_rows_result().map(|r| r.maybe_first_row::<Row>()) {
            Ok(Ok(Some(row))) => Outcome::ok(1, copy_columns(row, 0, fields, self.fields, out)),
            Ok(Ok(None)) => Outcome::status(Status::NotFound),
            Ok(Err(e)) => Outcome::failed(Status::Error, e),
            Err(e) => Outcome::failed(Status::Error, e),
        }
    }

    async fn scan(
        &mut self,
        start: &[u8],
        count: u64,
        fields: Fields,
        out: &mut ScanRows,
    ) -> Outcome {
        let start = match key_text(start) {
            Ok(k) => k,
            Err(o) => return o,
        };
        let (s, st) = &*self.shared;
        let stmt = match fields {
            Fields::All => &st.scan_all,
            Fields::One(i) => &st.scan_one[i],
        };
        let limit = count.min(i32::MAX as u64) as i32;
        let r = match s.execute_unpaged(stmt, (start, limit)).await {
            Ok(r) => r,
            Err(e) => return failed(e),
        };
        let rows = match r.into_rows_result() {
            Ok(r) => r,
            Err(e) => return Outcome::failed(Status::Error, e),
        };
        let iter = match rows.rows::<Row>() {
            Ok(i) => i,
            Err(e) => return Outcome::failed(Status::Error, e),
        };
        let (mut n, mut bytes) = (0, 0);
        for row in iter {
            let row = match row {
                Ok(r) => r,
                Err(e) => return Outcome::failed(Status::Error, e),
            };
            let key = match row.columns.first() {
                Some(Some(CqlValue::Text(k))) => k.clone(),
                _ => String::new(),
            };
            bytes += copy_columns(row, 1, fields, self.fields, out.push(key.as_bytes()));
            n += 1;
        }
        Outcome::ok(n, bytes)
    }

    async fn update(&mut self, key: &[u8], values: &WriteSet) -> Outcome {
        let key = match key_text(key) {
            Ok(k) => k,
            Err(o) => return o,
        };
        let (s, st) = &*self.shared;
        // one statement per field written; YCSB's updates write one field
        for (i, v) in values.iter() {
            match s.execute_unpaged(&st.update_one[i], (v, key)).await {
                Ok(r) if st.update_lwt => match applied(r) {
                    Ok(true) => {}
                    Ok(false) => return Outcome::status(Status::NotFound),
                    Err(o) => return o,
                },
                Ok(_) => {}
                Err(e) => return failed(e),
            }
        }
        Outcome::ok(0, values.bytes())
    }

    async fn insert(&mut self, key: &[u8], values: &WriteSet) -> Outcome {
        let key = match key_text(key) {
            Ok(k) => k,
            Err(o) => return o,
        };
        let (s, st) = &*self.shared;
        let row = insert_row(key, values, self.fields);
        match s.execute_unpaged(&st.insert, row).await {
            Ok(r) if st.insert_lwt => match applied(r) {
                Ok(true) => Outcome::ok(0, values.bytes()),
                Ok(false) => Outcome::status(Status::DuplicateKey),
                Err(o) => o,
            },
            Ok(_) => Outcome::ok(0, values.bytes()),
            Err(e) => failed(e),
        }
    }

    async fn delete(&mut self, key: &[u8]) -> Outcome {
        let key = match key_text(key) {
            Ok(k) => k,
            Err(o) => return o,
        };
        let (s, st) = &*self.shared;
        match s.execute_unpaged(&st.delete, (key,)).await {
            Ok(r) => match applied(r) {
                Ok(true) => Outcome::ok(0, 0),
                Ok(false) => Outcome::status(Status::NotFound),
                Err(o) => o,
            },
            Err(e) => failed(e),
        }
    }

    /// Upserts go out as one unlogged batch (YCSB-style bulk load); inserts
    /// with `insert` semantics are lightweight transactions, which a
    /// multi-partition batch cannot hold, so they go out concurrently instead.
    async fn insert_batch(&mut self, batch: &Batch) -> Outcome {
        if batch.is_empty() {
            return Outcome::ok(0, 0);
        }
        let (s, st) = &*self.shared;
        let mut rows: Vec<Vec<Option<CqlValue>>> = Vec::with_capacity(batch.len());
        for (key, values) in batch.rows() {
            let key = match key_text(key) {
                Ok(k) => k,
                Err(o) => return o,
            };
            rows.push(insert_row(key, values, self.fields));
        }
        if st.insert_lwt {
            let results = futures_util::future::join_all(
                rows.iter().map(|r| s.execute_unpaged(&st.insert, r)),
            )
            .await;
            let mut inserted = 0;
            let mut first: Option<Outcome> = None;
            for r in results {
                let o = match r {
                    Ok(r) => match applied(r) {
                        Ok(true) => Outcome::ok(1, 0),
                        Ok(false) => Outcome::status(Status::DuplicateKey),
                        Err(o) => o,
                    },
                    Err(e) => failed(e),
                };
                if o.status.is_ok() {
                    inserted += 1;
                } else if first.is_none() {
                    first = Some(o);
                }
            }
            return match first {
                Some(mut o) => {
                    o.rows = inserted;
                    o
                }
                None => Outcome::ok(inserted, batch.bytes()),
            };
        }
        let mut b = CqlBatch::new(BatchType::Unlogged);
        for _ in 0..rows.len() {
            b.append_statement(st.insert.clone());
        }
        b.set_consistency(
            self.shared
                .1
                .insert
                .get_consistency()
                .unwrap_or(Consistency::One),
        );
        match s.batch(&b, rows).await {
            Ok(_) => Outcome::ok(batch.len() as u64, batch.bytes()),
            Err(e) if e.to_string().contains("Batch too large") => Outcome::failed(
                Status::Error,
                format!(
                    "{e} (raise batch_size_fail_threshold in cassandra.yaml, or lower --batch)"
                ),
            ),
            Err(e) => failed(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server_url() -> String {
        std::env::var("YARDSTICK_CQL_URL").unwrap_or_else(|_| "cql://127.0.0.1:59042/ycsb".into())
    }

    fn available() -> bool {
        crate::testing::server_available(
            "Cassandra",
            &server_url(),
            "scripts/services start cassandra",
        )
    }

    fn open_url(url: &str, opts: &OpenOptions) -> Result<CqlBinding, BindingError> {
        CqlBinding::open(&Target::parse(url)?, opts)
    }

    /// A keyspace per check: checks share the node but no rows.
    fn open_fresh(opts: &OpenOptions) -> Result<CqlBinding, BindingError> {
        let base = server_url();
        let url = format!(
            "{}/{}",
            base.rsplit_once('/').unwrap().0,
            crate::net::unique_name("conf")
        );
        open_url(&url, opts)
    }

    yardstick_core::conformance_suite!(open_fresh, available);

    fn opts(create: bool) -> OpenOptions {
        OpenOptions {
            schema: Schema {
                table: "usertable".into(),
                fields: vec!["field0".into()],
            },
            insert_mode: InsertMode::Upsert,
            update_mode: UpdateMode::Upsert,
            create,
            sessions: 1,
            data_integrity: false,
            scans: true,
        }
    }

    #[test]
    fn bad_urls_missing_keyspaces_and_dead_nodes_are_one_clear_line() {
        let e = open_url("cql://127.0.0.1:9042", &opts(true))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("names no keyspace"), "{e}");
        let e = open_url("cql://127.0.0.1:9042/ks?consistency=most", &opts(true))
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("consistency=most is not a CQL consistency level"),
            "{e}"
        );
        let e = open_url("cql://u:secretpw@127.0.0.1:1/ks", &opts(true))
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("cannot connect to Cassandra at 127.0.0.1:1") && !e.contains("secretpw"),
            "{e}"
        );
        if !available() {
            return;
        }
        let url = format!("{}_never_loaded", server_url());
        let e = open_url(&url, &opts(false)).err().unwrap().to_string();
        assert!(
            e.contains("does not exist") && e.contains("yardstick load"),
            "{e}"
        );
    }

    #[test]
    fn consistency_replication_and_version_are_recorded() {
        if !available() {
            return;
        }
        let base = server_url();
        let url = format!(
            "{}/{}?consistency=quorum",
            base.rsplit_once('/').unwrap().0,
            crate::net::unique_name("info")
        );
        let info = open_url(&url, &opts(true)).unwrap().info();
        assert!(info.version.starts_with("5."), "{}", info.version);
        assert_eq!(info.settings["consistency"], "Quorum");
        assert_eq!(info.settings["replication_factor"], "1");
        assert!(
            info.settings["writes"].contains("insert: INSERT;"),
            "{info:?}"
        );
    }

    #[test]
    fn tls_with_the_test_ca_reads_and_writes_and_an_unknown_issuer_is_refused() {
        if !available() {
            return;
        }
        // the test node accepts plain and TLS clients on one port
        let ca = crate::testing::test_ca();
        let base = server_url();
        let url = format!(
            "{}/{}?tls_ca={ca}",
            base.rsplit_once('/').unwrap().0,
            crate::net::unique_name("tls")
        );
        let b = open_url(&url, &opts(true)).unwrap();
        assert_eq!(b.info().settings["tls"], "true");
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let mut s = b.session().await.unwrap();
            let mut ws = WriteSet::default();
            ws.push(0).extend_from_slice(b"over tls");
            assert_eq!(s.insert(b"user1", &ws).await.status, Status::Ok);
            let mut rec = Record::with_fields(1);
            let read = s.read(b"user1", Fields::All, &mut rec).await;
            assert_eq!(read.status, Status::Ok);
            assert_eq!(rec.get(0), Some(&b"over tls"[..]));
        });
        // trusting only the server's own leaf certificate: its issuer is unknown
        let leaf = std::path::Path::new(&ca).with_file_name("server.crt");
        let url = format!(
            "{}/{}?tls_ca={}&connect_timeout=5s",
            base.rsplit_once('/').unwrap().0,
            crate::net::unique_name("tls"),
            leaf.display()
        );
        let e = open_url(&url, &opts(true)).err().unwrap().to_string();
        assert!(
            e.contains("cannot connect to Cassandra") && !e.contains('\n'),
            "{e}"
        );
        let e = open_url(
            "cql://127.0.0.1:59042/ks?tls_ca=/nonexistent/ca.pem",
            &opts(true),
        )
        .err()
        .unwrap()
        .to_string();
        assert!(e.contains("cannot read tls_ca=/nonexistent/ca.pem"), "{e}");
    }
}
