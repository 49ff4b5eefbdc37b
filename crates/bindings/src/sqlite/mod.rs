//! `sqlite:///path/to/file.db`: the embedded default, SQLite bundled into the
//! binary. YCSB's table (`YCSB_KEY` primary key, one column per field) in a
//! WITHOUT ROWID table so a lookup is one B-tree descent; WAL journal; one
//! connection per session with cached prepared statements.
//!
//! URL options: `journal_mode` (wal), `synchronous` (normal), `cache_size`
//! (bytes per connection, e.g. 64MiB; default SQLite's 2 MiB), `busy_timeout`
//! (10s), `mmap_size` (bytes, default 0).
use crate::sql::{Dialect, Placeholder, Statements as Sql, Upsert, WriteKind};
use crate::url::{parse_bytes, Target};
use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{params_from_iter, Connection, ErrorCode, OpenFlags, ToSql};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
pub mod tpcc;

use crate::registry::{Capabilities, Descriptor, Registered};
use yardstick_core::binding::*;

pub(crate) const OPTIONS: &[&str] = &[
    "journal_mode",
    "synchronous",
    "cache_size",
    "busy_timeout",
    "mmap_size",
];

#[derive(Debug, Clone)]
pub(crate) struct Settings {
    journal_mode: String,
    synchronous: String,
    cache_size: Option<u64>,
    busy_timeout: Duration,
    mmap_size: u64,
}

/// SQLite's dialect: `?n` placeholders, `ON CONFLICT ... DO UPDATE` upserts.
pub(crate) const DIALECT: Dialect = Dialect {
    placeholder: Placeholder::NumberedQuestion,
    upsert: Upsert::OnConflict,
    row_locks: false,
};

pub(crate) struct SqliteBinding {
    path: PathBuf,
    settings: Settings,
    sql: Arc<Sql>,
    opts: OpenOptions,
    version: String,
}

fn io_err(path: &Path, what: &str, e: impl std::fmt::Display) -> BindingError {
    BindingError::Io(format!(
        "cannot {what} SQLite database {}: {e}",
        path.display()
    ))
}

/// The database file and connection settings of a `sqlite://` URL.
pub(crate) fn settings_of(target: &Target) -> Result<(PathBuf, Settings), BindingError> {
    target.allow_only(OPTIONS)?;
    if target.rest.is_empty() {
        return Err(BindingError::Config(
            "sqlite:// needs a file path: sqlite:///absolute/path.db or sqlite://relative/path.db"
                .into(),
        ));
    }
    let path = PathBuf::from(&target.rest);
    let journal_mode = target
        .param("journal_mode")
        .unwrap_or("wal")
        .to_ascii_lowercase();
    if !["wal", "delete", "truncate", "persist", "memory", "off"].contains(&journal_mode.as_str()) {
        return Err(BindingError::Config(format!("sqlite journal_mode={journal_mode} is not valid: use wal, delete, truncate, persist, memory or off")));
    }
    let synchronous = target
        .param("synchronous")
        .unwrap_or("normal")
        .to_ascii_lowercase();
    if !["off", "normal", "full", "extra"].contains(&synchronous.as_str()) {
        return Err(BindingError::Config(format!(
            "sqlite synchronous={synchronous} is not valid: use off, normal, full or extra"
        )));
    }
    let bytes = |name: &str| -> Result<Option<u64>, BindingError> {
        target
            .param(name)
            .map(|v| {
                parse_bytes(v).ok_or_else(|| {
                    BindingError::Config(format!(
                        "sqlite {name}={v} is not a size: use for example {name}=64MiB"
                    ))
                })
            })
            .transpose()
    };
    let busy_timeout = target.duration("busy_timeout", 10)?;
    let settings = Settings {
        journal_mode,
        synchronous,
        cache_size: bytes("cache_size")?,
        busy_timeout,
        mmap_size: bytes("mmap_size")?.unwrap_or(0),
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        if !dir.is_dir() {
            return Err(BindingError::Io(format!("directory {} of the SQLite database does not exist; create it or choose another path", dir.display())));
        }
    }
    Ok((path, settings))
}

impl Registered for SqliteBinding {
    const DESCRIPTOR: Descriptor = Descriptor {
        schemes: &["sqlite"],
        server_port: None,
        flavours: &[],
        description: "SQLite (bundled), the embedded default",
        example: "sqlite:///tmp/bench.db",
        docs: "docs/bindings/sqlite.md",
        options: OPTIONS,
        capabilities: Capabilities {
            batch_load: true,
            scan: true,
            tpcc: Some(tpcc::SUPPORT),
        },
    };

