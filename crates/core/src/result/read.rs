//! Reading a result file back, with one line that says why a file is not one.
use super::{RunResult, SCHEMA_VERSION};
use std::path::{Path, PathBuf};

/// Why a file is not a result this version reads.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("{}: cannot read it: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: the file is empty, not a yardstick {what}", path.display())]
    Empty { path: PathBuf, what: &'static str },
    #[error("{}: not JSON ({message}); is it truncated?", path.display())]
    NotJson { path: PathBuf, message: String },
    #[error("{}: {}", path.display(), version_text(*found, *reads, what))]
    Version {
        path: PathBuf,
        found: Option<u64>,
        reads: u32,
        what: &'static str,
    },
    #[error("{}: not a complete yardstick {what} ({message})", path.display())]
    Incomplete {
        path: PathBuf,
        what: &'static str,
        message: String,
    },
}

fn version_text(found: Option<u64>, reads: u32, what: &str) -> String {
    match found {
        None => format!("no schema_version: this is not a yardstick {what} (this yardstick reads version {reads})"),
        Some(v) => format!("schema version {v}, but this yardstick reads version {reads}: use the yardstick that wrote it"),
    }
}

/// The JSON document in `path`; `what` names the expected kind in errors.
pub fn json(path: &Path, what: &'static str) -> Result<serde_json::Value, ReadError> {
    let text = std::fs::read_to_string(path).map_err(|source| ReadError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    if text.trim().is_empty() {
        return Err(ReadError::Empty {
            path: path.to_path_buf(),
            what,
        });
    }
    serde_json::from_str(&text).map_err(|e| ReadError::NotJson {
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}

/// `value` as a `T` whose format has `reads` as its schema version; a value
/// without a `schema_version` is read as `missing` (formats that added the
/// field later) or refused when `missing` is `None`.
pub fn versioned<T: serde::de::DeserializeOwned>(
    path: &Path,
    value: serde_json::Value,
    what: &'static str,
    reads: u32,
    missing: Option<u32>,
) -> Result<T, ReadError> {
    let found = value["schema_version"]
        .as_u64()
        .or(if value.get("schema_version").is_none() {
            missing.map(u64::from)
        } else {
            None
        });
    if found != Some(u64::from(reads)) {
        return Err(ReadError::Version {
            path: path.to_path_buf(),
            found: value["schema_version"].as_u64(),
            reads,
            what,
        });
    }
    serde_json::from_value(value).map_err(|e| ReadError::Incomplete {
        path: path.to_path_buf(),
        what,
        message: e.to_string(),
    })
}

/// Reads a result file, its histograms checked (merge, compare and report
/// add and chart them).
pub fn read(path: &Path) -> Result<RunResult, ReadError> {
    from_value(path, json(path, "result")?)
}

/// The result in `value`, read from `path`, its histograms checked.
pub fn from_value(path: &Path, value: serde_json::Value) -> Result<RunResult, ReadError> {
    let r: RunResult = versioned(path, value, "result", SCHEMA_VERSION, None)?;
    for (name, op) in &r.operations {
        let h = &op.histograms;
        let all = [
            ("response", Some(&h.response)),
            ("service", Some(&h.service)),
            ("failed", h.failed.as_ref()),
            ("scan rows", h.scan_rows.as_ref()),
        ];
        for (which, text) in all {
            if let Some(Err(e)) = text.map(|t| crate::stats::decode_histogram(t)) {
                return Err(ReadError::Incomplete {
                    path: path.to_path_buf(),
                    what: "result",
                    message: format!("the {which} histogram of {name} is damaged: {e}"),
                });
            }
        }
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_files_say_why_in_one_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.json");
        assert!(matches!(read(&p), Err(ReadError::Io { .. })));
        std::fs::write(&p, "  \n").unwrap();
        let e = read(&p).unwrap_err().to_string();
        assert!(
            e.ends_with("the file is empty, not a yardstick result"),
            "{e}"
        );
        std::fs::write(&p, "{\"schema_version\": 1").unwrap();
        assert!(read(&p)
            .unwrap_err()
            .to_string()
            .contains("is it truncated?"));
        std::fs::write(&p, "{\"schema_version\": 99}").unwrap();
        let e = read(&p).unwrap_err().to_string();
        assert!(e.contains("schema version 99, but"), "{e}");
        std::fs::write(&p, "[]").unwrap();
        let e = read(&p).unwrap_err().to_string();
        assert!(
            e.contains("no schema_version: this is not a yardstick result"),
            "{e}"
        );
        std::fs::write(&p, format!("{{\"schema_version\": {SCHEMA_VERSION}}}")).unwrap();
        let e = read(&p).unwrap_err().to_string();
        assert!(e.contains("not a complete yardstick result"), "{e}");
        assert!(!e.contains('\n'));
    }

    #[test]
    fn a_missing_version_is_read_as_the_first_only_where_the_format_allows_it() {
        let p = Path::new("x.json");
        let v = serde_json::json!({"a": 1});
        #[derive(serde::Deserialize)]
        struct A {
            #[allow(dead_code)]
            a: u32,
        }
        assert!(versioned::<A>(p, v.clone(), "index", 1, Some(1)).is_ok());
        assert!(versioned::<A>(p, v.clone(), "index", 1, None).is_err());
        assert!(versioned::<A>(p, v, "index", 2, Some(1)).is_err());
    }
}
