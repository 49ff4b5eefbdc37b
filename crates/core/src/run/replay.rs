//! Replaying a trace as the runner's [`Work`]: the runner paces operation i
//! of the trace at its own time (a timetable, open loop), and slot j of S
//! carries out operations j, j+S, ... as YCSB's operations on the binding,
//! writing values of the configured shape.
use super::record::{Origin, Recording, Traced};
use super::work::{SlotId, Stepped, Work};
use crate::binding::{Binding, BindingError, Fields, Outcome, Record, ScanRows, Session, WriteSet};
use crate::op::OpKind;
use crate::trace::TraceOp;
use crate::workload::{SharedState, Stream};
use std::sync::Arc;
use std::time::Instant;

/// The operations of a trace against `binding`.
pub struct Replay<B: Binding> {
    pub binding: Arc<B>,
    /// The operations in the order of their times (the timetable's order).
    pub ops: Arc<[TraceOp]>,
    /// Values of writes: YCSB's deterministic values of the configured shape.
    pub shared: Arc<SharedState>,
    /// threads x concurrency: a slot's stride through `ops`.
    pub slots: u64,
}

pub struct ReplaySlot<S> {
    session: S,
    stream: Stream,
    next: u64,
    values: WriteSet,
    record: Record,
    scan: ScanRows,
}

/// A trace's `arg` as a choice among `n` fields (a field beyond them: all).
fn fields(arg: u64, n: usize) -> Fields {
    match arg {
        0 => Fields::All,
        i if (i as usize) <= n => Fields::One(i as usize - 1),
        _ => Fields::All,
    }
}

impl<B: Binding> Work for Replay<B> {
    type Slot = ReplaySlot<B::Session>;

    async fn open(&self, slot: SlotId) -> Result<Self::Slot, BindingError> {
        let n = self.shared.config.field_count;
        Ok(ReplaySlot {
            session: self.binding.session().await?,
            stream: Stream::new(&self.shared, slot.seed),
            next: slot.index,
            values: WriteSet::for_session::<B::Session>(),
            record: Record::with_fields(n),
            scan: ScanRows::with_fields(n),
        })
    }

    async fn step(
        &self,
        slot: &mut Self::Slot,
        intended: Option<Instant>,
        rec: &Recording<'_>,
    ) -> Option<Stepped> {
        let op = self.ops.get(usize::try_from(slot.next).ok()?)?;
        slot.next += self.slots;
        let (shared, n) = (&*self.shared, self.shared.config.field_count);
        let ReplaySlot {
            session: s,
            stream,
            values,
            record,
            scan,
            ..
        } = slot;
        let key = &op.key[..];
        let first = rec.stamp();
        let (out, start, end) = match op.op {
            OpKind::Read => {
                record.clear();
                rec.timed(s.read(key, fields(op.arg, n), record)).await
            }
            OpKind::Scan => {
                scan.clear();
                rec.timed(s.scan(key, op.arg.max(1), Fields::All, scan))
                    .await
            }
            OpKind::Update => {
                stream.values(shared, key, fields(op.arg, n), values);
                rec.timed(s.update(key, values)).await
            }
            OpKind::Insert => {
                stream.values(shared, key, Fields::All, values);
                rec.timed(s.insert(key, values)).await
            }
            OpKind::Delete => rec.timed(s.delete(key)).await,
            OpKind::ReadModifyWrite => {
                record.clear();
                let (r, _, _) = rec
                    .timed(s.read(key, fields(op.arg & 0xffff_ffff, n), record))
                    .await;
                stream.values(shared, key, fields(op.arg >> 32, n), values);
                let (u, _, end) = rec.timed(s.update(key, values)).await;
                let overall = if r.status().is_ok() { u } else { r };
                (overall, first, end)
            }
            // refused when the trace is read: nothing to replay them as
            _ => (Outcome::ok(0, 0), first, first),
        };
        let traced = || Traced {
            key,
            keynum: None,
            first,
            arg: op.arg,
        };
        let end = rec.record_op(
            op.op,
            &out,
            Origin::of(intended, first),
            (start, end),
            traced,
        );
        Some(Stepped { end, ops: 1 })
    }
}

/// Why a trace cannot be replayed as it is.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ReplayError {
    #[error("it holds TPC-C transactions ({0}); replay plays YCSB's operations only")]
    Tpcc(&'static str),
    #[error("it holds no operation to replay")]
    Empty,
    #[error("the speed must be a positive number (2 plays twice as fast)")]
    Speed,
}

/// What replay plays: the operations in time order and when.
#[derive(Debug, Clone)]
pub struct Timetable {
    pub ops: Vec<TraceOp>,
    /// Operation i's offset from the first, ns, at the chosen speed.
    pub at: Arc<[u64]>,
    /// Batch inserts left out (a key each, not their records).
    pub batches: u64,
}

/// The operations of `ops` replay can carry out, in time order, and their
/// timetable at `speed`.
pub fn timetable(mut ops: Vec<TraceOp>, speed: f64) -> Result<Timetable, ReplayError> {
    if !(speed.is_finite() && speed > 0.0) {
        return Err(ReplayError::Speed);
    }
    if let Some(t) = ops.iter().find(|o| o.op.is_tpcc()) {
        return Err(ReplayError::Tpcc(t.op.name()));
    }
    let before = ops.len();
    ops.retain(|o| o.op != OpKind::BatchInsert);
    let batches = (before - ops.len()) as u64;
    ops.sort_by_key(TraceOp::at_ns);
    let zero = ops.first().ok_or(ReplayError::Empty)?.at_ns();
    let table = ops
        .iter()
        .map(|o| ((o.at_ns() - zero) as f64 / speed) as u64)
        .collect();
    Ok(Timetable {
        ops,
        at: table,
        batches,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::binding::Status;

    fn op(kind: OpKind, at: u64) -> TraceOp {
        TraceOp {
            op: kind,
            status: Status::Ok,
            start_ns: at + 7,
            intended_ns: Some(at),
            latency_ns: 10,
            arg: 0,
            key: b"k".to_vec(),
        }
    }

    #[test]
    fn the_timetable_starts_at_zero_and_scales_with_speed() {
        let ops = vec![
            op(OpKind::Update, 3_000),
            op(OpKind::Read, 1_000),
            op(OpKind::BatchInsert, 1_500),
        ];
        let t = timetable(ops, 2.0).unwrap();
        assert_eq!(t.batches, 1);
        assert_eq!(t.ops[0].op, OpKind::Read);
        assert_eq!(&t.at[..], &[0, 1_000]);
        assert_eq!(
            timetable(vec![op(OpKind::NewOrder, 1)], 1.0).unwrap_err(),
            ReplayError::Tpcc("NEW-ORDER")
        );
        assert_eq!(timetable(vec![], 1.0).unwrap_err(), ReplayError::Empty);
        assert_eq!(
            timetable(vec![op(OpKind::Read, 1)], 0.0).unwrap_err(),
            ReplayError::Speed
        );
        assert_eq!(fields(0, 10), Fields::All);
        assert_eq!(fields(3, 10), Fields::One(2));
        assert_eq!(fields(11, 10), Fields::All);
    }
}
