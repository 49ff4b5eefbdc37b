//! Reading back every insert of one or more YCSB phases (`yardstick verify`,
//! `--verify`): each key a phase took is read once and judged against what
//! the database answered when it was written. A [`Work`], so the read-back
//! gets the runner's threads, slots, timeouts and status line.
//!
//! What is checked: acknowledged inserts must be present (absent: lost) and,
//! when the phase wrote YCSB's deterministic values (`dataintegrity=true`),
//! hold them; refused inserts must be absent; unanswered ones are counted
//! either way. Updates are not checked for loss: with dataintegrity an
//! update writes the value the insert wrote, so a lost update looks like a
//! kept one, and without it the value is random.
use super::record::{Origin, Recording};
use super::work::{SlotId, Stepped, Work};
use crate::binding::{Binding, BindingError, Fields, Record, Session, Status};
use crate::op::OpKind;
use crate::result::inserts::{Inserts, Verification};
use crate::workload::stream::instance_key;
use crate::workload::{CoreConfig, Fate, Phase, SharedState, Stream};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// The keys of one phase to read back.
pub struct Segment {
    /// Builds the phase's keys and values.
    pub state: Arc<SharedState>,
    /// Record numbers [first, end) before the mapping of `--instance`.
    pub first: u64,
    pub end: u64,
    /// Unacknowledged inserts by key number (after the mapping).
    pub fates: HashMap<u64, Fate>,
}

impl Segment {
    /// The inserts `state` made in `phase` (after it ran in this process).
    pub fn of(state: Arc<SharedState>, phase: Phase) -> Self {
        let (first, end) = state.insert_range(phase);
        let fates = state.ledger.keys().0.into_iter().collect();
        Segment {
            state,
            first,
            end,
            fates,
        }
    }

    /// The inserts a result recorded: its configuration, its range and the
    /// keys of its side file.
    pub fn from_record(config: CoreConfig, inserts: &Inserts, keys: Vec<(u64, Fate)>) -> Self {
        Segment {
            state: Arc::new(SharedState::new(config)),
            first: inserts.first,
            end: inserts.end,
            fates: keys.into_iter().collect(),
        }
    }

    fn len(&self) -> u64 {
        self.end.saturating_sub(self.first)
    }
}

/// Why segments cannot be verified together.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum PlanError {
    #[error("phases {0} and {1} took the same record numbers: verify one of them")]
    Overlap(usize, usize),
    #[error(
        "phase {0} has another table layout (table or fields) than phase 1: verify them apart"
    )]
    Layout(usize),
    #[error("nothing to verify: the phases inserted no records")]
    Empty,
}

/// Segments that can be read back together: no key in two of them, one
/// table layout.
pub struct Plan {
    segments: Vec<Segment>,
    /// Where each segment's keys start in the sequence of all keys.
    starts: Vec<u64>,
    total: u64,
    values: bool,
}

/// Reads back every key of its plan.
pub struct Verify<B: Binding> {
    binding: Arc<B>,
    plan: Plan,
    cursor: AtomicU64,
    tally: Tally,
}

#[derive(Default)]
struct Tally {
    counts: [AtomicU64; 8],
    examples: Mutex<Vec<String>>,
}

/// The findings, indices into `Tally::counts`.
#[derive(Clone, Copy)]
enum Finding {
    Kept,
    Lost,
    Differing,
    FailedPresent,
    FailedAbsent,
    UnknownPresent,
    UnknownAbsent,
    Unreadable,
}

impl Finding {
    /// Worth naming a key for.
    fn example(self) -> Option<&'static str> {
        match self {
            Finding::Lost => Some("lost"),
            Finding::Differing => Some("differing"),
            Finding::FailedPresent => Some("failed but present"),
            Finding::Unreadable => Some("unreadable"),
            _ => None,
        }
    }
}

impl Plan {
    /// Checks that the segments do not overlap and share one table layout.
    pub fn new(segments: Vec<Segment>) -> Result<Self, PlanError> {
        let ranges: Vec<(u64, u64, &CoreConfig)> = segments
            .iter()
            .map(|s| {
                let c = &s.state.config;
                let lo = instance_key(c, s.first);
                let hi = instance_key(c, s.end.max(s.first + 1) - 1);
                (lo, hi, c)
            })
            .collect();
        for (i, a) in ranges.iter().enumerate() {
            if a.2.schema() != ranges[0].2.schema() {
                return Err(PlanError::Layout(i + 1));
            }
            for (j, b) in ranges.iter().enumerate().skip(i + 1) {
                let both = segments[i].len() > 0 && segments[j].len() > 0;
                let interleaved = a.2.instance.1 > 1 || b.2.instance.1 > 1;
                if both
                    && a.0 <= b.1
                    && b.0 <= a.1
                    && !(interleaved && a.2.instance != b.2.instance)
                {
                    return Err(PlanError::Overlap(i + 1, j + 1));
                }
            }
        }
        let mut starts = Vec::with_capacity(segments.len());
        let mut total = 0;
        for s in &segments {
            starts.push(total);
            total += s.len();
        }
        if total == 0 {
            return Err(PlanError::Empty);
        }
        let values = segments.iter().all(|s| s.state.config.data_integrity);
        Ok(Plan {
            segments,
            starts,
            total,
            values,
        })
    }

