//! Executing one operation or one load batch: timing, the statuses that are
//! retried, and the backoff between retries.
use super::{Buffers, Ycsb, YcsbSlot};
use crate::binding::{Binding, Fields, Outcome, Session, Status};
use crate::generator::fnvhash64;
use crate::op::OpKind;
use crate::run::record::{Ended, Origin, Recording, Traced};
use crate::run::work::Stepped;
use crate::workload::ledger::Pending;
use crate::workload::stream::instance_key;
use crate::workload::{Phase, SharedState, Stream};
use std::time::Instant;

/// `(output, start stamp, end stamp)` of awaiting `$fut`, as
/// [`Recording::timed`] gives, but awaited in place: the call's future is
/// not moved into a wrapper's (a copy of its whole state per operation).
macro_rules! timed {
    ($rec:expr, $s:expr, $fut:expr) => {{
        let start = call_stamp($rec, &*$s);
        let out = $fut.await;
        (out, start, $rec.stamp())
    }};
}

/// One batch insert of the load phase, with YCSB's insertion retries.
async fn execute_batch<S: Session>(
    s: &mut S,
    b: &Buffers,
    shared: &SharedState,
    intended: Option<Instant>,
    rec: &Recording<'_>,
) -> Ended {
    let c = &shared.config;
    let first = rec.stamp();
    let mut attempt = 0u32;
    let (mut out, mut start, mut end);
    let mut pending = Pending::new(&shared.ledger, &b.batch_keynums);
    loop {
        (out, start, end) = timed!(rec, s, s.insert_batch(&b.batch));
        if out.status().is_ok()
            || out.status() == Status::DuplicateKey
            || attempt >= c.insertion_retry_limit
            || rec.stopped()
        {
            break;
        }
        pending.attempt(out.status());
        attempt += 1;
        rec.retry(OpKind::BatchInsert);
        let jitter = 0.8 + 0.4 * (fnvhash64(first ^ attempt as u64) % 1000) as f64 / 1000.0;
        tokio::time::sleep(c.insertion_retry_interval.mul_f64(jitter)).await;
    }
    pending.settle(out.status());
    let traced = || Traced {
        key: b.batch.rows().next().map_or(&[][..], |(k, _)| k),
        keynum: b.batch_keynums.first().copied(),
        first,
        arg: b.batch.len() as u64,
    };
    rec.record_op(
        OpKind::BatchInsert,
        &out,
        Origin::of(intended, first),
        (start, end),
        traced,
    )
}

/// A stamp for the start of a call of `_s`'s, lent to the call when its
/// session starts from it ([`Session::TAKES_CALL_START`]): a clock read
/// fewer per call for sessions with a time limit.
#[inline(always)]
fn call_stamp<S: Session>(rec: &Recording<'_>, _s: &S) -> u64 {
    let t = rec.stamp();
    if S::TAKES_CALL_START {
        rec.clock.lend(t);
    }
    t
}

/// Whether a failed run-phase operation is worth retrying under `retry.limit`:
/// the database asked for it (conflict) or could not answer (timeout, unavailable).
pub(super) fn retryable(status: Status) -> bool {
    matches!(
        status,
        Status::Conflict | Status::Timeout | Status::Unavailable
    )
}

/// Wait before retry `attempt` (1-based): `base` doubled per attempt up to 1 s
/// (never below `base`), times a deterministic 0.8-1.2 jitter.
pub(super) fn backoff(base: std::time::Duration, attempt: u32, salt: u64) -> std::time::Duration {
    let cap = base.max(std::time::Duration::from_secs(1));
    let exp = base.saturating_mul(1u32 << (attempt - 1).min(20)).min(cap);
    let jitter = 0.8 + 0.4 * (fnvhash64(salt ^ attempt as u64) % 1000) as f64 / 1000.0;
    exp.mul_f64(jitter)
}

