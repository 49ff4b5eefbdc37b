//! One operation stream per in-flight slot: its own RNG (derived from the run
//! seed and the slot's path) and generators, plus the state all slots of one
//! process share (the load counter and the acknowledged insert counter).
use super::ahead::{Fixed, KeysAhead};
use super::config::{CoreConfig, LengthDistribution, RequestDistribution};
use super::keys::{deterministic_value, KeyBuf, KeyDigits};
use super::ledger::InsertLedger;
use crate::binding::{Fields, Record, WriteSet};
use crate::generator::{
    fnvhash64_all, AcknowledgedCounter, Counter, Discrete, Exponential, Hotspot, LengthGenerator,
    ScrambledZipfian, Sequential, SkewedLatest, TextFiller, Uniform,
};
use crate::op::OpKind;
use crate::rng::{Filler, Rng};

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    Load,
    Run,
}

/// State shared by every slot of one process.
#[derive(Debug)]
pub struct SharedState {
    pub config: CoreConfig,
    /// Load phase: next record number to insert, up to `load_end`.
    pub load_counter: Counter,
    pub load_end: u64,
    /// Run phase: record numbers for inserts; reads stay at or below its limit.
    pub inserts: AcknowledgedCounter,
    pub sequential: Option<Sequential>,
    /// Inserts not acknowledged, for `yardstick verify`.
    pub ledger: InsertLedger,
}

impl SharedState {
    pub fn new(config: CoreConfig) -> Self {
        let load_end = config.insert_start + config.insert_count;
        let sequential =
            (config.request_distribution == RequestDistribution::Sequential).then(|| {
                Sequential::new(
                    config.insert_start,
                    load_end.max(config.insert_start + 1) - 1,
                )
            });
        SharedState {
            load_counter: Counter::new(config.insert_start),
            load_end,
            inserts: AcknowledgedCounter::new(config.record_count),
            sequential,
            ledger: InsertLedger::default(),
            config,
        }
    }

    /// The record numbers this process's inserts took, [first, end): the
    /// load's range as far as it got, or the run's new records (warm-up
    /// included). Numbers before the mapping of `--instance` (see [`instance_key`]).
    pub fn insert_range(&self, phase: Phase) -> (u64, u64) {
        match phase {
            Phase::Load => (
                self.config.insert_start,
                self.load_counter.peek().min(self.load_end),
            ),
            Phase::Run => (self.config.record_count, self.inserts.issued()),
        }
    }
}

/// The path of the keys' own generator under a slot's seed.
const KEYS_SEED: u64 = 0x6b65_7973; // "keys"
/// The path of the seeds of the fillers the slot's write sets own.
const OWED_SEED: u64 = 0x6f77_6564; // "owed"

#[derive(Debug, Clone)]
enum KeyChooser {
    /// Uniform, Zipfian and hotspot keys, drawn ahead.
    Ahead(Box<KeysAhead>),
    Latest(Box<SkewedLatest>),
    Sequential,
    Exponential(Box<Exponential>),
}

/// The next operation of a stream, before its key and values are built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlannedOp {
    pub kind: OpKind,
    pub keynum: u64,
    pub scan_length: u64,
    /// Fields read (reads, scans, read-modify-writes) or written (updates).
    pub fields: Fields,
    /// Fields written by a read-modify-write, chosen independently (as YCSB does).
    pub write: Fields,
}

/// What every operation reads comes first, together in 48 bytes (the key
/// chooser is a tag and a pointer, its generators boxed): a thread's many
/// slots outgrow the L2 cache, and the fields a stream touches per
/// operation cost a miss per line they span (scattered by the compiler's
/// order they spanned up to four; forcing 64-byte alignment saved as many
/// read misses but moved the session's fields and added as many write
/// misses, measured with cachegrind).
#[derive(Debug, Clone)]
#[repr(C)]
pub struct Stream {
    keys: KeyChooser,
    ops: Discrete<OpKind>,
    rng: Rng,
    field_length: LengthGenerator,
    scan_length: LengthGenerator,
    field_chooser: Uniform,
    filler: Filler,
    /// Review-like text instead of random bytes (`valuegenerator=text`).
    text: Option<Box<TextFiller>>,
    /// Scratch for deterministic values.
    scratch: Vec<u8>,
    /// Seeds the filler of each write set that owes this stream's random
    /// values (see [`WriteSet`]), one after another.
    owing: u64,
}

