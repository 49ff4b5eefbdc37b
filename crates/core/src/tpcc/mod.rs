//! TPC-C's rules, without a database: cardinalities, the random functions of
//! clause 4.3.2 (uniform, NURand with its run-time constants, a- and n-strings,
//! last names from the syllable table, 10% "ORIGINAL" data), the initial rows
//! of each table (clause 4.3.3.1) and the inputs of the five transactions
//! (clause 2), chosen by the standard mix.
use crate::rng::Rng;
use serde::{Deserialize, Serialize};

pub mod result;
pub mod rows;

pub const DISTRICTS: u32 = 10;
pub const CUSTOMERS_PER_DISTRICT: u32 = 3000;
pub const ITEMS: u32 = 100_000;
/// Orders per district loaded as undelivered (the last 900: 2101..=3000).
pub(crate) const FIRST_NEW_ORDER: u32 = 2101;

const SYLLABLES: [&str; 10] = [
    "BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING",
];

/// The NURand constants C (clause 2.1.6): one set for the load, one for the
/// run, with C_LAST's run value differing from the load's by 65..=119, not 96
/// or 112 (clause 2.1.6.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Constants {
    pub c_last: u32,
    pub c_id: u32,
    pub ol_i_id: u32,
}

impl Constants {
    pub fn for_load(rng: &mut Rng) -> Constants {
        Constants {
            c_last: rng.below(256) as u32,
            c_id: rng.below(1024) as u32,
            ol_i_id: rng.below(8192) as u32,
        }
    }

    /// Run-time constants valid against the load's.
    pub fn for_run(load: &Constants, rng: &mut Rng) -> Constants {
        loop {
            let c_last = rng.below(256) as u32;
            if Self::valid_run_delta(load.c_last, c_last) {
                return Constants {
                    c_last,
                    c_id: rng.below(1024) as u32,
                    ol_i_id: rng.below(8192) as u32,
                };
            }
        }
    }

    pub(crate) fn valid_run_delta(load: u32, run: u32) -> bool {
        let d = load.abs_diff(run);
        (65..=119).contains(&d) && d != 96 && d != 112
    }
}

/// TPC-C's random functions over one stream.
pub struct Random {
    pub rng: Rng,
    pub c: Constants,
}

const ALNUM: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

impl Random {
    pub fn new(seed: u64, c: Constants) -> Random {
        Random {
            rng: Rng::new(seed),
            c,
        }
    }

    /// Uniform in [lo, hi].
    pub fn uniform(&mut self, lo: u32, hi: u32) -> u32 {
        lo + self.rng.below(u64::from(hi - lo) + 1) as u32
    }

    /// NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x.
    pub(crate) fn nurand(&mut self, a: u32, x: u32, y: u32) -> u32 {
        let c = match a {
            255 => self.c.c_last,
            1023 => self.c.c_id,
            _ => self.c.ol_i_id,
        };
        (((self.uniform(0, a) | self.uniform(x, y)) + c) % (y - x + 1)) + x
    }

    /// Appends `n` random characters of `alphabet` to `out`. The string
    /// functions append to a buffer the caller owns (the loader's output),
    /// so its millions of strings cost no allocation or copy each.
    fn push_random(&mut self, n: u32, alphabet: &[u8], out: &mut Vec<u8>) {
        let start = out.len();
        out.resize(start + n as usize, 0);
        for b in &mut out[start..] {
            *b = alphabet[self.rng.below(alphabet.len() as u64) as usize];
        }
    }

    /// Appends a random alphanumeric string (ASCII letters and digits) of
    /// length in [lo, hi].
    pub(crate) fn astring(&mut self, lo: u32, hi: u32, out: &mut Vec<u8>) {
        let n = self.uniform(lo, hi);
        self.push_random(n, ALNUM, out);
    }

    /// Appends a random numeric string of length in [lo, hi].
    pub(crate) fn nstring(&mut self, lo: u32, hi: u32, out: &mut Vec<u8>) {
        let n = self.uniform(lo, hi);
        self.push_random(n, b"0123456789", out);
    }