/// Runs `$call` (a future expression, re-evaluated per attempt) into `$out`
/// until it succeeds, fails for good, or `retry.limit` retries are spent.
/// Evaluates to (first attempt's start, last attempt's start, last attempt's
/// end): response time covers every attempt, service time the last one. The
/// caller declares `$out`, so the outcome stays where the call put it (moved
/// out of the loop with the stamps, it cost a stalled copy per operation).
macro_rules! with_retries {
    ($rec:expr, $s:expr, $kind:expr, $cfg:expr, $salt:expr, $out:ident = $call:expr) => {
        with_retries!($rec, $s, $kind, $cfg, $salt, $out = $call, |_| ())
    };
    ($rec:expr, $s:expr, $kind:expr, $cfg:expr, $salt:expr, $out:ident = $call:expr, $retried:expr) => {{
        // the first attempt before the retry loop: only its start stamp is
        // kept across its wait, where the loop's attempt count and first
        // stamp were each a line of the slot's state to fetch
        let first = call_stamp($rec, &*$s);
        $out = $call.await;
        let (mut start, mut end) = (first, $rec.stamp());
        let mut attempt = 0u32;
        while retryable($out.status()) && attempt < $cfg.retry_limit && !$rec.stopped() {
            #[allow(clippy::redundant_closure_call)]
            ($retried)($out.status());
            attempt += 1;
            $rec.retry($kind);
            tokio::time::sleep(backoff($cfg.retry_backoff, attempt, $salt)).await;
            start = call_stamp($rec, &*$s);
            $out = $call.await;
            end = $rec.stamp();
        }
        (first, start, end)
    }};
}

/// A read of `$b.key` with its retries into `$out` (declared by the caller,
/// as [`with_retries!`] wants), marked `verify_failed` when `dataintegrity`
/// is on and the value differs from YCSB's; evaluates to its stamps.
macro_rules! verified_read {
    ($rec:expr, $c:expr, $salt:expr, $s:expr, $b:expr, $stream:expr, $shared:expr, $fields:expr, $out:ident) => {{
        let stamps = with_retries!(
            $rec,
            $s,
            OpKind::Read,
            $c,
            $salt,
            $out = {
                $b.record.clear();
                $s.read(&$b.key, $fields, &mut $b.record)
            }
        );
        if $out.status().is_ok()
            && $c.data_integrity
            && !$stream.verify($shared, &$b.key, $fields, &$b.record)
        {
            $out.set_status(Status::VerifyFailed);
        }
        stamps
    }};
}

/// An update of `$b.key` with fresh values for `$fields`, with its retries,
/// into `$out` (declared by the caller); evaluates to its stamps.
macro_rules! update_with_values {
    ($rec:expr, $c:expr, $salt:expr, $s:expr, $b:expr, $stream:expr, $shared:expr, $fields:expr, $out:ident) => {{
        $stream.values($shared, &$b.key, $fields, &mut $b.values);
        with_retries!(
            $rec,
            $s,
            OpKind::Update,
            $c,
            $salt,
            $out = $s.update(&$b.key, &$b.values)
        )
    }};
}