const _: () =
    assert!(std::mem::offset_of!(Stream, ops) + std::mem::size_of::<Discrete<OpKind>>() <= 64);

impl Stream {
    pub fn new(shared: &SharedState, seed: u64) -> Self {
        let c = &shared.config;
        let lo = c.insert_start;
        let hi = (c.insert_start + c.insert_count).max(lo + 1) - 1;
        let ahead = |dist| {
            KeyChooser::Ahead(Box::new(KeysAhead::new(
                dist,
                crate::rng::derive_seed(seed, &[KEYS_SEED]),
                c,
            )))
        };
        let keys = match c.request_distribution {
            RequestDistribution::Uniform => ahead(Fixed::Uniform(Uniform::new(lo, hi))),
            RequestDistribution::Zipfian { theta } => {
                // YCSB sizes the key space for the expected inserts (x2) so the
                // popular keys do not move as the table grows.
                let expected_new =
                    (c.operation_count as f64 * c.proportion(OpKind::Insert) * 2.0) as u64;
                ahead(Fixed::Zipfian(ScrambledZipfian::new(
                    lo,
                    lo + c.insert_count + expected_new,
                    theta,
                )))
            }
            RequestDistribution::Latest { growth } => KeyChooser::Latest(Box::new(
                SkewedLatest::new(c.record_count.saturating_sub(1), growth),
            )),
            RequestDistribution::Hotspot {
                data_fraction,
                opn_fraction,
            } => ahead(Fixed::Hotspot(Hotspot::new(
                lo,
                hi,
                data_fraction,
                opn_fraction,
            ))),
            RequestDistribution::Sequential => KeyChooser::Sequential,
            RequestDistribution::Exponential { percentile, frac } => KeyChooser::Exponential(
                Box::new(Exponential::new(percentile, c.record_count as f64 * frac)),
            ),
        };
        let field_length = match c.field_length_distribution {
            LengthDistribution::Constant => LengthGenerator::constant(c.field_length),
            LengthDistribution::Uniform => {
                LengthGenerator::uniform(c.min_field_length, c.field_length)
            }
            LengthDistribution::Zipfian => {
                LengthGenerator::zipfian(c.min_field_length, c.field_length)
            }
        };
        let scan_length = match c.scan_length_distribution {
            LengthDistribution::Zipfian => {
                LengthGenerator::zipfian(c.min_scan_length, c.max_scan_length)
            }
            _ => LengthGenerator::uniform(c.min_scan_length, c.max_scan_length),
        };
        let mut rng = Rng::new(seed);
        let filler = Filler::new(&mut rng);
        let text = c.text_values.then(|| Box::new(TextFiller::new(&mut rng)));
        Stream {
            rng,
            filler,
            text,
            ops: Discrete::new(&c.mix).expect("validated: some proportion is positive"),
            keys,
            field_length,
            scan_length,
            field_chooser: Uniform::new(0, c.field_count as u64 - 1),
            scratch: Vec::new(),
            owing: crate::rng::derive_seed(seed, &[OWED_SEED]),
        }
    }

    /// A record number at or below the acknowledged insert limit, drawn from the
    /// request distribution (YCSB's `nextKeynum`, redrawing keys not yet inserted).
    #[inline(always)]
    fn next_keynum(&mut self, shared: &SharedState) -> u64 {
        let limit = shared.inserts.limit();
        if limit < 0 {
            return 0;
        }
        let limit = limit as u64;
        loop {
            let k = match &mut self.keys {
                KeyChooser::Ahead(a) => return a.next(&shared.config, limit),
                KeyChooser::Latest(g) => return g.next(&mut self.rng, limit),
                KeyChooser::Sequential => match &shared.sequential {
                    Some(s) => s.next(),
                    None => 0,
                },
                KeyChooser::Exponential(g) => {
                    let back = g.next(&mut self.rng);
                    if back <= limit {
                        return limit - back;
                    }
                    continue;
                }
            };
            if k <= limit {
                return k;
            }
        }
    }

