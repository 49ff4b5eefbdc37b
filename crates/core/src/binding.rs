//! The contract between the harness and a database: a `Binding` is opened once
//! per run and hands out `Session`s, one per in-flight operation slot. Sessions
//! never time themselves: the runner measures around every call (YCSB's
//! `DBWrapper` idea), so every binding is measured the same way.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

mod outcome;
pub use outcome::Outcome;

/// Outcome class of one operation; results count operations per status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Ok,
    /// The key does not exist (a read, update or delete of a missing record).
    NotFound,
    /// An insert with `insert` semantics found the key already present.
    DuplicateKey,
    /// `dataintegrity` is on and the value read differs from the value written.
    VerifyFailed,
    /// A serialization failure or write conflict the database asked us to retry.
    Conflict,
    Timeout,
    /// The server is unreachable or refused the connection.
    Unavailable,
    Error,
    /// A transaction the workload itself rolls back (TPC-C New-Order's 1%
    /// with an unused item): complete, as the specification counts it.
    RolledBack,
}

impl Status {
    pub const ALL: [Status; 9] = [
        Status::Ok,
        Status::NotFound,
        Status::DuplicateKey,
        Status::VerifyFailed,
        Status::Conflict,
        Status::Timeout,
        Status::Unavailable,
        Status::Error,
        Status::RolledBack,
    ];

    pub fn index(self) -> usize {
        self as usize
    }

    pub fn is_ok(self) -> bool {
        self == Status::Ok
    }

    /// A failure of the database or the client, as opposed to a semantic outcome
    /// (`not_found`, `duplicate_key`) that a correct database also returns.
    pub(crate) fn is_error(self) -> bool {
        !matches!(
            self,
            Status::Ok | Status::NotFound | Status::DuplicateKey | Status::RolledBack
        )
    }

    /// The operation did what the workload asked: `ok`, or a rollback the
    /// workload asked for. Its latency goes to the response-time histogram.
    #[inline]
    pub(crate) fn completes(self) -> bool {
        matches!(self, Status::Ok | Status::RolledBack)
    }

    pub fn name(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::NotFound => "not_found",
            Status::DuplicateKey => "duplicate_key",
            Status::VerifyFailed => "verify_failed",
            Status::Conflict => "conflict",
            Status::Timeout => "timeout",
            Status::Unavailable => "unavailable",
            Status::Error => "error",
            Status::RolledBack => "rolled_back",
        }
    }
}

/// Which fields a read or scan returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fields {
    All,
    One(usize),
}

impl Fields {
    /// (column, field) pairs of a result row for this selection out of `total`
    /// fields: every field in order, or the one chosen field in column 0.
    pub fn columns(self, total: usize) -> impl Iterator<Item = (usize, usize)> {
        let n = match self {
            Fields::All => total,
            Fields::One(_) => 1,
        };
        (0..n).map(move |c| match self {
            Fields::All => (c, c),
            Fields::One(i) => (c, i),
        })
    }
}

/// What `insert` means: a plain INSERT that fails on an existing key, or a blind
/// write (UPSERT). Recorded in every result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InsertMode {
    Insert,
    Upsert,
}

/// What `update` means: UPDATE of an existing record (missing key = NotFound), or
/// a blind write (UPSERT). Recorded in every result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UpdateMode {
    Update,
    Upsert,
}

/// The table layout every binding stores: YCSB's `usertable` with a key and
/// `fieldcount` named fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schema {
    pub table: String,
    pub fields: Vec<String>,
}

/// Options a binding is opened with.
#[derive(Debug, Clone)]
pub struct OpenOptions {
    pub schema: Schema,
    pub insert_mode: InsertMode,
    pub update_mode: UpdateMode,
    /// Load phase: create the table when it is absent.
    pub create: bool,
    /// Sessions that will be opened (threads x concurrency), for pool sizing.
    pub sessions: usize,
    /// Reads will be verified against YCSB's deterministic values.
    pub data_integrity: bool,
    /// The run will issue scans; a binding that cannot scan refuses to open.
    pub scans: bool,
}

/// One record read back: a value slot per field of the schema, reused between
/// calls so reads do not allocate.
#[derive(Debug, Clone, Default)]
pub struct Record {
    values: Vec<Vec<u8>>,
    present: Vec<bool>,
    /// A field was set since the last clear: a read that found nothing
    /// (null://, a missing key) leaves nothing to clear.
    dirty: bool,
}

