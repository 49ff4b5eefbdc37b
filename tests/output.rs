//! Where results go: only regular files (or new ones) are written; a
//! symbolic link, a device, a FIFO or a directory is refused before any work;
//! a killed process's temporary file is swept; a result that cannot be
//! written (a full disk) still leaves its summary on standard output and an
//! exit code that names the path.
use crate::common::*;
use std::path::Path;

fn run_to(dir: &Path, out: &str) -> Run {
    yardstick(
        dir,
        &[
            "run",
            "--db",
            "null://",
            "-p",
            "operationcount=2000",
            "-q",
            "--out",
            out,
        ],
    )
}

#[test]
fn links_devices_fifos_and_directories_are_refused_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("target.json"), "earlier").unwrap();
    std::os::unix::fs::symlink(d.join("target.json"), d.join("link.json")).unwrap();
    let fifo = std::ffi::CString::new(d.join("fifo").as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: mkfifo(3) on a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
    std::fs::create_dir(d.join("a-dir")).unwrap();
    for (out, expect) in [
        ("link.json", "is a symbolic link"),
        ("/dev/null", "is a device"),
        ("fifo", "is a FIFO"),
        ("a-dir", "is a directory"),
    ] {
        let r = run_to(d, out);
        assert_one_error(&r, out, expect);
        assert!(r.stderr.contains("choose another --out"), "{}", r.stderr);
    }
    assert_eq!(
        std::fs::read_to_string(d.join("target.json")).unwrap(),
        "earlier"
    );
    assert!(std::fs::symlink_metadata(d.join("link.json"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(Path::new("/dev/null").exists());
}

#[test]
fn a_killed_writers_temporary_file_is_swept() {
    let dir = tempfile::tempdir().unwrap();
    let stale = dir.path().join(format!(".r.json.tmp-{}", i32::MAX - 1));
    std::fs::write(&stale, "half a result").unwrap();
    let r = run_to(dir.path(), "r.json");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!stale.exists());
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, ["r.json"]);
}

/// A tmpfs of `kib` KiB at `dir`, unmounted when dropped.
struct Tmpfs(std::path::PathBuf);

impl Tmpfs {
    fn mount(dir: &Path, kib: u32) -> Option<Tmpfs> {
        // runs: mount
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={kib}k"), "tmpfs"])
            .arg(dir)
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| Tmpfs(dir.to_path_buf()))
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        // runs: umount
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn a_full_disk_loses_the_file_not_the_summary() {
    let dir = tempfile::tempdir().unwrap();
    let small = dir.path().join("small");
    std::fs::create_dir(&small).unwrap();
    // one page, filled: room for the empty probe file, not for the result
    let Some(_fs) = Tmpfs::mount(&small, 4) else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI runs as root and can mount a tmpfs"
        );
        eprintln!("skipped: mounting a tmpfs needs root");
        return;
    };
    std::fs::write(small.join("filler"), vec![b'x'; 4096]).unwrap();
    let r = run_to(dir.path(), "small/r.json");
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stdout.contains("READ"), "the summary: {}", r.stdout);
    assert!(r.stdout.contains("result: not written"), "{}", r.stdout);
    assert_one_error_with_code(&r, 1, "cannot write the result file small/r.json");
    assert!(r.stderr.contains("No space left on device"), "{}", r.stderr);
    let left: Vec<_> = std::fs::read_dir(&small)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(left, ["filler"], "no temporary file is left");
}
