//! A data directory's size over time: an embedded engine's directory, or a
//! local server's `--data-dir`, walked at every sample.
use super::{Source, SourceError, Value};
use std::path::{Path, PathBuf};

/// Bytes under one directory (or one file).
pub struct DirSize {
    path: PathBuf,
}

impl DirSize {
    pub fn new(path: impl Into<PathBuf>) -> DirSize {
        DirSize { path: path.into() }
    }
}

/// Apparent bytes of the files under `p`, and how many there are.
pub fn walk(p: &Path) -> std::io::Result<(u64, u64)> {
    let meta = std::fs::symlink_metadata(p)?;
    if !meta.is_dir() {
        return Ok((meta.len(), 1));
    }
    let (mut bytes, mut files) = (0, 0);
    for e in std::fs::read_dir(p)?.flatten() {
        // a file removed meanwhile (a compaction's input) is not an error
        if let Ok((b, f)) = walk(&e.path()) {
            bytes += b;
            files += f;
        }
    }
    Ok((bytes, files))
}

impl Source for DirSize {
    fn name(&self) -> String {
        format!("data directory {}", self.path.display())
    }

    fn sample(&mut self) -> Result<Vec<Value>, SourceError> {
        let (bytes, files) = walk(&self.path).map_err(|e| {
            SourceError::Unavailable(format!(
                "cannot read {}: {e}; give --data-dir a directory this user can read",
                self.path.display()
            ))
        })?;
        Ok(vec![
            Value::gauge("data.bytes", "bytes", bytes as f64),
            Value::gauge("data.files", "files", files as f64),
        ])
    }

    /// The filesystem the directory is on.
    fn configuration(&mut self) -> std::collections::BTreeMap<String, String> {
        super::procfs::filesystem_of(&self.path)
    }
}

/// An embedded engine's size as its binding measures it (`disk_bytes`).
pub struct EngineSize<F> {
    measure: F,
    /// Where its files are, when the binding says.
    path: Option<PathBuf>,
}

impl<F: FnMut() -> Option<u64> + Send> EngineSize<F> {
    pub fn new(measure: F) -> Self {
        EngineSize {
            measure,
            path: None,
        }
    }

    /// Records the filesystem of `path` (the engine's files) too.
    pub fn at(self, path: Option<PathBuf>) -> Self {
        EngineSize { path, ..self }
    }
}

impl<F: FnMut() -> Option<u64> + Send> Source for EngineSize<F> {
    fn name(&self) -> String {
        "engine data".into()
    }

    fn sample(&mut self) -> Result<Vec<Value>, SourceError> {
        let bytes = (self.measure)().ok_or_else(|| {
            SourceError::Unsupported("the engine does not report its size".into())
        })?;
        Ok(vec![Value::gauge("data.bytes", "bytes", bytes as f64)])
    }

    fn configuration(&mut self) -> std::collections::BTreeMap<String, String> {
        self.path
            .as_deref()
            .map(super::procfs::filesystem_of)
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_size_follows_the_files() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join("sub")).unwrap();
        std::fs::write(d.path().join("a"), [0u8; 100]).unwrap();
        std::fs::write(d.path().join("sub/b"), [0u8; 50]).unwrap();
        let mut s = DirSize::new(d.path());
        let v = s.sample().unwrap();
        assert_eq!((v[0].value, v[1].value), (150.0, 2.0));
        let mut missing = DirSize::new(d.path().join("nope"));
        assert!(
            matches!(missing.sample(), Err(SourceError::Unavailable(w)) if w.contains("--data-dir"))
        );
        let mut engine = EngineSize::new(|| Some(7));
        assert_eq!(engine.sample().unwrap()[0].value, 7.0);
        let mut located = EngineSize::new(|| Some(7)).at(Some(d.path().to_path_buf()));
        let fs = located.configuration();
        assert!(fs["path"].ends_with(&*d.path().file_name().unwrap().to_string_lossy()));
        assert!(fs.contains_key("filesystem"), "{fs:?}");
        assert!(DirSize::new(d.path()).configuration().contains_key("mount"));
        let mut none = EngineSize::new(|| None);
        assert!(matches!(none.sample(), Err(SourceError::Unsupported(_))));
    }
}
