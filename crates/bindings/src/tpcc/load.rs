//! The initial database (clause 4.3.3.1), warehouse by warehouse, each
//! finished warehouse marked in `tpcc_meta` so an interrupted load resumes:
//! a half-loaded warehouse is deleted and loaded again.
use super::{
    int, text, Conn, DbError, LoadMethod, Row, RowSink, TextRows, Value, INDEXES, SCHEMA, TABLES,
};
use yardstick_core::rng::derive_seed;
use yardstick_core::tpcc::{rows, Constants, Random, CUSTOMERS_PER_DISTRICT, DISTRICTS, ITEMS};

/// Rows per transaction of the row-by-row method.
pub const BATCH: usize = 1000;

/// Rows per call of the fast path (one COPY, LOAD DATA or transaction each):
/// large enough that per-statement costs vanish, small enough to hold in
/// memory (a few MiB).
pub(crate) const FAST_BATCH: usize = 10_000;

/// What a database holds of a TPC-C load.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LoadState {
    pub schema: bool,
    pub items: bool,
    /// Warehouses fully loaded.
    pub warehouses: Vec<u32>,
    /// The load's NURand constants (a run derives its own from them).
    pub constants: Option<Constants>,
    /// The secondary indexes wait for the end of a fast load.
    pub indexes_deferred: bool,
}

impl LoadState {
    /// Whether warehouses 1..=w are all loaded, and indexed.
    pub fn complete_up_to(&self, w: u32) -> bool {
        self.items && !self.indexes_deferred && (1..=w).all(|i| self.warehouses.contains(&i))
    }

    /// The highest W such that 1..=W are loaded.
    pub fn loaded(&self) -> u32 {
        let mut w = 0;
        while self.warehouses.contains(&(w + 1)) {
            w += 1;
        }
        w
    }
}

pub async fn state<C: Conn + ?Sized>(c: &mut C) -> Result<LoadState, DbError> {
    let rows = match c.query("SELECT name, value FROM tpcc_meta", &[]).await {
        Ok(r) => r,
        // no meta table: no TPC-C schema here
        Err(_) => return Ok(LoadState::default()),
    };
    let mut s = LoadState {
        schema: true,
        ..Default::default()
    };
    let get = |n: &str| -> Option<u32> {
        rows.iter()
            .find(|r| text(r, 0) == n)
            .and_then(|r| text(r, 1).parse().ok())
    };
    if let (Some(c_last), Some(c_id), Some(ol_i_id)) = (get("c_last"), get("c_id"), get("ol_i_id"))
    {
        s.constants = Some(Constants {
            c_last,
            c_id,
            ol_i_id,
        });
    }
    for r in &rows {
        let name = text(r, 0);
        if name == "items" {
            s.items = true;
        } else if name == "indexes" {
            s.indexes_deferred = true;
        } else if let Some(w) = name.strip_prefix("warehouse:") {
            if let Ok(w) = w.parse() {
                s.warehouses.push(w);
            }
        }
    }
    s.warehouses.sort_unstable();
    Ok(s)
}

/// Creates the tables (when missing) and fixes the load's constants; returns
/// them. The fast method leaves the secondary indexes for [`create_indexes`]
/// at the end, noting that in `tpcc_meta` (a run refuses the database until
/// they exist).
pub async fn prepare<C: Conn + ?Sized>(
    c: &mut C,
    seed: u64,
    method: LoadMethod,
) -> Result<Constants, DbError> {
    let s = state(c).await?;
    if !s.schema {
        for ddl in SCHEMA {
            c.batch(ddl).await?;
        }
        match method {
            LoadMethod::Fast => mark(c, "indexes".into(), "deferred").await?,
            LoadMethod::Insert => {
                for ddl in INDEXES {
                    c.create_index(ddl).await?;
                }
            }
        }
    }
    if let Some(k) = s.constants {
        return Ok(k);
    }
    let k = Constants::for_load(&mut yardstick_core::rng::Rng::new(derive_seed(
        seed,
        &[0x7c],
    )));
    c.begin().await?;
    for (n, v) in [
        ("c_last", k.c_last),
        ("c_id", k.c_id),
        ("ol_i_id", k.ol_i_id),
    ] {
        c.execute(
            "INSERT INTO tpcc_meta (name, value) VALUES (?, ?)",
            &[Value::Text(n.into()), Value::Text(v.to_string())],
        )
        .await?;
    }
    c.commit().await?;
    Ok(k)
}

