//! `redb:///dir`: redb, a copy-on-write B-tree in pure Rust (one file,
//! `dir/redb.db`). Every write is its own write transaction.
//!
//! URL options: `cache_size` (default redb's 1 GiB), `durability`
//! (`none`, the default: commits are not fsynced, and one durable commit is
//! made when the run closes the database, comparable to the other engines'
//! defaults; `immediate`: fsync every commit).
use crate::embedded::{choice_option, size_option, Dir, Engine, EngineResult, Handle, KvBinding};
use crate::registry::{Capabilities, Descriptor, Registered};
use crate::url::Target;
use redb::{Database, Durability, ReadableDatabase, TableDefinition};
use std::collections::BTreeMap;
use std::sync::Arc;
use yardstick_core::binding::*;

pub(crate) const OPTIONS: &[&str] = &["cache_size", "durability"];

pub struct RedbEngine {
    db: Arc<Database>,
    table: Arc<str>,
    immediate: bool,
    settings: BTreeMap<String, String>,
}

pub(crate) type RedbBinding = KvBinding<RedbEngine>;


fn def(table: &str) -> TableDefinition<'_, &'static [u8], &'static [u8]> {
    TableDefinition::new(table)
}

pub fn open(target: &Target, opts: &OpenOptions) -> Result<RedbBinding, BindingError> {
    target.allow_only(OPTIONS)?;
    let cache = size_option(target, "redb", "cache_size")?;
    let immediate =
        choice_option(target, "redb", "durability", &["none", "immediate"])? == Some("immediate");
    let dir = Dir::open(target, opts, "redb")?;
    let file = dir.path.join("redb.db");
    if !opts.create && !file.exists() {
        return Err(BindingError::Unavailable(format!(
            "redb database {} does not exist: run `yardstick load` with the same --db first",
            file.display()
        )));
    }
    let mut builder = Database::builder();
    if let Some(n) = cache {
        builder.set_cache_size(n as usize);
    }
    let db = builder.create(&file).map_err(|e| {
        BindingError::Io(format!(
            "cannot open redb database {}: {e}; is it a redb file, and not damaged?",
            file.display()
        ))
    })?;
    let table: Arc<str> = opts.schema.table.as_str().into();
    // make sure the table exists (load) or is there (run)
    if opts.create {
        let tx = db.begin_write().map_err(|e| BindingError::Io(e.to_string()))?;
        tx.open_table(def(&table))
            .map_err(|e| BindingError::Io(format!("cannot create redb table {table}: {e}")))?;
        tx.commit().map_err(|e| BindingError::Io(e.to_string()))?;
    } else {
        let tx = db.begin_read().map_err(|e| BindingError::Io(e.to_string()))?;
        if tx.open_table(def(&table)).is_err() {
            return Err(BindingError::Unavailable(format!(
                "redb database {} has no table {table}: run `yardstick load` with the same --db and table first",
                file.display()
            )));
        }
    }
    let mut settings = BTreeMap::new();
    settings.insert(
        "cache_size".into(),
        cache.map_or_else(|| "redb default (1 GiB)".into(), |n| n.to_string()),
    );
    settings.insert(
        "durability".into(),
        if immediate {
            "immediate (fsync per commit)"
        } else {
            "none per commit, one durable commit at close"
        }
        .into(),
    );
    let engine = RedbEngine {
        db: Arc::new(db),
        table,
        immediate,
        settings,
    };
    Ok(KvBinding::new(engine, dir, opts, "redb"))
}

impl RedbEngine {
    /// A durable (empty) commit: non-durable commits before it reach the file.
    fn durable_commit(&self) -> EngineResult<()> {
        Ok(self.db.begin_write()?.commit()?)
    }
}

impl Drop for RedbEngine {
    fn drop(&mut self) {
        if !self.immediate {
            let _ = self.durable_commit();
        }
    }
}

impl Engine for RedbEngine {
    type Handle = RedbHandle;

    fn handle(&self) -> Result<RedbHandle, BindingError> {
        Ok(RedbHandle {
            db: self.db.clone(),
            table: self.table.clone(),
            immediate: self.immediate,
        })
    }

    fn flush(&self) -> EngineResult<()> {
        self.durable_commit()
    }

    fn info(&self) -> EngineInfo {
        EngineInfo {
            name: "redb".into(),
            version: env!("YARDSTICK_REDB_VERSION").into(),
            settings: self.settings.clone(),
        }
    }
}

pub struct RedbHandle {
    db: Arc<Database>,
    table: Arc<str>,
    immediate: bool,
}

impl RedbHandle {
    fn write(
        &self,
        f: impl FnOnce(
            &mut redb::Table<'_, &'static [u8], &'static [u8]>,
        ) -> Result<(), redb::StorageError>,
    ) -> EngineResult<()> {
        let mut tx = self.db.begin_write()?;
        if !self.immediate {
            tx.set_durability(Durability::None)?;
        }
        {
            let mut t = tx.open_table(def(&self.table))?;
            f(&mut t)?;
        }
        Ok(tx.commit()?)
    }
}

impl Handle for RedbHandle {
    fn get(&mut self, key: &[u8], out: &mut Vec<u8>) -> EngineResult<bool> {
        let tx = self.db.begin_read()?;
        let t = tx.open_table(def(&self.table))?;
        let v = t.get(key)?;
        Ok(crate::embedded::found(v.as_ref().map(|v| v.value()), out))
    }

    fn put(&mut self, key: &[u8], value: &[u8]) -> EngineResult<()> {
        self.write(|t| t.insert(key, value).map(|_| ()))
    }

    fn delete(&mut self, key: &[u8]) -> EngineResult<()> {
        self.write(|t| t.remove(key).map(|_| ()))
    }

    fn scan(
        &mut self,
        start: &[u8],
        count: usize,
        row: &mut dyn FnMut(&[u8], &[u8]),
    ) -> EngineResult<()> {
        let tx = self.db.begin_read()?;
        let t = tx.open_table(def(&self.table))?;
        for item in t.range(start..)?.take(count) {
            let (k, v) = item?;
            row(k.value(), v.value());
        }
        Ok(())
    }

    fn put_batch(&mut self, rows: &[(&[u8], &[u8])]) -> EngineResult<()> {
        self.write(|t| {
            for (k, v) in rows {
                t.insert(*k, *v)?;
            }
            Ok(())
        })
    }
}

impl Registered for RedbBinding {
    const DESCRIPTOR: Descriptor = Descriptor {
        schemes: &["redb"],
        server_port: None,
        flavours: &[],
        description: "redb (pure Rust): copy-on-write B-tree, one write transaction per write",
        example: "redb:///var/tmp/redb?cache_size=1GiB",
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

    fn open_fresh(opts: &OpenOptions) -> Result<RedbBinding, BindingError> {
        open(&Target::parse(&fresh_url("redb", ""))?, opts)
    }

    yardstick_core::conformance_suite!(open_fresh);
    crate::embedded::testing::engine_checks!("redb", "", open);
}
