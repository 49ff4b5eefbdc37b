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
//!
//! Several nodes in the URL (`redis://:pw@h1:7000,h2:7001,h3:7002`) mean a
//! Redis Cluster: requests are routed by slot. A cluster has no global key
//! order, so the hash model keeps no index there and workloads with scans are
//! refused; batches go out record by record.
use crate::kv;
use crate::net::run_cold;
use crate::url::Target;
use redis::aio::{ConnectionLike, MultiplexedConnection};
use redis::cluster_async::ClusterConnection;
use redis::{AsyncConnectionConfig, Client, RedisError, Script, Value};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::thread::ThreadId;
use crate::registry::{Capabilities, Descriptor, Registered};
use yardstick_core::binding::*;

/// yardstick's own URL options.
pub const OPTIONS: &[&str] = &[
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
    scripts: Scripts,
}

pub struct RedisBinding {
    inner: Arc<Inner>,
    info: EngineInfo,
}

fn open_error(server: &str, e: &RedisError) -> BindingError {
    let text = e.to_string();
    if e.kind() == redis::ErrorKind::AuthenticationFailed
        || text.contains("WRONGPASS")
        || text.contains("NOAUTH")
    {
        return BindingError::Unavailable(format!(
            "{server} refused the login: wrong or missing password; put it in --db as redis://:PASSWORD@host:port"
        ));
    }
    BindingError::Unavailable(format!(
        "cannot connect to {server}: {}; check that the server runs and the URL is right",
        text
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
        flavours: &[],
        description: "Redis (redis-rs, multiplexed): YCSB's hash-per-record model with a sorted-set index, or ?model=string for GET/SET; clusters; TLS with rediss://",
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
            Some(v) => v.parse::<usize>().ok().filter(|n| *n >= 1).ok_or_else(|| {
                BindingError::Config(format!("pipeline={v} is not a whole number >= 1; it is how many sessions share one connection"))
            })?,
        };
        let conn_config = AsyncConnectionConfig::new()
            .set_connection_timeout(Some(target.duration("connect_timeout", 10)?))
            .set_response_timeout(Some(target.duration("timeout", 30)?));
        let tls = base.starts_with("rediss://");
        if !tls && (target.param("tls_ca").is_some() || target.param("tls_insecure").is_some()) {
            return Err(BindingError::Config(
                "tls_ca and tls_insecure need a TLS connection: use rediss:// instead of redis://"
                    .into(),
            ));
        }
        let mut conn_url = base.to_string();
        if target.param("tls_insecure") == Some("true") {
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
                    .connection_timeout(target.duration("connect_timeout", 10)?)
                    .response_timeout(target.duration("timeout", 30)?);
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
        let prefix = target.param("prefix").unwrap_or("").as_bytes().to_vec();
        let mut index = prefix.clone();
        index.extend_from_slice(format!("yardstick:index:{}", opts.schema.table).as_bytes());
        let inner = Inner {
            server_client,
            conn_config,
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
            scripts: Scripts {
                insert_nx: Script::new(INSERT_NX),
                upsert: Script::new(UPSERT),
                update_xx: Script::new(UPDATE_XX),
                delete: Script::new(DELETE),
                cas: Script::new(CAS),
            },
        };
        let settings = run_cold(async {
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
        })
    }
}

impl Inner {
    async fn connect(&self) -> Result<Con, RedisError> {
        match &self.server_client {
            Server::Single(c) => c
                .get_multiplexed_async_connection_with_config(&self.conn_config)
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
            return self.connect().await;
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
        let con = self.connect().await?;
        self.shared
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((me, con.clone(), 1));
        Ok(con)
    }
}

impl Binding for RedisBinding {
    type Session = RedisSession;

    async fn session(&self) -> Result<RedisSession, BindingError> {
        let con = self
            .inner
            .session_connection()
            .await
            .map_err(|e| open_error(&self.inner.server, &e))?;
        Ok(RedisSession {
            inner: self.inner.clone(),
            con: Some(con),
            key: Vec::new(),
            value: Vec::new(),
            batch_script_loaded: false,
        })
    }

    fn info(&self) -> EngineInfo {
        self.info.clone()
    }
}

pub struct RedisSession {
    inner: Arc<Inner>,
    /// `None` after the connection broke; the next operation reconnects.
    con: Option<Con>,
    key: Vec<u8>,
    value: Vec<u8>,
    /// The batch script is in the server's script cache (EVALSHA works).
    batch_script_loaded: bool,
}

fn is_connection_error(e: &RedisError) -> bool {
    e.is_io_error()
        || e.is_connection_dropped()
        || e.is_connection_refusal()
        || e.is_unrecoverable_error()
}

fn status_of(e: &RedisError) -> Status {
    if e.is_timeout() {
        Status::Timeout
    } else if is_connection_error(e) {
        Status::Unavailable
    } else {
        Status::Error
    }
}

impl RedisSession {
    /// Makes sure the session has a connection, reconnecting once when the
    /// last one broke.
    async fn connected(&mut self) -> Result<(), Outcome> {
        if self.con.is_none() {
            match self.inner.connect().await {
                Ok(c) => self.con = Some(c),
                Err(e) => return Err(Outcome::failed(status_of(&e), e)),
            }
        }
        Ok(())
    }

    fn failed(&mut self, e: RedisError) -> Outcome {
        let status = status_of(&e);
        if status == Status::Unavailable || status == Status::Timeout {
            self.con = None;
        }
        Outcome::failed(status, e)
    }

    fn full_key(&mut self, key: &[u8]) {
        self.key.clear();
        self.key.extend_from_slice(&self.inner.prefix);
        self.key.extend_from_slice(key);
    }

    /// Runs one of the hash model's write scripts; returns its integer reply.
    async fn hash_script(
        &mut self,
        which: fn(&Scripts) -> &Script,
        key: &[u8],
        values: Option<&WriteSet>,
    ) -> Result<i64, Outcome> {
        self.full_key(key);
        let inner = self.inner.clone();
        let script = which(&inner.scripts);
        let mut inv = script.key(&self.key[..]);
        if !inner.is_cluster() {
            // a cluster keeps no index: record and index could sit on different slots
            inv.key(&inner.index[..]);
        }
        inv.arg(key);
        if let Some(values) = values {
            for (i, v) in values.iter() {
                inv.arg(&inner.field_names[i][..]).arg(v);
            }
        }
        self.connected().await?;
        let con = self.con.as_mut().expect("connected above");
        match inv.invoke_async::<i64>(con).await {
            Ok(n) => Ok(n),
            Err(e) => Err(self.failed(e)),
        }
    }

    async fn read_hash(
        &mut self,
        fields: Fields,
        out: &mut Record,
    ) -> Result<Option<u64>, RedisError> {
        let inner = self.inner.clone();
        let con = self.con.as_mut().expect("connected by the caller");
        match fields {
            Fields::All => {
                let mut cmd = redis::cmd("HMGET");
                cmd.arg(&self.key[..]);
                for f in &inner.field_names {
                    cmd.arg(&f[..]);
                }
                let vals: Vec<Option<Vec<u8>>> = cmd.query_async(con).await?;
                Ok(copy_fields(
                    vals.iter().enumerate().map(|(i, v)| (i, v.as_deref())),
                    out,
                ))
            }
            Fields::One(i) => {
                let v: Option<Vec<u8>> = redis::cmd("HGET")
                    .arg(&self.key[..])
                    .arg(&inner.field_names[i][..])
                    .query_async(con)
                    .await?;
                Ok(copy_fields(std::iter::once((i, v.as_deref())), out))
            }
        }
    }

    async fn get(&mut self) -> Result<Option<Vec<u8>>, Outcome> {
        self.connected().await?;
        let con = self.con.as_mut().expect("connected above");
        match redis::cmd("GET").arg(&self.key[..]).query_async(con).await {
            Ok(v) => Ok(v),
            Err(e) => Err(self.failed(e)),
        }
    }

    /// `SET key value [NX|XX]`: whether the server stored it.
    async fn set(&mut self, cond: Option<&str>) -> Result<bool, Outcome> {
        let con = self.con.as_mut().expect("connected by the caller");
        let mut cmd = redis::cmd("SET");
        cmd.arg(&self.key[..]).arg(&self.value[..]);
        if let Some(c) = cond {
            cmd.arg(c);
        }
        match cmd.query_async::<Value>(con).await {
            Ok(Value::Nil) => Ok(false),
            Ok(_) => Ok(true),
            Err(e) => Err(self.failed(e)),
        }
    }

    /// Writes `values` to a string-model record.
    async fn write_string(&mut self, key: &[u8], values: &WriteSet, insert: bool) -> Outcome {
        self.full_key(key);
        let n = self.inner.field_names.len();
        let upsert = if insert {
            self.inner.insert_mode == InsertMode::Upsert
        } else {
            self.inner.update_mode == UpdateMode::Upsert
        };
        if let Err(o) = self.connected().await {
            return o;
        }
        if insert || kv::is_whole(n, values) {
            kv::encode(n, values, &mut self.value);
            let cond = match (insert, upsert) {
                (_, true) => None,
                (true, false) => Some("NX"),
                (false, false) => Some("XX"),
            };
            return match self.set(cond).await {
                Ok(true) => Outcome::ok(0, values.bytes()),
                Ok(false) if insert => Outcome::status(Status::DuplicateKey),
                Ok(false) => Outcome::status(Status::NotFound),
                Err(o) => o,
            };
        }
        // a partial update: read, merge, compare-and-set
        for _ in 0..CAS_ATTEMPTS {
            let old = match self.get().await {
                Ok(v) => v,
                Err(o) => return o,
            };
            let Some(old) = old else {
                if !upsert {
                    return Outcome::status(Status::NotFound);
                }
                kv::encode(n, values, &mut self.value);
                match self.set(Some("NX")).await {
                    Ok(true) => return Outcome::ok(0, values.bytes()),
                    Ok(false) => continue,
                    Err(o) => return o,
                }
            };
            if let Err(e) = kv::merge(n, &old, values, &mut self.value) {
                return Outcome::failed(Status::Error, e);
            }
            let inner = self.inner.clone();
            let mut inv = inner.scripts.cas.key(&self.key[..]);
            inv.arg(&old[..]).arg(&self.value[..]);
            let con = self.con.as_mut().expect("connected above");
            match inv.invoke_async::<i64>(con).await {
                Ok(1) => return Outcome::ok(0, values.bytes()),
                Ok(_) => continue,
                Err(e) => return self.failed(e),
            }
        }
        Outcome::failed(
            Status::Conflict,
            format!("record changed under {CAS_ATTEMPTS} compare-and-set attempts in a row"),
        )
    }

    async fn write_hash(&mut self, key: &[u8], values: &WriteSet, insert: bool) -> Outcome {
        let which: fn(&Scripts) -> &Script =
            match (insert, self.inner.insert_mode, self.inner.update_mode) {
                (true, InsertMode::Insert, _) => |s| &s.insert_nx,
                (true, InsertMode::Upsert, _) | (false, _, UpdateMode::Upsert) => |s| &s.upsert,
                (false, _, UpdateMode::Update) => |s| &s.update_xx,
            };
        if values.is_empty() {
            return Outcome::failed(
                Status::Error,
                "a Redis hash cannot be written with no fields",
            );
        }
        match self.hash_script(which, key, Some(values)).await {
            Ok(1) => Outcome::ok(0, values.bytes()),
            Ok(_) if insert => Outcome::status(Status::DuplicateKey),
            Ok(_) => Outcome::status(Status::NotFound),
            Err(o) => o,
        }
    }
}

/// Copies present values into `out`: `None` when no field was present.
fn copy_fields<'a>(
    vals: impl Iterator<Item = (usize, Option<&'a [u8]>)>,
    out: &mut Record,
) -> Option<u64> {
    let mut bytes = 0;
    let mut any = false;
    for (i, v) in vals {
        if let Some(v) = v {
            out.set(i, v);
            bytes += v.len() as u64;
            any = true;
        }
    }
    any.then_some(bytes)
}

impl Session for RedisSession {
    async fn read(&mut self, key: &[u8], fields: Fields, out: &mut Record) -> Outcome {
        self.full_key(key);
        if let Err(o) = self.connected().await {
            return o;
        }
        match self.inner.model {
            Model::Hash => match self.read_hash(fields, out).await {
                Ok(Some(bytes)) => Outcome::ok(1, bytes),
                Ok(None) => Outcome::status(Status::NotFound),
                Err(e) => self.failed(e),
            },
            Model::String => match self.get().await {
                Ok(Some(v)) => match kv::decode(self.inner.field_names.len(), &v, fields, out) {
                    Ok(bytes) => Outcome::ok(1, bytes),
                    Err(e) => Outcome::failed(Status::Error, e),
                },
                Ok(None) => Outcome::status(Status::NotFound),
                Err(o) => o,
            },
        }
    }

    async fn scan(
        &mut self,
        start: &[u8],
        count: u64,
        fields: Fields,
        out: &mut ScanRows,
    ) -> Outcome {
        if self.inner.model == Model::String {
            return Outcome::failed(Status::Error, "model=string keeps no key index to scan");
        }
        if self.inner.is_cluster() {
            return Outcome::failed(Status::Error, "a Redis Cluster keeps no key index to scan");
        }
        let inner = self.inner.clone();
        if let Err(o) = self.connected().await {
            return o;
        }
        let con = self.con.as_mut().expect("connected above");
        let mut min = Vec::with_capacity(start.len() + 1);
        min.push(b'[');
        min.extend_from_slice(start);
        let keys: Vec<Vec<u8>> = match redis::cmd("ZRANGE")
            .arg(&inner.index[..])
            .arg(min)
            .arg("+")
            .arg("BYLEX")
            .arg("LIMIT")
            .arg(0)
            .arg(count)
            .query_async(con)
            .await
        {
            Ok(k) => k,
            Err(e) => return self.failed(e),
        };
        if keys.is_empty() {
            return Outcome::ok(0, 0);
        }
        let mut pipe = redis::pipe();
        for k in &keys {
            let mut full = inner.prefix.clone();
            full.extend_from_slice(k);
            match fields {
                Fields::All => {
                    let c = pipe.cmd("HMGET").arg(full);
                    for f in &inner.field_names {
                        c.arg(&f[..]);
                    }
                }
                Fields::One(i) => {
                    pipe.cmd("HMGET").arg(full).arg(&inner.field_names[i][..]);
                }
            }
        }
        let con = self.con.as_mut().expect("connected above");
        let rows: Vec<Vec<Option<Vec<u8>>>> = match pipe.query_async(con).await {
            Ok(r) => r,
            Err(e) => return self.failed(e),
        };
        let (mut n, mut bytes) = (0, 0);
        for (k, vals) in keys.iter().zip(&rows) {
            // a record deleted between the index read and the HMGET is skipped
            if vals.iter().all(Option::is_none) {
                continue;
            }
            let rec = out.push(k);
            let cols = fields
                .columns(inner.field_names.len())
                .map(|(c, f)| (f, vals.get(c).and_then(|v| v.as_deref())));
            bytes += copy_fields(cols, rec).unwrap_or(0);
            n += 1;
        }
        Outcome::ok(n, bytes)
    }

    async fn update(&mut self, key: &[u8], values: &WriteSet) -> Outcome {
        match self.inner.model {
            Model::Hash => self.write_hash(key, values, false).await,
            Model::String => self.write_string(key, values, false).await,
        }
    }

    async fn insert(&mut self, key: &[u8], values: &WriteSet) -> Outcome {
        match self.inner.model {
            Model::Hash => self.write_hash(key, values, true).await,
            Model::String => self.write_string(key, values, true).await,
        }
    }

    /// One pipeline per batch: every record's write goes out before the first
    /// reply is read (one round trip). Not atomic: the outcome counts the
    /// records written and reports the first refusal.
    async fn insert_batch(&mut self, batch: &Batch) -> Outcome {
        if batch.is_empty() {
            return Outcome::ok(0, 0);
        }
        if self.inner.is_cluster() {
            // records of a batch live on different slots: one write each
            let mut inserted = 0;
            for (key, values) in batch.rows() {
                let o = self.insert(key, values).await;
                if !o.status.is_ok() {
                    return Outcome {
                        rows: inserted,
                        ..o
                    };
                }
                inserted += 1;
            }
            return Outcome::ok(inserted, batch.bytes());
        }
        if let Err(o) = self.connected().await {
            return o;
        }
        let inner = self.inner.clone();
        let n = inner.field_names.len();
        let upsert = inner.insert_mode == InsertMode::Upsert;
        let script = if upsert {
            &inner.scripts.upsert
        } else {
            &inner.scripts.insert_nx
        };
        let mut pipe = redis::pipe();
        for (key, values) in batch.rows() {
            let mut full = inner.prefix.clone();
            full.extend_from_slice(key);
            match inner.model {
                Model::Hash => {
                    let c = pipe
                        .cmd("EVALSHA")
                        .arg(script.get_hash())
                        .arg(2)
                        .arg(full)
                        .arg(&inner.index[..])
                        .arg(key);
                    for (i, v) in values.iter() {
                        c.arg(&inner.field_names[i][..]).arg(v);
                    }
                }
                Model::String => {
                    kv::encode(n, values, &mut self.value);
                    let c = pipe.cmd("SET").arg(full).arg(&self.value[..]);
                    if !upsert {
                        c.arg("NX");
                    }
                }
            }
        }
        let mut loaded = false;
        if inner.model == Model::Hash && !self.batch_script_loaded {
            let con = self.con.as_mut().expect("connected above");
            if let Err(e) = script.load_async(con).await {
                return self.failed(e);
            }
            self.batch_script_loaded = true;
            loaded = true;
        }
        let replies: Vec<Value> = loop {
            let con = self.con.as_mut().expect("connected above");
            match pipe.query_async(con).await {
                Ok(r) => break r,
                // the server lost its script cache (restarted): load it once more
                Err(e)
                    if !loaded
                        && e.kind()
                            == redis::ErrorKind::Server(redis::ServerErrorKind::NoScript) =>
                {
                    loaded = true;
                    let con = self.con.as_mut().expect("connected above");
                    if let Err(e) = script.load_async(con).await {
                        return self.failed(e);
                    }
                }
                Err(e) => return self.failed(e),
            }
        };
        let written = replies
            .iter()
            .filter(|r| matches!(r, Value::Int(1) | Value::Okay))
            .count() as u64;
        if written == batch.len() as u64 {
            Outcome::ok(written, batch.bytes())
        } else {
            Outcome {
                status: Status::DuplicateKey,
                rows: written,
                bytes: 0,
                detail: None,
            }
        }
    }

    async fn delete(&mut self, key: &[u8]) -> Outcome {
        let n = match self.inner.model {
            Model::Hash => self.hash_script(|s| &s.delete, key, None).await,
            Model::String => {
                self.full_key(key);
                if let Err(o) = self.connected().await {
                    return o;
                }
                let con = self.con.as_mut().expect("connected above");
                match redis::cmd("DEL")
                    .arg(&self.key[..])
                    .query_async::<i64>(con)
                    .await
                {
                    Ok(n) => Ok(n),
                    Err(e) => Err(self.failed(e)),
                }
            }
        };
        match n {
            Ok(0) => Outcome::status(Status::NotFound),
            Ok(_) => Outcome::ok(0, 0),
            Err(o) => o,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server_url() -> String {
        std::env::var("YARDSTICK_REDIS_URL")
            .unwrap_or_else(|_| "redis://:benchpw@127.0.0.1:56379".into())
    }

    fn available() -> bool {
        crate::testing::server_available("Redis", &server_url(), "scripts/services start redis")
    }

    fn open_url(url: &str, opts: &OpenOptions) -> Result<RedisBinding, BindingError> {
        RedisBinding::open(&Target::parse(url)?, opts)
    }

    /// Every open gets its own key prefix, so checks share the server but no keys.
    fn open_fresh(opts: &OpenOptions) -> Result<RedisBinding, BindingError> {
        open_url(
            &format!(
                "{}?prefix={}:",
                server_url(),
                crate::net::unique_name("conf")
            ),
            opts,
        )
    }

    yardstick_core::conformance_suite!(open_fresh, available);

    mod string_model {
        use super::*;

        fn open_fresh(opts: &OpenOptions) -> Result<RedisBinding, BindingError> {
            open_url(
                &format!(
                    "{}?model=string&pipeline=4&prefix={}:",
                    server_url(),
                    crate::net::unique_name("str")
                ),
                opts,
            )
        }

        yardstick_core::conformance_suite!(open_fresh, available, without_scan);
    }

    /// The same checks on a three-master Redis Cluster (no scans there).
    mod cluster {
        use super::*;

        pub fn cluster_url() -> String {
            std::env::var("YARDSTICK_REDIS_CLUSTER_URL").unwrap_or_else(|_| {
                "redis://:benchpw@127.0.0.1:46391,127.0.0.1:46392,127.0.0.1:46393".into()
            })
        }

        fn available() -> bool {
            crate::testing::server_available(
                "Redis Cluster",
                "redis://127.0.0.1:46391",
                "scripts/services start redis-cluster",
            )
        }

        fn open_fresh(opts: &OpenOptions) -> Result<RedisBinding, BindingError> {
            open_url(
                &format!(
                    "{}?pipeline=2&prefix={}:",
                    cluster_url(),
                    crate::net::unique_name("cl")
                ),
                opts,
            )
        }

        yardstick_core::conformance_suite!(open_fresh, available, without_scan);

        #[test]
        fn cluster_mode_is_recorded_and_refuses_scans() {
            if !available() {
                return;
            }
            let b = open_fresh(&super::opts()).unwrap();
            assert_eq!(b.info().settings["cluster_seed_nodes"], "3");
            assert_eq!(b.info().settings["redis_mode"], "cluster");
            let with_scans = OpenOptions {
                scans: true,
                ..super::opts()
            };
            let e = open_fresh(&with_scans).err().unwrap().to_string();
            assert!(e.contains("no global key order"), "{e}");
        }
    }

    fn opts() -> OpenOptions {
        OpenOptions {
            schema: Schema {
                table: "usertable".into(),
                fields: vec!["field0".into()],
            },
            insert_mode: InsertMode::Insert,
            update_mode: UpdateMode::Update,
            create: true,
            sessions: 1,
            data_integrity: false,
            scans: false,
        }
    }

    #[test]
    fn wrong_password_and_dead_port_are_one_clear_line_without_the_password() {
        if !available() {
            return;
        }
        let e = open_url(&server_url().replace("benchpw", "wrongpw"), &opts())
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("wrong or missing password") && !e.contains("wrongpw"),
            "{e}"
        );
        let e = open_url("redis://127.0.0.1:56379", &opts())
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("wrong or missing password"), "{e}");
        let e = open_url("redis://:secretpw@127.0.0.1:1", &opts())
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("cannot connect to Redis at 127.0.0.1:1") && !e.contains("secretpw"),
            "{e}"
        );
        let e = open_url(&format!("{}?model=list", server_url()), &opts())
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("unknown Redis model 'list'"), "{e}");
    }

    #[test]
    fn tls_with_the_servers_ca_connects_and_records_settings() {
        if !available() {
            return;
        }
        let ca = crate::testing::test_ca();
        let url = format!(
            "rediss://:benchpw@127.0.0.1:56380?tls_ca={ca}&prefix={}:",
            crate::net::unique_name("tls")
        );
        let b = open_url(&url, &opts()).unwrap();
        let info = b.info();
        assert!(
            info.version.starts_with(char::is_numeric),
            "{}",
            info.version
        );
        assert_eq!(info.settings.get("tls").map(String::as_str), Some("true"));
        assert!(info.settings.contains_key("appendonly"));
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let mut s = b.session().await.unwrap();
            let mut ws = WriteSet::default();
            ws.push(0).extend_from_slice(b"over tls");
            assert_eq!(s.insert(b"k", &ws).await.status, Status::Ok);
            let mut rec = Record::with_fields(1);
            assert_eq!(s.read(b"k", Fields::All, &mut rec).await.status, Status::Ok);
            assert_eq!(rec.get(0), Some(&b"over tls"[..]));
        });
        // without the CA the self-signed certificate is rejected at open
        let e = open_url("rediss://:benchpw@127.0.0.1:56380", &opts())
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("cannot connect to Redis at 127.0.0.1:56380"),
            "{e}"
        );
    }

    #[test]
    fn pipelined_sessions_share_a_connection_per_thread() {
        if !available() {
            return;
        }
        let url = format!(
            "{}?model=string&pipeline=3&prefix={}:",
            server_url(),
            crate::net::unique_name("pipe")
        );
        let b = open_url(&url, &opts()).unwrap();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let mut sessions = Vec::new();
            for _ in 0..7 {
                sessions.push(b.session().await.unwrap());
            }
            let users: Vec<usize> = b.inner.shared.lock().unwrap().iter().map(|s| s.2).collect();
            assert_eq!(users, vec![3, 3, 1]);
            let mut ws = WriteSet::default();
            ws.push(0).extend_from_slice(b"v");
            let futs = sessions.iter_mut().enumerate().map(|(i, s)| {
                let ws = ws.clone();
                async move { s.insert(format!("k{i}").as_bytes(), &ws).await.status }
            });
            let statuses = futures_util::future::join_all(futs).await;
            assert!(statuses.iter().all(|s| *s == Status::Ok), "{statuses:?}");
        });
    }

    #[test]
    fn scans_are_refused_for_the_string_model_only() {
        if !available() {
            return;
        }
        let with_scans = OpenOptions {
            scans: true,
            ..opts()
        };
        let e = open_url(&format!("{}?model=string", server_url()), &with_scans)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("scans") && e.contains("model=hash"), "{e}");
        assert!(open_url(&server_url(), &with_scans).is_ok());
    }
}
