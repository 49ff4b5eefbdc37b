//! `yardstick tpcc` against the PostgreSQL test server
//! (`scripts/services start postgres`).
use super::*;

fn url() -> String {
    std::env::var("YARDSTICK_PG_URL")
        .unwrap_or_else(|_| "postgres://bench:benchpw@127.0.0.1:55432/ycsb".into())
}

#[test]
fn load_with_copy_run_and_check_on_postgresql() {
    if !yardstick_bindings::testing::server_available(
        "PostgreSQL",
        &url(),
        "scripts/services start postgres",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let u = url();
    let l = yardstick(
        dir.path(),
        &[
            "tpcc",
            "load",
            "--db",
            &u,
            "--warehouses",
            "1",
            "--loaders",
            "2",
            "--drop",
            "-q",
        ],
    );
    assert_eq!(l.code, 0, "{}", l.stderr);
    assert!(l.stdout.contains("rows/s"), "{}", l.stdout);
    let mut pg = wait(yardstick_bindings::postgres::tpcc::PgConn::open(
        &Target::parse(&u).unwrap(),
        Isolation::ReadCommitted,
    ))
    .unwrap();
    assert_secondary_indexes(
        &mut pg,
        "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND indexname IN ('customer_name', 'oorder_customer') ORDER BY 1",
    );
    drop(pg);
    let r = tpcc_run(dir.path(), &u, ["1", "4", "3s"], &[], "pg.json");
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let v = read_json(&dir.path().join("pg.json"));
    assert_eq!(v["database"]["engine"]["name"], "postgresql");
    assert!(v["database"]["statements"]
        .as_str()
        .unwrap()
        .contains("pipelined"));
    assert!(v["database"]["isolation"]
        .as_str()
        .unwrap()
        .contains("read committed"));
    assert!(v["tpmc"].as_f64().unwrap() > 0.0);
    assert_eq!(v["transactions"]["NEW-ORDER"]["errors"], 0);
    assert_checks_pass(&v);
    // observed per transaction: the server's CPU and its own commit count
    let o = &v["observation"];
    let done: u64 = v["transactions"]
        .as_object()
        .unwrap()
        .values()
        .map(|t| t["count"].as_u64().unwrap())
        .sum();
    assert_eq!(o["per_operation"]["operations"], done);
    assert!(
        o["per_operation"]["server_cpu_us"].as_f64().unwrap() > 0.0,
        "{}",
        o["per_operation"]
    );
    assert!(o["series"]["db.commits"]["measured"].as_f64().unwrap() > 0.0);
    assert!(o["configuration"]["postgresql"]["port"].is_string());
    let all = format!(
        "{}{}{}{}",
        l.stdout,
        r.stdout,
        r.stderr,
        std::fs::read_to_string(dir.path().join("pg.json")).unwrap()
    );
    assert!(!all.contains("benchpw"), "the password leaked");
    let c = yardstick(dir.path(), &["tpcc", "check", "--db", &u]);
    assert_eq!(c.code, 0, "{}", c.stdout);
    assert_one_by_one_costs_more_round_trips(dir.path(), &u, "pg.json");
    // the isolation level is a choice, recorded, and serialization
    // failures are retried rather than reported as errors
    let s = tpcc_run(
        dir.path(),
        &u,
        ["1", "4", "2s"],
        &["--isolation", "serializable"],
        "ser.json",
    );
    assert_eq!(s.code, 0, "{}{}", s.stdout, s.stderr);
    let v = read_json(&dir.path().join("ser.json"));
    assert!(v["database"]["isolation"]
        .as_str()
        .unwrap()
        .starts_with("serializable"));
    assert!(v["database"]["engine"]["settings"]["shared_buffers"].is_string());
    let checks = v["checks"].as_array().unwrap();
    assert!(checks.iter().all(|c| c["pass"] == true), "{checks:?}");
}

#[test]
fn postgresql_pipelines_keep_order_and_errors() {
    if !yardstick_bindings::testing::server_available(
        "PostgreSQL",
        &url(),
        "scripts/services start postgres",
    ) {
        return;
    }
    let mut c = wait(yardstick_bindings::postgres::tpcc::PgConn::open(
        &Target::parse(&url()).unwrap(),
        Isolation::ReadCommitted,
    ))
    .unwrap();
    let table = yardstick_bindings::testing::unique_name("pipe");
    pipelines_keep_order_and_errors(&mut c, &table);
}

#[test]
fn the_same_seed_loads_the_same_data_on_postgresql_and_sqlite() {
    if !yardstick_bindings::testing::server_available(
        "PostgreSQL",
        &url(),
        "scripts/services start postgres",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut admin = wait(yardstick_bindings::postgres::tpcc::PgConn::open(
        &Target::parse(&url()).unwrap(),
        Isolation::ReadCommitted,
    ))
    .unwrap();
    let name = yardstick_bindings::testing::unique_name("tpcc");
    wait(admin.batch(&format!("CREATE DATABASE {name}"))).unwrap();
    let u = format!("{}/{name}", url().rsplit_once('/').unwrap().0);
    let l = yardstick(
        dir.path(),
        &["tpcc", "load", "--db", &u, "--warehouses", "1", "-q"],
    );
    assert_eq!(l.code, 0, "{}", l.stderr);
    assert_eq!(load(dir.path(), "1").code, 0);
    let mut pg = wait(yardstick_bindings::postgres::tpcc::PgConn::open(
        &Target::parse(&u).unwrap(),
        Isolation::ReadCommitted,
    ))
    .unwrap();
    assert_same_data(
        &fingerprint(&mut sqlite_conn(&dir.path().join("t.db"))),
        &fingerprint(&mut pg),
    );
    drop(pg);
    wait(admin.batch(&format!("DROP DATABASE {name}"))).unwrap();
}
