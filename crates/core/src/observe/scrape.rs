//! `--observe URL`: a Prometheus endpoint (node_exporter, postgres_exporter,
//! mysqld_exporter, redis_exporter, or any other) scraped at every interval
//! over plain HTTP. Only the families of a default set (below) or of the
//! user's `--observe-metric` patterns are kept, so a page of thousands of
//! lines costs a scan of its names, not a parse of every sample.
use super::{Source, SourceError, Value};
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

/// How long one scrape may take, connection included.
const LIMIT: Duration = Duration::from_secs(2);
/// The most series one exporter may add (a pattern that matches too much
/// is cut here, with a warning).
const MAX_SERIES: usize = 500;
/// The largest page read.
const MAX_PAGE: u64 = 64 << 20;

/// The families kept by default, each summed over every label but the ones
/// named: the host (node_exporter), PostgreSQL, MySQL and Redis exporters'
/// figures that explain a benchmark.
pub const DEFAULT_SET: &[(&str, &[&str])] = &[
    ("node_cpu_seconds_total", &["mode"]),
    ("node_load1", &[]),
    ("node_memory_MemAvailable_bytes", &[]),
    ("node_memory_MemTotal_bytes", &[]),
    ("node_memory_Cached_bytes", &[]),
    ("node_memory_Dirty_bytes", &[]),
    ("node_disk_reads_completed_total", &["device"]),
    ("node_disk_writes_completed_total", &["device"]),
    ("node_disk_read_bytes_total", &["device"]),
    ("node_disk_written_bytes_total", &["device"]),
    ("node_disk_io_time_seconds_total", &["device"]),
    ("node_network_receive_bytes_total", &["device"]),
    ("node_network_transmit_bytes_total", &["device"]),
    ("node_context_switches_total", &[]),
    ("pg_stat_database_xact_commit", &["datname"]),
    ("pg_stat_database_xact_rollback", &["datname"]),
    ("pg_stat_database_blks_read", &["datname"]),
    ("pg_stat_database_blks_hit", &["datname"]),
    ("pg_stat_database_tup_fetched", &["datname"]),
    ("pg_stat_database_tup_updated", &["datname"]),
    ("pg_stat_database_tup_inserted", &["datname"]),
    ("pg_stat_database_deadlocks", &["datname"]),
    ("pg_stat_database_temp_bytes", &["datname"]),
    ("pg_stat_bgwriter_checkpoints_timed", &[]),
    ("pg_stat_bgwriter_checkpoints_req", &[]),
    ("pg_stat_bgwriter_buffers_checkpoint", &[]),
    ("pg_stat_bgwriter_buffers_backend", &[]),
    ("pg_stat_activity_count", &["state"]),
    ("pg_locks_count", &["mode"]),
    ("mysql_global_status_queries", &[]),
    ("mysql_global_status_commands_total", &["command"]),
    ("mysql_global_status_innodb_buffer_pool_reads", &[]),
    ("mysql_global_status_innodb_buffer_pool_read_requests", &[]),
    ("mysql_global_status_innodb_row_lock_waits", &[]),
    ("mysql_global_status_innodb_row_lock_time", &[]),
    ("mysql_global_status_threads_running", &[]),
    ("redis_commands_processed_total", &[]),
    ("redis_keyspace_hits_total", &[]),
    ("redis_keyspace_misses_total", &[]),
    ("redis_evicted_keys_total", &[]),
    ("redis_memory_used_bytes", &[]),
    ("redis_connected_clients", &[]),
    ("redis_cpu_sys_seconds_total", &[]),
    ("redis_cpu_user_seconds_total", &[]),
    ("redis_commands_total", &["cmd"]),
    ("redis_commands_duration_seconds_total", &["cmd"]),
];

