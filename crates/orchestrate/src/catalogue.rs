//! The results catalogue: every result file under a directory (suites'
//! subdirectories included) as one row each - date, command, database,
//! workload, tags, throughput, p99, complete - and the selectors that pick
//! rows (`tag:build=a`, `db:postgres`, `workload:workloada`, joined by
//! commas), which `yardstick results`, `compare` and `report` share.
//!
//! Rows are read from the JSON without the typed result, so a catalogue of
//! results from other versions still lists them.
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One result file.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Row {
    pub path: PathBuf,
    /// Start time, RFC 3339 UTC.
    pub date: String,
    /// load, run, replay or tpcc.
    pub command: String,
    /// The URL's scheme.
    pub database: String,
    pub workload: String,
    pub tags: BTreeMap<String, String>,
    /// ops/s, or tpmC for TPC-C.
    pub throughput: f64,
    pub unit: &'static str,
    /// The slowest operation's (or transaction's) p99 response time.
    pub p99_ns: Option<u64>,
    pub complete: bool,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum CatalogueError {
    #[error("{0}: cannot list it: {1}")]
    Unlistable(String, String),
    #[error("'{0}' is not a selector: write tag:KEY=VALUE, db:SCHEME or workload:NAME, joined by commas (tag:build=a,workload:workloadc)")]
    BadSelector(String),
}

/// JSON files that are not results, each with the reason.
pub type Skipped = Vec<(PathBuf, String)>;

/// Reads every result under `dir`; also returns the JSON files that are not
/// results (indexes excluded).
pub fn scan(dir: &Path) -> Result<(Vec<Row>, Skipped), CatalogueError> {
    let mut files = Vec::new();
    walk(dir, &mut files, 0)?;
    files.sort();
    let (mut rows, mut skipped) = (Vec::new(), Vec::new());
    for f in files {
        let value = std::fs::read(&f)
            .map_err(|e| e.to_string())
            .and_then(|b| serde_json::from_slice::<Value>(&b).map_err(|e| e.to_string()));
        match value {
            Ok(v) if crate::index::kind_of(&v).is_some() => {}
            Ok(v) => match row(&f, &v) {
                Some(r) => rows.push(r),
                None => skipped.push((f, "not a yardstick result".into())),
            },
            Err(e) => skipped.push((f, e)),
        }
    }
    rows.sort_by(|a, b| a.date.cmp(&b.date).then_with(|| a.path.cmp(&b.path)));
    Ok((rows, skipped))
}

/// Suites nest results a level or two down; deeper is not ours.
fn walk(dir: &Path, out: &mut Vec<PathBuf>, depth: usize) -> Result<(), CatalogueError> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| CatalogueError::Unlistable(dir.display().to_string(), e.to_string()))?;
    for e in entries.filter_map(Result::ok) {
        let p = e.path();
        let Ok(t) = e.file_type() else { continue };
        if t.is_dir() && depth < 4 {
            walk(&p, out, depth + 1)?;
        } else if t.is_file() && p.extension().is_some_and(|x| x == "json") {
            out.push(p);
        }
    }
    Ok(())
}

fn row(path: &Path, v: &Value) -> Option<Row> {
    if v["tool"]["name"].as_str() != Some("yardstick") {
        return None;
    }
    let tags = v["tags"]
        .as_object()
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                .collect()
        })
        .unwrap_or_default();
    let worst_p99 = |ops: &Value| {
        ops.as_object()?
            .values()
            .filter_map(|o| o["response_time_ns"]["p99"].as_u64())
            .max()
    };
    let text = |x: &Value| x.as_str().unwrap_or("").to_string();
    let tpcc = v["kind"].as_str() == Some("tpcc");
    Some(Row {
        path: path.to_path_buf(),
        date: text(&v["started_at"]),
        command: if tpcc {
            "tpcc".into()
        } else if v.get("replayed").is_some_and(|r| !r.is_null()) {
            "replay".into()
        } else {
            text(&v["phase"])
        },
        database: text(if tpcc {
            &v["database"]["scheme"]
        } else {
            &v["binding"]["scheme"]
        }),
        workload: if tpcc {
            format!("tpcc {}w", v["config"]["warehouses"].as_u64().unwrap_or(0))
        } else {
            text(&v["workload"])
        },
        tags,
        throughput: if tpcc {
            v["tpmc"].as_f64()
        } else {
            v["totals"]["ops_per_sec"].as_f64()
        }
        .unwrap_or(0.0),
        unit: if tpcc { "tpmC" } else { "ops/s" },
        p99_ns: worst_p99(if tpcc {
            &v["transactions"]
        } else {
            &v["operations"]
        }),
        complete: v["complete"].as_bool().unwrap_or(false),
    })
}

/// Conditions a row must all meet.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Filter {
    pub tags: Vec<(String, String)>,
    pub database: Option<String>,
    pub workload: Option<String>,
}

