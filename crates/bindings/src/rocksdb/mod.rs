//! `rocksdb:///dir`: RocksDB, linked from the system's librocksdb (Debian's
//! librocksdb-dev 7.8) through the `rocksdb` crate. Records live in the
//! default column family, one value per record.
//!
//! URL options (each recorded in the result; defaults in brackets):
//! `cache_size` (block cache, [32MiB]), `write_buffer_size` ([64MiB]),
//! `compression` (none, snappy, lz4, zstd, zlib [snappy]), `block_size`
//! ([4KiB]), `bloom_bits` (bloom filter bits per key, 0 for none [10]),
//! `max_background_jobs` ([2]), `max_open_files` ([-1]: all), `sync` (fsync
//! the WAL on every write [false]), `disable_wal` ([false]),
//! `auto_compaction` (false is RocksDB's bulk-load recipe: L0 files pile up
//! until `yardstick compact` [true]), `statistics`
//! (RocksDB's tickers: block cache hits, the level a read was found at,
//! compaction bytes [false]; they cost a few percent, so they are opt-in).
//!
//! Observation reads files and bytes per level, the compaction backlog and
//! write stalls at every interval ([`stats`]); `yardstick compact` runs a
//! full manual compaction.
mod stats;

use crate::embedded::{bool_option, choice_option, int_option, size_option, Dir, Engine, EngineResult, Handle, KvBinding};
use crate::registry::{Capabilities, Descriptor, Registered};
use crate::url::Target;
use rocksdb::{
    BlockBasedOptions, BottommostLevelCompaction, Cache, CompactOptions, DBCompressionType, Options, WriteBatch,
    WriteOptions, DB,
};
use yardstick_core::observe::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use yardstick_core::binding::*;

pub(crate) const OPTIONS: &[&str] = &[
    "cache_size",
    "write_buffer_size",
    "compression",
    "block_size",
    "bloom_bits",
    "max_background_jobs",
    "max_open_files",
    "sync",
    "disable_wal",
    "statistics",
    "auto_compaction",
];

pub struct RocksEngine {
    db: Arc<DB>,
    write: Arc<WriteOptions>,
    version: String,
    settings: BTreeMap<String, String>,
    /// The options the database was opened with, where `statistics=true`:
    /// they hold its statistics object.
    stats: Option<Options>,
    auto_compaction: bool,
    _cache: Cache,
}

pub(crate) type RocksBinding = KvBinding<RocksEngine>;


