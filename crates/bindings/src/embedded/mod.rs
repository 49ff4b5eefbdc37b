//! The generic binding of the embedded ordered key-value engines (RocksDB,
//! LevelDB, WiredTiger, LMDB, redb, fjall, each in its own module beside
//! this one): one binding over a small per-engine trait.
//!
//! Every engine stores a record as one value under its YCSB key, in the layout
//! of [`crate::kv`] (what YCSB's RocksDB binding does with its serialized field
//! map). The generic layer gives every engine the same semantics:
//!
//! - reads and scans decode the stored value;
//! - an insert with `insert` semantics, an update with `update` semantics, a
//!   partial update (a read-modify-write) and a delete read the current value
//!   first; those writes of one key are serialized by a striped lock, so two
//!   sessions cannot both insert a key or lose each other's fields;
//! - a whole-record upsert is a blind write (what YCSB measures).
//!
//! The database directory is locked (`yardstick.lock`, an advisory file lock)
//! so a second process gets a clear error instead of a corrupted run, and its
//! bytes on disk (allocated blocks, so sparse files count what they use) are
//! recorded before and after every phase.
// each engine uses the option parsers it needs: a build with only some
// engines leaves the others unused
#![cfg_attr(
    not(all(
        feature = "lmdb",
        feature = "redb",
        feature = "fjall",
        feature = "rocksdb",
        feature = "leveldb",
        feature = "wiredtiger"
    )),
    allow(dead_code)
)]
use crate::kv;
use crate::url::Target;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use yardstick_core::binding::*;
use yardstick_core::observe::remote::HitRatio;
use yardstick_core::observe::{Source, SourceError, Value};

/// An engine's own error, kept as the engine's typed error with its causes
/// (`?` converts any of them), said through [`yardstick_core::error::chain`].
///
/// Like `anyhow::Error` it is not itself an `Error`, which is what lets every
/// engine error convert into it with `?`.
pub struct EngineError(Box<dyn std::error::Error + Send + Sync>);

impl<E: std::error::Error + Send + Sync + 'static> From<E> for EngineError {
    fn from(e: E) -> Self {
        EngineError(Box::new(e))
    }
}

impl std::fmt::Display for EngineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&yardstick_core::error::chain(&*self.0))
    }
}

impl std::fmt::Debug for EngineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}

/// What an engine operation returns.
pub(crate) type EngineResult<T> = Result<T, EngineError>;

/// An opened engine: thread-safe, hands out one handle per session.
pub trait Engine: Send + Sync + 'static {
    type Handle: Handle;
    /// A handle for one session, created on the thread that uses it.
    fn handle(&self) -> Result<Self::Handle, BindingError>;
    /// Engine name, version and effective options.
    fn info(&self) -> EngineInfo;
    /// Writes buffered data (memtables, dirty cache pages) to its files, so
    /// bytes on disk measure the stored data rather than a write-ahead log.
    fn flush(&self) -> EngineResult<()> {
        Ok(())
    }
    /// The engine's own statistics now (files per level, compaction backlog,
    /// write stalls, cache), read without disturbing it; `None` for an engine
    /// that keeps none.
    fn statistics(&self) -> Option<EngineResult<Vec<Value>>> {
        None
    }
    /// A manual compaction of all data, returning once it is done; `None`
    /// for an engine that has none.
    fn compact(&self) -> Option<EngineResult<()>> {
        None
    }
}

/// One session's access to an engine. Errors are the engine's own.
pub trait Handle: 'static {
    /// Copies the value of `key` into `out`; false when the key is absent.
    fn get(&mut self, key: &[u8], out: &mut Vec<u8>) -> EngineResult<bool>;
    fn put(&mut self, key: &[u8], value: &[u8]) -> EngineResult<()>;
    fn delete(&mut self, key: &[u8]) -> EngineResult<()>;
    /// Calls `row` for up to `count` entries with key >= `start`, in key order.
    fn scan(
        &mut self,
        start: &[u8],
        count: usize,
        row: &mut dyn FnMut(&[u8], &[u8]),
    ) -> EngineResult<()>;
    /// Writes every pair, as one engine batch where the engine has them.
    fn put_batch(&mut self, rows: &[(&[u8], &[u8])]) -> EngineResult<()> {
        rows.iter().try_for_each(|(k, v)| self.put(k, v))
    }
}