impl Filter {
    /// `tag:KEY=VALUE`, `db:SCHEME`, `workload:NAME`, joined by commas.
    pub fn parse(selector: &str) -> Result<Filter, CatalogueError> {
        let bad = || CatalogueError::BadSelector(selector.to_string());
        let mut f = Filter::default();
        for part in selector.split(',').map(str::trim) {
            let (kind, value) = part.split_once(':').ok_or_else(bad)?;
            match (kind, value) {
                (_, "") => return Err(bad()),
                ("tag", kv) => {
                    let (k, v) = kv.split_once('=').ok_or_else(bad)?;
                    f.tags.push((k.to_string(), v.to_string()));
                }
                ("db", d) => f.database = Some(d.to_string()),
                ("workload", w) => f.workload = Some(w.to_string()),
                _ => return Err(bad()),
            }
        }
        Ok(f)
    }

    /// Whether `arg` is written as a selector rather than a path.
    pub fn is_selector(arg: &str) -> bool {
        ["tag:", "db:", "workload:"]
            .iter()
            .any(|p| arg.starts_with(p))
    }

    pub fn matches(&self, r: &Row) -> bool {
        self.tags
            .iter()
            .all(|(k, v)| r.tags.get(k).is_some_and(|x| x == v))
            && self
                .database
                .as_ref()
                .is_none_or(|d| r.database.eq_ignore_ascii_case(d))
            && self.workload.as_ref().is_none_or(|w| &r.workload == w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, v: Value) {
        let p = dir.join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, serde_json::to_vec(&v).unwrap()).unwrap();
    }

    fn run(date: &str, scheme: &str, tags: Value, p99: [u64; 2]) -> Value {
        serde_json::json!({
            "tool": {"name": "yardstick", "version": "0.1.0"},
            "started_at": date, "phase": "run", "workload": "workloada",
            "binding": {"scheme": scheme}, "tags": tags, "complete": true,
            "totals": {"ops_per_sec": 1234.5},
            "operations": {
                "READ": {"response_time_ns": {"p99": p99[0]}},
                "UPDATE": {"response_time_ns": {"p99": p99[1]}}
            }
        })
    }

    #[test]
    fn a_directory_lists_as_rows_in_date_order_and_others_are_named() {
        let d = tempfile::tempdir().unwrap();
        write(
            d.path(),
            "b.json",
            run(
                "2026-11-25T10:00:00Z",
                "postgres",
                serde_json::json!({"build": "b"}),
                [5, 9],
            ),
        );
        write(
            d.path(),
            "suite/x/a.json",
            run(
                "2026-11-24T10:00:00Z",
                "redis",
                serde_json::json!({}),
                [7, 3],
            ),
        );
        write(
            d.path(),
            "t.json",
            serde_json::json!({"tool": {"name": "yardstick"}, "kind": "tpcc",
                "started_at": "2026-11-26T00:00:00Z", "database": {"scheme": "mysql"},
                "config": {"warehouses": 4}, "tpmc": 900.0, "complete": false,
                "transactions": {"NEW-ORDER": {"response_time_ns": {"p99": 11}}}}),
        );
        write(d.path(), "other.json", serde_json::json!({"x": 1}));
        std::fs::write(d.path().join("broken.json"), "{").unwrap();
        write(
            d.path(),
            "suite/index.json",
            serde_json::json!({"kind": crate::index::SUITE_KIND, "schema_version": 1}),
        );
        let (rows, skipped) = scan(d.path()).unwrap();
        let names: Vec<_> = rows
            .iter()
            .map(|r| r.path.file_name().unwrap().to_str().unwrap())
            .collect();
        assert_eq!(names, ["a.json", "b.json", "t.json"]);
        assert_eq!(rows[0].p99_ns, Some(7));
        assert_eq!(rows[1].tags["build"], "b");
        assert_eq!(rows[1].throughput, 1234.5);
        let t = &rows[2];
        assert_eq!(
            (t.command.as_str(), t.workload.as_str(), t.unit, t.complete),
            ("tpcc", "tpcc 4w", "tpmC", false)
        );
        let skipped: Vec<_> = skipped
            .iter()
            .map(|(p, _)| p.file_name().unwrap().to_str().unwrap())
            .collect();
        assert_eq!(skipped, ["broken.json", "other.json"]);
        assert!(matches!(
            scan(&d.path().join("none")),
            Err(CatalogueError::Unlistable(..))
        ));
    }

    #[test]
    fn selectors_pick_rows_by_every_condition() {
        let f = Filter::parse("tag:build=a, db:Postgres,workload:workloada").unwrap();
        assert_eq!(f.tags, [("build".to_string(), "a".to_string())]);
        let row = |scheme: &str, build: &str| Row {
            path: "x".into(),
            date: String::new(),
            command: "run".into(),
            database: scheme.into(),
            workload: "workloada".into(),
            tags: [("build".to_string(), build.to_string())].into(),
            throughput: 0.0,
            unit: "ops/s",
            p99_ns: None,
            complete: true,
        };
        assert!(f.matches(&row("postgres", "a")));
        assert!(!f.matches(&row("postgres", "b")));
        assert!(!f.matches(&row("redis", "a")));
        assert!(Filter::is_selector("tag:build=a"));
        assert!(!Filter::is_selector("results/tag.json"));
        for bad in ["tag:build", "color:red", "tag:", "build=a"] {
            assert!(Filter::parse(bad).is_err(), "{bad}");
        }
    }
}
