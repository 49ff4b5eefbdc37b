//! MariaDB's and MySQL's own statistics for observation, on a connection of
//! their own: `SHOW GLOBAL STATUS` (statements by kind, the InnoDB buffer
//! pool's reads and hit ratio, row lock waits and time, data and log bytes,
//! MyRocks's block cache, compaction and stalls), wait events from
//! performance_schema where it is on, and the global variables that differ
//! from the compiled defaults.
use super::connect;
use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Opts};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;
use yardstick_core::observe::remote::{HitRatio, Remote};
use yardstick_core::observe::{SourceError, Value};

/// Status variables kept as counters: variable, name, unit, scale to the unit.
const COUNTERS: &[(&str, &str, &str, f64)] = &[
    ("Questions", "db.statements", "operations", 1.0),
    ("Com_select", "db.com.select", "operations", 1.0),
    ("Com_insert", "db.com.insert", "operations", 1.0),
    ("Com_update", "db.com.update", "operations", 1.0),
    ("Com_delete", "db.com.delete", "operations", 1.0),
    ("Com_commit", "db.com.commit", "operations", 1.0),
    ("Com_rollback", "db.com.rollback", "operations", 1.0),
    ("Com_stmt_execute", "db.com.stmt_execute", "operations", 1.0),
    ("Bytes_received", "db.net_input_bytes", "bytes", 1.0),
    ("Bytes_sent", "db.net_output_bytes", "bytes", 1.0),
    ("Created_tmp_disk_tables", "db.tmp_disk_tables", "operations", 1.0),
    ("Innodb_buffer_pool_read_requests", "db.buffer_pool.read_requests", "operations", 1.0),
    ("Innodb_buffer_pool_reads", "db.buffer_pool.reads", "operations", 1.0),
    ("Innodb_buffer_pool_write_requests", "db.buffer_pool.write_requests", "operations", 1.0),
    ("Innodb_buffer_pool_wait_free", "db.buffer_pool.wait_free", "operations", 1.0),
    ("Innodb_row_lock_waits", "db.row_lock_waits", "operations", 1.0),
    ("Innodb_row_lock_time", "db.row_lock_time", "s", 1e-3),
    ("Innodb_data_read", "db.innodb.data_read_bytes", "bytes", 1.0),
    ("Innodb_data_written", "db.innodb.data_written_bytes", "bytes", 1.0),
    ("Innodb_os_log_written", "db.innodb.log_written_bytes", "bytes", 1.0),
    ("Innodb_rows_read", "db.rows_read", "operations", 1.0),
    ("Innodb_rows_inserted", "db.rows_inserted", "operations", 1.0),
    ("Innodb_rows_updated", "db.rows_updated", "operations", 1.0),
    ("Innodb_rows_deleted", "db.rows_deleted", "operations", 1.0),
    ("Rocksdb_block_cache_hit", "db.rocksdb.block_cache_hit", "operations", 1.0),
    ("Rocksdb_block_cache_miss", "db.rocksdb.block_cache_miss", "operations", 1.0),
    ("Rocksdb_compact_read_bytes", "db.rocksdb.compact_read_bytes", "bytes", 1.0),
    ("Rocksdb_compact_write_bytes", "db.rocksdb.compact_write_bytes", "bytes", 1.0),
    ("Rocksdb_flush_write_bytes", "db.rocksdb.flush_write_bytes", "bytes", 1.0),
    ("Rocksdb_stall_micros", "db.rocksdb.stall_time", "s", 1e-6),
    ("Rocksdb_wal_bytes", "db.rocksdb.wal_bytes", "bytes", 1.0),
    ("Rocksdb_rows_read", "db.rocksdb.rows_read", "operations", 1.0),
    ("Rocksdb_rows_inserted", "db.rocksdb.rows_inserted", "operations", 1.0),
    ("Rocksdb_rows_updated", "db.rocksdb.rows_updated", "operations", 1.0),
];

/// Status variables kept as gauges.
const GAUGES: &[(&str, &str, &str)] = &[
    ("Threads_running", "db.threads.running", "threads"),
    ("Threads_connected", "db.threads.connected", "threads"),
    ("Innodb_buffer_pool_pages_dirty", "db.buffer_pool.pages_dirty", "pages"),
    ("Innodb_buffer_pool_pages_free", "db.buffer_pool.pages_free", "pages"),
    ("Rocksdb_memtable_total", "db.rocksdb.memtable_bytes", "bytes"),
];

/// Wait events with time on them, in picoseconds, from performance_schema.
const WAITS: &str = "SELECT EVENT_NAME, SUM_TIMER_WAIT FROM performance_schema.events_waits_summary_global_by_event_name \
     WHERE SUM_TIMER_WAIT > 0 AND EVENT_NAME <> 'idle'";