/// Copies a looked-up value into `out`: what every `Handle::get` returns.
pub fn found(value: Option<&[u8]>, out: &mut Vec<u8>) -> bool {
    match value {
        Some(v) => {
            out.clear();
            out.extend_from_slice(v);
            true
        }
        None => false,
    }
}

/// The directory of an embedded database, locked for this process.
pub struct Dir {
    pub path: PathBuf,
    _lock: File,
}

impl Dir {
    /// Checks and locks the directory named by `target`: created by `load`
    /// (`opts.create`), required to exist for `run`.
    pub fn open(target: &Target, opts: &OpenOptions, engine: &str) -> Result<Dir, BindingError> {
        let scheme = &target.scheme;
        if target.rest.is_empty() {
            return Err(BindingError::Config(format!(
                "{scheme}:// needs a directory: {scheme}:///absolute/dir or {scheme}://relative/dir"
            )));
        }
        let path = PathBuf::from(&target.rest);
        if path.exists() && !path.is_dir() {
            return Err(BindingError::Config(format!(
                "{} is a file, not a directory: give {engine} a directory of its own",
                path.display()
            )));
        }
        if !path.exists() {
            if !opts.create {
                return Err(BindingError::Unavailable(format!(
                    "{engine} directory {} does not exist: run `yardstick load` with the same --db first",
                    path.display()
                )));
            }
            std::fs::create_dir_all(&path).map_err(|e| {
                BindingError::Io(format!(
                    "cannot create {engine} directory {}: {e}",
                    path.display()
                ))
            })?;
        }
        let lock_path = path.join("yardstick.lock");
        let lock = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| {
                BindingError::Io(format!(
                    "cannot open {}: {e}; is the directory writable?",
                    lock_path.display()
                ))
            })?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(BindingError::Unavailable(format!(
                    "{engine} directory {} is in use by another process (it holds yardstick.lock); wait for it or use another directory",
                    path.display()
                )))
            }
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(BindingError::Io(format!(
                    "cannot lock {}: {e}",
                    lock_path.display()
                )))
            }
        }
        Ok(Dir { path, _lock: lock })
    }

    /// Whether the directory holds nothing but yardstick's lock file.
    pub fn is_empty(&self) -> bool {
        std::fs::read_dir(&self.path)
            .map(|mut it| {
                it.all(|e| {
                    e.map(|e| e.file_name() == "yardstick.lock")
                        .unwrap_or(false)
                })
            })
            .unwrap_or(true)
    }
}

/// Bytes allocated on disk under `path` (sparse files count their blocks).
pub(crate) fn disk_usage(path: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return 0;
    };
    if meta.is_dir() {
        std::fs::read_dir(path)
            .map(|it| it.flatten().map(|e| disk_usage(&e.path())).sum())
            .unwrap_or(0)
    } else {
        meta.blocks() * 512
    }
}

/// A run's engine, semantics and directory.
pub struct KvBinding<E: Engine> {
    engine: Arc<E>,
    shared: Arc<Shared>,
    dir: Dir,
    name: &'static str,
}

struct Shared {
    fields: usize,
    insert_mode: InsertMode,
    update_mode: UpdateMode,
    /// Serializes the conditional and read-modify-write operations of a key.
    locks: Box<[Mutex<()>]>,
}

const STRIPES: usize = 4096;

impl Shared {
    fn lock(&self, key: &[u8]) -> std::sync::MutexGuard<'_, ()> {
        // FNV-1a: cheap and well spread over YCSB's keys
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in key {
            h = (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
        }
        self.locks[(h as usize) % STRIPES]
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }
}

impl<E: Engine> KvBinding<E> {
    pub fn new(engine: E, dir: Dir, opts: &OpenOptions, name: &'static str) -> Self {
        KvBinding {
            engine: Arc::new(engine),
            shared: Arc::new(Shared {
                fields: opts.schema.fields.len(),
                insert_mode: opts.insert_mode,
                update_mode: opts.update_mode,
                locks: (0..STRIPES).map(|_| Mutex::new(())).collect(),
            }),
            dir,
            name,
        }
    }

    pub fn engine(&self) -> &E {
        &self.engine
    }
}

impl<E: Engine> Binding for KvBinding<E> {
    type Session = KvSession<E::Handle>;