/// etcd's own `/metrics` (on its client port): what a database source for
/// etcd keeps, as `db.etcd_...`.
pub const ETCD_SET: &[(&str, &[&str])] = &[
    ("etcd_server_proposals_committed_total", &[]),
    ("etcd_server_proposals_applied_total", &[]),
    ("etcd_server_proposals_pending", &[]),
    ("etcd_server_proposals_failed_total", &[]),
    ("etcd_server_leader_changes_seen_total", &[]),
    ("etcd_server_slow_apply_total", &[]),
    ("etcd_disk_wal_fsync_duration_seconds_sum", &[]),
    ("etcd_disk_wal_fsync_duration_seconds_count", &[]),
    ("etcd_disk_backend_commit_duration_seconds_sum", &[]),
    ("etcd_disk_backend_commit_duration_seconds_count", &[]),
    ("etcd_mvcc_db_total_size_in_bytes", &[]),
    ("etcd_mvcc_db_total_size_in_use_in_bytes", &[]),
    ("etcd_debugging_mvcc_keys_total", &[]),
    ("etcd_mvcc_put_total", &[]),
    ("etcd_mvcc_range_total", &[]),
    ("etcd_mvcc_txn_total", &[]),
    ("etcd_mvcc_delete_total", &[]),
    ("etcd_network_client_grpc_received_bytes_total", &[]),
    ("etcd_network_client_grpc_sent_bytes_total", &[]),
    ("grpc_server_handled_total", &["grpc_method"]),
    ("process_cpu_seconds_total", &[]),
    ("process_resident_memory_bytes", &[]),
];

/// What one exporter page is read for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Keep {
    /// The default set, summed as it says.
    #[default]
    Default,
    /// A fixed set of families, summed over every label but the ones named.
    Set(&'static [(&'static str, &'static [&'static str])]),
    /// Families whose names match these patterns (`*` for any run of
    /// characters), each label set a series of its own.
    Patterns(Vec<String>),
}

/// `*` matches any run of characters, everything else itself.
pub fn glob(pattern: &str, name: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == name,
        Some((head, rest)) => {
            let Some(tail) = name.strip_prefix(head) else {
                return false;
            };
            (0..=tail.len()).any(|i| tail.is_char_boundary(i) && glob(rest, &tail[i..]))
        }
    }
}

/// A sample line's labels: name and unescaped value.
type Labels<'a> = Vec<(&'a str, String)>;

/// One sample line: name, labels, value.
fn sample_line(line: &str) -> Option<(&str, Labels<'_>, f64)> {
    let (name, rest) = match line.find(['{', ' ']) {
        Some(i) => line.split_at(i),
        None => return None,
    };
    let (labels, value) = if let Some(body) = rest.strip_prefix('{') {
        let end = label_end(body)?;
        (parse_labels(&body[..end]), body[end + 1..].trim())
    } else {
        (Vec::new(), rest.trim())
    };
    let v = value.split_whitespace().next()?;
    let v = match v {
        "+Inf" => f64::INFINITY,
        "-Inf" => f64::NEG_INFINITY,
        other => other.parse().ok()?,
    };
    Some((name, labels, v))
}

/// Where the label set ends (a `}` outside quotes).
fn label_end(body: &str) -> Option<usize> {
    let (mut quoted, mut escaped) = (false, false);
    for (i, c) in body.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '"' => quoted = !quoted,
            '}' if !quoted => return Some(i),
            _ => {}
        }
    }
    None
}

fn parse_labels(s: &str) -> Labels<'_> {
    let mut out = Vec::new();
    let mut rest = s;
    while let Some((k, after)) = rest.split_once("=\"") {
        let k = k.trim().trim_start_matches(',').trim();
        let mut value = String::new();
        let mut chars = after.char_indices();
        let mut end = after.len();
        while let Some((i, c)) = chars.next() {
            match c {
                '\\' => match chars.next() {
                    Some((_, 'n')) => value.push('\n'),
                    Some((_, other)) => value.push(other),
                    None => {}
                },
                '"' => {
                    end = i + 1;
                    break;
                }
                other => value.push(other),
            }
        }
        out.push((k, value));
        rest = &after[end..];
    }
    out
}