/// Global variables not at their compiled default: MariaDB's view, then MySQL 8's.
const CHANGED: &[&str] = &[
    "SELECT VARIABLE_NAME, GLOBAL_VALUE FROM information_schema.SYSTEM_VARIABLES \
     WHERE GLOBAL_VALUE_ORIGIN <> 'COMPILE-TIME' AND GLOBAL_VALUE IS NOT NULL",
    "SELECT i.VARIABLE_NAME, g.VARIABLE_VALUE FROM performance_schema.variables_info i \
     JOIN performance_schema.global_variables g USING (VARIABLE_NAME) WHERE i.VARIABLE_SOURCE <> 'COMPILED'",
];

/// The values of `SHOW GLOBAL STATUS` rows (names compared without case:
/// MariaDB and MySQL spell some differently).
pub(crate) fn parse_status(rows: &[(String, String)]) -> Vec<Value> {
    let by: BTreeMap<String, &str> = rows
        .iter()
        .map(|(k, v)| (k.to_ascii_lowercase(), v.as_str()))
        .collect();
    let num = |k: &str| by.get(&k.to_ascii_lowercase()).and_then(|v| v.parse::<f64>().ok());
    let mut out = Vec::new();
    for (var, name, unit, scale) in COUNTERS {
        if let Some(v) = num(var) {
            out.push(Value::counter(*name, unit, v * scale));
        }
    }
    for (var, name, unit) in GAUGES {
        if let Some(v) = num(var) {
            out.push(Value::gauge(*name, unit, v));
        }
    }
    out
}

/// MyRocks's files and bytes per level, over its column families.
const LEVELS: &str = "SELECT LEVEL, TYPE, VALUE FROM information_schema.ROCKSDB_COMPACTION_STATS \
     WHERE TYPE IN ('NumFiles', 'SizeBytes') AND LEVEL LIKE 'L%'";

/// `ROCKSDB_COMPACTION_STATS` rows (level, type, value) as
/// `db.level.LN.files` and `.bytes`, every level from L0 to the deepest
/// seen (0 where a level has none), summed over the column families.
pub(crate) fn parse_levels(rows: &[(String, String, f64)]) -> Vec<Value> {
    let mut files: BTreeMap<usize, f64> = BTreeMap::new();
    let mut bytes: BTreeMap<usize, f64> = BTreeMap::new();
    for (level, kind, v) in rows {
        let Some(n) = level.strip_prefix('L').and_then(|n| n.parse::<usize>().ok()) else {
            continue;
        };
        let into = if kind == "NumFiles" { &mut files } else { &mut bytes };
        *into.entry(n).or_default() += v;
    }
    let deepest = files.keys().chain(bytes.keys()).max().copied().unwrap_or(0);
    (0..=deepest)
        .flat_map(|n| {
            [
                Value::gauge(format!("db.level.L{n}.files"), "files", files.get(&n).copied().unwrap_or(0.0)),
                Value::gauge(format!("db.level.L{n}.bytes"), "bytes", bytes.get(&n).copied().unwrap_or(0.0)),
            ]
        })
        .collect()
}

pub(crate) struct MysqlStats {
    opts: Opts,
    connect_timeout: Duration,
    conn: Option<Conn>,
    /// performance_schema's wait events are read (it is on).
    waits: Option<bool>,
    /// Every wait event seen: each is 0 in a sample it is absent from.
    seen: BTreeSet<String>,
    /// MyRocks's levels are read (`false` once the table refused).
    levels: bool,
    /// Buffer pool reads served from memory against those from disk.
    hits: HitRatio,
    warnings: Vec<String>,
    settings: BTreeMap<String, String>,
}

impl MysqlStats {
    pub(crate) fn new(opts: Opts, connect_timeout: Duration) -> MysqlStats {
        MysqlStats {
            opts,
            connect_timeout,
            conn: None,
            waits: None,
            seen: BTreeSet::new(),
            levels: true,
            hits: HitRatio::default(),
            warnings: Vec::new(),
            settings: BTreeMap::new(),
        }
    }

    async fn first(&mut self, c: &mut Conn) {
        for q in CHANGED {
            if let Ok(rows) = c.query::<(String, String), _>(*q).await {
                for (k, v) in rows {
                    self.settings.insert(k.to_ascii_lowercase(), v);
                }
                break;
            }
        }
        if let Ok(Some(v)) = c.query_first::<String, _>("SELECT VERSION()").await {
            self.settings.insert("version()".into(), v);
        }
        let on = c
            .query_first::<String, _>("SELECT @@performance_schema")
            .await
            .ok()
            .flatten()
            .is_some_and(|v| v == "1" || v.eq_ignore_ascii_case("on"));
        if !on {
            self.warnings.push("performance_schema is off, so no wait events: start the server with performance_schema=ON to see them".into());
        }
        self.waits = Some(on);
    }
}

