//! HBase's own statistics for observation, from the region server's JMX
//! bean on its info server (`/jmx`, JSON; in standalone HBase the master's
//! info port, the `info=` option): store files and their bytes, memstore,
//! the compaction and flush queues, requests, the block cache's hits and
//! evictions, and the time updates were blocked (HBase pushing back on the
//! writer), the figures `hbase shell status 'detailed'` and the region
//! server's page show.
use yardstick_core::observe::remote::HitRatio;
use yardstick_core::observe::scrape::Endpoint;
use yardstick_core::observe::{Source, SourceError, Value};

/// The bean's attributes kept: attribute, name, unit, counter.
const KEPT: &[(&str, &str, &str, bool)] = &[
    ("storeFileCount", "db.store_files", "files", false),
    ("storeFileSize", "db.store_files.bytes", "bytes", false),
    ("storeCount", "db.stores", "stores", false),
    ("regionCount", "db.regions", "regions", false),
    ("memStoreSize", "db.memstore.bytes", "bytes", false),
    ("compactionQueueLength", "db.compaction.queue", "compactions", false),
    ("flushQueueLength", "db.flush.queue", "flushes", false),
    ("readRequestCount", "db.read_requests", "operations", true),
    ("writeRequestCount", "db.write_requests", "operations", true),
    ("totalRequestCount", "db.requests", "operations", true),
    ("blockCacheHitCount", "db.block_cache.hits", "operations", true),
    ("blockCacheMissCount", "db.block_cache.misses", "operations", true),
    ("blockCacheEvictionCount", "db.block_cache.evictions", "operations", true),
    ("blockCacheSize", "db.block_cache.bytes", "bytes", false),
    ("updatesBlockedTime", "db.updates_blocked_time", "s", true),
    ("slowPutCount", "db.slow_puts", "operations", true),
    ("slowGetCount", "db.slow_gets", "operations", true),
    ("compactedCellsSize", "db.compaction.cells_bytes", "bytes", true),
    ("flushedCellsSize", "db.flush.cells_bytes", "bytes", true),
];

/// The region server bean's values in a `/jmx` page.
pub(crate) fn parse_jmx(page: &str) -> Result<Vec<Value>, String> {
    let body = page.find('{').map_or(page, |i| &page[i..]);
    let v: serde_json::Value =
        serde_json::from_str(body).map_err(|e| format!("the /jmx page is not JSON: {e}"))?;
    let bean = v["beans"]
        .as_array()
        .and_then(|b| b.iter().find(|b| b["name"].as_str() == Some(BEAN)))
        .ok_or_else(|| format!("{NO_BEAN} (is this a master without regions?)"))?;
    Ok(KEPT
        .iter()
        .filter_map(|(attr, name, unit, counter)| {
            let mut n = bean[*attr].as_f64()?;
            // milliseconds in the bean
            if *attr == "updatesBlockedTime" {
                n /= 1e3;
            }
            Some(if *counter {
                Value::counter(*name, unit, n)
            } else {
                Value::gauge(*name, unit, n)
            })
        })
        .collect())
}

const BEAN: &str = "Hadoop:service=HBase,name=RegionServer,sub=Server";
const NO_BEAN: &str = "no region server bean on the page";

pub(crate) struct HbaseStats {
    endpoint: Endpoint,
    hits: HitRatio,
}

impl HbaseStats {
    /// The region server bean of the info server at `info` (HOST:PORT).
    pub(crate) fn new(info: &str) -> Result<HbaseStats, String> {
        Ok(HbaseStats {
            endpoint: Endpoint::parse(&format!("http://{info}/jmx?qry={BEAN}"))?,
            hits: HitRatio::default(),
        })
    }
}

impl Source for HbaseStats {
    fn name(&self) -> String {
        "hbase".into()
    }

    fn sample(&mut self) -> Result<Vec<Value>, SourceError> {
        let at = &self.endpoint.host_port;
        let fetch = || {
            self.endpoint.fetch().map_err(|e| {
                SourceError::Failed(format!(
                    "the info server at {at}: {e}; give the region server's info port with info=HOST:PORT in --db"
                ))
            })
        };
        // the bean is briefly off the page while the metrics system
        // rebuilds its JMX snapshot: one more read finds it
        let mut parsed = parse_jmx(&fetch()?);
        if parsed.as_ref().is_err_and(|e| e.starts_with(NO_BEAN)) {
            parsed = parse_jmx(&fetch()?);
        }
        let mut values = parsed.map_err(|e| SourceError::Failed(format!("{at}: {e}")))?;
        let get = |n: &str| values.iter().find(|v| v.name == n).map(|v| v.value);
        if let (Some(h), Some(m)) = (get("db.block_cache.hits"), get("db.block_cache.misses")) {
            values.extend(self.hits.next(h, m));
        }
        Ok(values)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use yardstick_core::observe::Kind::{Counter, Gauge};

    #[test]
    fn the_region_servers_bean_is_read_and_a_page_without_it_is_named() {
        let page = format!(
            r#"{{"beans":[{{"name":"{BEAN}","storeFileCount":7,"memStoreSize":1048576,"compactionQueueLength":2,"readRequestCount":100,"blockCacheHitCount":90,"blockCacheMissCount":10,"updatesBlockedTime":1500,"tag.Hostname":"h"}}]}}"#
        );
        let v = parse_jmx(&page).unwrap();
        let get = |n: &str| v.iter().find(|x| x.name == n).map(|x| (x.value, x.kind));
        assert_eq!(get("db.store_files"), Some((7.0, Gauge)));
        assert_eq!(get("db.memstore.bytes"), Some((1048576.0, Gauge)));
        assert_eq!(get("db.compaction.queue"), Some((2.0, Gauge)));
        assert_eq!(get("db.read_requests"), Some((100.0, Counter)));
        assert_eq!(get("db.updates_blocked_time"), Some((1.5, Counter)));
        assert_eq!(get("db.slow_puts"), None);
        let e = parse_jmx(r#"{"beans":[]}"#).unwrap_err();
        assert!(e.contains("no region server bean"), "{e}");
        assert!(parse_jmx("<html>").unwrap_err().contains("not JSON"));
    }
}
