//! `yardstick suite`: a sequence of loads and runs as one command, per target,
//! data size and repetition, with the same seed and properties everywhere.
//! Each phase runs as a child `yardstick load|run` with its own result file;
//! `index.json` in the output directory ties them together, records the
//! dirty/clean state of the data before every phase, and is rewritten after
//! every phase so an interrupted suite resumes from the last finished phase.
//!
//! [`plan`] checks a [`SuiteSpec`] and lays out every step; [`execute`] runs
//! the plan's steps that are not finished yet.
mod presets;
mod step;
mod summary;
pub mod until;

use crate::index::{self, *};
use crate::slo::{Search, Slo};
use crate::{Env, Error};
pub use presets::*;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::Duration;
use step::StepCtx;
pub use summary::{summarize, table};
use yardstick_core::result::RunResult;
use yardstick_core::run::converge::Until;
use yardstick_core::stats::ci::mean_ci;

/// What to run: the command line's options, typed.
#[derive(Debug, Clone)]
pub struct SuiteSpec {
    pub suite: SuiteName,
    /// Target URLs; each gets the same sequence, seed and properties.
    pub dbs: Vec<String>,
    /// Data sizes; empty for the preset's.
    pub records: Vec<u64>,
    pub repeat: u32,
    /// `--until "ci<5%"`: end the repetitions once they converged.
    pub until: Option<String>,
    /// A latency bound to search the throughput under; `None` for the preset's.
    pub slo: Option<String>,
    pub slo_bisections: u32,
    pub duration: Duration,
    pub warmup: Duration,
    pub threads: usize,
    /// Threads of the loads; `None` for `threads`.
    pub load_threads: Option<usize>,
    pub concurrency: usize,
    pub seed: u64,
    /// name=value overrides for every phase.
    pub properties: Vec<String>,
    /// Only these phases of the sequence, by name; empty for all.
    pub only: Vec<String>,
    pub out_dir: PathBuf,
}

/// A checked spec with every step laid out.
#[derive(Debug, Clone)]
pub struct SuitePlan {
    pub spec: SuiteSpec,
    pub slo: Option<Slo>,
    /// `--until`'s conditions (empty: every repetition runs).
    pub until: Vec<Until>,
    pub load_threads: usize,
    /// Properties of every phase: the preset's, then -p.
    pub props: Vec<String>,
    /// The sequence's phases (all of them, whatever `only` selects).
    pub defs: Vec<StepDef>,
    /// The index a fresh run starts from.
    pub index: SuiteIndex,
}

/// How a suite ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SuiteOutcome {
    /// Every phase finished.
    Complete,
    /// Some phase failed; the others ran (those needing a failed load did not).
    Failed,
    /// Ctrl-C; the same command resumes.
    Interrupted,
}

/// The finished (or stopped) suite.
#[derive(Debug, Clone)]
pub struct SuiteRun {
    pub index: SuiteIndex,
    pub index_path: PathBuf,
    pub outcome: SuiteOutcome,
}

fn bad(msg: impl std::fmt::Display) -> Error {
    Error::BadInput(msg.to_string())
}

