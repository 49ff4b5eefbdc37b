//! `mongodb://[user:password@]host:port/database[?w=majority&readPreference=...]`:
//! MongoDB and MongoDB-protocol servers through the official async driver.
//!
//! One document per record: `{_id: key, field0: <binary>, ...}` in collection
//! `table`, as YCSB's binding stores it. `insert` is `insertOne` (duplicate
//! key error 11000 = `DuplicateKey`) or `replaceOne(upsert)`; `update` is
//! `updateOne($set)` with or without `upsert`; a scan is
//! `find({_id: {$gte: start}}).sort({_id: 1}).limit(n)`; batch load is
//! `insertMany` (unordered). Write concern, read concern and read preference
//! come from the URL (the driver's own options) and are recorded.
use yardstick_core::run::run_cold;
use crate::url::Target;
use yardstick_core::bounded::Bounded;
use mongodb::bson::{doc, Document};
use mongodb::error::ErrorKind;
use mongodb::options::ClientOptions;
use mongodb::Client;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::thread::ThreadId;
use crate::registry::{Capabilities, Descriptor, Registered};
use yardstick_core::binding::*;

mod session;
use session::MongoSession;

/// MongoDB's duplicate key error code.
const DUPLICATE_KEY: i32 = 11000;

/// yardstick adds no options of its own: every query option is the driver's
/// (w, journal, readPreference, readConcernLevel, maxPoolSize, tls, authSource, ...).
/// yardstick's own URL options; the driver reads every other one.
pub(crate) const OPTIONS: &[&str] = &[
    "timeout",
    "connect_timeout",
    // the driver's connection string options (lower-cased: they are
    // case-insensitive), passed on to it
    "appname",
    "authmechanism",
    "authmechanismproperties",
    "authsource",
    "compressors",
    "connecttimeoutms",
    "directconnection",
    "heartbeatfrequencyms",
    "journal",
    "loadbalanced",
    "localthresholdms",
    "maxconnecting",
    "maxidletimems",
    "maxpoolsize",
    "maxstalenessseconds",
    "minpoolsize",
    "readconcernlevel",
    "readpreference",
    "readpreferencetags",
    "replicaset",
    "retryreads",
    "retrywrites",
    "serverselectiontimeoutms",
    "sockettimeoutms",
    "ssl",
    "tls",
    "tlsallowinvalidcertificates",
    "tlsallowinvalidhostnames",
    "tlscafile",
    "tlscertificatekeyfile",
    "tlscertificatekeyfilepassword",
    "tlsinsecure",
    "w",
    "waitqueuetimeoutms",
    "wtimeoutms",
    "zlibcompressionlevel",
];

/// yardstick's own options, which the driver does not get.
const OWN_OPTIONS: &[&str] = &["timeout", "connect_timeout"];

struct Inner {
    options: ClientOptions,
    database: String,
    table: String,
    fields: Vec<String>,
    insert_mode: InsertMode,
    update_mode: UpdateMode,
    /// One client (a connection pool) per worker thread: the driver's
    /// background tasks run on the runtime that created it.
    clients: Mutex<Vec<(ThreadId, Client)>>,
}

pub(crate) struct MongoBinding {
    inner: Arc<Inner>,
    info: EngineInfo,
    /// Each call's limit (the URL's `timeout`).
    timeout: std::time::Duration,
}

/// The URL without yardstick's own options, for the driver.
fn driver_url(target: &Target) -> String {
    let (base, query) = target.url.split_once('?').unwrap_or((&target.url, ""));
    let kept: Vec<&str> = query
        .split('&')
        .filter(|p| !p.is_empty() && !OWN_OPTIONS.contains(&p.split('=').next().unwrap_or("")))
        .collect();
    if kept.is_empty() {
        base.to_string()
    } else {
        format!("{base}?{}", kept.join("&"))
    }
}

/// Refuses at once a server that refuses connections: the driver would
/// keep selecting a server until its timeout.
async fn reachable(o: &ClientOptions, within: std::time::Duration) -> Result<(), String> {
    let mut last = String::new();
    for h in &o.hosts {
        let addr = h.to_string();
        match tokio::time::timeout(within, tokio::net::TcpStream::connect(&addr)).await {
            Ok(Ok(_)) => return Ok(()),
            Ok(Err(e)) => last = format!("{addr}: {e}"),
            Err(_) => last = format!("{addr}: no answer within {within:?}"),
        }
    }
    Err(last)
}

