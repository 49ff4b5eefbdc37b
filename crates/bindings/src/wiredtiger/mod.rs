//! `wiredtiger:///dir`: WiredTiger, linked from the system's libwiredtiger
//! (Debian's libwiredtiger-dev 3.2.1) through a small C shim
//! (`csrc/wt_shim.c`). One table (`table:<table>`) with raw byte keys and
//! values; one WiredTiger session and cursor per yardstick session.
//!
//! URL options (defaults in brackets): `cache_size` ([100MiB], WiredTiger's
//! default), `compression` (snappy, zlib or none [snappy], MongoDB's default),
//! `leaf_page_max` ([32KiB]), `internal_page_max` ([4KiB]), `log` (write-ahead
//! log [true]; 32 MiB files, not preallocated, so they do not swamp the
//! bytes on disk), `sync` (fsync the log at every commit [false]),
//! `checkpoint` (seconds between checkpoints, 0 for none [60], MongoDB's).
//!
//! Statistics are on (`statistics=(fast)`, MongoDB's default) and observed at
//! every interval ([`stats`]); `yardstick compact` compacts the table.
mod stats;

use crate::embedded::{bool_option, choice_option, int_option, size_option, Dir, Engine, EngineResult, Handle, KvBinding};
use crate::registry::{Capabilities, Descriptor, Registered};
use crate::url::Target;
use std::collections::BTreeMap;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::PathBuf;
use std::sync::Arc;
use yardstick_core::binding::*;
use yardstick_core::observe::Value;

pub(crate) const OPTIONS: &[&str] = &[
    "cache_size",
    "compression",
    "leaf_page_max",
    "internal_page_max",
    "log",
    "sync",
    "checkpoint",
];

#[repr(C)]
struct WtConnection(c_void);
#[repr(C)]
struct WtSession(c_void);
#[repr(C)]
struct WtCursor(c_void);

extern "C" {
    fn ys_wt_notfound() -> c_int;
    fn ys_wt_strerror(err: c_int) -> *const c_char;
    fn ys_wt_version(major: *mut c_int, minor: *mut c_int, patch: *mut c_int) -> *const c_char;
    fn ys_wt_open(
        home: *const c_char,
        config: *const c_char,
        conn: *mut *mut WtConnection,
    ) -> c_int;
    fn ys_wt_close(conn: *mut WtConnection) -> c_int;
    fn ys_wt_table(
        conn: *mut WtConnection,
        uri: *const c_char,
        config: *const c_char,
        must_exist: c_int,
    ) -> c_int;
    fn ys_wt_session(
        conn: *mut WtConnection,
        uri: *const c_char,
        s: *mut *mut WtSession,
        c: *mut *mut WtCursor,
    ) -> c_int;
    fn ys_wt_session_close(s: *mut WtSession) -> c_int;
    fn ys_wt_get(
        c: *mut WtCursor,
        k: *const c_void,
        kl: usize,
        v: *mut *const c_void,
        vl: *mut usize,
    ) -> c_int;
    fn ys_wt_reset(c: *mut WtCursor) -> c_int;
    fn ys_wt_put(
        c: *mut WtCursor,
        k: *const c_void,
        kl: usize,
        v: *const c_void,
        vl: usize,
    ) -> c_int;
    fn ys_wt_remove(c: *mut WtCursor, k: *const c_void, kl: usize) -> c_int;
    fn ys_wt_seek(c: *mut WtCursor, k: *const c_void, kl: usize) -> c_int;
    fn ys_wt_next(c: *mut WtCursor) -> c_int;
    fn ys_wt_current(
        c: *mut WtCursor,
        k: *mut *const c_void,
        kl: *mut usize,
        v: *mut *const c_void,
        vl: *mut usize,
    ) -> c_int;
    fn ys_wt_begin(s: *mut WtSession) -> c_int;
    fn ys_wt_commit(s: *mut WtSession) -> c_int;
    fn ys_wt_rollback(s: *mut WtSession) -> c_int;
    fn ys_wt_checkpoint(conn: *mut WtConnection) -> c_int;
    fn ys_wt_stats(
        conn: *mut WtConnection,
        row: unsafe extern "C" fn(*mut c_void, *const c_char, i64),
        ctx: *mut c_void,
    ) -> c_int;
    fn ys_wt_compact(conn: *mut WtConnection, uri: *const c_char) -> c_int;
}

