//! `leveldb:///dir`: LevelDB, linked from the system's libleveldb (Debian's
//! libleveldb-dev 1.23) through its C API, declared here.
//!
//! URL options (defaults in brackets): `cache_size` (block cache [8MiB]),
//! `block_size` ([4KiB]), `compression` (snappy or none [snappy]),
//! `write_buffer_size` ([4MiB]), `bloom_bits` (0 for none [10]),
//! `max_open_files` ([1000]), `sync` (fsync every write [false]).
//!
//! Observation reads files per level (`leveldb.num-files-at-level<N>`), each
//! level's size and compaction time and bytes (`leveldb.stats`, in whole
//! MB: LevelDB's own resolution) and its memory use; `yardstick compact`
//! compacts the whole key range.
use crate::embedded::{bool_option, choice_option, int_option, size_option, Dir, Engine, EngineResult, Handle, KvBinding};
use crate::registry::{Capabilities, Descriptor, Registered};
use crate::url::Target;
use std::collections::BTreeMap;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::sync::Arc;
use yardstick_core::binding::*;
use yardstick_core::observe::Value;

pub(crate) const OPTIONS: &[&str] = &[
    "cache_size",
    "block_size",
    "compression",
    "write_buffer_size",
    "bloom_bits",
    "max_open_files",
    "sync",
];

#[allow(non_camel_case_types)]
mod ffi {
    use std::ffi::{c_char, c_int, c_void};
    #[repr(C)]
    pub(crate) struct leveldb_t(c_void);
    #[repr(C)]
    pub(crate) struct leveldb_options_t(c_void);
    #[repr(C)]
    pub(crate) struct leveldb_readoptions_t(c_void);
    #[repr(C)]
    pub(crate) struct leveldb_writeoptions_t(c_void);
    #[repr(C)]
    pub(crate) struct leveldb_iterator_t(c_void);
    #[repr(C)]
    pub(crate) struct leveldb_writebatch_t(c_void);
    #[repr(C)]
    pub(crate) struct leveldb_cache_t(c_void);
    #[repr(C)]
    pub(crate) struct leveldb_filterpolicy_t(c_void);

