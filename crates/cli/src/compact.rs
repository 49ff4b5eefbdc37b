//! `yardstick compact --db URL`: a full manual compaction of an embedded
//! engine's data (RocksDB, LevelDB, WiredTiger), so a run can be measured
//! "after compaction" as the reports do; it prints the time it took and the
//! bytes on disk and files per level before and after.
use crate::CliError;
use std::sync::Arc;
use std::time::Instant;
use yardstick_bindings::WithBinding;
use yardstick_core::binding::{Binding, BindingError, OpenOptions};
use yardstick_core::observe::Value;
use yardstick_core::result::redact::Redactor;

#[derive(clap::Args, Debug)]
pub(crate) struct CompactArgs {
    /// The database a load wrote (rocksdb://, leveldb:// or wiredtiger://).
    #[arg(long, value_name = "URL")]
    pub db: String,
}

pub(crate) fn execute(a: &CompactArgs) -> Result<i32, CliError> {
    let mut redactor = Redactor::default();
    redactor.add_url(&a.db);
    let props = yardstick_core::workload::Properties::default();
    let config = yardstick_core::workload::CoreConfig::from_properties(&props)
        .map_err(|e| CliError::failed(e.to_string()))?;
    let opts = OpenOptions {
        schema: config.schema(),
        insert_mode: config.insert_mode,
        update_mode: config.update_mode,
        create: false,
        sessions: 1,
        data_integrity: false,
        scans: false,
    };
    let report = yardstick_bindings::open(&a.db, &opts, Compact)
        .map_err(|e| CliError::bad_input(redactor.redact(&e.to_string())))?
        .map_err(|e| match e {
            BindingError::Unsupported(m) | BindingError::Config(m) => CliError::bad_input(m),
            e => CliError::failed(redactor.redact(&e.to_string())),
        })?;
    println!("{}", redactor.redact(&format!("{}: {report}", a.db)));
    Ok(0)
}

struct Compact;

/// What a compaction did.
struct Report {
    seconds: f64,
    bytes: (Option<u64>, Option<u64>),
    levels: (String, String),
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "compacted in {:.1} s", self.seconds)?;
        if let (Some(a), Some(b)) = self.bytes {
            write!(f, "; on disk {} -> {}", human_bytes(a), human_bytes(b))?;
        }
        if !self.levels.0.is_empty() {
            write!(
                f,
                "; files per level {} -> {}",
                self.levels.0, self.levels.1
            )?;
        }
        Ok(())
    }
}

impl WithBinding for Compact {
    type Output = Result<Report, BindingError>;

    fn call<B: Binding>(self, binding: Arc<B>) -> Self::Output {
        let mut stats = binding.statistics();
        let mut levels = || {
            stats
                .as_mut()
                .and_then(|s| s.sample().ok())
                .map(|v| levels(&v))
                .unwrap_or_default()
        };
        let before = (binding.disk_bytes(), levels());
        let started = Instant::now();
        binding.compact()?;
        let seconds = started.elapsed().as_secs_f64();
        let after = (binding.disk_bytes(), levels());
        Ok(Report {
            seconds,
            bytes: (before.0, after.0),
            levels: (before.1, after.1),
        })
    }
}

/// Bytes in MiB, the unit a data set's size is read in.
fn human_bytes(b: u64) -> String {
    format!("{:.1} MiB", b as f64 / f64::from(1 << 20))
}

/// `L0 4, L1 2, L6 9`: the levels holding files.
fn levels(values: &[Value]) -> String {
    let mut out = Vec::new();
    for l in 0..16 {
        let name = format!("db.level.L{l}.files");
        match values.iter().find(|v| v.name == name) {
            Some(v) if v.value > 0.0 => out.push(format!("L{l} {}", v.value)),
            Some(_) => {}
            None if l > 0 => break,
            None => {}
        }
    }
    if out.is_empty() && values.iter().any(|v| v.name.starts_with("db.level.")) {
        return "none".into();
    }
    out.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_name_only_those_holding_files() {
        let v = vec![
            Value::gauge("db.level.L0.files", "files", 4.0),
            Value::gauge("db.level.L1.files", "files", 0.0),
            Value::gauge("db.level.L2.files", "files", 9.0),
        ];
        assert_eq!(levels(&v), "L0 4, L2 9");
        assert_eq!(
            levels(&[Value::gauge("db.level.L0.files", "files", 0.0)]),
            "none"
        );
        assert_eq!(levels(&[]), "");
    }
}
