//! `fjall:///dir`: fjall, a log-structured engine in pure Rust.
//!
//! URL options: `cache_size` (block cache, default 64MiB), `write_buffer`
//! (memtable size per keyspace, default fjall's), `compression` (`lz4`, the
//! default, or `none`), `sync` (`true`: fdatasync the journal after every
//! write; default false, like RocksDB's default).
use crate::embedded::{bool_option, choice_option, size_option, Dir, Engine, EngineResult, Handle, KvBinding};
use crate::registry::{Capabilities, Descriptor, Registered};
use crate::url::Target;
use fjall::{CompressionType, Database, KeyspaceCreateOptions, PersistMode};
use std::collections::BTreeMap;
use yardstick_core::binding::*;

pub(crate) const OPTIONS: &[&str] = &["cache_size", "write_buffer", "compression", "sync"];

pub struct FjallEngine {
    db: Database,
    keyspace: fjall::Keyspace,
    sync: bool,
    settings: BTreeMap<String, String>,
}

pub(crate) type FjallBinding = KvBinding<FjallEngine>;


pub fn open(target: &Target, opts: &OpenOptions) -> Result<FjallBinding, BindingError> {
    target.allow_only(OPTIONS)?;
    let cache = size_option(target, "fjall", "cache_size")?.unwrap_or(64 << 20);
    let write_buffer = size_option(target, "fjall", "write_buffer")?;
    let compression =
        choice_option(target, "fjall", "compression", &["lz4", "none"])?.unwrap_or("lz4");
    let sync = bool_option(target, "fjall", "sync")?.unwrap_or(false);
    let table = &opts.schema.table;
    if table.is_empty() || table.len() > 255 {
        return Err(BindingError::Config(format!(
            "table={table} cannot name a fjall keyspace: use 1 to 255 bytes"
        )));
    }
    let dir = Dir::open(target, opts, "fjall")?;
    if !opts.create && dir.is_empty() {
        return Err(BindingError::Unavailable(format!(
            "fjall directory {} holds no database: run `yardstick load` with the same --db first",
            dir.path.display()
        )));
    }
    let db = Database::builder(&dir.path)
        .cache_size(cache)
        .open()
        .map_err(|e| {
            BindingError::Io(format!(
                "cannot open fjall database {}: {e}; is it a fjall directory, and not damaged?",
                dir.path.display()
            ))
        })?;
    if !opts.create && !db.keyspace_exists(table) {
        return Err(BindingError::Unavailable(format!(
            "fjall database {} has no keyspace {table}: run `yardstick load` with the same --db and table first",
            dir.path.display()
        )));
    }
    let kind = if compression == "lz4" {
        CompressionType::Lz4
    } else {
        CompressionType::None
    };
    let keyspace = db
        .keyspace(table, || {
            let o = KeyspaceCreateOptions::default()
                .data_block_compression_policy(fjall::config::CompressionPolicy::all(kind));
            match write_buffer {
                Some(n) => o.max_memtable_size(n),
                None => o,
            }
        })
        .map_err(|e| BindingError::Io(format!("cannot open fjall keyspace {table}: {e}")))?;
    let mut settings = BTreeMap::new();
    settings.insert("cache_size".into(), cache.to_string());
    if let Some(n) = write_buffer {
        settings.insert("write_buffer".into(), n.to_string());
    }
    settings.insert("compression".into(), compression.into());
    settings.insert(
        "sync".into(),
        if sync {
            "fdatasync per write"
        } else {
            "journal buffered (no fsync per write)"
        }
        .into(),
    );
    let engine = FjallEngine {
        db,
        keyspace,
        sync,
        settings,
    };
    Ok(KvBinding::new(engine, dir, opts, "fjall"))
}

impl Engine for FjallEngine {
    type Handle = FjallHandle;

    fn handle(&self) -> Result<FjallHandle, BindingError> {
        Ok(FjallHandle {
            db: self.db.clone(),
            keyspace: self.keyspace.clone(),
            sync: self.sync,
        })
    }

    fn flush(&self) -> EngineResult<()> {
        Ok(self.keyspace.rotate_memtable_and_wait()?)
    }

    fn info(&self) -> EngineInfo {
        EngineInfo {
            name: "fjall".into(),
            version: fjall_version().into(),
            settings: self.settings.clone(),
        }
    }
}

/// The fjall crate version this binary was built with (from Cargo.lock).
fn fjall_version() -> &'static str {
    env!("YARDSTICK_FJALL_VERSION")
}

pub struct FjallHandle {
    db: Database,
    keyspace: fjall::Keyspace,
    sync: bool,
}

impl FjallHandle {
    fn persist(&self) -> EngineResult<()> {
        if self.sync {
            self.db.persist(PersistMode::SyncData)?;
        }
        Ok(())
    }
}

impl Handle for FjallHandle {
    fn get(&mut self, key: &[u8], out: &mut Vec<u8>) -> EngineResult<bool> {
        let v = self.keyspace.get(key)?;
        Ok(crate::embedded::found(v.as_deref(), out))
    }

    fn put(&mut self, key: &[u8], value: &[u8]) -> EngineResult<()> {
        self.keyspace.insert(key, value)?;
        self.persist()
    }

    fn delete(&mut self, key: &[u8]) -> EngineResult<()> {
        self.keyspace.remove(key)?;
        self.persist()
    }

    fn scan(
        &mut self,
        start: &[u8],
        count: usize,
        row: &mut dyn FnMut(&[u8], &[u8]),
    ) -> EngineResult<()> {
        for item in self.keyspace.range(start..).take(count) {
            let (k, v) = item.into_inner()?;
            row(&k, &v);
        }
        Ok(())
    }

    fn put_batch(&mut self, rows: &[(&[u8], &[u8])]) -> EngineResult<()> {
        let mut batch = self.db.batch();
        for (k, v) in rows {
            batch.insert(&self.keyspace, *k, *v);
        }
        batch.commit()?;
        self.persist()
    }
}

impl Registered for FjallBinding {
    const DESCRIPTOR: Descriptor = Descriptor {
        schemes: &["fjall"],
        server_port: None,
        flavours: &[],
        description: "fjall (pure Rust): LSM tree with lz4 blocks",
        example: "fjall:///var/tmp/fjall?cache_size=1GiB",
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

    fn open_fresh(opts: &OpenOptions) -> Result<FjallBinding, BindingError> {
        open(&Target::parse(&fresh_url("fjall", ""))?, opts)
    }

    yardstick_core::conformance_suite!(open_fresh);
    crate::embedded::testing::engine_checks!("fjall", "", open);
}