    extern "C" {
        pub(crate) fn leveldb_open(
            options: *const leveldb_options_t,
            name: *const c_char,
            errptr: *mut *mut c_char,
        ) -> *mut leveldb_t;
        pub(crate) fn leveldb_close(db: *mut leveldb_t);
        pub(crate) fn leveldb_property_value(db: *mut leveldb_t, propname: *const c_char) -> *mut c_char;
        pub(crate) fn leveldb_compact_range(
            db: *mut leveldb_t,
            start_key: *const c_char,
            start_key_len: usize,
            limit_key: *const c_char,
            limit_key_len: usize,
        );
        pub(crate) fn leveldb_put(
            db: *mut leveldb_t,
            options: *const leveldb_writeoptions_t,
            key: *const c_char,
            keylen: usize,
            val: *const c_char,
            vallen: usize,
            errptr: *mut *mut c_char,
        );
        pub(crate) fn leveldb_delete(
            db: *mut leveldb_t,
            options: *const leveldb_writeoptions_t,
            key: *const c_char,
            keylen: usize,
            errptr: *mut *mut c_char,
        );
        pub(crate) fn leveldb_write(
            db: *mut leveldb_t,
            options: *const leveldb_writeoptions_t,
            batch: *mut leveldb_writebatch_t,
            errptr: *mut *mut c_char,
        );
        pub(crate) fn leveldb_get(
            db: *mut leveldb_t,
            options: *const leveldb_readoptions_t,
            key: *const c_char,
            keylen: usize,
            vallen: *mut usize,
            errptr: *mut *mut c_char,
        ) -> *mut c_char;
        pub(crate) fn leveldb_create_iterator(
            db: *mut leveldb_t,
            options: *const leveldb_readoptions_t,
        ) -> *mut leveldb_iterator_t;
        pub(crate) fn leveldb_iter_destroy(it: *mut leveldb_iterator_t);
        pub(crate) fn leveldb_iter_valid(it: *const leveldb_iterator_t) -> u8;
        pub(crate) fn leveldb_iter_seek(it: *mut leveldb_iterator_t, k: *const c_char, klen: usize);
        pub(crate) fn leveldb_iter_next(it: *mut leveldb_iterator_t);
        pub(crate) fn leveldb_iter_key(it: *const leveldb_iterator_t, klen: *mut usize) -> *const c_char;
        pub(crate) fn leveldb_iter_value(it: *const leveldb_iterator_t, vlen: *mut usize)
            -> *const c_char;
        pub(crate) fn leveldb_iter_get_error(it: *const leveldb_iterator_t, errptr: *mut *mut c_char);
        pub(crate) fn leveldb_writebatch_create() -> *mut leveldb_writebatch_t;
        pub(crate) fn leveldb_writebatch_destroy(b: *mut leveldb_writebatch_t);
        pub(crate) fn leveldb_writebatch_put(
            b: *mut leveldb_writebatch_t,
            key: *const c_char,
            klen: usize,
            val: *const c_char,
            vlen: usize,
        );
        pub(crate) fn leveldb_options_create() -> *mut leveldb_options_t;
        pub(crate) fn leveldb_options_destroy(o: *mut leveldb_options_t);
        pub(crate) fn leveldb_options_set_create_if_missing(o: *mut leveldb_options_t, v: u8);
        pub(crate) fn leveldb_options_set_cache(o: *mut leveldb_options_t, c: *mut leveldb_cache_t);
        pub(crate) fn leveldb_options_set_write_buffer_size(o: *mut leveldb_options_t, n: usize);
        pub(crate) fn leveldb_options_set_max_open_files(o: *mut leveldb_options_t, n: c_int);
        pub(crate) fn leveldb_options_set_block_size(o: *mut leveldb_options_t, n: usize);
        pub(crate) fn leveldb_options_set_compression(o: *mut leveldb_options_t, c: c_int);
        pub(crate) fn leveldb_options_set_filter_policy(
            o: *mut leveldb_options_t,
            p: *mut leveldb_filterpolicy_t,
        );
        pub(crate) fn leveldb_filterpolicy_create_bloom(
            bits_per_key: c_int,
        ) -> *mut leveldb_filterpolicy_t;
        pub(crate) fn leveldb_filterpolicy_destroy(p: *mut leveldb_filterpolicy_t);
        pub(crate) fn leveldb_cache_create_lru(capacity: usize) -> *mut leveldb_cache_t;
        pub(crate) fn leveldb_cache_destroy(c: *mut leveldb_cache_t);
        pub(crate) fn leveldb_readoptions_create() -> *mut leveldb_readoptions_t;
        pub(crate) fn leveldb_readoptions_destroy(o: *mut leveldb_readoptions_t);
        pub(crate) fn leveldb_writeoptions_create() -> *mut leveldb_writeoptions_t;
        pub(crate) fn leveldb_writeoptions_destroy(o: *mut leveldb_writeoptions_t);
        pub(crate) fn leveldb_writeoptions_set_sync(o: *mut leveldb_writeoptions_t, v: u8);
        pub(crate) fn leveldb_free(ptr: *mut c_void);
        pub(crate) fn leveldb_major_version() -> c_int;
        pub(crate) fn leveldb_minor_version() -> c_int;
    }
}

/// An error LevelDB reported: its C API gives a status text and no code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LevelDbError(String);

impl std::fmt::Display for LevelDbError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for LevelDbError {}

/// Takes an error string LevelDB allocated, if any.
fn take_error(err: *mut c_char) -> Result<(), LevelDbError> {
    if err.is_null() {
        return Ok(());
    }
    // SAFETY: LevelDB returns a NUL-terminated malloc'd string; we free it once.
    let msg = unsafe { CStr::from_ptr(err) }
        .to_string_lossy()
        .into_owned();
    // SAFETY: `err` came from LevelDB's malloc and is not used after this.
    unsafe { ffi::leveldb_free(err.cast::<c_void>()) };
    Err(LevelDbError(msg))
}