/// Collects one statistics row into the `Vec<(String, i64)>` behind `ctx`.
unsafe extern "C" fn stat_row(ctx: *mut c_void, desc: *const c_char, value: i64) {
    // SAFETY: `ctx` is the Vec the caller passed for this call only.
    let rows = unsafe { &mut *ctx.cast::<Vec<(String, i64)>>() };
    // SAFETY: `desc` is a NUL-terminated string valid during the call.
    let desc = unsafe { CStr::from_ptr(desc) }.to_string_lossy().into_owned();
    rows.push((desc, value));
}

/// A WiredTiger return code that is not 0, said with wiredtiger_strerror.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct WtError(pub c_int);

impl std::fmt::Display for WtError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // SAFETY: wiredtiger_strerror returns a static or thread-local string.
        let text = unsafe { CStr::from_ptr(ys_wt_strerror(self.0)) };
        write!(f, "WiredTiger error {}: {}", self.0, text.to_string_lossy())
    }
}

impl std::error::Error for WtError {}

fn check(code: c_int) -> Result<(), WtError> {
    if code == 0 {
        Ok(())
    } else {
        Err(WtError(code))
    }
}

struct Conn(*mut WtConnection);

// SAFETY: a WT_CONNECTION is thread-safe (WiredTiger's documented guarantee).
unsafe impl Send for Conn {}
// SAFETY: as above: sessions are opened from it concurrently, which WiredTiger allows.
unsafe impl Sync for Conn {}

impl Drop for Conn {
    fn drop(&mut self) {
        // SAFETY: every session holds an Arc<Conn>, so all are closed by now;
        // closing checkpoints the data.
        unsafe { ys_wt_close(self.0) };
    }
}

pub struct WtEngine {
    conn: Arc<Conn>,
    uri: CString,
    version: String,
    settings: BTreeMap<String, String>,
}

pub(crate) type WtBinding = KvBinding<WtEngine>;

/// The compressor extension's shared object, installed next to the library.
fn extension(name: &str) -> Option<PathBuf> {
    let file = format!("libwiredtiger_{name}.so");
    [
        format!("/usr/lib/{}-linux-gnu", std::env::consts::ARCH),
        "/usr/lib".into(),
        "/usr/local/lib".into(),
        "/usr/lib64".into(),
    ]
    .iter()
    .map(|d| PathBuf::from(d).join(&file))
    .find(|p| p.exists())
}

