//! Rows of the nine tables, in load order, written to a [`RowSink`]; the
//! column order is that of [`COLUMNS`].
use super::*;

/// Rows as values.
#[derive(Debug, Default)]
pub struct Values {
    pub rows: Vec<Vec<Value>>,
    row: Vec<Value>,
}

impl RowSink for Values {
    fn int(&mut self, v: i64) {
        self.row.push(Value::Int(v));
    }
    fn num(&mut self, v: f64) {
        self.row.push(Value::Num(v));
    }
    fn alnum(&mut self, write: impl FnOnce(&mut Vec<u8>)) {
        let mut s = Vec::new();
        write(&mut s);
        self.row
            .push(Value::Text(s.into_iter().map(char::from).collect()));
    }
    fn now(&mut self) {
        self.row.push(Value::Now);
    }
    fn null(&mut self) {
        self.row.push(Value::Null);
    }
    fn end_row(&mut self) {
        self.rows.push(std::mem::take(&mut self.row));
    }
}

/// The one row `generate` makes, as values.
pub fn one(generate: impl FnOnce(&mut Values)) -> Vec<Value> {
    let mut v = Values::default();
    generate(&mut v);
    v.rows.pop().unwrap_or_default()
}

fn int(s: &mut impl RowSink, v: u32) {
    s.int(v.into());
}

pub fn item(r: &mut Random, i_id: u32, s: &mut impl RowSink) {
    int(s, i_id);
    int(s, r.uniform(1, 10_000));
    s.alnum(|b| r.astring(14, 24, b));
    s.num(r.decimal(1.0, 100.0, 2));
    s.alnum(|b| r.data_original(b));
    s.end_row();
}

/// Name, street 1 and 2, city, state and zip of a warehouse or district.
fn address(r: &mut Random, s: &mut impl RowSink) {
    s.alnum(|b| r.astring(6, 10, b));
    s.alnum(|b| r.astring(10, 20, b));
    s.alnum(|b| r.astring(10, 20, b));
    s.alnum(|b| r.astring(10, 20, b));
    s.alnum(|b| r.astring(2, 2, b));
    s.alnum(|b| r.zip(b));
}

pub fn warehouse(r: &mut Random, w_id: u32, s: &mut impl RowSink) {
    int(s, w_id);
    address(r, s);
    s.num(r.decimal(0.0, 0.2, 4));
    s.num(300_000.0);
    s.end_row();
}

pub fn stock(r: &mut Random, w_id: u32, i_id: u32, s: &mut impl RowSink) {
    int(s, i_id);
    int(s, w_id);
    int(s, r.uniform(10, 100));
    for _ in 0..10 {
        s.alnum(|b| r.astring(24, 24, b));
    }
    int(s, 0);
    int(s, 0);
    int(s, 0);
    s.alnum(|b| r.data_original(b));
    s.end_row();
}

pub fn district(r: &mut Random, w_id: u32, d_id: u32, s: &mut impl RowSink) {
    int(s, d_id);
    int(s, w_id);
    address(r, s);
    s.num(r.decimal(0.0, 0.2, 4));
    s.num(30_000.0);
    int(s, 3001);
    s.end_row();
}

pub fn customer(r: &mut Random, w_id: u32, d_id: u32, c_id: u32, s: &mut impl RowSink) {
    // the last name is drawn first (the load's data stays that of earlier
    // versions for a seed)
    let last = if c_id <= 1000 {
        c_id - 1
    } else {
        r.last_name_number()
    };
    int(s, c_id);
    int(s, d_id);
    int(s, w_id);
    s.alnum(|b| r.astring(8, 16, b));
    s.alnum(|b| b.extend_from_slice(b"OE"));
    s.alnum(|b| push_last_name(b, last));
    s.alnum(|b| r.astring(10, 20, b));
    s.alnum(|b| r.astring(10, 20, b));
    s.alnum(|b| r.astring(10, 20, b));
    s.alnum(|b| r.astring(2, 2, b));
    s.alnum(|b| r.zip(b));
    s.alnum(|b| r.nstring(16, 16, b));
    s.now();
    let credit = if r.uniform(1, 10) == 1 { b"BC" } else { b"GC" };
    s.alnum(|b| b.extend_from_slice(credit));
    s.num(50_000.0);
    s.num(r.decimal(0.0, 0.5, 4));
    s.num(-10.0);
    s.num(10.0);
    int(s, 1);
    int(s, 0);
    s.alnum(|b| r.astring(300, 500, b));
    s.end_row();
}

pub fn history(r: &mut Random, w_id: u32, d_id: u32, c_id: u32, s: &mut impl RowSink) {
    int(s, c_id);
    int(s, d_id);
    int(s, w_id);
    int(s, d_id);
    int(s, w_id);
    s.now();
    s.num(10.0);
    s.alnum(|b| r.astring(12, 24, b));
    s.end_row();
}

/// A random permutation of a district's customers: order `o_id` is
/// customer `perm[o_id - 1]`'s.
pub fn customer_permutation(r: &mut Random) -> Vec<u32> {
    let mut perm: Vec<u32> = (1..=CUSTOMERS_PER_DISTRICT).collect();
    for i in (1..perm.len()).rev() {
        let j = r.rng.below(i as u64 + 1) as usize;
        perm.swap(i, j);
    }
    perm
}

/// The three tables an order writes to.
pub trait OrderSinks {
    type Sink: RowSink;
    fn orders(&mut self) -> &mut Self::Sink;
    fn lines(&mut self) -> &mut Self::Sink;
    fn new_orders(&mut self) -> &mut Self::Sink;
}

/// Orders, order lines and new orders as values.
#[derive(Debug, Default)]
pub struct OrderValues {
    pub orders: Values,
    pub lines: Values,
    pub new_orders: Values,
}

impl OrderSinks for OrderValues {
    type Sink = Values;
    fn orders(&mut self) -> &mut Values {
        &mut self.orders
    }
    fn lines(&mut self) -> &mut Values {
        &mut self.lines
    }
    fn new_orders(&mut self) -> &mut Values {
        &mut self.new_orders
    }
}

/// Order `o_id` of customer `c_id`: its ORDER row, its order lines and,
/// for the last 900 orders of a district, its NEW-ORDER row.
pub fn order(r: &mut Random, w_id: u32, d_id: u32, o_id: u32, c_id: u32, s: &mut impl OrderSinks) {
    let delivered = o_id < FIRST_NEW_ORDER;
    let ol_cnt = r.uniform(5, 15);
    let o = s.orders();
    int(o, o_id);
    int(o, d_id);
    int(o, w_id);
    int(o, c_id);
    o.now();
    if delivered {
        int(o, r.uniform(1, 10));
    } else {
        o.null();
    }
    int(o, ol_cnt);
    int(o, 1);
    o.end_row();
    let l = s.lines();
    for n in 1..=ol_cnt {
        int(l, o_id);
        int(l, d_id);
        int(l, w_id);
        int(l, n);
        int(l, r.uniform(1, ITEMS));
        int(l, w_id);
        if delivered {
            l.now();
        } else {
            l.null();
        }
        int(l, 5);
        l.num(if delivered {
            0.0
        } else {
            r.decimal(0.01, 9999.99, 2)
        });
        l.alnum(|b| r.astring(24, 24, b));
        l.end_row();
    }
    if !delivered {
        let no = s.new_orders();
        int(no, o_id);
        int(no, d_id);
        int(no, w_id);
        no.end_row();
    }
}