impl Remote for MysqlStats {
    fn name(&self) -> String {
        "mysql".into()
    }

    async fn read(&mut self) -> Result<Vec<Value>, SourceError> {
        let failed = |e: mysql_async::Error| SourceError::Failed(super::error_text(&e));
        let mut c = match self.conn.take() {
            Some(c) => c,
            None => {
                let mut c = connect(&self.opts, self.connect_timeout).await.map_err(failed)?;
                if self.waits.is_none() {
                    self.first(&mut c).await;
                }
                c
            }
        };
        let rows: Vec<(String, String)> = c.query("SHOW GLOBAL STATUS").await.map_err(failed)?;
        let mut out = parse_status(&rows);
        if self.waits == Some(true) {
            match c.query::<(String, u64), _>(WAITS).await {
                Ok(rows) => {
                    let now: BTreeMap<String, f64> = rows
                        .into_iter()
                        .map(|(k, ps)| (k, ps as f64 / 1e12))
                        .collect();
                    self.seen.extend(now.keys().cloned());
                    for w in &self.seen {
                        let s = now.get(w).copied().unwrap_or(0.0);
                        out.push(Value::counter(format!("db.wait.{w}"), "s", s));
                    }
                }
                Err(e) => {
                    self.waits = Some(false);
                    self.warnings.push(format!(
                        "performance_schema's wait events left out: {}",
                        super::error_text(&e)
                    ));
                }
            }
        }
        // MyRocks loaded: its LSM tree per level, as the embedded RocksDB's
        if self.levels && out.iter().any(|v| v.name == "db.rocksdb.rows_read") {
            match c.query::<(String, String, f64), _>(LEVELS).await {
                Ok(rows) => out.extend(parse_levels(&rows)),
                Err(e) => {
                    self.levels = false;
                    self.warnings.push(format!(
                        "MyRocks's files per level left out (information_schema.ROCKSDB_COMPACTION_STATS): {}",
                        super::error_text(&e)
                    ));
                }
            }
        }
        self.conn = Some(c);
        let get = |n: &str| out.iter().find(|v| v.name == n).map(|v| v.value);
        if let (Some(req), Some(disk)) = (get("db.buffer_pool.read_requests"), get("db.buffer_pool.reads")) {
            out.extend(self.hits.next((req - disk).max(0.0), disk));
        }
        Ok(out)
    }

    fn reset(&mut self) {
        self.conn = None;
    }

    fn warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
    }

    fn configuration(&mut self) -> BTreeMap<String, String> {
        self.settings.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_rows_become_counters_and_gauges_in_their_units() {
        let rows: Vec<(String, String)> = [
            ("Com_select", "100"),
            ("Innodb_row_lock_time", "2500"),
            ("Threads_running", "3"),
            ("rocksdb_stall_micros", "1500000"),
            ("Uptime", "99"),
            ("Innodb_buffer_pool_reads", "not a number"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let v = parse_status(&rows);
        let get = |n: &str| v.iter().find(|x| x.name == n).map(|x| (x.value, x.unit));
        assert_eq!(get("db.com.select"), Some((100.0, "operations")));
        assert_eq!(get("db.row_lock_time"), Some((2.5, "s")));
        assert_eq!(get("db.threads.running"), Some((3.0, "threads")));
        assert_eq!(get("db.rocksdb.stall_time"), Some((1.5, "s")));
        let rows = |r: &[(&str, &str, f64)]| -> Vec<(String, String, f64)> {
            r.iter().map(|(a, b, c)| (a.to_string(), b.to_string(), *c)).collect()
        };
        let l = parse_levels(&rows(&[
            ("L0", "NumFiles", 2.0),
            ("L0", "SizeBytes", 100.0),
            ("L0", "NumFiles", 1.0),
            ("L2", "NumFiles", 4.0),
            ("Sum", "NumFiles", 7.0),
        ]));
        let lv = |n: &str| l.iter().find(|v| v.name == n).map(|v| v.value);
        assert_eq!(lv("db.level.L0.files"), Some(3.0));
        assert_eq!(lv("db.level.L0.bytes"), Some(100.0));
        assert_eq!(lv("db.level.L1.files"), Some(0.0));
        assert_eq!(lv("db.level.L2.files"), Some(4.0));
        assert_eq!(l.len(), 6, "L0 to L2, files and bytes");
        assert_eq!(parse_levels(&[]).len(), 2);
        assert_eq!(get("db.buffer_pool.reads"), None);
        assert_eq!(v.len(), 4);
    }
}
