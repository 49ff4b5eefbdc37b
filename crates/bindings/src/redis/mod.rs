//! `redis://[:password@]host:port[/db]` and `rediss://` (TLS): Redis through
//! the async `redis` crate.
//!
//! Two data models:
//! - `model=hash` (default, YCSB's): one hash per record, fields as hash
//!   fields, and a sorted set of every key (all scores 0) so a scan is a
//!   `ZRANGE ... BYLEX` in key order followed by one pipelined `HMGET` per key.
//!   Insert, update and delete keep record and index together in one Lua script.
//! - `model=string`: one string per record (`GET`/`SET`), the record encoded
//!   by [`crate::kv`] (a one-field record is stored raw), for comparison with
//!   redis-benchmark. No index, so workloads with scans are refused.
//!
//! Connections are multiplexed: `pipeline=N` lets up to N sessions of one
//! worker thread share a connection, so N requests are in flight on it.
//! `client=resp` (the default for `model=string` on one node without TLS)
//! sends the string model's GET, SET and DEL over yardstick's own RESP
//! connection ([`pipe`]); `client=redis-rs` keeps them on the driver.
//!
//! Several nodes in the URL (`redis://:pw@h1:7000,h2:7001,h3:7002`) mean a
//! Redis Cluster: requests are routed by slot. A cluster has no global key
//! order, so the hash model keeps no index there and workloads with scans are
//! refused; batches go out record by record.
use crate::kv;
use yardstick_core::run::run_cold;
use crate::url::Target;
use redis::aio::{ConnectionLike, MultiplexedConnection};
use redis::cluster_async::ClusterConnection;
use redis::{AsyncConnectionConfig, Client, RedisError, Script, Value};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::thread::ThreadId;
mod pipe;
#[macro_use]
mod pipe_session;
mod session;
mod stats;

pub use session::RedisSession;
use crate::registry::{Capabilities, Descriptor, Registered};
use yardstick_core::binding::*;

/// yardstick's own URL options.
pub(crate) const OPTIONS: &[&str] = &[
    "client",
    "model",
    "pipeline",
    "prefix",
    "timeout",
    "connect_timeout",
    "tls_ca",
    "tls_insecure",
];

/// Server settings recorded with every result (`CONFIG GET`).
const SETTINGS: &[&str] = &[
    "maxmemory",
    "maxmemory-policy",
    "appendonly",
    "appendfsync",
    "save",
    "io-threads",
];

/// A partial update of a string-model record is a read and a compare-and-set;
/// this many lost races in a row make the update a `Conflict`.
const CAS_ATTEMPTS: usize = 16;

const INSERT_NX: &str = r"
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
if KEYS[2] then redis.call('ZADD', KEYS[2], 0, ARGV[1]) end
return 1";
const UPSERT: &str = r"
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
if KEYS[2] then redis.call('ZADD', KEYS[2], 0, ARGV[1]) end
return 1";
const UPDATE_XX: &str = r"
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
return 1";
const DELETE: &str = r"
local n = redis.call('DEL', KEYS[1])
if KEYS[2] then redis.call('ZREM', KEYS[2], ARGV[1]) end
return n";
const CAS: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2])
  return 1
end
return 0";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Model {
    Hash,
    String,
}

struct Scripts {
    insert_nx: Script,
    upsert: Script,
    update_xx: Script,
    delete: Script,
    cas: Script,
}

/// A connection to one server or to a cluster (routed by slot).
#[derive(Clone)]
enum Con {
    Single(MultiplexedConnection),
    Cluster(ClusterConnection),
}

impl ConnectionLike for Con {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a redis::Cmd) -> redis::RedisFuture<'a, Value> {
        match self {
            Con::Single(c) => c.req_packed_command(cmd),
            Con::Cluster(c) => c.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        cmd: &'a redis::Pipeline,
        offset: usize,
        count: usize,
    ) -> redis::RedisFuture<'a, Vec<Value>> {
        match self {
            Con::Single(c) => c.req_packed_commands(cmd, offset, count),
            Con::Cluster(c) => c.req_packed_commands(cmd, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Con::Single(c) => c.get_db(),
            Con::Cluster(c) => c.get_db(),
        }
    }
}

