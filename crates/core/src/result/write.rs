//! Result files: written atomically (temporary file, fsync, rename) so a crash
//! or Ctrl-C never leaves a torn file or destroys an earlier result.
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

fn temp_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.tmp-{}", std::process::id()))
}

/// Fails early, before any work, when `path` cannot be written.
pub fn check_writable(path: &Path) -> std::io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    if path.is_dir() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::IsADirectory,
            "is a directory",
        ));
    }
    let probe = temp_path(path);
    std::fs::File::create(&probe)?;
    std::fs::remove_file(&probe)
}

pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = temp_path(path);
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// `results/20261122-103105-run-workloada-sqlite.json`, never an existing file.
pub fn default_result_path(
    dir: &Path,
    at: SystemTime,
    phase: &str,
    workload: &str,
    scheme: &str,
) -> PathBuf {
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    let stem = format!(
        "{}-{}-{}-{}",
        super::time::compact(at),
        clean(phase),
        clean(workload),
        clean(scheme)
    );
    let mut path = dir.join(format!("{stem}.json"));
    let mut n = 2;
    while path.exists() {
        path = dir.join(format!("{stem}-{n}.json"));
        n += 1;
    }
    path
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_whole_files_and_names_never_collide() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sub/r.json");
        check_writable(&p).unwrap();
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        assert_eq!(
            std::fs::read_dir(p.parent().unwrap()).unwrap().count(),
            1,
            "no temporary files left"
        );
        let at = SystemTime::UNIX_EPOCH;
        let a = default_result_path(dir.path(), at, "run", "workloada", "null");
        std::fs::write(&a, "x").unwrap();
        let b = default_result_path(dir.path(), at, "run", "workloada", "null");
        assert_ne!(a, b);
        assert!(
            check_writable(dir.path()).is_err(),
            "a directory is not a result file"
        );
    }

    #[test]
    fn unwritable_location_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, "x").unwrap();
        assert!(check_writable(&file.join("r.json")).is_err());
    }
}