impl Record {
    pub fn with_fields(n: usize) -> Self {
        Record {
            values: vec![Vec::new(); n],
            present: vec![false; n],
            dirty: false,
        }
    }

    /// Forgets the values but keeps the buffers.
    #[inline]
    pub fn clear(&mut self) {
        if std::mem::take(&mut self.dirty) {
            self.present.iter_mut().for_each(|p| *p = false);
        }
    }

    /// Sets field `i` to `data`.
    #[inline]
    pub fn set(&mut self, i: usize, data: &[u8]) {
        if i >= self.values.len() {
            self.values.resize(i + 1, Vec::new());
            self.present.resize(i + 1, false);
        }
        let b = &mut self.values[i];
        b.clear();
        b.extend_from_slice(data);
        self.present[i] = true;
        self.dirty = true;
    }

    /// Sets field `i` to `data`, taking the buffer; gives back the one it
    /// replaces, emptied, for the caller to reuse (a read that owns its
    /// value already moves it in without a copy).
    #[inline]
    pub fn put(&mut self, i: usize, data: Vec<u8>) -> Vec<u8> {
        if i >= self.values.len() {
            self.values.resize(i + 1, Vec::new());
            self.present.resize(i + 1, false);
        }
        self.present[i] = true;
        self.dirty = true;
        let mut old = std::mem::replace(&mut self.values[i], data);
        old.clear();
        old
    }

    pub fn get(&self, i: usize) -> Option<&[u8]> {
        (*self.present.get(i)?).then(|| self.values[i].as_slice())
    }

    /// Fields present, with their index.
    pub fn present(&self) -> impl Iterator<Item = (usize, &[u8])> {
        self.values
            .iter()
            .zip(&self.present)
            .enumerate()
            .filter_map(|(i, (v, p))| p.then_some((i, v.as_slice())))
    }

    pub fn len(&self) -> usize {
        self.present.iter().filter(|p| **p).count()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn bytes(&self) -> u64 {
        self.present().map(|(_, d)| d.len() as u64).sum()
    }
}

/// Rows returned by a scan, in key order; buffers are reused between scans.
#[derive(Debug, Default)]
pub struct ScanRows {
    rows: Vec<(Vec<u8>, Record)>,
    len: usize,
    fields: usize,
}

impl ScanRows {
    pub fn with_fields(fields: usize) -> Self {
        ScanRows {
            rows: Vec::new(),
            len: 0,
            fields,
        }
    }

    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// Starts the next row with `key` and returns its record to fill.
    pub fn push(&mut self, key: &[u8]) -> &mut Record {
        if self.len == self.rows.len() {
            self.rows
                .push((Vec::new(), Record::with_fields(self.fields)));
        }
        let (k, rec) = &mut self.rows[self.len];
        k.clear();
        k.extend_from_slice(key);
        rec.clear();
        self.len += 1;
        rec
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn rows(&self) -> impl Iterator<Item = (&[u8], &Record)> {
        self.rows[..self.len].iter().map(|(k, r)| (k.as_slice(), r))
    }
}

/// Values to write: (field index, bytes) pairs, buffers reused between calls.
#[derive(Debug, Default, Clone)]
pub struct WriteSet {
    entries: Vec<(usize, Vec<u8>)>,
    len: usize,
}

impl WriteSet {
    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// Appends field `field` and returns its buffer, cleared, to fill.
    #[inline]
    pub fn push(&mut self, field: usize) -> &mut Vec<u8> {
        let buf = self.push_reuse(field);
        buf.clear();
        buf
    }

    /// Appends field `field` and returns its buffer with the previous call's
    /// contents: a caller that overwrites every byte resizes instead of
    /// clearing, so a value of unchanged length is not zeroed first.
    #[inline]
    pub(crate) fn push_reuse(&mut self, field: usize) -> &mut Vec<u8> {
        if self.len == self.entries.len() {
            self.entries.push((field, Vec::new()));
        }
        let e = &mut self.entries[self.len];
        e.0 = field;
        self.len += 1;
        &mut e.1
    }