enum Server {
    Single(Box<Client>),
    Cluster(Box<redis::cluster::ClusterClient>),
}

struct Inner {
    server_client: Server,
    conn_config: AsyncConnectionConfig,
    /// Sessions' connections: no response timer of the driver's, since the
    /// session's own timer already bounds every call (two timers per
    /// request were 5% of the client's CPU).
    session_config: AsyncConnectionConfig,
    server: String,
    model: Model,
    prefix: Vec<u8>,
    index: Vec<u8>,
    field_names: Vec<Vec<u8>>,
    insert_mode: InsertMode,
    update_mode: UpdateMode,
    pipeline: usize,
    /// Connections shared by the sessions of one worker thread (`pipeline` > 1).
    shared: Mutex<Vec<(ThreadId, Con, usize)>>,
    /// `client=resp`: where the string model's own connections go.
    resp: Option<pipe_session::RespTarget>,
    scripts: Scripts,
}

pub(crate) struct RedisBinding {
    inner: Arc<Inner>,
    info: EngineInfo,
    /// Each call's limit (the URL's `timeout`), the driver's response timeout.
    timeout: std::time::Duration,
}

fn open_error(server: &str, e: &RedisError) -> BindingError {
    let refused = e.kind() == redis::ErrorKind::AuthenticationFailed;
    connect_error(server, &session::error_text(e), refused)
}

/// A connection that could not be made or logged in, in one line: `detail`
/// is the driver's (or the server's) reason.
fn connect_error(server: &str, detail: &str, refused_login: bool) -> BindingError {
    // WRONGPASS and NOAUTH from Redis 6 on, "invalid password" before
    let refused = ["WRONGPASS", "NOAUTH", "invalid password"];
    if refused_login || refused.iter().any(|r| detail.contains(r)) {
        return BindingError::Unavailable(format!(
            "{server} refused the login: wrong or missing password; put it in --db as redis://:PASSWORD@host:port"
        ));
    }
    BindingError::Unavailable(format!(
        "cannot connect to {server}: {detail}; check that the server runs and the URL is right"
    ))
}

/// A cluster answers commands sent to every node with a map of node to reply;
/// this takes the first node's reply (a single server's reply as it is).
fn first_node(v: Value) -> Option<Value> {
    match v {
        Value::Map(entries) => entries.into_iter().next().map(|(_, v)| v),
        other => Some(other),
    }
}

impl Registered for RedisBinding {
    const DESCRIPTOR: Descriptor = Descriptor {
        schemes: &["redis", "rediss"],
        server_port: Some(6379),
        flavours: &[],
        description: "Redis (redis-rs, multiplexed; the string model's GET/SET on a RESP connection of yardstick's own): YCSB's hash-per-record model with a sorted-set index, or ?model=string for GET/SET; clusters; TLS with rediss://",
        example: "redis://:password@127.0.0.1:6379?model=hash&pipeline=1",
        docs: "docs/bindings/redis.md",
        options: OPTIONS,
        capabilities: Capabilities {
            batch_load: true,
            scan: true,
            tpcc: None,
        },
    };

