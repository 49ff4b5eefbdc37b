//! The five transactions of clause 2, each one database transaction.
use super::{int, num, text, Conn, DbError, Done, Row, Stmt, Value};
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
async fn in_txn<C: Conn + ?Sized>(
    c: &mut C,
    body: impl AsyncFnOnce(&mut C) -> Result<Ended, DbError>,
) -> Result<Ended, DbError> {
    c.begin().await?;
    match body(c).await {
        Ok(Ended::Committed) => match c.commit().await {
            Ok(()) => Ok(Ended::Committed),
            Err(e) => {
                let _ = c.rollback().await;
                Err(e)
            }
        },
        Ok(Ended::RolledBack) => {
            c.rollback().await?;
            Ok(Ended::RolledBack)
        }
        Err(e) => {
            let _ = c.rollback().await;
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

/// The answers of a pipeline, taken in the order of its statements.
struct Answers(std::vec::IntoIter<Done>);

impl Answers {
    fn rows(&mut self) -> Vec<Row> {
        self.0.next().map(Done::rows).unwrap_or_default()
    }

    fn row(&mut self, what: &str) -> Result<Row, DbError> {
        first(self.rows(), what)
    }

    fn count(&mut self) -> u64 {
        self.0.next().map_or(0, |d| d.count())
    }
}

async fn pipe<C: Conn + ?Sized>(c: &mut C, stmts: Vec<Stmt>) -> Result<Answers, DbError> {
    Ok(Answers(c.pipeline(stmts).await?.into_iter()))
}

/// Clause 2.4.2, in three pipelines: the warehouse, district (locked) and
/// customer; then the district's increment, the order and new-order rows and
/// every line's item and stock row (locked); then every line's stock update
/// and order line. Stock rows are locked in (warehouse, item) order so two
/// New-Orders never wait on each other in a cycle.
pub async fn new_order<C: Conn + ?Sized>(c: &mut C, o: &NewOrder) -> Result<Ended, DbError> {
    in_txn(c, async |c| {
        let mut a = pipe(
            c,
            vec![
                Stmt::Query("SELECT w_tax FROM warehouse WHERE w_id = ?", vec![i(o.w_id)]),
                Stmt::Query(
                    "SELECT d_tax, d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ? FOR UPDATE",
                    vec![i(o.w_id), i(o.d_id)],
                ),
                Stmt::Query(
                    "SELECT c_discount, c_last, c_credit FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
                    vec![i(o.w_id), i(o.d_id), i(o.c_id)],
                ),
            ],
        ).await?;
        let w_tax = num(&a.row("warehouse")?, 0);
        let d = a.row("district")?;
        let (d_tax, o_id) = (num(&d, 0), int(&d, 1));
        let discount = num(&a.row("customer")?, 0);
        let all_local = o.lines.iter().all(|l| l.supply_w_id == o.w_id);
        let mut order: Vec<usize> = (0..o.lines.len()).collect();
        order.sort_by_key(|&k| (o.lines[k].supply_w_id, o.lines[k].i_id));
        let mut stmts = vec![
            Stmt::Exec(
                "UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = ? AND d_id = ?",
                vec![i(o.w_id), i(o.d_id)],
            ),
            Stmt::Exec(
                "INSERT INTO oorder (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local) VALUES (?, ?, ?, ?, ?, NULL, ?, ?)",
                vec![
                    Value::Int(o_id),
                    i(o.d_id),
                    i(o.w_id),
                    i(o.c_id),
                    Value::Now,
                    Value::Int(o.lines.len() as i64),
                    Value::Int(all_local.into()),
                ],
            ),
            Stmt::Exec(
                "INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (?, ?, ?)",
                vec![Value::Int(o_id), i(o.d_id), i(o.w_id)],
            ),
        ];
        for &k in &order {
            stmts.push(Stmt::Query(
                "SELECT i_price, i_name, i_data FROM item WHERE i_id = ?",
                vec![i(o.lines[k].i_id)],
            ));
        }
        for &k in &order {
            let l = &o.lines[k];
            stmts.push(Stmt::Query(
                STOCK_FOR_UPDATE[o.d_id as usize - 1],
                vec![i(l.supply_w_id), i(l.i_id)],
            ));
        }
        let mut a = pipe(c, stmts).await?;
        for _ in 0..3 {
            a.count();
        }
        let mut prices = Vec::with_capacity(order.len());
        for _ in &order {
            match a.rows().into_iter().next() {
                Some(item) => prices.push(num(&item, 0)),
                // the unused item of the 1% rollbacks
                None => return Ok(Ended::RolledBack),
            }
        }
        let mut stmts = Vec::with_capacity(2 * order.len());
        let mut lines = Vec::with_capacity(order.len());
        // a stock row an earlier line of this order changed: its quantity
        // after that line, as a one-at-a-time run would read it
        let mut changed: Vec<((u32, u32), i64)> = Vec::new();
        let mut total = 0.0;
        for (&k, price) in order.iter().zip(prices) {
            let l = &o.lines[k];
            let s = a.row("stock")?;
            let key = (l.supply_w_id, l.i_id);
            let quantity = changed
                .iter()
                .rev()
                .find(|(c, _)| *c == key)
                .map_or_else(|| int(&s, 0), |(_, q)| *q);
            let new_quantity = if quantity >= i64::from(l.quantity) + 10 {
                quantity - i64::from(l.quantity)
            } else {
                quantity - i64::from(l.quantity) + 91
            };
            changed.push((key, new_quantity));
            stmts.push(Stmt::Exec(
                "UPDATE stock SET s_quantity = ?, s_ytd = s_ytd + ?, s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + ? WHERE s_w_id = ? AND s_i_id = ?",
                vec![
                    Value::Int(new_quantity),
                    i(l.quantity),
                    Value::Int((l.supply_w_id != o.w_id).into()),
                    i(l.supply_w_id),
                    i(l.i_id),
                ],
            ));
            let amount = (f64::from(l.quantity) * price * 100.0).round() / 100.0;
            total += amount;
            lines.push(Stmt::Exec(
                "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, ol_dist_info) VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?, ?)",
                vec![
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
            ));
        }
        stmts.extend(lines);
        c.defer(stmts).await?;
        // the order's total, as the terminal would display it
        let _total = total * (1.0 - discount) * (1.0 + w_tax + d_tax);
        Ok(Ended::Committed)
    })
    .await
}

/// The customer's id: by id, or by last name (clause 2.5.2.2).
async fn customer_id<C: Conn + ?Sized>(
    c: &mut C,
    w: u32,
    d: u32,
    by: &CustomerBy,
) -> Result<u32, DbError> {
    match by {
        CustomerBy::Id(id) => Ok(*id),
        CustomerBy::LastName(last) => {
            let rows = c
                .query(CUSTOMERS_BY_NAME, &[i(w), i(d), Value::Text(last.clone())])
                .await?;
            middle_customer(&rows, w, d, last)
        }
    }
}

const CUSTOMER_FOR_UPDATE: &str = "SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_since, c_credit, c_credit_lim, c_discount, c_balance FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ? FOR UPDATE";

const CUSTOMERS_BY_NAME: &str =
    "SELECT c_id FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first";

/// The customer's id from the rows of [`CUSTOMERS_BY_NAME`]: the middle one
/// (rounded up) of those with the last name, sorted by first name (clause
/// 2.5.2.2).
fn middle_customer(rows: &[Row], w: u32, d: u32, last: &str) -> Result<u32, DbError> {
    if rows.is_empty() {
        return Err(DbError::other(format!(
            "no customer named {last} in warehouse {w} district {d}: is the database loaded?"
        )));
    }
    Ok(int(&rows[rows.len().div_ceil(2) - 1], 0) as u32)
}

/// Clause 2.5.2: the warehouse's and district's year-to-date amounts and
/// addresses, and the customer (by id: locked in the same pipeline; by last
/// name: looked up there, locked in a second one); then the customer's
/// update and the history row.
pub async fn payment<C: Conn + ?Sized>(c: &mut C, p: &Payment) -> Result<Ended, DbError> {
    in_txn(c, async |c| {
        let amount = Value::Num(p.amount);
        let mut stmts = vec![
            Stmt::Exec(
                "UPDATE warehouse SET w_ytd = w_ytd + ? WHERE w_id = ?",
                vec![amount.clone(), i(p.w_id)],
            ),
            Stmt::Query(
                "SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip FROM warehouse WHERE w_id = ?",
                vec![i(p.w_id)],
            ),
            Stmt::Exec(
                "UPDATE district SET d_ytd = d_ytd + ? WHERE d_w_id = ? AND d_id = ?",
                vec![amount.clone(), i(p.w_id), i(p.d_id)],
            ),
            Stmt::Query(
                "SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip FROM district WHERE d_w_id = ? AND d_id = ?",
                vec![i(p.w_id), i(p.d_id)],
            ),
        ];
        let (cw, cd) = (i(p.c_w_id), i(p.c_d_id));
        stmts.push(match &p.customer {
            CustomerBy::Id(id) => {
                Stmt::Query(CUSTOMER_FOR_UPDATE, vec![cw.clone(), cd.clone(), i(*id)])
            }
            CustomerBy::LastName(last) => Stmt::Query(
                CUSTOMERS_BY_NAME,
                vec![cw.clone(), cd.clone(), Value::Text(last.clone())],
            ),
        });
        let mut a = pipe(c, stmts).await?;
        a.count();
        let w = a.row("warehouse")?;
        a.count();
        let d = a.row("district")?;
        let (c_id, cu) = match &p.customer {
            CustomerBy::Id(id) => (*id, a.row("customer")?),
            CustomerBy::LastName(last) => {
                let c_id = middle_customer(&a.rows(), p.c_w_id, p.c_d_id, last)?;
                let cu = first(
                    c.query(CUSTOMER_FOR_UPDATE, &[cw.clone(), cd.clone(), i(c_id)]).await?,
                    "customer",
                )?;
                (c_id, cu)
            }
        };
        let h_data = format!("{}    {}", text(&w, 0), text(&d, 0));
        let history = Stmt::Exec(
            "INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            vec![
                i(c_id),
                cd.clone(),
                cw.clone(),
                i(p.d_id),
                i(p.w_id),
                Value::Now,
                amount.clone(),
                Value::Text(h_data),
            ],
        );
        let update = if text(&cu, 10) == "BC" {
            let data = first(
                c.query(
                    "SELECT c_data FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
                    &[cw.clone(), cd.clone(), i(c_id)],
                ).await?,
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
            Stmt::Exec(
                "UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, c_payment_cnt = c_payment_cnt + 1, c_data = ? WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
                vec![amount.clone(), amount, Value::Text(new), cw, cd, i(c_id)],
            )
        } else {
            Stmt::Exec(
                "UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
                vec![amount.clone(), amount, cw, cd, i(c_id)],
            )
        };
        c.defer(vec![update, history]).await?;
        Ok(Ended::Committed)
    })
    .await
}

/// Clause 2.6.2 (read only): the customer and their last order in one
/// pipeline, then the order's lines.
pub async fn order_status<C: Conn + ?Sized>(c: &mut C, s: &OrderStatus) -> Result<Ended, DbError> {
    in_txn(c, async |c| {
        let c_id = customer_id(c, s.w_id, s.d_id, &s.customer).await?;
        let mut a = pipe(
            c,
            vec![
                Stmt::Query(
                    "SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
                    vec![i(s.w_id), i(s.d_id), i(c_id)],
                ),
                Stmt::Query(
                    "SELECT o_id, o_entry_d, o_carrier_id FROM oorder WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ? ORDER BY o_id DESC LIMIT 1",
                    vec![i(s.w_id), i(s.d_id), i(c_id)],
                ),
            ],
        ).await?;
        a.row("customer")?;
        if let Some(o) = a.rows().first() {
            c.query(
                "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?",
                &[i(s.w_id), i(s.d_id), Value::Int(int(o, 0))],
            ).await?;
        }
        Ok(Ended::Committed)
    })
    .await
}

/// Clause 2.7.4: the oldest undelivered order of each district, in one
/// transaction and three pipelines: every district's oldest new-order row
/// (locked); each of those orders' new-order deletion, customer, carrier,
/// delivery dates and total; every customer's balance. Returns the orders
/// delivered.
pub async fn delivery<C: Conn + ?Sized>(c: &mut C, d: &Delivery) -> Result<(Ended, u32), DbError> {
    let mut delivered = 0;
    let ended = in_txn(c, async |c| {
        let districts = 1..=yardstick_core::tpcc::DISTRICTS;
        let mut a = pipe(
            c,
            districts
                .clone()
                .map(|d_id| {
                    Stmt::Query(
                        "SELECT no_o_id FROM new_order WHERE no_w_id = ? AND no_d_id = ? ORDER BY no_o_id LIMIT 1 FOR UPDATE",
                        vec![i(d.w_id), i(d_id)],
                    )
                })
                .collect(),
        ).await?;
        // (district, order) of the districts with an undelivered order
        let orders: Vec<(u32, Value)> = districts
            .filter_map(|d_id| {
                a.rows()
                    .into_iter()
                    .next()
                    .map(|no| (d_id, Value::Int(int(&no, 0))))
            })
            .collect();
        let mut stmts = Vec::with_capacity(5 * orders.len());
        for (d_id, o_id) in &orders {
            let key = vec![i(d.w_id), i(*d_id), o_id.clone()];
            stmts.push(Stmt::Exec(
                "DELETE FROM new_order WHERE no_w_id = ? AND no_d_id = ? AND no_o_id = ?",
                key.clone(),
            ));
            stmts.push(Stmt::Query(
                "SELECT o_c_id FROM oorder WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?",
                key.clone(),
            ));
            stmts.push(Stmt::Exec(
                "UPDATE oorder SET o_carrier_id = ? WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?",
                vec![i(d.carrier_id), i(d.w_id), i(*d_id), o_id.clone()],
            ));
            stmts.push(Stmt::Exec(
                "UPDATE order_line SET ol_delivery_d = ? WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?",
                vec![Value::Now, i(d.w_id), i(*d_id), o_id.clone()],
            ));
            stmts.push(Stmt::Query(
                "SELECT SUM(ol_amount) FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?",
                key,
            ));
        }
        let mut a = pipe(c, stmts).await?;
        let mut balances = Vec::with_capacity(orders.len());
        for (d_id, o_id) in &orders {
            if a.count() == 0 {
                // the row was locked by this transaction: only a database
                // that does not honour FOR UPDATE gets here
                return Err(DbError {
                    kind: super::ErrorKind::Retry,
                    message: format!(
                        "new order {o_id:?} of warehouse {} district {d_id} was delivered by another terminal",
                        d.w_id
                    ),
                });
            }
            let o = a.row("order")?;
            a.count();
            a.count();
            let sum = a.row("order lines")?;
            balances.push(Stmt::Exec(
                "UPDATE customer SET c_balance = c_balance + ?, c_delivery_cnt = c_delivery_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
                vec![Value::Num(num(&sum, 0)), i(d.w_id), i(*d_id), Value::Int(int(&o, 0))],
            ));
        }
        c.defer(balances).await?;
        delivered = orders.len() as u32;
        Ok(Ended::Committed)
    })
    .await?;
    Ok((ended, delivered))
}

/// Clause 2.8.2 (read only): items of the district's last 20 orders whose
/// stock is under the threshold.
pub async fn stock_level<C: Conn + ?Sized>(
    c: &mut C,
    s: &StockLevel,
) -> Result<(Ended, i64), DbError> {
    let mut low = 0;
    let ended = in_txn(c, async |c| {
        let d = first(
            c.query(
                "SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?",
                &[i(s.w_id), i(s.d_id)],
            ).await?,
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
            ).await?,
            "count",
        )?;
        low = int(&r, 0);
        Ok(Ended::Committed)
    })
    .await?;
    Ok((ended, low))
}

#[cfg(all(test, feature = "sqlite"))]
mod tests;
