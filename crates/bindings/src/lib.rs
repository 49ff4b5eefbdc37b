//! yardstick's database bindings: one module per database, optional ones
//! behind cargo features, and one dispatch table from URL scheme to binding.
//!
//! | scheme | module | feature |
//! |---|---|---|
//! | `null://` | [`null`] | always built |
//! | `sqlite://` | [`sqlite`] | `sqlite` (default; SQLite is bundled) |
//! | `postgres://`, `postgresql://` | `postgres` | `postgres` |
//! | `redis://`, `rediss://` | `redis` | `redis` |
//! | `memcached://` | `memcached` | `memcached` |
//! | `mysql://`, `mariadb://` | `mysql` | `mysql` |
//! | `etcd://` | `etcd` | `etcd` (needs protoc to build) |
//! | `cql://` | `cql` | `cql` |
//! | `mongodb://` | `mongodb` | `mongodb` |
//! | `rocksdb://` | `embedded::rocksdb` | `rocksdb` (links librocksdb-dev) |
//! | `leveldb://` | `embedded::leveldb` | `leveldb` (links libleveldb-dev) |
//! | `wiredtiger://` | `embedded::wiredtiger` | `wiredtiger` (links libwiredtiger-dev) |
//! | `lmdb://` | `embedded::lmdb` | `lmdb` |
//! | `redb://` | `embedded::redb` | `redb` |
//! | `fjall://` | `embedded::fjall` | `fjall` |
#[cfg(feature = "cql")]
pub mod cql;
pub mod embedded;
#[cfg(feature = "etcd")]
pub mod etcd;
pub mod kv;
#[cfg(feature = "memcached")]
pub mod memcached;
#[cfg(feature = "mongodb")]
pub mod mongodb;
#[cfg(feature = "mysql")]
pub mod mysql;
#[cfg(any(
    feature = "postgres",
    feature = "redis",
    feature = "memcached",
    feature = "mysql",
    feature = "etcd",
    feature = "cql",
    feature = "mongodb"
))]
pub mod net;
pub mod null;
#[cfg(feature = "postgres")]
pub mod postgres;
#[cfg(feature = "redis")]
pub mod redis;
#[cfg(any(feature = "sqlite", feature = "postgres", feature = "mysql"))]
pub mod sql;
#[cfg(feature = "sqlite")]
pub mod sqlite;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod tpcc;
pub mod url;

use std::sync::Arc;
pub use url::Target;
use yardstick_core::binding::{Binding, BindingError, OpenOptions};

/// One entry of the dispatch table.
#[derive(Debug, Clone, Copy)]
pub struct SchemeInfo {
    pub scheme: &'static str,
    pub description: &'static str,
    pub example: &'static str,
    /// Cargo feature that builds it; `None` when always built.
    pub feature: Option<&'static str>,
    pub built: bool,
    pub options: &'static [&'static str],
}

