//! `yardstick matrix`: the storage-engine experiment of the TerarkDB report as
//! one command. Every engine is loaded once with text-like records; then every
//! test preset runs under every memory budget, each cell as its own capped
//! process (`run --memory-limit`) after a warm-up, each with its own result
//! file; `index.json` ([`MatrixIndex`]) ties the cells together for reports.
use crate::index::{self, *};
use crate::{label, Env, Error};
use std::path::{Path, PathBuf};
use std::time::Duration;
use yardstick_core::result::{redact_url, RunResult};

/// A test of the experiment: a mix and a thread count.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Preset {
    pub name: &'static str,
    pub description: &'static str,
    pub read: f64,
    pub threads: usize,
}

/// The report's tests: random reads, random writes at 1, 3 and 6 threads, and
/// 95% and 99% read mixes at 8 threads.
pub(crate) const PRESETS: &[Preset] = &[
    Preset {
        name: "read",
        description: "random reads, 1 thread",
        read: 1.0,
        threads: 1,
    },
    Preset {
        name: "write-1",
        description: "random writes (whole records), 1 thread",
        read: 0.0,
        threads: 1,
    },
    Preset {
        name: "write-3",
        description: "random writes, 3 threads",
        read: 0.0,
        threads: 3,
    },
    Preset {
        name: "write-6",
        description: "random writes, 6 threads",
        read: 0.0,
        threads: 6,
    },
    Preset {
        name: "mix95-8",
        description: "95% reads, 5% writes, 8 threads",
        read: 0.95,
        threads: 8,
    },
    Preset {
        name: "mix99-8",
        description: "99% reads, 1% writes, 8 threads",
        read: 0.99,
        threads: 8,
    },
];

/// What to run: the command line's options, typed.
#[derive(Debug, Clone)]
pub struct MatrixSpec {
    /// Engine URLs with their own options.
    pub dbs: Vec<String>,
    /// Those of `dbs` that are database servers on this machine rather than
    /// embedded engines: the budget caps the server's process
    /// (`--server-memory-limit`), and its load empties the table first.
    pub servers: Vec<String>,
    /// Memory budgets of the whole benchmark process: (as given, bytes), or
    /// `None` for uncapped.
    pub budgets: Vec<Option<(String, u64)>>,
    /// Test names from [`PRESETS`].
    pub tests: Vec<String>,
    pub records: u64,
    pub fieldcount: u64,
    pub fieldlength: u64,
    /// Field values: text or random.
    pub values: String,
    pub duration: Duration,
    pub warmup: Duration,
    pub seed: u64,
    pub out_dir: PathBuf,
    /// Skip the loads (the engines are loaded already).
    pub no_load: bool,
}

/// The finished matrix; `failed` when a cell failed for a reason other than
/// its memory budget.
#[derive(Debug, Clone)]
pub struct MatrixRun {
    pub index: MatrixIndex,
    pub index_path: PathBuf,
    pub failed: bool,
}

fn bad(msg: String) -> Error {
    Error::BadInput(msg)
}

/// The tests `spec` names, checked.
fn tests_of(spec: &MatrixSpec) -> Result<Vec<Preset>, Error> {
    spec.tests
        .iter()
        .map(|t| {
            PRESETS
                .iter()
                .copied()
                .find(|p| p.name == t.trim())
                .ok_or_else(|| {
                    bad(format!(
                        "--tests {t} is not a test: use {}",
                        PRESETS
                            .iter()
                            .map(|p| p.name)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ))
                })
        })
        .collect()
}

/// The options every phase of the matrix shares.
fn common(spec: &MatrixSpec, threads: usize) -> Vec<String> {
    let mut v: Vec<String> = vec!["-P".into(), "workloadc".into()];
    for p in [
        format!("recordcount={}", spec.records),
        format!("fieldcount={}", spec.fieldcount),
        format!("fieldlength={}", spec.fieldlength),
        format!("valuegenerator={}", spec.values),
        "requestdistribution=uniform".into(),
        "insert.semantics=upsert".into(),
        "update.semantics=upsert".into(),
        "writeallfields=true".into(),
    ] {
        v.extend(["-p".into(), p]);
    }
    v.extend([
        "--threads".into(),
        threads.to_string(),
        "--seed".into(),
        spec.seed.to_string(),
        "-q".into(),
    ]);
    v
}

/// The load of one engine, its result in `file`.
fn load_args(a: &MatrixSpec, db: &str, file: &Path) -> Vec<String> {
    let mut args: Vec<String> = vec!["load".into(), "--db".into(), db.into()];
    if a.servers.iter().any(|s| s == db) {
        args.push("--clear".into());
    }
    args.extend(common(a, 1));
    args.extend(["--out".into(), file.display().to_string()]);
    args
}

