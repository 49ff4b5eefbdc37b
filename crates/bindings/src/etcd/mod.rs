//! `etcd://[user:password@]host1:2379,host2:2379,host3:2379`: etcd's v3 API
//! over gRPC (tonic, the messages declared in [`rpc`]), requests balanced over
//! every listed member.
//!
//! A record is one key (`prefix` + YCSB key) whose value is the record
//! encoded by [`crate::kv`]. `insert` is a transaction "create_revision == 0
//! then put" (a blind put with upsert semantics); a whole-record `update` is
//! "create_revision > 0 then put" (or a put); a partial update reads the record
//! and writes the merge in a transaction guarded by its mod_revision, retried
//! when another client wrote in between. A scan is one range request from the
//! start key, limited to the count (etcd returns ranges in key order). Reads
//! are linearizable by default; `consistency=serializable` reads the local
//! member's state without a quorum round.
use yardstick_core::bounded::Bounded;
use crate::kv;
use yardstick_core::run::run_cold;
use crate::url::Target;
mod rpc;

use rpc::{Client, Compare, CompareOp, ConnectOptions, RangeRequest};
use std::collections::BTreeMap;
use std::sync::Arc;
use crate::registry::{Capabilities, Descriptor, Registered};
use yardstick_core::binding::*;

/// yardstick's own URL options.
pub(crate) const OPTIONS: &[&str] = &[
    "consistency",
    "prefix",
    "timeout",
    "connect_timeout",
    "tls_ca",
];

/// Lost compare-and-swap races in a row before a partial update is a `Conflict`.
const CAS_ATTEMPTS: usize = 16;

struct Inner {
    endpoints: Vec<String>,
    options: ConnectOptions,
    prefix: Vec<u8>,
    /// The first key after every key under `prefix` (the range end of scans).
    prefix_end: Vec<u8>,
    serializable: bool,
    fields: usize,
    insert_mode: InsertMode,
    update_mode: UpdateMode,
}

pub(crate) struct EtcdBinding {
    inner: Arc<Inner>,
    info: EngineInfo,
}

/// The smallest key greater than every key starting with `prefix` (etcd's
/// "prefix end"); `\0` (the whole key space) for an empty prefix.
fn prefix_end(prefix: &[u8]) -> Vec<u8> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return end;
        }
    }
    vec![0]
}

fn status_of(s: &tonic::Status) -> Status {
    match s.code() {
        tonic::Code::DeadlineExceeded => Status::Timeout,
        // the channel's own limit (the URL's timeout) ran out: tonic
        // cancels the call with these words
        tonic::Code::Cancelled if s.message().contains("Timeout expired") => Status::Timeout,
        tonic::Code::Unavailable | tonic::Code::Cancelled => Status::Unavailable,
        _ if s.message().contains("leader changed")
            || s.message().contains("no leader")
            || s.message().contains("timed out")
            || s.message().contains("transport error") =>
        {
            Status::Unavailable
        }
        _ => Status::Error,
    }
}

fn open_error(endpoints: &[String], e: &tonic::Status) -> BindingError {
    let text = error_text(e);
    if text.contains("authentication failed") || text.contains("invalid auth") {
        return BindingError::Unavailable(format!(
            "etcd at {} refused the login: wrong user or password; fix the credentials in --db",
            endpoints.join(",")
        ));
    }
    BindingError::Unavailable(format!(
        "cannot connect to etcd at {}: {text}; check that the members run and the URL is right",
        endpoints.join(",")
    ))
}

impl Registered for EtcdBinding {
    const DESCRIPTOR: Descriptor = Descriptor {
        schemes: &["etcd"],
        server_port: Some(2379),
        flavours: &[],
        description: "etcd v3 (gRPC over tonic): get/put/range/delete, transactions for insert/update semantics, linearizable or serializable reads",
        example: "etcd://127.0.0.1:2379,127.0.0.1:22379,127.0.0.1:32379",
        docs: "docs/bindings/etcd.md",
        options: OPTIONS,
        capabilities: Capabilities {
            batch_load: false,
            scan: true,
            tpcc: None,
        },
    };

