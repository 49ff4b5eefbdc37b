//! SIGINT, SIGTERM and SIGHUP: the run stops at once, writes its partial
//! result with the signal named, prints its summary and exits with 128 + the
//! signal's number; under --memory-limit a signal sent to the parent alone
//! reaches the measured child, and neither the child nor its cgroup outlives
//! the command.
use crate::common::*;
use std::time::Duration;

fn long_run(out: &str) -> Vec<String> {
    strings(&[
        "run",
        "--db",
        "null://?latency=100us",
        "-p",
        "recordcount=100",
        "--duration",
        "60s",
        "-q",
        "--out",
        out,
    ])
}

#[test]
fn each_signal_stops_the_run_with_its_exit_code_and_a_partial_result() {
    for (sig, name) in [
        (libc::SIGINT, "SIGINT"),
        (libc::SIGTERM, "SIGTERM"),
        (libc::SIGHUP, "SIGHUP"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let args = long_run("partial.json");
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let r = signalled(dir.path(), &args, sig, Duration::from_millis(1200));
        assert_eq!(r.code, 128 + sig, "{name}: {}", r.stderr);
        assert!(
            r.stdout.contains("READ"),
            "{name}: the summary is printed: {}",
            r.stdout
        );
        let v = read_json(&dir.path().join("partial.json"));
        assert_eq!(v["complete"], false);
        assert_eq!(v["interrupted"], true);
        let why = v["incomplete_reason"].as_str().unwrap();
        assert!(why.contains(name), "{name}: {why}");
        assert!(v["warnings"].to_string().contains(name));
        assert!(v["totals"]["operations"].as_u64().unwrap() > 100);
        assert!(v["elapsed_s"].as_f64().unwrap() < 10.0);
        assert_schema_valid(&v);
    }
}

/// Processes whose command line holds `marker`.
fn processes_with(marker: &str) -> Vec<String> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().parse::<u32>().is_ok())
        .filter(|e| {
            std::fs::read(e.path().join("cmdline"))
                .map(|c| String::from_utf8_lossy(&c).contains(marker))
                .unwrap_or(false)
        })
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect()
}

#[test]
fn a_signal_to_the_capped_parent_alone_reaches_the_child_and_nothing_is_left() {
    for (sig, code) in [(libc::SIGINT, 130), (libc::SIGTERM, 143)] {
        let dir = tempfile::tempdir().unwrap();
        let out = format!("capped-{}-{sig}.json", std::process::id());
        let mut args = long_run(&out);
        args.extend(strings(&["--memory-limit", "256M"]));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let r = signalled(dir.path(), &args, sig, Duration::from_millis(2500));
        if r.stderr.contains("need a memory cgroup") && std::env::var_os("CI").is_none() {
            eprintln!("skipped: {}", r.stderr.trim());
            return;
        }
        assert_eq!(r.code, code, "{}", r.stderr);
        let v = read_json(&dir.path().join(&out));
        assert_eq!(v["interrupted"], true, "the child wrote its partial result");
        assert!(v["totals"]["operations"].as_u64().unwrap() > 0);
        let cgroup = v["memory_limit"]["cgroup"].as_str().unwrap().to_string();
        assert!(
            !std::path::Path::new(&cgroup).exists(),
            "the cgroup {cgroup} is removed"
        );
        assert!(
            processes_with(&out).is_empty(),
            "no process of the run is left"
        );
    }
}
