//! `null://`: the harness's own measuring stick. Without options every call
//! succeeds at once and stores nothing, so a run measures only the client.
//! `?latency=200us` adds a simulated service time (awaited, so the slots of
//! a worker thread overlap as they would on a server); `?store=memory`
//! keeps records in an in-memory ordered map with the full semantics of a real
//! database, which is what the conformance suite and end-to-end tests use.
use crate::registry::{Capabilities, Descriptor, Registered};
use crate::url::Target;
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use yardstick_core::binding::*;

type Table = BTreeMap<Vec<u8>, Vec<Option<Vec<u8>>>>;

pub(crate) struct NullBinding {
    latency: Duration,
    store: Option<Arc<Mutex<Table>>>,
    opts: OpenOptions,
}

pub(crate) const OPTIONS: &[&str] = &["latency", "store"];

impl Registered for NullBinding {
    const DESCRIPTOR: Descriptor = Descriptor {
        schemes: &["null"],
        server_port: None,
        flavours: &[],
        description: "no database: measures the harness itself; ?latency=200us simulates service time, ?store=memory keeps data in memory",
        example: "null://?latency=200us",
        docs: "docs/bindings/null.md",
        options: OPTIONS,
        capabilities: Capabilities {
            batch_load: false,
            scan: true,
            tpcc: None,
        },
    };

    fn open(target: &Target, opts: &OpenOptions) -> Result<Self, BindingError> {
        target.allow_only(OPTIONS)?;
        let latency = target.duration_or("latency", Duration::ZERO)?;
        let store = match target.param("store").unwrap_or("none") {
            "none" => None,
            "memory" => Some(Arc::new(Mutex::new(Table::new()))),
            other => {
                return Err(BindingError::Config(format!(
                    "null:// store={other} is not known: use store=none or store=memory"
                )))
            }
        };
        if store.is_none() && opts.data_integrity {
            return Err(BindingError::Unsupported(
                "null:// stores nothing, so dataintegrity=true cannot verify reads; use null://?store=memory".into(),
            ));
        }
        Ok(NullBinding {
            latency,
            store,
            opts: opts.clone(),
        })
    }
}

pub(crate) struct NullSession {
    /// Neither latency nor store: every call answers at its first poll.
    now: bool,
    latency: Duration,
    store: Option<Arc<Mutex<Table>>>,
    fields: usize,
    insert_mode: InsertMode,
    update_mode: UpdateMode,
}

impl Binding for NullBinding {
    type Session = NullSession;

    async fn session(&self) -> Result<NullSession, BindingError> {
        Ok(NullSession {
            now: self.latency.is_zero() && self.store.is_none(),
            latency: self.latency,
            store: self.store.clone(),
            fields: self.opts.schema.fields.len(),
            insert_mode: self.opts.insert_mode,
            update_mode: self.opts.update_mode,
        })
    }

    fn info(&self) -> EngineInfo {
        let mut settings = BTreeMap::new();
        settings.insert("latency_ns".into(), self.latency.as_nanos().to_string());
        settings.insert(
            "store".into(),
            if self.store.is_some() {
                "memory"
            } else {
                "none"
            }
            .into(),
        );
        EngineInfo {
            name: "null".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            settings,
        }
    }
}

impl NullSession {
    /// A call that answers `Outcome::ok(rows, bytes)` without a store (a
    /// plain pair: a droppable `Outcome` held here cost the call's future a
    /// drop call), else what `work` makes of the locked table; after the
    /// simulated service time, when there is one (awaited without holding
    /// the worker thread: the other slots of the thread run meanwhile, as
    /// they would while a server answers).
    #[inline(always)]
    fn call<F: FnOnce(&mut Table) -> Outcome + Unpin>(&self, rows: u64, bytes: u64, work: F) -> Call<'_, F> {
        if self.now {
            return Call::Now { rows, bytes };
        }
        self.later(rows, bytes, work)
    }

    /// [`Self::call`] with a pause or a store: out of line, so the plain
    /// call stays small enough to be inlined where it is made.
    #[inline(never)]
    fn later<F: FnOnce(&mut Table) -> Outcome + Unpin>(&self, rows: u64, bytes: u64, work: F) -> Call<'_, F> {
        let pause = (!self.latency.is_zero()).then(|| {
            Box::pin(yardstick_core::run::sleep_until_precisely(
                Instant::now() + self.latency,
            )) as Pause
        });
        let answer = match self.store.as_deref() {
            None => Answer::Counts { rows, bytes },
            Some(store) => Answer::Work(store, work),
        };
        Call::Later(Box::new(Later {
            pause,
            answer: Some(answer),
        }))
    }

    #[inline(never)]
    fn lock(store: &Mutex<Table>) -> std::sync::MutexGuard<'_, Table> {
        store.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn copy_out(row: &[Option<Vec<u8>>], fields: Fields, out: &mut Record) -> u64 {
        let mut bytes = 0;
        for (_, i) in fields.columns(row.len()) {
            if let Some(Some(v)) = row.get(i) {
                out.set(i, v);
                bytes += v.len() as u64;
            }
        }
        bytes
    }

    fn write_into(row: &mut Vec<Option<Vec<u8>>>, fields: usize, values: &WriteSet) {
        row.resize(fields.max(row.len()), None);
        for (i, v) in values.iter() {
            if i >= row.len() {
                row.resize(i + 1, None);
            }
            row[i] = Some(v.to_vec());
        }
    }
}