pub fn open(target: &Target, opts: &OpenOptions) -> Result<WtBinding, BindingError> {
    target.allow_only(OPTIONS)?;
    let name = "wiredtiger";
    let cache_size = size_option(target, name, "cache_size")?.unwrap_or(100 << 20);
    if cache_size < 1 << 20 {
        return Err(BindingError::Config(format!(
            "wiredtiger cache_size={cache_size} is too small: WiredTiger needs at least 1MiB"
        )));
    }
    let compression = choice_option(target, name, "compression", &["snappy", "zlib", "none"])?
        .unwrap_or("snappy");
    let leaf = size_option(target, name, "leaf_page_max")?.unwrap_or(32 << 10);
    let internal = size_option(target, name, "internal_page_max")?.unwrap_or(4 << 10);
    for (opt, v) in [("leaf_page_max", leaf), ("internal_page_max", internal)] {
        if !(512..=512 << 20).contains(&v) || v % 512 != 0 {
            return Err(BindingError::Config(format!(
                "wiredtiger {opt}={v} is not valid: use a multiple of 512 bytes up to 512MiB"
            )));
        }
    }
    let log = bool_option(target, name, "log")?.unwrap_or(true);
    let sync = bool_option(target, name, "sync")?.unwrap_or(false);
    if sync && !log {
        return Err(BindingError::Config(
            "wiredtiger sync=true needs the log: drop log=false".into(),
        ));
    }
    let checkpoint = int_option(target, name, "checkpoint", 0..=100_000)?.unwrap_or(60);
    let mut extensions = String::new();
    if compression != "none" {
        let so = extension(compression).ok_or_else(|| {
            BindingError::Config(format!(
                "wiredtiger compression={compression} needs libwiredtiger_{compression}.so, which is not installed (Debian: apt-get install libwiredtiger-dev); or use compression=none"
            ))
        })?;
        extensions = format!(",extensions=[{}]", so.display());
    }
    let dir = Dir::open(target, opts, "WiredTiger")?;
    if !opts.create && !dir.path.join("WiredTiger").exists() {
        return Err(BindingError::Unavailable(format!(
            "WiredTiger database {} does not exist: run `yardstick load` with the same --db first",
            dir.path.display()
        )));
    }
    let config = format!(
        "create,cache_size={cache_size},session_max={},log=(enabled={log},file_max=32MB,prealloc=false),transaction_sync=(enabled={sync},method=fsync),checkpoint=(wait={checkpoint}),statistics=(fast){extensions}",
        opts.sessions.max(1) + 64
    );
    let home = CString::new(dir.path.as_os_str().as_encoded_bytes()).map_err(|_| {
        BindingError::Config("the WiredTiger directory path contains a NUL byte".into())
    })?;
    let cfg = CString::new(config.clone()).expect("no NUL in the built config");
    let mut conn = std::ptr::null_mut();
    // SAFETY: valid strings; WiredTiger fills `conn` on success.
    check(unsafe { ys_wt_open(home.as_ptr(), cfg.as_ptr(), &mut conn) }).map_err(|e| {
        BindingError::Io(format!(
            "cannot open WiredTiger database {}: {e}",
            dir.path.display()
        ))
    })?;
    let conn = Arc::new(Conn(conn));
    let table = &opts.schema.table;
    let uri = CString::new(format!("table:{table}"))
        .map_err(|_| BindingError::Config("the table name contains a NUL byte".into()))?;
    let table_config = format!(
        "key_format=u,value_format=u,leaf_page_max={leaf},internal_page_max={internal},block_compressor={}",
        if compression == "none" { "" } else { compression }
    );
    let tcfg = CString::new(table_config.clone()).expect("no NUL in the built config");
    // SAFETY: an open connection and valid strings.
    let code = unsafe {
        ys_wt_table(
            conn.0,
            uri.as_ptr(),
            tcfg.as_ptr(),
            c_int::from(!opts.create),
        )
    };
    // SAFETY: a constant getter.
    if !opts.create && code == unsafe { ys_wt_notfound() } {
        return Err(BindingError::Unavailable(format!(
            "WiredTiger database {} has no table {table}: run `yardstick load` with the same --db and table first",
            dir.path.display()
        )));
    }
    check(code)
        .map_err(|e| BindingError::Io(format!("cannot create WiredTiger table {table}: {e}")))?;
    let (mut major, mut minor, mut patch) = (0, 0, 0);
    // SAFETY: plain version getter.
    unsafe { ys_wt_version(&mut major, &mut minor, &mut patch) };
    let version = format!("{major}.{minor}.{patch}");
    let mut settings = BTreeMap::new();
    for (k, v) in [
        ("cache_size", cache_size.to_string()),
        ("compression", compression.to_string()),
        ("leaf_page_max", leaf.to_string()),
        ("internal_page_max", internal.to_string()),
        ("log", log.to_string()),
        ("sync", sync.to_string()),
        ("checkpoint_wait_secs", checkpoint.to_string()),
        ("open_config", config),
        ("table_config", table_config),
    ] {
        settings.insert(k.to_string(), v);
    }
    let engine = WtEngine {
        conn,
        uri,
        version,
        settings,
    };
    Ok(KvBinding::new(engine, dir, opts, "wiredtiger"))
}

impl WtEngine {
    /// Every connection statistic: its description and value.
    fn stat_rows(&self) -> Result<Vec<(String, i64)>, WtError> {
        let mut rows: Vec<(String, i64)> = Vec::with_capacity(512);
        let ctx = (&mut rows as *mut Vec<(String, i64)>).cast::<c_void>();
        // SAFETY: an open connection; `stat_row` only touches `rows` during the call
        check(unsafe { ys_wt_stats(self.conn.0, stat_row, ctx) })?;
        Ok(rows)
    }
}

impl Engine for WtEngine {
    type Handle = WtHandle;

