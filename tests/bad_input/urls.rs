//! Bad `--db` URLs, for every binding: unknown schemes and options, option
//! values out of range (the shared timeouts of every network binding
//! among them), malformed hosts and ports, and, against the test servers,
//! wrong passwords and databases. A row that needs a test server uses its
//! URL: `{url}` (as `scripts/services` starts it), `{wrongpw}` (its
//! password replaced), `{base}` (without its database); `{dir}` is a fresh
//! directory.
use super::*;

pub(super) struct Bad {
    /// The server whose URL the row builds on, if any.
    server: Option<&'static TestServer>,
    url: &'static str,
    expect: &'static str,
}

const fn bad(url: &'static str, expect: &'static str) -> Bad {
    Bad {
        server: None,
        url,
        expect,
    }
}

const fn on(server: &'static TestServer, url: &'static str, expect: &'static str) -> Bad {
    Bad {
        server: Some(server),
        url,
        expect,
    }
}

pub(super) const CASES: &[Bad] = &[
    // any scheme
    bad("oracle://db", "known schemes: null, sqlite"),
    bad("nothing-like-a-url", "is not a URL: expected scheme://"),
    bad("null://?colour=red", "unknown option 'colour'"),
    // embedded
    bad("sqlite:///no/such/dir/x.db", "does not exist"),
    bad("sqlite://{dir}/empty.db", "run `yardstick load`"),
    bad(
        "lmdb://{dir}/never",
        "run `yardstick load` with the same --db first",
    ),
    bad(
        "redb://{dir}/never",
        "run `yardstick load` with the same --db first",
    ),
    bad(
        "fjall://{dir}/never",
        "run `yardstick load` with the same --db first",
    ),
    bad("lmdb://{dir}/x?bogus=1", "unknown option 'bogus'"),
    // the engines that link system libraries: refused with the feature and
    // packages to build them when this binary lacks them
    bad(
        "rocksdb://{dir}/never",
        "run `yardstick load` with the same --db first",
    ),
    bad(
        "leveldb://{dir}/never",
        "run `yardstick load` with the same --db first",
    ),
    bad(
        "wiredtiger://{dir}/never",
        "run `yardstick load` with the same --db first",
    ),
    bad("rocksdb://{dir}/x?bogus=1", "unknown option 'bogus'"),
    bad("wiredtiger://{dir}/x?compression=lz9", "compression"),
    bad("redb://{dir}/x?durability=maybe", "durability"),
    bad("fjall://{dir}/x?cache_size=lots", "is not a size"),
    // PostgreSQL
    on(&POSTGRES, "{wrongpw}", "wrong user or password"),
    bad(
        "postgres://bench:benchpw@127.0.0.1:1/ycsb",
        "cannot connect to PostgreSQL at 127.0.0.1:1",
    ),
    bad(
        "postgres://bench:hunter2@127.0.0.1:99999/ycsb",
        "is not a PostgreSQL URL",
    ),
    bad(
        "postgres://bench:hunter2@127.0.0.1:55432/ycsb?sslmode=bogus",
        "use postgres://user:password@host:port/database",
    ),
    bad(
        "postgres://bench:hunter2@127.0.0.1:55432/ycsb?flavor=oracle",
        "flavor",
    ),
    // MySQL and MariaDB
    on(&MARIADB, "{wrongpw}", "wrong user or password"),
    on(
        &MARIADB,
        "{base}/no_such_db",
        "database no_such_db does not exist",
    ),
    bad(
        "mysql://bench:benchpw@127.0.0.1:1/ycsb",
        "cannot connect to MySQL at 127.0.0.1:1",
    ),
    bad(
        "mysql://bench:hunter2@127.0.0.1:53306/ycsb?colour=1",
        "unknown option 'colour' in the mysql URL",
    ),
    // Redis
    on(&REDIS, "{wrongpw}", "wrong or missing password"),
    bad(
        "redis://127.0.0.1:1",
        "cannot connect to Redis at 127.0.0.1:1",
    ),
    bad(
        "redis://:hunter2@127.0.0.1:56379?model=bogus",
        "unknown Redis model 'bogus'",
    ),
    // memcached
    bad(
        "memcached://127.0.0.1:1",
        "cannot connect to memcached at 127.0.0.1:1",
    ),
    // etcd
    bad(
        "etcd://127.0.0.1:1",
        "cannot connect to etcd at http://127.0.0.1:1",
    ),
    bad(
        "etcd://127.0.0.1:52379?timeout=5",
        "'5' has no unit: write for example 5s",
    ),
    // Cassandra
    bad(
        "cql://127.0.0.1:1/ycsb",
        "cannot connect to Cassandra at 127.0.0.1:1",
    ),
    // the shared options and each binding's own, checked before connecting
    bad(
        "null://?latency=-1ms",
        "URL option latency=-1ms: '-1ms' is not a duration: write for example",
    ),
    bad(
        "null://?latency=fast",
        "URL option latency=fast: 'fast' is not a duration: write for example",
    ),
    bad(
        "null://?latency=1e30s",
        "URL option latency=1e30s: '1e30s' is too long to be a duration",
    ),
    bad(
        "null://?latency=5",
        "URL option latency=5: '5' has no unit: write for example 5s, 5ms or 5us",
    ),
    bad(
        "null://?store=disk",
        "null:// store=disk is not known: use store=none or store=memory",
    ),
    bad(
        "sqlite://{dir}/x.db?journal_mode=diary",
        "sqlite journal_mode=diary is not valid: use wal, delete, truncate,",
    ),
    bad(
        "sqlite://{dir}/x.db?synchronous=sometimes",
        "sqlite synchronous=sometimes is not valid: use off, normal, full or",
    ),
    bad(
        "sqlite://{dir}/x.db?cache_size=lots",
        "sqlite cache_size=lots is not a size: use for example cache_size=64MiB",
    ),
    bad(
        "sqlite://{dir}/x.db?busy_timeout=-1s",
        "URL option busy_timeout=-1s: '-1s' is not a duration: write for example",
    ),
    bad(
        "sqlite://{dir}/x.db?mmap_size=-5",
        "sqlite mmap_size=-5 is not a size: use for example mmap_size=64MiB",
    ),
    bad(
        "sqlite://{dir}/x.db?bogus=1",
        "unknown option 'bogus' in the sqlite URL; accepted options:",
    ),
    bad(
        "lmdb://{dir}/l?map_size=tiny",
        "lmdb map_size=tiny is not a size: write for example map_size=64MiB",
    ),
    bad(
        "lmdb://{dir}/l?map_size=0",
        "lmdb map_size=0 is too small: give at least 1MiB (the map is sparse, so",
    ),
    bad(
        "lmdb://{dir}/l?sync=sometimes",
        "lmdb sync=sometimes is not valid: use true or false",
    ),
    bad(
        "lmdb://{dir}/l?readahead=maybe",
        "lmdb readahead=maybe is not valid: use true or false",
    ),
    bad(
        "redb://{dir}/r?cache_size=-1GiB",
        "redb cache_size=-1GiB is not a size: write for example cache_size=64MiB",
    ),
    bad(
        "fjall://{dir}/f?write_buffer=x",
        "fjall write_buffer=x is not a size: write for example write_buffer=64MiB",
    ),
    bad(
        "fjall://{dir}/f?compression=zip",
        "fjall compression=zip is not valid: use lz4, none",
    ),
    bad(
        "fjall://{dir}/f?sync=perhaps",
        "fjall sync=perhaps is not valid: use true or false",
    ),
    bad(
        "postgres://bench:hunter2@127.0.0.1:1/ycsb?batch=carrier",
        "batch=carrier is not known: use values (multi-row INSERT) or copy (COPY",
    ),
    bad(
        "postgres://bench:hunter2@127.0.0.1:1/ycsb?sharding=both",
        "sharding applies to flavor=yugabyte only",
    ),
    bad(
        "postgres://bench:hunter2@127.0.0.1:1/ycsb?tls_insecure=maybe",
        "URL option tls_insecure=maybe is not true or false",
    ),
    bad(
        "mysql://bench:hunter2@127.0.0.1:1/ycsb?flavor=oracle",
        "flavor=oracle is not known: use mysql (also for MariaDB) or tidb",
    ),
    bad(
        "mysql://bench:hunter2@127.0.0.1:1/ycsb?upsert=sometimes",
        "upsert=sometimes is not known: use upsert=on_duplicate_key (INSERT ...",
    ),
    bad(
        "mysql://bench:hunter2@127.0.0.1:1/ycsb?tls=maybe",
        "tls=maybe is not true or false (tls_ca and tls_insecure need tls on)",
    ),
    bad(
        "redis://:hunter2@127.0.0.1:1?pipeline=0",
        "pipeline=0 is not a whole number from 1 to 1024; it is how many",
    ),
    bad(
        "redis://:hunter2@127.0.0.1:1?pipeline=x",
        "pipeline=x is not a whole number from 1 to 1024; it is how many",
    ),
    bad(
        "redis://:hunter2@127.0.0.1:1?pipeline=1000000000",
        "pipeline=1000000000 is not a whole number from 1 to 1024; it is how",
    ),
    bad(
        "redis://:hunter2@127.0.0.1:1?tls_ca=/no/such/ca.pem",
        "tls_ca and tls_insecure need a TLS connection: use rediss:// instead of",
    ),
    bad(
        "cql://bench:hunter2@127.0.0.1:1/ycsb?consistency=most",
        "consistency=most is not a CQL consistency level: use one, quorum,",
    ),
    bad(
        "cql://bench:hunter2@127.0.0.1:1/ycsb?serial_consistency=one",
        "serial_consistency=one is not known: use serial or local_serial",
    ),
    bad(
        "cql://bench:hunter2@127.0.0.1:1/ycsb?replication=0",
        "replication=0 is not a replication factor (a whole number >= 1)",
    ),
    bad(
        "cql://bench:hunter2@127.0.0.1:1/ycsb?replication=x",
        "replication=x is not a replication factor (a whole number >= 1)",
    ),
    bad(
        "etcd://bench:hunter2@127.0.0.1:1?consistency=eventual",
        "consistency=eventual is not known: use linearizable (quorum reads, the",
    ),
    bad(
        "etcd://bench:hunter2@127.0.0.1:1?tls_ca=/no/such/ca.pem",
        "cannot read tls_ca=/no/such/ca.pem: No such file or directory (os error",
    ),
    bad(
        "hbase://127.0.0.1:1/default?durability=eventually",
        "hbase durability=eventually is not one of default, skip_wal, async_wal,",
    ),
    bad(
        "hbase://127.0.0.1:1/default?compression=zip",
        "hbase compression=zip is not one of none, gz, snappy, lz4, zstd",
    ),
    bad(
        "hbase://127.0.0.1:1/default?info=notahost",
        "cannot connect to the HBase Thrift2 gateway at 127.0.0.1:1: Connection",
    ),
    bad(
        "hbase://127.0.0.1:1/default?family=",
        "family must be a non-empty column family name without ':'",
    ),
    bad(
        "memcached://127.0.0.1:1?tls_ca=/no/such/ca.pem",
        "cannot read tls_ca=/no/such/ca.pem: I/O error: No such file or",
    ),
    bad(
        "postgres://bench:hunter2@[::1/ycsb",
        "postgres://bench:***@[::1/ycsb is not a PostgreSQL URL (invalid",
    ),
    bad(
        "postgres://bench:hunter2@127.0.0.1:notaport/ycsb",
        "postgres://bench:***@127.0.0.1:notaport/ycsb is not a PostgreSQL URL",
    ),
    bad(
        "host=127.0.0.1 user=bench password=hunter2 dbname=ycsb",
        "'host=127.0.0.1 user=bench password=*** dbname=ycsb' is not a URL:",
    ),
    bad(
        "mysql://bench:hunter2@127.0.0.1:99999/ycsb",
        "mysql://bench:***@127.0.0.1:99999/ycsb is not a MySQL URL (URL parse",
    ),
    bad(
        "redis://:hunter2@127.0.0.1:99999",
        "redis://:***@127.0.0.1:99999 is not a Redis URL (Redis URL did not",
    ),
    bad(
        "mongodb://bench:hunter2@/ycsb",
        "mongodb://bench:***@/ycsb is not a MongoDB URL (invalid server address",
    ),
    bad(
        "mongodb+srv://bench:hunter2@cluster.example/ycsb",
        "unknown database scheme 'mongodb+srv://'; known schemes: null, sqlite,",
    ),
    bad(
        "etcd://bench:hunter2@",
        "etcd:// needs at least one member: etcd://host1:2379,host2:2379,host3:23",
    ),
    bad(
        "cql://bench:hunter2@127.0.0.1:70000/ycsb",
        "127.0.0.1:70000 in the cql URL is not host:port: give a port from 1 to",
    ),
    bad(
        "://nothing",
        "unknown database scheme '://'; known schemes: null, sqlite, postgres,",
    ),
];

