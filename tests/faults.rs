//! Runs with a fault injected at a moment into them: a server killed or
//! stopped (SIGSTOP) while yardstick measures it. The private servers the
//! faults hit are in `common`.
use crate::common::*;
use std::path::Path;
use std::time::{Duration, Instant};

/// Loads 500 records of workload C into `url`, then runs workload C on one
/// thread with two calls in flight for `duration`, writing `out`, and calls
/// `fault` `after` the process started. Returns the run, how long the
/// process took, and its result.
fn run_with_a_fault(
    dir: &Path,
    url: &str,
    duration: &str,
    extra: &[&str],
    out: &str,
    after: Duration,
    fault: &mut dyn FnMut(),
) -> (Run, Duration, serde_json::Value) {
    let l = yardstick(
        dir,
        &[
            "load",
            "--db",
            url,
            "-P",
            "workloadc",
            "-p",
            "recordcount=500",
            "-q",
        ],
    );
    assert_eq!(l.code, 0, "{}", l.stderr);
    let mut args = strings(&[
        "run",
        "--db",
        url,
        "-P",
        "workloadc",
        "-p",
        "recordcount=500",
        "--duration",
        duration,
        "--threads",
        "1",
        "--concurrency",
        "2",
        "-q",
        "--out",
        out,
    ]);
    args.extend(strings(extra));
    let started = Instant::now();
    let handle = {
        let dir = dir.to_path_buf();
        std::thread::spawn(move || {
            yardstick(&dir, &args.iter().map(String::as_str).collect::<Vec<_>>())
        })
    };
    std::thread::sleep(after);
    fault();
    let r = handle.join().unwrap();
    let took = started.elapsed();
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    // a run that hangs is stopped by nothing but the test's own limit
    assert!(took < Duration::from_secs(30), "the run took {took:?}");
    let v = read_json(&dir.join(out));
    assert_schema_valid(&v);
    (r, took, v)
}

/// Runs for 4 s against a private server killed after 1 s; returns the run and its result.
pub(crate) fn run_through_a_kill(
    dir: &Path,
    url: &str,
    kill: &mut dyn FnMut(),
    policy: &[&str],
) -> (Run, serde_json::Value) {
    let (r, _, v) = run_with_a_fault(
        dir,
        url,
        "4s",
        policy,
        "kill.json",
        Duration::from_secs(1),
        kill,
    );
    (r, v)
}

/// Run options for [`run_through_a_kill`] whose every operation inserts a new
/// record with YCSB's deterministic values, for `yardstick verify` to read back.
pub(crate) const INSERTS_ONLY: &[&str] = &[
    "-p",
    "readproportion=0",
    "-p",
    "insertproportion=1",
    "-p",
    "dataintegrity=true",
];

/// Sends `sig` to process `pid` and every process descending from it (a
/// server's backends stop with it).
pub(crate) fn signal_tree(pid: u32, sig: i32) {
    let mut pids = vec![pid];
    let mut i = 0;
    while i < pids.len() {
        let parent = pids[i];
        for e in std::fs::read_dir("/proc").unwrap().flatten() {
            let Ok(child) = e.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
            // the parent pid is the field after the command's closing parenthesis
            let ppid = stat
                .rsplit_once(") ")
                .and_then(|(_, rest)| rest.split(' ').nth(1))
                .and_then(|p| p.parse::<u32>().ok());
            if ppid == Some(parent) && !pids.contains(&child) {
                pids.push(child);
            }
        }
        i += 1;
    }
    for p in pids {
        // SAFETY: kill(2) on processes this test started.
        unsafe { libc::kill(p as i32, sig) };
    }
}

/// Loads 500 records into `url` (whose `timeout` is 2s), then runs for 3 s
/// with the server stalled (`stall`) 2 s after the process started, and
/// resumes it (`resume`) once the run ended. The calls in flight at the end
/// wait past it (the timeout outlasts the rest of the run whenever the run
/// starts within a second), so the run must end within its duration, the
/// timeout and a second, count the timeouts, and say the result is
/// incomplete because the server stopped answering at the end.
pub(crate) fn run_through_a_stall(
    dir: &Path,
    url: &str,
    stall: &mut dyn FnMut(),
    resume: &mut dyn FnMut(),
) -> serde_json::Value {
    let (r, _, v) = run_with_a_fault(
        dir,
        url,
        "3s",
        &[],
        "stall.json",
        Duration::from_secs(2),
        stall,
    );
    resume();
    assert_eq!(r.code, 1, "an incomplete result: {}", r.stderr);
    // 3 s of run, then at most the timeout (2 s) and a second
    let elapsed = v["elapsed_s"].as_f64().unwrap();
    assert!(elapsed <= 6.0, "the run outlived its bound: {elapsed} s");
    assert_eq!(v["complete"], false);
    let why = v["incomplete_reason"].as_str().unwrap_or("");
    assert!(why.contains("stopped answering at the end"), "{why}");
    let read = op(&v, "READ");
    assert!(read["statuses"]["ok"].as_u64().unwrap() > 0, "{read}");
    assert!(
        read["statuses"]["timeout"].as_u64().unwrap_or(0) > 0,
        "the stalled calls are timeouts: {}",
        read["statuses"]
    );
    v
}

/// [`run_through_a_stall`] with the server's process tree `pid` stopped
/// (SIGSTOP) and continued.
pub(crate) fn run_through_a_sigstop(dir: &Path, url: &str, pid: u32) -> serde_json::Value {
    run_through_a_stall(
        dir,
        url,
        &mut || signal_tree(pid, libc::SIGSTOP),
        &mut || signal_tree(pid, libc::SIGCONT),
    )
}

pub(crate) fn assert_errors_counted(v: &serde_json::Value) {
    let read = op(v, "READ");
    assert!(read["statuses"]["ok"].as_u64().unwrap() > 0, "{read}");
    assert!(
        read["statuses"]["unavailable"].as_u64().unwrap_or(0) > 0,
        "errors after the kill are counted as unavailable: {}",
        read["statuses"]
    );
    assert!(v["totals"]["errors"].as_u64().unwrap() > 0);
}

/// A private Redis server's arguments: on `port`, keeping nothing on disk.
pub(crate) fn redis_unpersisted(port: u16) -> Vec<String> {
    strings(&[
        "--port",
        &port.to_string(),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "no",
    ])
}
