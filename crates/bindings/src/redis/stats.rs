//! Redis's own statistics for observation, from `INFO all` on a connection
//! of their own: commands, keyspace hits and misses, evictions, the server's
//! CPU, memory, clients and keys, and per command its calls and time; the
//! settings from `CONFIG GET *` (secrets masked).
use super::{Con, Inner};
use std::collections::BTreeMap;
use std::sync::Arc;
use yardstick_core::observe::remote::{HitRatio, Remote};
use yardstick_core::observe::{SourceError, Value};

/// INFO fields kept as counters: field, name, unit.
const COUNTERS: &[(&str, &str, &str)] = &[
    ("total_commands_processed", "db.commands", "operations"),
    ("keyspace_hits", "db.keyspace_hits", "operations"),
    ("keyspace_misses", "db.keyspace_misses", "operations"),
    ("evicted_keys", "db.evicted_keys", "operations"),
    ("expired_keys", "db.expired_keys", "operations"),
    ("total_connections_received", "db.connections_received", "operations"),
    ("rejected_connections", "db.connections_rejected", "operations"),
    ("total_net_input_bytes", "db.net_input_bytes", "bytes"),
    ("total_net_output_bytes", "db.net_output_bytes", "bytes"),
    ("used_cpu_user", "db.cpu.user", "s"),
    ("used_cpu_sys", "db.cpu.system", "s"),
];

/// INFO fields kept as gauges.
const GAUGES: &[(&str, &str, &str)] = &[
    ("used_memory", "db.memory.used", "bytes"),
    ("used_memory_rss", "db.memory.rss", "bytes"),
    ("mem_fragmentation_ratio", "db.memory.fragmentation_ratio", "ratio"),
    ("connected_clients", "db.clients.connected", "clients"),
    ("blocked_clients", "db.clients.blocked", "clients"),
    ("rdb_bgsave_in_progress", "db.persistence.rdb_saving", "flag"),
    ("aof_rewrite_in_progress", "db.persistence.aof_rewriting", "flag"),
];

/// The values of an `INFO all` reply.
pub(crate) fn parse_info(text: &str) -> Vec<Value> {
    let mut fields: BTreeMap<&str, &str> = BTreeMap::new();
    let mut out = Vec::new();
    let mut keys = 0.0;
    for line in text.lines() {
        let Some((k, v)) = line.trim_end().split_once(':') else {
            continue;
        };
        if let Some(cmd) = k.strip_prefix("cmdstat_") {
            // calls=N,usec=N,usec_per_call=F,rejected_calls=N,failed_calls=N
            let part = |name: &str| {
                v.split(',')
                    .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))
                    .and_then(|n| n.parse::<f64>().ok())
            };
            let cmd = cmd.replace('|', "_");
            if let Some(calls) = part("calls") {
                out.push(Value::counter(format!("db.command.{cmd}.calls"), "operations", calls));
            }
            if let Some(us) = part("usec") {
                out.push(Value::counter(format!("db.command.{cmd}.time"), "s", us / 1e6));
            }
        } else if k.starts_with("db") && k[2..].chars().all(|c| c.is_ascii_digit()) {
            // db0:keys=N,expires=N,avg_ttl=N
            keys += v
                .split(',')
                .find_map(|kv| kv.strip_prefix("keys="))
                .and_then(|n| n.parse::<f64>().ok())
                .unwrap_or(0.0);
        } else {
            fields.insert(k, v);
        }
    }
    let num = |k: &str| fields.get(k).and_then(|v| v.parse::<f64>().ok());
    for (field, name, unit) in COUNTERS {
        if let Some(v) = num(field) {
            out.push(Value::counter(*name, unit, v));
        }
    }
    for (field, name, unit) in GAUGES {
        if let Some(v) = num(field) {
            out.push(Value::gauge(*name, unit, v));
        }
    }
    out.push(Value::gauge("db.keys", "keys", keys));
    out
}

/// Whether a setting holds a secret (a password, a key's passphrase).
fn secret(name: &str) -> bool {
    name.contains("pass") || name == "masterauth" || name == "masteruser"
}