    async fn session(&self) -> Result<Self::Session, BindingError> {
        Ok(KvSession {
            h: self.engine.handle()?,
            shared: self.shared.clone(),
            value: Vec::new(),
            merged: Vec::new(),
            encoded: Vec::new(),
        })
    }

    fn info(&self) -> EngineInfo {
        let mut info = self.engine.info();
        info.settings
            .insert("directory".into(), self.dir.path.display().to_string());
        info.settings.insert(
            "writes".into(),
            format!(
                "{}: one value per record; insert semantics and partial updates read first under a per-key lock",
                self.name
            ),
        );
        info
    }

    fn disk_bytes(&self) -> Option<u64> {
        // measured between phases: flushing first makes the figure the stored
        // data's size (the compression ratio), not the write-ahead log's
        let _ = self.engine.flush();
        Some(disk_usage(&self.dir.path))
    }

    fn data_size(&self) -> Option<u64> {
        Some(disk_usage(&self.dir.path))
    }

    fn data_path(&self) -> Option<std::path::PathBuf> {
        Some(self.dir.path.clone())
    }

    fn statistics(&self) -> Option<Box<dyn Source>> {
        // asked once here, so an engine without statistics is said to have
        // none instead of failing every sample
        let _first = self.engine.statistics()?;
        Some(Box::new(EngineStats {
            engine: self.engine.clone(),
            name: self.name,
            hits: HitRatio::default(),
        }))
    }

    fn compact(&self) -> Result<(), BindingError> {
        match self.engine.compact() {
            Some(r) => {
                r.map_err(|e| BindingError::Io(format!("{} compaction failed: {e}", self.name)))
            }
            None => Err(BindingError::Unsupported(format!(
                "{} has no manual compaction: compact works on rocksdb, leveldb and wiredtiger",
                self.name
            ))),
        }
    }
}

/// An engine's statistics as an observation source, on the observer's thread
/// (engines are thread-safe; their statistics calls take no lock a session
/// waits on for long). An engine counting `db.cache.hits` and
/// `db.cache.misses` gets the interval's `db.cache_hit_ratio` too.
struct EngineStats<E> {
    engine: Arc<E>,
    name: &'static str,
    hits: HitRatio,
}

impl<E: Engine> Source for EngineStats<E> {
    fn name(&self) -> String {
        self.name.to_string()
    }

    fn sample(&mut self) -> Result<Vec<Value>, SourceError> {
        let mut values = match self.engine.statistics() {
            Some(r) => r.map_err(|e| SourceError::Failed(e.to_string()))?,
            None => {
                return Err(SourceError::Unsupported(format!(
                    "{} keeps no statistics",
                    self.name
                )))
            }
        };
        let count = |name: &str| values.iter().find(|v| v.name == name).map(|v| v.value);
        if let (Some(h), Some(m)) = (count("db.cache.hits"), count("db.cache.misses")) {
            values.extend(self.hits.next(h, m));
        }
        Ok(values)
    }
}

pub struct KvSession<H> {
    h: H,
    shared: Arc<Shared>,
    value: Vec<u8>,
    merged: Vec<u8>,
    encoded: Vec<u8>,
}

#[cold]
fn engine_error(e: EngineError) -> Outcome {
    Outcome::failed(Status::Error, e)
}

#[cold]
fn malformed(e: kv::Malformed) -> Outcome {
    Outcome::failed(Status::Error, e)
}

impl<H: Handle> Session for KvSession<H> {
    async fn read(&mut self, key: &[u8], fields: Fields, out: &mut Record) -> Outcome {
        out.clear();
        match self.h.get(key, &mut self.value) {
            Ok(true) => match kv::decode(self.shared.fields, &self.value, fields, out) {
                Ok(bytes) => Outcome::ok(1, bytes),
                Err(e) => malformed(e),
            },
            Ok(false) => Outcome::of(Status::NotFound),
            Err(e) => engine_error(e),
        }
    }

    async fn scan(
        &mut self,
        start: &[u8],
        count: u64,
        fields: Fields,
        out: &mut ScanRows,
    ) -> Outcome {
        out.clear();
        let n = self.shared.fields;
        let mut bytes = 0;
        let mut bad = None;
        let r = self.h.scan(start, count as usize, &mut |k, v| {
            let rec = out.push(k);
            match kv::decode(n, v, fields, rec) {
                Ok(b) => bytes += b,
                Err(e) => bad = Some(e),
            }
        });
        match (r, bad) {
            (Err(e), _) => engine_error(e),
            (Ok(()), Some(e)) => malformed(e),
            (Ok(()), None) => Outcome::ok(out.len() as u64, bytes),
        }
    }