    fn open(target: &Target, opts: &OpenOptions) -> Result<Self, BindingError> {
        let target = &target.with_password(&["REDISCLI_AUTH"], true);
        let url = target.url.as_str();
        crate::net::use_ring_for_tls();
        target.allow_only(OPTIONS)?;
        let base = url.split('?').next().unwrap_or(url);
        let authority = target.rest.split('/').next().unwrap_or("");
        let (userinfo, hostport) = match authority.rsplit_once('@') {
            Some((u, h)) => (Some(u), h),
            None => (None, authority),
        };
        let cluster_nodes: Option<Vec<String>> = hostport.contains(',').then(|| {
            let scheme = if base.starts_with("rediss://") {
                "rediss"
            } else {
                "redis"
            };
            hostport
                .split(',')
                .filter(|h| !h.is_empty())
                .map(|h| match userinfo {
                    Some(u) => format!("{scheme}://{u}@{h}"),
                    None => format!("{scheme}://{h}"),
                })
                .collect()
        });
        if cluster_nodes.is_some() && opts.scans {
            return Err(BindingError::Unsupported(
                "the workload has scans, but a Redis Cluster has no global key order to scan (several nodes in the URL); set scanproportion=0 or give one node".into(),
            ));
        }
        let server = format!(
            "Redis at {}",
            if hostport.is_empty() {
                "127.0.0.1:6379"
            } else {
                hostport
            }
        );
        let model = match target.param("model").unwrap_or("hash") {
            "hash" => Model::Hash,
            "string" => Model::String,
            other => {
                return Err(BindingError::Config(format!(
                    "unknown Redis model '{other}'; use model=hash (YCSB's, one hash per record) or model=string (GET/SET)"
                )))
            }
        };
        if model == Model::String && opts.scans {
            return Err(BindingError::Unsupported(
                "the workload has scans, but model=string keeps no key index to scan; use model=hash or set scanproportion=0".into(),
            ));
        }
        let pipeline = match target.param("pipeline") {
            None => 1,
            Some(v) => v.parse::<usize>().ok().filter(|n| (1..=1024).contains(n)).ok_or_else(|| {
                BindingError::Config(format!("pipeline={v} is not a whole number from 1 to 1024; it is how many sessions share one connection"))
            })?,
        };
        let session_config = AsyncConnectionConfig::new()
            .set_connection_timeout(Some(target.connect_timeout()?))
            .set_response_timeout(None);
        let conn_config = session_config
            .clone()
            .set_response_timeout(Some(target.op_timeout()?));
        let tls = base.starts_with("rediss://");
        if !tls && (target.param("tls_ca").is_some() || target.param("tls_insecure").is_some()) {
            return Err(BindingError::Config(
                "tls_ca and tls_insecure need a TLS connection: use rediss:// instead of redis://"
                    .into(),
            ));
        }
        let mut conn_url = base.to_string();
        if target.flag("tls_insecure")? == Some(true) {
            conn_url.push_str("#insecure");
        }
        let ca = match target.param("tls_ca") {
            Some(path) => Some(std::fs::read(path).map_err(|e| {
                BindingError::Config(format!("cannot read tls_ca={path}: {e}; give the PEM file of the CA that signed the server's certificate"))
            })?),
            None => None,
        };
        let certs = |pem: Vec<u8>| redis::TlsCertificates {
            client_tls: None,
            root_cert: Some(pem),
        };
        let server_client = match (&cluster_nodes, ca) {
            (Some(nodes), ca) => {
                let mut b = redis::cluster::ClusterClient::builder(nodes.clone())
                    .connection_timeout(target.connect_timeout()?)
                    .response_timeout(target.op_timeout()?);
                if let Some(pem) = ca {
                    b = b.certs(certs(pem));
                }
                b.build().map(|c| Server::Cluster(Box::new(c)))
            }
            (None, Some(pem)) => Client::build_with_tls(conn_url.as_str(), certs(pem))
                .map(|c| Server::Single(Box::new(c))),
            (None, None) => Client::open(conn_url.as_str()).map(|c| Server::Single(Box::new(c))),
        }
        .map_err(|e| {
            BindingError::Config(format!(
                "{} is not a Redis URL ({}); use redis://[:password@]host:port[/db]",
                yardstick_core::result::redact_url(url),
                e
            ))
        })?;
        let resp = pipe_session::RespTarget::choose(
            target.param("client"),
            model == Model::String,
            &server_client,
            target.connect_timeout()?,
            target.op_timeout()?,
        )?;
        let prefix = target.param("prefix").unwrap_or("").as_bytes().to_vec();
        let mut index = prefix.clone();
        index.extend_from_slice(format!("yardstick:index:{}", opts.schema.table).as_bytes());
        let inner = Inner {
            server_client,
            conn_config,
            session_config,
            server: server.clone(),
            model,
            prefix,
            index,
            field_names: opts
                .schema
                .fields
                .iter()
                .map(|f| f.as_bytes().to_vec())
                .collect(),
            insert_mode: opts.insert_mode,
            update_mode: opts.update_mode,
            pipeline,
            shared: Mutex::new(Vec::new()),
            resp,
            scripts: Scripts {
                insert_nx: Script::new(INSERT_NX),
                upsert: Script::new(UPSERT),
                update_xx: Script::new(UPDATE_XX),
                delete: Script::new(DELETE),
                cas: Script::new(CAS),
            },
        };
        let settings = run_cold(target.setup_limit()?, async {
            let mut con = inner.connect().await.map_err(|e| open_error(&server, &e))?;
            let pong: String = redis::cmd("PING")
                .query_async(&mut con)
                .await
                .map_err(|e| open_error(&server, &e))?;
            if pong != "PONG" {
                return Err(BindingError::Unavailable(format!(
                    "{server} answered PING with {pong}"
                )));
            }
            let info: Value = redis::cmd("INFO")
                .arg("server")
                .query_async(&mut con)
                .await
                .map_err(|e| open_error(&server, &e))?;
            let info = first_node(info)
                .and_then(|v| redis::from_redis_value::<String>(v).ok())
                .unwrap_or_default();
            let mut settings = BTreeMap::new();
            for name in SETTINGS {
                // CONFIG may be disabled (managed services): record what we can
                if let Ok(reply) = redis::cmd("CONFIG")
                    .arg("GET")
                    .arg(*name)
                    .query_async::<Value>(&mut con)
                    .await
                {
                    let pairs = first_node(reply)
                        .and_then(|v| redis::from_redis_value::<Vec<String>>(v).ok())
                        .unwrap_or_default();
                    if let [_, v] = pairs.as_slice() {
                        settings.insert((*name).to_string(), v.clone());
                    }
                }
            }
            Ok((info, settings))
        })?;
        let (info_text, mut settings) = settings;
        let field = |name: &str| {
            info_text
                .lines()
                .find_map(|l| l.strip_prefix(name).and_then(|r| r.strip_prefix(':')))
                .map(|v| v.trim().to_string())
        };
        settings.insert(
            "model".into(),
            match model {
                Model::Hash => "hash (one hash per record, sorted-set key index)",
                Model::String => "string (one encoded value per record)",
            }
            .into(),
        );
        settings.insert("pipeline".into(), pipeline.to_string());
        settings.insert(
            "client".into(),
            if inner.resp.is_some() {
                "resp (yardstick's own connection for GET, SET and DEL)"
            } else {
                "redis-rs (multiplexed)"
            }
            .into(),
        );
        if let Some(nodes) = &cluster_nodes {
            settings.insert("cluster_seed_nodes".into(), nodes.len().to_string());
        }
        settings.insert("tls".into(), tls.to_string());
        if let Some(mode) = field("redis_mode") {
            settings.insert("redis_mode".into(), mode);
        }
        let info = EngineInfo {
            name: "redis".into(),
            version: field("redis_version").unwrap_or_else(|| "unknown".into()),
            settings,
        };
        Ok(RedisBinding {
            inner: Arc::new(inner),
            info,
            timeout: target.op_timeout()?,
        })
    }
}

