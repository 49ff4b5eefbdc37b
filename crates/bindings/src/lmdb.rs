//! `lmdb:///dir`: LMDB (through heed; the C library is compiled in by cargo),
//! a memory-mapped copy-on-write B-tree. One named database per table; every
//! write is its own write transaction.
//!
//! URL options: `map_size` (the map's upper bound, default 64GiB; the file is
//! sparse, so only used pages take disk), `sync` (`true`: fsync every commit;
//! default false: MDB_NOSYNC, the OS writes pages back, comparable to the other
//! engines' defaults), `readahead` (default false: MDB_NORDAHEAD, which helps
//! random reads of data larger than memory).
use crate::embedded::{bool_option, size_option, Dir, Engine, EngineResult, Handle, KvBinding};
use crate::registry::{Capabilities, Descriptor, Registered};
use crate::url::Target;
use heed::types::Bytes;
use heed::{Database, Env, EnvFlags, EnvOpenOptions, WithoutTls};
use std::collections::BTreeMap;
use std::ops::Bound;
use yardstick_core::binding::*;

pub(crate) const OPTIONS: &[&str] = &["map_size", "sync", "readahead"];

pub struct LmdbEngine {
    env: Env<WithoutTls>,
    db: Database<Bytes, Bytes>,
    settings: BTreeMap<String, String>,
}

pub(crate) type LmdbBinding = KvBinding<LmdbEngine>;


pub fn open(target: &Target, opts: &OpenOptions) -> Result<LmdbBinding, BindingError> {
    target.allow_only(OPTIONS)?;
    let map_size = size_option(target, "lmdb", "map_size")?.unwrap_or(64 << 30);
    if map_size < 1 << 20 {
        return Err(BindingError::Config(format!(
            "lmdb map_size={map_size} is too small: give at least 1MiB (the map is sparse, so a generous bound costs nothing)"
        )));
    }
    let sync = bool_option(target, "lmdb", "sync")?.unwrap_or(false);
    let readahead = bool_option(target, "lmdb", "readahead")?.unwrap_or(false);
    let dir = Dir::open(target, opts, "lmdb")?;
    if !opts.create && !dir.path.join("data.mdb").exists() {
        return Err(BindingError::Unavailable(format!(
            "LMDB environment {} does not exist: run `yardstick load` with the same --db first",
            dir.path.display()
        )));
    }
    let mut flags = EnvFlags::empty();
    if !sync {
        flags |= EnvFlags::NO_SYNC | EnvFlags::NO_META_SYNC;
    }
    if !readahead {
        flags |= EnvFlags::NO_READ_AHEAD;
    }
    let mut options = EnvOpenOptions::new().read_txn_without_tls();
    options
        .map_size(map_size as usize)
        .max_dbs(16)
        .max_readers(1024);
    // SAFETY: the directory is locked by yardstick.lock, so no other process of
    // ours maps it; NO_SYNC only weakens durability, which the result records.
    let env = unsafe {
        options.flags(flags);
        options.open(&dir.path)
    }
    .map_err(|e| {
        BindingError::Io(format!(
            "cannot open LMDB environment {}: {e}; is it an LMDB directory, and not damaged?",
            dir.path.display()
        ))
    })?;
    let table = opts.schema.table.as_str();
    let db = if opts.create {
        let mut tx = env.write_txn().map_err(|e| BindingError::Io(e.to_string()))?;
        let db = env
            .create_database::<Bytes, Bytes>(&mut tx, Some(table))
            .map_err(|e| BindingError::Io(format!("cannot create LMDB database {table}: {e}")))?;
        tx.commit().map_err(|e| BindingError::Io(e.to_string()))?;
        db
    } else {
        let tx = env.read_txn().map_err(|e| BindingError::Io(e.to_string()))?;
        let db = env
            .open_database::<Bytes, Bytes>(&tx, Some(table))
            .map_err(|e| BindingError::Io(e.to_string()))?
            .ok_or_else(|| {
                BindingError::Unavailable(format!(
                    "LMDB environment {} has no database {table}: run `yardstick load` with the same --db and table first",
                    dir.path.display()
                ))
            })?;
        // a database handle opened in a transaction lives on only if it commits
        tx.commit().map_err(|e| BindingError::Io(e.to_string()))?;
        db
    };
    let mut settings = BTreeMap::new();
    settings.insert("map_size".into(), map_size.to_string());
    settings.insert(
        "sync".into(),
        if sync {
            "fsync per commit"
        } else {
            "MDB_NOSYNC | MDB_NOMETASYNC"
        }
        .into(),
    );
    settings.insert("readahead".into(), readahead.to_string());
    let engine = LmdbEngine { env, db, settings };
    Ok(KvBinding::new(engine, dir, opts, "lmdb"))
}