    #[inline]
    fn field_selection(&mut self, all: bool) -> Fields {
        if all {
            Fields::All
        } else {
            Fields::One(self.field_chooser.next(&mut self.rng) as usize)
        }
    }

    /// Plans the next run-phase operation. Inserts take their record number from
    /// the shared acknowledged counter; the caller acknowledges it when done.
    /// Inlined into the operation's loop, with the key's drawing: the calls'
    /// prologues and the plan's stores and loads went (together with
    /// `with_digits`, 677 -> 664 instructions a null:// workload C operation).
    #[inline(always)]
    pub fn next_run_op(&mut self, shared: &SharedState) -> PlannedOp {
        let kind = self.ops.next(&mut self.rng);
        let c = &shared.config;
        if matches!(kind, OpKind::Insert | OpKind::BatchInsert) {
            // the run mix has no batch inserts; they exist only in the load phase
            return PlannedOp {
                kind: OpKind::Insert,
                keynum: shared.inserts.next(),
                scan_length: 0,
                fields: Fields::All,
                write: Fields::All,
            };
        }
        // every other kind draws its key first, as YCSB does: one call site,
        // so the key's drawing is inlined here
        let keynum = self.next_keynum(shared);
        let (scan_length, fields, write) = match kind {
            OpKind::Scan => {
                let scan_length = self.scan_length.next(&mut self.rng);
                let fields = self.field_selection(c.read_all_fields);
                (scan_length, fields, fields)
            }
            OpKind::Read | OpKind::ReadModifyWrite => {
                let fields = self.field_selection(c.read_all_fields);
                let write = if kind == OpKind::ReadModifyWrite {
                    self.field_selection(c.write_all_fields)
                } else {
                    fields
                };
                (0, fields, write)
            }
            OpKind::Update | OpKind::Delete => {
                let fields = self.field_selection(c.write_all_fields);
                (0, fields, fields)
            }
            OpKind::Insert
            | OpKind::BatchInsert
            | OpKind::NewOrder
            | OpKind::Payment
            | OpKind::OrderStatus
            | OpKind::Delivery
            | OpKind::StockLevel => {
                unreachable!("CoreConfig builds the mix from YCSB's proportions only")
            }
        };
        PlannedOp {
            kind,
            keynum,
            scan_length,
            fields,
            write,
        }
    }

    /// Plans the next load-phase insert, or `None` when the load range is done.
    #[inline]
    pub(crate) fn next_load_op(&mut self, shared: &SharedState) -> Option<PlannedOp> {
        let keynum = shared.load_counter.next_below(shared.load_end)?;
        Some(PlannedOp {
            kind: OpKind::Insert,
            keynum,
            scan_length: 0,
            fields: Fields::All,
            write: Fields::All,
        })
    }

    #[inline]
    pub fn key(&self, shared: &SharedState, keynum: u64, buf: &mut Vec<u8>) {
        let pad = shared.config.zero_padding;
        self.with_digits(shared, keynum, |d| d.write_key(pad, buf));
    }

    /// [`Self::key`] into an operation's key buffer.
    #[inline(always)]
    pub fn key_to(&self, shared: &SharedState, keynum: u64, key: &mut KeyBuf) {
        let pad = shared.config.zero_padding;
        self.with_digits(shared, keynum, |d| key.set(d, pad));
    }

    /// `f` of the digits of record `keynum`'s key: drawn ahead with it
    /// (handed over where they are, not copied out first), or now.
    #[inline(always)]
    fn with_digits<R>(
        &self,
        shared: &SharedState,
        keynum: u64,
        f: impl FnOnce(&KeyDigits) -> R,
    ) -> R {
        if let KeyChooser::Ahead(a) = &self.keys {
            if let Some(d) = a.digits_of(keynum) {
                return f(d);
            }
        }
        f(&KeyDigits::of_number(key_number(&shared.config, keynum)))
    }