/// The database and the option objects it references, freed together.
struct Db {
    db: *mut ffi::leveldb_t,
    options: *mut ffi::leveldb_options_t,
    cache: *mut ffi::leveldb_cache_t,
    filter: *mut ffi::leveldb_filterpolicy_t,
    read: *mut ffi::leveldb_readoptions_t,
    write: *mut ffi::leveldb_writeoptions_t,
}

// SAFETY: a leveldb_t is safe for concurrent use by many threads (LevelDB's
// documented guarantee); the option objects are only read after open.
unsafe impl Send for Db {}
// SAFETY: as above: shared references only call LevelDB's thread-safe API.
unsafe impl Sync for Db {}

impl Drop for Db {
    fn drop(&mut self) {
        // SAFETY: each pointer was created by LevelDB and is destroyed once, the
        // database before the objects it uses.
        unsafe {
            if !self.db.is_null() {
                ffi::leveldb_close(self.db);
            }
            ffi::leveldb_options_destroy(self.options);
            ffi::leveldb_cache_destroy(self.cache);
            if !self.filter.is_null() {
                ffi::leveldb_filterpolicy_destroy(self.filter);
            }
            ffi::leveldb_readoptions_destroy(self.read);
            ffi::leveldb_writeoptions_destroy(self.write);
        }
    }
}

impl Db {
    /// A property's text (`leveldb.stats`), `None` for an unknown one.
    fn property(&self, name: &str) -> Option<String> {
        let name = CString::new(name).ok()?;
        // SAFETY: the database is open; the returned string is malloc'd by
        // LevelDB, copied, and freed once
        unsafe {
            let p = ffi::leveldb_property_value(self.db, name.as_ptr());
            if p.is_null() {
                return None;
            }
            let text = CStr::from_ptr(p).to_string_lossy().into_owned();
            ffi::leveldb_free(p.cast::<c_void>());
            Some(text)
        }
    }
}

/// LevelDB's levels (`config::kNumLevels`).
const LEVELS: usize = 7;
const MIB: f64 = (1u64 << 20) as f64;

/// Each level's size, and compaction's time and bytes summed over levels,
/// from the table of `leveldb.stats`:
/// `Level  Files Size(MB) Time(sec) Read(MB) Write(MB)` then one row a level.
fn level_stats(text: &str) -> Vec<Value> {
    let (mut time, mut read, mut write) = (0.0, 0.0, 0.0);
    let mut out = Vec::new();
    for line in text.lines() {
        let cols: Vec<f64> = line
            .split_whitespace()
            .map(str::parse)
            .collect::<Result<_, _>>()
            .unwrap_or_default();
        if let [level, _files, size, t, r, w] = cols[..] {
            out.push(Value::gauge(format!("db.level.L{level}.bytes"), "bytes", size * MIB));
            time += t;
            read += r;
            write += w;
        }
    }
    out.push(Value::counter("db.compaction.time", "s", time));
    out.push(Value::counter("db.compaction.read_bytes", "bytes", read * MIB));
    out.push(Value::counter("db.compaction.write_bytes", "bytes", write * MIB));
    out
}

pub struct LevelEngine {
    db: Arc<Db>,
    settings: BTreeMap<String, String>,
}

pub(crate) type LevelBinding = KvBinding<LevelEngine>;

