//! YCSB's core workload as the runner's [`Work`]: each slot has a session of
//! the binding and its own operation stream; a step is one operation, or one
//! multi-record insert when the load batches (`db.batchsize` > 1).
mod execute;

use super::record::Recording;
use super::work::{SlotId, Stepped, Work};
use crate::binding::{Batch, Binding, BindingError, Fields, Record, ScanRows, WriteSet};
use crate::workload::stream::instance_key;
use crate::workload::{Phase, SharedState, Stream};
use execute::{execute, execute_batch};
use std::sync::Arc;
use std::time::Instant;

/// The core workload's `phase` against `binding`.
pub struct Ycsb<B: Binding> {
    pub binding: Arc<B>,
    pub shared: Arc<SharedState>,
    pub phase: Phase,
}

impl<B: Binding> Ycsb<B> {
    pub fn new(binding: Arc<B>, shared: Arc<SharedState>, phase: Phase) -> Self {
        Ycsb {
            binding,
            shared,
            phase,
        }
    }
}

/// Reused per slot so that an operation allocates nothing.
struct Buffers {
    key: Vec<u8>,
    values: WriteSet,
    record: Record,
    scan: ScanRows,
    batch: Batch,
    /// The record numbers of `batch`'s keys.
    batch_keynums: Vec<u64>,
}

pub struct YcsbSlot<S> {
    session: S,
    stream: Stream,
    b: Buffers,
}

impl<B: Binding> Work for Ycsb<B> {
    type Slot = YcsbSlot<B::Session>;

    async fn open(&self, slot: SlotId) -> Result<Self::Slot, BindingError> {
        let fields = self.shared.config.field_count;
        Ok(YcsbSlot {
            session: self.binding.session().await?,
            stream: Stream::new(&self.shared, slot.seed),
            b: Buffers {
                key: Vec::with_capacity(32),
                values: WriteSet::default(),
                record: Record::with_fields(fields),
                scan: ScanRows::with_fields(fields),
                batch: Batch::default(),
                batch_keynums: Vec::new(),
            },
        })
    }

    #[inline]
    async fn step(
        &self,
        slot: &mut Self::Slot,
        intended: Option<Instant>,
        rec: &Recording<'_>,
    ) -> Option<Stepped> {
        let shared = &*self.shared;
        let YcsbSlot { session, stream, b } = slot;
        if self.phase == Phase::Load && shared.config.batch_size > 1 {
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
            let end = execute_batch(session, b, shared, intended, rec).await;
            return Some(Stepped {
                end,
                ops: b.batch.len() as u64,
            });
        }
        let op = match self.phase {
            Phase::Load => stream.next_load_op(shared)?,
            Phase::Run => stream.next_run_op(shared),
        };
        let end = execute(session, stream, shared, self.phase, &op, intended, b, rec).await;
        Some(Stepped { end, ops: 1 })
    }
}

#[cfg(test)]
mod fake_binding_tests;