/// The servers of the network bindings (port 1: nothing listens, and no
/// row gets as far as connecting).
const NETWORK: &[&str] = &[
    "postgres://bench:hunter2@127.0.0.1:1/ycsb",
    "mysql://bench:hunter2@127.0.0.1:1/ycsb",
    "redis://:hunter2@127.0.0.1:1",
    "mongodb://bench:hunter2@127.0.0.1:1/ycsb",
    "cql://bench:hunter2@127.0.0.1:1/ycsb",
    "etcd://bench:hunter2@127.0.0.1:1",
    "memcached://127.0.0.1:1",
    "hbase://127.0.0.1:1/default",
];

/// The options every network binding shares, refused alike by each.
const SHARED: &[(&str, &str)] = &[
    (
        "timeout=0s",
        "URL option timeout=0s: a time limit of zero fails every call; give a",
    ),
    (
        "timeout=-1s",
        "URL option timeout=-1s: '-1s' is not a duration: write for example 30s,",
    ),
    (
        "timeout=abc",
        "URL option timeout=abc: 'abc' is not a duration",
    ),
    (
        "timeout=5",
        "URL option timeout=5: '5' has no unit: write for example 5s, 5ms or 5us",
    ),
    (
        "timeout=1e30s",
        "URL option timeout=1e30s: '1e30s' is too long to be a duration",
    ),
    (
        "connect_timeout=0ms",
        "URL option connect_timeout=0ms: a time limit of zero fails every call",
    ),
    (
        "connect_timeout=1e400s",
        "URL option connect_timeout=1e400s: '1e400s' is not a duration",
    ),
    ("colour=red", "unknown option 'colour' in the"),
    (
        "timeout=1s&timeout=2s",
        "option 'timeout' is given twice in the URL: keep one",
    ),
];

