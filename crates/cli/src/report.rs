//! `yardstick report`: reads results, suite indexes and matrix indexes (files
//! or directories) and writes one self-contained HTML report, or its tables as
//! Markdown or CSV.
use crate::{read_result, CliError};
use clap::ValueEnum;
use std::path::{Path, PathBuf};
use yardstick_orchestrate::index::{self, AnyIndex, CellStatus, SloStatus, StepStatus};
use yardstick_report::html::{Entry, Inputs};

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ReportFormat {
    /// One HTML file with inline SVG charts; needs no network to view.
    Html,
    /// The report's tables as Markdown.
    Md,
    /// The report's tables as CSV (a `table` column names each table).
    Csv,
}

fn bad(msg: impl std::fmt::Display) -> CliError {
    CliError::bad_input(msg)
}

fn relative(dir: &Path, name: &str) -> PathBuf {
    dir.join(name)
}

/// Adds a file (result, suite index or matrix index) to the inputs.
fn add_file(path: &Path, inputs: &mut Inputs) -> Result<(), CliError> {
    let v = yardstick_core::result::read::json(path, "result or index").map_err(bad)?;
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path.display().to_string();
    if index::kind_of(&v).is_some() {
        add_index(dir, name, index::from_value(path, v).map_err(bad)?, inputs)?;
        return Ok(());
    }
    if v["kind"].as_str() == Some("tpcc") {
        if let Some(result) = crate::tpcc_of(path, v)? {
            inputs.tpcc.push(yardstick_report::tpcc::TpccEntry {
                file: name,
                result,
                label: None,
            });
        }
    } else {
        let r = yardstick_core::result::read::from_value(path, v).map_err(bad)?;
        inputs.entries.push(Entry::from_result(name, r));
    }
    Ok(())
}

/// Adds a suite's or matrix's finished phases, and the index itself.
fn add_index(
    dir: &Path,
    name: String,
    index: AnyIndex,
    inputs: &mut Inputs,
) -> Result<(), CliError> {
    match index {
        AnyIndex::Suite(index) => {
            for st in &index.steps {
                let (Some(file), StepStatus::Ok) = (&st.result, st.status) else {
                    continue;
                };
                let result = read_result(&relative(dir, file))?;
                inputs.entries.push(Entry {
                    file: relative(dir, file).display().to_string(),
                    target: index.targets.get(st.target).cloned().unwrap_or_default(),
                    // a search that never met its bound kept its closed-loop probe
                    workload: if st
                        .slo
                        .as_ref()
                        .is_some_and(|o| o.status == SloStatus::Unmet)
                    {
                        format!("{} (bound not met; closed loop)", st.step)
                    } else {
                        st.step.clone()
                    },
                    records: st.records,
                    repetition: st.repetition,
                    data_before: st.data_before.as_ref().map(|d| d.describe()),
                    result,
                });
            }
            inputs.suites.push((name, index));
        }
        AnyIndex::Matrix(index) => {
            for l in &index.loads {
                if let Some(file) = &l.result {
                    let mut e = Entry::from_result(
                        relative(dir, file).display().to_string(),
                        read_result(&relative(dir, file))?,
                    );
                    e.workload = "load".into();
                    inputs.entries.push(e);
                }
            }
            for c in &index.cells {
                let (Some(file), CellStatus::Ok) = (&c.result, c.status) else {
                    continue;
                };
                let mut e = Entry::from_result(
                    relative(dir, file).display().to_string(),
                    read_result(&relative(dir, file))?,
                );
                e.workload = format!("{} @{}", c.test, c.budget.as_deref().unwrap_or("none"));
                inputs.entries.push(e);
            }
            inputs.matrices.push((name, index));
        }
    }
    Ok(())
}

/// Reads every input: a file, or a directory with an index.json (a suite or
/// matrix) or result files.
pub(crate) fn gather(paths: &[PathBuf]) -> Result<Inputs, CliError> {
    let mut inputs = Inputs::default();
    for p in paths {
        if p.is_dir() {
            let index = p.join("index.json");
            if index.exists() {
                add_file(&index, &mut inputs)?;
                continue;
            }
            let mut files: Vec<PathBuf> = std::fs::read_dir(p)
                .map_err(|e| bad(format!("{}: cannot list it: {e}", p.display())))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| f.extension().is_some_and(|x| x == "json"))
                .collect();
            files.sort();
            if files.is_empty() {
                return Err(bad(format!(
                    "{}: no result files (*.json) or index.json in it",
                    p.display()
                )));
            }
            for f in files {
                add_file(&f, &mut inputs)?;
            }
        } else {
            add_file(p, &mut inputs)?;
        }
    }
    if inputs.entries.is_empty()
        && inputs.suites.is_empty()
        && inputs.matrices.is_empty()
        && inputs.tpcc.is_empty()
    {
        return Err(bad("nothing to report: the inputs hold no finished phase"));
    }
    inputs.label_by_tags();
    Ok(inputs)
}

pub(crate) fn execute(
    paths: &[PathBuf],
    out: &Path,
    format: Option<ReportFormat>,
    title: Option<&str>,
) -> Result<i32, CliError> {
    let format = format.unwrap_or_else(|| match out.extension().and_then(|e| e.to_str()) {
        Some("md") => ReportFormat::Md,
        Some("csv") => ReportFormat::Csv,
        _ => ReportFormat::Html,
    });
    yardstick_core::result::check_writable(out).map_err(|e| {
        bad(format!(
            "cannot write {}: {e}; choose another -o",
            out.display()
        ))
    })?;
    let inputs = gather(paths)?;
    let title = title.unwrap_or("yardstick report");
    let now = yardstick_core::result::time::rfc3339(std::time::SystemTime::now());
    let text = match format {
        ReportFormat::Html => yardstick_report::html::html(&inputs, title, &now),
        ReportFormat::Md => yardstick_report::html::markdown(&inputs, title),
        ReportFormat::Csv => yardstick_report::html::csv(&inputs),
    };
    yardstick_core::result::write_atomic(out, text.as_bytes())
        .map_err(|e| CliError::failed(format!("cannot write {}: {e}", out.display())))?;
    println!(
        "report of {} results: {} ({} KiB)",
        inputs.entries.len() + inputs.tpcc.len(),
        out.display(),
        text.len().div_ceil(1024)
    );
    Ok(0)
}