/// Every binding yardstick knows, built in this binary or not.
pub const SCHEMES: &[SchemeInfo] = &[
    SchemeInfo {
        scheme: "null",
        description: "no database: measures the harness itself; ?latency=200us simulates service time, ?store=memory keeps data in memory",
        example: "null://?latency=200us",
        feature: None,
        built: true,
        options: null::OPTIONS,
    },
    SchemeInfo {
        scheme: "sqlite",
        description: "SQLite (bundled), the embedded default",
        example: "sqlite:///tmp/bench.db",
        feature: Some("sqlite"),
        built: cfg!(feature = "sqlite"),
        #[cfg(feature = "sqlite")]
        options: sqlite::OPTIONS,
        #[cfg(not(feature = "sqlite"))]
        options: &[],
    },
    SchemeInfo {
        scheme: "postgres",
        description: "PostgreSQL (tokio-postgres): prepared statements, one connection per in-flight operation",
        example: "postgres://user:password@127.0.0.1:5432/ycsb",
        feature: Some("postgres"),
        built: cfg!(feature = "postgres"),
        #[cfg(feature = "postgres")]
        options: postgres::OPTIONS,
        #[cfg(not(feature = "postgres"))]
        options: &[],
    },
    SchemeInfo {
        scheme: "redis",
        description: "Redis (redis-rs, multiplexed): YCSB's hash-per-record model with a sorted-set index, or ?model=string for GET/SET; rediss:// for TLS",
        example: "redis://:password@127.0.0.1:6379?model=hash&pipeline=1",
        feature: Some("redis"),
        built: cfg!(feature = "redis"),
        #[cfg(feature = "redis")]
        options: redis::OPTIONS,
        #[cfg(not(feature = "redis"))]
        options: &[],
    },
    SchemeInfo {
        scheme: "memcached",
        description: "memcached (text protocol, own client): get/add/set/replace/cas/delete; no scans",
        example: "memcached://127.0.0.1:11211",
        feature: Some("memcached"),
        built: cfg!(feature = "memcached"),
        #[cfg(feature = "memcached")]
        options: memcached::OPTIONS,
        #[cfg(not(feature = "memcached"))]
        options: &[],
    },
    SchemeInfo {
        scheme: "mysql",
        description: "MySQL / MariaDB (mysql_async): server-side prepared statements, one connection per in-flight operation",
        example: "mysql://user:password@127.0.0.1:3306/ycsb",
        feature: Some("mysql"),
        built: cfg!(feature = "mysql"),
        #[cfg(feature = "mysql")]
        options: mysql::OPTIONS,
        #[cfg(not(feature = "mysql"))]
        options: &[],
    },
    SchemeInfo {
        scheme: "etcd",
        description: "etcd v3 (gRPC over tonic): get/put/range/delete, transactions for insert/update semantics, linearizable or serializable reads",
        example: "etcd://127.0.0.1:2379,127.0.0.1:22379,127.0.0.1:32379",
        feature: Some("etcd"),
        built: cfg!(feature = "etcd"),
        #[cfg(feature = "etcd")]
        options: etcd::OPTIONS,
        #[cfg(not(feature = "etcd"))]
        options: &[],
    },
    SchemeInfo {
        scheme: "cql",
        description: "Cassandra / ScyllaDB / YugabyteDB YCQL (scylla driver): prepared statements, token-aware routing, LWT for insert/update semantics, unlogged batches",
        example: "cql://127.0.0.1:9042/ycsb?consistency=quorum&replication=3",
        feature: Some("cql"),
        built: cfg!(feature = "cql"),
        #[cfg(feature = "cql")]
        options: cql::OPTIONS,
        #[cfg(not(feature = "cql"))]
        options: &[],
    },
    SchemeInfo {
        scheme: "mongodb",
        description: "MongoDB protocol (official driver): one document per record, insertMany batches; write concern and read preference from the URL",
        example: "mongodb://127.0.0.1:27017/ycsb?w=majority",
        feature: Some("mongodb"),
        built: cfg!(feature = "mongodb"),
        #[cfg(feature = "mongodb")]
        options: mongodb::OPTIONS,
        #[cfg(not(feature = "mongodb"))]
        options: &[],
    },
    SchemeInfo {
        scheme: "rocksdb",
        description: "RocksDB (the system's librocksdb): block cache, write buffer, compression, bloom filter from the URL",
        example: "rocksdb:///var/tmp/rocks?cache_size=1GiB&compression=lz4",
        feature: Some("rocksdb"),
        built: cfg!(feature = "rocksdb"),
        #[cfg(feature = "rocksdb")]
        options: embedded::rocksdb::OPTIONS,
        #[cfg(not(feature = "rocksdb"))]
        options: &[],
    },
    SchemeInfo {
        scheme: "leveldb",
        description: "LevelDB (the system's libleveldb, C API): cache, block size, compression, bloom filter",
        example: "leveldb:///var/tmp/level?cache_size=512MiB",
        feature: Some("leveldb"),
        built: cfg!(feature = "leveldb"),
        #[cfg(feature = "leveldb")]
        options: embedded::leveldb::OPTIONS,
        #[cfg(not(feature = "leveldb"))]
        options: &[],
    },
    SchemeInfo {
        scheme: "wiredtiger",
        description: "WiredTiger (the system's libwiredtiger): cache size, snappy/zlib block compression, page sizes, log and checkpoints",
        example: "wiredtiger:///var/tmp/wt?cache_size=1GiB",
        feature: Some("wiredtiger"),
        built: cfg!(feature = "wiredtiger"),
        #[cfg(feature = "wiredtiger")]
        options: embedded::wiredtiger::OPTIONS,
        #[cfg(not(feature = "wiredtiger"))]
        options: &[],
    },
    SchemeInfo {
        scheme: "lmdb",
        description: "LMDB (heed; the C library compiled in): memory-mapped B-tree, one write transaction per write",
        example: "lmdb:///var/tmp/lmdb?map_size=64GiB",
        feature: Some("lmdb"),
        built: cfg!(feature = "lmdb"),
        #[cfg(feature = "lmdb")]
        options: embedded::lmdb::OPTIONS,
        #[cfg(not(feature = "lmdb"))]
        options: &[],
    },
    SchemeInfo {
        scheme: "redb",
        description: "redb (pure Rust): copy-on-write B-tree, one write transaction per write",
        example: "redb:///var/tmp/redb?cache_size=1GiB",
        feature: Some("redb"),
        built: cfg!(feature = "redb"),
        #[cfg(feature = "redb")]
        options: embedded::redb::OPTIONS,
        #[cfg(not(feature = "redb"))]
        options: &[],
    },
    SchemeInfo {
        scheme: "fjall",
        description: "fjall (pure Rust): LSM tree with lz4 blocks",
        example: "fjall:///var/tmp/fjall?cache_size=1GiB",
        feature: Some("fjall"),
        built: cfg!(feature = "fjall"),
        #[cfg(feature = "fjall")]
        options: embedded::fjall::OPTIONS,
        #[cfg(not(feature = "fjall"))]
        options: &[],
    },
];

/// Called with the opened binding; generic so the run loop is monomorphic per binding.
pub trait WithBinding {
    type Output;
    fn call<B: Binding>(self, binding: Arc<B>) -> Self::Output;
}

