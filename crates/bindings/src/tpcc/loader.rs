//! `tpcc load` as a library: the schema, then ITEM and each warehouse as
//! units of work shared by L loader threads (each with its own connection
//! and runtime), then the secondary indexes a fast load deferred. A load
//! stopped part-way resumes: warehouses marked done are kept, what an
//! interrupted one left is deleted first.
use super::{load, open, runtime, Conn, DbError, LoadMethod};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// What to load.
#[derive(Debug, Clone)]
pub struct LoadPlan {
    pub url: String,
    pub warehouses: u32,
    pub loaders: u32,
    pub seed: u64,
    pub method: LoadMethod,
    /// Drop the TPC-C tables first.
    pub drop: bool,
}

/// How a load ended.
#[derive(Debug, Clone, PartialEq)]
pub enum LoadOutcome {
    Done {
        rows: u64,
        elapsed: Duration,
        /// Warehouses a previous load had finished.
        kept: Vec<u32>,
    },
    /// Stopped by a signal; the same command finishes it.
    Interrupted,
}

/// Why a load failed.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The database cannot be opened (a bad URL, an unreachable server,
    /// wrong credentials): the user's to fix.
    #[error("{0}")]
    Open(DbError),
    /// The database refused part of the load.
    #[error("{0}")]
    Failed(DbError),
}

/// Progress, for a status line.
pub trait Progress: Sync {
    /// Before the loaders start: the warehouses a previous load finished
    /// (kept) and how many are to load now.
    fn start(&self, kept: &[u32], loading: usize);
    /// Rows loaded so far, of about `expected`.
    fn rows(&self, loaded: u64, expected: u64, elapsed: Duration);
}

/// An error with what the loader was doing.
fn context(what: impl std::fmt::Display) -> impl Fn(DbError) -> LoadError {
    move |e| {
        LoadError::Failed(DbError {
            kind: e.kind,
            message: format!("{what}: {}", e.message),
        })
    }
}

/// Runs `f` on a runtime of this thread.
fn block_on<T>(f: impl std::future::Future<Output = Result<T, LoadError>>) -> Result<T, LoadError> {
    runtime().map_err(LoadError::Failed)?.block_on(f)
}

/// Loads `plan`, calling `progress` every 200 ms until the loaders finish;
/// `stop` ends the load between units.
pub fn run(
    plan: &LoadPlan,
    stop: &AtomicBool,
    progress: &dyn Progress,
) -> Result<LoadOutcome, LoadError> {
    let (state, k) = block_on(async {
        let mut o = open(&plan.url, true, None).await.map_err(LoadError::Open)?;
        if plan.drop {
            load::drop_all(&mut o.conn)
                .await
                .map_err(context("cannot drop the tables"))?;
        }
        let k = load::prepare(&mut o.conn, plan.seed, plan.method)
            .await
            .map_err(context("cannot create the schema"))?;
        let state = load::state(&mut o.conn)
            .await
            .map_err(context("cannot read the load state"))?;
        let todo: Vec<u32> = (1..=plan.warehouses)
            .filter(|w| !state.warehouses.contains(w))
            .collect();
        load::clear(&mut o.conn, &todo)
            .await
            .map_err(context("cannot delete what an interrupted load left"))?;
        Ok((state, k))
    })?;
    let todo: Vec<u32> = (1..=plan.warehouses)
        .filter(|w| !state.warehouses.contains(w))
        .collect();
    // ITEM is one more unit of work (first, as it is small)
    let units: Vec<Option<u32>> = (!state.items)
        .then_some(None)
        .into_iter()
        .chain(todo.iter().map(|&w| Some(w)))
        .collect();
    progress.start(&state.warehouses, todo.len());
    let expected = todo.len() as u64 * yardstick_core::tpcc::rows_per_warehouse()
        + if state.items { 0 } else { 100_000 };
    let rows = AtomicU64::new(0);
    let started = Instant::now();
    let next = AtomicUsize::new(0);
    let failure: Mutex<Option<LoadError>> = Mutex::new(None);
    let finished = AtomicBool::new(false);
    let failed = || failure.lock().map(|f| f.is_some()).unwrap_or(true);
    let fail = |e: LoadError| {
        failure
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_or_insert(e);
    };
    let count = |n: u64| {
        rows.fetch_add(n, Ordering::Relaxed);
    };
    let loader = || {
        let loaded = block_on(async {
            let mut conn = open(&plan.url, true, None)
                .await
                .map_err(LoadError::Open)?
                .conn;
            while !stop.load(Ordering::SeqCst) && !failed() {
                let Some(&unit) = units.get(next.fetch_add(1, Ordering::SeqCst)) else {
                    break;
                };
                load_unit(&mut conn, plan, unit, k, &count).await?;
            }
            Ok(())
        });
        if let Err(e) = loaded {
            fail(e);
        }
    };
    std::thread::scope(|scope| {
        scope.spawn(|| {
            while !finished.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(200));
                progress.rows(rows.load(Ordering::Relaxed), expected, started.elapsed());
            }
        });
        let n = plan.loaders.clamp(1, units.len().max(1) as u32);
        let loaders: Vec<_> = (0..n).map(|_| scope.spawn(loader)).collect();
        for l in loaders {
            if l.join().is_err() {
                fail(LoadError::Failed(DbError::other("a loader thread failed")));
            }
        }
        finished.store(true, Ordering::Relaxed);
    });
    if let Some(e) = failure.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e);
    }
    if stop.load(Ordering::SeqCst) {
        return Ok(LoadOutcome::Interrupted);
    }
    // the secondary indexes a fast load left for the end (a no-op where they exist)
    block_on(async {
        let mut o = open(&plan.url, true, None).await.map_err(LoadError::Open)?;
        load::create_indexes(&mut o.conn, &plan.url)
            .await
            .map_err(context("cannot create the secondary indexes"))
    })?;
    Ok(LoadOutcome::Done {
        rows: rows.load(Ordering::Relaxed),
        elapsed: started.elapsed(),
        kept: state.warehouses.clone(),
    })
}

/// Loads ITEM (`None`) or one warehouse.
async fn load_unit<C: Conn + ?Sized>(
    conn: &mut C,
    plan: &LoadPlan,
    unit: Option<u32>,
    k: yardstick_core::tpcc::Constants,
    count: &(dyn Fn(u64) + Sync),
) -> Result<(), LoadError> {
    let loaded = match unit {
        None => load::items(conn, plan.seed, k, plan.method, count).await,
        Some(w) => load::warehouse(conn, w, plan.seed, k, plan.method, count).await,
    };
    loaded.map_err(context(match unit {
        None => "loading ITEM failed".to_string(),
        Some(w) => format!("loading warehouse {w} failed"),
    }))
}
