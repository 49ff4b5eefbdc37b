//! `yardstick tpcc` against the MariaDB test server
//! (`scripts/services start mariadb`), and a private server that refuses
//! `LOAD DATA LOCAL`.
use super::*;
use yardstick_bindings::mysql::tpcc::MysqlConn;

fn url() -> String {
    std::env::var("YARDSTICK_MYSQL_URL")
        .unwrap_or_else(|_| "mysql://bench:benchpw@127.0.0.1:53306/ycsb".into())
}

fn myrocks_url() -> String {
    std::env::var("YARDSTICK_MYROCKS_URL")
        .unwrap_or_else(|_| "mysql://bench:benchpw@127.0.0.1:53307/ycsb".into())
}

/// A new database on a test server; dropped by the returned guard.
struct Fresh {
    url: String,
    name: String,
    base: String,
}

impl Fresh {
    fn new() -> Fresh {
        Fresh::on(&url())
    }

    /// On the server of `base`.
    fn on(base: &str) -> Fresh {
        let name = yardstick_bindings::testing::unique_name("tpcc");
        let mut admin = wait(MysqlConn::open(
            &Target::parse(base).unwrap(),
            Isolation::RepeatableRead,
        ))
        .unwrap();
        wait(admin.batch(&format!("CREATE DATABASE {name}"))).unwrap();
        Fresh {
            url: format!("{}/{name}", base.rsplit_once('/').unwrap().0),
            name,
            base: base.to_string(),
        }
    }
}

impl Drop for Fresh {
    fn drop(&mut self) {
        if let Ok(mut admin) = wait(MysqlConn::open(
            &Target::parse(&self.base).unwrap(),
            Isolation::RepeatableRead,
        )) {
            let _ = wait(admin.batch(&format!("DROP DATABASE {}", self.name)));
        }
    }
}

/// TPC-C load, run and check on MyRocks: every table in RocksDB, the
/// engine's settings in the result, every consistency condition met.
#[test]
fn tpcc_loads_runs_and_checks_on_myrocks() {
    if !yardstick_bindings::testing::server_available(
        "MariaDB with MyRocks",
        &myrocks_url(),
        "scripts/services start myrocks",
    ) {
        return;
    }
    let db = Fresh::on(&myrocks_url());
    let u = format!("{}?engine=rocksdb", db.url);
    let dir = tempfile::tempdir().unwrap();
    let l = yardstick(
        dir.path(),
        &["tpcc", "load", "--db", &u, "--warehouses", "1", "-q"],
    );
    assert_eq!(l.code, 0, "{}{}", l.stdout, l.stderr);
    let r = tpcc_run(dir.path(), &u, ["1", "4", "3s"], &[], "rocks.json");
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let v = read_json(&dir.path().join("rocks.json"));
    let settings = &v["database"]["engine"]["settings"];
    assert_eq!(settings["table_engine"], "ROCKSDB", "{settings}");
    assert!(
        settings["rocksdb_block_cache_size"].is_string(),
        "{settings}"
    );
    assert!(v["tpmc"].as_f64().unwrap() > 0.0);
    assert_checks_pass(&v);
    let check = yardstick(dir.path(), &["tpcc", "check", "--db", &u]);
    assert_eq!(check.code, 0, "{}{}", check.stdout, check.stderr);
    let mut c = wait(MysqlConn::open(
        &Target::parse(&db.url).unwrap(),
        Isolation::RepeatableRead,
    ))
    .unwrap();
    let engines = wait(c.query(
        "SELECT DISTINCT ENGINE FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()",
        &[],
    ))
    .unwrap();
    let engines: Vec<String> = engines
        .iter()
        .map(|r| yardstick_bindings::tpcc::text(r, 0))
        .collect();
    assert_eq!(engines, ["ROCKSDB"]);
}