pub fn open(target: &Target, opts: &OpenOptions) -> Result<LevelBinding, BindingError> {
    target.allow_only(OPTIONS)?;
    let name = "leveldb";
    let cache_size = size_option(target, name, "cache_size")?.unwrap_or(8 << 20);
    let block_size = size_option(target, name, "block_size")?.unwrap_or(4096);
    let compression =
        choice_option(target, name, "compression", &["snappy", "none"])?.unwrap_or("snappy");
    let write_buffer = size_option(target, name, "write_buffer_size")?.unwrap_or(4 << 20);
    let bloom_bits = int_option(target, name, "bloom_bits", 0..=64)?.unwrap_or(10);
    let max_open_files =
        int_option(target, name, "max_open_files", 16..=1_000_000)?.unwrap_or(1000);
    let sync = bool_option(target, name, "sync")?.unwrap_or(false);
    let dir = Dir::open(target, opts, "LevelDB")?;
    if !opts.create && !dir.path.join("CURRENT").exists() {
        return Err(BindingError::Unavailable(format!(
            "LevelDB database {} does not exist: run `yardstick load` with the same --db first",
            dir.path.display()
        )));
    }
    let path = CString::new(dir.path.as_os_str().as_encoded_bytes()).map_err(|_| {
        BindingError::Config("the LevelDB directory path contains a NUL byte".into())
    })?;
    // SAFETY: plain C API calls; every object is owned by `Db` and freed by its Drop.
    let mut db = unsafe {
        let options = ffi::leveldb_options_create();
        let cache = ffi::leveldb_cache_create_lru(cache_size as usize);
        let filter = if bloom_bits > 0 {
            ffi::leveldb_filterpolicy_create_bloom(bloom_bits as c_int)
        } else {
            std::ptr::null_mut()
        };
        ffi::leveldb_options_set_create_if_missing(options, u8::from(opts.create));
        ffi::leveldb_options_set_cache(options, cache);
        ffi::leveldb_options_set_block_size(options, block_size as usize);
        ffi::leveldb_options_set_compression(options, c_int::from(compression == "snappy"));
        ffi::leveldb_options_set_write_buffer_size(options, write_buffer as usize);
        ffi::leveldb_options_set_max_open_files(options, max_open_files as c_int);
        if !filter.is_null() {
            ffi::leveldb_options_set_filter_policy(options, filter);
        }
        let write = ffi::leveldb_writeoptions_create();
        ffi::leveldb_writeoptions_set_sync(write, u8::from(sync));
        Db {
            db: std::ptr::null_mut(),
            options,
            cache,
            filter,
            read: ffi::leveldb_readoptions_create(),
            write,
        }
    };
    let mut e = std::ptr::null_mut();
    // SAFETY: valid options and a NUL-terminated path.
    db.db = unsafe { ffi::leveldb_open(db.options, path.as_ptr(), &mut e) };
    take_error(e).map_err(|e| {
        BindingError::Io(format!(
            "cannot open LevelDB database {}: {e}",
            dir.path.display()
        ))
    })?;
    // SAFETY: plain version getters.
    let version = unsafe {
        format!(
            "{}.{}",
            ffi::leveldb_major_version(),
            ffi::leveldb_minor_version()
        )
    };
    let mut settings = BTreeMap::new();
    for (k, v) in [
        ("cache_size", cache_size.to_string()),
        ("block_size", block_size.to_string()),
        ("compression", compression.to_string()),
        ("write_buffer_size", write_buffer.to_string()),
        ("bloom_bits", bloom_bits.to_string()),
        ("max_open_files", max_open_files.to_string()),
        ("sync", sync.to_string()),
        ("version", version.clone()),
    ] {
        settings.insert(k.to_string(), v);
    }
    let engine = LevelEngine {
        db: Arc::new(db),
        settings,
    };
    Ok(KvBinding::new(engine, dir, opts, "leveldb"))
}

impl Engine for LevelEngine {
    type Handle = LevelHandle;

    fn handle(&self) -> Result<LevelHandle, BindingError> {
        Ok(LevelHandle {
            db: self.db.clone(),
        })
    }