    pub fn iter(&self) -> impl Iterator<Item = (usize, &[u8])> + Clone {
        self.entries[..self.len]
            .iter()
            .map(|(f, v)| (*f, v.as_slice()))
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn bytes(&self) -> u64 {
        self.iter().map(|(_, v)| v.len() as u64).sum()
    }
}

/// Records of one batch insert (`db.batchsize` > 1 in the load phase), in key
/// order of generation; buffers are reused between batches.
#[derive(Debug, Default, Clone)]
pub struct Batch {
    rows: Vec<(Vec<u8>, WriteSet)>,
    len: usize,
}

impl Batch {
    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// Starts the next record: its key buffer and value set, both cleared.
    pub fn push(&mut self) -> (&mut Vec<u8>, &mut WriteSet) {
        if self.len == self.rows.len() {
            self.rows.push((Vec::new(), WriteSet::default()));
        }
        let (k, v) = &mut self.rows[self.len];
        k.clear();
        v.clear();
        self.len += 1;
        (k, v)
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn rows(&self) -> impl Iterator<Item = (&[u8], &WriteSet)> {
        self.rows[..self.len].iter().map(|(k, v)| (k.as_slice(), v))
    }

    pub fn bytes(&self) -> u64 {
        self.rows().map(|(_, v)| v.bytes()).sum()
    }
}

/// What a binding knows of its engine, stored in every result.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct EngineInfo {
    pub name: String,
    pub version: String,
    /// Settings that matter for interpreting results (cache sizes, durability...).
    pub settings: BTreeMap<String, String>,
}

/// Failure to open a binding or a session: the run does not start.
#[derive(Debug, thiserror::Error)]
pub enum BindingError {
    #[error("{0}")]
    Config(String),
    #[error("{0}")]
    Unsupported(String),
    #[error("{0}")]
    Unavailable(String),
    #[error("{0}")]
    Io(String),
}

impl BindingError {
    /// The error of a failed operation's outcome (its detail, else its status).
    pub fn from_outcome(o: Outcome) -> BindingError {
        BindingError::Io(o.detail().unwrap_or(o.status().name()).to_string())
    }
}

/// One connection or handle executing one operation at a time.
///
/// The methods are `async` so network drivers can await; embedded engines do
/// their work synchronously inside them. Sessions live on one worker thread's
/// single-threaded runtime, so their futures need not be `Send`.
#[allow(async_fn_in_trait)]
pub trait Session {
    async fn read(&mut self, key: &[u8], fields: Fields, out: &mut Record) -> Outcome;
    /// Up to `count` records with key >= `start`, in key order.
    async fn scan(
        &mut self,
        start: &[u8],
        count: u64,
        fields: Fields,
        out: &mut ScanRows,
    ) -> Outcome;
    async fn update(&mut self, key: &[u8], values: &WriteSet) -> Outcome;
    async fn insert(&mut self, key: &[u8], values: &WriteSet) -> Outcome;
    async fn delete(&mut self, key: &[u8]) -> Outcome;

    /// Deletes every record of the benchmark's table or keyspace (a reload
    /// starts from an empty database), returning the records deleted when the
    /// binding counts them. The default scans from the first key and deletes
    /// what it finds, a thousand records at a time, until a scan comes back
    /// empty; bindings with a faster way (TRUNCATE) override it, and bindings
    /// that cannot list their keys refuse with the way to empty them.
    async fn clear(&mut self) -> Result<Option<u64>, BindingError> {
        let mut rows = ScanRows::with_fields(1);
        let mut keys: Vec<Vec<u8>> = Vec::new();
        let mut deleted = 0u64;
        loop {
            rows.clear();
            let out = self.scan(b"", 1000, Fields::One(0), &mut rows).await;
            if !out.status().is_ok() {
                return Err(BindingError::Io(format!(
                    "cannot list the records to delete: {}",
                    out.detail().unwrap_or(out.status().name())
                )));
            }
            if rows.is_empty() {
                return Ok(Some(deleted));
            }
            keys.clear();
            keys.extend(rows.rows().map(|(k, _)| k.to_vec()));
            let before = deleted;
            for k in &keys {
                let out = self.delete(k).await;
                match out.status() {
                    Status::Ok => deleted += 1,
                    Status::NotFound => {}
                    s => {
                        return Err(BindingError::Io(format!(
                            "cannot delete a record: {}",
                            out.detail().unwrap_or(s.name())
                        )))
                    }
                }
            }
            if deleted == before {
                return Err(BindingError::Unsupported(
                    "the records a scan returns cannot be deleted".into(),
                ));
            }
        }
    }