fn describe(o: &ClientOptions) -> String {
    o.hosts
        .iter()
        .map(|h| h.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// The driver's own words, without its Debug-formatted labels and sources.
fn driver_message(e: &mongodb::error::Error) -> String {
    match &*e.kind {
        ErrorKind::InvalidArgument { message, .. } => message.clone(),
        _ => {
            let text = e.to_string();
            let text = text.strip_prefix("Kind: ").unwrap_or(&text);
            text.split(", labels:").next().unwrap_or(text).to_string()
        }
    }
}

fn open_error(server: &str, e: &mongodb::error::Error) -> BindingError {
    match &*e.kind {
        ErrorKind::Authentication { .. } => BindingError::Unavailable(format!(
            "MongoDB at {server} refused the login: wrong user or password; fix the credentials in --db"
        )),
        _ => BindingError::Unavailable(format!(
            "cannot connect to MongoDB at {server}: {}; check that the server runs and the URL is right",
            driver_message(e)
        )),
    }
}

impl Registered for MongoBinding {
    const DESCRIPTOR: Descriptor = Descriptor {
        schemes: &["mongodb"],
        server_port: Some(27017),
        flavours: &[],
        description: "MongoDB protocol (official driver): one document per record, insertMany batches; write concern and read preference from the URL",
        example: "mongodb://127.0.0.1:27017/ycsb?w=majority",
        docs: "docs/bindings/mongodb.md",
        options: OPTIONS,
        capabilities: Capabilities {
            batch_load: true,
            scan: true,
            tpcc: None,
        },
    };

    fn open(target: &Target, opts: &OpenOptions) -> Result<Self, BindingError> {
        let target = &target.with_password(&[], false);
        target.allow_only(OPTIONS)?;
        let timeout = target.op_timeout()?;
        let connect_timeout = target.connect_timeout()?;
        let driver_url = driver_url(target);
        let url = driver_url.as_str();
        crate::net::use_ring_for_tls();
        let parsed = run_cold(target.setup_limit()?, async {
            ClientOptions::parse(url).await.map_err(|e| {
                BindingError::Config(format!(
                    "{} is not a MongoDB URL ({}); use mongodb://[user:password@]host:port/database",
                    yardstick_core::result::redact_url(url),
                    driver_message(&e)
                ))
            })
        })?;
        let mut options = parsed;
        let database = options.default_database.clone().ok_or_else(|| {
            BindingError::Config(
                "the MongoDB URL names no database: use mongodb://host:port/database".into(),
            )
        })?;
        if options.server_selection_timeout.is_none() {
            options.server_selection_timeout = Some(connect_timeout);
        }
        if options.connect_timeout.is_none() {
            options.connect_timeout = Some(connect_timeout);
        }
        if options.app_name.is_none() {
            options.app_name = Some("yardstick".into());
        }
        if options.max_pool_size.is_none() {
            // every in-flight slot gets a connection
            options.max_pool_size = Some(opts.sessions.clamp(10, 10_000) as u32);
        }
        let server = describe(&options);
        let inner = Inner {
            options,
            database,
            table: opts.schema.table.clone(),
            fields: opts.schema.fields.clone(),
            insert_mode: opts.insert_mode,
            update_mode: opts.update_mode,
            clients: Mutex::new(Vec::new()),
        };
        let (build, collections) = run_cold(target.setup_limit()?, async {
            reachable(&inner.options, connect_timeout).await.map_err(|e| {
                BindingError::Unavailable(format!(
                    "cannot connect to MongoDB at {server}: {e}; check that the server runs and the URL is right"
                ))
            })?;
            let client =
                Client::with_options(inner.options.clone()).map_err(|e| open_error(&server, &e))?;
            let db = client.database(&inner.database);
            let build = db
                .run_command(doc! {"buildInfo": 1})
                .await
                .map_err(|e| open_error(&server, &e))?;
            let collections = db
                .list_collection_names()
                .await
                .map_err(|e| open_error(&server, &e))?;
            Ok((build, collections))
        })?;
        if !opts.create && !collections.contains(&inner.table) {
            return Err(BindingError::Unavailable(format!(
                "collection {} does not exist in database {} at {server}: run `yardstick load` with the same --db first",
                inner.table, inner.database
            )));
        }
        let mut settings = BTreeMap::new();
        let o = &inner.options;
        settings.insert(
            "write_concern".into(),
            o.write_concern
                .as_ref()
                .map_or("server default".into(), |w| format!("{w:?}")),
        );
        settings.insert(
            "read_concern".into(),
            o.read_concern
                .as_ref()
                .map_or("server default".into(), |r| format!("{r:?}")),
        );
        settings.insert(
            "read_preference".into(),
            o.selection_criteria
                .as_ref()
                .map_or("primary".into(), |s| format!("{s:?}")),
        );
        settings.insert(
            "max_pool_size".into(),
            o.max_pool_size.unwrap_or(0).to_string(),
        );
        settings.insert("tls".into(), format!("{}", o.tls.is_some()));
        if let Ok(f) = build.get_str("ferretdbVersion") {
            settings.insert("ferretdb_version".into(), f.to_string());
        }
        let name = if build.contains_key("ferretdbVersion") {
            "ferretdb"
        } else {
            "mongodb"
        };
        let info = EngineInfo {
            name: name.into(),
            version: build.get_str("version").unwrap_or("unknown").to_string(),
            settings,
        };
        Ok(MongoBinding {
            inner: Arc::new(inner),
            info,
            timeout,
        })
    }
}

impl Binding for MongoBinding {
    type Session = Bounded<MongoSession>;

    async fn session(&self) -> Result<Self::Session, BindingError> {
        let me = std::thread::current().id();
        let mut clients = self.inner.clients.lock().unwrap_or_else(|p| p.into_inner());
        let client = match clients.iter().find(|(t, _)| *t == me) {
            Some((_, c)) => c.clone(),
            None => {
                let c = Client::with_options(self.inner.options.clone())
                    .map_err(|e| open_error(&describe(&self.inner.options), &e))?;
                clients.push((me, c.clone()));
                c
            }
        };
        drop(clients);
        let session = MongoSession {
            coll: client
                .database(&self.inner.database)
                .collection::<Document>(&self.inner.table),
            inner: self.inner.clone(),
        };
        Ok(Bounded::new(session, self.timeout))
    }

    fn info(&self) -> EngineInfo {
        self.info.clone()
    }

    fn op_timeout(&self) -> Option<std::time::Duration> {
        Some(self.timeout)
    }
}

#[cfg(test)]
mod tests;