/// One cell: test `p` on `db` under `budget`, its result in `file`.
fn cell_args(
    a: &MatrixSpec,
    db: &str,
    p: &Preset,
    budget: &Option<(String, u64)>,
    file: &Path,
) -> Vec<String> {
    let mut args: Vec<String> = vec!["run".into(), "--db".into(), db.into()];
    args.extend(common(a, p.threads));
    for prop in [
        format!("readproportion={}", p.read),
        format!("updateproportion={}", 1.0 - p.read),
        "operationcount=0".into(),
    ] {
        args.extend(["-p".into(), prop]);
    }
    args.extend([
        "--duration".into(),
        format!("{}ms", a.duration.as_millis()),
        "--warmup".into(),
        format!("{}ms", a.warmup.as_millis()),
        "--out".into(),
        file.display().to_string(),
    ]);
    if let Some((_, bytes)) = budget {
        let flag = if a.servers.iter().any(|s| s == db) {
            "--server-memory-limit"
        } else {
            "--memory-limit"
        };
        args.extend([flag.into(), bytes.to_string()]);
    }
    args
}

fn file_name(path: &Path) -> Option<String> {
    path.file_name().map(|n| n.to_string_lossy().into_owned())
}

/// Loads every engine, then runs every cell; writes the index.
pub fn execute(spec: &MatrixSpec, env: &Env) -> Result<MatrixRun, Error> {
    let a = spec;
    let presets = tests_of(a)?;
    if !["text", "random"].contains(&a.values.as_str()) {
        return Err(bad(format!(
            "--values {} is not known: use text or random",
            a.values
        )));
    }
    if a.records == 0 {
        return Err(bad("--records must be at least 1".into()));
    }
    crate::distinct_labels(
        &a.dbs,
        "two --db URLs share a scheme and directory name: give each engine its own directory",
    )?;
    // every phase checked before the first load
    for db in &a.dbs {
        env.checked(&load_args(a, db, &a.out_dir.join("load.json")))?;
        for budget in &a.budgets {
            for p in &presets {
                env.checked(&cell_args(a, db, p, budget, &a.out_dir.join("cell.json")))?;
            }
        }
    }
    // an index of something else is not overwritten
    let index_path = a.out_dir.join("index.json");
    if index_path.exists() {
        crate::index::read_matrix(&index_path).map_err(|e| {
            bad(format!(
                "{e}; the directory holds something other than a matrix: choose another --out-dir"
            ))
        })?;
    }
    crate::create_dir(&a.out_dir)?;
    let mut loads = Vec::new();
    if !a.no_load {
        for db in &a.dbs {
            let file = a.out_dir.join(format!("load-{}.json", label(db)));
            (env.say)(&format!(
                "loading {} records into {}",
                a.records,
                redact_url(db)
            ));
            let code = env.phase(&load_args(a, db, &file))?;
            if code != 0 {
                return Err(Error::Failed(format!(
                    "loading {} failed (exit code {code}); see the message above",
                    redact_url(db)
                )));
            }
            let r = yardstick_core::result::read::read(&file).ok();
            loads.push(MatrixLoad {
                db: redact_url(db),
                result: file_name(&file),
                inserts_per_sec: r.as_ref().map(|r| r.totals.ops_per_sec),
                disk_bytes: r.as_ref().and_then(|r| r.binding.disk_bytes_after),
                compression_ratio: r.as_ref().and_then(|r| r.binding.compression_ratio),
                engine: r.as_ref().map(|r| r.binding.engine.name.clone()),
                version: r.as_ref().map(|r| r.binding.engine.version.clone()),
            });
        }
    }
    let mut cells = Vec::new();
    let mut failed = false;
    let total = a.dbs.len() * a.budgets.len() * presets.len();
    for db in &a.dbs {
        for budget in &a.budgets {
            let budget_name = budget.as_ref().map_or("none", |(s, _)| s.as_str());
            for p in &presets {
                let name = format!("{}-{budget_name}-{}.json", label(db), p.name);
                let file = a.out_dir.join(&name);
                (env.say)(&format!(
                    "[{}/{total}] {} · budget {budget_name} · {}",
                    cells.len() + 1,
                    redact_url(db),
                    p.description
                ));
                let code = env.phase(&cell_args(a, db, p, budget, &file))?;
                let r = if file.exists() {
                    yardstick_core::result::read::read(&file).ok()
                } else {
                    None
                };
                // the benchmark process's cap, or the server's
                let memory = r.as_ref().and_then(|r| {
                    r.memory_limit
                        .as_ref()
                        .or(r.server_memory.first().map(|s| &s.limit))
                });
                let oom = memory.is_some_and(|m| m.oom_killed);
                // a server killed by its cap may leave the client's exit code 0
                let status = match (code, oom) {
                    (_, true) => CellStatus::Oom,
                    (0, _) => CellStatus::Ok,
                    _ => {
                        failed = true;
                        CellStatus::Failed
                    }
                };
                cells.push(MatrixCell {
                    db: redact_url(db),
                    engine: r.as_ref().map(|r| r.binding.engine.name.clone()),
                    budget: budget.as_ref().map(|(s, _)| s.clone()),
                    budget_bytes: budget.as_ref().map(|(_, b)| *b),
                    test: p.name.into(),
                    threads: p.threads,
                    read_proportion: p.read,
                    status,
                    exit_code: code,
                    result: file.exists().then_some(name),
                    ops_per_sec: r.as_ref().map(|r| r.totals.ops_per_sec),
                    latency_us: r.as_ref().and_then(latency),
                    peak_memory_bytes: memory.and_then(|m| m.peak_bytes),
                    disk_bytes_after: r.as_ref().and_then(|r| r.binding.disk_bytes_after),
                });
            }
        }
    }
    let index = MatrixIndex {
        kind: MATRIX_KIND.into(),
        schema_version: MATRIX_SCHEMA_VERSION,
        tool_version: env!("CARGO_PKG_VERSION").into(),
        records: a.records,
        fieldcount: a.fieldcount,
        fieldlength: a.fieldlength,
        values: a.values.clone(),
        duration_s: a.duration.as_secs_f64(),
        warmup_s: a.warmup.as_secs_f64(),
        seed: a.seed,
        budgets: a
            .budgets
            .iter()
            .map(|b| b.as_ref().map(|(s, _)| s.clone()))
            .collect(),
        tests: presets
            .iter()
            .map(|p| MatrixTest {
                name: p.name.into(),
                description: p.description.into(),
                threads: p.threads,
                read_proportion: p.read,
            })
            .collect(),
        loads,
        cells,
    };
    let index_path = a.out_dir.join("index.json");
    index::write(&index_path, &index)?;
    Ok(MatrixRun {
        index,
        index_path,
        failed,
    })
}

