//! Result files: written atomically (temporary file, fsync, rename) so a crash
//! or Ctrl-C never leaves a torn file or destroys an earlier result; only
//! regular files (or new ones) are written, and the temporary files a killed
//! process left are swept.
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

fn temp_name(path: &Path) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!(".{name}.tmp-")
}

fn temp_path(path: &Path) -> PathBuf {
    path.with_file_name(format!("{}{}", temp_name(path), std::process::id()))
}

/// Temporary files being written now, removed by [`remove_pending`] when a
/// second signal ends the process before they are renamed into place.
static PENDING: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Removes the temporary files being written (from a signal's last moments).
pub fn remove_pending() {
    if let Ok(p) = PENDING.try_lock() {
        for f in p.iter() {
            let _ = std::fs::remove_file(f);
        }
    }
}

/// Refuses an existing `path` that is not a regular file. A symbolic link is
/// refused rather than followed: a result replaces its file whole (a new
/// file renamed over the old one), which would replace the link itself, and
/// following it would let whoever can write the link's directory choose
/// where a process (perhaps root's) writes.
fn refuse_special(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::FileTypeExt;
    let t = match std::fs::symlink_metadata(path) {
        Ok(m) => m.file_type(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    let what = if t.is_symlink() {
        "is a symbolic link (a result replaces its file whole, which would replace the link, not what it points to): give the path of a regular file"
    } else if t.is_dir() {
        "is a directory"
    } else if t.is_fifo() {
        "is a FIFO, not a regular file"
    } else if t.is_char_device() || t.is_block_device() {
        "is a device, not a regular file"
    } else if t.is_socket() {
        "is a socket, not a regular file"
    } else {
        return Ok(());
    };
    Err(std::io::Error::other(what))
}

/// Removes the temporary files of `path` that processes killed while writing
/// it left behind (their process is gone).
fn sweep_stale(path: &Path) {
    let (Some(dir), prefix) = (path.parent(), temp_name(path)) else {
        return;
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix(&prefix)
            .and_then(|p| p.parse::<i32>().ok())
        else {
            continue;
        };
        // SAFETY: kill(2) with signal 0 only asks whether the process exists.
        let gone = pid != std::process::id() as i32
            && unsafe { libc::kill(pid, 0) } != 0
            && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
        if gone {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// Creates the temporary file for `path`, new (never through a link left at its name).
fn create_temp(tmp: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let _ = std::fs::remove_file(tmp);
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o644)
        .open(tmp)
}

/// Fails early, before any work, when `path` cannot be written: its
/// directory is made, an existing entry must be a regular file, and a
/// temporary file beside it must be possible. Stale temporary files of
/// killed processes are swept.
/// Creates `dir` and its parents; a file in the way is named.
fn make_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| {
        let in_the_way = dir.ancestors().find(|a| a.exists() && !a.is_dir());
        match in_the_way {
            Some(f) => std::io::Error::new(
                e.kind(),
                format!("{} is a file, not a directory", f.display()),
            ),
            None => e,
        }
    })
}

pub fn check_writable(path: &Path) -> std::io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        make_dir(dir)?;
    }
    refuse_special(path)?;
    sweep_stale(path);
    let probe = temp_path(path);
    create_temp(&probe)?;
    std::fs::remove_file(&probe)
}

/// Writes `bytes` to `path` atomically: a new temporary file beside it,
/// synced, renamed over `path` (a reader never sees half a file, and an
/// earlier result survives a crash), the directory synced.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        make_dir(dir)?;
    }
    refuse_special(path)?;
    sweep_stale(path);
    let tmp = temp_path(path);
    if let Ok(mut p) = PENDING.lock() {
        p.push(tmp.clone());
    }
    let result = (|| {
        let mut f = create_temp(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)?;
        // the rename itself survives a crash once the directory is synced
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
        if let Ok(d) = std::fs::File::open(dir.unwrap_or(Path::new("."))) {
            let _ = d.sync_all();
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    if let Ok(mut p) = PENDING.lock() {
        p.retain(|f| f != &tmp);
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
    fn links_devices_fifos_and_directories_are_refused_and_stale_temps_swept() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target.json");
        std::fs::write(&target, "keep").unwrap();
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        for (p, what) in [
            (link.as_path(), "symbolic link"),
            (Path::new("/dev/null"), "device"),
            (dir.path(), "directory"),
        ] {
            let e = check_writable(p).unwrap_err().to_string();
            assert!(e.contains(what), "{p:?}: {e}");
            let e = write_atomic(p, b"x").unwrap_err().to_string();
            assert!(e.contains(what), "{p:?}: {e}");
        }
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: mkfifo(3) on a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        assert!(check_writable(&fifo)
            .unwrap_err()
            .to_string()
            .contains("FIFO"));
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        // a temporary file of a process that is gone is swept, not another's
        let r = dir.path().join("r.json");
        let dead = dir.path().join(format!(".r.json.tmp-{}", i32::MAX - 1));
        let alive = dir.path().join(".r.json.tmp-1");
        std::fs::write(&dead, "torn").unwrap();
        std::fs::write(&alive, "being written").unwrap();
        write_atomic(&r, b"whole").unwrap();
        assert!(!dead.exists() && alive.exists());
        assert_eq!(std::fs::read(&r).unwrap(), b"whole");
    }

    #[test]
    fn unwritable_location_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, "x").unwrap();
        assert!(check_writable(&file.join("r.json")).is_err());
    }
}