/// A slot's steps, each the next operation or the load's next batch, while
/// `go_on` accepts them: the step it refused, or `None` once the load's keys
/// are exhausted. The first is intended at `intended` (the open loop's one
/// step at a time); closed-loop steps have none. The steps are one loop in
/// one future: a future per operation cost its building, a call to poll
/// it and its drop glue (802 -> 708 instructions a null:// workload C
/// operation, the body's prologue included). A function returning an `async
/// move` block rather than an `async fn`: an `async fn` rebinds every
/// argument at its first poll (a copy of each into the future's own state,
/// which stalled the core on the caller's narrower stores); the block uses
/// the captured arguments in place.
#[allow(clippy::manual_async_fn)]
pub(super) fn steps<'s, 'l, 'r, 'rr, B: Binding, G: FnMut(&Stepped) -> bool>(
    y: &'s Ycsb<B>,
    slot: &'l mut YcsbSlot<B::Session>,
    mut intended: Option<Instant>,
    rec: &'r Recording<'rr>,
    mut go_on: G,
) -> impl std::future::Future<Output = Option<Stepped>> + use<'s, 'l, 'r, 'rr, B, G> {
    async move {
        let shared = &*y.shared;
        let phase = y.phase;
        let YcsbSlot {
            session: s,
            stream,
            b,
        } = slot;
        loop {
            let done = if phase == Phase::Load && shared.config.batch_size > 1 {
                load_batch(s, stream, b, shared, intended, rec).await?
            } else {
                let op = match phase {
                    Phase::Load => stream.next_load_op(shared)?,
                    Phase::Run => stream.next_run_op(shared),
                };
                stream.key_to(shared, op.keynum, &mut b.key);
                let c = &shared.config;
                let origin = |start: u64| Origin::of(intended, start);
                let salt = op.keynum;
                let num = Some(instance_key(c, op.keynum));
                let end = match op.kind {
                    OpKind::Read => {
                        let mut out;
                        let (first, start, end) =
                            verified_read!(rec, c, salt, s, b, stream, shared, op.fields, out);
                        let traced = || Traced {
                            key: &b.key,
                            keynum: num,
                            first,
                            arg: Traced::fields(op.fields),
                        };
                        let end =
                            rec.record_op(OpKind::Read, &out, origin(first), (start, end), traced);
                        s.release(&mut b.record);
                        end
                    }
                    OpKind::Scan => {
                        let mut out;
                        let (first, start, end) = with_retries!(
                            rec,
                            s,
                            OpKind::Scan,
                            c,
                            salt,
                            out = {
                                b.scan.clear();
                                s.scan(&b.key, op.scan_length, op.fields, &mut b.scan)
                            }
                        );
                        let traced = || Traced {
                            key: &b.key,
                            keynum: num,
                            first,
                            arg: op.scan_length,
                        };
                        rec.record_op(OpKind::Scan, &out, origin(first), (start, end), traced)
                    }
                    OpKind::Update => {
                        let mut out;
                        let (first, start, end) =
                            update_with_values!(rec, c, salt, s, b, stream, shared, op.fields, out);
                        let traced = || Traced {
                            key: &b.key,
                            keynum: num,
                            first,
                            arg: Traced::fields(op.fields),
                        };
                        rec.record_op(OpKind::Update, &out, origin(first), (start, end), traced)
                    }
                    OpKind::Delete => {
                        let mut out;
                        let (first, start, end) =
                            with_retries!(rec, s, OpKind::Delete, c, salt, out = s.delete(&b.key));
                        let traced = || Traced {
                            key: &b.key,
                            keynum: num,
                            first,
                            arg: 0,
                        };
                        rec.record_op(OpKind::Delete, &out, origin(first), (start, end), traced)
                    }
                    OpKind::Insert if phase == Phase::Run => {
                        stream.values(shared, &b.key, Fields::All, &mut b.values);
                        let keynum = [instance_key(c, op.keynum)];
                        let mut pending = Pending::new(&shared.ledger, &keynum);
                        let mut out;
                        let (first, start, end) = with_retries!(
                            rec,
                            s,
                            OpKind::Insert,
                            c,
                            salt,
                            out = s.insert(&b.key, &b.values),
                            |st| pending.attempt(st)
                        );
                        pending.settle(out.status());
                        let traced = || Traced {
                            key: &b.key,
                            keynum: num,
                            first,
                            arg: 0,
                        };
                        let done = rec.record_op(
                            OpKind::Insert,
                            &out,
                            origin(first),
                            (start, end),
                            traced,
                        );
                        if let Err(e) = shared.inserts.acknowledge(op.keynum) {
                            rec.message(OpKind::Insert, Status::Error, &e.to_string());
                        }
                        done
                    }
                    OpKind::NewOrder
                    | OpKind::Payment
                    | OpKind::OrderStatus
                    | OpKind::Delivery
                    | OpKind::StockLevel => {
                        unreachable!("the YCSB stream plans YCSB operations only")
                    }
                    OpKind::Insert | OpKind::BatchInsert => {
                        // the load phase follows YCSB's insertion retry properties
                        stream.values(shared, &b.key, Fields::All, &mut b.values);
                        let first = rec.stamp();
                        let mut attempt = 0u32;
                        let (mut out, mut start, mut end);
                        let keynum = [op.keynum];
                        let mut pending = Pending::new(&shared.ledger, &keynum);
                        loop {
                            (out, start, end) = timed!(rec, s, s.insert(&b.key, &b.values));
                            let retryable =
                                !matches!(out.status(), Status::Ok | Status::DuplicateKey);
                            if !retryable || attempt >= c.insertion_retry_limit || rec.stopped() {
                                break;
                            }
                            pending.attempt(out.status());
                            attempt += 1;
                            rec.retry(OpKind::Insert);
                            // YCSB waits 0.8 to 1.2 times the retry interval.
                            let jitter = 0.8
                                + 0.4 * (fnvhash64(op.keynum ^ attempt as u64) % 1000) as f64
                                    / 1000.0;
                            tokio::time::sleep(c.insertion_retry_interval.mul_f64(jitter)).await;
                        }
                        pending.settle(out.status());
                        // Response time covers every attempt; service time the last one.
                        let traced = || Traced {
                            key: &b.key,
                            keynum: num,
                            first,
                            arg: 0,
                        };
                        rec.record_op(OpKind::Insert, &out, origin(first), (start, end), traced)
                    }
                    OpKind::ReadModifyWrite => {
                        let mut r;
                        let (first, start, read_end) =
                            verified_read!(rec, c, salt, s, b, stream, shared, op.fields, r);
                        rec.record(OpKind::Read, &r, origin(first), start, read_end);
                        s.release(&mut b.record);
                        let mut u;
                        let (ufirst, ustart, end) =
                            update_with_values!(rec, c, salt, s, b, stream, shared, op.write, u);
                        rec.record(OpKind::Update, &u, Origin::Stamp(ufirst), ustart, end);
                        let overall = if !r.status().is_ok() { &r } else { &u };
                        let whole = Outcome::new(overall.status(), r.rows(), r.bytes() + u.bytes());
                        let traced = || Traced {
                            key: &b.key,
                            keynum: num,
                            first,
                            arg: Traced::fields(op.fields) | Traced::fields(op.write) << 32,
                        };
                        rec.record_op(
                            OpKind::ReadModifyWrite,
                            &whole,
                            origin(first),
                            (start, end),
                            traced,
                        )
                    }
                };
                Stepped { end, ops: 1 }
            };
            if !go_on(&done) {
                return Some(done);
            }
            intended = None;
        }
    }
}

/// The load's next batch of `db.batchsize` records; `None` once the load's
/// keys are exhausted.
async fn load_batch<S: Session>(
    s: &mut S,
    stream: &mut Stream,
    b: &mut Buffers,
    shared: &SharedState,
    intended: Option<Instant>,
    rec: &Recording<'_>,
) -> Option<Stepped> {
    b.batch.clear();
    b.batch_keynums.clear();
    while b.batch.len() < shared.config.batch_size {
        let Some(op) = stream.next_load_op(shared) else {
            break;
        };
        let (key, values) = b.batch.push();
        b.batch_keynums
            .push(instance_key(&shared.config, op.keynum));
        stream.key(shared, op.keynum, key);
        stream.values(shared, key, Fields::All, values);
    }
    if b.batch.is_empty() {
        return None;
    }
    let end = execute_batch(s, b, shared, intended, rec).await;
    Some(Stepped {
        end,
        ops: b.batch.len() as u64,
    })
}