impl Engine for LmdbEngine {
    type Handle = LmdbHandle;

    fn handle(&self) -> Result<LmdbHandle, BindingError> {
        Ok(LmdbHandle {
            env: self.env.clone(),
            db: self.db,
        })
    }

    fn info(&self) -> EngineInfo {
        let v = heed::lmdb_version();
        EngineInfo {
            name: "lmdb".into(),
            version: format!("{}.{}.{}", v.major, v.minor, v.patch),
            settings: self.settings.clone(),
        }
    }
}

impl Drop for LmdbEngine {
    fn drop(&mut self) {
        // NO_SYNC leaves the last commits to the OS: flush them at close
        let _ = self.env.force_sync();
    }
}

pub struct LmdbHandle {
    env: Env<WithoutTls>,
    db: Database<Bytes, Bytes>,
}

impl Handle for LmdbHandle {
    fn get(&mut self, key: &[u8], out: &mut Vec<u8>) -> EngineResult<bool> {
        let tx = self.env.read_txn()?;
        let v = self.db.get(&tx, key)?;
        Ok(crate::embedded::found(v, out))
    }

    fn put(&mut self, key: &[u8], value: &[u8]) -> EngineResult<()> {
        let mut tx = self.env.write_txn()?;
        self.db.put(&mut tx, key, value)?;
        Ok(tx.commit()?)
    }

    fn delete(&mut self, key: &[u8]) -> EngineResult<()> {
        let mut tx = self.env.write_txn()?;
        self.db.delete(&mut tx, key)?;
        Ok(tx.commit()?)
    }

    fn scan(
        &mut self,
        start: &[u8],
        count: usize,
        row: &mut dyn FnMut(&[u8], &[u8]),
    ) -> EngineResult<()> {
        let tx = self.env.read_txn()?;
        // LMDB refuses an empty key: the empty start is the first key
        let from = if start.is_empty() {
            Bound::Unbounded
        } else {
            Bound::Included(start)
        };
        let range: (Bound<&[u8]>, Bound<&[u8]>) = (from, Bound::Unbounded);
        for item in self.db.range(&tx, &range)?.take(count) {
            let (k, v) = item?;
            row(k, v);
        }
        Ok(())
    }

    fn put_batch(&mut self, rows: &[(&[u8], &[u8])]) -> EngineResult<()> {
        let mut tx = self.env.write_txn()?;
        for (k, v) in rows {
            self.db.put(&mut tx, k, v)?;
        }
        Ok(tx.commit()?)
    }
}

impl Registered for LmdbBinding {
    const DESCRIPTOR: Descriptor = Descriptor {
        schemes: &["lmdb"],
        server_port: None,
        flavours: &[],
        description: "LMDB (heed; the C library compiled in): memory-mapped B-tree, one write transaction per write",
        example: "lmdb:///var/tmp/lmdb?map_size=64GiB",
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

    fn open_fresh(opts: &OpenOptions) -> Result<LmdbBinding, BindingError> {
        open(&Target::parse(&fresh_url("lmdb", "?map_size=64MiB"))?, opts)
    }

    yardstick_core::conformance_suite!(open_fresh);
    crate::embedded::testing::engine_checks!("lmdb", "?map_size=64MiB", open);
}