    fn open(target: &Target, opts: &OpenOptions) -> Result<Self, BindingError> {
        let target = &target.with_password(&["ETCDCTL_PASSWORD"], false);
        target.allow_only(OPTIONS)?;
        let authority = target.rest.split('/').next().unwrap_or("");
        let (userinfo, hosts) = match authority.rsplit_once('@') {
            Some((u, h)) => (Some(u), h),
            None => (None, authority),
        };
        // TLS: https endpoints, the server verified against the given CA
        let tls_ca = match target.param("tls_ca") {
            Some(path) => Some(std::fs::read(path).map_err(|e| {
                BindingError::Config(format!(
                    "cannot read tls_ca={path}: {e}; give the PEM file of the CA that signed the members' certificates"
                ))
            })?),
            None => None,
        };
        let scheme = if tls_ca.is_some() { "https" } else { "http" };
        let endpoints: Vec<String> = hosts
            .split(',')
            .filter(|h| !h.is_empty())
            .map(|h| Ok(format!("{scheme}://{}", crate::url::host_port(h, 2379, "etcd")?)))
            .collect::<Result<_, BindingError>>()?;
        if endpoints.is_empty() {
            return Err(BindingError::Config(
                "etcd:// needs at least one member: etcd://host1:2379,host2:2379,host3:2379".into(),
            ));
        }
        let tls = tls_ca.is_some();
        let options = ConnectOptions {
            timeout: Some(target.op_timeout()?),
            connect_timeout: Some(target.connect_timeout()?),
            tls_ca_pem: tls_ca,
            user: userinfo.map(|u| {
                let (user, password) = u.split_once(':').unwrap_or((u, ""));
                (user.to_string(), password.to_string())
            }),
        };
        let serializable = match target.param("consistency").unwrap_or("linearizable") {
            "linearizable" => false,
            "serializable" => true,
            other => {
                return Err(BindingError::Config(format!(
                    "consistency={other} is not known: use linearizable (quorum reads, the default) or serializable (local member reads)"
                )))
            }
        };
        let prefix = target.param("prefix").unwrap_or("").as_bytes().to_vec();
        let inner = Inner {
            endpoints: endpoints.clone(),
            options,
            prefix_end: prefix_end(&prefix),
            prefix,
            serializable,
            fields: opts.schema.fields.len(),
            insert_mode: opts.insert_mode,
            update_mode: opts.update_mode,
        };
        let (version, members, leader, db_size) = run_cold(target.setup_limit()?, async {
            let mut c = Client::connect(&inner.endpoints, &inner.options)
                .await
                .map_err(|e| open_error(&inner.endpoints, &e))?;
            let status = c
                .status()
                .await
                .map_err(|e| open_error(&inner.endpoints, &e))?;
            let members = c
                .member_list()
                .await
                .map_err(|e| open_error(&inner.endpoints, &e))?
                .members
                .len();
            Ok((status.version, members, status.leader, status.db_size))
        })?;
        let mut settings = BTreeMap::new();
        settings.insert(
            "reads".into(),
            if serializable {
                "serializable (local member)"
            } else {
                "linearizable (quorum)"
            }
            .into(),
        );
        settings.insert("cluster_members".into(), members.to_string());
        settings.insert("tls".into(), tls.to_string());
        settings.insert("endpoints".into(), endpoints.len().to_string());
        settings.insert("leader_id".into(), format!("{leader:x}"));
        settings.insert("db_size_at_open".into(), db_size.to_string());
        Ok(EtcdBinding {
            inner: Arc::new(inner),
            info: EngineInfo {
                name: "etcd".into(),
                version,
                settings,
            },
        })
    }
}

impl Binding for EtcdBinding {
    type Session = Bounded<EtcdSession>;