pub fn open(target: &Target, opts: &OpenOptions) -> Result<RocksBinding, BindingError> {
    target.allow_only(OPTIONS)?;
    let name = "rocksdb";
    let cache_size = size_option(target, name, "cache_size")?.unwrap_or(32 << 20);
    let write_buffer = size_option(target, name, "write_buffer_size")?.unwrap_or(64 << 20);
    let compression = choice_option(
        target,
        name,
        "compression",
        &["none", "snappy", "lz4", "zstd", "zlib"],
    )?
    .unwrap_or("snappy");
    let block_size = size_option(target, name, "block_size")?.unwrap_or(4096);
    let bloom_bits = int_option(target, name, "bloom_bits", 0..=64)?.unwrap_or(10);
    let jobs = int_option(target, name, "max_background_jobs", 1..=256)?.unwrap_or(2);
    let max_open_files: i32 = match target.param("max_open_files") {
        None => -1,
        Some(v) => v
            .parse()
            .ok()
            .filter(|n| *n == -1 || *n >= 16)
            .ok_or_else(|| {
                BindingError::Config(format!(
                "rocksdb max_open_files={v} is not valid: use -1 (keep all open) or at least 16"
            ))
            })?,
    };
    let sync = bool_option(target, name, "sync")?.unwrap_or(false);
    let disable_wal = bool_option(target, name, "disable_wal")?.unwrap_or(false);
    let statistics = bool_option(target, name, "statistics")?.unwrap_or(false);
    let auto_compaction = bool_option(target, name, "auto_compaction")?.unwrap_or(true);
    if !(256..=64 << 20).contains(&block_size) {
        return Err(BindingError::Config(format!(
            "rocksdb block_size={block_size} is not valid: use 256 bytes to 64MiB"
        )));
    }
    let dir = Dir::open(target, opts, "RocksDB")?;
    if !opts.create && !dir.path.join("CURRENT").exists() {
        return Err(BindingError::Unavailable(format!(
            "RocksDB database {} does not exist: run `yardstick load` with the same --db first",
            dir.path.display()
        )));
    }
    let cache = Cache::new_lru_cache(cache_size as usize)
        .map_err(|e| BindingError::Config(format!("rocksdb cache_size={cache_size}: {e}")))?;
    let mut table = BlockBasedOptions::default();
    table.set_block_cache(&cache);
    table.set_block_size(block_size as usize);
    if bloom_bits > 0 {
        table.set_bloom_filter(bloom_bits as f64, false);
    }
    let mut o = Options::default();
    o.create_if_missing(opts.create);
    o.set_block_based_table_factory(&table);
    o.set_write_buffer_size(write_buffer as usize);
    o.set_compression_type(match compression {
        "none" => DBCompressionType::None,
        "lz4" => DBCompressionType::Lz4,
        "zstd" => DBCompressionType::Zstd,
        "zlib" => DBCompressionType::Zlib,
        _ => DBCompressionType::Snappy,
    });
    o.set_max_background_jobs(jobs as i32);
    o.set_max_open_files(max_open_files);
    if statistics {
        o.enable_statistics();
    }
    o.set_disable_auto_compactions(!auto_compaction);
    let db = DB::open(&o, &dir.path).map_err(|e| {
        let e = e.into_string();
        if e.contains("Compression type") || e.contains("not supported") {
            BindingError::Config(format!(
                "RocksDB cannot use compression={compression}: {e}; the linked library lacks it, choose another"
            ))
        } else {
            BindingError::Io(format!(
                "cannot open RocksDB database {}: {e}",
                dir.path.display()
            ))
        }
    })?;
    let mut write = WriteOptions::default();
    write.set_sync(sync);
    write.disable_wal(disable_wal);
    let version = options_file_version(&dir.path).unwrap_or_else(|| "unknown".into());
    let mut settings = BTreeMap::new();
    for (k, v) in [
        ("cache_size", cache_size.to_string()),
        ("write_buffer_size", write_buffer.to_string()),
        ("compression", compression.to_string()),
        ("block_size", block_size.to_string()),
        ("bloom_bits", bloom_bits.to_string()),
        ("max_background_jobs", jobs.to_string()),
        ("max_open_files", max_open_files.to_string()),
        ("sync", sync.to_string()),
        ("disable_wal", disable_wal.to_string()),
        ("statistics", statistics.to_string()),
        ("auto_compaction", auto_compaction.to_string()),
        ("column_family", "default".to_string()),
        (
            "crate",
            format!("rocksdb {}", env!("YARDSTICK_ROCKSDB_VERSION")),
        ),
    ] {
        settings.insert(k.to_string(), v);
    }
    let engine = RocksEngine {
        db: Arc::new(db),
        write: Arc::new(write),
        version,
        settings,
        stats: statistics.then_some(o),
        auto_compaction,
        _cache: cache,
    };
    Ok(KvBinding::new(engine, dir, opts, "rocksdb"))
}

/// The library version RocksDB writes into its newest OPTIONS file
/// (`rocksdb_version=7.8.3`): the linked library's, not the crate's.
fn options_file_version(dir: &Path) -> Option<String> {
    let newest = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("OPTIONS-"))
        .max_by_key(|e| e.file_name())?;
    let text = std::fs::read_to_string(newest.path()).ok()?;
    text.lines()
        .find_map(|l| l.trim().strip_prefix("rocksdb_version="))
        .map(str::to_string)
}

impl Engine for RocksEngine {
    type Handle = RocksHandle;

