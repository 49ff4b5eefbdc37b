//! RocksDB's own statistics for observation, read from the open database
//! (no query, no flush): files and bytes per level from the live-file list;
//! the compaction backlog, running flushes and compactions, memtables, write
//! delay and stop, block cache use and the estimated keys from its integer
//! properties; write stalls by cause and the cumulative stall time from
//! `rocksdb.cfstats-no-file-histogram` and `rocksdb.dbstats`; and, where the
//! URL sets `statistics=true`, the tickers (block cache hits and misses,
//! where reads were found, bloom filter savings, compaction and WAL bytes).
use rocksdb::DB;
use yardstick_core::observe::Value;

/// Levels reported every sample, empty or not, so the series keep their
/// columns (RocksDB's default `num_levels`, which the binding keeps).
pub(crate) const LEVELS: usize = 7;

/// Integer properties kept as gauges: property, name, unit.
const GAUGES: &[(&str, &str, &str)] = &[
    ("rocksdb.estimate-pending-compaction-bytes", "db.compaction.pending_bytes", "bytes"),
    ("rocksdb.num-running-compactions", "db.compaction.running", "compactions"),
    ("rocksdb.compaction-pending", "db.compaction.pending", "flag"),
    ("rocksdb.num-running-flushes", "db.flush.running", "flushes"),
    ("rocksdb.cur-size-all-mem-tables", "db.memtable.bytes", "bytes"),
    ("rocksdb.num-immutable-mem-table", "db.memtable.immutable", "memtables"),
    ("rocksdb.actual-delayed-write-rate", "db.write.delayed_rate", "bytes/s"),
    ("rocksdb.is-write-stopped", "db.write.stopped", "flag"),
    ("rocksdb.block-cache-usage", "db.block_cache.bytes", "bytes"),
    ("rocksdb.block-cache-pinned-usage", "db.block_cache.pinned_bytes", "bytes"),
    ("rocksdb.estimate-num-keys", "db.keys", "keys"),
    ("rocksdb.live-sst-files-size", "db.sst.live_bytes", "bytes"),
    ("rocksdb.estimate-table-readers-mem", "db.table_readers.bytes", "bytes"),
];

/// Tickers of `statistics=true` kept as counters: ticker, name, unit.
const TICKERS: &[(&str, &str, &str)] = &[
    ("rocksdb.block.cache.hit", "db.cache.hits", "operations"),
    ("rocksdb.block.cache.miss", "db.cache.misses", "operations"),
    ("rocksdb.block.cache.data.hit", "db.cache.data_hits", "operations"),
    ("rocksdb.block.cache.data.miss", "db.cache.data_misses", "operations"),
    ("rocksdb.bloom.filter.useful", "db.bloom.useful", "operations"),
    ("rocksdb.memtable.hit", "db.get.found.memtable", "operations"),
    ("rocksdb.l0.hit", "db.get.found.L0", "operations"),
    ("rocksdb.l1.hit", "db.get.found.L1", "operations"),
    ("rocksdb.l2andup.hit", "db.get.found.L2_up", "operations"),
    ("rocksdb.compact.read.bytes", "db.compaction.read_bytes", "bytes"),
    ("rocksdb.compact.write.bytes", "db.compaction.write_bytes", "bytes"),
    ("rocksdb.flush.write.bytes", "db.flush.write_bytes", "bytes"),
    ("rocksdb.wal.bytes", "db.wal.bytes", "bytes"),
];

/// Everything the open database tells now; `tickers` is the statistics
/// dump of its options where statistics are on.
pub(crate) fn read(db: &DB, tickers: Option<&str>) -> Result<Vec<Value>, rocksdb::Error> {
    let mut out = Vec::with_capacity(64);
    let (mut files, mut bytes) = ([0u64; LEVELS], [0u64; LEVELS]);
    for f in db.live_files()? {
        let l = (f.level.max(0) as usize).min(LEVELS - 1);
        files[l] += 1;
        bytes[l] += f.size as u64;
    }
    for l in 0..LEVELS {
        out.push(Value::gauge(format!("db.level.L{l}.files"), "files", files[l] as f64));
        out.push(Value::gauge(format!("db.level.L{l}.bytes"), "bytes", bytes[l] as f64));
    }
    for (prop, name, unit) in GAUGES {
        if let Some(v) = db.property_int_value(*prop)? {
            out.push(Value::gauge(*name, unit, v as f64));
        }
    }
    if let Some(text) = db.property_value("rocksdb.cfstats-no-file-histogram")? {
        out.extend(stalls(&text));
        if tickers.is_none() {
            out.extend(cumulative_compaction(&text));
        }
    }
    if let Some(text) = db.property_value("rocksdb.dbstats")? {
        out.extend(stall_time(&text));
    }
    if let Some(text) = tickers {
        out.extend(ticker_values(text));
    }
    Ok(out)
}

/// The cumulative write stall counts by cause, from the line
/// `Stalls(count): 0 level0_slowdown, ..., 0 memtable_slowdown, interval 0 total count`.
pub(crate) fn stalls(cfstats: &str) -> Vec<Value> {
    let Some(line) = cfstats.lines().find_map(|l| l.trim().strip_prefix("Stalls(count):")) else {
        return Vec::new();
    };
    line.split(',')
        .filter_map(|part| {
            let (n, cause) = part.trim().split_once(' ')?;
            let n: f64 = n.parse().ok()?;
            let cause = cause.trim().replace(' ', "_");
            Some(Value::counter(format!("db.stalls.{cause}"), "stalls", n))
        })
        .collect()
}