    async fn update(&mut self, key: &[u8], values: &WriteSet) -> Outcome {
        let s = &*self.shared;
        if s.update_mode == UpdateMode::Upsert && kv::is_whole(s.fields, values) {
            kv::encode(s.fields, values, &mut self.encoded);
            let _g = s.lock(key);
            return match self.h.put(key, &self.encoded) {
                Ok(()) => Outcome::ok(0, values.bytes()),
                Err(e) => engine_error(e),
            };
        }
        let _g = s.lock(key);
        let exists = match self.h.get(key, &mut self.value) {
            Ok(x) => x,
            Err(e) => return engine_error(e),
        };
        let new = if exists {
            if let Err(e) = kv::merge(s.fields, &self.value, values, &mut self.merged) {
                return malformed(e);
            }
            &self.merged
        } else if s.update_mode == UpdateMode::Upsert {
            kv::encode(s.fields, values, &mut self.encoded);
            &self.encoded
        } else {
            return Outcome::of(Status::NotFound);
        };
        match self.h.put(key, new) {
            Ok(()) => Outcome::ok(0, values.bytes()),
            Err(e) => engine_error(e),
        }
    }

    async fn insert(&mut self, key: &[u8], values: &WriteSet) -> Outcome {
        let s = &*self.shared;
        kv::encode(s.fields, values, &mut self.encoded);
        let _g = s.lock(key);
        if s.insert_mode == InsertMode::Insert {
            match self.h.get(key, &mut self.value) {
                Ok(true) => return Outcome::of(Status::DuplicateKey),
                Ok(false) => {}
                Err(e) => return engine_error(e),
            }
        }
        match self.h.put(key, &self.encoded) {
            Ok(()) => Outcome::ok(0, values.bytes()),
            Err(e) => engine_error(e),
        }
    }

    async fn delete(&mut self, key: &[u8]) -> Outcome {
        let s = &*self.shared;
        let _g = s.lock(key);
        match self.h.get(key, &mut self.value) {
            Ok(true) => match self.h.delete(key) {
                Ok(()) => Outcome::ok(0, 0),
                Err(e) => engine_error(e),
            },
            Ok(false) => Outcome::of(Status::NotFound),
            Err(e) => engine_error(e),
        }
    }

    async fn insert_batch(&mut self, batch: &Batch) -> Outcome {
        let s = &*self.shared;
        let mut encoded: Vec<Vec<u8>> = Vec::with_capacity(batch.len());
        let mut keys: Vec<&[u8]> = Vec::with_capacity(batch.len());
        let mut duplicates = 0;
        for (key, values) in batch.rows() {
            if s.insert_mode == InsertMode::Insert {
                match self.h.get(key, &mut self.value) {
                    Ok(true) => {
                        duplicates += 1;
                        continue;
                    }
                    Ok(false) => {}
                    Err(e) => return engine_error(e),
                }
            }
            let mut buf = Vec::new();
            kv::encode(s.fields, values, &mut buf);
            encoded.push(buf);
            keys.push(key);
        }
        let rows: Vec<(&[u8], &[u8])> = keys
            .iter()
            .zip(&encoded)
            .map(|(k, v)| (*k, v.as_slice()))
            .collect();
        if let Err(e) = self.h.put_batch(&rows) {
            return engine_error(e);
        }
        if duplicates > 0 {
            let mut out = Outcome::failed(
                Status::DuplicateKey,
                format!("{duplicates} of {} keys of the batch existed", batch.len()),
            );
            out.set_rows(rows.len() as u64);
            return out;
        }
        Outcome::ok(rows.len() as u64, batch.bytes())
    }
}

#[cfg(test)]
// used by the engine modules, each behind its feature
#[cfg_attr(
    not(any(
        feature = "fjall",
        feature = "leveldb",
        feature = "lmdb",
        feature = "redb",
        feature = "rocksdb",
        feature = "wiredtiger"
    )),
    allow(dead_code, unused_macros, unused_imports)
)]
pub(crate) mod testing;

mod options;
pub(crate) use options::{bool_option, choice_option, int_option, size_option};

#[cfg(test)]
mod tests;