pub(crate) struct RedisStats {
    inner: Arc<Inner>,
    con: Option<Con>,
    hits: HitRatio,
    settings: BTreeMap<String, String>,
}

impl RedisStats {
    pub(crate) fn new(inner: Arc<Inner>) -> RedisStats {
        RedisStats {
            inner,
            con: None,
            hits: HitRatio::default(),
            settings: BTreeMap::new(),
        }
    }
}

impl Remote for RedisStats {
    fn name(&self) -> String {
        "redis".into()
    }

    async fn read(&mut self) -> Result<Vec<Value>, SourceError> {
        let failed = |e: redis::RedisError| SourceError::Failed(super::session::error_text(&e));
        let mut con = match self.con.take() {
            Some(c) => c,
            None => {
                let mut c = self.inner.connect().await.map_err(failed)?;
                let config: Vec<String> = redis::cmd("CONFIG")
                    .arg("GET")
                    .arg("*")
                    .query_async(&mut c)
                    .await
                    .unwrap_or_default();
                for pair in config.chunks(2) {
                    if let [k, v] = pair {
                        let v = if secret(k) && !v.is_empty() { "***" } else { v };
                        self.settings.insert(k.clone(), v.to_string());
                    }
                }
                c
            }
        };
        let text: String = redis::cmd("INFO")
            .arg("all")
            .query_async(&mut con)
            .await
            .map_err(failed)?;
        self.con = Some(con);
        let mut values = parse_info(&text);
        let get = |n: &str| values.iter().find(|v| v.name == n).map(|v| v.value);
        if let (Some(h), Some(m)) = (get("db.keyspace_hits"), get("db.keyspace_misses")) {
            values.extend(self.hits.next(h, m));
        }
        Ok(values)
    }

    fn reset(&mut self) {
        self.con = None;
    }

    fn configuration(&mut self) -> BTreeMap<String, String> {
        self.settings.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn info_is_read_into_counters_gauges_and_commands() {
        let text = "# Server\r\nredis_version:7.0.15\r\n\r\n# Clients\r\nconnected_clients:5\r\n# Memory\r\nused_memory:1048576\r\nmem_fragmentation_ratio:1.25\r\n# Stats\r\ntotal_commands_processed:1000\r\nkeyspace_hits:90\r\nkeyspace_misses:10\r\nevicted_keys:0\r\n# CPU\r\nused_cpu_sys:1.5\r\nused_cpu_user:2.25\r\n# Commandstats\r\ncmdstat_get:calls=600,usec=1200,usec_per_call=2.00,rejected_calls=0,failed_calls=0\r\ncmdstat_client|setname:calls=2,usec=4,usec_per_call=2.00\r\n# Keyspace\r\ndb0:keys=100,expires=0,avg_ttl=0\r\ndb3:keys=5,expires=0,avg_ttl=0\r\n";
        let v = parse_info(text);
        let get = |n: &str| v.iter().find(|x| x.name == n).map(|x| (x.value, x.kind));
        use yardstick_core::observe::Kind::{Counter, Gauge};
        assert_eq!(get("db.commands"), Some((1000.0, Counter)));
        assert_eq!(get("db.keyspace_misses"), Some((10.0, Counter)));
        assert_eq!(get("db.cpu.user"), Some((2.25, Counter)));
        assert_eq!(get("db.memory.used"), Some((1048576.0, Gauge)));
        assert_eq!(get("db.memory.fragmentation_ratio"), Some((1.25, Gauge)));
        assert_eq!(get("db.clients.connected"), Some((5.0, Gauge)));
        assert_eq!(get("db.command.get.calls"), Some((600.0, Counter)));
        assert_eq!(get("db.command.get.time"), Some((0.0012, Counter)));
        assert_eq!(get("db.command.client_setname.calls"), Some((2.0, Counter)));
        assert_eq!(get("db.keys"), Some((105.0, Gauge)));
        assert!(secret("requirepass") && secret("masterauth") && !secret("maxmemory"));
    }
}
