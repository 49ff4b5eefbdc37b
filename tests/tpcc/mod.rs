//! `yardstick tpcc` on SQLite: the load's cardinalities and value rules, a run
//! whose counts match what it wrote to the database, the consistency checks
//! (and that they catch a broken database), a resumed load, and bad input.
use crate::common::*;
use std::path::Path;
use yardstick_bindings::sqlite::tpcc::SqliteConn;
use yardstick_bindings::tpcc::{num, Conn, Isolation};
use yardstick_bindings::Target;

thread_local! {
    /// The test thread's runtime: a connection opened in it lives there.
    static RUNTIME: tokio::runtime::Runtime = yardstick_bindings::tpcc::runtime().unwrap();
}

/// Runs a connection's future to its end on the test thread's runtime, so a
/// test reads as a script.
fn wait<F: std::future::Future>(f: F) -> F::Output {
    RUNTIME.with(|rt| rt.block_on(f))
}

fn db(dir: &Path) -> rusqlite::Connection {
    rusqlite::Connection::open(dir.join("t.db")).unwrap()
}

fn one(c: &rusqlite::Connection, sql: &str) -> i64 {
    c.query_row(sql, [], |r| r.get(0)).unwrap()
}

/// Sums over every loaded table that any difference in the generated data
/// would change; equal on every database loaded with the same seed.
fn fingerprint<C: Conn + ?Sized>(c: &mut C) -> Vec<f64> {
    const QUERIES: &[&str] = &[
        "SELECT COUNT(*), SUM(w_ytd), SUM(w_tax), SUM(LENGTH(w_name)) FROM warehouse",
        "SELECT COUNT(*), SUM(d_next_o_id), SUM(d_tax), SUM(LENGTH(d_street_1)) FROM district",
        "SELECT COUNT(*), SUM(c_balance), SUM(c_discount), SUM(LENGTH(c_last)), SUM(LENGTH(c_data)), SUM(CASE WHEN c_credit = 'BC' THEN 1 ELSE 0 END) FROM customer",
        "SELECT COUNT(*), SUM(h_amount), SUM(LENGTH(h_data)) FROM history",
        "SELECT COUNT(*), SUM(o_c_id), SUM(o_ol_cnt), SUM(COALESCE(o_carrier_id, 0)) FROM oorder",
        "SELECT COUNT(*), SUM(no_o_id) FROM new_order",
        "SELECT COUNT(*), SUM(ol_i_id), SUM(ol_amount), SUM(ol_quantity) FROM order_line",
        "SELECT COUNT(*), SUM(s_quantity), SUM(LENGTH(s_data)), SUM(CASE WHEN s_data LIKE '%ORIGINAL%' THEN 1 ELSE 0 END) FROM stock",
        "SELECT COUNT(*), SUM(i_price), SUM(i_im_id), SUM(LENGTH(i_data)) FROM item",
    ];
    let mut out = Vec::new();
    for q in QUERIES {
        let rows = wait(c.query(q, &[])).unwrap();
        for i in 0..rows[0].len() {
            out.push(num(&rows[0], i));
        }
    }
    out
}

fn assert_same_data(a: &[f64], b: &[f64]) {
    assert_eq!(a.len(), b.len());
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert!(
            (x - y).abs() <= 1e-6 * x.abs().max(1.0),
            "fingerprint {i} differs: {x} vs {y}"
        );
    }
}

fn sqlite_conn(path: &Path) -> SqliteConn {
    SqliteConn::open(
        &Target::parse(&format!("sqlite://{}", path.display())).unwrap(),
        false,
        Isolation::Serializable,
    )
    .unwrap()
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

/// `yardstick tpcc run` against `db` with [warehouses, terminals, duration],
/// extra arguments and the result file.
fn tpcc_run(dir: &Path, db: &str, wtd: [&str; 3], extra: &[&str], out: &str) -> Run {
    let mut args = vec![
        "tpcc",
        "run",
        "--db",
        db,
        "--warehouses",
        wtd[0],
        "--terminals",
        wtd[1],
        "--duration",
        wtd[2],
        "-q",
        "--out",
        out,
    ];
    args.extend_from_slice(extra);
    let r = yardstick(dir, &args);
    // every result a run writes, partial ones too, is what the schema says
    let written = dir.join(out);
    if written.exists() {
        assert_tpcc_schema_valid(&read_json(&written));
    }
    r
}

/// `catalog` (the index names, sorted) lists exactly the two secondary indexes.
fn assert_secondary_indexes<C: Conn + ?Sized>(c: &mut C, catalog: &'static str) {
    let names: Vec<String> = wait(c.query(catalog, &[]))
        .unwrap()
        .iter()
        .map(|r| yardstick_bindings::tpcc::text(r, 0))
        .collect();
    assert_eq!(names, ["customer_name", "oorder_customer"]);
}

/// The conditions of clause 3.3.2 that apply after runs: 1-10 and 12.
const CONDITIONS: [u64; 11] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12];

