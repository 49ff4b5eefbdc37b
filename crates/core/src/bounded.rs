//! A session whose every call ends within a time limit, for drivers that
//! wait as long as a stalled server lets them: past the limit the call is
//! abandoned (its future dropped), counts as `timeout`, and the session is
//! told ([`Session::abandoned`]) so it can drop a connection left halfway
//! through a request.
//!
//! A pipelined client may bound its calls itself with a [`CallTimer`]: one
//! per connection, polled by whichever call reads for the others with the
//! oldest waiting call's start ([`CallTimer::poll_expired`]). Through
//! `Bounded`, every call of every session polls a timer of its own and is
//! one more `async fn` state machine entered at both of its polls (a
//! pipelined Redis SET: 12% of its client CPU, a GET: 8%, getrusage).
use crate::binding::{
    Batch, BindingError, Fields, Outcome, Record, ScanRows, Session, Status, WriteSet,
};
use crate::run::clock::Clock;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

/// `inner` with every call bounded by `limit`. Aligned to a cache line: a
/// pipelined call touches the session and its timer (~120 bytes for Redis)
/// in two lines, not the three it straddled at any offset.
#[repr(align(64))]
pub struct Bounded<S> {
    inner: S,
    limit: Duration,
    timer: CallTimer,
}

/// One timer for all of a session's calls, left where it is while calls
/// come and go: a call that waits reads the cheap cycle counter at its
/// start, and only when the timer fires is the deadline checked against
/// the call's own start (expired: abandoned; not yet: the timer moves to
/// that call's deadline). Moving the timer to every call's deadline cost a
/// clock_gettime and a timer-wheel update per call (6% of a pipelined
/// Redis GET's client CPU).
///
/// A call that is polled again while the timer has not fired skips the
/// timer when the waker is the one the timer holds already: polling it
/// again would only register the same waker (an atomic exchange, a waker
/// clone and drop, and a unit of tokio's budget: ~4% of a pipelined SET's
/// client CPU).
#[derive(Default)]
pub struct CallTimer {
    sleep: Option<Pin<Box<tokio::time::Sleep>>>,
    /// The waker the unfired sleep was last polled with.
    armed: Option<Waker>,
}

/// The call outlived the limit.
pub struct Elapsed;

/// A call's outcome once it was abandoned at `limit`.
pub fn timed_out(limit: Duration) -> Outcome {
    Outcome::failed(
        Status::Timeout,
        format!("no answer within {limit:?} (the URL's timeout)"),
    )
}

impl<S: Session> Bounded<S> {
    pub fn new(inner: S, limit: Duration) -> Self {
        Bounded {
            inner,
            limit,
            timer: CallTimer::default(),
        }
    }

    /// The session inside.
    pub fn get_mut(&mut self) -> &mut S {
        &mut self.inner
    }

    /// A call's outcome, or `timeout` when it was abandoned at the limit.
    fn finish(&mut self, r: Result<Outcome, Elapsed>) -> Outcome {
        r.unwrap_or_else(|Elapsed| {
            self.inner.abandoned();
            timed_out(self.limit)
        })
    }
}

/// Awaits `$call` (a call of `$b.inner`) until `$b.limit` from its start
/// has passed; evaluates to its outcome or `timeout`. A macro, so that the
/// call's future and the waiting are state of the session's own method: as
/// an `async fn` of its own, the waiting was one more layer of state per
/// call, a line fetched from memory at every operation once a thread's
/// sessions outgrow the cache. The future is made where it stays: passed
/// in by value it was copied (5% of a pipelined Redis GET's CPU).
macro_rules! within {
    ($b:ident, $call:expr) => {{
        // the stamp the worker took for this call (lent: a clock read fewer)
        let start = CallTimer::start();
        let (timer, limit) = (&mut $b.timer, $b.limit);
        let r = {
            let mut call = std::pin::pin!($call);
            std::future::poll_fn(|cx| timer.poll(limit, start, call.as_mut(), cx)).await
        };
        $b.finish(r)
    }};
}

impl CallTimer {
    /// The start of the call being made: the stamp the worker took for it
    /// (lent, a clock read fewer), else one read now. A session that bounds
    /// its own calls takes it at every call's first poll and says so with
    /// [`Session::TAKES_CALL_START`], or a later call could start from a
    /// stale stamp.
    #[inline(always)]
    pub fn start() -> u64 {
        Clock::shared().call_start()
    }

    /// A stamp read now, for a call of a session's own making (a login)
    /// that is no call of the worker's: the stamp lent for one is left to it.
    pub fn now() -> u64 {
        Clock::shared().raw()
    }