    fn open(target: &Target, opts: &OpenOptions) -> Result<Self, BindingError> {
        let (path, settings) = settings_of(target)?;
        if !opts.create && !path.exists() {
            return Err(BindingError::Unavailable(format!(
                "SQLite database {} does not exist: run `yardstick load` with the same --db first",
                path.display()
            )));
        }
        let sql = Arc::new(Sql::new(&opts.schema.table, &opts.schema.fields, DIALECT));
        let conn = connect(&path, &settings, opts.create)?;
        create_or_check(&conn, &path, &opts.schema, opts.create)?;
        let version: String = conn
            .query_row("SELECT sqlite_version()", [], |r| r.get(0))
            .map_err(|e| io_err(&path, "query", e))?;
        Ok(SqliteBinding {
            path,
            settings,
            sql,
            opts: opts.clone(),
            version,
        })
    }
}

pub(crate) fn connect(path: &Path, s: &Settings, create: bool) -> Result<Connection, BindingError> {
    let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_URI;
    if create {
        flags |= OpenFlags::SQLITE_OPEN_CREATE;
    }
    let conn = Connection::open_with_flags(path, flags).map_err(|e| io_err(path, "open", e))?;
    conn.busy_timeout(s.busy_timeout)
        .map_err(|e| io_err(path, "configure", e))?;
    let mode = set_journal_mode(&conn, s).map_err(|e| io_err(path, "write to", e))?;
    if mode != s.journal_mode {
        return Err(io_err(
            path,
            "set the journal mode of",
            format!("asked for {}, got {mode}", s.journal_mode),
        ));
    }
    let mut pragmas = format!(
        "PRAGMA synchronous={}; PRAGMA mmap_size={};",
        s.synchronous, s.mmap_size
    );
    if let Some(c) = s.cache_size {
        let _ = write!(pragmas, " PRAGMA cache_size=-{};", c.div_ceil(1024));
    }
    conn.execute_batch(&pragmas)
        .map_err(|e| io_err(path, "configure", e))?;
    conn.set_prepared_statement_cache_capacity(256);
    Ok(conn)
}

/// Switching the journal mode needs an exclusive lock, and SQLite answers
/// SQLITE_BUSY at once (without the busy handler) when another process opens
/// the same new file at that moment, as the instances of one load do; so an
/// already right mode is left alone and a busy switch is retried until
/// `busy_timeout` runs out.
fn set_journal_mode(conn: &Connection, s: &Settings) -> rusqlite::Result<String> {
    let current: String = conn.query_row("PRAGMA journal_mode", [], |r| r.get(0))?;
    if current.eq_ignore_ascii_case(&s.journal_mode) {
        return Ok(s.journal_mode.clone());
    }
    let deadline = std::time::Instant::now() + s.busy_timeout;
    loop {
        match conn.query_row(
            &format!("PRAGMA journal_mode={}", s.journal_mode),
            [],
            |r| r.get::<_, String>(0),
        ) {
            Err(rusqlite::Error::SqliteFailure(e, _))
                if e.code == ErrorCode::DatabaseBusy && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(Duration::from_millis(5));
            }
            other => return other,
        }
    }
}

fn create_or_check(
    conn: &Connection,
    path: &Path,
    schema: &Schema,
    create: bool,
) -> Result<(), BindingError> {
    let t = &schema.table;
    let existing: Vec<String> = {
        let mut st = conn
            .prepare(&format!("PRAGMA table_info({t})"))
            .map_err(|e| io_err(path, "inspect", e))?;
        let rows = st
            .query_map([], |r| r.get::<_, String>(1))
            .map_err(|e| io_err(path, "inspect", e))?;
        rows.collect::<Result<_, _>>()
            .map_err(|e| io_err(path, "inspect", e))?
    };
    if existing.is_empty() {
        if !create {
            return Err(BindingError::Unavailable(format!(
                "table {t} does not exist in {}: run `yardstick load` with the same --db and properties first",
                path.display()
            )));
        }
        let cols: Vec<String> = schema.fields.iter().map(|f| format!("{f} BLOB")).collect();
        // IF NOT EXISTS: several processes (instances of one load) may race here
        conn.execute_batch(&format!(
            "CREATE TABLE IF NOT EXISTS {t} (YCSB_KEY TEXT PRIMARY KEY NOT NULL, {}) WITHOUT ROWID;",
            cols.join(", ")
        ))
        .map_err(|e| io_err(path, "create a table in", e))?;
        return Ok(());
    }
    crate::sql::check_columns(
        &format!("{t} in {}", path.display()),
        &schema.fields,
        &existing,
    )
}

