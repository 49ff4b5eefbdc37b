//! The five transactions of clause 2, each one database transaction.
use super::{int, num, text, Conn, DbError, Row, Value};
use yardstick_core::tpcc::{CustomerBy, Delivery, NewOrder, OrderStatus, Payment, StockLevel};

/// How a transaction ended without a database error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    Committed,
    /// New-Order's 1% with an unused item: rolled back as the specification
    /// requires; counted as a completed transaction.
    RolledBack,
}

/// Runs `body` in a transaction: commits on success, rolls back on error or
/// on a requested rollback.
fn in_txn<C: Conn>(
    c: &mut C,
    body: impl FnOnce(&mut C) -> Result<Ended, DbError>,
) -> Result<Ended, DbError> {
    c.begin()?;
    match body(c) {
        Ok(Ended::Committed) => match c.commit() {
            Ok(()) => Ok(Ended::Committed),
            Err(e) => {
                let _ = c.rollback();
                Err(e)
            }
        },
        Ok(Ended::RolledBack) => {
            c.rollback()?;
            Ok(Ended::RolledBack)
        }
        Err(e) => {
            let _ = c.rollback();
            Err(e)
        }
    }
}

fn i(v: u32) -> Value {
    Value::Int(v.into())
}

fn first(rows: Vec<Row>, what: &str) -> Result<Row, DbError> {
    rows.into_iter()
        .next()
        .ok_or_else(|| DbError::other(format!("{what} not found: is the database loaded?")))
}

const STOCK_FOR_UPDATE: [&str; 10] = [
    "SELECT s_quantity, s_data, s_dist_01 FROM stock WHERE s_w_id = ? AND s_i_id = ? FOR UPDATE",
    "SELECT s_quantity, s_data, s_dist_02 FROM stock WHERE s_w_id = ? AND s_i_id = ? FOR UPDATE",
    "SELECT s_quantity, s_data, s_dist_03 FROM stock WHERE s_w_id = ? AND s_i_id = ? FOR UPDATE",
    "SELECT s_quantity, s_data, s_dist_04 FROM stock WHERE s_w_id = ? AND s_i_id = ? FOR UPDATE",
    "SELECT s_quantity, s_data, s_dist_05 FROM stock WHERE s_w_id = ? AND s_i_id = ? FOR UPDATE",
    "SELECT s_quantity, s_data, s_dist_06 FROM stock WHERE s_w_id = ? AND s_i_id = ? FOR UPDATE",
    "SELECT s_quantity, s_data, s_dist_07 FROM stock WHERE s_w_id = ? AND s_i_id = ? FOR UPDATE",
    "SELECT s_quantity, s_data, s_dist_08 FROM stock WHERE s_w_id = ? AND s_i_id = ? FOR UPDATE",
    "SELECT s_quantity, s_data, s_dist_09 FROM stock WHERE s_w_id = ? AND s_i_id = ? FOR UPDATE",
    "SELECT s_quantity, s_data, s_dist_10 FROM stock WHERE s_w_id = ? AND s_i_id = ? FOR UPDATE",
];