    /// Appends I_DATA or S_DATA: 26..50 characters, 10% with "ORIGINAL" at a
    /// random place.
    pub(crate) fn data_original(&mut self, out: &mut Vec<u8>) {
        let start = out.len();
        self.astring(26, 50, out);
        if self.uniform(1, 10) == 1 {
            let at = start + self.uniform(0, (out.len() - start) as u32 - 8) as usize;
            out[at..at + 8].copy_from_slice(b"ORIGINAL");
        }
    }

    /// Appends a zip code: 4 random digits and "11111".
    pub fn zip(&mut self, out: &mut Vec<u8>) {
        self.nstring(4, 4, out);
        out.extend_from_slice(b"11111");
    }

    /// A fixed-point amount in [lo, hi] with `scale` decimals (1/10^scale steps).
    pub fn decimal(&mut self, lo: f64, hi: f64, scale: i32) -> f64 {
        let f = 10f64.powi(scale);
        let (a, b) = ((lo * f).round() as u32, (hi * f).round() as u32);
        f64::from(self.uniform(a, b)) / f
    }

    /// The number of a random customer last name: NURand(255, 0, 999).
    pub(crate) fn last_name_number(&mut self) -> u32 {
        self.nurand(255, 0, 999)
    }

    /// The customer's last name for run-time lookups.
    pub(crate) fn random_last_name(&mut self) -> String {
        let n = self.last_name_number();
        last_name(n)
    }
}

/// Appends last name number `n`: the syllables of its three digits.
pub(crate) fn push_last_name(out: &mut Vec<u8>, n: u32) {
    for d in [n / 100, (n / 10) % 10, n % 10] {
        out.extend_from_slice(SYLLABLES[d as usize].as_bytes());
    }
}

/// C_LAST for the number `n` in 0..=999: three syllables by its digits.
pub(crate) fn last_name(n: u32) -> String {
    let mut s = Vec::with_capacity(15);
    push_last_name(&mut s, n);
    s.into_iter().map(char::from).collect()
}

/// The five transactions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Txn {
    NewOrder,
    Payment,
    OrderStatus,
    Delivery,
    StockLevel,
}

impl Txn {
    pub const ALL: [Txn; 5] = [
        Txn::NewOrder,
        Txn::Payment,
        Txn::OrderStatus,
        Txn::Delivery,
        Txn::StockLevel,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Txn::NewOrder => "NEW-ORDER",
            Txn::Payment => "PAYMENT",
            Txn::OrderStatus => "ORDER-STATUS",
            Txn::Delivery => "DELIVERY",
            Txn::StockLevel => "STOCK-LEVEL",
        }
    }

    pub fn index(self) -> usize {
        self as usize
    }

    /// The operation kind the runner records this transaction as.
    pub fn op(self) -> crate::op::OpKind {
        use crate::op::OpKind;
        match self {
            Txn::NewOrder => OpKind::NewOrder,
            Txn::Payment => OpKind::Payment,
            Txn::OrderStatus => OpKind::OrderStatus,
            Txn::Delivery => OpKind::Delivery,
            Txn::StockLevel => OpKind::StockLevel,
        }
    }

    /// Keying time and mean think time in seconds (clause 5.2.5.7).
    pub fn keying_and_think_s(self) -> (f64, f64) {
        match self {
            Txn::NewOrder => (18.0, 12.0),
            Txn::Payment => (3.0, 12.0),
            Txn::OrderStatus => (2.0, 10.0),
            Txn::Delivery => (2.0, 5.0),
            Txn::StockLevel => (2.0, 5.0),
        }
    }
}

/// The standard mix as a shuffled deck of 23 cards (BenchmarkSQL's and the
/// specification's minimums: 43.5% Payment, 4% each for Order-Status,
/// Delivery and Stock-Level; New-Order takes the rest): 10 New-Order,
/// 10 Payment, 1 each of the others per deck.
pub struct Deck {
    cards: Vec<Txn>,
    next: usize,
}

impl Deck {
    pub fn new() -> Deck {
        let mut cards = vec![Txn::NewOrder; 10];
        cards.extend([Txn::Payment; 10]);
        cards.extend([Txn::OrderStatus, Txn::Delivery, Txn::StockLevel]);
        Deck {
            next: cards.len(),
            cards,
        }
    }

