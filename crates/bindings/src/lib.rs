//! yardstick's database bindings: one module per database, each registered
//! by one line of the `registry!` below (see [`registry`] and
//! docs/adding-a-binding.md). The optional ones are behind cargo features;
//! the default build has every binding that builds with cargo alone.
//!
//! `embedded` is the generic layer the ordered key-value engines share,
//! `sql` the SQL statements the SQL bindings share, `kv` the record layout of
//! the engines without columns, `net` the network bindings' TLS helpers, `tpcc` TPC-C over any binding that registers it.
pub mod embedded;
pub mod kv;
#[cfg(feature = "tls")]
mod net;
pub mod registry;
#[cfg(any(feature = "sqlite", feature = "postgres", feature = "mysql"))]
pub mod sql;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod tpcc;
pub mod url;

pub use registry::{servers, Descriptor, Entry, Registered};
pub use url::Target;
use yardstick_core::binding::{Binding, BindingError, OpenOptions};

// One line per binding: its cargo feature (and the Debian packages it links,
// named when the binary lacks it), its module and its binding type.
registry::registry! {
    always: null::NullBinding;
    "sqlite" => sqlite::SqliteBinding,
    "postgres" => postgres::PostgresBinding,
    "mysql" => mysql::MysqlBinding,
    "redis" => redis::RedisBinding,
    "mongodb" => mongodb::MongoBinding,
    "cql" => cql::CqlBinding,
    "etcd" => etcd::EtcdBinding,
    "memcached" => memcached::MemcachedBinding,
    "rocksdb" links "librocksdb-dev libclang-dev" => rocksdb::RocksBinding,
    "leveldb" links "libleveldb-dev" => leveldb::LevelBinding,
    "wiredtiger" links "libwiredtiger-dev" => wiredtiger::WtBinding,
    "lmdb" => lmdb::LmdbBinding,
    "redb" => redb::RedbBinding,
    "fjall" => fjall::FjallBinding,
    "hbase" => hbase::HbaseBinding,
}

/// Called with the opened binding; generic so the run loop is monomorphic per binding.
pub trait WithBinding {
    type Output;
    fn call<B: Binding>(self, binding: std::sync::Arc<B>) -> Self::Output;
}

/// Opens the binding for `url` and hands it to `visitor`.
pub fn open<V: WithBinding>(
    url: &str,
    opts: &OpenOptions,
    visitor: V,
) -> Result<V::Output, BindingError> {
    dispatch(&Target::parse(url)?, opts, visitor)
}

/// The database's own statistics for observation, from `url` alone (for
/// runs that do not open the binding, as TPC-C); `None` when its binding
/// has none or the URL cannot be read.
pub fn statistics(url: &str) -> Option<Box<dyn yardstick_core::observe::Source>> {
    dispatch_statistics(&Target::parse(url).ok()?)
}

/// Checks `url` without opening anything: a scheme this binary drives, and
/// only options its binding accepts, the shared ones (timeouts,
/// `tls_insecure`) well formed. Suites and matrices check every phase's URL
/// this way before any work; the binding's own values are checked when it
/// opens.
pub fn check_url(url: &str) -> Result<(), BindingError> {
    let target = Target::parse(url)?;
    let d = registry::find(&target.scheme)?;
    target.allow_only(d.options)
}

#[cfg(test)]
mod check_tests {
    use super::*;

    #[test]
    fn a_url_is_checked_without_opening_it() {
        assert!(check_url("postgres://u:p@127.0.0.1:1/db?timeout=2s").is_ok());
        assert!(check_url("mongodb://127.0.0.1:1/db?w=majority&readPreference=primary").is_ok());
        let e = |u: &str| check_url(u).unwrap_err().to_string();
        assert!(
            e("oracle://x").contains("unknown database scheme"),
            "{}",
            e("oracle://x")
        );
        assert!(e("redis://127.0.0.1?colour=red").contains("unknown option 'colour'"));
        assert!(e("mongodb://h/db?colour=red").contains("unknown option 'colour'"));
        assert!(e("etcd://h?timeout=0s").contains("a time limit of zero"));
        assert!(e("mysql://h/db?tls_insecure=maybe").contains("is not true or false"));
        assert!(e("null://?timeout=1s&timeout=2s").contains("given twice"));
    }
}