/// Clause 2.4.2. Stock rows are locked in (warehouse, item) order so two
/// New-Orders never wait on each other in a cycle.
pub fn new_order<C: Conn>(c: &mut C, o: &NewOrder) -> Result<Ended, DbError> {
    in_txn(c, |c| {
        let w = first(
            c.query("SELECT w_tax FROM warehouse WHERE w_id = ?", &[i(o.w_id)])?,
            "warehouse",
        )?;
        let w_tax = num(&w, 0);
        let d = first(
            c.query(
                "SELECT d_tax, d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ? FOR UPDATE",
                &[i(o.w_id), i(o.d_id)],
            )?,
            "district",
        )?;
        let (d_tax, o_id) = (num(&d, 0), int(&d, 1));
        c.execute(
            "UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = ? AND d_id = ?",
            &[i(o.w_id), i(o.d_id)],
        )?;
        let cu = first(
            c.query(
                "SELECT c_discount, c_last, c_credit FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
                &[i(o.w_id), i(o.d_id), i(o.c_id)],
            )?,
            "customer",
        )?;
        let discount = num(&cu, 0);
        let all_local = o.lines.iter().all(|l| l.supply_w_id == o.w_id);
        c.execute(
            "INSERT INTO oorder (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local) VALUES (?, ?, ?, ?, ?, NULL, ?, ?)",
            &[
                Value::Int(o_id),
                i(o.d_id),
                i(o.w_id),
                i(o.c_id),
                Value::Now,
                Value::Int(o.lines.len() as i64),
                Value::Int(all_local.into()),
            ],
        )?;
        c.execute(
            "INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (?, ?, ?)",
            &[Value::Int(o_id), i(o.d_id), i(o.w_id)],
        )?;
        let mut order: Vec<usize> = (0..o.lines.len()).collect();
        order.sort_by_key(|&k| (o.lines[k].supply_w_id, o.lines[k].i_id));
        let mut total = 0.0;
        for k in order {
            let l = &o.lines[k];
            let Some(item) = c
                .query(
                    "SELECT i_price, i_name, i_data FROM item WHERE i_id = ?",
                    &[i(l.i_id)],
                )?
                .into_iter()
                .next()
            else {
                // the unused item of the 1% rollbacks
                return Ok(Ended::RolledBack);
            };
            let price = num(&item, 0);
            let s = first(
                c.query(
                    STOCK_FOR_UPDATE[o.d_id as usize - 1],
                    &[i(l.supply_w_id), i(l.i_id)],
                )?,
                "stock",
            )?;
            let quantity = int(&s, 0);
            let new_quantity = if quantity >= i64::from(l.quantity) + 10 {
                quantity - i64::from(l.quantity)
            } else {
                quantity - i64::from(l.quantity) + 91
            };
            c.execute(
                "UPDATE stock SET s_quantity = ?, s_ytd = s_ytd + ?, s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + ? WHERE s_w_id = ? AND s_i_id = ?",
                &[
                    Value::Int(new_quantity),
                    i(l.quantity),
                    Value::Int((l.supply_w_id != o.w_id).into()),
                    i(l.supply_w_id),
                    i(l.i_id),
                ],
            )?;
            let amount = (f64::from(l.quantity) * price * 100.0).round() / 100.0;
            total += amount;
            c.execute(
                "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, ol_dist_info) VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?, ?)",
                &[
                    Value::Int(o_id),
                    i(o.d_id),
                    i(o.w_id),
                    Value::Int(k as i64 + 1),
                    i(l.i_id),
                    i(l.supply_w_id),
                    i(l.quantity),
                    Value::Num(amount),
                    Value::Text(text(&s, 2)),
                ],
            )?;
        }
        // the order's total, as the terminal would display it
        let _total = total * (1.0 - discount) * (1.0 + w_tax + d_tax);
        Ok(Ended::Committed)
    })
}

/// The customer's id: by id, or the middle one (rounded up) of those with
/// the last name, sorted by first name (clause 2.5.2.2).
fn customer_id<C: Conn>(c: &mut C, w: u32, d: u32, by: &CustomerBy) -> Result<u32, DbError> {
    match by {
        CustomerBy::Id(id) => Ok(*id),
        CustomerBy::LastName(last) => {
            let rows = c.query(
                "SELECT c_id FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first",
                &[i(w), i(d), Value::Text(last.clone())],
            )?;
            if rows.is_empty() {
                return Err(DbError::other(format!(
                    "no customer named {last} in warehouse {w} district {d}: is the database loaded?"
                )));
            }
            Ok(int(&rows[rows.len().div_ceil(2) - 1], 0) as u32)
        }
    }
}

/// Clause 2.5.2.
pub fn payment<C: Conn>(c: &mut C, p: &Payment) -> Result<Ended, DbError> {
    in_txn(c, |c| {
        let amount = Value::Num(p.amount);
        c.execute(
            "UPDATE warehouse SET w_ytd = w_ytd + ? WHERE w_id = ?",
            &[amount.clone(), i(p.w_id)],
        )?;
        let w = first(
            c.query(
                "SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip FROM warehouse WHERE w_id = ?",
                &[i(p.w_id)],
            )?,
            "warehouse",
        )?;
        c.execute(
            "UPDATE district SET d_ytd = d_ytd + ? WHERE d_w_id = ? AND d_id = ?",
            &[amount.clone(), i(p.w_id), i(p.d_id)],
        )?;
        let d = first(
            c.query(
                "SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip FROM district WHERE d_w_id = ? AND d_id = ?",
                &[i(p.w_id), i(p.d_id)],
            )?,
            "district",
        )?;
        let c_id = customer_id(c, p.c_w_id, p.c_d_id, &p.customer)?;
        let cu = first(
            c.query(
                "SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_since, c_credit, c_credit_lim, c_discount, c_balance FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ? FOR UPDATE",
                &[i(p.c_w_id), i(p.c_d_id), i(c_id)],
            )?,
            "customer",
        )?;
        if text(&cu, 10) == "BC" {
            let data = first(
                c.query(
                    "SELECT c_data FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
                    &[i(p.c_w_id), i(p.c_d_id), i(c_id)],
                )?,
                "customer",
            )?;
            let mut new = format!(
                "{c_id} {} {} {} {} {:.2} | {}",
                p.c_d_id,
                p.c_w_id,
                p.d_id,
                p.w_id,
                p.amount,
                text(&data, 0)
            );
            new.truncate(500);
            c.execute(
                "UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, c_payment_cnt = c_payment_cnt + 1, c_data = ? WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
                &[amount.clone(), amount.clone(), Value::Text(new), i(p.c_w_id), i(p.c_d_id), i(c_id)],
            )?;
        } else {
            c.execute(
                "UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
                &[amount.clone(), amount.clone(), i(p.c_w_id), i(p.c_d_id), i(c_id)],
            )?;
        }
        let h_data = format!("{}    {}", text(&w, 0), text(&d, 0));
        c.execute(
            "INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            &[
                i(c_id),
                i(p.c_d_id),
                i(p.c_w_id),
                i(p.d_id),
                i(p.w_id),
                Value::Now,
                amount,
                Value::Text(h_data),
            ],
        )?;
        Ok(Ended::Committed)
    })
}

