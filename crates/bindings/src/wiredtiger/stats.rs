//! WiredTiger's own statistics for observation, from a `statistics:` cursor
//! on the connection (the binding opens it with `statistics=(fast)`,
//! MongoDB's default): the cache's size, dirty bytes, pages read and
//! requested (its hits and misses), evictions, time application threads
//! waited for the cache (WiredTiger's write stall), checkpoints, log and
//! block-manager bytes.
use yardstick_core::observe::Value;

/// Statistics kept: description, name, unit, whether it is a counter.
const KEPT: &[(&str, &str, &str, bool)] = &[
    ("cache: bytes currently in the cache", "db.cache.bytes", "bytes", false),
    ("cache: tracked dirty bytes in the cache", "db.cache.dirty_bytes", "bytes", false),
    ("cache: maximum bytes configured", "db.cache.capacity", "bytes", false),
    ("cache: bytes read into cache", "db.cache.read_bytes", "bytes", true),
    ("cache: bytes written from cache", "db.cache.written_bytes", "bytes", true),
    ("cache: pages read into cache", "db.cache.misses", "operations", true),
    ("cache: modified pages evicted", "db.cache.evicted_modified", "pages", true),
    ("cache: unmodified pages evicted", "db.cache.evicted_unmodified", "pages", true),
    ("cache: pages evicted by application threads", "db.cache.evicted_by_application", "pages", true),
    ("thread-yield: application thread time waiting for cache (usecs)", "db.stall_time", "us", true),
    ("transaction: transaction checkpoints", "db.checkpoints", "checkpoints", true),
    ("transaction: transaction checkpoint currently running", "db.checkpoint.running", "flag", false),
    ("transaction: transactions committed", "db.commits", "transactions", true),
    ("log: log bytes written", "db.wal.bytes", "bytes", true),
    ("block-manager: bytes read", "db.io.read_bytes", "bytes", true),
    ("block-manager: bytes written", "db.io.write_bytes", "bytes", true),
    ("connection: files currently open", "db.files.open", "files", false),
];

/// Requests the cache answered, hits being requests less pages read in.
const REQUESTED: &str = "cache: pages requested from the cache";

/// Every description read (for the test against the linked library).
#[cfg(test)]
pub(crate) fn described() -> impl Iterator<Item = &'static str> {
    KEPT.iter().map(|k| k.0).chain([REQUESTED])
}

/// The kept values of the statistics rows (description, value).
pub(crate) fn values<'a>(rows: impl IntoIterator<Item = (&'a str, i64)>) -> Vec<Value> {
    let mut out = Vec::with_capacity(KEPT.len() + 1);
    let (mut requested, mut read) = (None, None);
    for (desc, v) in rows {
        let v = v as f64;
        if desc == REQUESTED {
            requested = Some(v);
            continue;
        }
        let Some((_, name, unit, counter)) = KEPT.iter().find(|k| k.0 == desc) else {
            continue;
        };
        if *name == "db.cache.misses" {
            read = Some(v);
        }
        // microseconds are kept in seconds, as every other time is
        let (unit, v) = if *unit == "us" { ("s", v / 1e6) } else { (*unit, v) };
        out.push(if *counter {
            Value::counter(*name, unit, v)
        } else {
            Value::gauge(*name, unit, v)
        });
    }
    if let (Some(req), Some(read)) = (requested, read) {
        out.push(Value::counter("db.cache.hits", "operations", (req - read).max(0.0)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hits_are_requests_less_pages_read_and_microseconds_become_seconds() {
        let v = values([
            ("cache: pages requested from the cache", 100),
            ("cache: pages read into cache", 30),
            ("cache: bytes currently in the cache", 4096),
            ("thread-yield: application thread time waiting for cache (usecs)", 2_500_000),
            ("cursor: cursor search calls", 77),
        ]);
        let get = |n: &str| v.iter().find(|x| x.name == n).cloned().unwrap();
        assert_eq!(get("db.cache.hits").value, 70.0);
        assert_eq!(get("db.cache.misses").value, 30.0);
        assert_eq!(get("db.cache.bytes").kind, yardstick_core::observe::Kind::Gauge);
        assert_eq!((get("db.stall_time").value, get("db.stall_time").unit), (2.5, "s"));
        assert_eq!(v.len(), 4, "{v:?}");
    }
}
