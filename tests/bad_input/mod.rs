//! The bad-input corpus: a table per kind of input (flags, properties, URL
//! options, input files), each row a command that must stop before any work
//! with exit code 2, one line on stderr that contains the row's words (what
//! is wrong, the accepted range or form, the fix), nothing on stdout, no
//! panic, no password and no result file. Every failing row is reported at
//! once. `{dir}` in a row is the fixture directory ([`Fixture`]).
use crate::common::*;
use std::path::Path;

mod commands;
mod files;
mod flags;
mod properties;
mod urls;

/// Every password a row may carry; none may appear in the output.
const SECRETS: &[&str] = &["hunter2", "S3cretPw", "benchpw", "not-the-password"];

/// Files the rows name: results good and damaged, property files, special
/// files, directories.
pub(super) struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    pub(super) fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let w = |name: &str, bytes: &[u8]| std::fs::write(d.join(name), bytes).unwrap();
        for sub in ["adir", "emptydir"] {
            std::fs::create_dir(d.join(sub)).unwrap();
        }
        w("afile", b"");
        w("empty", b"");
        let fifo = std::ffi::CString::new(d.join("fifo").to_str().unwrap()).unwrap();
        // SAFETY: mkfifo(3) with a NUL-terminated path this test owns
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
        w("target.json", b"x");
        std::os::unix::fs::symlink(d.join("target.json"), d.join("link.json")).unwrap();
        for (name, seed) in [("ok.json", "1"), ("ok2.json", "7")] {
            let r = yardstick(
                d,
                &[
                    "run",
                    "--trace",
                    &format!("{name}.trace"),
                    "--db",
                    "null://",
                    "-p",
                    "recordcount=100",
                    "-p",
                    "operationcount=2000",
                    "--seed",
                    seed,
                    "-q",
                    "--out",
                    name,
                ],
            );
            assert_eq!(r.code, 0, "{}", r.stderr);
        }
        // a trace cut short in its last record
        let trace = std::fs::read(d.join("ok.json.trace")).unwrap();
        w("cut.trace", &trace[..trace.len() - 3]);
        properties::write_files(d);
        files::write_files(d);
        Fixture { dir }
    }

    pub(super) fn path(&self) -> &Path {
        self.dir.path()
    }

    /// `text` with `{dir}` replaced by the fixture directory.
    pub(super) fn fill(&self, text: &str) -> String {
        text.replace("{dir}", &self.path().display().to_string())
    }
}

/// Runs every `(arguments, words)` row in a fresh working directory and
/// returns what each failing row did wrong.
pub(super) fn failures(rows: &[(Vec<String>, String)]) -> Vec<String> {
    let _quiet = quiet_machine();
    let mut failed = Vec::new();
    for (args, words) in rows {
        let cwd = tempfile::tempdir().unwrap();
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let r = yardstick(cwd.path(), &argv);
        if let Some(why) = wrong(&r, words, cwd.path()) {
            failed.push(format!("{args:?}: {why}"));
        }
    }
    failed
}

/// What is wrong with a bad input's run, if anything.
fn wrong(r: &Run, words: &str, cwd: &Path) -> Option<String> {
    let all = format!("{}{}", r.stdout, r.stderr);
    let lines: Vec<&str> = r.stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    Some(if r.code != 2 {
        format!("exit code {} (want 2): {}", r.code, r.stderr)
    } else if all.contains("panicked") {
        format!("a panic: {}", r.stderr)
    } else if lines.len() != 1 {
        format!("{} lines on stderr (want 1): {}", lines.len(), r.stderr)
    } else if !r.stdout.trim().is_empty() {
        format!("output on stdout: {}", r.stdout)
    } else if !lines[0].starts_with("yardstick: error: ") {
        format!("not an error line: {}", lines[0])
    } else if !lines[0].contains(words) {
        format!("the line lacks {words:?}: {}", lines[0])
    } else if let Some(s) = SECRETS.iter().find(|s| all.contains(*s)) {
        format!("the password {s} leaked: {all}")
    } else if !results_in(cwd).is_empty() {
        "a result was written".into()
    } else {
        return None;
    })
}

/// Rows of command lines split at spaces, `{dir}` filled in.
pub(super) fn split_rows(fx: &Fixture, table: &[(&str, &str)]) -> Vec<(Vec<String>, String)> {
    table
        .iter()
        .map(|(line, words)| {
            let args = line.split(' ').map(|a| fx.fill(a)).collect();
            (args, fx.fill(words))
        })
        .collect()
}

/// Asserts that no row failed, listing every one that did.
pub(super) fn assert_none(kind: &str, rows: usize, failed: Vec<String>) {
    assert!(
        failed.is_empty(),
        "{} of {rows} bad {kind} were not refused as they should be:\n{}",
        failed.len(),
        failed.join("\n")
    );
}

/// The corpus holds what the issue asked for: at least 300 rows.
#[test]
fn the_corpus_has_at_least_300_cases() {
    let n = flags::CASES.len()
        + commands::CASES.len()
        + properties::CASES.len()
        + urls::count()
        + files::CASES.len();
    assert!(n >= 300, "only {n} cases");
}
