//! Pipelines of statements on every TPC-C connection: in order, stopping at
//! the first error, deferred statements sent with the commit at the latest.
use super::*;

/// A connection's pipelines run their statements in order and stop at the
/// first error; deferred statements go out with the commit at the latest,
/// and a failure among them fails the commit.
pub(super) fn pipelines_keep_order_and_errors<C: Conn + ?Sized>(c: &mut C, table: &str) {
    use yardstick_bindings::tpcc::Stmt;
    use yardstick_bindings::tpcc::Value::{Int, Text};
    let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
    wait(c.batch(&format!(
        "CREATE TABLE {table} (k INT PRIMARY KEY, v VARCHAR(20))"
    )))
    .unwrap();
    let ins = leak(format!("INSERT INTO {table} (k, v) VALUES (?, ?)"));
    let sel = leak(format!("SELECT k, v FROM {table} ORDER BY k"));
    let upd = leak(format!("UPDATE {table} SET v = ? WHERE k >= ?"));
    let keys = |c: &mut C| -> Vec<i64> {
        wait(c.query(sel, &[]))
            .unwrap()
            .iter()
            .map(|r| yardstick_bindings::tpcc::int(r, 0))
            .collect()
    };
    wait(c.begin()).unwrap();
    let out = wait(c.pipeline(vec![
        Stmt::Exec(ins, vec![Int(1), Text("it's".into())]),
        Stmt::Exec(ins, vec![Int(2), Text("b\\c".into())]),
        Stmt::Exec(upd, vec![Text("x".into()), Int(2)]),
        Stmt::Query(sel, vec![]),
    ]))
    .unwrap();
    assert_eq!(out.len(), 4);
    assert_eq!((out[0].count(), out[2].count()), (1, 1));
    assert_eq!(
        out[3].clone().rows(),
        vec![
            vec![Int(1), Text("it's".into())],
            vec![Int(2), Text("x".into())]
        ]
    );
    wait(c.defer(vec![Stmt::Exec(ins, vec![Int(3), Text("b\\c".into())])])).unwrap();
    wait(c.commit()).unwrap();
    let third = wait(c.query(leak(format!("SELECT v FROM {table} WHERE k = 3")), &[])).unwrap();
    assert_eq!(third, vec![vec![Text("b\\c".into())]]);
    // a duplicate key stops the pipeline; the rollback undoes the rest
    wait(c.begin()).unwrap();
    let e = wait(c.pipeline(vec![
        Stmt::Exec(ins, vec![Int(4), Text("d".into())]),
        Stmt::Exec(ins, vec![Int(1), Text("dup".into())]),
        Stmt::Exec(ins, vec![Int(5), Text("e".into())]),
    ]))
    .unwrap_err();
    assert_eq!(e.kind, yardstick_bindings::tpcc::ErrorKind::Other, "{e}");
    wait(c.rollback()).unwrap();
    assert_eq!(keys(c), vec![1, 2, 3]);
    // a deferred failure fails the commit at the latest
    wait(c.begin()).unwrap();
    let r = wait(c.defer(vec![
        Stmt::Exec(ins, vec![Int(6), Text("f".into())]),
        Stmt::Exec(ins, vec![Int(2), Text("dup".into())]),
    ]))
    .and_then(|()| wait(c.commit()));
    assert!(r.is_err());
    wait(c.rollback()).unwrap();
    assert_eq!(keys(c), vec![1, 2, 3]);
    wait(c.batch(&format!("DROP TABLE {table}"))).unwrap();
}

#[test]
fn sqlite_pipelines_keep_order_and_errors() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = SqliteConn::open(
        &Target::parse(&format!("sqlite://{}", dir.path().join("p.db").display())).unwrap(),
        true,
        Isolation::Serializable,
    )
    .unwrap();
    pipelines_keep_order_and_errors(&mut c, "pipe");
}