/// The result's consistency checks ran, each condition once, and passed.
fn assert_checks_pass(v: &serde_json::Value) {
    let checks = v["checks"].as_array().unwrap();
    let numbers: Vec<u64> = checks
        .iter()
        .map(|c| c["condition"].as_u64().unwrap())
        .collect();
    assert_eq!(numbers, CONDITIONS, "{checks:?}");
    assert!(checks.iter().all(|c| c["pass"] == true), "{checks:?}");
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
    // transactions still in flight when the clock stopped end and are
    // counted: every committed one, no more
    let orders = one(&c, "SELECT COUNT(*) FROM oorder") - 60_000;
    assert_eq!(orders, committed, "{orders} orders, {committed} counted");
    let payments = t["PAYMENT"]["committed"].as_i64().unwrap();
    let history = one(&c, "SELECT COUNT(*) FROM history") - 60_000;
    assert_eq!(history, payments, "{history} payments, {payments} counted");
    // 1% of New-Orders roll back and leave nothing behind
    let rolled = t["NEW-ORDER"]["rolled_back"].as_u64().unwrap();
    assert!(rolled > 0 && rolled < no / 20, "{rolled} of {no}");
    for n in ["NEW-ORDER", "PAYMENT"] {
        assert_eq!(t[n]["errors"], 0, "{t}");
        assert!(t[n]["response_time_ns"]["p99"].as_u64().unwrap() > 0);
        assert!(!t[n]["histogram"].as_str().unwrap().is_empty());
    }
    assert_checks_pass(&v);
    assert!(v["time_series"].as_array().unwrap().len() >= 3);
    assert!(v["client"]["cpu_ns_per_op"].as_f64().unwrap() > 0.0);

    // the checks catch a broken database
    c.execute("UPDATE warehouse SET w_ytd = w_ytd + 1 WHERE w_id = 2", [])
        .unwrap();
    c.execute("DELETE FROM new_order WHERE no_w_id = 1 AND no_d_id = 4 AND no_o_id = (SELECT MIN(no_o_id) + 1 FROM new_order WHERE no_w_id = 1 AND no_d_id = 4)", []).unwrap();
    // one customer's balance off by 1 (go-tpc's checker catches it; 3.3.2.10 and 12 do)
    c.execute(
        "UPDATE customer SET c_balance = c_balance + 1 WHERE c_w_id = 2 AND c_d_id = 3 AND c_id = 7",
        [],
    )
    .unwrap();
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
    for n in ["5", "8", "10", "12"] {
        assert!(
            r.stdout.contains(&format!("condition {n} FAIL")),
            "{}",
            r.stdout
        );
    }
    assert!(r.stdout.contains("district 3 customer 7"), "{}", r.stdout);
    for n in ["6", "7", "9"] {
        assert!(
            r.stdout.contains(&format!("condition {n} PASS")),
            "{}",
            r.stdout
        );
    }
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
    let run_2 = || tpcc_run(dir.path(), "sqlite://t.db", ["2", "1", "1s"], &[], "r.json");
    let run = run_2();
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("--warehouses 2 but 1 are loaded"),
        "{}",
        run.stderr
    );
    // and through ITEM (a unit of work of its own)
    c.execute_batch(
        "DELETE FROM tpcc_meta WHERE name = 'items';
         DELETE FROM item WHERE i_id > 60000;",
    )
    .unwrap();
    let run = run_2();
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "load is incomplete (items loaded: false, warehouses: 1): rerun `yardstick tpcc load --warehouses 2`"
        ),
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
    assert_eq!(one(&c, "SELECT COUNT(*) FROM item"), 100_000);
    let check = yardstick(dir.path(), &["tpcc", "check", "--db", "sqlite://t.db"]);
    assert_eq!(check.code, 0, "{}", check.stdout);
}

/// The secondary indexes of the fast load's SQLite database.
fn sqlite_indexes(c: &rusqlite::Connection) -> i64 {
    one(
        c,
        "SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name IN ('customer_name', 'oorder_customer')",
    )
}