pub(crate) struct SqliteSession {
    conn: Connection,
    sql: Arc<Sql>,
    insert_mode: InsertMode,
    update_mode: UpdateMode,
    fields: usize,
}

impl Binding for SqliteBinding {
    type Session = SqliteSession;

    async fn session(&self) -> Result<SqliteSession, BindingError> {
        Ok(SqliteSession {
            conn: connect(&self.path, &self.settings, false)?,
            sql: self.sql.clone(),
            insert_mode: self.opts.insert_mode,
            update_mode: self.opts.update_mode,
            fields: self.opts.schema.fields.len(),
        })
    }

    fn info(&self) -> EngineInfo {
        let s = &self.settings;
        let mut settings = BTreeMap::new();
        settings.insert("path".into(), self.path.display().to_string());
        settings.insert("journal_mode".into(), s.journal_mode.clone());
        settings.insert("synchronous".into(), s.synchronous.clone());
        settings.insert(
            "cache_size_bytes".into(),
            s.cache_size
                .map_or("default (2 MiB)".into(), |c| c.to_string()),
        );
        settings.insert(
            "busy_timeout_ms".into(),
            s.busy_timeout.as_millis().to_string(),
        );
        settings.insert("mmap_size".into(), s.mmap_size.to_string());
        settings.insert(
            "table_layout".into(),
            "WITHOUT ROWID, YCSB_KEY TEXT PRIMARY KEY, fields BLOB".into(),
        );
        EngineInfo {
            name: "sqlite".into(),
            version: self.version.clone(),
            settings,
        }
    }

    fn disk_bytes(&self) -> Option<u64> {
        self.data_size()
    }

    /// The database file and its write-ahead log and shared-memory index.
    fn data_path(&self) -> Option<PathBuf> {
        Some(self.path.clone())
    }

    fn data_size(&self) -> Option<u64> {
        let base = self.path.as_os_str().to_owned();
        let size = |suffix: &str| {
            let mut p = base.clone();
            p.push(suffix);
            std::fs::metadata(PathBuf::from(p))
                .map(|m| m.len())
                .unwrap_or(0)
        };
        std::fs::metadata(&self.path).ok()?;
        Some(size("") + size("-wal") + size("-shm"))
    }
}

/// Binds a key as TEXT without copying or re-validating it.
struct Key<'a>(&'a [u8]);

impl ToSql for Key<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(ValueRef::Text(self.0)))
    }
}

fn outcome_of(e: rusqlite::Error) -> Outcome {
    match &e {
        rusqlite::Error::SqliteFailure(f, _) => match f.code {
            ErrorCode::ConstraintViolation
                if f.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY =>
            {
                Outcome::of(Status::DuplicateKey)
            }
            ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked => {
                Outcome::failed(Status::Timeout, e)
            }
            _ => Outcome::failed(Status::Error, e),
        },
        _ => Outcome::failed(Status::Error, e),
    }
}

/// Copies the selected fields of `row`, starting at column `first`, into `out`;
/// returns the bytes copied.
fn copy_row(
    row: &rusqlite::Row<'_>,
    first: usize,
    fields: Fields,
    total: usize,
    out: &mut Record,
) -> u64 {
    let mut bytes = 0;
    for (c, field) in fields.columns(total) {
        if let Some(b) = row.get_ref(first + c).ok().and_then(value_bytes) {
            bytes += b.len() as u64;
            out.set(field, b);
        }
    }
    bytes
}

fn value_bytes<'a>(v: ValueRef<'a>) -> Option<&'a [u8]> {
    match v {
        ValueRef::Blob(b) | ValueRef::Text(b) => Some(b),
        _ => None,
    }
}

impl SqliteSession {
    fn write(&mut self, key: &[u8], values: &WriteSet, kind: WriteKind) -> Outcome {
        let all_in_order =
            values.len() == self.fields && values.iter().enumerate().all(|(n, (i, _))| n == i);
        let one = (values.len() == 1)
            .then(|| values.iter().next().map(|(i, _)| i))
            .flatten();
        let dynamic;
        let sql: &str = match (kind, all_in_order, one) {
            (WriteKind::Insert, true, _) => &self.sql.insert_all,
            (WriteKind::Upsert, true, _) => &self.sql.upsert_all,
            (WriteKind::Update, _, Some(i)) => &self.sql.update_one[i],
            (WriteKind::Upsert, _, Some(i)) => &self.sql.upsert_one[i],
            _ => {
                dynamic = self.sql.write_subset(values.iter().map(|(i, _)| i), kind);
                &dynamic
            }
        };
        let mut st = match self.conn.prepare_cached(sql) {
            Ok(s) => s,
            Err(e) => return outcome_of(e),
        };
        let mut bound: Vec<&dyn ToSql> = Vec::with_capacity(values.len() + 1);
        let key_param = Key(key);
        bound.push(&key_param);
        let vals: Vec<&[u8]> = values.iter().map(|(_, v)| v).collect();
        bound.extend(vals.iter().map(|v| v as &dyn ToSql));
        match st.execute(params_from_iter(bound)) {
            Ok(0) => Outcome::of(Status::NotFound),
            Ok(_) => Outcome::ok(0, values.bytes()),
            Err(e) => outcome_of(e),
        }
    }
}

