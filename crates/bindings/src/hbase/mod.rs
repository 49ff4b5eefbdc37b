//! `hbase://host:port[/namespace]`: HBase 2.x through its Thrift2 gateway
//! (`hbase thrift2 -f`: framed transport, binary protocol), with a client
//! of our own ([`thrift`], [`client`]) on tokio, one connection per session.
//! The gateway is the usual non-JVM path to HBase (HBase's native RPC is
//! protobuf over a Java-specific handshake); it costs one extra hop, which
//! the gateway's own client pipelines to the region servers.
//!
//! The layout is YCSB's hbase2 binding's: the YCSB table (the `table`
//! property) in `namespace` (default `default`), one column family (`family`,
//! default `family`), a record is a row keyed by the YCSB key with one
//! qualifier per field. A blind `put` writes (upsert semantics); `insert`
//! semantics is `checkAndMutate` that puts only while the row's first field
//! is absent, `update` semantics one that puts only while it is present, and
//! `delete` deletes only a present row (so a missing key is `not_found`).
//! A scan is one `getScannerResults` from the start key. The batch load is
//! `putMultiple`. A table the binding creates has one region; pre-split a
//! large one with HBase's shell, as YCSB's documentation does.
mod client;
mod info;
mod stats;
mod session;
mod thrift;

use crate::registry::{Capabilities, Descriptor, Registered};
use crate::url::Target;
use client::{CallError, Conn, Layout};
use std::sync::Arc;
use std::time::Duration;
use yardstick_core::binding::*;
use yardstick_core::run::run_cold;

/// yardstick's own URL options.
pub(crate) const OPTIONS: &[&str] = &[
    "family",
    "durability",
    "compression",
    "timeout",
    "connect_timeout",
    "info",
];

/// TDurability by its option value.
const DURABILITY: &[(&str, i32)] = &[
    ("default", 0),
    ("skip_wal", 1),
    ("async_wal", 2),
    ("sync_wal", 3),
    ("fsync_wal", 4),
];

/// TCompressionAlgorithm by its option value (the codec must be available
/// to the region servers).
const COMPRESSION: &[(&str, i32)] = &[
    ("none", 2),
    ("gz", 1),
    ("snappy", 3),
    ("lz4", 4),
    ("zstd", 6),
];

struct Inner {
    addr: String,
    layout: Layout,
    insert_mode: InsertMode,
    update_mode: UpdateMode,
    timeout: Duration,
    connect_timeout: Duration,
    namespace: Vec<u8>,
    /// The table's name within its namespace.
    name: Vec<u8>,
}

pub(crate) struct HbaseBinding {
    inner: Arc<Inner>,
    info: EngineInfo,
    /// The info server observation reads (HOST:PORT).
    info_addr: String,
}

/// The value of option `name` among `choices`, or its default (the first).
fn choice(target: &Target, name: &str, choices: &[(&str, i32)]) -> Result<i32, BindingError> {
    let Some(v) = target.param(name) else {
        return Ok(choices[0].1);
    };
    choices
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(v))
        .map(|(_, c)| *c)
        .ok_or_else(|| {
            let names: Vec<&str> = choices.iter().map(|(k, _)| *k).collect();
            BindingError::Config(format!(
                "hbase {name}={v} is not one of {}",
                names.join(", ")
            ))
        })
}

impl Registered for HbaseBinding {
    const DESCRIPTOR: Descriptor = Descriptor {
        schemes: &["hbase"],
        server_port: Some(9090),
        flavours: &[],
        description: "HBase 2.x through its Thrift2 gateway (framed binary protocol, own client): get/put/checkAndMutate/scan, putMultiple batch load",
        example: "hbase://127.0.0.1:9090/default?family=family",
        docs: "docs/bindings/hbase.md",
        options: OPTIONS,
        capabilities: Capabilities {
            batch_load: true,
            scan: true,
            tpcc: None,
        },
    };

