//! `yardstick tpcc` on SQLite: the load's cardinalities and value rules, a run
//! whose counts match what it wrote to the database, the consistency checks
//! (and that they catch a broken database), a resumed load, and bad input.
mod common;
use common::*;
use std::path::Path;

fn db(dir: &Path) -> rusqlite::Connection {
    rusqlite::Connection::open(dir.join("t.db")).unwrap()
}

fn one(c: &rusqlite::Connection, sql: &str) -> i64 {
    c.query_row(sql, [], |r| r.get(0)).unwrap()
}

fn load(dir: &Path, warehouses: &str) -> Run {
    yardstick(
        dir,
        &[
            "tpcc",
            "load",
            "--db",
            "sqlite://t.db",
            "--warehouses",
            warehouses,
            "-q",
        ],
    )
}

#[test]
fn the_load_has_the_specifications_cardinalities_and_value_rules() {
    let dir = tempfile::tempdir().unwrap();
    let r = load(dir.path(), "1");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("rows/s"), "{}", r.stdout);
    let c = db(dir.path());
    for (table, rows) in [
        ("warehouse", 1),
        ("district", 10),
        ("customer", 30_000),
        ("history", 30_000),
        ("oorder", 30_000),
        ("new_order", 9_000),
        ("stock", 100_000),
        ("item", 100_000),
    ] {
        assert_eq!(
            one(&c, &format!("SELECT COUNT(*) FROM {table}")),
            rows,
            "{table}"
        );
    }
    let lines = one(&c, "SELECT COUNT(*) FROM order_line");
    assert_eq!(lines, one(&c, "SELECT SUM(o_ol_cnt) FROM oorder"));
    assert!((150_000..=450_000).contains(&lines));
    // every district's next order is 3001; the last 900 orders are undelivered
    assert_eq!(
        one(&c, "SELECT COUNT(*) FROM district WHERE d_next_o_id = 3001"),
        10
    );
    assert_eq!(one(&c, "SELECT MIN(no_o_id) FROM new_order"), 2101);
    assert_eq!(
        one(&c, "SELECT COUNT(*) FROM oorder WHERE o_carrier_id IS NULL"),
        9_000
    );
    // 10% bad credit, 10% ORIGINAL items, syllable last names for c_id <= 1000
    let bc = one(&c, "SELECT COUNT(*) FROM customer WHERE c_credit = 'BC'");
    assert!((2_500..3_500).contains(&bc), "{bc}");
    let original = one(
        &c,
        "SELECT COUNT(*) FROM item WHERE i_data LIKE '%ORIGINAL%'",
    );
    assert!((9_000..11_000).contains(&original), "{original}");
    assert_eq!(
        c.query_row(
            "SELECT c_last FROM customer WHERE c_w_id = 1 AND c_d_id = 3 AND c_id = 372",
            [],
            |r| r.get::<_, String>(0)
        )
        .unwrap(),
        "PRICALLYOUGHT"
    );
    // a second load of the same size has nothing to do
    let again = load(dir.path(), "1");
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(one(&c, "SELECT COUNT(*) FROM customer"), 30_000);
}

