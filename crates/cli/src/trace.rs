//! `--trace FILE`: the trace a phase writes while it runs (the format and
//! the writer are [`yardstick_core::trace`]).
use crate::CliError;
use std::path::Path;
use std::sync::Arc;
use yardstick_core::result::{self, Redactor, TraceFile};
use yardstick_core::trace::{Header, Sink};
use yardstick_core::workload::Properties;

/// Checks that `path` can be written, before any work starts.
pub(crate) fn check(path: Option<&Path>) -> Result<(), CliError> {
    let Some(path) = path else { return Ok(()) };
    result::check_writable(path).map_err(|e| {
        CliError::bad_input(format!(
            "cannot write the trace file {}: {e}; choose another --trace",
            path.display()
        ))
    })
}

/// Opens the trace of a phase of `workload` on `url`.
pub(crate) fn open(
    path: Option<&Path>,
    workload: &str,
    url: &str,
    props: &Properties,
    redactor: &Redactor,
) -> Result<Option<Arc<Sink>>, CliError> {
    let Some(path) = path else { return Ok(None) };
    let scheme = url.split("://").next().unwrap_or("").to_ascii_lowercase();
    let header = Header::of(workload, &scheme, props, redactor);
    let sink = Sink::create(path, &header).map_err(|e| {
        CliError::bad_input(format!(
            "cannot write the trace file {}: {e}; choose another --trace",
            path.display()
        ))
    })?;
    Ok(Some(Arc::new(sink)))
}

/// Closes the trace: what it holds, or (in the result's warnings) why it is
/// incomplete.
pub(crate) fn close(
    path: Option<&Path>,
    sink: Option<&Sink>,
    warnings: &mut Vec<String>,
) -> Option<TraceFile> {
    let (path, sink) = (path?, sink?);
    let s = sink.finish();
    if let Some(e) = &s.error {
        warnings.push(format!(
            "trace incomplete: writing {} failed after {} records: {e}",
            path.display(),
            s.records
        ));
    }
    Some(TraceFile {
        file: path.display().to_string(),
        records: s.records,
        bytes: s.bytes,
        complete: s.error.is_none(),
    })
}