    async fn session(&self) -> Result<Self::Session, BindingError> {
        // the channel's tasks run on this worker's runtime
        let client = Client::connect(&self.inner.endpoints, &self.inner.options)
            .await
            .map_err(|e| open_error(&self.inner.endpoints, &e))?;
        let session = EtcdSession {
            inner: self.inner.clone(),
            kv: client,
            key: Vec::new(),
            value: Vec::new(),
        };
        Ok(Bounded::new(session, self.inner.options.timeout.unwrap_or(crate::url::DEFAULT_TIMEOUT)))
    }

    fn info(&self) -> EngineInfo {
        self.info.clone()
    }

    fn op_timeout(&self) -> Option<std::time::Duration> {
        self.inner.options.timeout
    }

    /// The first member's own `/metrics` (served on its client port):
    /// proposals, WAL fsync and backend commit time, the database's size,
    /// requests by method and the member's CPU and memory.
    fn statistics(&self) -> Option<Box<dyn yardstick_core::observe::Source>> {
        use yardstick_core::observe::scrape::{Endpoint, Keep, Scrape, ETCD_SET};
        let first = self.inner.endpoints.first()?;
        let source: Box<dyn yardstick_core::observe::Source> = match first.strip_prefix("http://") {
            Some(host) => match Endpoint::parse(&format!("http://{host}/metrics")) {
                Ok(e) => Box::new(Scrape::database(
                    "etcd",
                    e,
                    Keep::Set(ETCD_SET),
                    "check that the member runs; etcd serves /metrics on its client port",
                )),
                Err(why) => Box::new(yardstick_core::observe::Absent { name: "etcd".into(), why, warn: true }),
            },
            // the page is plain HTTP only here
            None => Box::new(yardstick_core::observe::Absent {
                name: "etcd".into(),
                why: "etcd's /metrics over TLS is not read: start the member with --listen-metrics-urls http://HOST:PORT and pass --observe http://HOST:PORT/metrics --observe-metric 'etcd_*'".into(),
                warn: true,
            }),
        };
        Some(source)
    }
}

pub(crate) struct EtcdSession {
    inner: Arc<Inner>,
    kv: Client,
    key: Vec<u8>,
    value: Vec<u8>,
}

fn failed(e: tonic::Status) -> Outcome {
    Outcome::failed(status_of(&e), error_text(&e))
}

/// A gRPC status in one line: the server's message and the status code.
fn error_text(e: &tonic::Status) -> String {
    let message = if e.message().is_empty() {
        e.code().description()
    } else {
        e.message()
    };
    yardstick_core::error::ServerError::new("gRPC status", format!("{:?}", e.code()), message)
        .to_string()
}

impl EtcdSession {
    /// A one-key read, linearizable or serializable as configured.
    fn point(&self, key: Vec<u8>) -> RangeRequest {
        RangeRequest {
            key,
            serializable: self.inner.serializable,
            ..RangeRequest::default()
        }
    }

    fn full_key(&mut self, key: &[u8]) -> Vec<u8> {
        self.key.clear();
        self.key.extend_from_slice(&self.inner.prefix);
        self.key.extend_from_slice(key);
        self.key.clone()
    }

    /// Writes `self.value` to `key` if `when` holds; whether it did.
    async fn put_if(&mut self, key: Vec<u8>, when: Vec<Compare>) -> Result<bool, Outcome> {
        self.kv
            .put_if(when, key, self.value.clone())
            .await
            .map_err(failed)
    }