impl Session for NullSession {
    #[inline]
    fn read(
        &mut self,
        key: &[u8],
        fields: Fields,
        out: &mut Record,
    ) -> impl Future<Output = Outcome> {
        self.call(1, 0, move |t| match t.get(key) {
            Some(row) => {
                let bytes = Self::copy_out(row, fields, out);
                Outcome::ok(1, bytes)
            }
            None => Outcome::of(Status::NotFound),
        })
    }

    #[inline]
    fn scan(
        &mut self,
        start: &[u8],
        count: u64,
        fields: Fields,
        out: &mut ScanRows,
    ) -> impl Future<Output = Outcome> {
        self.call(count, 0, move |t| {
            let mut bytes = 0;
            let mut rows = 0;
            for (k, row) in t.range(start.to_vec()..).take(count as usize) {
                bytes += Self::copy_out(row, fields, out.push(k));
                rows += 1;
            }
            Outcome::ok(rows, bytes)
        })
    }

    #[inline]
    fn update(&mut self, key: &[u8], values: &WriteSet) -> impl Future<Output = Outcome> {
        let (fields, mode) = (self.fields, self.update_mode);
        self.call(0, values.bytes(), move |t| {
            match (t.get_mut(key), mode) {
                (Some(row), _) => Self::write_into(row, fields, values),
                (None, UpdateMode::Upsert) => {
                    let mut row = Vec::new();
                    Self::write_into(&mut row, fields, values);
                    t.insert(key.to_vec(), row);
                }
                (None, UpdateMode::Update) => return Outcome::of(Status::NotFound),
            }
            Outcome::ok(0, values.bytes())
        })
    }

    #[inline]
    fn insert(&mut self, key: &[u8], values: &WriteSet) -> impl Future<Output = Outcome> {
        let (fields, mode) = (self.fields, self.insert_mode);
        self.call(0, values.bytes(), move |t| {
            if mode == InsertMode::Insert && t.contains_key(key) {
                return Outcome::of(Status::DuplicateKey);
            }
            let mut row = Vec::new();
            Self::write_into(&mut row, fields, values);
            t.insert(key.to_vec(), row);
            Outcome::ok(0, values.bytes())
        })
    }

    #[inline]
    fn delete(&mut self, key: &[u8]) -> impl Future<Output = Outcome> {
        self.call(0, 0, move |t| match t.remove(key) {
            Some(_) => Outcome::ok(0, 0),
            None => Outcome::of(Status::NotFound),
        })
    }

    async fn clear(&mut self) -> Result<Option<u64>, BindingError> {
        Ok(self.store.as_deref().map(|store| {
            let mut t = Self::lock(store);
            let n = t.len() as u64;
            t.clear();
            n
        }))
    }
}

/// The simulated service time of one call.
type Pause = Pin<Box<dyn Future<Output = ()> + Send>>;

/// A call's future. Written by hand rather than as an `async fn`, whose
/// first poll moves every argument into its state: without latency or a
/// store a call is one poll that hands over the counts given where the call
/// was made, and its state is those two counts. The rest, the table's
/// closure with it, is boxed: kept inline, its eight words were copied into
/// the caller's state and back on every operation (~25 instructions of a
/// null:// workload C operation), so null:// measures the harness, nothing
/// else; a call with a pause boxes its timer anyway.
enum Call<'a, F> {
    /// Neither latency nor store: the call succeeds with these counts.
    Now { rows: u64, bytes: u64 },
    Later(Box<Later<'a, F>>),
    /// Answered.
    Done,
}

/// A call with a simulated service time or a store.
struct Later<'a, F> {
    /// None without latency, and once it passed.
    pause: Option<Pause>,
    /// None once given.
    answer: Option<Answer<'a, F>>,
}

enum Answer<'a, F> {
    /// No store: the call succeeds with these counts.
    Counts { rows: u64, bytes: u64 },
    /// The work on the store's table.
    Work(&'a Mutex<Table>, F),
}

