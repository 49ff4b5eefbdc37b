//! The contract between the harness and a database: a `Binding` is opened once
//! per run and hands out `Session`s, one per in-flight operation slot. Sessions
//! never time themselves: the runner measures around every call (YCSB's
//! `DBWrapper` idea), so every binding is measured the same way.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

mod buffers;
mod outcome;
mod write_set;
pub use buffers::{Batch, Record, ScanRows};
pub use outcome::Outcome;
pub use write_set::WriteSet;

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
    /// Whether the session's calls start from the stamp the worker took
    /// for them: [`crate::bounded::Bounded`]'s do (its time limit counts
    /// from there, one clock read fewer per call). Leave it `false`: a
    /// session that says `true` must take the stamp at every call's first
    /// poll, or a later call could start from a stale one.
    const TAKES_CALL_START: bool = false;

    /// Whether the session takes write sets whose random bytes are still
    /// owed ([`WriteSet::owing`]): it makes them where it sends them
    /// ([`WriteSet::write_entry`]), inside its call. Otherwise the stream
    /// makes them in the set, before the call's first stamp.
    const TAKES_OWED_VALUES: bool = false;

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

    /// The harness is done with what the last read put into `rec` (the
    /// next read clears it anyway). A session that moved its own buffers
    /// in may take them back here, so the next reply lands in a buffer
    /// still in cache instead of one that waited cold in the record while
    /// every other slot ran (a 1 KB pipelined GET: ~15% of client user time).
    fn release(&mut self, _rec: &mut Record) {}

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
    /// Measured between phases: an engine may flush first.
    fn disk_bytes(&self) -> Option<u64> {
        None
    }

    /// Bytes on disk now, read without disturbing the engine (no flush, no
    /// query): what observation samples at every interval of a run.
    fn data_size(&self) -> Option<u64> {
        None
    }

    /// Where the engine's files are (an embedded engine's directory or
    /// file): the result records the filesystem they are on.
    fn data_path(&self) -> Option<std::path::PathBuf> {
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

    /// The database's own statistics (wait events, buffer hits, compaction),
    /// sampled at every interval on a thread of their own; `None` for a
    /// binding that has none, which the result then says.
    fn statistics(&self) -> Option<Box<dyn crate::observe::Source>> {
        None
    }

    /// Compacts all stored data now (`yardstick compact`), returning once
    /// the engine is done: what a report measures "after compaction" with.
    fn compact(&self) -> Result<(), BindingError> {
        Err(BindingError::Unsupported(format!(
            "{} has no manual compaction: compact works on rocksdb, leveldb and wiredtiger",
            self.info().name
        )))
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