    /// Called after a call was abandoned mid-way (its timeout passed): a
    /// connection left in an unknown state should be dropped here, to be
    /// opened again by the next call.
    fn abandoned(&mut self) {}

    /// Inserts every record of `batch` with the run's insert semantics; the
    /// outcome's `rows` is the records inserted. Bindings with a bulk path
    /// (multi-row INSERT, COPY, pipelines) override this; the default inserts
    /// the records one by one and reports the first failure's status.
    async fn insert_batch(&mut self, batch: &Batch) -> Outcome {
        let mut first_failure: Option<Outcome> = None;
        let mut inserted = 0;
        for (key, values) in batch.rows() {
            let out = self.insert(key, values).await;
            if out.status().is_ok() {
                inserted += 1;
            } else if first_failure.is_none() {
                first_failure = Some(out);
            }
        }
        match first_failure {
            Some(mut f) => {
                f.set_rows(inserted);
                f
            }
            None => Outcome::ok(inserted, batch.bytes()),
        }
    }
}

/// A database opened for one run.
#[allow(async_fn_in_trait)]
pub trait Binding: Send + Sync + 'static {
    type Session: Session + 'static;

    /// Opens a session; called on the worker thread (and its runtime) that uses it.
    async fn session(&self) -> Result<Self::Session, BindingError>;

    /// Engine name, version and settings, recorded in the result.
    fn info(&self) -> EngineInfo;

    /// Bytes the database occupies on disk, when the binding can tell.
    fn disk_bytes(&self) -> Option<u64> {
        None
    }

    /// Retries the database expects for conflicts (serialization failures of
    /// CockroachDB- or YugabyteDB-style databases): the run's `retry.limit`
    /// when the user set none. The runner retries and counts them.
    fn conflict_retries(&self) -> Option<u32> {
        None
    }

    /// How long one call may take before it counts as `timeout` (the URL's
    /// `timeout`): the runner ends a run whose calls stall at most this long
    /// after its time is up. `None` for bindings whose calls cannot stall
    /// (an engine in the process).
    fn op_timeout(&self) -> Option<std::time::Duration> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_selections_map_result_columns_to_fields() {
        assert_eq!(
            Fields::All.columns(3).collect::<Vec<_>>(),
            vec![(0, 0), (1, 1), (2, 2)]
        );
        assert_eq!(Fields::One(7).columns(10).collect::<Vec<_>>(), vec![(0, 7)]);
    }

    #[test]
    fn a_value_put_into_a_record_is_moved_in_and_the_old_buffer_given_back() {
        let mut r = Record::with_fields(2);
        r.set(0, b"first");
        let v = b"second".to_vec();
        let at = v.as_ptr();
        let old = r.put(0, v);
        assert!(
            old.is_empty() && old.capacity() >= 5,
            "the old buffer, emptied"
        );
        assert_eq!(
            (r.get(0), r.get(0).unwrap().as_ptr()),
            (Some(&b"second"[..]), at)
        );
        assert_eq!(r.get(1), None);
        // past the schema's fields, as `set` does
        r.put(3, b"x".to_vec());
        assert_eq!(r.get(3), Some(&b"x"[..]));
        r.clear();
        assert!(r.is_empty());
    }

    #[test]
    fn a_clear_forgets_every_field_set_or_put_since_the_last_one() {
        let mut r = Record::with_fields(3);
        r.set(0, b"a");
        r.set(2, b"c");
        r.clear();
        assert_eq!((r.get(0), r.get(2), r.len()), (None, None, 0));
        r.clear(); // nothing set since: still empty
        assert!(r.is_empty());
        r.put(1, b"b".to_vec());
        r.clear();
        assert_eq!(r.get(1), None);
        r.set(1, b"again");
        assert_eq!(r.get(1), Some(&b"again"[..]));
    }

    #[test]
    fn semantic_outcomes_are_not_errors() {
        assert!(
            !Status::NotFound.is_error()
                && !Status::DuplicateKey.is_error()
                && !Status::Ok.is_error()
        );
        assert!(
            Status::Unavailable.is_error()
                && Status::VerifyFailed.is_error()
                && Status::Conflict.is_error()
        );
    }
}