    /// Polls `call`, started at `start` (a cycle count), arming the timer
    /// when it waits: ready with its output, or `Elapsed` past `limit`.
    pub fn poll<F: Future>(
        &mut self,
        limit: Duration,
        start: u64,
        call: Pin<&mut F>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<F::Output, Elapsed>> {
        // the call first: one that is ready at its deadline still counts
        if let Poll::Ready(v) = call.poll(cx) {
            return Poll::Ready(Ok(v));
        }
        self.poll_expired(limit, start, cx).map(|()| Err(Elapsed))
    }

    /// Ready once a call started at `start` is past `limit`; until then
    /// pending, the timer armed to wake `cx`'s task by then. For a caller
    /// that polls its calls itself: a pipe of many, with its oldest's start.
    pub fn poll_expired(&mut self, limit: Duration, start: u64, cx: &mut Context<'_>) -> Poll<()> {
        let armed = self.armed.as_ref().is_some_and(|w| w.will_wake(cx.waker()));
        if armed && self.sleep.as_ref().is_some_and(|s| !s.is_elapsed()) {
            return Poll::Pending;
        }
        let sleep = self.sleep.get_or_insert_with(|| {
            Box::pin(tokio::time::sleep_until(
                tokio::time::Instant::now() + limit,
            ))
        });
        // fired: for this call, or for an earlier one (then wait on to this one's deadline)
        while sleep.as_mut().poll(cx).is_ready() {
            let clock = Clock::shared();
            let elapsed = clock.delta(start, clock.raw());
            if elapsed >= limit {
                return Poll::Ready(());
            }
            sleep
                .as_mut()
                .reset(tokio::time::Instant::now() + (limit - elapsed));
        }
        if !armed {
            self.armed = Some(cx.waker().clone());
        }
        Poll::Pending
    }
}

impl<S: Session> Session for Bounded<S> {
    const TAKES_CALL_START: bool = true;
    const TAKES_OWED_VALUES: bool = S::TAKES_OWED_VALUES;

    async fn read(&mut self, key: &[u8], fields: Fields, out: &mut Record) -> Outcome {
        within!(self, self.inner.read(key, fields, out))
    }

    async fn scan(
        &mut self,
        start: &[u8],
        count: u64,
        fields: Fields,
        out: &mut ScanRows,
    ) -> Outcome {
        within!(self, self.inner.scan(start, count, fields, out))
    }

    async fn update(&mut self, key: &[u8], values: &WriteSet) -> Outcome {
        within!(self, self.inner.update(key, values))
    }

    async fn insert(&mut self, key: &[u8], values: &WriteSet) -> Outcome {
        within!(self, self.inner.insert(key, values))
    }

    async fn delete(&mut self, key: &[u8]) -> Outcome {
        within!(self, self.inner.delete(key))
    }

    async fn insert_batch(&mut self, batch: &Batch) -> Outcome {
        within!(self, self.inner.insert_batch(batch))
    }

    /// Emptying a table is not an operation of the run: no limit.
    async fn clear(&mut self) -> Result<Option<u64>, BindingError> {
        self.inner.clear().await
    }

    fn abandoned(&mut self) {
        self.inner.abandoned();
    }