#[test]
fn a_load_stopped_before_its_indexes_is_refused_by_run_and_finished_by_load() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(load(dir.path(), "1").code, 0);
    let c = db(dir.path());
    assert_eq!(sqlite_indexes(&c), 2);
    assert_eq!(
        one(&c, "SELECT COUNT(*) FROM tpcc_meta WHERE name = 'indexes'"),
        0
    );
    // as if the load had been stopped after the last warehouse
    c.execute_batch(
        "DROP INDEX customer_name; DROP INDEX oorder_customer;
         INSERT INTO tpcc_meta (name, value) VALUES ('indexes', 'deferred');",
    )
    .unwrap();
    let run = tpcc_run(dir.path(), "sqlite://t.db", ["1", "1", "1s"], &[], "r.json");
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("stopped before building its secondary indexes: rerun `yardstick tpcc load --warehouses 1`"),
        "{}",
        run.stderr
    );
    assert!(!dir.path().join("r.json").exists());
    let l = load(dir.path(), "1");
    assert_eq!(l.code, 0, "{}", l.stderr);
    assert_eq!(sqlite_indexes(&c), 2);
    assert_eq!(
        one(&c, "SELECT COUNT(*) FROM tpcc_meta WHERE name = 'indexes'"),
        0
    );
    // by-name lookups use the index
    let plan: String = c
        .query_row(
            "EXPLAIN QUERY PLAN SELECT c_id FROM customer WHERE c_w_id = 1 AND c_d_id = 1 AND c_last = 'BARBARBAR' ORDER BY c_first",
            [],
            |r| r.get(3),
        )
        .unwrap();
    assert!(plan.contains("customer_name"), "{plan}");
}

#[test]
fn row_by_row_and_fast_loads_write_the_same_data() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(load(dir.path(), "1").code, 0);
    let r = yardstick(
        dir.path(),
        &[
            "tpcc",
            "load",
            "--db",
            "sqlite://rows.db",
            "--warehouses",
            "1",
            "--method",
            "insert",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("row-by-row INSERT"), "{}", r.stdout);
    let fast = fingerprint(&mut sqlite_conn(&dir.path().join("t.db")));
    let rows = fingerprint(&mut sqlite_conn(&dir.path().join("rows.db")));
    assert_eq!(fast[0], 1.0);
    assert_eq!(fast[fast.len() - 4], 100_000.0);
    assert_same_data(&fast, &rows);
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
        (
            vec![
                "tpcc",
                "run",
                "--db",
                "sqlite://empty.db",
                "--warehouses",
                "1",
                "--isolation",
                "read-committed",
            ],
            "SQLite runs every transaction serializable and has no READ COMMITTED level",
        ),
        (
            vec![
                "tpcc",
                "run",
                "--db",
                "sqlite://empty.db",
                "--warehouses",
                "1",
                "--isolation",
                "chaos",
            ],
            "--isolation chaos is not a level",
        ),
    ] {
        let r = yardstick(dir.path(), &args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains(expect), "{args:?}: {}", r.stderr);
        assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    }
}

mod mysql;
mod pipelines;
mod postgres;
mod runner;

use pipelines::pipelines_keep_order_and_errors;

/// Runs `--sending one-by-one` beside the pipelined result `piped` (a
/// result file in `dir`) and checks what each cost in round trips: one
/// statement per round trip costs many times more, the data stays
/// consistent either way.
pub(super) fn assert_one_by_one_costs_more_round_trips(dir: &Path, url: &str, piped: &str) {
    let r = tpcc_run(
        dir,
        url,
        ["1", "2", "2s"],
        &["--sending", "one-by-one"],
        "obo.json",
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains("statements sent one-by-one:"),
        "{}",
        r.stdout
    );
    let trips = |f: &str| read_json(&dir.join(f))["round_trips"].clone();
    let (p, o) = (trips(piped), trips("obo.json"));
    assert_eq!(
        (p["sending"].as_str(), o["sending"].as_str()),
        (Some("pipelined"), Some("one-by-one"))
    );
    let per = |t: &serde_json::Value| t["per_transaction"].as_f64().unwrap();
    assert!((2.0..4.0).contains(&per(&p)), "{p}");
    assert!(per(&o) > 5.0 * per(&p), "{o} against {p}");
    // New-Order: BEGIN, 4 statements per order line (5 to 15 lines), COMMIT
    let new_order = o["by_transaction"]["NEW-ORDER"].as_f64().unwrap();
    assert!(new_order >= 20.0, "{o}");
    assert_checks_pass(&read_json(&dir.join("obo.json")));
}