/// FNV-1a over the canonical description of the suite.
fn fingerprint(parts: &[String]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for b in p.bytes().chain([0u8]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("{h:016x}")
}

/// The records the chain of step `i` holds when it starts: the load's count,
/// grown by the inserts of the run phases since.
fn grown_records(plan: &[StepRecord], defs: &[StepDef], i: usize) -> u64 {
    let s = &plan[i];
    let mut n = s.records;
    for p in plan[..=i]
        .iter()
        .filter(|p| p.target == s.target && p.records == s.records && p.repetition == s.repetition)
    {
        if defs.iter().any(|d| d.name == p.step && d.load) && p.status == StepStatus::Ok {
            n = s.records;
        } else if let Some(k) = p.next_insert_keynum {
            n = n.max(k);
        }
    }
    n
}

/// The state of the data before step `i` of `plan` (steps of one chain:
/// same target, size and repetition), from what ran before it.
fn data_before(plan: &[StepRecord], defs: &[StepDef], i: usize) -> DataState {
    let mut written = Vec::new();
    let s = &plan[i];
    for p in plan[..i]
        .iter()
        .filter(|p| p.target == s.target && p.records == s.records && p.repetition == s.repetition)
    {
        let def = defs.iter().find(|d| d.name == p.step);
        if def.is_some_and(|d| d.load) && p.status == StepStatus::Ok {
            written.clear();
        } else if def.is_some_and(|d| d.writes) && p.status != StepStatus::Pending {
            written.push(if p.status == StepStatus::Ok {
                p.step.clone()
            } else {
                format!("{} ({})", p.step, p.status.name())
            });
        }
    }
    // an earlier attempt of this very phase (interrupted or failed) wrote too
    if defs.iter().any(|d| d.name == s.step && d.writes && !d.load)
        && !matches!(
            s.status,
            StepStatus::Pending | StepStatus::Ok | StepStatus::Skipped
        )
    {
        written.push(format!("{} ({})", s.step, s.status.name()));
    }
    DataState {
        state: if written.is_empty() {
            Cleanliness::Clean
        } else {
            Cleanliness::Dirty
        },
        written_since_load: written,
    }
}

/// Checks `spec` and lays out every step; nothing runs and nothing is written.
pub fn plan(spec: &SuiteSpec) -> Result<SuitePlan, Error> {
    let a = spec;
    let preset = preset(a.suite);
    let records: Vec<u64> = if a.records.is_empty() {
        preset.records.to_vec()
    } else {
        a.records.clone()
    };
    let slo = a
        .slo
        .as_deref()
        .or(preset.slo)
        .map(Slo::parse)
        .transpose()
        .map_err(bad)?;
    if a.repeat == 0 {
        return Err(bad("--repeat must be at least 1"));
    }
    let until = match &a.until {
        Some(u) => Until::parse_all(u).map_err(bad)?,
        None => Vec::new(),
    };
    if !until.is_empty() && a.repeat < until::MIN_REPETITIONS {
        return Err(bad(format!(
            "--until ends a series of repetitions: give --repeat {} or more (the most it may run)",
            until::MIN_REPETITIONS
        )));
    }
    if a.slo_bisections == 0 {
        return Err(bad(
            "--slo-bisections must be at least 1: the search halves the rate range that many times",
        ));
    }
    if a.threads == 0 || a.concurrency == 0 || a.load_threads == Some(0) {
        return Err(bad(
            "--threads, --load-threads and --concurrency must be at least 1",
        ));
    }
    if a.duration.is_zero() {
        return Err(bad(
            "--duration must be longer than zero: every run phase is time-bounded",
        ));
    }
    for o in &a.properties {
        if !o.contains('=') {
            return Err(bad(format!("-p {o} is not a property: write name=value")));
        }
        let name = o.split('=').next().unwrap_or("").trim();
        if [
            "recordcount",
            "operationcount",
            "maxexecutiontime",
            "threadcount",
            "target",
        ]
        .contains(&name)
        {
            return Err(bad(format!(
                "-p {name} is set by the suite: use --records, --duration, --threads or --slo instead"
            )));
        }
    }
    let defs: Vec<&StepDef> = if a.only.is_empty() {
        preset.steps.iter().collect()
    } else {
        let names: Vec<&str> = preset.steps.iter().map(|s| s.name).collect();
        for o in &a.only {
            if !names.contains(&o.trim()) {
                return Err(bad(format!(
                    "--only {o} is not a phase of this suite: use {}",
                    names.join(", ")
                )));
            }
        }
        preset
            .steps
            .iter()
            .filter(|s| a.only.iter().any(|o| o.trim() == s.name))
            .collect()
    };
    crate::distinct_labels(
        &a.dbs,
        "two --db URLs look alike (scheme and last path component): give each target its own database name",
    )?;
    let load_threads = a.load_threads.unwrap_or(a.threads);
    let mut props: Vec<String> = preset
        .props
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    props.extend(a.properties.iter().cloned());
    let mut parts = vec![
        format!("{:?}", a.suite),
        format!("{records:?}"),
        a.repeat.to_string(),
        format!("{:?}", a.until),
        format!("{:?}", slo.as_ref().map(|s| &s.text)),
        a.slo_bisections.to_string(),
        a.duration.as_millis().to_string(),
        a.warmup.as_millis().to_string(),
        a.threads.to_string(),
        load_threads.to_string(),
        a.concurrency.to_string(),
        a.seed.to_string(),
        format!("{:?}", defs.iter().map(|d| d.name).collect::<Vec<_>>()),
    ];
    parts.extend(a.dbs.iter().cloned());
    parts.extend(props.iter().cloned());
    let mut steps = Vec::new();
    for (t, db) in a.dbs.iter().enumerate() {
        for &r in &records {
            for rep in 1..=a.repeat {
                for (k, d) in defs.iter().enumerate() {
                    let id = format!("{}-r{r}-rep{rep}-{:02}-{}", crate::label(db), k + 1, d.name);
                    steps.push(StepRecord {
                        id,
                        target: t,
                        records: r,
                        repetition: rep,
                        step: d.name.into(),
                        description: d.description.into(),
                        phase: if d.load {
                            PhaseKind::Load
                        } else {
                            PhaseKind::Run
                        },
                        workload: d.workload.into(),
                        status: StepStatus::Pending,
                        exit_code: None,
                        data_before: None,
                        result: None,
                        ops_per_sec: None,
                        latency_us: BTreeMap::new(),
                        slo: None,
                        next_insert_keynum: None,
                        started_at: None,
                        ended_at: None,
                    });
                }
            }
        }
    }
    let index = SuiteIndex {
        kind: SUITE_KIND.into(),
        schema_version: SUITE_SCHEMA_VERSION,
        suite: a.suite,
        tool_version: env!("CARGO_PKG_VERSION").into(),
        fingerprint: fingerprint(&parts),
        targets: a
            .dbs
            .iter()
            .map(|d| yardstick_core::result::redact_url(d))
            .collect(),
        records,
        repeat: a.repeat,
        seed: a.seed,
        duration_s: a.duration.as_secs_f64(),
        warmup_s: a.warmup.as_secs_f64(),
        threads: a.threads,
        load_threads,
        concurrency: a.concurrency,
        properties: props.clone(),
        slo: slo.as_ref().map(|s| s.text.clone()),
        until: (!until.is_empty()).then(|| until::method(&until)),
        steps,
        summary: vec![],
        scaling: vec![],
    };
    Ok(SuitePlan {
        spec: spec.clone(),
        slo,
        until,
        load_threads,
        props,
        defs: preset.steps.to_vec(),
        index,
    })
}

/// Every phase of the plan checked as it will run (a run with its closed
/// loop), before any work.
fn check_every_phase(plan: &SuitePlan, env: &Env) -> Result<(), Error> {
    let steps = &plan.index.steps;
    for (i, st) in steps.iter().enumerate() {
        let def = plan
            .defs
            .iter()
            .find(|d| d.name == st.step)
            .ok_or_else(|| bad("the plan names a phase this suite does not have"))?;
        let ctx = StepCtx {
            plan,
            env,
            def,
            db: &plan.spec.dbs[st.target],
            records: st.records,
            records_now: std::cell::Cell::new(grown_records(steps, &plan.defs, i)),
            id: st.id.clone(),
        };
        let file = plan.spec.out_dir.join(format!("{}.json", st.id));
        env.checked(&ctx.args(None, &file))?;
    }
    Ok(())
}

/// After step `i`, the last of its repetition: when the repetitions so far
/// have converged, the later ones of the same target and size are not run.
fn stop_converged(plan: &SuitePlan, steps: &mut [StepRecord], i: usize, env: &Env) {
    let s = &steps[i];
    let last = plan
        .defs
        .iter()
        .rev()
        .find(|d| plan.index.steps.iter().any(|p| p.step == d.name));
    if last.is_none_or(|d| d.name != s.step) {
        return;
    }
    let runs: Vec<&str> = plan
        .defs
        .iter()
        .filter(|d| !d.load && plan.index.steps.iter().any(|p| p.step == d.name))
        .map(|d| d.name)
        .collect();
    let (target, records, rep) = (s.target, s.records, s.repetition);
    let Some(widest) = until::converged(steps, &runs, &plan.until, (target, records, rep)) else {
        return;
    };
    let mut left = 0;
    for later in steps.iter_mut().filter(|p| {
        p.target == target
            && p.records == records
            && p.repetition > rep
            && p.status == StepStatus::Pending
    }) {
        later.status = StepStatus::Converged;
        left += 1;
    }
    if left > 0 {
        (env.say)(&format!(
            "converged after {rep} repetitions (widest interval ±{:.2}% of its mean): the remaining {left} phases of this target and size are not run",
            widest * 100.0
        ));
    }
}

/// Runs the plan's unfinished steps, resuming from the index in the output
/// directory when it holds the same suite.
pub fn execute(plan: &SuitePlan, env: &Env) -> Result<SuiteRun, Error> {
    let a = &plan.spec;
    check_every_phase(plan, env)?;
    crate::create_dir(&a.out_dir)?;
    let index_path = a.out_dir.join("index.json");
    let mut index = plan.index.clone();
    if index_path.exists() {
        let old = index::read_suite(&index_path).map_err(|e| {
            bad(format!(
                "{e}; the directory holds no suite this yardstick can resume: choose another --out-dir"
            ))
        })?;
        if old.fingerprint != index.fingerprint {
            return Err(bad(format!(
                "{} holds another suite (different targets, sizes, properties or options): choose another --out-dir, or delete it to start over",
                a.out_dir.display()
            )));
        }
        let done = old
            .steps
            .iter()
            .filter(|s| s.status == StepStatus::Ok)
            .count();
        (env.say)(&format!(
            "resuming in {}: {done} of {} phases finished",
            a.out_dir.display(),
            old.steps.len()
        ));
        index.steps = old.steps;
    }
    let all_defs = &plan.defs;
    let total = index.steps.len();
    let mut outcome = SuiteOutcome::Complete;
    for i in 0..total {
        if matches!(
            index.steps[i].status,
            StepStatus::Ok | StepStatus::Converged
        ) {
            continue;
        }
        if env.control.stop.load(Ordering::SeqCst) {
            outcome = SuiteOutcome::Interrupted;
            break;
        }
        let def = all_defs
            .iter()
            .find(|d| d.name == index.steps[i].step)
            .cloned()
            .ok_or_else(|| bad("the index names a phase this suite does not have"))?;
        let state = data_before(&index.steps, all_defs, i);
        let st = &index.steps[i];
        let db = &a.dbs[st.target];
        (env.say)(&format!(
            "[{}/{total}] {} · {} records · repetition {} · {} ({}, data {})",
            i + 1,
            yardstick_core::result::redact_url(db),
            st.records,
            st.repetition,
            st.step,
            def.description,
            state.describe()
        ));
        let ctx = StepCtx {
            plan,
            env,
            def: &def,
            db,
            records: st.records,
            records_now: std::cell::Cell::new(grown_records(&index.steps, all_defs, i)),
            id: st.id.clone(),
        };
        index.steps[i].data_before = Some(state);
        index.steps[i].started_at = Some(crate::now());
        index.steps[i].status = StepStatus::Running;
        index::write(&index_path, &index)?;
        let result = match (&plan.slo, def.load) {
            (Some(slo), false) => ctx.slo_search(slo),
            _ => ctx.once(None),
        };
        let grown = ctx.records_now.get();
        let s = &mut index.steps[i];
        s.ended_at = Some(crate::now());
        if !def.load && grown > s.records {
            s.next_insert_keynum = Some(grown);
        }
        match result {
            Ok(o) => {
                s.exit_code = Some(o.code);
                s.status = match o.code {
                    0 => StepStatus::Ok,
                    c if crate::interrupted(c) => StepStatus::Interrupted,
                    _ => StepStatus::Failed,
                };
                s.result = o.file;
                if let Some(r) = &o.result {
                    s.ops_per_sec = Some(r.records_per_sec());
                    s.latency_us = crate::latency_us(r);
                }
                s.slo = o.slo;
            }
            Err(e) => {
                s.status = StepStatus::Failed;
                (env.say)(&e.to_string());
            }
        }
        let status = s.status;
        if status == StepStatus::Ok {
            stop_converged(plan, &mut index.steps, i, env);
        }
        summarize(&mut index);
        index::write(&index_path, &index)?;
        match status {
            StepStatus::Interrupted => {
                outcome = SuiteOutcome::Interrupted;
                break;
            }
            StepStatus::Failed if def.load => {
                // the phases that need this load cannot run; skip to the next chain
                outcome = SuiteOutcome::Failed;
                let (t, r, rep) = (
                    index.steps[i].target,
                    index.steps[i].records,
                    index.steps[i].repetition,
                );
                (env.say)("the load failed; skipping the phases that need it");
                for s in index.steps.iter_mut().skip(i + 1) {
                    if s.target == t
                        && s.records == r
                        && s.repetition == rep
                        && s.status == StepStatus::Pending
                    {
                        s.status = StepStatus::Skipped;
                    }
                }
                index::write(&index_path, &index)?;
            }
            StepStatus::Failed => outcome = SuiteOutcome::Failed,
            _ => {}
        }
    }
    if outcome != SuiteOutcome::Interrupted {
        // skipped phases run again on the next invocation
        for s in index
            .steps
            .iter_mut()
            .filter(|s| s.status == StepStatus::Skipped)
        {
            s.status = StepStatus::Pending;
        }
        index::write(&index_path, &index)?;
    }
    Ok(SuiteRun {
        index,
        index_path,
        outcome,
    })
}

#[cfg(test)]
mod tests;
