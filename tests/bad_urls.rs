//! One table of bad `--db` URLs, for every binding: each must stop before any
//! work with exit code 2, one error line naming the problem and the fix, no
//! panic, no password and no result file. A row that needs a test server
//! uses its URL: `{url}` (as `scripts/services` starts it), `{wrongpw}` (its
//! password replaced), `{base}` (without its database); `{dir}` is a fresh
//! directory.
use crate::common::*;

struct Bad {
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

/// Every password a row may carry; none may appear in the output.
const SECRETS: &[&str] = &["benchpw", "not-the-password", "hunter2"];

const BAD_URLS: &[Bad] = &[
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
];

#[test]
fn every_bad_url_stops_before_any_work_in_one_line_without_secrets() {
    let mut checked = 0;
    for case in BAD_URLS {
        let server_url = match case.server {
            Some(s) if !s.available() => continue,
            Some(s) => s.url(),
            None => String::new(),
        };
        let dir = tempfile::tempdir().unwrap();
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
        let r = yardstick(
            dir.path(),
            &[
                "run",
                "--db",
                &url,
                "-P",
                "workloada",
                "-p",
                "operationcount=10",
            ],
        );
        assert_one_error(&r, &url, expect);
        let all = format!("{}{}", r.stdout, r.stderr);
        for s in SECRETS {
            assert!(!all.contains(s), "{url}: the password {s} leaked: {all}");
        }
        assert!(
            results_in(dir.path()).is_empty(),
            "{url}: a result was written"
        );
        checked += 1;
    }
    assert!(checked >= 20, "only {checked} rows ran");
}