impl<F: FnOnce(&mut Table) -> Outcome + Unpin> Future for Call<'_, F> {
    type Output = Outcome;

    #[inline(always)]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Outcome> {
        let this = self.get_mut();
        match this {
            Call::Now { rows, bytes } => {
                let out = Outcome::ok(*rows, *bytes);
                *this = Call::Done;
                Poll::Ready(out)
            }
            Call::Later(later) => {
                let Later { pause, answer } = &mut **later;
                if let Some(p) = pause {
                    std::task::ready!(p.as_mut().poll(cx));
                    *pause = None;
                }
                // polled again after it answered: pending, as a fused future is
                match answer.take() {
                    Some(Answer::Counts { rows, bytes }) => Poll::Ready(Outcome::ok(rows, bytes)),
                    Some(Answer::Work(store, work)) => {
                        Poll::Ready(work(&mut NullSession::lock(store)))
                    }
                    None => Poll::Pending,
                }
            }
            // polled again after it answered: pending, as a fused future is
            Call::Done => Poll::Pending,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open_memory(opts: &OpenOptions) -> Result<NullBinding, BindingError> {
        NullBinding::open(&Target::parse("null://?store=memory").unwrap(), opts)
    }

    yardstick_core::conformance_suite!(open_memory);

    fn opts(data_integrity: bool) -> OpenOptions {
        OpenOptions {
            schema: Schema {
                table: "t".into(),
                fields: vec!["f0".into()],
            },
            insert_mode: InsertMode::Insert,
            update_mode: UpdateMode::Update,
            create: true,
            sessions: 1,
            data_integrity,
            scans: true,
        }
    }

    #[test]
    fn plain_null_succeeds_at_once_and_refuses_integrity_checks() {
        let b = NullBinding::open(&Target::parse("null://").unwrap(), &opts(false)).unwrap();
        let rt = crate::testing::runtime();
        rt.block_on(async {
            let mut s = b.session().await.unwrap();
            let mut rec = Record::with_fields(1);
            assert_eq!(
                s.read(b"k", Fields::All, &mut rec).await.status(),
                Status::Ok
            );
            assert_eq!(s.delete(b"k").await.status(), Status::Ok);
            // without latency a call is done at its first poll: no timer, no yield
            use futures_util::FutureExt;
            let first = s.read(b"k", Fields::All, &mut rec).now_or_never();
            assert_eq!(first.map(|o| o.status()), Some(Status::Ok));
        });
        let e = NullBinding::open(&Target::parse("null://").unwrap(), &opts(true))
            .err()
            .unwrap();
        assert!(e.to_string().contains("store=memory"));
        assert!(NullBinding::open(
            &Target::parse("null://?latency=soon").unwrap(),
            &opts(false)
        )
        .is_err());
        assert!(
            NullBinding::open(&Target::parse("null://?colour=red").unwrap(), &opts(false)).is_err()
        );
    }

    #[test]
    fn simulated_latency_is_applied() {
        let b = NullBinding::open(&Target::parse("null://?latency=5ms").unwrap(), &opts(false))
            .unwrap();
        let rt = crate::testing::runtime();
        rt.block_on(async {
            let mut s = b.session().await.unwrap();
            let t = Instant::now();
            s.delete(b"k").await;
            assert!(t.elapsed() >= Duration::from_millis(5));
            // four calls of one thread overlap: together they take one latency, not four
            let mut sessions = Vec::new();
            for _ in 0..4 {
                sessions.push(b.session().await.unwrap());
            }
            let t = Instant::now();
            futures_util::future::join_all(sessions.iter_mut().map(|s| s.delete(b"k"))).await;
            let took = t.elapsed();
            assert!(
                took >= Duration::from_millis(5) && took < Duration::from_millis(15),
                "{took:?}"
            );
        });
        assert_eq!(b.info().settings["latency_ns"], "5000000");
    }

    #[test]
    fn with_latency_and_a_store_the_table_answers_after_the_pause() {
        let url = "null://?latency=2ms&store=memory";
        let b = NullBinding::open(&Target::parse(url).unwrap(), &opts(false)).unwrap();
        let rt = crate::testing::runtime();
        rt.block_on(async {
            let mut s = b.session().await.unwrap();
            let mut w = WriteSet::default();
            w.push(0).extend_from_slice(b"v0");
            assert_eq!(s.insert(b"k", &w).await.status(), Status::Ok);
            let mut rec = Record::with_fields(1);
            let t = Instant::now();
            let out = s.read(b"k", Fields::All, &mut rec).await;
            assert!(t.elapsed() >= Duration::from_millis(2));
            assert_eq!((out.status(), out.rows(), out.bytes()), (Status::Ok, 1, 2));
            assert_eq!(rec.get(0), Some(&b"v0"[..]));
            assert_eq!(s.delete(b"k").await.status(), Status::Ok);
            assert_eq!(s.delete(b"k").await.status(), Status::NotFound);
        });
    }

    #[test]
    fn a_call_polled_after_it_answered_stays_pending() {
        // a plain call (its counts inline) and a call on the store (boxed)
        for (url, status) in [
            ("null://", Status::Ok),
            ("null://?store=memory", Status::NotFound),
        ] {
            let b = NullBinding::open(&Target::parse(url).unwrap(), &opts(false)).unwrap();
            let rt = crate::testing::runtime();
            rt.block_on(async {
                let mut s = b.session().await.unwrap();
                let mut call = std::pin::pin!(s.delete(b"k"));
                let waker = futures_util::task::noop_waker();
                let mut cx = Context::from_waker(&waker);
                assert!(
                    matches!(call.as_mut().poll(&mut cx), Poll::Ready(o) if o.status() == status),
                    "{url}"
                );
                assert!(call.as_mut().poll(&mut cx).is_pending(), "{url}");
            });
        }
    }
}