    fn handle(&self) -> Result<WtHandle, BindingError> {
        let (mut s, mut c) = (std::ptr::null_mut(), std::ptr::null_mut());
        // SAFETY: an open connection; the session is closed by WtHandle's Drop.
        check(unsafe { ys_wt_session(self.conn.0, self.uri.as_ptr(), &mut s, &mut c) })
            .map_err(|e| BindingError::Io(format!("cannot open a WiredTiger session: {e}")))?;
        Ok(WtHandle {
            session: s,
            cursor: c,
            // SAFETY: a constant getter.
            notfound: unsafe { ys_wt_notfound() },
            _conn: self.conn.clone(),
        })
    }

    fn flush(&self) -> EngineResult<()> {
        // SAFETY: an open connection; the shim opens and closes its own session.
        Ok(check(unsafe { ys_wt_checkpoint(self.conn.0) })?)
    }

    fn statistics(&self) -> Option<EngineResult<Vec<Value>>> {
        let rows = self.stat_rows();
        Some(
            rows.map(|rows| stats::values(rows.iter().map(|(d, v)| (d.as_str(), *v))))
                .map_err(Into::into),
        )
    }

    /// A checkpoint first: compaction works on what is in the file.
    fn compact(&self) -> Option<EngineResult<()>> {
        // SAFETY: an open connection and a table URI that outlives the call
        let r = self
            .flush()
            .and_then(|()| Ok(check(unsafe { ys_wt_compact(self.conn.0, self.uri.as_ptr()) })?));
        Some(r.and_then(|()| self.flush()))
    }

    fn info(&self) -> EngineInfo {
        EngineInfo {
            name: "wiredtiger".into(),
            version: self.version.clone(),
            settings: self.settings.clone(),
        }
    }
}

pub struct WtHandle {
    session: *mut WtSession,
    cursor: *mut WtCursor,
    notfound: c_int,
    _conn: Arc<Conn>,
}

impl Drop for WtHandle {
    fn drop(&mut self) {
        // SAFETY: closes the session (and its cursor) once, before the connection.
        unsafe { ys_wt_session_close(self.session) };
    }
}

impl WtHandle {
    /// Runs a cursor call, then releases the cursor's position.
    fn reset(&mut self) {
        // SAFETY: an open cursor.
        unsafe { ys_wt_reset(self.cursor) };
    }
}

impl Handle for WtHandle {
    fn get(&mut self, key: &[u8], out: &mut Vec<u8>) -> EngineResult<bool> {
        let (mut v, mut vl) = (std::ptr::null(), 0usize);
        // SAFETY: an open cursor; the value stays valid until the reset below.
        let code =
            unsafe { ys_wt_get(self.cursor, key.as_ptr().cast(), key.len(), &mut v, &mut vl) };
        let r = if code == 0 {
            out.clear();
            // SAFETY: `v` points to `vl` bytes owned by the cursor.
            out.extend_from_slice(unsafe { std::slice::from_raw_parts(v.cast::<u8>(), vl) });
            Ok(true)
        } else if code == self.notfound {
            Ok(false)
        } else {
            Err(WtError(code).into())
        };
        self.reset();
        r
    }

    fn put(&mut self, key: &[u8], value: &[u8]) -> EngineResult<()> {
        // SAFETY: an open cursor and valid slices (copied by WiredTiger).
        let code = unsafe {
            ys_wt_put(
                self.cursor,
                key.as_ptr().cast(),
                key.len(),
                value.as_ptr().cast(),
                value.len(),
            )
        };
        self.reset();
        Ok(check(code)?)
    }

    fn delete(&mut self, key: &[u8]) -> EngineResult<()> {
        // SAFETY: an open cursor and a valid slice.
        let code = unsafe { ys_wt_remove(self.cursor, key.as_ptr().cast(), key.len()) };
        self.reset();
        if code == self.notfound {
            return Ok(());
        }
        Ok(check(code)?)
    }