    /// Keys to read.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// The configuration of the first segment: its table layout is every segment's.
    pub fn config(&self) -> &CoreConfig {
        &self.segments[0].state.config
    }
}

impl<B: Binding> Verify<B> {
    pub fn new(binding: Arc<B>, plan: Plan) -> Self {
        Verify {
            binding,
            plan,
            cursor: AtomicU64::new(0),
            tally: Tally::default(),
        }
    }

    /// Keys to read.
    pub fn total(&self) -> u64 {
        self.plan.total
    }

    /// What was found so far (all of it once the run ended).
    pub fn findings(&self, seconds: f64) -> Verification {
        let n = |f: Finding| self.tally.counts[f as usize].load(Ordering::Relaxed);
        let all: u64 = self
            .tally
            .counts
            .iter()
            .map(|c| c.load(Ordering::Relaxed))
            .sum();
        let mut examples = self
            .tally
            .examples
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        examples.sort();
        Verification {
            checked: all,
            acknowledged_present: n(Finding::Kept),
            lost: n(Finding::Lost),
            differing: n(Finding::Differing),
            failed_present: n(Finding::FailedPresent),
            failed_absent: n(Finding::FailedAbsent),
            unknown_present: n(Finding::UnknownPresent),
            unknown_absent: n(Finding::UnknownAbsent),
            unreadable: n(Finding::Unreadable),
            values_checked: self.plan.values,
            examples,
            seconds,
        }
    }

    fn note(&self, finding: Finding, key: &[u8]) {
        let before = self.tally.counts[finding as usize].fetch_add(1, Ordering::Relaxed);
        if let Some(what) = finding.example().filter(|_| before < 20) {
            let mut ex = self
                .tally
                .examples
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            ex.push(format!("{what} {}", String::from_utf8_lossy(key)));
        }
    }
}

pub struct VerifySlot<S> {
    session: S,
    /// One per segment: its keys and values.
    streams: Vec<Stream>,
    key: Vec<u8>,
    record: Record,
}

impl<B: Binding> Work for Verify<B> {
    type Slot = VerifySlot<B::Session>;

    async fn open(&self, slot: SlotId) -> Result<Self::Slot, BindingError> {
        let fields = self.plan.config().field_count;
        Ok(VerifySlot {
            session: self.binding.session().await?,
            streams: self
                .plan
                .segments
                .iter()
                .map(|s| Stream::new(&s.state, slot.seed))
                .collect(),
            key: Vec::with_capacity(32),
            record: Record::with_fields(fields),
        })
    }

    async fn step(
        &self,
        slot: &mut Self::Slot,
        intended: Option<Instant>,
        rec: &Recording<'_>,
    ) -> Option<Stepped> {
        let i = self.cursor.fetch_add(1, Ordering::Relaxed);
        let plan = &self.plan;
        if i >= plan.total || rec.stopped() {
            return None;
        }
        let n = plan.starts.partition_point(|&s| s <= i) - 1;
        let seg = &plan.segments[n];
        let keynum = seg.first + (i - plan.starts[n]);
        let VerifySlot {
            session,
            streams,
            key,
            record,
        } = slot;
        streams[n].key(&seg.state, keynum, key);
        let first = rec.stamp();
        // a key the database did not answer for is asked again, twice
        let mut attempt = 0;
        let (out, start, end) = loop {
            let (out, start, end) = rec
                .timed(async {
                    record.clear();
                    session.read(key, Fields::All, record).await
                })
                .await;
            attempt += 1;
            if matches!(out.status(), Status::Ok | Status::NotFound)
                || attempt == 3
                || rec.stopped()
            {
                break (out, start, end);
            }
        };
        let fate = seg.fates.get(&instance_key(&seg.state.config, keynum));
        let finding = match (out.status(), fate) {
            (Status::Ok, None) => {
                if plan.values && !streams[n].verify(&seg.state, key, Fields::All, record) {
                    Finding::Differing
                } else {
                    Finding::Kept
                }
            }
            (Status::NotFound, None) => Finding::Lost,
            (Status::Ok, Some(Fate::Failed)) => Finding::FailedPresent,
            (Status::NotFound, Some(Fate::Failed)) => Finding::FailedAbsent,
            (Status::Ok, Some(Fate::Unknown)) => Finding::UnknownPresent,
            (Status::NotFound, Some(Fate::Unknown)) => Finding::UnknownAbsent,
            _ => Finding::Unreadable,
        };
        self.note(finding, key);
        let end = rec.record(OpKind::Read, &out, Origin::of(intended, first), start, end);
        Some(Stepped { end, ops: 1 })
    }
}

#[cfg(test)]
#[path = "verify_tests.rs"]
mod tests;