    fn statistics(&self) -> Option<EngineResult<Vec<Value>>> {
        let mut out = Vec::new();
        for l in 0..LEVELS {
            let files = self.db.property(&format!("leveldb.num-files-at-level{l}"));
            if let Some(n) = files.and_then(|f| f.trim().parse::<f64>().ok()) {
                out.push(Value::gauge(format!("db.level.L{l}.files"), "files", n));
            }
        }
        if let Some(text) = self.db.property("leveldb.stats") {
            out.extend(level_stats(&text));
        }
        let memory = self.db.property("leveldb.approximate-memory-usage");
        if let Some(n) = memory.and_then(|m| m.trim().parse::<f64>().ok()) {
            out.push(Value::gauge("db.memory.used", "bytes", n));
        }
        Some(Ok(out))
    }

    fn compact(&self) -> Option<EngineResult<()>> {
        // SAFETY: null bounds compact the whole key range; the call blocks
        // until it is done and is safe alongside other threads' use
        unsafe { ffi::leveldb_compact_range(self.db.db, std::ptr::null(), 0, std::ptr::null(), 0) };
        Some(Ok(()))
    }

    fn info(&self) -> EngineInfo {
        EngineInfo {
            name: "leveldb".into(),
            version: self.settings["version"].clone(),
            settings: self.settings.clone(),
        }
    }
}

pub struct LevelHandle {
    db: Arc<Db>,
}

impl Handle for LevelHandle {
    fn get(&mut self, key: &[u8], out: &mut Vec<u8>) -> EngineResult<bool> {
        let d = &*self.db;
        let mut len = 0usize;
        let mut e = std::ptr::null_mut();
        // SAFETY: an open database; the returned buffer is malloc'd by LevelDB
        // and freed below after copying.
        let v = unsafe {
            ffi::leveldb_get(
                d.db,
                d.read,
                key.as_ptr().cast(),
                key.len(),
                &mut len,
                &mut e,
            )
        };
        take_error(e)?;
        if v.is_null() {
            return Ok(false);
        }
        out.clear();
        // SAFETY: `v` points to `len` bytes.
        out.extend_from_slice(unsafe { std::slice::from_raw_parts(v.cast::<u8>(), len) });
        // SAFETY: `v` came from LevelDB's malloc and was copied above.
        unsafe { ffi::leveldb_free(v.cast::<c_void>()) };
        Ok(true)
    }

    fn put(&mut self, key: &[u8], value: &[u8]) -> EngineResult<()> {
        let d = &*self.db;
        let mut e = std::ptr::null_mut();
        // SAFETY: an open database and valid slices.
        unsafe {
            ffi::leveldb_put(
                d.db,
                d.write,
                key.as_ptr().cast(),
                key.len(),
                value.as_ptr().cast(),
                value.len(),
                &mut e,
            )
        };
        Ok(take_error(e)?)
    }

    fn delete(&mut self, key: &[u8]) -> EngineResult<()> {
        let d = &*self.db;
        let mut e = std::ptr::null_mut();
        // SAFETY: an open database and a valid slice.
        unsafe { ffi::leveldb_delete(d.db, d.write, key.as_ptr().cast(), key.len(), &mut e) };
        Ok(take_error(e)?)
    }

    fn scan(
        &mut self,
        start: &[u8],
        count: usize,
        row: &mut dyn FnMut(&[u8], &[u8]),
    ) -> EngineResult<()> {
        let d = &*self.db;
        // SAFETY: the iterator lives within this call and is destroyed at the
        // end; key and value pointers are valid until the next move.
        unsafe {
            let it = ffi::leveldb_create_iterator(d.db, d.read);
            ffi::leveldb_iter_seek(it, start.as_ptr().cast(), start.len());
            let mut n = 0;
            while n < count && ffi::leveldb_iter_valid(it) != 0 {
                let (mut kl, mut vl) = (0usize, 0usize);
                let k = ffi::leveldb_iter_key(it, &mut kl);
                let v = ffi::leveldb_iter_value(it, &mut vl);
                row(
                    std::slice::from_raw_parts(k.cast::<u8>(), kl),
                    std::slice::from_raw_parts(v.cast::<u8>(), vl),
                );
                n += 1;
                ffi::leveldb_iter_next(it);
            }
            let mut e = std::ptr::null_mut();
            ffi::leveldb_iter_get_error(it, &mut e);
            ffi::leveldb_iter_destroy(it);
            Ok(take_error(e)?)
        }
    }

