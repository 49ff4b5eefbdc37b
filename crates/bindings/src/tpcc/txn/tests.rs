//! Tests of the five transactions on a tiny SQLite database: what each
//! changes, rollbacks and the retry of serialization failures.
use super::*;
use crate::sqlite::tpcc::SqliteConn;
use crate::tpcc::{insert_sql, Isolation, INDEXES, SCHEMA};
use yardstick_core::tpcc::{rows, Constants, OrderLineInput, Random};

/// Runs a test body on a runtime of the test's thread.
fn run(body: impl std::future::Future<Output = ()>) {
    crate::tpcc::runtime().unwrap().block_on(body);
}

/// Warehouse 1, district 1, customer 1, items 1 and 2 with stock 20 and 15.
async fn tiny(dir: &std::path::Path) -> SqliteConn {
    let url = format!("sqlite://{}", dir.join("t.db").display());
    let mut c = SqliteConn::open(
        &crate::Target::parse(&url).unwrap(),
        true,
        Isolation::Serializable,
    )
    .unwrap();
    for ddl in SCHEMA.iter().chain(INDEXES) {
        c.batch(ddl).await.unwrap();
    }
    let mut r = Random::new(
        1,
        Constants {
            c_last: 1,
            c_id: 2,
            ol_i_id: 3,
        },
    );
    let mut rows = vec![
        ("warehouse", rows::one(|s| rows::warehouse(&mut r, 1, s))),
        ("district", rows::one(|s| rows::district(&mut r, 1, 1, s))),
        (
            "customer",
            rows::one(|s| rows::customer(&mut r, 1, 1, 1, s)),
        ),
    ];
    for item in 1..=2 {
        rows.push(("item", rows::one(|s| rows::item(&mut r, item, s))));
        rows.push(("stock", rows::one(|s| rows::stock(&mut r, 1, item, s))));
    }
    for (table, row) in rows {
        c.execute(insert_sql(table), &row).await.unwrap();
    }
    c.batch(
        "UPDATE stock SET s_quantity = CASE s_i_id WHEN 1 THEN 20 ELSE 15 END, s_ytd = 0, s_order_cnt = 0",
    )
    .await
    .unwrap();
    c
}

async fn stock(c: &mut SqliteConn, item: u32) -> (i64, i64, i64) {
    let r = c
        .query(
            "SELECT s_quantity, s_ytd, s_order_cnt FROM stock WHERE s_w_id = 1 AND s_i_id = ?",
            &[i(item)],
        )
        .await
        .unwrap();
    (int(&r[0], 0), int(&r[0], 1), int(&r[0], 2))
}

fn line(i_id: u32, quantity: u32) -> OrderLineInput {
    OrderLineInput {
        i_id,
        supply_w_id: 1,
        quantity,
    }
}

#[test]
fn an_item_ordered_twice_takes_its_stock_as_one_line_after_another() {
    run(async {
        let dir = tempfile::tempdir().unwrap();
        let mut c = tiny(dir.path()).await;
        let o = NewOrder {
            w_id: 1,
            d_id: 1,
            c_id: 1,
            lines: vec![line(1, 5), line(2, 3), line(1, 8)],
            rollback: false,
        };
        assert_eq!(new_order(&mut c, &o).await.unwrap(), Ended::Committed);
        // item 1: 20 - 5 = 15, then 15 < 8 + 10 so 15 - 8 + 91 = 98
        assert_eq!(stock(&mut c, 1).await, (98, 13, 2));
        assert_eq!(stock(&mut c, 2).await, (12, 3, 1));
        let lines = c
            .query(
                "SELECT ol_number, ol_i_id, ol_quantity FROM order_line ORDER BY ol_number",
                &[],
            )
            .await
            .unwrap();
        let got: Vec<(i64, i64, i64)> = lines
            .iter()
            .map(|r| (int(r, 0), int(r, 1), int(r, 2)))
            .collect();
        assert_eq!(got, vec![(1, 1, 5), (2, 2, 3), (3, 1, 8)]);
    });
}

#[test]
fn an_unused_item_rolls_the_whole_order_back() {
    run(async {
        let dir = tempfile::tempdir().unwrap();
        let mut c = tiny(dir.path()).await;
        async fn next(c: &mut SqliteConn) -> i64 {
            int(
                &c.query("SELECT d_next_o_id FROM district", &[])
                    .await
                    .unwrap()[0],
                0,
            )
        }
        let before = next(&mut c).await;
        let o = NewOrder {
            w_id: 1,
            d_id: 1,
            c_id: 1,
            lines: vec![line(1, 5), line(3, 1)],
            rollback: true,
        };
        assert_eq!(new_order(&mut c, &o).await.unwrap(), Ended::RolledBack);
        assert_eq!(next(&mut c).await, before);
        assert_eq!(stock(&mut c, 1).await, (20, 0, 0));
        let orders = c.query("SELECT COUNT(*) FROM oorder", &[]).await.unwrap();
        assert_eq!(int(&orders[0], 0), 0);
    });
}