async fn mark<C: Conn + ?Sized>(c: &mut C, name: String, value: &str) -> Result<(), DbError> {
    c.begin().await?;
    c.execute(
        "INSERT INTO tpcc_meta (name, value) VALUES (?, ?)",
        &[Value::Text(name), Value::Text(value.into())],
    )
    .await?;
    c.commit().await
}

/// Rows per batch of `method`.
fn batch_rows(method: LoadMethod) -> usize {
    match method {
        LoadMethod::Fast => FAST_BATCH,
        LoadMethod::Insert => BATCH,
    }
}

/// A batch of one table's rows: values, or the text of the database's bulk
/// load written by the generators directly.
enum Batch {
    Values(rows::Values),
    Text(TextRows),
}

impl Batch {
    fn len(&self) -> usize {
        match self {
            Batch::Values(v) => v.rows.len(),
            Batch::Text(t) => t.len(),
        }
    }
}

impl RowSink for Batch {
    fn int(&mut self, v: i64) {
        match self {
            Batch::Values(s) => s.int(v),
            Batch::Text(s) => s.int(v),
        }
    }
    fn num(&mut self, v: f64) {
        match self {
            Batch::Values(s) => s.num(v),
            Batch::Text(s) => s.num(v),
        }
    }
    fn alnum(&mut self, write: impl FnOnce(&mut Vec<u8>)) {
        match self {
            Batch::Values(s) => s.alnum(write),
            Batch::Text(s) => s.alnum(write),
        }
    }
    fn now(&mut self) {
        match self {
            Batch::Values(s) => s.now(),
            Batch::Text(s) => s.now(),
        }
    }
    fn null(&mut self) {
        match self {
            Batch::Values(s) => s.null(),
            Batch::Text(s) => s.null(),
        }
    }
    fn end_row(&mut self) {
        match self {
            Batch::Values(s) => s.end_row(),
            Batch::Text(s) => s.end_row(),
        }
    }
}

/// Collects generated rows per table into batches and hands each full batch
/// to the loading thread; a row is `None` once that thread has stopped.
struct Batcher {
    size: usize,
    /// The load time's text when the batches are text.
    text_now: Option<String>,
    open: Vec<(&'static str, Batch)>,
    out: std::sync::mpsc::SyncSender<(&'static str, Batch)>,
}

impl Batcher {
    fn fresh(&self) -> Batch {
        match &self.text_now {
            Some(now) => Batch::Text(TextRows::new(now)),
            None => Batch::Values(rows::Values::default()),
        }
    }

    /// The position of `table`'s open batch.
    fn slot(&mut self, table: &'static str) -> usize {
        match self.open.iter().position(|(t, _)| *t == table) {
            Some(p) => p,
            None => {
                let b = self.fresh();
                self.open.push((table, b));
                self.open.len() - 1
            }
        }
    }

    /// Sends the batch at `pos` when it is full.
    fn send_full(&mut self, pos: usize) -> Option<()> {
        if self.open[pos].1.len() < self.size {
            return Some(());
        }
        let fresh = self.fresh();
        let full = std::mem::replace(&mut self.open[pos].1, fresh);
        self.out.send((self.open[pos].0, full)).ok()
    }

    /// One row of `table`, written by `generate`.
    fn row(&mut self, table: &'static str, generate: impl FnOnce(&mut Batch)) -> Option<()> {
        let pos = self.slot(table);
        generate(&mut self.open[pos].1);
        self.send_full(pos)
    }

    /// One order with its lines and new-order row ([`rows::order`]).
    fn order(&mut self, r: &mut Random, w: u32, d: u32, o_id: u32, c_id: u32) -> Option<()> {
        let at = [
            self.slot("oorder"),
            self.slot("order_line"),
            self.slot("new_order"),
        ];
        rows::order(r, w, d, o_id, c_id, &mut OrderBatches { b: self, at });
        at.iter().try_for_each(|&pos| self.send_full(pos))
    }

    /// The partial batches, in the order their tables first had a row.
    fn finish(self) {
        for (table, batch) in self.open {
            if batch.len() > 0 && self.out.send((table, batch)).is_err() {
                return;
            }
        }
    }
}

/// The open ORDER, ORDER-LINE and NEW-ORDER batches of a [`Batcher`].
struct OrderBatches<'a> {
    b: &'a mut Batcher,
    at: [usize; 3],
}

impl rows::OrderSinks for OrderBatches<'_> {
    type Sink = Batch;
    fn orders(&mut self) -> &mut Batch {
        &mut self.b.open[self.at[0]].1
    }
    fn lines(&mut self) -> &mut Batch {
        &mut self.b.open[self.at[1]].1
    }
    fn new_orders(&mut self) -> &mut Batch {
        &mut self.b.open[self.at[2]].1
    }
}

