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
use yardstick_core::run::run_cold;
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
mod session;
mod stats;

pub use session::CqlSessionHandle;
use crate::registry::{Capabilities, Descriptor, Registered};
use yardstick_core::binding::*;

/// yardstick's own URL options.
pub(crate) const OPTIONS: &[&str] = &[
    "consistency",
    "serial_consistency",
    "replication",
    "timeout",
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
    /// `TRUNCATE` of the table (`load --clear`, a suite's reload).
    truncate: String,
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
    /// Each request's limit (the URL's `timeout`), the driver's own.
    timeout: Duration,
    tls: Option<Arc<rustls::ClientConfig>>,
    insert_mode: InsertMode,
    update_mode: UpdateMode,
    /// One driver session (a pool per node) per worker thread.
    sessions: Mutex<Vec<(ThreadId, Arc<Shared>)>>,
}

pub(crate) struct CqlBinding {
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
    // the benchmark's keyspace only (its replication, for token-aware
    // routing): by default the driver fetches and keeps the schema of every
    // keyspace on the cluster, ~1-1.6 MB of the client's peak memory on the
    // test node (its keyspaces are the test suite's), more on a real one
    let mut b = SessionBuilder::new()
        .known_nodes(&inner.nodes)
        .keyspaces_to_fetch([inner.keyspace.as_str()])
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
        st.set_request_timeout(Some(inner.timeout));
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
        truncate: format!("TRUNCATE {t}"),
        insert_lwt,
        update_lwt,
    })
}

impl Registered for CqlBinding {
    const DESCRIPTOR: Descriptor = Descriptor {
        schemes: &["cql"],
        server_port: Some(9042),
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
        let target = &target.with_password(&[], false);
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
            .map(|h| crate::url::host_port(h, 9042, "cql"))
            .collect::<Result<_, _>>()?;
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
        let connect_timeout = target.connect_timeout()?;
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
            timeout: target.op_timeout()?,
            tls,
            insert_mode: opts.insert_mode,
            update_mode: opts.update_mode,
            sessions: Mutex::new(Vec::new()),
        };
        let (version, partitioner, rf) = run_cold(target.setup_limit()?, async {
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


#[cfg(test)]
mod tests;