/// The kept values of one exposition page, named `PREFIX.FAMILY` with the
/// label values that tell its series apart (`.mode=user`); the series cut
/// for the cap are counted in the second figure.
pub fn parse_page(page: &str, keep: &Keep, prefix: &str) -> (Vec<Value>, usize) {
    let mut types: BTreeMap<&str, &str> = BTreeMap::new();
    let mut sums: BTreeMap<String, (bool, f64)> = BTreeMap::new();
    let mut cut = 0;
    for line in page.lines() {
        if let Some(t) = line.strip_prefix("# TYPE ") {
            let mut f = t.split_whitespace();
            if let (Some(n), Some(k)) = (f.next(), f.next()) {
                types.insert(n, k);
            }
            continue;
        }
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        let name = line.split(['{', ' ']).next().unwrap_or("");
        let by: Option<Option<&[&str]>> = match keep {
            Keep::Default => DEFAULT_SET
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, b)| Some(*b)),
            Keep::Set(set) => set.iter().find(|(n, _)| *n == name).map(|(_, b)| Some(*b)),
            Keep::Patterns(p) => p.iter().any(|p| glob(p, name)).then_some(None),
        };
        let Some(by) = by else { continue };
        let Some((name, labels, v)) = sample_line(line) else {
            continue;
        };
        if !v.is_finite() {
            continue;
        }
        let parts: Vec<String> = labels
            .iter()
            .filter(|(k, _)| by.is_none_or(|b| b.contains(k)))
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let mut key = format!("{prefix}.{name}");
        for p in parts {
            key.push('.');
            key.push_str(&p);
        }
        // counters by TYPE, or by the naming convention where untyped; a
        // histogram's or summary's _sum and _count only grow
        let family = name
            .strip_suffix("_sum")
            .or_else(|| name.strip_suffix("_count"))
            .filter(|f| matches!(types.get(f), Some(&"histogram" | &"summary")));
        let counter = match (family, types.get(name)) {
            (Some(_), _) | (None, Some(&"counter")) => true,
            (None, Some(_)) => false,
            (None, None) => name.ends_with("_total"),
        };
        if !sums.contains_key(&key) && sums.len() >= MAX_SERIES {
            cut += 1;
            continue;
        }
        sums.entry(key).or_insert((counter, 0.0)).1 += v;
    }
    let values = sums
        .into_iter()
        .map(|(k, (counter, v))| {
            let unit = if k.contains("_seconds") {
                "s"
            } else if k.contains("_bytes") {
                "bytes"
            } else {
                "operations"
            };
            if counter {
                Value::counter(k, unit, v)
            } else {
                Value::gauge(k, if unit == "operations" { "" } else { unit }, v)
            }
        })
        .collect();
    (values, cut)
}

/// An `http://[user:password@]host:port/path` endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub host_port: String,
    pub path: String,
    /// `user:password`, for basic authentication.
    pub credentials: Option<String>,
    /// The URL as the result shows it (password masked).
    pub shown: String,
}

