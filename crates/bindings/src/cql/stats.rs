//! Cassandra's own statistics for observation, from its virtual tables
//! (`system_views`, Cassandra 4.0 and later) on a driver session of their
//! own: the thread pools' active, pending, blocked and completed tasks (the
//! request stages, compaction and flushes: what `nodetool tpstats` shows),
//! compactions running and the bytes they have left (`nodetool
//! compactionstats`), the benchmark keyspace's size on disk, and the key,
//! row and chunk caches' hits; the settings from `system_views.settings`
//! (secrets masked). The virtual tables are node-local: every query goes
//! to the URL's first node, so the series are that node's.
use super::Inner;
use scylla::client::session::Session as CqlSession;
use scylla::policies::load_balancing::{NodeIdentifier, SingleTargetLoadBalancingPolicy};
use scylla::statement::unprepared::Statement;
use scylla::value::{CqlValue, Row};
use std::collections::BTreeMap;
use std::sync::Arc;
use yardstick_core::observe::remote::{HitRatio, Remote};
use yardstick_core::observe::{SourceError, Value};

/// The pools kept: the client's requests, the local read and write
/// stages, and the background work that explains them.
const POOLS: &[(&str, &str)] = &[
    ("Native-Transport-Requests", "requests"),
    ("ReadStage", "read"),
    ("MutationStage", "mutation"),
    ("CounterMutationStage", "counter_mutation"),
    ("RequestResponseStage", "request_response"),
    ("CompactionExecutor", "compaction"),
    ("MemtableFlushWriter", "flush"),
    ("MemtablePostFlush", "post_flush"),
    ("MemtableReclaimMemory", "reclaim"),
    ("HintsDispatcher", "hints"),
];

/// A numeric cell as f64, whatever integer or float type the table uses.
fn num(v: &Option<CqlValue>) -> Option<f64> {
    Some(match v.as_ref()? {
        CqlValue::TinyInt(n) => *n as f64,
        CqlValue::SmallInt(n) => *n as f64,
        CqlValue::Int(n) => *n as f64,
        CqlValue::BigInt(n) => *n as f64,
        CqlValue::Counter(c) => c.0 as f64,
        CqlValue::Float(f) => *f as f64,
        CqlValue::Double(f) => *f,
        _ => return None,
    })
}

fn text(v: &Option<CqlValue>) -> Option<&str> {
    match v.as_ref()? {
        CqlValue::Text(s) | CqlValue::Ascii(s) => Some(s),
        _ => None,
    }
}

/// `system_views.thread_pools` rows (name, active, pending, blocked,
/// completed) as values.
pub(crate) fn pools(rows: &[Row]) -> Vec<Value> {
    let mut out = Vec::new();
    for r in rows {
        let c = &r.columns;
        let Some(short) = text(&c[0]).and_then(|n| POOLS.iter().find(|p| p.0 == n)).map(|p| p.1)
        else {
            continue;
        };
        let kinds = [("active", false), ("pending", false), ("blocked", false), ("completed", true)];
        for ((what, counter), v) in kinds.iter().zip(&c[1..]) {
            if let Some(v) = num(v) {
                let name = format!("db.pool.{short}.{what}");
                out.push(if *counter {
                    Value::counter(name, "tasks", v)
                } else {
                    Value::gauge(name, "tasks", v)
                });
            }
        }
    }
    out
}

/// `system_views.sstable_tasks` rows (kind, progress, total, unit):
/// compactions running and the bytes they have still to read.
pub(crate) fn tasks(rows: &[Row]) -> Vec<Value> {
    let (mut running, mut left) = (0.0, 0.0);
    for r in rows {
        let c = &r.columns;
        if !text(&c[0]).is_some_and(|k| k.eq_ignore_ascii_case("compaction")) {
            continue;
        }
        running += 1.0;
        if text(&c[3]).is_some_and(|u| u.eq_ignore_ascii_case("bytes")) {
            if let (Some(done), Some(total)) = (num(&c[1]), num(&c[2])) {
                left += (total - done).max(0.0);
            }
        }
    }
    vec![
        Value::gauge("db.compaction.running", "compactions", running),
        Value::gauge("db.compaction.pending_bytes", "bytes", left),
    ]
}

