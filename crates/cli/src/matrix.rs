//! `yardstick matrix`: its arguments, and the table printed; the work is
//! [`yardstick_orchestrate::matrix`].
use crate::{CliError, EXIT_FAILED};
use clap::Args;
use std::path::PathBuf;
use std::time::Duration;
use yardstick_orchestrate::matrix::{self, MatrixSpec};

#[derive(Args, Debug, Clone)]
pub(crate) struct MatrixArgs {
    /// An engine to test, as a URL with its own options (cache sizes are the
    /// engine's, separate from the budgets); repeatable, e.g.
    /// --db 'rocksdb:///data/rocks?cache_size=1GiB' --db 'wiredtiger:///data/wt?cache_size=1GiB'.
    /// A database server on this machine (MariaDB with InnoDB or MyRocks:
    /// mysql://...?engine=rocksdb) is capped as a process of its own, and its
    /// table emptied before the load.
    #[arg(long = "db", value_name = "URL", required = true)]
    pub dbs: Vec<String>,
    /// Memory budgets, comma-separated (3G, 512MiB; `none` for uncapped): of
    /// the whole benchmark process for an embedded engine, of the server's
    /// process for a server.
    #[arg(long, value_delimiter = ',', default_value = "1G,3G,6G")]
    pub budgets: Vec<String>,
    /// Tests to run, comma-separated, from: read, write-1, write-3, write-6, mix95-8, mix99-8.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "read,write-1,write-3,write-6,mix95-8,mix99-8"
    )]
    pub tests: Vec<String>,
    /// Records loaded into each engine.
    #[arg(long, default_value_t = 1_000_000)]
    pub records: u64,
    /// Fields per record and bytes per field (the report's records were about 1 KB).
    #[arg(long, default_value_t = 1)]
    pub fieldcount: u64,
    #[arg(long, default_value_t = 1000)]
    pub fieldlength: u64,
    /// Field values: text (review-like, compressible) or random (YCSB's).
    #[arg(long, default_value = "text")]
    pub values: String,
    /// Measured time of each cell.
    #[arg(long, value_parser = crate::parse_duration_arg, default_value = "60s")]
    pub duration: Duration,
    /// Warm-up before each cell's measurement (same mix, not measured).
    #[arg(long, value_parser = crate::parse_duration_arg, default_value = "10s")]
    pub warmup: Duration,
    /// Seed of every cell (the same operation streams for every engine).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Directory for the cells' results and index.json.
    #[arg(long, value_name = "DIR", default_value = "results/matrix")]
    pub out_dir: PathBuf,
    /// Skip the loads (the engines' directories are loaded already).
    #[arg(long)]
    pub no_load: bool,
}

impl MatrixArgs {
    /// The typed spec; a budget that is not a size is refused here.
    pub(crate) fn spec(&self) -> Result<MatrixSpec, CliError> {
        let budgets = self
            .budgets
            .iter()
            .map(|b| match b.trim() {
                "none" => Ok(None),
                s => crate::parse_size_arg(s)
                    .map(|n| Some((s.to_string(), n)))
                    .map_err(|e| CliError::bad_input(format!("--budgets: {e}"))),
            })
            .collect::<Result<_, _>>()?;
        let mut servers = Vec::new();
        for db in &self.dbs {
            let named = yardstick_bindings::servers(db)
                .map_err(|e| CliError::bad_input(format!("--db: {e}")))?;
            if named.is_some() {
                servers.push(db.clone());
            }
        }
        Ok(MatrixSpec {
            dbs: self.dbs.clone(),
            servers,
            budgets,
            tests: self.tests.clone(),
            records: self.records,
            fieldcount: self.fieldcount,
            fieldlength: self.fieldlength,
            values: self.values.clone(),
            duration: self.duration,
            warmup: self.warmup,
            seed: self.seed,
            out_dir: self.out_dir.clone(),
            no_load: self.no_load,
        })
    }
}

/// Runs the matrix; the exit code is 1 when a cell failed for a reason
/// other than its memory budget.
pub(crate) fn execute(a: &MatrixArgs) -> Result<i32, CliError> {
    let spec = a.spec()?;
    let control = crate::control()?;
    let say = |line: &str| eprintln!("yardstick matrix: {line}");
    let env = crate::env(&control, &say)?;
    let run = matrix::execute(&spec, &env)?;
    print!("{}", matrix::table(&run.index));
    println!("index: {}", run.index_path.display());
    Ok(if run.failed { EXIT_FAILED } else { 0 })
}