impl Endpoint {
    pub fn parse(url: &str) -> Result<Endpoint, String> {
        let rest = url.strip_prefix("http://").ok_or_else(|| {
            if url.starts_with("https://") {
                format!("--observe {}: https is not supported; scrape the exporter over http:// on loopback or a private network", crate::result::redact_url(url))
            } else {
                format!("--observe {url}: give on, off or an exporter's http://HOST:PORT/metrics")
            }
        })?;
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/metrics"),
        };
        let (credentials, host_port) = match authority.rsplit_once('@') {
            Some((c, h)) => (Some(c.to_string()), h),
            None => (None, authority),
        };
        if host_port.is_empty() || !host_port.contains(':') {
            return Err(format!(
                "--observe {}: name the exporter's port, e.g. http://127.0.0.1:9100/metrics",
                crate::result::redact_url(url)
            ));
        }
        if let Some(c) = &credentials {
            if let Some((_, pw)) = c.split_once(':') {
                crate::result::redact::register(pw);
            }
        }
        Ok(Endpoint {
            host_port: host_port.to_string(),
            path: path.to_string(),
            credentials,
            shown: crate::result::redact_url(url),
        })
    }

    /// The page, within [`LIMIT`].
    pub fn fetch(&self) -> Result<String, String> {
        let addr = self
            .host_port
            .to_socket_addrs()
            .map_err(|e| format!("cannot resolve {}: {e}", self.host_port))?
            .next()
            .ok_or_else(|| format!("cannot resolve {}", self.host_port))?;
        let mut s = TcpStream::connect_timeout(&addr, LIMIT).map_err(|e| e.to_string())?;
        s.set_read_timeout(Some(LIMIT)).map_err(|e| e.to_string())?;
        s.set_write_timeout(Some(LIMIT))
            .map_err(|e| e.to_string())?;
        let auth = self
            .credentials
            .as_ref()
            .map(|c| format!("Authorization: Basic {}\r\n", base64_encode(c.as_bytes())))
            .unwrap_or_default();
        // one write: a server that answers after its first read sees all of it
        let request = format!(
            "GET {} HTTP/1.1\r\nHost: {}\r\nAccept: text/plain;version=0.0.4\r\nAccept-Encoding: identity\r\nConnection: close\r\n{auth}\r\n",
            self.path, self.host_port
        );
        s.write_all(request.as_bytes()).map_err(|e| e.to_string())?;
        let mut raw = Vec::new();
        s.take(MAX_PAGE)
            .read_to_end(&mut raw)
            .map_err(|e| e.to_string())?;
        let text = String::from_utf8_lossy(&raw);
        let (head, body) = text
            .split_once("\r\n\r\n")
            .ok_or("the answer is not HTTP")?;
        let status = head.split_whitespace().nth(1).unwrap_or("");
        if status != "200" {
            return Err(format!("HTTP {status} for {}", self.path));
        }
        if head.lines().any(|l| {
            l.to_ascii_lowercase()
                .starts_with("transfer-encoding: chunked")
        }) {
            return Ok(dechunk(body));
        }
        Ok(body.to_string())
    }
}

/// A chunked HTTP body joined.
fn dechunk(body: &str) -> String {
    let mut out = String::new();
    let mut rest = body;
    while let Some((size, after)) = rest.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 || after.len() < n {
            break;
        }
        out.push_str(&after[..n]);
        rest = after[n..].trim_start_matches("\r\n");
    }
    out
}

fn base64_encode(b: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(b)
}

/// One exporter, or a database's own metrics page.
pub struct Scrape {
    endpoint: Endpoint,
    keep: Keep,
    prefix: String,
    /// A database's own page: its name, and the fix when it cannot be read.
    database: Option<(&'static str, &'static str)>,
    warned_cut: bool,
    warnings: Vec<String>,
}

impl Scrape {
    pub fn new(endpoint: Endpoint, keep: Keep) -> Scrape {
        let prefix = format!("remote.{}", endpoint.host_port);
        Scrape {
            endpoint,
            keep,
            prefix,
            database: None,
            warned_cut: false,
            warnings: Vec::new(),
        }
    }

    /// The database `name`'s own page (etcd's `/metrics`): its series are
    /// `db.FAMILY`, and a failed read names `fix`.
    pub fn database(
        name: &'static str,
        endpoint: Endpoint,
        keep: Keep,
        fix: &'static str,
    ) -> Scrape {
        Scrape {
            prefix: "db".into(),
            database: Some((name, fix)),
            ..Scrape::new(endpoint, keep)
        }
    }
}

impl Source for Scrape {
    fn name(&self) -> String {
        match self.database {
            Some((name, _)) => name.into(),
            None => format!("exporter {}", self.endpoint.shown),
        }
    }

    fn sample(&mut self) -> Result<Vec<Value>, SourceError> {
        let page = self.endpoint.fetch().map_err(|e| {
            SourceError::Failed(match self.database {
                // the source's name does not say where it read
                Some((_, fix)) => format!("{}: {e}; {fix}", self.endpoint.shown),
                None => {
                    format!("{e}; check that the exporter runs and --observe names its address")
                }
            })
        })?;
        let (values, cut) = parse_page(&page, &self.keep, &self.prefix);
        if cut > 0 && !self.warned_cut {
            self.warned_cut = true;
            self.warnings.push(format!(
                "{cut} series beyond the first {MAX_SERIES} left out; narrow --observe-metric"
            ));
        }
        Ok(values)
    }

    fn warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
    }
}

#[cfg(test)]
#[path = "scrape_tests.rs"]
mod tests;
