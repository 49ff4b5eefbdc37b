//! The consistency conditions of clause 3.3.2 that apply to a database after
//! runs (1-10 and 12; 11 holds only for the initial population), each pass or
//! fail with the first warehouses, districts, orders or customers that break
//! it. The per-order and per-customer conditions read grouped sums and join
//! them here, so no database needs an index it was not given.
use super::{int, num, Conn, DbError};
use std::collections::BTreeMap;
pub use yardstick_core::tpcc::result::Check;

type Key = (i64, i64);

fn by_district(rows: Vec<super::Row>) -> BTreeMap<Key, super::Row> {
    rows.into_iter()
        .map(|r| ((int(&r, 0), int(&r, 1)), r))
        .collect()
}

fn verdict(condition: u32, name: &str, checked: usize, what: &str, bad: Vec<String>) -> Check {
    Check {
        condition,
        name: name.into(),
        pass: bad.is_empty(),
        detail: if bad.is_empty() {
            format!("holds for {checked} {what}")
        } else {
            format!(
                "fails for {} of {checked} {what}: {}",
                bad.len(),
                bad.iter().take(3).cloned().collect::<Vec<_>>().join("; ")
            )
        },
    }
}

/// Runs the checks, in the clause's order.
pub async fn run<C: Conn + ?Sized>(c: &mut C) -> Result<Vec<Check>, DbError> {
    let mut out = Vec::new();
    // 1: W_YTD = sum(D_YTD)
    let w = c
        .query("SELECT w_id, w_ytd FROM warehouse ORDER BY w_id", &[])
        .await?;
    let d: BTreeMap<i64, f64> = c
        .query(
            "SELECT d_w_id, SUM(d_ytd) FROM district GROUP BY d_w_id",
            &[],
        )
        .await?
        .into_iter()
        .map(|r| (int(&r, 0), num(&r, 1)))
        .collect();
    let bad = w
        .iter()
        .filter_map(|r| {
            let (id, ytd) = (int(r, 0), num(r, 1));
            let sum = d.get(&id).copied().unwrap_or(0.0);
            ((ytd - sum).abs() > 0.005)
                .then(|| format!("warehouse {id}: W_YTD {ytd:.2}, sum of D_YTD {sum:.2}"))
        })
        .collect();
    out.push(verdict(1, "W_YTD = sum(D_YTD)", w.len(), "warehouses", bad));
    // 2: D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)
    let districts = c
        .query(
            "SELECT d_w_id, d_id, d_next_o_id FROM district ORDER BY d_w_id, d_id",
            &[],
        )
        .await?;
    let orders = by_district(
        c.query(
            "SELECT o_w_id, o_d_id, MAX(o_id), SUM(o_ol_cnt) FROM oorder GROUP BY o_w_id, o_d_id",
            &[],
        )
        .await?,
    );
    let new_orders = by_district(c.query(
        "SELECT no_w_id, no_d_id, MAX(no_o_id), MIN(no_o_id), COUNT(*) FROM new_order GROUP BY no_w_id, no_d_id",
        &[],
    ).await?);
    let lines = by_district(
        c.query(
            "SELECT ol_w_id, ol_d_id, COUNT(*) FROM order_line GROUP BY ol_w_id, ol_d_id",
            &[],
        )
        .await?,
    );
    let (mut bad2, mut bad3, mut bad4) = (Vec::new(), Vec::new(), Vec::new());
    for r in &districts {
        let key = (int(r, 0), int(r, 1));
        let at = format!("warehouse {} district {}", key.0, key.1);
        let next = int(r, 2);
        let max_o = orders.get(&key).map_or(0, |o| int(o, 2));
        if next - 1 != max_o {
            bad2.push(format!(
                "{at}: D_NEXT_O_ID - 1 = {}, max(O_ID) = {max_o}",
                next - 1
            ));
        }
        if let Some(no) = new_orders.get(&key) {
            let (max_no, min_no, count) = (int(no, 2), int(no, 3), int(no, 4));
            if max_no != max_o {
                bad2.push(format!(
                    "{at}: max(NO_O_ID) = {max_no}, max(O_ID) = {max_o}"
                ));
            }
            if max_no - min_no + 1 != count {
                bad3.push(format!(
                    "{at}: NO_O_ID from {min_no} to {max_no} but {count} rows"
                ));
            }
        }
        let ol_cnt = orders.get(&key).map_or(0, |o| int(o, 3));
        let ol_rows = lines.get(&key).map_or(0, |l| int(l, 2));
        if ol_cnt != ol_rows {
            bad4.push(format!(
                "{at}: sum(O_OL_CNT) = {ol_cnt}, order lines = {ol_rows}"
            ));
        }
    }
    let n = districts.len();
    out.push(verdict(
        2,
        "D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)",
        n,
        "districts",
        bad2,
    ));
    out.push(verdict(
        3,
        "NEW-ORDER rows contiguous: max(NO_O_ID) - min(NO_O_ID) + 1 = rows",
        n,
        "districts",
        bad3,
    ));
    out.push(verdict(
        4,
        "sum(O_OL_CNT) = ORDER-LINE rows",
        n,
        "districts",
        bad4,
    ));
    orders_and_lines(c, &mut out).await?;
    payments(c, &w, &districts, &mut out).await?;
    Ok(out)
}