/// Opens the binding for `url` and hands it to `visitor`.
pub fn open<V: WithBinding>(
    url: &str,
    opts: &OpenOptions,
    visitor: V,
) -> Result<V::Output, BindingError> {
    let target = Target::parse(url)?;
    match target.scheme.as_str() {
        "null" => Ok(visitor.call(Arc::new(null::NullBinding::open(&target, opts)?))),
        #[cfg(feature = "sqlite")]
        "sqlite" => Ok(visitor.call(Arc::new(sqlite::SqliteBinding::open(&target, opts)?))),
        #[cfg(feature = "postgres")]
        "postgres" | "postgresql" => Ok(visitor.call(Arc::new(postgres::PostgresBinding::open(
            &target, url, opts,
        )?))),
        #[cfg(feature = "redis")]
        "redis" | "rediss" => {
            Ok(visitor.call(Arc::new(redis::RedisBinding::open(&target, url, opts)?)))
        }
        #[cfg(feature = "memcached")]
        "memcached" => {
            Ok(visitor.call(Arc::new(memcached::MemcachedBinding::open(&target, opts)?)))
        }
        #[cfg(feature = "mysql")]
        "mysql" | "mariadb" => {
            // the driver only knows mysql://
            let url = url
                .strip_prefix("mariadb")
                .map_or_else(|| url.to_string(), |rest| format!("mysql{rest}"));
            Ok(visitor.call(Arc::new(mysql::MysqlBinding::open(&target, &url, opts)?)))
        }
        #[cfg(feature = "etcd")]
        "etcd" => Ok(visitor.call(Arc::new(etcd::EtcdBinding::open(&target, opts)?))),
        #[cfg(feature = "cql")]
        "cql" => Ok(visitor.call(Arc::new(cql::CqlBinding::open(&target, opts)?))),
        #[cfg(feature = "mongodb")]
        "mongodb" => Ok(visitor.call(Arc::new(mongodb::MongoBinding::open(&target, url, opts)?))),
        #[cfg(feature = "rocksdb")]
        "rocksdb" => Ok(visitor.call(Arc::new(embedded::rocksdb::open(&target, opts)?))),
        #[cfg(feature = "leveldb")]
        "leveldb" => Ok(visitor.call(Arc::new(embedded::leveldb::open(&target, opts)?))),
        #[cfg(feature = "wiredtiger")]
        "wiredtiger" => Ok(visitor.call(Arc::new(embedded::wiredtiger::open(&target, opts)?))),
        #[cfg(feature = "lmdb")]
        "lmdb" => Ok(visitor.call(Arc::new(embedded::lmdb::open(&target, opts)?))),
        #[cfg(feature = "redb")]
        "redb" => Ok(visitor.call(Arc::new(embedded::redb::open(&target, opts)?))),
        #[cfg(feature = "fjall")]
        "fjall" => Ok(visitor.call(Arc::new(embedded::fjall::open(&target, opts)?))),
        other => Err(unknown_scheme(other)),
    }
}

/// A known binding this binary was built without: the feature to build it
/// with, and for the engines that link Debian's libraries (the only ones the
/// default build leaves out) the packages they need.
fn not_built(scheme: &str, feature: &str) -> BindingError {
    let packages = match scheme {
        "rocksdb" => "librocksdb-dev libclang-dev",
        "leveldb" => "libleveldb-dev",
        "wiredtiger" => "libwiredtiger-dev",
        _ => "",
    };
    if packages.is_empty() {
        return BindingError::Unsupported(format!(
            "{scheme}:// is not built into this binary: rebuild with --features {feature}"
        ));
    }
    BindingError::Unsupported(format!(
        "{scheme}:// is not built into this binary: it links a system library; \
         apt-get install {packages}, then cargo install --path . --features {feature}"
    ))
}

fn unknown_scheme(scheme: &str) -> BindingError {
    let scheme = match scheme {
        "postgresql" => "postgres",
        "rediss" => "redis",
        "mariadb" => "mysql",
        other => other,
    };
    if let Some(info) = SCHEMES.iter().find(|s| s.scheme == scheme) {
        return not_built(scheme, info.feature.unwrap_or(scheme));
    }
    let known: Vec<&str> = SCHEMES
        .iter()
        .filter(|s| s.built)
        .map(|s| s.scheme)
        .collect();
    BindingError::Config(format!(
        "unknown database scheme '{scheme}://'; known schemes: {}",
        known.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_engine_left_out_names_its_feature_and_packages() {
        let e = not_built("rocksdb", "rocksdb").to_string();
        assert!(
            e.contains("apt-get install librocksdb-dev libclang-dev, then cargo install --path . --features rocksdb"),
            "{e}"
        );
        let e = not_built("wiredtiger", "wiredtiger").to_string();
        assert!(e.contains("apt-get install libwiredtiger-dev, then"), "{e}");
    }

    #[test]
    fn unknown_schemes_list_the_known_ones() {
        let e = unknown_scheme("oracle").to_string();
        assert!(
            e.contains("unknown database scheme 'oracle://'")
                && e.contains("null")
                && e.contains("sqlite"),
            "{e}"
        );
    }
}
