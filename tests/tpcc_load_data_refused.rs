//! A MariaDB server with `local_infile` off refuses `LOAD DATA LOCAL` (error
//! 4166 since MariaDB 10.5, 1148 before, 3948 on MySQL 8): the TPC-C
//! loader's fast path falls back to multi-row INSERTs and loads the same
//! database. A test binary of its own, because it turns the test server's
//! global setting off for its load (and back on), which the loads of the
//! other tests must not see (cargo runs test binaries one after another).
mod common;
use common::yardstick;
use yardstick_bindings::mysql::tpcc::MysqlConn;
use yardstick_bindings::tpcc::{load, Conn, Isolation};
use yardstick_bindings::Target;

fn url() -> String {
    std::env::var("YARDSTICK_MYSQL_URL")
        .unwrap_or_else(|_| "mysql://bench:benchpw@127.0.0.1:53306/ycsb".into())
}

/// Turns `local_infile` back on when dropped, also when the test fails.
struct LocalInfileOff(MysqlConn);

impl LocalInfileOff {
    fn new(mut admin: MysqlConn) -> LocalInfileOff {
        admin.batch("SET GLOBAL local_infile = 0").unwrap();
        LocalInfileOff(admin)
    }
}

impl Drop for LocalInfileOff {
    fn drop(&mut self) {
        let _ = self.0.batch("SET GLOBAL local_infile = 1");
    }
}

#[test]
fn a_server_that_refuses_load_data_local_is_loaded_with_multi_row_inserts() {
    if !yardstick_bindings::testing::server_available(
        "MariaDB",
        &url(),
        "scripts/services start mariadb",
    ) {
        return;
    }
    let name = yardstick_bindings::testing::unique_name("tpcc");
    let mut admin =
        MysqlConn::open(&Target::parse(&url()).unwrap(), Isolation::RepeatableRead).unwrap();
    admin.batch(&format!("CREATE DATABASE {name}")).unwrap();
    let u = format!("{}/{name}", url().rsplit_once('/').unwrap().0);
    let dir = tempfile::tempdir().unwrap();

    let off = LocalInfileOff::new(
        MysqlConn::open(&Target::parse(&url()).unwrap(), Isolation::RepeatableRead).unwrap(),
    );
    let l = yardstick(
        dir.path(),
        &["tpcc", "load", "--db", &u, "--warehouses", "1", "-q"],
    );
    drop(off);
    assert_eq!(l.code, 0, "{}", l.stderr);

    let mut m = MysqlConn::open(&Target::parse(&u).unwrap(), Isolation::RepeatableRead).unwrap();
    let counts = load::counts(&mut m).unwrap();
    for (table, rows) in [
        ("item", 100_000),
        ("stock", 100_000),
        ("customer", 30_000),
        ("history", 30_000),
        ("oorder", 30_000),
        ("new_order", 9_000),
    ] {
        assert!(
            counts.contains(&(table.to_string(), rows)),
            "{table}: {counts:?}"
        );
    }
    drop(m);
    let check = yardstick(dir.path(), &["tpcc", "check", "--db", &u]);
    assert_eq!(check.code, 0, "{}{}", check.stdout, check.stderr);
    admin.batch(&format!("DROP DATABASE {name}")).unwrap();
}