/// Mean, median, p99 and standard deviation in microseconds over every
/// successful operation of a result (all operation kinds together: the
/// histograms are merged exactly).
fn latency(r: &RunResult) -> Option<CellLatency> {
    use yardstick_core::stats::Summary;
    crate::merged_response(r, |_| true).map(|h| {
        let s = Summary::of(&h);
        CellLatency {
            mean: s.mean / 1e3,
            p50: s.p50 as f64 / 1e3,
            p99: s.p99 as f64 / 1e3,
            stdev: s.stdev / 1e3,
        }
    })
}

/// The cells as the printed table.
pub fn table(index: &MatrixIndex) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n{:<28} {:>8} {:<9} {:>7} {:>12} {:>10} {:>10} {:>10} {:>10}",
        "engine", "budget", "test", "status", "ops/s", "avg µs", "p50 µs", "p99 µs", "stdev µs"
    );
    for c in &index.cells {
        let f = |pick: fn(&CellLatency) -> f64| {
            c.latency_us
                .as_ref()
                .map_or("-".to_string(), |l| format!("{:.1}", pick(l)))
        };
        let status = match c.status {
            CellStatus::Ok => "ok",
            CellStatus::Oom => "oom",
            CellStatus::Failed => "failed",
        };
        let _ = writeln!(
            out,
            "{:<28} {:>8} {:<9} {:>7} {:>12} {:>10} {:>10} {:>10} {:>10}",
            // the file label (scheme, directory or database, engine): a URL
            // cut to the column's width would not tell two servers apart
            label(&c.db).chars().take(28).collect::<String>(),
            c.budget.as_deref().unwrap_or("none"),
            c.test,
            status,
            c.ops_per_sec.map_or("-".into(), |x| format!("{x:.0}")),
            f(|l| l.mean),
            f(|l| l.p50),
            f(|l| l.p99),
            f(|l| l.stdev),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_presets_are_the_reports_tests() {
        let names: Vec<&str> = PRESETS.iter().map(|p| p.name).collect();
        assert_eq!(
            names,
            ["read", "write-1", "write-3", "write-6", "mix95-8", "mix99-8"]
        );
        assert!(PRESETS
            .iter()
            .all(|p| (0.0..=1.0).contains(&p.read) && p.threads >= 1));
    }
}