/// Compaction's bytes and time since open from the line
/// `Cumulative compaction: 1.25 GB write, 4.10 MB/s write, 1.10 GB read, 3.60 MB/s read, 12.3 seconds`
/// (10 MB resolution: the tickers of `statistics=true` are exact).
pub(crate) fn cumulative_compaction(cfstats: &str) -> Vec<Value> {
    let Some(line) = cfstats
        .lines()
        .find_map(|l| l.trim().strip_prefix("Cumulative compaction:"))
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for part in line.split(',') {
        let words: Vec<&str> = part.split_whitespace().collect();
        let Some(n) = words.first().and_then(|w| w.parse::<f64>().ok()) else {
            continue;
        };
        match words[1..] {
            ["GB", "write"] => out.push(Value::counter("db.compaction.write_bytes", "bytes", n * GIB)),
            ["GB", "read"] => out.push(Value::counter("db.compaction.read_bytes", "bytes", n * GIB)),
            ["seconds"] => out.push(Value::counter("db.compaction.time", "s", n)),
            _ => {}
        }
    }
    out
}

const GIB: f64 = (1u64 << 30) as f64;

/// The time writes were stalled since open, from `rocksdb.dbstats`'s
/// `Cumulative stall: 00:00:1.250 H:M:S, 0.4 percent`.
pub(crate) fn stall_time(dbstats: &str) -> Option<Value> {
    let line = dbstats
        .lines()
        .find_map(|l| l.trim().strip_prefix("Cumulative stall:"))?;
    let hms = line.split_whitespace().next()?;
    let mut secs = 0.0;
    for part in hms.split(':') {
        secs = secs * 60.0 + part.parse::<f64>().ok()?;
    }
    Some(Value::counter("db.stall_time", "s", secs))
}

/// The kept tickers of a statistics dump (`rocksdb.block.cache.hit COUNT : 12`).
pub(crate) fn ticker_values(dump: &str) -> Vec<Value> {
    dump.lines()
        .filter_map(|l| {
            let (ticker, n) = l.split_once(" COUNT : ")?;
            let (_, name, unit) = TICKERS.iter().find(|(t, _, _)| *t == ticker.trim())?;
            Some(Value::counter(*name, unit, n.trim().parse().ok()?))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(vs: &[Value], name: &str) -> Option<f64> {
        vs.iter().find(|v| v.name == name).map(|v| v.value)
    }

    #[test]
    fn stalls_are_counted_by_cause_and_the_interval_total_is_left_out() {
        let text = "** Compaction Stats [default] **\n\
            Stalls(count): 3 level0_slowdown, 0 level0_slowdown_with_compaction, 2 level0_numfiles, \
            0 level0_numfiles_with_compaction, 1 stop for pending_compaction_bytes, \
            4 slowdown for pending_compaction_bytes, 0 memtable_compaction, 5 memtable_slowdown, \
            interval 7 total count\n";
        let v = stalls(text);
        assert_eq!(named(&v, "db.stalls.level0_slowdown"), Some(3.0));
        assert_eq!(named(&v, "db.stalls.level0_numfiles"), Some(2.0));
        assert_eq!(named(&v, "db.stalls.stop_for_pending_compaction_bytes"), Some(1.0));
        assert_eq!(named(&v, "db.stalls.slowdown_for_pending_compaction_bytes"), Some(4.0));
        assert_eq!(named(&v, "db.stalls.memtable_slowdown"), Some(5.0));
        assert_eq!(v.len(), 8, "{v:?}");
        assert!(stalls("no such line").is_empty());
    }

    #[test]
    fn cumulative_compaction_and_stall_time_are_read_in_bytes_and_seconds() {
        let cf = "Cumulative compaction: 1.50 GB write, 4.10 MB/s write, 0.25 GB read, 3.60 MB/s read, 12.3 seconds\n";
        let v = cumulative_compaction(cf);
        assert_eq!(named(&v, "db.compaction.write_bytes"), Some(1.5 * GIB));
        assert_eq!(named(&v, "db.compaction.read_bytes"), Some(0.25 * GIB));
        assert_eq!(named(&v, "db.compaction.time"), Some(12.3));
        assert_eq!(v.len(), 3);
        let db = "Cumulative writes: 10K writes\nCumulative stall: 01:02:3.500 H:M:S, 0.4 percent\n";
        assert_eq!(stall_time(db).unwrap().value, 3723.5);
        assert!(stall_time("Cumulative stall: garbage").is_none());
    }

    #[test]
    fn tickers_are_kept_by_name_and_histograms_are_not() {
        let dump = "rocksdb.block.cache.miss COUNT : 40\n\
            rocksdb.block.cache.hit COUNT : 60\n\
            rocksdb.l0.hit COUNT : 7\n\
            rocksdb.number.keys.read COUNT : 100\n\
            rocksdb.db.get.micros P50 : 1.0 P95 : 2.0 P99 : 3.0 P100 : 9.0 COUNT : 100 SUM : 150\n";
        let v = ticker_values(dump);
        assert_eq!(named(&v, "db.cache.hits"), Some(60.0));
        assert_eq!(named(&v, "db.cache.misses"), Some(40.0));
        assert_eq!(named(&v, "db.get.found.L0"), Some(7.0));
        assert_eq!(v.len(), 3, "{v:?}");
    }
}