type OrderKey = (i64, i64, i64);

fn by_order(rows: Vec<super::Row>) -> BTreeMap<OrderKey, super::Row> {
    rows.into_iter()
        .map(|r| ((int(&r, 0), int(&r, 1), int(&r, 2)), r))
        .collect()
}

fn order_name(k: &OrderKey) -> String {
    format!("warehouse {} district {} order {}", k.0, k.1, k.2)
}

/// 5: O_CARRIER_ID is null exactly for the orders with a NEW-ORDER row;
/// 6: O_OL_CNT = the order's ORDER-LINE rows; 7: OL_DELIVERY_D is null
/// exactly for the lines of orders whose O_CARRIER_ID is null.
async fn orders_and_lines<C: Conn + ?Sized>(
    c: &mut C,
    out: &mut Vec<Check>,
) -> Result<(), DbError> {
    let orders = by_order(
        c.query(
            "SELECT o_w_id, o_d_id, o_id, o_ol_cnt, CASE WHEN o_carrier_id IS NULL THEN 1 ELSE 0 END FROM oorder",
            &[],
        )
        .await?,
    );
    let new_orders = by_order(
        c.query("SELECT no_w_id, no_d_id, no_o_id FROM new_order", &[])
            .await?,
    );
    let lines = by_order(
        c.query(
            "SELECT ol_w_id, ol_d_id, ol_o_id, COUNT(*), SUM(CASE WHEN ol_delivery_d IS NULL THEN 1 ELSE 0 END) FROM order_line GROUP BY ol_w_id, ol_d_id, ol_o_id",
            &[],
        )
        .await?,
    );
    let (mut bad5, mut bad6, mut bad7) = (Vec::new(), Vec::new(), Vec::new());
    for (k, o) in &orders {
        let undelivered = int(o, 4) == 1;
        if undelivered != new_orders.contains_key(k) {
            bad5.push(format!(
                "{}: O_CARRIER_ID {}, {} NEW-ORDER row",
                order_name(k),
                if undelivered { "null" } else { "set" },
                if new_orders.contains_key(k) {
                    "a"
                } else {
                    "no"
                }
            ));
        }
        let (rows, null_dates) = lines.get(k).map_or((0, 0), |l| (int(l, 3), int(l, 4)));
        if int(o, 3) != rows {
            bad6.push(format!(
                "{}: O_OL_CNT {}, {rows} ORDER-LINE rows",
                order_name(k),
                int(o, 3)
            ));
        }
        let expected_null = if undelivered { rows } else { 0 };
        if null_dates != expected_null {
            bad7.push(format!(
                "{}: {null_dates} of {rows} lines without OL_DELIVERY_D, O_CARRIER_ID {}",
                order_name(k),
                if undelivered { "null" } else { "set" }
            ));
        }
    }
    let n = orders.len();
    out.push(verdict(
        5,
        "O_CARRIER_ID null exactly for the orders in NEW-ORDER",
        n,
        "orders",
        bad5,
    ));
    out.push(verdict(
        6,
        "O_OL_CNT = the order's ORDER-LINE rows",
        n,
        "orders",
        bad6,
    ));
    out.push(verdict(
        7,
        "OL_DELIVERY_D null exactly for the lines of undelivered orders",
        n,
        "orders",
        bad7,
    ));
    Ok(())
}