    fn put_batch(&mut self, rows: &[(&[u8], &[u8])]) -> EngineResult<()> {
        let d = &*self.db;
        let mut e = std::ptr::null_mut();
        // SAFETY: the batch is created, written and destroyed within this call.
        unsafe {
            let b = ffi::leveldb_writebatch_create();
            for (k, v) in rows {
                ffi::leveldb_writebatch_put(
                    b,
                    k.as_ptr().cast(),
                    k.len(),
                    v.as_ptr().cast(),
                    v.len(),
                );
            }
            ffi::leveldb_write(d.db, d.write, b, &mut e);
            ffi::leveldb_writebatch_destroy(b);
        }
        Ok(take_error(e)?)
    }
}

impl Registered for LevelBinding {
    const DESCRIPTOR: Descriptor = Descriptor {
        schemes: &["leveldb"],
        server_port: None,
        flavours: &[],
        description: "LevelDB (the system's libleveldb, C API): cache, block size, compression, bloom filter",
        example: "leveldb:///var/tmp/level?cache_size=512MiB",
        docs: "docs/bindings/embedded.md",
        options: OPTIONS,
        capabilities: Capabilities {
            batch_load: true,
            scan: true,
            tpcc: None,
        },
    };

    fn open(target: &Target, opts: &OpenOptions) -> Result<Self, BindingError> {
        open(target, opts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embedded::testing::fresh_url;

    fn open_fresh(opts: &OpenOptions) -> Result<LevelBinding, BindingError> {
        open(&Target::parse(&fresh_url("leveldb", ""))?, opts)
    }

    yardstick_core::conformance_suite!(open_fresh);
    crate::embedded::testing::engine_checks!("leveldb", "", open);

    #[test]
    fn the_stats_table_gives_level_sizes_and_compaction_totals() {
        let text = "                               Compactions\n\
            Level  Files Size(MB) Time(sec) Read(MB) Write(MB)\n\
            --------------------------------------------------\n\
            \x20 0        2        3         1        0         4\n\
            \x20 1        5       10         2       12        11\n";
        let v = level_stats(text);
        let get = |n: &str| v.iter().find(|x| x.name == n).map(|x| x.value);
        assert_eq!(get("db.level.L0.bytes"), Some(3.0 * MIB));
        assert_eq!(get("db.level.L1.bytes"), Some(10.0 * MIB));
        assert_eq!(get("db.compaction.time"), Some(3.0));
        assert_eq!(get("db.compaction.read_bytes"), Some(12.0 * MIB));
        assert_eq!(get("db.compaction.write_bytes"), Some(15.0 * MIB));
    }

    #[test]
    fn observation_sees_the_files_per_level_and_compaction_empties_level_0() {
        let opts = yardstick_core::conformance::options(InsertMode::Insert, UpdateMode::Update);
        let url = fresh_url("leveldb", "?write_buffer_size=64KiB");
        let b = open(&Target::parse(&url).unwrap(), &opts).unwrap();
        let mut h = b.engine().handle().unwrap();
        for i in 0..5000 {
            h.put(format!("user{i:08}").as_bytes(), &[b'v'; 200]).unwrap();
        }
        let mut src = b.statistics().expect("leveldb has statistics");
        let files = |vs: &[Value]| -> f64 {
            (0..LEVELS)
                .map(|l| vs.iter().find(|v| v.name == format!("db.level.L{l}.files")).unwrap().value)
                .sum()
        };
        let before = src.sample().unwrap();
        assert!(files(&before) >= 1.0, "{before:?}");
        assert!(before.iter().any(|v| v.name == "db.memory.used"));
        b.compact().unwrap();
        let after = src.sample().unwrap();
        let l0 = after.iter().find(|v| v.name == "db.level.L0.files").unwrap().value;
        assert_eq!(l0, 0.0, "{after:?}");
        assert!(files(&after) >= 1.0);
    }
}