/// Clause 2.6.2 (read only).
pub fn order_status<C: Conn>(c: &mut C, s: &OrderStatus) -> Result<Ended, DbError> {
    in_txn(c, |c| {
        let c_id = customer_id(c, s.w_id, s.d_id, &s.customer)?;
        first(
            c.query(
                "SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
                &[i(s.w_id), i(s.d_id), i(c_id)],
            )?,
            "customer",
        )?;
        let orders = c.query(
            "SELECT o_id, o_entry_d, o_carrier_id FROM oorder WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ? ORDER BY o_id DESC LIMIT 1",
            &[i(s.w_id), i(s.d_id), i(c_id)],
        )?;
        if let Some(o) = orders.first() {
            c.query(
                "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?",
                &[i(s.w_id), i(s.d_id), Value::Int(int(o, 0))],
            )?;
        }
        Ok(Ended::Committed)
    })
}

/// Clause 2.7.4: the oldest undelivered order of each district, in one
/// transaction. Returns the orders delivered.
pub fn delivery<C: Conn>(c: &mut C, d: &Delivery) -> Result<(Ended, u32), DbError> {
    let mut delivered = 0;
    let ended = in_txn(c, |c| {
        delivered = 0;
        for d_id in 1..=yardstick_core::tpcc::DISTRICTS {
            let Some(no) = c
                .query(
                    "SELECT no_o_id FROM new_order WHERE no_w_id = ? AND no_d_id = ? ORDER BY no_o_id LIMIT 1 FOR UPDATE",
                    &[i(d.w_id), i(d_id)],
                )?
                .into_iter()
                .next()
            else {
                continue;
            };
            let o_id = Value::Int(int(&no, 0));
            if c.execute(
                "DELETE FROM new_order WHERE no_w_id = ? AND no_d_id = ? AND no_o_id = ?",
                &[i(d.w_id), i(d_id), o_id.clone()],
            )? == 0
            {
                continue;
            }
            let o = first(
                c.query(
                    "SELECT o_c_id FROM oorder WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?",
                    &[i(d.w_id), i(d_id), o_id.clone()],
                )?,
                "order",
            )?;
            c.execute(
                "UPDATE oorder SET o_carrier_id = ? WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?",
                &[i(d.carrier_id), i(d.w_id), i(d_id), o_id.clone()],
            )?;
            c.execute(
                "UPDATE order_line SET ol_delivery_d = ? WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?",
                &[Value::Now, i(d.w_id), i(d_id), o_id.clone()],
            )?;
            let sum = first(
                c.query(
                    "SELECT SUM(ol_amount) FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?",
                    &[i(d.w_id), i(d_id), o_id],
                )?,
                "order lines",
            )?;
            c.execute(
                "UPDATE customer SET c_balance = c_balance + ?, c_delivery_cnt = c_delivery_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
                &[Value::Num(num(&sum, 0)), i(d.w_id), i(d_id), Value::Int(int(&o, 0))],
            )?;
            delivered += 1;
        }
        Ok(Ended::Committed)
    })?;
    Ok((ended, delivered))
}

/// Clause 2.8.2 (read only): items of the district's last 20 orders whose
/// stock is under the threshold.
pub fn stock_level<C: Conn>(c: &mut C, s: &StockLevel) -> Result<(Ended, i64), DbError> {
    let mut low = 0;
    let ended = in_txn(c, |c| {
        let d = first(
            c.query(
                "SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?",
                &[i(s.w_id), i(s.d_id)],
            )?,
            "district",
        )?;
        let next = int(&d, 0);
        let r = first(
            c.query(
                "SELECT COUNT(DISTINCT s_i_id) FROM order_line, stock WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id < ? AND ol_o_id >= ? AND s_w_id = ? AND s_i_id = ol_i_id AND s_quantity < ?",
                &[
                    i(s.w_id),
                    i(s.d_id),
                    Value::Int(next),
                    Value::Int(next - 20),
                    i(s.w_id),
                    i(s.threshold),
                ],
            )?,
            "count",
        )?;
        low = int(&r, 0);
        Ok(Ended::Committed)
    })?;
    Ok((ended, low))
}