/// Loads the rows `generate` writes (returning early with `?` when a row is
/// `None`), in batches: a thread of its own generates while this one loads
/// the batch before (so the database is not idle while rows are made),
/// batches in the order they filled up. The fast path of a database that
/// takes text gets the generators' text directly. A loader's thread and
/// runtime are its own, so waiting here for the next batch holds up nothing
/// else.
async fn load_generated<C: Conn + ?Sized>(
    c: &mut C,
    method: LoadMethod,
    progress: &(dyn Fn(u64) + Sync),
    generate: impl FnOnce(&mut Batcher) -> Option<()> + Send + 'static,
) -> Result<(), DbError> {
    let size = batch_rows(method);
    let text_now = match method {
        LoadMethod::Fast => c.text_load_time(),
        LoadMethod::Insert => None,
    };
    // one batch waiting while one loads: a few MiB
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    let generator = std::thread::Builder::new()
        .name("yardstick-tpcc-rows".into())
        .spawn(move || {
            let mut b = Batcher {
                size,
                text_now,
                open: Vec::new(),
                out: tx,
            };
            if generate(&mut b).is_some() {
                b.finish();
            }
        })
        .map_err(|e| DbError::other(format!("cannot start a row generator thread: {e}")))?;
    let loaded = async {
        for (table, batch) in rx.iter() {
            let n = batch.len() as u64;
            match (batch, method) {
                (Batch::Text(t), _) => c.load_text(table, t).await?,
                (Batch::Values(v), LoadMethod::Fast) => c.load(table, &v.rows).await?,
                (Batch::Values(v), LoadMethod::Insert) => row_by_row(c, table, &v.rows).await?,
            }
            progress(n);
        }
        Ok(())
    }
    .await;
    // on an error the receiver is gone by now, which stops the generator
    let _ = generator.join();
    loaded
}

/// One prepared INSERT per row, the batch in one transaction.
async fn row_by_row<C: Conn + ?Sized>(c: &mut C, table: &str, rows: &[Row]) -> Result<(), DbError> {
    let sql = super::insert_sql(table);
    c.begin().await?;
    for row in rows {
        if let Err(e) = c.execute(sql, row).await {
            let _ = c.rollback().await;
            return Err(e);
        }
    }
    c.commit().await
}

