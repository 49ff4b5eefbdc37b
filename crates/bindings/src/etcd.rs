//! `etcd://[user:password@]host1:2379,host2:2379,host3:2379`: etcd's v3 API
//! over gRPC (`etcd-client`, tonic), requests balanced over every listed member.
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
use crate::kv;
use crate::net::run_cold;
use crate::url::Target;
use etcd_client::{Client, Compare, CompareOp, ConnectOptions, GetOptions, KvClient, Txn, TxnOp};
use std::collections::BTreeMap;
use std::sync::Arc;
use yardstick_core::binding::*;

/// yardstick's own URL options.
pub const OPTIONS: &[&str] = &[
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

pub struct EtcdBinding {
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

fn status_of(e: &etcd_client::Error) -> Status {
    use etcd_client::Error as E;
    match e {
        E::GRpcStatus(s) => match s.code() {
            tonic::Code::DeadlineExceeded => Status::Timeout,
            tonic::Code::Unavailable | tonic::Code::Cancelled => Status::Unavailable,
            _ if s.message().contains("leader changed")
                || s.message().contains("no leader")
                || s.message().contains("timed out") =>
            {
                Status::Unavailable
            }
            _ => Status::Error,
        },
        E::TransportError(_) | E::IoError(_) => Status::Unavailable,
        _ => Status::Error,
    }
}

fn open_error(endpoints: &[String], e: &etcd_client::Error) -> BindingError {
    let text = e.to_string();
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

impl EtcdBinding {
    pub fn open(target: &Target, opts: &OpenOptions) -> Result<Self, BindingError> {
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
            .map(|h| {
                if h.contains(':') {
                    format!("{scheme}://{h}")
                } else {
                    format!("{scheme}://{h}:2379")
                }
            })
            .collect();
        if endpoints.is_empty() {
            return Err(BindingError::Config(
                "etcd:// needs at least one member: etcd://host1:2379,host2:2379,host3:2379".into(),
            ));
        }
        let mut options = ConnectOptions::new()
            .with_timeout(target.duration("timeout", 10)?)
            .with_connect_timeout(target.duration("connect_timeout", 5)?);
        if let Some(u) = userinfo {
            let (user, password) = u.split_once(':').unwrap_or((u, ""));
            options = options.with_user(user, password);
        }
        let tls = tls_ca.is_some();
        if let Some(pem) = tls_ca {
            options = options.with_tls(
                etcd_client::TlsOptions::new()
                    .ca_certificate(etcd_client::Certificate::from_pem(pem)),
            );
        }
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
        let (version, members, leader, db_size) = run_cold(async {
            let mut c = Client::connect(&inner.endpoints, Some(inner.options.clone()))
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
                .members()
                .len();
            Ok((
                status.version().to_string(),
                members,
                status.leader(),
                status.db_size(),
            ))
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
    type Session = EtcdSession;

    async fn session(&self) -> Result<EtcdSession, BindingError> {
        // the channel's tasks run on this worker's runtime
        let client = Client::connect(&self.inner.endpoints, Some(self.inner.options.clone()))
            .await
            .map_err(|e| open_error(&self.inner.endpoints, &e))?;
        Ok(EtcdSession {
            inner: self.inner.clone(),
            kv: client.kv_client(),
            key: Vec::new(),
            value: Vec::new(),
        })
    }

    fn info(&self) -> EngineInfo {
        self.info.clone()
    }
}

pub struct EtcdSession {
    inner: Arc<Inner>,
    kv: KvClient,
    key: Vec<u8>,
    value: Vec<u8>,
}

fn failed(e: etcd_client::Error) -> Outcome {
    Outcome::failed(status_of(&e), e)
}

impl EtcdSession {
    fn full_key(&mut self, key: &[u8]) -> Vec<u8> {
        self.key.clear();
        self.key.extend_from_slice(&self.inner.prefix);
        self.key.extend_from_slice(key);
        self.key.clone()
    }

    fn get_options(&self) -> Option<GetOptions> {
        self.inner
            .serializable
            .then(|| GetOptions::new().with_serializable())
    }

    /// Writes `self.value` to `key` if `when` holds; whether it did.
    async fn put_if(&mut self, key: Vec<u8>, when: Vec<Compare>) -> Result<bool, Outcome> {
        let txn = Txn::new()
            .when(when)
            .and_then([TxnOp::put(key, self.value.clone(), None)]);
        self.kv
            .txn(txn)
            .await
            .map(|r| r.succeeded())
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
                return match self.kv.put(full, self.value.clone(), None).await {
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
                Ok(false) => Outcome::status(absent),
                Err(o) => o,
            };
        }
        for _ in 0..CAS_ATTEMPTS {
            let mut got = match self.kv.get(full.clone(), None).await {
                Ok(r) => r,
                Err(e) => return failed(e),
            };
            let when = match got.take_kvs().into_iter().next() {
                None if !upsert => return Outcome::status(Status::NotFound),
                None => {
                    kv::encode(n, values, &mut self.value);
                    vec![Compare::create_revision(full.clone(), CompareOp::Equal, 0)]
                }
                Some(old) => {
                    if let Err(e) = kv::merge(n, old.value(), values, &mut self.value) {
                        return Outcome::failed(Status::Error, e);
                    }
                    vec![Compare::mod_revision(
                        full.clone(),
                        CompareOp::Equal,
                        old.mod_revision(),
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
        let options = self.get_options();
        match self.kv.get(full, options).await {
            Ok(mut r) => match r.take_kvs().into_iter().next() {
                Some(kvp) => match kv::decode(self.inner.fields, kvp.value(), fields, out) {
                    Ok(bytes) => Outcome::ok(1, bytes),
                    Err(e) => Outcome::failed(Status::Error, e),
                },
                None => Outcome::status(Status::NotFound),
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
        let from = self.full_key(start);
        let mut options = GetOptions::new()
            .with_range(self.inner.prefix_end.clone())
            .with_limit(count.min(i64::MAX as u64) as i64);
        if self.inner.serializable {
            options = options.with_serializable();
        }
        let mut r = match self.kv.get(from, Some(options)).await {
            Ok(r) => r,
            Err(e) => return failed(e),
        };
        let (mut n, mut bytes) = (0, 0);
        for kvp in r.take_kvs() {
            let key = &kvp.key()[self.inner.prefix.len()..];
            match kv::decode(self.inner.fields, kvp.value(), fields, out.push(key)) {
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
        match self.kv.delete(full, None).await {
            Ok(r) if r.deleted() == 0 => Outcome::status(Status::NotFound),
            Ok(_) => Outcome::ok(0, 0),
            Err(e) => failed(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn server_url() -> String {
        std::env::var("YARDSTICK_ETCD_URL")
            .unwrap_or_else(|_| "etcd://127.0.0.1:52379,127.0.0.1:52479,127.0.0.1:52579".into())
    }

    fn available() -> bool {
        let first = server_url().replace(',', "/");
        crate::testing::server_available("etcd", &first, "scripts/services start etcd")
    }

    fn open_url(url: &str, opts: &OpenOptions) -> Result<EtcdBinding, BindingError> {
        EtcdBinding::open(&Target::parse(url)?, opts)
    }

    fn open_fresh(opts: &OpenOptions) -> Result<EtcdBinding, BindingError> {
        open_url(
            &format!(
                "{}?prefix={}/",
                server_url(),
                crate::net::unique_name("conf")
            ),
            opts,
        )
    }

    yardstick_core::conformance_suite!(open_fresh, available);

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
            scans: true,
        }
    }

    /// Serializable reads come from whichever member the channel picks and may
    /// trail the leader, so they do not promise read-your-writes (the
    /// conformance suite's premise); they must still see a write shortly.
    #[test]
    fn serializable_reads_are_recorded_and_catch_up_with_writes() {
        if !available() {
            return;
        }
        let url = format!(
            "{}?consistency=serializable&prefix={}/",
            server_url(),
            crate::net::unique_name("ser")
        );
        let b = open_url(&url, &opts()).unwrap();
        assert_eq!(b.info().settings["reads"], "serializable (local member)");
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let mut s = b.session().await.unwrap();
            let mut ws = WriteSet::default();
            ws.push(0).extend_from_slice(b"v");
            assert_eq!(s.insert(b"k", &ws).await.status, Status::Ok);
            let mut rec = Record::with_fields(1);
            let mut seen = false;
            for _ in 0..100 {
                if s.read(b"k", Fields::All, &mut rec).await.status == Status::Ok {
                    seen = true;
                    break;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            assert!(seen, "a serializable read never saw the write");
        });
    }

    #[test]
    fn prefix_ends_bound_scans_to_the_prefix() {
        assert_eq!(prefix_end(b"abc/"), b"abc0".to_vec());
        assert_eq!(prefix_end(b"a\xff"), b"b".to_vec());
        assert_eq!(prefix_end(b""), vec![0]);
    }

    #[test]
    fn cluster_facts_are_recorded_and_bad_urls_are_one_clear_line() {
        let e = open_url("etcd://127.0.0.1:1", &opts())
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("cannot connect to etcd at http://127.0.0.1:1"),
            "{e}"
        );
        let e = open_url(&format!("{}?consistency=eventual", server_url()), &opts())
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("consistency=eventual is not known"), "{e}");
        if !available() {
            return;
        }
        let b = open_fresh(&opts()).unwrap();
        let info = b.info();
        assert!(info.version.starts_with("3."), "{}", info.version);
        assert_eq!(info.settings["cluster_members"], "3");
        assert_eq!(info.settings["reads"], "linearizable (quorum)");
    }

    /// A private single-member etcd serving TLS with the test CA's certificate.
    #[test]
    fn tls_with_the_test_ca_connects_and_is_recorded() {
        if !available() {
            return;
        }
        let tls = std::path::PathBuf::from(crate::testing::test_ca());
        let tls = tls.parent().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let port = |l: &std::net::TcpListener| l.local_addr().unwrap().port();
        let (a, b) = (
            std::net::TcpListener::bind("127.0.0.1:0").unwrap(),
            std::net::TcpListener::bind("127.0.0.1:0").unwrap(),
        );
        let (client, peer) = (port(&a), port(&b));
        drop((a, b));
        let mut etcd = std::process::Command::new("etcd")
            .args([
                "--name",
                "t",
                "--data-dir",
                dir.path().join("d").to_str().unwrap(),
                "--listen-client-urls",
                &format!("https://127.0.0.1:{client}"),
                "--advertise-client-urls",
                &format!("https://127.0.0.1:{client}"),
                "--listen-peer-urls",
                &format!("http://127.0.0.1:{peer}"),
                "--initial-advertise-peer-urls",
                &format!("http://127.0.0.1:{peer}"),
                "--initial-cluster",
                &format!("t=http://127.0.0.1:{peer}"),
                "--cert-file",
                tls.join("server.crt").to_str().unwrap(),
                "--key-file",
                tls.join("server.key").to_str().unwrap(),
                "--unsafe-no-fsync",
            ])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("etcd runs");
        let url = format!(
            "etcd://127.0.0.1:{client}?tls_ca={}",
            crate::testing::test_ca()
        );
        let mut opened = Err(BindingError::Io("not tried".into()));
        for _ in 0..100 {
            opened = open_url(&url, &opts());
            if opened.is_ok() {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let b = opened.unwrap();
        assert_eq!(b.info().settings["tls"], "true");
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let mut s = b.session().await.unwrap();
            let mut ws = WriteSet::default();
            ws.push(0).extend_from_slice(b"over tls");
            assert_eq!(s.insert(b"k", &ws).await.status, Status::Ok);
        });
        // plain HTTP to a TLS member fails at open, in one line
        let e = open_url(
            &format!("etcd://127.0.0.1:{client}?connect_timeout=2s&timeout=2s"),
            &opts(),
        )
        .err()
        .unwrap()
        .to_string();
        assert!(e.contains("cannot connect to etcd"), "{e}");
        let _ = etcd.kill();
        let _ = etcd.wait();
    }
}