impl Inner {
    /// A connection for the binding's own calls, each bounded by the URL's timeout.
    async fn connect(&self) -> Result<Con, RedisError> {
        self.connect_with(&self.conn_config).await
    }

    /// A connection for sessions, which bound their calls themselves.
    async fn connect_session(&self) -> Result<Con, RedisError> {
        self.connect_with(&self.session_config).await
    }

    async fn connect_with(&self, config: &AsyncConnectionConfig) -> Result<Con, RedisError> {
        match &self.server_client {
            Server::Single(c) => c
                .get_multiplexed_async_connection_with_config(config)
                .await
                .map(Con::Single),
            Server::Cluster(c) => c.get_async_connection().await.map(Con::Cluster),
        }
    }

    fn is_cluster(&self) -> bool {
        matches!(self.server_client, Server::Cluster(_))
    }

    /// A connection for a new session on this thread: a shared one with room,
    /// or a new one.
    async fn session_connection(&self) -> Result<Con, RedisError> {
        if self.pipeline == 1 {
            return self.connect_session().await;
        }
        let me = std::thread::current().id();
        {
            let mut shared = self.shared.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(slot) = shared
                .iter_mut()
                .find(|(t, _, users)| *t == me && *users < self.pipeline)
            {
                slot.2 += 1;
                return Ok(slot.1.clone());
            }
        }
        let con = self.connect_session().await?;
        self.shared
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((me, con.clone(), 1));
        Ok(con)
    }
}


#[cfg(test)]
mod tests;