/// `system_views.caches` rows (name, hits, requests, size): per cache its
/// hits and lookups as counters, its size as a gauge.
pub(crate) fn caches(rows: &[Row]) -> Vec<Value> {
    let mut out = Vec::new();
    for r in rows {
        let c = &r.columns;
        let Some(name) = text(&c[0]) else { continue };
        let name = name.replace(' ', "_");
        if let Some(h) = num(&c[1]) {
            out.push(Value::counter(format!("db.cache.{name}.hits"), "operations", h));
        }
        if let Some(q) = num(&c[2]) {
            out.push(Value::counter(format!("db.cache.{name}.requests"), "operations", q));
        }
        if let Some(b) = num(&c[3]) {
            out.push(Value::gauge(format!("db.cache.{name}.bytes"), "bytes", b));
        }
    }
    out
}

/// Whether a setting holds a secret.
fn secret(name: &str) -> bool {
    name.contains("password") || name.contains("secret")
}

pub(crate) struct CqlStats {
    inner: Arc<Inner>,
    session: Option<CqlSession>,
    /// The URL's first node, which every query goes to.
    node: Option<std::net::SocketAddr>,
    /// The chunk cache's (the data files' pages) hits over its lookups.
    hits: HitRatio,
    settings: BTreeMap<String, String>,
    /// Tables this version lacks, each said once.
    missing: Vec<String>,
    warned: usize,
}

impl CqlStats {
    pub(crate) fn new(inner: Arc<Inner>) -> CqlStats {
        CqlStats {
            inner,
            session: None,
            node: None,
            hits: HitRatio::default(),
            settings: BTreeMap::new(),
            missing: Vec::new(),
            warned: 0,
        }
    }

    /// The rows of `cql`, or `None` (said once) where this node has no such
    /// virtual table.
    async fn rows(&mut self, s: &CqlSession, table: &str, cql: &str) -> Result<Option<Vec<Row>>, SourceError> {
        if self.missing.iter().any(|t| t == table) {
            return Ok(None);
        }
        let mut st = Statement::new(cql);
        if let Some(a) = self.node {
            st.set_load_balancing_policy(Some(SingleTargetLoadBalancingPolicy::new(
                NodeIdentifier::NodeAddress(a),
                None,
            )));
        }
        match s.query_unpaged(st, ()).await {
            Ok(r) => {
                let r = r
                    .into_rows_result()
                    .map_err(|e| SourceError::Failed(format!("Cassandra {table}: {e}")))?;
                let rows = r
                    .rows::<Row>()
                    .map_err(|e| SourceError::Failed(format!("Cassandra {table}: {e}")))?
                    .filter_map(Result::ok)
                    .collect();
                Ok(Some(rows))
            }
            // an older node without the table: the others still count
            Err(e) if e.to_string().contains("unconfigured table") || e.to_string().contains("does not exist") => {
                self.missing.push(table.to_string());
                Ok(None)
            }
            Err(e) => Err(SourceError::Failed(format!("Cassandra {table}: {e}"))),
        }
    }
}

impl Remote for CqlStats {
    fn name(&self) -> String {
        "cassandra".into()
    }

    async fn read(&mut self) -> Result<Vec<Value>, SourceError> {
        let s = match self.session.take() {
            Some(s) => s,
            None => {
                let s = super::connect(&self.inner, false)
                    .await
                    .map_err(|e| SourceError::Failed(e.to_string()))?;
                let first = self.inner.nodes.first().cloned().unwrap_or_default();
                self.node = tokio::net::lookup_host(first.as_str())
                    .await
                    .ok()
                    .and_then(|mut a| a.next());
                if let Some(rows) = self.rows(&s, "settings", "SELECT name, value FROM system_views.settings").await? {
                    for r in rows {
                        let (Some(k), v) = (text(&r.columns[0]), text(&r.columns[1])) else {
                            continue;
                        };
                        let v = match v {
                            Some(v) if secret(k) && !v.is_empty() => "***",
                            Some(v) => v,
                            None => "",
                        };
                        self.settings.insert(k.to_string(), v.to_string());
                    }
                }
                s
            }
        };
        let r = self.sample(&s).await;
        self.session = Some(s);
        r
    }

    fn reset(&mut self) {
        self.session = None;
    }

    fn warnings(&mut self) -> Vec<String> {
        let new = self.missing[self.warned..]
            .iter()
            .map(|t| format!("cassandra: this node has no system_views.{t}; its figures are left out (Cassandra 4.0 or later has it)"))
            .collect();
        self.warned = self.missing.len();
        new
    }

    fn configuration(&mut self) -> BTreeMap<String, String> {
        self.settings.clone()
    }
}

