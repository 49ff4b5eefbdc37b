//! The consistency conditions of clause 3.3.2.1-4, each pass or fail with the
//! first districts that break it.
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

/// Runs the four checks.
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
    Ok(out)
}