    async fn write(&mut self, key: &[u8], values: &WriteSet, insert: bool) -> Outcome {
        let full = self.full_key(key);
        let n = self.inner.fields;
        let bytes = values.bytes();
        let upsert = if insert {
            self.inner.insert_mode == InsertMode::Upsert
        } else {
            self.inner.update_mode == UpdateMode::Upsert
        };
        if insert || kv::is_whole(n, values) {
            kv::encode(n, values, &mut self.value);
            if upsert {
                return match self.kv.put(full, self.value.clone()).await {
                    Ok(_) => Outcome::ok(0, bytes),
                    Err(e) => failed(e),
                };
            }
            let (cmp, absent) = if insert {
                (CompareOp::Equal, Status::DuplicateKey)
            } else {
                (CompareOp::Greater, Status::NotFound)
            };
            let when = vec![Compare::create_revision(full.clone(), cmp, 0)];
            return match self.put_if(full, when).await {
                Ok(true) => Outcome::ok(0, bytes),
                Ok(false) => Outcome::of(absent),
                Err(o) => o,
            };
        }
        for _ in 0..CAS_ATTEMPTS {
            let got = match self.kv.range(self.point(full.clone())).await {
                Ok(r) => r,
                Err(e) => return failed(e),
            };
            let when = match got.kvs.into_iter().next() {
                None if !upsert => return Outcome::of(Status::NotFound),
                None => {
                    kv::encode(n, values, &mut self.value);
                    vec![Compare::create_revision(full.clone(), CompareOp::Equal, 0)]
                }
                Some(old) => {
                    if let Err(e) = kv::merge(n, &old.value, values, &mut self.value) {
                        return Outcome::failed(Status::Error, e);
                    }
                    vec![Compare::mod_revision(
                        full.clone(),
                        CompareOp::Equal,
                        old.mod_revision,
                    )]
                }
            };
            match self.put_if(full.clone(), when).await {
                Ok(true) => return Outcome::ok(0, bytes),
                Ok(false) => continue,
                Err(o) => return o,
            }
        }
        Outcome::failed(
            Status::Conflict,
            format!("record changed under {CAS_ATTEMPTS} compare-and-swap attempts in a row"),
        )
    }
}

impl Session for EtcdSession {
    async fn read(&mut self, key: &[u8], fields: Fields, out: &mut Record) -> Outcome {
        let full = self.full_key(key);
        match self.kv.range(self.point(full)).await {
            Ok(r) => match r.kvs.into_iter().next() {
                Some(kvp) => match kv::decode(self.inner.fields, &kvp.value, fields, out) {
                    Ok(bytes) => Outcome::ok(1, bytes),
                    Err(e) => Outcome::failed(Status::Error, e),
                },
                None => Outcome::of(Status::NotFound),
            },
            Err(e) => failed(e),
        }
    }

    async fn scan(
        &mut self,
        start: &[u8],
        count: u64,
        fields: Fields,
        out: &mut ScanRows,
    ) -> Outcome {
        let range = RangeRequest {
            key: self.full_key(start),
            range_end: self.inner.prefix_end.clone(),
            limit: count.min(i64::MAX as u64) as i64,
            serializable: self.inner.serializable,
        };
        let r = match self.kv.range(range).await {
            Ok(r) => r,
            Err(e) => return failed(e),
        };
        let (mut n, mut bytes) = (0, 0);
        for kvp in r.kvs {
            let key = &kvp.key[self.inner.prefix.len()..];
            match kv::decode(self.inner.fields, &kvp.value, fields, out.push(key)) {
                Ok(b) => bytes += b,
                Err(e) => return Outcome::failed(Status::Error, e),
            }
            n += 1;
        }
        Outcome::ok(n, bytes)
    }

    async fn update(&mut self, key: &[u8], values: &WriteSet) -> Outcome {
        self.write(key, values, false).await
    }

    async fn insert(&mut self, key: &[u8], values: &WriteSet) -> Outcome {
        self.write(key, values, true).await
    }

    async fn delete(&mut self, key: &[u8]) -> Outcome {
        let full = self.full_key(key);
        match self.kv.delete(full, Vec::new()).await {
            Ok(r) if r.deleted == 0 => Outcome::of(Status::NotFound),
            Ok(_) => Outcome::ok(0, 0),
            Err(e) => failed(e),
        }
    }
}

#[cfg(test)]
mod tests;
