//! YCSB's core workload as the runner's [`Work`]: each slot has a session of
//! the binding and its own operation stream; a step is one operation, or one
//! multi-record insert when the load batches (`db.batchsize` > 1).
mod execute;

use super::record::Recording;
use super::work::{SlotId, Stepped, Work};
use crate::binding::{Batch, Binding, BindingError, Record, ScanRows, WriteSet};
use crate::workload::keys::KeyBuf;
use crate::workload::{Phase, SharedState, Stream};
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
    key: KeyBuf,
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
                key: KeyBuf::default(),
                values: WriteSet::for_session::<B::Session>(),
                record: Record::with_fields(fields),
                scan: ScanRows::with_fields(fields),
                batch: Batch::default(),
                batch_keynums: Vec::new(),
            },
        })
    }

    #[inline]
    fn step(
        &self,
        slot: &mut Self::Slot,
        intended: Option<Instant>,
        rec: &Recording<'_>,
    ) -> impl std::future::Future<Output = Option<Stepped>> {
        execute::steps(self, slot, intended, rec, |_| false)
    }

    #[inline]
    fn steps(
        &self,
        slot: &mut Self::Slot,
        rec: &Recording<'_>,
        go_on: impl FnMut(&Stepped) -> bool,
    ) -> impl std::future::Future<Output = Option<Stepped>> {
        execute::steps(self, slot, None, rec, go_on)
    }
}

#[cfg(test)]
mod fake_binding_tests;