    pub fn draw(&mut self, rng: &mut Rng) -> Txn {
        if self.next >= self.cards.len() {
            // Fisher-Yates
            for i in (1..self.cards.len()).rev() {
                let j = rng.below(i as u64 + 1) as usize;
                self.cards.swap(i, j);
            }
            self.next = 0;
        }
        self.next += 1;
        self.cards[self.next - 1]
    }
}

impl Default for Deck {
    fn default() -> Self {
        Deck::new()
    }
}

/// A customer chosen by id (40%) or by last name (60%).
#[derive(Debug, Clone, PartialEq)]
pub enum CustomerBy {
    Id(u32),
    LastName(String),
}

#[derive(Debug, Clone, PartialEq)]
pub struct OrderLineInput {
    pub i_id: u32,
    pub supply_w_id: u32,
    pub quantity: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub struct NewOrder {
    pub w_id: u32,
    pub d_id: u32,
    pub c_id: u32,
    pub lines: Vec<OrderLineInput>,
    /// The last item is an unused id: the transaction rolls back (1%).
    pub rollback: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Payment {
    pub w_id: u32,
    pub d_id: u32,
    pub c_w_id: u32,
    pub c_d_id: u32,
    pub customer: CustomerBy,
    pub amount: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct OrderStatus {
    pub w_id: u32,
    pub d_id: u32,
    pub customer: CustomerBy,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Delivery {
    pub w_id: u32,
    pub carrier_id: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub struct StockLevel {
    pub w_id: u32,
    pub d_id: u32,
    pub threshold: u32,
}

impl Random {
    fn customer(&mut self) -> CustomerBy {
        if self.uniform(1, 100) <= 60 {
            CustomerBy::LastName(self.random_last_name())
        } else {
            CustomerBy::Id(self.nurand(1023, 1, CUSTOMERS_PER_DISTRICT))
        }
    }

    fn other_warehouse(&mut self, w_id: u32, warehouses: u32) -> u32 {
        if warehouses <= 1 {
            return w_id;
        }
        let o = self.uniform(1, warehouses - 1);
        if o >= w_id {
            o + 1
        } else {
            o
        }
    }

    /// Clause 2.4.1.
    pub fn new_order(&mut self, w_id: u32, warehouses: u32) -> NewOrder {
        let d_id = self.uniform(1, DISTRICTS);
        let c_id = self.nurand(1023, 1, CUSTOMERS_PER_DISTRICT);
        let n = self.uniform(5, 15);
        let rollback = self.uniform(1, 100) == 1;
        let lines = (0..n)
            .map(|k| {
                let i_id = if rollback && k == n - 1 {
                    ITEMS + 1
                } else {
                    self.nurand(8191, 1, ITEMS)
                };
                let supply_w_id = if self.uniform(1, 100) == 1 {
                    self.other_warehouse(w_id, warehouses)
                } else {
                    w_id
                };
                OrderLineInput {
                    i_id,
                    supply_w_id,
                    quantity: self.uniform(1, 10),
                }
            })
            .collect();
        NewOrder {
            w_id,
            d_id,
            c_id,
            lines,
            rollback,
        }
    }

    /// Clause 2.5.1: 85% of customers are of the home warehouse.
    pub fn payment(&mut self, w_id: u32, warehouses: u32) -> Payment {
        let d_id = self.uniform(1, DISTRICTS);
        let (c_w_id, c_d_id) = if self.uniform(1, 100) <= 85 || warehouses <= 1 {
            (w_id, d_id)
        } else {
            (
                self.other_warehouse(w_id, warehouses),
                self.uniform(1, DISTRICTS),
            )
        };
        Payment {
            w_id,
            d_id,
            c_w_id,
            c_d_id,
            customer: self.customer(),
            amount: self.decimal(1.0, 5000.0, 2),
        }
    }

    pub fn order_status(&mut self, w_id: u32) -> OrderStatus {
        OrderStatus {
            w_id,
            d_id: self.uniform(1, DISTRICTS),
            customer: self.customer(),
        }
    }

    pub fn delivery(&mut self, w_id: u32) -> Delivery {
        Delivery {
            w_id,
            carrier_id: self.uniform(1, 10),
        }
    }

    /// Clause 2.8.1: the terminal's own district.
    pub fn stock_level(&mut self, w_id: u32, d_id: u32) -> StockLevel {
        StockLevel {
            w_id,
            d_id,
            threshold: self.uniform(10, 20),
        }
    }
}

/// A value of an initial row.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Int(i64),
    Num(f64),
    Text(String),
    /// The load time (a timestamp column).
    Now,
    Null,
}

/// Where the generators of [`rows`] put each row: its columns in
/// [`COLUMNS`] order, then `end_row`. [`rows::Values`] keeps them as
/// [`Value`]s; a bulk loader can write its text format directly, with no
/// value in between.
pub trait RowSink {
    fn int(&mut self, v: i64);
    fn num(&mut self, v: f64);
    /// Text of ASCII letters and digits only (the generated strings), which
    /// no text format needs to escape: what `write` appends to the buffer
    /// it is given.
    fn alnum(&mut self, write: impl FnOnce(&mut Vec<u8>));
    fn now(&mut self);
    fn null(&mut self);
    fn end_row(&mut self);
}

/// The columns of each table, in the order of [`rows`].
pub const COLUMNS: &[(&str, &[&str])] = &[
    ("item", &["i_id", "i_im_id", "i_name", "i_price", "i_data"]),
    (
        "warehouse",
        &[
            "w_id",
            "w_name",
            "w_street_1",
            "w_street_2",
            "w_city",
            "w_state",
            "w_zip",
            "w_tax",
            "w_ytd",
        ],
    ),
    (
        "stock",
        &[
            "s_i_id",
            "s_w_id",
            "s_quantity",
            "s_dist_01",
            "s_dist_02",
            "s_dist_03",
            "s_dist_04",
            "s_dist_05",
            "s_dist_06",
            "s_dist_07",
            "s_dist_08",
            "s_dist_09",
            "s_dist_10",
            "s_ytd",
            "s_order_cnt",
            "s_remote_cnt",
            "s_data",
        ],
    ),
    (
        "district",
        &[
            "d_id",
            "d_w_id",
            "d_name",
            "d_street_1",
            "d_street_2",
            "d_city",
            "d_state",
            "d_zip",
            "d_tax",
            "d_ytd",
            "d_next_o_id",
        ],
    ),
    (
        "customer",
        &[
            "c_id",
            "c_d_id",
            "c_w_id",
            "c_first",
            "c_middle",
            "c_last",
            "c_street_1",
            "c_street_2",
            "c_city",
            "c_state",
            "c_zip",
            "c_phone",
            "c_since",
            "c_credit",
            "c_credit_lim",
            "c_discount",
            "c_balance",
            "c_ytd_payment",
            "c_payment_cnt",
            "c_delivery_cnt",
            "c_data",
        ],
    ),
    (
        "history",
        &[
            "h_c_id", "h_c_d_id", "h_c_w_id", "h_d_id", "h_w_id", "h_date", "h_amount", "h_data",
        ],
    ),
    (
        "oorder",
        &[
            "o_id",
            "o_d_id",
            "o_w_id",
            "o_c_id",
            "o_entry_d",
            "o_carrier_id",
            "o_ol_cnt",
            "o_all_local",
        ],
    ),
    (
        "order_line",
        &[
            "ol_o_id",
            "ol_d_id",
            "ol_w_id",
            "ol_number",
            "ol_i_id",
            "ol_supply_w_id",
            "ol_delivery_d",
            "ol_quantity",
            "ol_amount",
            "ol_dist_info",
        ],
    ),
    ("new_order", &["no_o_id", "no_d_id", "no_w_id"]),
];

pub fn columns(table: &str) -> &'static [&'static str] {
    COLUMNS
        .iter()
        .find(|(t, _)| *t == table)
        .map(|(_, c)| *c)
        .unwrap_or(&[])
}

/// Rows per warehouse of each table (ITEM is loaded once).
pub fn rows_per_warehouse() -> u64 {
    // warehouse + districts + customers + history + orders + ~order lines
    // (10 per order on average) + new orders + stock
    1 + 10 + 30_000 + 30_000 + 30_000 + 300_000 + 9_000 + 100_000
}

#[cfg(test)]
mod tests;