    /// Fills `out` with values for `fields` of record `key`: random printable
    /// bytes, or YCSB's deterministic values when `dataintegrity` is on.
    /// For writes, `Fields::One` picks the field already chosen by the plan.
    #[inline]
    pub fn values(&mut self, shared: &SharedState, key: &[u8], fields: Fields, out: &mut WriteSet) {
        out.clear();
        let c = &shared.config;
        let one = |this: &mut Self, i: usize, out: &mut WriteSet| {
            let len = this.field_length.next(&mut this.rng) as usize;
            let buf = out.push_reuse(i);
            if c.data_integrity {
                deterministic_value(key, &field_name(c, i), len, buf);
            } else {
                buf.resize(len, 0); // a no-op when the length is unchanged
                match &mut this.text {
                    Some(text) => text.fill(buf),
                    None => this.filler.fill(buf),
                }
            }
        };
        match fields {
            // random bytes for every field: the lengths first (drawn in the
            // same order), then one fill of every buffer, the same bytes
            // as a fill per field; or, for a set that may owe them, made
            // at their first use by the set's own filler (where a binding
            // sends them, or in the set)
            Fields::All if !c.data_integrity && self.text.is_none() => {
                for i in 0..c.field_count {
                    let len = self.field_length.next(&mut self.rng) as usize;
                    out.push_reuse(i).resize(len, 0); // a no-op when the length is unchanged
                }
                if out.may_owe() {
                    let owing = &mut self.owing;
                    out.owe(|| Filler::new(&mut Rng::new(crate::rng::splitmix64(owing))));
                } else {
                    self.filler.fill_all(out.values_mut());
                }
            }
            Fields::All => {
                for i in 0..c.field_count {
                    one(self, i, out);
                }
            }
            Fields::One(i) => one(self, i, out),
        }
    }

    /// With `dataintegrity`, checks every field read against the value YCSB's
    /// rules say was written. Returns false on a mismatch or a missing field.
    pub fn verify(
        &mut self,
        shared: &SharedState,
        key: &[u8],
        fields: Fields,
        rec: &Record,
    ) -> bool {
        let c = &shared.config;
        let check = |this: &mut Self, i: usize| -> bool {
            deterministic_value(
                key,
                &field_name(c, i),
                c.field_length as usize,
                &mut this.scratch,
            );
            rec.get(i) == Some(this.scratch.as_slice())
        };
        match fields {
            Fields::All => (0..c.field_count).all(|i| check(self, i)),
            Fields::One(i) => check(self, i),
        }
    }
}

/// The key number of this process's record `keynum`: past recordcount (the
/// records a run inserts), instance i of n owns every n-th number, so the
/// instances of one run insert disjoint keys; reads and updates of new records
/// reach only the ones this instance inserted and saw acknowledged.
#[inline(always)]
pub fn instance_key(c: &CoreConfig, keynum: u64) -> u64 {
    let (i, n) = c.instance;
    if n > 1 && keynum >= c.record_count {
        c.record_count + (keynum - c.record_count) * n + i
    } else {
        keynum
    }
}

/// The number record `keynum`'s key prints: this instance's number, hashed
/// unless inserts are ordered. Keys drawn ahead and keys built at use both
/// come from here.
#[inline]
pub(super) fn key_number(c: &CoreConfig, keynum: u64) -> u64 {
    let mut n = [keynum];
    key_numbers(c, &mut n);
    n[0]
}

/// [`key_number`] of every record number in place, in stages (the hashes'
/// chains of multiplications side by side).
#[inline(always)]
pub(super) fn key_numbers<const N: usize>(c: &CoreConfig, nums: &mut [u64; N]) {
    nums.iter_mut().for_each(|n| *n = instance_key(c, *n));
    if !c.ordered_inserts {
        fnvhash64_all(nums);
    }
}

fn field_name(c: &CoreConfig, i: usize) -> String {
    format!("{}{}", c.field_name_prefix, i)
}

#[cfg(test)]
mod tests;