#[test]
fn load_data_and_multi_row_inserts_store_the_same_rows() {
    if !yardstick_bindings::testing::server_available(
        "MariaDB",
        &url(),
        "scripts/services start mariadb",
    ) {
        return;
    }
    use yardstick_bindings::tpcc::{load, LoadMethod};
    let mut prints = Vec::new();
    for local_infile in [true, false] {
        let db = Fresh::new();
        let mut c = wait(MysqlConn::open(
            &Target::parse(&db.url).unwrap(),
            Isolation::RepeatableRead,
        ))
        .unwrap();
        c.use_local_infile(local_infile);
        let k = wait(load::prepare(&mut c, 1, LoadMethod::Fast)).unwrap();
        wait(load::items(&mut c, 1, k, LoadMethod::Fast, &|_| {})).unwrap();
        wait(load::warehouse(&mut c, 1, 1, k, LoadMethod::Fast, &|_| {})).unwrap();
        prints.push(fingerprint(&mut c));
    }
    assert_eq!(prints[0][0], 1.0, "one warehouse: {:?}", prints[0]);
    assert_same_data(&prints[0], &prints[1]);
}

#[test]
fn mariadb_pipelines_keep_order_and_errors() {
    if !yardstick_bindings::testing::server_available(
        "MariaDB",
        &url(),
        "scripts/services start mariadb",
    ) {
        return;
    }
    let db = Fresh::new();
    let mut c = wait(MysqlConn::open(
        &Target::parse(&db.url).unwrap(),
        Isolation::RepeatableRead,
    ))
    .unwrap();
    pipelines_keep_order_and_errors(&mut c, "pipe");
}