    fn handle(&self) -> Result<RocksHandle, BindingError> {
        Ok(RocksHandle {
            db: self.db.clone(),
            write: self.write.clone(),
        })
    }

    /// Flushes the memtable, then waits (up to two minutes) for the
    /// compactions it set off (none with `auto_compaction=false`), so bytes on disk do not count files that a
    /// running compaction is about to replace.
    fn flush(&self) -> EngineResult<()> {
        self.db.flush()?;
        let busy = |name: &str| {
            self.db
                .property_int_value(name)
                .ok()
                .flatten()
                .is_some_and(|n| n > 0)
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
        // without auto compaction a pending one never starts
        let pending = || self.auto_compaction && busy("rocksdb.compaction-pending");
        while (pending() || busy("rocksdb.num-running-compactions"))
            && std::time::Instant::now() < deadline
        {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        Ok(())
    }

    fn statistics(&self) -> Option<EngineResult<Vec<Value>>> {
        let tickers = self.stats.as_ref().and_then(Options::get_statistics);
        Some(stats::read(&self.db, tickers.as_deref()).map_err(Into::into))
    }

    /// Flushes, then compacts every level into the last one (bottommost
    /// forced, so the result is one sorted run) and waits for what remains.
    fn compact(&self) -> Option<EngineResult<()>> {
        let mut c = CompactOptions::default();
        c.set_bottommost_level_compaction(BottommostLevelCompaction::Force);
        c.set_exclusive_manual_compaction(true);
        Some(self.flush().map(|()| {
            self.db.compact_range_opt(None::<&[u8]>, None::<&[u8]>, &c);
        }).and_then(|()| self.flush()))
    }

    fn info(&self) -> EngineInfo {
        EngineInfo {
            name: "rocksdb".into(),
            version: self.version.clone(),
            settings: self.settings.clone(),
        }
    }
}

pub struct RocksHandle {
    db: Arc<DB>,
    write: Arc<WriteOptions>,
}

impl Handle for RocksHandle {
    fn get(&mut self, key: &[u8], out: &mut Vec<u8>) -> EngineResult<bool> {
        let v = self.db.get_pinned(key)?;
        Ok(crate::embedded::found(v.as_deref(), out))
    }

    fn put(&mut self, key: &[u8], value: &[u8]) -> EngineResult<()> {
        Ok(self.db.put_opt(key, value, &self.write)?)
    }

    fn delete(&mut self, key: &[u8]) -> EngineResult<()> {
        Ok(self.db.delete_opt(key, &self.write)?)
    }

    fn scan(
        &mut self,
        start: &[u8],
        count: usize,
        row: &mut dyn FnMut(&[u8], &[u8]),
    ) -> EngineResult<()> {
        let mut it = self.db.raw_iterator();
        it.seek(start);
        let mut n = 0;
        while n < count && it.valid() {
            if let (Some(k), Some(v)) = (it.key(), it.value()) {
                row(k, v);
            }
            n += 1;
            it.next();
        }
        Ok(it.status()?)
    }

    fn put_batch(&mut self, rows: &[(&[u8], &[u8])]) -> EngineResult<()> {
        let mut batch = WriteBatch::default();
        for (k, v) in rows {
            batch.put(k, v);
        }
        Ok(self.db.write_opt(batch, &self.write)?)
    }
}

impl Registered for RocksBinding {
    const DESCRIPTOR: Descriptor = Descriptor {
        schemes: &["rocksdb"],
        server_port: None,
        flavours: &[],
        description: "RocksDB (the system's librocksdb): block cache, write buffer, compression, bloom filter from the URL",
        example: "rocksdb:///var/tmp/rocks?cache_size=1GiB&compression=lz4",
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

    fn open_fresh(opts: &OpenOptions) -> Result<RocksBinding, BindingError> {
        open(&Target::parse(&fresh_url("rocksdb", ""))?, opts)
    }

    yardstick_core::conformance_suite!(open_fresh);
    crate::embedded::testing::engine_checks!("rocksdb", "", open);

    #[test]
    fn the_linked_library_version_and_options_are_recorded() {
        let opts = yardstick_core::conformance::options(InsertMode::Insert, UpdateMode::Update);
        let b = open_fresh(&opts).unwrap();
        let info = b.info();
        assert!(info.version.starts_with("7."), "{info:?}");
        assert_eq!(info.settings["compression"], "snappy");
        assert_eq!(info.settings["bloom_bits"], "10");
    }

    fn value_of(vs: &[Value], name: &str) -> f64 {
        vs.iter()
            .find(|v| v.name == name)
            .unwrap_or_else(|| panic!("no {name} in {vs:?}"))
            .value
    }

    /// Writes `n` keys in `files` flushes, so L0 holds that many files.
    fn fill(b: &RocksBinding, n: usize, files: usize) {
        let mut h = b.engine().handle().unwrap();
        for f in 0..files {
            for i in 0..n / files {
                let k = format!("user{:08}", i * files + f);
                h.put(k.as_bytes(), &[b'x'; 200]).unwrap();
            }
            b.engine().db.flush().unwrap();
        }
    }

    #[test]
    fn observation_sees_files_per_level_and_compaction_moves_them_down() {
        let opts = yardstick_core::conformance::options(InsertMode::Insert, UpdateMode::Update);
        let url = fresh_url("rocksdb", "");
        let b = open(&Target::parse(&url).unwrap(), &opts).unwrap();
        fill(&b, 3000, 3);
        let mut src = b.statistics().expect("rocksdb has statistics");
        assert_eq!(src.name(), "rocksdb");
        let before = src.sample().unwrap();
        assert_eq!(value_of(&before, "db.level.L0.files"), 3.0);
        assert!(value_of(&before, "db.level.L0.bytes") > 3000.0 * 200.0 / 10.0);
        assert!(value_of(&before, "db.keys") > 0.0);
        assert!(before.iter().any(|v| v.name == "db.stalls.level0_slowdown"), "{before:?}");
        assert!(before.iter().any(|v| v.name == "db.stall_time"), "{before:?}");
        // without statistics=true no tickers, and compaction bytes come from cfstats
        assert!(before.iter().all(|v| v.name != "db.cache.hits"));
        assert!(before.iter().any(|v| v.name == "db.compaction.write_bytes"));
        b.compact().unwrap();
        let after = src.sample().unwrap();
        assert_eq!(value_of(&after, "db.level.L0.files"), 0.0);
        let deepest = (1..stats::LEVELS)
            .map(|l| value_of(&after, &format!("db.level.L{l}.files")))
            .sum::<f64>();
        assert!(deepest >= 1.0, "{after:?}");
        assert_eq!(value_of(&after, "db.compaction.pending_bytes"), 0.0);
    }

    #[test]
    fn statistics_true_counts_block_cache_hits_and_the_hit_ratio() {
        let opts = yardstick_core::conformance::options(InsertMode::Insert, UpdateMode::Update);
        let url = fresh_url("rocksdb", "?statistics=true");
        let b = open(&Target::parse(&url).unwrap(), &opts).unwrap();
        assert_eq!(b.info().settings["statistics"], "true");
        fill(&b, 1000, 1);
        let mut src = b.statistics().unwrap();
        let first = src.sample().unwrap();
        let mut h = b.engine().handle().unwrap();
        let mut out = Vec::new();
        for i in 0..1000 {
            assert!(h.get(format!("user{i:08}").as_bytes(), &mut out).unwrap());
        }
        let second = src.sample().unwrap();
        let grew = |name: &str| value_of(&second, name) - value_of(&first, name);
        assert!(grew("db.cache.hits") + grew("db.cache.misses") >= 1000.0);
        assert!(grew("db.get.found.L0") >= 1000.0, "{second:?}");
        let ratio = value_of(&second, "db.cache_hit_ratio");
        assert!((0.0..=1.0).contains(&ratio) && ratio > 0.5, "{ratio}");
    }
}
