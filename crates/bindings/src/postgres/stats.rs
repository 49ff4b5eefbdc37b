//! PostgreSQL's own statistics for observation, on a connection of their
//! own: active sessions by wait event (an active-session history at every
//! interval), pg_stat_database (commits, rollbacks, blocks hit and read,
//! rows, temp bytes, deadlocks), checkpoints and buffers written
//! (pg_stat_bgwriter), WAL (pg_stat_wal), and the settings that differ from
//! the defaults.
use super::{connect, error_text, Endpoint};
use std::collections::{BTreeMap, BTreeSet};
use tokio_postgres::Client;
use yardstick_core::observe::remote::{HitRatio, Remote};
use yardstick_core::observe::{SourceError, Value};

/// Active client sessions by what they wait on; `CPU` for none (running,
/// or waiting on something PostgreSQL does not instrument).
const WAITS: &str = "SELECT coalesce(wait_event_type || ':' || wait_event, 'CPU'), count(*)::float8 \
     FROM pg_stat_activity WHERE state = 'active' AND backend_type = 'client backend' \
     AND pid <> pg_backend_pid() GROUP BY 1";

/// A statistics view, the query of its counters, and their names and units
/// in the query's column order.
type View = (&'static str, &'static str, &'static [(&'static str, &'static str)]);

/// The counters of the database connected to, and the server's.
const COUNTERS: &[View] = &[
    (
        "pg_stat_database",
        "SELECT xact_commit::float8, xact_rollback::float8, blks_read::float8, blks_hit::float8, \
         tup_returned::float8, tup_fetched::float8, tup_inserted::float8, tup_updated::float8, \
         tup_deleted::float8, temp_bytes::float8, deadlocks::float8 \
         FROM pg_stat_database WHERE datname = current_database()",
        &[
            ("db.commits", "operations"),
            ("db.rollbacks", "operations"),
            ("db.blocks_read", "operations"),
            ("db.blocks_hit", "operations"),
            ("db.rows_returned", "operations"),
            ("db.rows_fetched", "operations"),
            ("db.rows_inserted", "operations"),
            ("db.rows_updated", "operations"),
            ("db.rows_deleted", "operations"),
            ("db.temp_bytes", "bytes"),
            ("db.deadlocks", "operations"),
        ],
    ),
    (
        "pg_stat_bgwriter",
        "SELECT checkpoints_timed::float8, checkpoints_req::float8, buffers_checkpoint::float8, \
         buffers_clean::float8, buffers_backend::float8 FROM pg_stat_bgwriter",
        &[
            ("db.checkpoints_timed", "operations"),
            ("db.checkpoints_requested", "operations"),
            ("db.buffers_written.checkpoint", "operations"),
            ("db.buffers_written.bgwriter", "operations"),
            ("db.buffers_written.backend", "operations"),
        ],
    ),
    (
        "pg_stat_wal",
        "SELECT wal_bytes::float8, wal_records::float8, wal_sync::float8 FROM pg_stat_wal",
        &[
            ("db.wal_bytes", "bytes"),
            ("db.wal_records", "operations"),
            ("db.wal_syncs", "operations"),
        ],
    ),
];

/// The settings that differ from the compiled defaults, with their units.
const SETTINGS: &str = "SELECT name, setting || coalesce(' ' || unit, '') FROM pg_settings \
     WHERE source NOT IN ('default', 'override') ORDER BY name";

/// Whether this role sees every session's wait events.
const PRIVILEGED: &str = "SELECT pg_has_role(current_user, 'pg_read_all_stats', 'USAGE') \
     OR (SELECT rolsuper FROM pg_roles WHERE rolname = current_user)";

pub(crate) struct PgStats {
    ep: Endpoint,
    client: Option<Client>,
    /// Views this server has not got (pg_stat_wal before version 14): left out.
    skipped: BTreeSet<&'static str>,
    /// Every wait event seen: each is 0 in a sample it is absent from.
    seen: BTreeSet<String>,
    /// Shared-buffer hits against reads.
    blocks: HitRatio,
    warnings: Vec<String>,
    settings: BTreeMap<String, String>,
}

impl PgStats {
    pub(crate) fn new(ep: Endpoint) -> PgStats {
        PgStats {
            ep,
            client: None,
            skipped: BTreeSet::new(),
            seen: BTreeSet::new(),
            blocks: HitRatio::default(),
            warnings: Vec::new(),
            settings: BTreeMap::new(),
        }
    }

    fn failed(&self, what: &str, e: &tokio_postgres::Error) -> SourceError {
        SourceError::Failed(format!("{what}: {}", error_text(e)))
    }

    async fn first(&mut self, client: &Client) {
        if let Ok(rows) = client.query(SETTINGS, &[]).await {
            for r in rows {
                self.settings.insert(r.get(0), r.get(1));
            }
        }
        if let Ok(row) = client.query_one("SELECT version()", &[]).await {
            self.settings.insert("version()".into(), row.get(0));
        }
        if let Ok(row) = client.query_one(PRIVILEGED, &[]).await {
            if !row.get::<_, Option<bool>>(0).unwrap_or(false) {
                let user = self.ep.config.get_user().unwrap_or("the user");
                self.warnings.push(format!(
                    "role {user} sees only its own sessions in pg_stat_activity: GRANT pg_read_all_stats TO {user} for every session's wait events"
                ));
            }
        }
    }

    async fn views(&mut self, client: &Client) -> Result<Vec<Value>, SourceError> {
        let mut out = Vec::new();
        let rows = client
            .query(WAITS, &[])
            .await
            .map_err(|e| self.failed("pg_stat_activity", &e))?;
        let mut now: BTreeMap<String, f64> = BTreeMap::new();
        for r in rows {
            now.insert(r.get(0), r.get(1));
        }
        self.seen.extend(now.keys().cloned());
        out.push(Value::gauge("db.sessions.active", "sessions", now.values().fold(0.0, |a, b| a + b)));
        for w in &self.seen {
            let n = now.get(w).copied().unwrap_or(0.0);
            out.push(Value::gauge(format!("db.wait.{w}"), "sessions", n));
        }
        for (view, sql, names) in COUNTERS {
            if self.skipped.contains(view) {
                continue;
            }
            match client.query_opt(*sql, &[]).await {
                Ok(Some(row)) => {
                    for (i, (name, unit)) in names.iter().enumerate() {
                        if let Ok(Some(v)) = row.try_get::<_, Option<f64>>(i) {
                            out.push(Value::counter(*name, unit, v));
                        }
                    }
                }
                Ok(None) => {}
                Err(e) if e.as_db_error().is_some() => {
                    // a view this version has not got, or may not be read
                    self.skipped.insert(view);
                    self.warnings
                        .push(format!("{view} left out: {}", error_text(&e)));
                }
                Err(e) => return Err(self.failed(view, &e)),
            }
        }
        let get = |n: &str| out.iter().find(|v| v.name == n).map(|v| v.value);
        if let (Some(hit), Some(read)) = (get("db.blocks_hit"), get("db.blocks_read")) {
            out.extend(self.blocks.next(hit, read));
        }
        Ok(out)
    }
}

impl Remote for PgStats {
    fn name(&self) -> String {
        "postgresql".into()
    }

    async fn read(&mut self) -> Result<Vec<Value>, SourceError> {
        let client = match self.client.take() {
            Some(c) if !c.is_closed() => c,
            _ => {
                let c = connect(&self.ep)
                    .await
                    .map_err(|e| SourceError::Failed(e.to_string()))?;
                if self.settings.is_empty() {
                    self.first(&c).await;
                }
                c
            }
        };
        let r = self.views(&client).await;
        self.client = Some(client);
        r
    }

    fn reset(&mut self) {
        self.client = None;
    }

    fn warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
    }

    fn configuration(&mut self) -> BTreeMap<String, String> {
        self.settings.clone()
    }
}