impl Session for SqliteSession {
    async fn read(&mut self, key: &[u8], fields: Fields, out: &mut Record) -> Outcome {
        let sql = match fields {
            Fields::All => &self.sql.read_all,
            Fields::One(i) => &self.sql.read_one[i],
        };
        let mut st = match self.conn.prepare_cached(sql) {
            Ok(s) => s,
            Err(e) => return outcome_of(e),
        };
        let mut rows = match st.query([Key(key)]) {
            Ok(r) => r,
            Err(e) => return outcome_of(e),
        };
        match rows.next() {
            Ok(Some(row)) => Outcome::ok(1, copy_row(row, 0, fields, self.fields, out)),
            Ok(None) => Outcome::of(Status::NotFound),
            Err(e) => outcome_of(e),
        }
    }

    async fn scan(
        &mut self,
        start: &[u8],
        count: u64,
        fields: Fields,
        out: &mut ScanRows,
    ) -> Outcome {
        let sql = match fields {
            Fields::All => &self.sql.scan_all,
            Fields::One(i) => &self.sql.scan_one[i],
        };
        let mut st = match self.conn.prepare_cached(sql) {
            Ok(s) => s,
            Err(e) => return outcome_of(e),
        };
        let limit = count.min(i64::MAX as u64) as i64;
        let mut rows = match st.query(rusqlite::params![Key(start), limit]) {
            Ok(r) => r,
            Err(e) => return outcome_of(e),
        };
        let (mut n, mut bytes) = (0u64, 0u64);
        loop {
            match rows.next() {
                Ok(Some(row)) => {
                    let key = row
                        .get_ref(0)
                        .ok()
                        .and_then(value_bytes)
                        .unwrap_or_default();
                    bytes += copy_row(row, 1, fields, self.fields, out.push(key));
                    n += 1;
                }
                Ok(None) => break,
                Err(e) => return outcome_of(e),
            }
        }
        Outcome::ok(n, bytes)
    }

    async fn update(&mut self, key: &[u8], values: &WriteSet) -> Outcome {
        self.write(key, values, WriteKind::for_update(self.update_mode))
    }

    async fn insert(&mut self, key: &[u8], values: &WriteSet) -> Outcome {
        self.write(key, values, WriteKind::for_insert(self.insert_mode))
    }

    /// One transaction per batch: SQLite's fast path for bulk loading (one
    /// journal sync per batch instead of per record); all or nothing.
    async fn insert_batch(&mut self, batch: &Batch) -> Outcome {
        let kind = WriteKind::for_insert(self.insert_mode);
        if let Err(e) = self.conn.execute_batch("BEGIN IMMEDIATE") {
            return outcome_of(e);
        }
        for (key, values) in batch.rows() {
            let out = self.write(key, values, kind);
            if !out.status().is_ok() {
                let _ = self.conn.execute_batch("ROLLBACK");
                return out;
            }
        }
        match self.conn.execute_batch("COMMIT") {
            Ok(()) => Outcome::ok(batch.len() as u64, batch.bytes()),
            Err(e) => {
                let _ = self.conn.execute_batch("ROLLBACK");
                outcome_of(e)
            }
        }
    }

    async fn delete(&mut self, key: &[u8]) -> Outcome {
        let mut st = match self.conn.prepare_cached(&self.sql.delete) {
            Ok(s) => s,
            Err(e) => return outcome_of(e),
        };
        match st.execute([Key(key)]) {
            Ok(0) => Outcome::of(Status::NotFound),
            Ok(_) => Outcome::ok(0, 0),
            Err(e) => outcome_of(e),
        }
    }

    /// DELETE without WHERE (SQLite's truncate optimization drops the pages).
    async fn clear(&mut self) -> Result<Option<u64>, BindingError> {
        let n = self
            .conn
            .execute(&format!("DELETE FROM {}", self.sql.table), [])
            .map_err(|e| BindingError::Io(e.to_string()))?;
        Ok(Some(n as u64))
    }
}

#[cfg(test)]
mod tests;