/// Loads ITEM (once per database).
pub async fn items<C: Conn + ?Sized>(
    c: &mut C,
    seed: u64,
    k: Constants,
    method: LoadMethod,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<(), DbError> {
    c.batch("DELETE FROM item").await?;
    let mut r = Random::new(derive_seed(seed, &[0x17]), k);
    load_generated(c, method, progress, move |b| {
        for i_id in 1..=ITEMS {
            b.row("item", |s| rows::item(&mut r, i_id, s))?;
        }
        Some(())
    })
    .await?;
    mark(c, "items".into(), "done").await
}

/// Deletes what an interrupted load left of `warehouses`, before the loaders
/// start: one statement per table and up to 1,000 warehouses (HISTORY has no
/// key, so a DELETE per warehouse while other loaders insert would scan it
/// and wait on their uncommitted rows).
pub async fn clear<C: Conn + ?Sized>(c: &mut C, warehouses: &[u32]) -> Result<(), DbError> {
    for t in TABLES {
        let Some(col) = super::warehouse_column(t) else {
            continue;
        };
        for part in warehouses.chunks(1000) {
            let list: Vec<String> = part.iter().map(u32::to_string).collect();
            c.batch(&format!(
                "DELETE FROM {t} WHERE {col} IN ({})",
                list.join(",")
            ))
            .await?;
        }
    }
    Ok(())
}

/// Loads warehouse `w` and everything that belongs to it (into tables
/// [`clear`] has emptied of it).
pub async fn warehouse<C: Conn + ?Sized>(
    c: &mut C,
    w: u32,
    seed: u64,
    k: Constants,
    method: LoadMethod,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<(), DbError> {
    let mut r = Random::new(derive_seed(seed, &[0x3a, u64::from(w)]), k);
    load_generated(c, method, progress, move |b| {
        b.row("warehouse", |s| rows::warehouse(&mut r, w, s))?;
        for i_id in 1..=ITEMS {
            b.row("stock", |s| rows::stock(&mut r, w, i_id, s))?;
        }
        for d in 1..=DISTRICTS {
            b.row("district", |s| rows::district(&mut r, w, d, s))?;
            for c_id in 1..=CUSTOMERS_PER_DISTRICT {
                b.row("customer", |s| rows::customer(&mut r, w, d, c_id, s))?;
                b.row("history", |s| rows::history(&mut r, w, d, c_id, s))?;
            }
            let perm = rows::customer_permutation(&mut r);
            for o_id in 1..=CUSTOMERS_PER_DISTRICT {
                b.order(&mut r, w, d, o_id, perm[o_id as usize - 1])?;
            }
        }
        Some(())
    })
    .await?;
    mark(c, format!("warehouse:{w}"), "done").await
}

/// Builds the secondary indexes a fast load deferred, each on a connection
/// of its own to `url` (so the database builds them side by side), then
/// clears the note. Indexes that exist already are left alone.
pub(crate) async fn create_indexes<C: Conn + ?Sized>(c: &mut C, url: &str) -> Result<(), DbError> {
    // each build on a thread and runtime of its own; this loader waits
    std::thread::scope(|s| {
        let builds: Vec<_> = INDEXES
            .iter()
            .map(|ddl| {
                s.spawn(move || {
                    super::block_on(async {
                        super::open(url, true, None)
                            .await?
                            .conn
                            .create_index(ddl)
                            .await
                    })
                })
            })
            .collect();
        builds
            .into_iter()
            .map(|b| {
                b.join()
                    .unwrap_or_else(|_| Err(DbError::other("index build panicked")))
            })
            .collect::<Result<Vec<()>, DbError>>()
    })?;
    c.batch("DELETE FROM tpcc_meta WHERE name = 'indexes'")
        .await
}

/// Drops every TPC-C table (`tpcc load --drop`).
pub(crate) async fn drop_all<C: Conn + ?Sized>(c: &mut C) -> Result<(), DbError> {
    for t in TABLES.iter().chain(["tpcc_meta"].iter()) {
        c.batch(&format!("DROP TABLE IF EXISTS {t}")).await?;
    }
    Ok(())
}

/// Rows of the whole database: one count per table.
pub async fn counts<C: Conn + ?Sized>(c: &mut C) -> Result<Vec<(String, i64)>, DbError> {
    let mut out = Vec::new();
    for t in TABLES {
        let sql: &'static str = match *t {
            "warehouse" => "SELECT COUNT(*) FROM warehouse",
            "district" => "SELECT COUNT(*) FROM district",
            "customer" => "SELECT COUNT(*) FROM customer",
            "history" => "SELECT COUNT(*) FROM history",
            "oorder" => "SELECT COUNT(*) FROM oorder",
            "new_order" => "SELECT COUNT(*) FROM new_order",
            "order_line" => "SELECT COUNT(*) FROM order_line",
            "stock" => "SELECT COUNT(*) FROM stock",
            _ => "SELECT COUNT(*) FROM item",
        };
        let r = c.query(sql, &[]).await?;
        out.push((t.to_string(), r.first().map_or(0, |r| int(r, 0))));
    }
    Ok(out)
}