    fn open(target: &Target, opts: &OpenOptions) -> Result<Self, BindingError> {
        target.allow_only(OPTIONS)?;
        let (authority, path) = target.rest.split_once('/').unwrap_or((&target.rest, ""));
        if authority.contains('@') {
            return Err(BindingError::Unsupported(
                "the HBase Thrift2 gateway takes no user:password (it authenticates with Kerberos/SASL, which yardstick does not speak); remove it from the URL".into(),
            ));
        }
        let addr = match authority {
            "" => "127.0.0.1:9090".to_string(),
            a => crate::url::host_port(a, 9090, "hbase")?,
        };
        if let Some(info) = target.param("info") {
            crate::url::host_port(info, 16010, "hbase info=")?;
        }
        let namespace = match path.trim_matches('/') {
            "" => "default",
            ns => ns,
        };
        if !namespace.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return Err(BindingError::Config(format!(
                "'{namespace}' is not an HBase namespace: use letters, digits and _ (hbase://host:port/NAMESPACE)"
            )));
        }
        let family = target.param("family").unwrap_or("family");
        if family.is_empty() || family.contains(':') {
            return Err(BindingError::Config(
                "family must be a non-empty column family name without ':'".into(),
            ));
        }
        let inner = Inner {
            addr,
            layout: Layout {
                table: format!("{namespace}:{}", opts.schema.table).into_bytes(),
                family: family.as_bytes().to_vec(),
                qualifiers: opts.schema.fields.iter().map(|f| f.as_bytes().to_vec()).collect(),
                durability: choice(target, "durability", DURABILITY)?,
            },
            insert_mode: opts.insert_mode,
            update_mode: opts.update_mode,
            timeout: target.op_timeout()?,
            connect_timeout: target.connect_timeout()?,
            namespace: namespace.as_bytes().to_vec(),
            name: opts.schema.table.as_bytes().to_vec(),
        };
        let compression = choice(target, "compression", COMPRESSION)?;
        let gateway = format!("the HBase Thrift2 gateway at {}", inner.addr);
        let refused = |e: CallError| match e {
            CallError::Server(s) => BindingError::Unavailable(format!("{gateway} refused: {s}")),
            e => BindingError::Unavailable(format!(
                "cannot use {gateway}: {e}; check that HBase and `hbase thrift2 -f` run and the URL is right"
            )),
        };
        let (ns, name) = (&inner.namespace, &inner.name);
        let opened = run_cold(target.setup_limit()?, async {
            let mut c = Conn::connect(&inner.addr, inner.connect_timeout)
                .await
                .map_err(|e| {
                    BindingError::Unavailable(format!(
                        "cannot connect to {gateway}: {e}; check that `hbase thrift2 -f` runs and the URL is right"
                    ))
                })?;
            let work = async {
                let exists = c.table_call("tableExists", ns, name).await?;
                if !exists && opts.create {
                    if ns.as_slice() != b"default" {
                        c.create_namespace(ns).await?;
                    }
                    let f = &inner.layout.family;
                    c.create_table(ns, name, f, compression).await?;
                } else if !exists {
                    return Ok(None);
                }
                let settings = c.family_settings(ns, name, &inner.layout.family).await?;
                Ok(Some((settings, !exists)))
            };
            // schema calls are not operations of the run: run_cold's
            // setup limit bounds them
            work.await.map_err(refused)
        })?;
        let Some((family_settings, created)) = opened else {
            return Err(BindingError::Unavailable(format!(
                "HBase has no table {}:{} : run `yardstick load` first (it creates the table)",
                namespace, opts.schema.table
            )));
        };
        if family_settings.is_empty() {
            return Err(BindingError::Config(format!(
                "table {}:{} has no column family '{family}': give its family with ?family=NAME",
                namespace, opts.schema.table
            )));
        }
        let info_addr = info::info_addr(&inner, target.param("info"));
        let info = info::engine_info(&inner, &info_addr, family_settings, created);
        Ok(HbaseBinding {
            inner: Arc::new(inner),
            info,
            info_addr,
        })
    }
}

#[cfg(test)]
mod tests;