impl CqlStats {
    async fn sample(&mut self, s: &CqlSession) -> Result<Vec<Value>, SourceError> {
        let mut out = Vec::new();
        let q = "SELECT name, active_tasks, pending_tasks, blocked_tasks, completed_tasks FROM system_views.thread_pools";
        if let Some(rows) = self.rows(s, "thread_pools", q).await? {
            out.extend(pools(&rows));
        }
        let q = "SELECT kind, progress, total, unit FROM system_views.sstable_tasks";
        if let Some(rows) = self.rows(s, "sstable_tasks", q).await? {
            out.extend(tasks(&rows));
        }
        let q = "SELECT name, hit_count, request_count, size_bytes FROM system_views.caches";
        if let Some(rows) = self.rows(s, "caches", q).await? {
            out.extend(caches(&rows));
        }
        let ks = self.inner.keyspace.clone();
        let q = format!("SELECT mebibytes FROM system_views.disk_usage WHERE keyspace_name = '{ks}' ALLOW FILTERING");
        if let Some(rows) = self.rows(s, "disk_usage", &q).await? {
            let mib: f64 = rows.iter().filter_map(|r| num(&r.columns[0])).sum();
            out.push(Value::gauge("db.disk.bytes", "bytes", mib * 1024.0 * 1024.0));
        }
        let get = |n: &str| out.iter().find(|v| v.name == n).map(|v| v.value);
        if let (Some(h), Some(q)) = (get("db.cache.chunks.hits"), get("db.cache.chunks.requests")) {
            out.extend(self.hits.next(h, (q - h).max(0.0)));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(cells: Vec<Option<CqlValue>>) -> Row {
        Row { columns: cells }
    }

    fn t(s: &str) -> Option<CqlValue> {
        Some(CqlValue::Text(s.into()))
    }

    #[test]
    fn pools_tasks_and_caches_become_gauges_and_counters() {
        use yardstick_core::observe::Kind::{Counter, Gauge};
        let p = pools(&[
            row(vec![t("ReadStage"), Some(CqlValue::Int(2)), Some(CqlValue::Int(7)), Some(CqlValue::BigInt(0)), Some(CqlValue::BigInt(1234))]),
            row(vec![t("CompactionExecutor"), Some(CqlValue::Int(1)), Some(CqlValue::Int(3)), None, Some(CqlValue::BigInt(9))]),
            // not kept
            row(vec![t("GossipStage"), Some(CqlValue::Int(0)), Some(CqlValue::Int(0)), Some(CqlValue::BigInt(0)), Some(CqlValue::BigInt(50))]),
        ]);
        let get = |v: &[Value], n: &str| v.iter().find(|x| x.name == n).map(|x| (x.value, x.kind));
        assert_eq!(get(&p, "db.pool.read.active"), Some((2.0, Gauge)));
        assert_eq!(get(&p, "db.pool.read.pending"), Some((7.0, Gauge)));
        assert_eq!(get(&p, "db.pool.read.completed"), Some((1234.0, Counter)));
        assert_eq!(get(&p, "db.pool.compaction.pending"), Some((3.0, Gauge)));
        assert_eq!(get(&p, "db.pool.compaction.blocked"), None);
        assert!(!p.iter().any(|v| v.name.contains("Gossip") || v.name.contains("gossip")));
        let k = tasks(&[
            row(vec![t("compaction"), Some(CqlValue::BigInt(100)), Some(CqlValue::BigInt(1000)), t("bytes")]),
            row(vec![t("Compaction"), Some(CqlValue::BigInt(50)), Some(CqlValue::BigInt(80)), t("bytes")]),
            row(vec![t("index_build"), Some(CqlValue::BigInt(0)), Some(CqlValue::BigInt(10)), t("keys")]),
        ]);
        assert_eq!(get(&k, "db.compaction.running"), Some((2.0, Gauge)));
        assert_eq!(get(&k, "db.compaction.pending_bytes"), Some((930.0, Gauge)));
        assert_eq!(get(&tasks(&[]), "db.compaction.running"), Some((0.0, Gauge)));
        let c = caches(&[row(vec![t("chunks"), Some(CqlValue::BigInt(90)), Some(CqlValue::BigInt(100)), Some(CqlValue::BigInt(4096))])]);
        assert_eq!(get(&c, "db.cache.chunks.hits"), Some((90.0, Counter)));
        assert_eq!(get(&c, "db.cache.chunks.requests"), Some((100.0, Counter)));
        assert_eq!(get(&c, "db.cache.chunks.bytes"), Some((4096.0, Gauge)));
        assert!(secret("keystore_password") && !secret("concurrent_reads"));
    }
}