/// 8: W_YTD = sum(H_AMOUNT) of the warehouse; 9: D_YTD = sum(H_AMOUNT) of
/// the district; 10: C_BALANCE = sum(OL_AMOUNT) of the customer's delivered
/// lines - sum(H_AMOUNT) of the customer; 12: C_BALANCE + C_YTD_PAYMENT =
/// sum(OL_AMOUNT) of the customer's delivered lines.
async fn payments<C: Conn + ?Sized>(
    c: &mut C,
    warehouses: &[super::Row],
    districts: &[super::Row],
    out: &mut Vec<Check>,
) -> Result<(), DbError> {
    // sums of DECIMAL(12,2) amounts: equal to the cent
    let differs = |a: f64, b: f64| (a - b).abs() > 0.005;
    let by_w: BTreeMap<i64, f64> = c
        .query(
            "SELECT h_w_id, SUM(h_amount) FROM history GROUP BY h_w_id",
            &[],
        )
        .await?
        .into_iter()
        .map(|r| (int(&r, 0), num(&r, 1)))
        .collect();
    let bad8 = warehouses
        .iter()
        .filter_map(|r| {
            let (id, ytd) = (int(r, 0), num(r, 1));
            let sum = by_w.get(&id).copied().unwrap_or(0.0);
            differs(ytd, sum)
                .then(|| format!("warehouse {id}: W_YTD {ytd:.2}, sum of H_AMOUNT {sum:.2}"))
        })
        .collect();
    out.push(verdict(
        8,
        "W_YTD = sum(H_AMOUNT)",
        warehouses.len(),
        "warehouses",
        bad8,
    ));
    let by_d: BTreeMap<Key, f64> = c
        .query(
            "SELECT h_w_id, h_d_id, SUM(h_amount) FROM history GROUP BY h_w_id, h_d_id",
            &[],
        )
        .await?
        .into_iter()
        .map(|r| ((int(&r, 0), int(&r, 1)), num(&r, 2)))
        .collect();
    let d_ytd: BTreeMap<Key, f64> = c
        .query("SELECT d_w_id, d_id, d_ytd FROM district", &[])
        .await?
        .into_iter()
        .map(|r| ((int(&r, 0), int(&r, 1)), num(&r, 2)))
        .collect();
    let bad9 = d_ytd
        .iter()
        .filter_map(|(k, ytd)| {
            let sum = by_d.get(k).copied().unwrap_or(0.0);
            differs(*ytd, sum).then(|| {
                format!(
                    "warehouse {} district {}: D_YTD {ytd:.2}, sum of H_AMOUNT {sum:.2}",
                    k.0, k.1
                )
            })
        })
        .collect();
    out.push(verdict(
        9,
        "D_YTD = sum(H_AMOUNT)",
        districts.len(),
        "districts",
        bad9,
    ));
    let paid: BTreeMap<OrderKey, f64> = c
        .query(
            "SELECT h_c_w_id, h_c_d_id, h_c_id, SUM(h_amount) FROM history GROUP BY h_c_w_id, h_c_d_id, h_c_id",
            &[],
        )
        .await?
        .into_iter()
        .map(|r| ((int(&r, 0), int(&r, 1), int(&r, 2)), num(&r, 3)))
        .collect();
    let delivered: BTreeMap<OrderKey, f64> = c
        .query(
            "SELECT o.o_w_id, o.o_d_id, o.o_c_id, SUM(ol.ol_amount) FROM oorder o JOIN order_line ol ON ol.ol_w_id = o.o_w_id AND ol.ol_d_id = o.o_d_id AND ol.ol_o_id = o.o_id WHERE ol.ol_delivery_d IS NOT NULL GROUP BY o.o_w_id, o.o_d_id, o.o_c_id",
            &[],
        )
        .await?
        .into_iter()
        .map(|r| ((int(&r, 0), int(&r, 1), int(&r, 2)), num(&r, 3)))
        .collect();
    let customers = c
        .query(
            "SELECT c_w_id, c_d_id, c_id, c_balance, c_ytd_payment FROM customer",
            &[],
        )
        .await?;
    let (mut bad10, mut bad12) = (Vec::new(), Vec::new());
    for r in &customers {
        let k = (int(r, 0), int(r, 1), int(r, 2));
        let (balance, ytd) = (num(r, 3), num(r, 4));
        let ol = delivered.get(&k).copied().unwrap_or(0.0);
        let h = paid.get(&k).copied().unwrap_or(0.0);
        let who = format!("warehouse {} district {} customer {}", k.0, k.1, k.2);
        if differs(balance, ol - h) {
            bad10.push(format!(
                "{who}: C_BALANCE {balance:.2}, delivered {ol:.2} - paid {h:.2}"
            ));
        }
        if differs(balance + ytd, ol) {
            bad12.push(format!(
                "{who}: C_BALANCE + C_YTD_PAYMENT {:.2}, delivered {ol:.2}",
                balance + ytd
            ));
        }
    }
    let n = customers.len();
    out.push(verdict(
        10,
        "C_BALANCE = delivered sum(OL_AMOUNT) - sum(H_AMOUNT)",
        n,
        "customers",
        bad10,
    ));
    out.push(verdict(
        12,
        "C_BALANCE + C_YTD_PAYMENT = delivered sum(OL_AMOUNT)",
        n,
        "customers",
        bad12,
    ));
    Ok(())
}