    fn release(&mut self, rec: &mut Record) {
        self.inner.release(rec);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    /// Reads take `delay`; counts the calls it was told were abandoned and the
    /// records released.
    struct Slow {
        delay: Duration,
        abandoned: u32,
        released: u32,
    }

    impl Session for Slow {
        async fn read(&mut self, _: &[u8], _: Fields, _: &mut Record) -> Outcome {
            tokio::time::sleep(self.delay).await;
            Outcome::ok(1, 0)
        }
        async fn scan(&mut self, _: &[u8], _: u64, _: Fields, _: &mut ScanRows) -> Outcome {
            Outcome::ok(0, 0)
        }
        async fn update(&mut self, _: &[u8], _: &WriteSet) -> Outcome {
            Outcome::ok(0, 0)
        }
        async fn insert(&mut self, _: &[u8], _: &WriteSet) -> Outcome {
            Outcome::ok(0, 0)
        }
        async fn delete(&mut self, _: &[u8]) -> Outcome {
            Outcome::ok(0, 0)
        }
        fn abandoned(&mut self) {
            self.abandoned += 1;
        }
        fn release(&mut self, _: &mut Record) {
            self.released += 1;
        }
    }

    /// Runs `f` to its end on a runtime of its own, with timers.
    fn on_runtime(f: impl Future<Output = ()>) {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(f)
    }

    #[test]
    fn the_shared_timer_bounds_each_call_from_its_own_start() {
        on_runtime(async {
            let limit = Duration::from_millis(200);
            let mut b = Bounded::new(
                Slow {
                    delay: Duration::from_millis(1),
                    abandoned: 0,
                    released: 0,
                },
                limit,
            );
            let mut rec = Record::default();
            // calls that together outlast the limit, each well within it
            for _ in 0..300 {
                assert_eq!(
                    b.read(b"k", Fields::All, &mut rec).await.status(),
                    Status::Ok
                );
            }
            b.release(&mut rec);
            assert_eq!(b.get_mut().released, 1, "the release reaches the session");
            b.get_mut().delay = Duration::from_secs(30);
            let started = Instant::now();
            let o = b.read(b"k", Fields::All, &mut rec).await;
            assert_eq!(o.status(), Status::Timeout, "{o:?}");
            let waited = started.elapsed();
            // from the call's own start: the timer an earlier call armed
            // fires first and moves on to this call's deadline, not a whole
            // limit further
            assert!(waited >= limit && waited < limit * 2, "{waited:?}");
            assert_eq!(b.get_mut().abandoned, 1);
            // the timer that fired serves the next calls, after an idle spell too
            tokio::time::sleep(limit + limit).await;
            b.get_mut().delay = Duration::from_millis(1);
            assert_eq!(
                b.read(b"k", Fields::All, &mut rec).await.status(),
                Status::Ok
            );
            b.get_mut().delay = Duration::from_secs(30);
            assert_eq!(
                b.read(b"k", Fields::All, &mut rec).await.status(),
                Status::Timeout
            );
            assert_eq!(b.get_mut().abandoned, 2);
        });
    }

    #[test]
    fn a_call_starts_from_the_stamp_lent_for_it_once() {
        on_runtime(async {
            let limit = Duration::from_millis(200);
            let slow = |delay| Slow {
                delay,
                abandoned: 0,
                released: 0,
            };
            let mut b = Bounded::new(slow(Duration::from_millis(1)), limit);
            let mut rec = Record::default();
            // arms the timer, which then fires while nothing runs
            assert_eq!(
                b.read(b"k", Fields::All, &mut rec).await.status(),
                Status::Ok
            );
            let clock = Clock::shared();
            let before_idle = clock.raw();
            tokio::time::sleep(limit + Duration::from_millis(100)).await;
            b.get_mut().delay = Duration::from_millis(100);
            // lent a stamp from before the idle spell, the call is already
            // past its limit when the fired timer is checked
            clock.lend(before_idle);
            let lent = b.read(b"k", Fields::All, &mut rec).await.status();
            if clock.tsc {
                assert_eq!(lent, Status::Timeout);
            } else {
                assert_eq!(lent, Status::Ok, "no counter: nothing is lent");
            }
            // the next call, lent nothing, starts when it is made
            assert_eq!(
                b.read(b"k", Fields::All, &mut rec).await.status(),
                Status::Ok
            );
        });
    }

    /// Counts its wakes.
    struct Counter(std::sync::atomic::AtomicU32);

    impl std::task::Wake for Counter {
        fn wake(self: std::sync::Arc<Self>) {
            self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    }

    #[test]
    fn a_call_polled_with_a_new_waker_is_woken_there_at_its_deadline() {
        on_runtime(async {
            let mut b = Bounded::new(
                Slow {
                    delay: Duration::from_secs(30),
                    abandoned: 0,
                    released: 0,
                },
                Duration::from_millis(50),
            );
            let mut rec = Record::default();
            let (a, z) = (
                std::sync::Arc::new(Counter(0.into())),
                std::sync::Arc::new(Counter(0.into())),
            );
            let (wa, wz) = (Waker::from(a.clone()), Waker::from(z.clone()));
            let mut call = std::pin::pin!(b.read(b"k", Fields::All, &mut rec));
            let mut cx = std::task::Context::from_waker(&wa);
            // the second poll with the same waker leaves the timer as it is
            assert!(call.as_mut().poll(&mut cx).is_pending());
            assert!(call.as_mut().poll(&mut cx).is_pending());
            let mut cz = std::task::Context::from_waker(&wz);
            assert!(call.as_mut().poll(&mut cz).is_pending());
            tokio::time::sleep(Duration::from_millis(150)).await;
            // the timer wakes the waker of the last poll, not the first
            assert_eq!(z.0.load(std::sync::atomic::Ordering::SeqCst), 1);
            assert_eq!(a.0.load(std::sync::atomic::Ordering::SeqCst), 0);
            let Poll::Ready(o) = call.as_mut().poll(&mut cz) else {
                panic!("past its deadline the call ends")
            };
            assert_eq!(o.status(), Status::Timeout);
        });
    }
}