#[test]
fn load_with_load_data_run_and_check_on_mariadb() {
    if !yardstick_bindings::testing::server_available(
        "MariaDB",
        &url(),
        "scripts/services start mariadb",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = Fresh::new();
    let u = db.url.clone();
    let l = yardstick(
        dir.path(),
        &[
            "tpcc",
            "load",
            "--db",
            &u,
            "--warehouses",
            "2",
            "--loaders",
            "2",
            "-q",
        ],
    );
    assert_eq!(l.code, 0, "{}", l.stderr);
    assert!(l.stdout.contains("fast path"), "{}", l.stdout);
    // the same seed gives the same data as on SQLite
    assert_eq!(load(dir.path(), "1").code, 0);
    let mut m = wait(MysqlConn::open(
        &Target::parse(&u).unwrap(),
        Isolation::RepeatableRead,
    ))
    .unwrap();
    // the secondary indexes were built after the rows, and the note is gone
    assert_secondary_indexes(
        &mut m,
        "SELECT DISTINCT INDEX_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND INDEX_NAME <> 'PRIMARY' ORDER BY 1",
    );
    assert!(
        !wait(yardstick_bindings::tpcc::load::state(&mut m))
            .unwrap()
            .indexes_deferred
    );
    // CREATE INDEX of one that exists is no error (MySQL has no IF NOT EXISTS)
    wait(m.create_index(yardstick_bindings::tpcc::INDEXES[0])).unwrap();
    let counts = wait(yardstick_bindings::tpcc::load::counts(&mut m)).unwrap();
    assert!(
        counts.contains(&("stock".to_string(), 200_000))
            && counts.contains(&("customer".to_string(), 60_000)),
        "{counts:?}"
    );
    wait(m.batch("DELETE FROM warehouse WHERE w_id = 2")).unwrap();
    for (t, c) in [
        ("district", "d_w_id"),
        ("customer", "c_w_id"),
        ("history", "h_w_id"),
        ("oorder", "o_w_id"),
        ("new_order", "no_w_id"),
        ("order_line", "ol_w_id"),
        ("stock", "s_w_id"),
    ] {
        wait(m.batch(&format!("DELETE FROM {t} WHERE {c} = 2"))).unwrap();
    }
    assert_same_data(
        &fingerprint(&mut sqlite_conn(&dir.path().join("t.db"))),
        &fingerprint(&mut m),
    );
    drop(m);
    // warehouse 2 is gone but still marked loaded: reload it for the run
    let mut m = wait(MysqlConn::open(
        &Target::parse(&u).unwrap(),
        Isolation::RepeatableRead,
    ))
    .unwrap();
    wait(m.batch("DELETE FROM tpcc_meta WHERE name = 'warehouse:2'")).unwrap();
    drop(m);
    let l = yardstick(
        dir.path(),
        &["tpcc", "load", "--db", &u, "--warehouses", "2", "-q"],
    );
    assert_eq!(l.code, 0, "{}", l.stderr);
    let r = tpcc_run(dir.path(), &u, ["2", "4", "3s"], &[], "my.json");
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let v = read_json(&dir.path().join("my.json"));
    assert_one_by_one_costs_more_round_trips(dir.path(), &u, "my.json");
    assert_eq!(v["database"]["engine"]["name"], "mariadb");
    assert!(v["database"]["statements"]
        .as_str()
        .unwrap()
        .contains("multi-statement text query"));
    assert!(v["database"]["isolation"]
        .as_str()
        .unwrap()
        .starts_with("repeatable read"));
    assert!(v["database"]["engine"]["settings"]["innodb_buffer_pool_size"].is_string());
    assert!(v["tpmc"].as_f64().unwrap() > 0.0);
    for t in [
        "NEW-ORDER",
        "PAYMENT",
        "ORDER-STATUS",
        "DELIVERY",
        "STOCK-LEVEL",
    ] {
        assert!(v["transactions"][t]["count"].as_u64().unwrap() > 0, "{t}");
        assert_eq!(v["transactions"][t]["errors"], 0, "{t}");
    }
    assert_checks_pass(&v);
    let all = format!(
        "{}{}{}{}",
        l.stdout,
        r.stdout,
        r.stderr,
        std::fs::read_to_string(dir.path().join("my.json")).unwrap()
    );
    assert!(!all.contains("benchpw"), "the password leaked");
    // read committed is a choice too
    let rc = tpcc_run(
        dir.path(),
        &u,
        ["1", "2", "1s"],
        &["--isolation", "read-committed"],
        "rc.json",
    );
    assert_eq!(rc.code, 0, "{}{}", rc.stdout, rc.stderr);
    let v = read_json(&dir.path().join("rc.json"));
    // MariaDB before 11.1 names it tx_isolation
    let settings = &v["database"]["engine"]["settings"];
    let level = settings["transaction_isolation"]
        .as_str()
        .or(settings["tx_isolation"].as_str());
    assert_eq!(level, Some("READ-COMMITTED"), "{settings}");
}

/// A server with `local_infile` off refuses `LOAD DATA LOCAL` (error 4166
/// since MariaDB 10.5, 1148 before, 3948 on MySQL 8): the loader's fast path
/// falls back to multi-row INSERTs and loads the same database. A private
/// server started with the setting off, so no other test sees it.
#[test]
fn a_server_that_refuses_load_data_local_is_loaded_with_multi_row_inserts() {
    let dir = tempfile::tempdir().unwrap();
    let Some((mut server, port)) = private_mariadb(dir.path(), &["--local-infile=0"]) else {
        assert!(std::env::var_os("CI").is_none(), "MariaDB is needed in CI");
        return;
    };
    let admin_url = format!("mysql://root@127.0.0.1:{port}/mysql");
    let mut admin = wait(MysqlConn::open(
        &Target::parse(&admin_url).unwrap(),
        Isolation::RepeatableRead,
    ))
    .unwrap();
    let setting = wait(admin.query("SELECT @@GLOBAL.local_infile", &[])).unwrap();
    assert_eq!(
        yardstick_bindings::tpcc::int(&setting[0], 0),
        0,
        "local_infile is on"
    );
    wait(admin.batch("CREATE DATABASE tpcc")).unwrap();
    let u = format!("mysql://root@127.0.0.1:{port}/tpcc");
    let work = tempfile::tempdir().unwrap();
    let l = yardstick(
        work.path(),
        &["tpcc", "load", "--db", &u, "--warehouses", "1", "-q"],
    );
    assert_eq!(l.code, 0, "{}", l.stderr);

    let mut m = wait(MysqlConn::open(
        &Target::parse(&u).unwrap(),
        Isolation::RepeatableRead,
    ))
    .unwrap();
    let counts = wait(yardstick_bindings::tpcc::load::counts(&mut m)).unwrap();
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
    let check = yardstick(work.path(), &["tpcc", "check", "--db", &u]);
    assert_eq!(check.code, 0, "{}{}", check.stdout, check.stderr);
    let _ = server.kill();
    let _ = server.wait();
}