/// How many rows the table and the shared options make.
pub(super) fn count() -> usize {
    CASES.len() + NETWORK.len() * SHARED.len()
}

/// The run of one bad URL, and the words its error must contain.
fn row(url: &str, words: &str) -> (Vec<String>, String) {
    let args = [
        "run",
        "--db",
        url,
        "-P",
        "workloada",
        "-p",
        "operationcount=10",
    ];
    (
        args.iter().map(|s| s.to_string()).collect(),
        words.to_string(),
    )
}

#[test]
fn bad_urls_are_refused_in_one_line_without_secrets() {
    let mut rows = Vec::new();
    let dirs: Vec<tempfile::TempDir> = CASES.iter().map(|_| tempfile::tempdir().unwrap()).collect();
    for (case, dir) in CASES.iter().zip(&dirs) {
        let server_url = match case.server {
            Some(s) if !s.available() => continue,
            Some(s) => s.url(),
            None => String::new(),
        };
        let url = case
            .url
            .replace(
                "{wrongpw}",
                &server_url.replace("benchpw", "not-the-password"),
            )
            .replace("{base}", server_url.rsplit_once('/').map_or("", |(b, _)| b))
            .replace("{url}", &server_url)
            .replace("{dir}", &dir.path().display().to_string());
        let scheme = url.split_once("://").map_or("", |(s, _)| s);
        let expect = match yardstick_bindings::registry::find(scheme) {
            Err(_)
                if yardstick_bindings::REGISTRY
                    .iter()
                    .any(|e| e.name == scheme) =>
            {
                "is not built into this binary"
            }
            _ => case.expect,
        };
        rows.push(row(&url, expect));
    }
    for url in NETWORK {
        for (option, words) in SHARED {
            rows.push(row(&format!("{url}?{option}"), words));
        }
    }
    assert!(rows.len() >= 100, "only {} rows ran", rows.len());
    assert_none("URLs", rows.len(), failures(&rows));
}
