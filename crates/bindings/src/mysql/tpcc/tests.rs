//! Tests of the MySQL TPC-C connection's statement rewriting and literal escaping.
use super::*;

#[test]
fn literals_are_escaped_for_either_sql_mode() {
    let mut s = String::new();
    let v = Value::Text("it's a\\b\0".into());
    literal(&mut s, &v, "", false);
    assert_eq!(s, "'it''s a\\\\b\\0'");
    s.clear();
    literal(&mut s, &v, "", true);
    assert_eq!(s, "'it''s a\\b\0'");
    s.clear();
    literal(&mut s, &Value::Num(0.25), "", false);
    literal(&mut s, &Value::Null, "", false);
    literal(&mut s, &Value::Now, "2026-01-02 03:04:05", false);
    assert_eq!(s, "0.2500NULL'2026-01-02 03:04:05'");
}

#[test]
fn parameters_are_inlined_in_order_and_counted() {
    let mut s = String::new();
    inline(
        &mut s,
        "UPDATE t SET a = ?, b = ? WHERE k = ?",
        &[Value::Int(1), Value::Text("o'k".into()), Value::Now],
        "2026-01-02 03:04:05.006",
        false,
    )
    .unwrap();
    assert_eq!(
        s,
        "UPDATE t SET a = 1, b = 'o''k' WHERE k = '2026-01-02 03:04:05.006'"
    );
    let few = inline(&mut s, "SELECT ?, ?", &[Value::Int(1)], "", false);
    assert!(few.unwrap_err().message.contains("too few parameters"));
    let many = inline(&mut s, "SELECT ?", &[Value::Int(1), Value::Null], "", false);
    assert!(many.unwrap_err().message.contains("too many parameters"));
}

#[test]
fn multi_row_inserts_split_near_the_size_limit_and_keep_every_row() {
    let row = |i: i64| vec![Value::Int(i), Value::Int(1), Value::Text("x".repeat(900))];
    let rows: Vec<Row> = (0..3000).map(row).collect();
    let st = insert_statements("new_order", &rows, "", false);
    assert!(st.len() > 1, "{}", st.len());
    let mut n = 0;
    for s in &st {
        assert!(s.starts_with("INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES ("));
        assert!(s.len() < INSERT_BYTES + 2000);
        n += s.matches("),(").count() + 1;
    }
    assert_eq!(n, 3000);
    assert!(insert_statements("new_order", &[], "", false).is_empty());
}