#[test]
fn a_run_reports_tpmc_and_its_counts_match_the_database_and_the_checks_pass() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(load(dir.path(), "2").code, 0);
    let r = yardstick(
        dir.path(),
        &[
            "tpcc",
            "run",
            "--db",
            "sqlite://t.db",
            "--warehouses",
            "2",
            "--terminals",
            "4",
            "--duration",
            "4s",
            "--warmup",
            "0s",
            "--seed",
            "3",
            "-q",
            "--out",
            "r.json",
        ],
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    for needle in ["tpmC", "NEW-ORDER", "STOCK-LEVEL", "condition 4 PASS"] {
        assert!(r.stdout.contains(needle), "{needle}: {}", r.stdout);
    }
    let v = read_json(&dir.path().join("r.json"));
    assert_eq!(v["kind"], "tpcc");
    assert_eq!(v["config"]["spec_timing"], false);
    assert!(v["database"]["isolation"]
        .as_str()
        .unwrap()
        .contains("serializable"));
    let t = &v["transactions"];
    let no = t["NEW-ORDER"]["count"].as_u64().unwrap();
    assert!(no > 100, "{t}");
    let tpmc = v["tpmc"].as_f64().unwrap();
    let expect = no as f64 * 60.0 / v["elapsed_s"].as_f64().unwrap();
    assert!((tpmc - expect).abs() < 1e-6 * expect);
    // the mix: 10 New-Order and 10 Payment for each of the three others
    let total: u64 = [
        "NEW-ORDER",
        "PAYMENT",
        "ORDER-STATUS",
        "DELIVERY",
        "STOCK-LEVEL",
    ]
    .iter()
    .map(|n| t[n]["count"].as_u64().unwrap())
    .sum();
    let share = |n: &str| t[n]["count"].as_f64().unwrap() / total as f64;
    assert!((share("NEW-ORDER") - 10.0 / 23.0).abs() < 0.03);
    assert!((share("DELIVERY") - 1.0 / 23.0).abs() < 0.02);
    // what the run says it did is what the database holds
    let c = db(dir.path());
    let committed = t["NEW-ORDER"]["committed"].as_i64().unwrap();
    // transactions still in flight when the clock stopped are not counted:
    // at most one per terminal
    let in_flight = |written: i64, counted: i64| (0..=4).contains(&(written - counted));
    let orders = one(&c, "SELECT COUNT(*) FROM oorder") - 60_000;
    assert!(
        in_flight(orders, committed),
        "{orders} orders, {committed} counted"
    );
    let payments = t["PAYMENT"]["committed"].as_i64().unwrap();
    let history = one(&c, "SELECT COUNT(*) FROM history") - 60_000;
    assert!(
        in_flight(history, payments),
        "{history} payments, {payments} counted"
    );
    // 1% of New-Orders roll back and leave nothing behind
    let rolled = t["NEW-ORDER"]["rolled_back"].as_u64().unwrap();
    assert!(rolled > 0 && rolled < no / 20, "{rolled} of {no}");
    for n in ["NEW-ORDER", "PAYMENT"] {
        assert_eq!(t[n]["errors"], 0, "{t}");
        assert!(t[n]["response_time_ns"]["p99"].as_u64().unwrap() > 0);
        assert!(!t[n]["histogram"].as_str().unwrap().is_empty());
    }
    let checks = v["checks"].as_array().unwrap();
    assert_eq!(checks.len(), 4);
    assert!(checks.iter().all(|c| c["pass"] == true), "{checks:?}");
    assert!(v["time_series"].as_array().unwrap().len() >= 3);
    assert!(v["client"]["cpu_ns_per_op"].as_f64().unwrap() > 0.0);

    // the checks catch a broken database
    c.execute("UPDATE warehouse SET w_ytd = w_ytd + 1 WHERE w_id = 2", [])
        .unwrap();
    c.execute("DELETE FROM new_order WHERE no_w_id = 1 AND no_d_id = 4 AND no_o_id = (SELECT MIN(no_o_id) + 1 FROM new_order WHERE no_w_id = 1 AND no_d_id = 4)", []).unwrap();
    let r = yardstick(dir.path(), &["tpcc", "check", "--db", "sqlite://t.db"]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(
        r.stdout.contains("condition 1 FAIL") && r.stdout.contains("warehouse 2"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("condition 3 FAIL") && r.stdout.contains("district 4"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("condition 2 PASS") && r.stdout.contains("condition 4 PASS"));
}

#[test]
fn an_interrupted_load_resumes_without_duplicates() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(load(dir.path(), "2").code, 0);
    // as if the load had died halfway through warehouse 2
    let c = db(dir.path());
    c.execute_batch(
        "DELETE FROM tpcc_meta WHERE name = 'warehouse:2';
         DELETE FROM customer WHERE c_w_id = 2 AND c_d_id > 5;
         DELETE FROM stock WHERE s_w_id = 2 AND s_i_id > 50000;",
    )
    .unwrap();
    let run = yardstick(
        dir.path(),
        &[
            "tpcc",
            "run",
            "--db",
            "sqlite://t.db",
            "--warehouses",
            "2",
            "--duration",
            "1s",
        ],
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("--warehouses 2 but 1 are loaded"),
        "{}",
        run.stderr
    );
    // more loaders than warehouses left to load
    let r = yardstick(
        dir.path(),
        &[
            "tpcc",
            "load",
            "--db",
            "sqlite://t.db",
            "--warehouses",
            "2",
            "--loaders",
            "3",
            "-q",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("loaded already"), "{}", r.stderr);
    assert_eq!(
        one(&c, "SELECT COUNT(*) FROM customer WHERE c_w_id = 2"),
        30_000
    );
    assert_eq!(one(&c, "SELECT COUNT(*) FROM stock"), 200_000);
    assert_eq!(one(&c, "SELECT COUNT(*) FROM history"), 60_000);
    assert_eq!(one(&c, "SELECT COUNT(*) FROM warehouse"), 2);
    let check = yardstick(dir.path(), &["tpcc", "check", "--db", "sqlite://t.db"]);
    assert_eq!(check.code, 0, "{}", check.stdout);
}

#[test]
fn bad_tpcc_input_is_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("empty.db"), b"").unwrap();
    for (args, expect) in [
        (
            vec![
                "tpcc",
                "run",
                "--db",
                "sqlite://none.db",
                "--warehouses",
                "1",
            ],
            "does not exist",
        ),
        (
            vec![
                "tpcc",
                "run",
                "--db",
                "sqlite://empty.db",
                "--warehouses",
                "1",
            ],
            "no TPC-C schema",
        ),
        (
            vec!["tpcc", "load", "--db", "sqlite://t.db", "--warehouses", "0"],
            "warehouses",
        ),
        (
            vec![
                "tpcc",
                "run",
                "--db",
                "sqlite://t.db",
                "--warehouses",
                "1",
                "--terminals",
                "0",
            ],
            "terminals",
        ),
        (
            vec!["tpcc", "load", "--db", "oracle://db/x", "--warehouses", "1"],
            "does not support oracle://",
        ),
        (
            vec!["tpcc", "check", "--db", "sqlite://empty.db"],
            "no TPC-C schema",
        ),
    ] {
        let r = yardstick(dir.path(), &args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains(expect), "{args:?}: {}", r.stderr);
        assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    }
}

/// Against the PostgreSQL test server (`scripts/services start postgres`).
#[cfg(feature = "postgres")]
mod postgres {
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
        let r = yardstick(
            dir.path(),
            &[
                "tpcc",
                "run",
                "--db",
                &u,
                "--warehouses",
                "1",
                "--terminals",
                "4",
                "--duration",
                "3s",
                "-q",
                "--out",
                "pg.json",
            ],
        );
        assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
        let v = read_json(&dir.path().join("pg.json"));
        assert_eq!(v["database"]["engine"]["name"], "postgresql");
        assert!(v["database"]["isolation"]
            .as_str()
            .unwrap()
            .contains("read committed"));
        assert!(v["tpmc"].as_f64().unwrap() > 0.0);
        assert_eq!(v["transactions"]["NEW-ORDER"]["errors"], 0);
        let checks = v["checks"].as_array().unwrap();
        assert!(
            checks.len() == 4 && checks.iter().all(|c| c["pass"] == true),
            "{checks:?}"
        );
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
    }
}
