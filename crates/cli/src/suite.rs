//! `yardstick suite`: its arguments, and the plan's progress and summary
//! printed; the work is [`yardstick_orchestrate::suite`].
use crate::{CliError, EXIT_FAILED};
use clap::Args;
use std::path::PathBuf;
use std::time::Duration;
use yardstick_orchestrate::index::SuiteName;
use yardstick_orchestrate::suite::{self, SuiteOutcome, SuiteSpec};

#[derive(Args, Debug, Clone)]
pub(crate) struct SuiteArgs {
    /// The sequence to run.
    #[arg(value_enum)]
    pub suite: SuiteName,
    /// A target database URL; repeatable (each gets the same sequence, seed and properties).
    #[arg(long = "db", value_name = "URL", required = true)]
    pub dbs: Vec<String>,
    /// Data sizes, comma-separated (1M, 100k, 2.5M or plain numbers): the
    /// whole sequence at each size, for data-size scaling.
    #[arg(long, value_delimiter = ',', value_parser = parse_count)]
    pub records: Vec<u64>,
    /// Repeat the whole sequence N times; figures get a mean and a 95% confidence interval.
    #[arg(long, default_value_t = 1)]
    pub repeat: u32,
    /// End the repetitions of a target and size once they converged:
    /// "ci<5%" (throughput) or "p99 ci<5%" (each operation's p99), joined
    /// by commas; judged from 3 repetitions on, --repeat the most it runs.
    #[arg(long, value_name = "COND")]
    pub until: Option<String>,
    /// For every run phase, search the maximum throughput whose latency
    /// percentile stays under this bound, e.g. "p99<50ms" or "read:p99.9<10ms".
    #[arg(long, value_name = "BOUND")]
    pub slo: Option<String>,
    /// Bisection steps of an SLO search after the coarse steps.
    #[arg(long, default_value_t = 4)]
    pub slo_bisections: u32,
    /// Measured time of each run phase (and of each SLO step).
    #[arg(long, value_parser = crate::parse_duration_arg, default_value = "30s")]
    pub duration: Duration,
    /// Warm-up before each run phase's measurement.
    #[arg(long, value_parser = crate::parse_duration_arg, default_value = "5s")]
    pub warmup: Duration,
    /// Worker threads of the run phases.
    #[arg(long, default_value_t = 4)]
    pub threads: usize,
    /// Worker threads of the loads.
    #[arg(long)]
    pub load_threads: Option<usize>,
    /// Operations in flight per thread.
    #[arg(long, default_value_t = 1)]
    pub concurrency: usize,
    /// Seed of every phase of every target and repetition.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Property override name=value for every phase; repeatable.
    #[arg(short = 'p', value_name = "NAME=VALUE")]
    pub properties: Vec<String>,
    /// Only these phases of the sequence, comma-separated by name (e.g. load,a,c).
    #[arg(long, value_delimiter = ',')]
    pub only: Vec<String>,
    /// Directory of the phases' results and index.json; rerunning the same
    /// command with it resumes an interrupted suite.
    #[arg(long, value_name = "DIR", default_value = "results/suite")]
    pub out_dir: PathBuf,
}

/// `1M`, `100k`, `2.5M`, `1G` (10^9) or a plain count.
pub(crate) fn parse_count(s: &str) -> Result<u64, yardstick_core::units::CountError> {
    yardstick_core::units::parse_count(s)
}

impl SuiteArgs {
    pub(crate) fn spec(&self) -> SuiteSpec {
        SuiteSpec {
            suite: self.suite,
            dbs: self.dbs.clone(),
            records: self.records.clone(),
            repeat: self.repeat,
            until: self.until.clone(),
            slo: self.slo.clone(),
            slo_bisections: self.slo_bisections,
            duration: self.duration,
            warmup: self.warmup,
            threads: self.threads,
            load_threads: self.load_threads,
            concurrency: self.concurrency,
            seed: self.seed,
            properties: self.properties.clone(),
            only: self.only.clone(),
            out_dir: self.out_dir.clone(),
        }
    }
}

pub(crate) fn execute(a: &SuiteArgs) -> Result<i32, CliError> {
    let plan = suite::plan(&a.spec())?;
    let control = crate::control()?;
    let say = |line: &str| eprintln!("yardstick suite: {line}");
    let env = crate::env(&control, &say)?;
    let run = suite::execute(&plan, &env)?;
    print!("{}", suite::table(&run.index));
    println!("index: {}", run.index_path.display());
    Ok(match run.outcome {
        SuiteOutcome::Complete => 0,
        SuiteOutcome::Failed => EXIT_FAILED,
        SuiteOutcome::Interrupted => {
            say("interrupted; run the same command again to resume from the last finished phase");
            control.exit_code()
        }
    })
}