    fn scan(
        &mut self,
        start: &[u8],
        count: usize,
        row: &mut dyn FnMut(&[u8], &[u8]),
    ) -> EngineResult<()> {
        let c = self.cursor;
        // SAFETY: an open cursor; key and value stay valid until the next move.
        let mut code = unsafe { ys_wt_seek(c, start.as_ptr().cast(), start.len()) };
        let mut n = 0;
        while code == 0 && n < count {
            let (mut k, mut kl, mut v, mut vl) =
                (std::ptr::null(), 0usize, std::ptr::null(), 0usize);
            // SAFETY: an open cursor positioned by the seek or the last next.
            code = unsafe { ys_wt_current(c, &mut k, &mut kl, &mut v, &mut vl) };
            if code != 0 {
                break;
            }
            // SAFETY: `k` and `v` point to `kl` and `vl` bytes owned by the
            // cursor until its next move, after `row` has copied them.
            let (key, value) = unsafe {
                (
                    std::slice::from_raw_parts(k.cast::<u8>(), kl),
                    std::slice::from_raw_parts(v.cast::<u8>(), vl),
                )
            };
            row(key, value);
            n += 1;
            if n < count {
                // SAFETY: an open cursor; the slices above are no longer used.
                code = unsafe { ys_wt_next(c) };
            }
        }
        self.reset();
        if code == 0 || code == self.notfound {
            Ok(())
        } else {
            Err(WtError(code).into())
        }
    }

    fn put_batch(&mut self, rows: &[(&[u8], &[u8])]) -> EngineResult<()> {
        // SAFETY: an open session and cursor; one transaction for the batch.
        unsafe {
            check(ys_wt_begin(self.session))?;
            for (k, v) in rows {
                let code = ys_wt_put(
                    self.cursor,
                    k.as_ptr().cast(),
                    k.len(),
                    v.as_ptr().cast(),
                    v.len(),
                );
                if code != 0 {
                    ys_wt_rollback(self.session);
                    return Err(WtError(code).into());
                }
            }
            let code = ys_wt_commit(self.session);
            self.reset();
            Ok(check(code)?)
        }
    }
}

impl Registered for WtBinding {
    const DESCRIPTOR: Descriptor = Descriptor {
        schemes: &["wiredtiger"],
        server_port: None,
        flavours: &[],
        description: "WiredTiger (the system's libwiredtiger): cache size, snappy/zlib block compression, page sizes, log and checkpoints",
        example: "wiredtiger:///var/tmp/wt?cache_size=1GiB",
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

    fn open_fresh(opts: &OpenOptions) -> Result<WtBinding, BindingError> {
        open(
            &Target::parse(&fresh_url("wiredtiger", "?cache_size=16MiB"))?,
            opts,
        )
    }

    yardstick_core::conformance_suite!(open_fresh);
    crate::embedded::testing::engine_checks!("wiredtiger", "?cache_size=16MiB", open);

    #[test]
    fn every_kept_statistic_is_one_the_linked_library_has() {
        let opts = yardstick_core::conformance::options(InsertMode::Insert, UpdateMode::Update);
        let b = open_fresh(&opts).unwrap();
        let rows = b.engine().stat_rows().unwrap();
        let have: std::collections::HashSet<&str> = rows.iter().map(|(d, _)| d.as_str()).collect();
        let missing: Vec<&str> = stats::described().filter(|d| !have.contains(d)).collect();
        assert!(missing.is_empty(), "WiredTiger {} lacks {missing:?}", b.info().version);
    }

    #[test]
    fn observation_counts_cache_hits_checkpoints_and_compaction_runs() {
        let opts = yardstick_core::conformance::options(InsertMode::Insert, UpdateMode::Update);
        let b = open_fresh(&opts).unwrap();
        let mut h = b.engine().handle().unwrap();
        for i in 0..2000 {
            h.put(format!("user{i:08}").as_bytes(), &[b'w'; 300]).unwrap();
        }
        let mut src = b.statistics().expect("wiredtiger has statistics");
        let first = src.sample().unwrap();
        let mut out = Vec::new();
        for i in 0..2000 {
            assert!(h.get(format!("user{i:08}").as_bytes(), &mut out).unwrap());
        }
        b.compact().unwrap();
        let second = src.sample().unwrap();
        let get = |vs: &[Value], n: &str| vs.iter().find(|v| v.name == n).unwrap().value;
        assert!(get(&second, "db.cache.hits") - get(&first, "db.cache.hits") >= 2000.0);
        assert!(get(&second, "db.checkpoints") > get(&first, "db.checkpoints"));
        assert!(get(&second, "db.cache.bytes") > 0.0);
        let ratio = get(&second, "db.cache_hit_ratio");
        assert!(ratio > 0.5 && ratio <= 1.0, "{ratio}");
    }
}
