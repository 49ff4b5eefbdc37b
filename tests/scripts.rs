//! The scripts a fresh machine depends on: scripts/check-commands (every
//! program the scripts and tests run is declared with its package), the
//! helpers of scripts/lib.sh (installing declared programs, a server's log on
//! a readiness failure), the rehearsal's argument check and the flame
//! graph of a run (scripts/flamegraph.sh, with perf). Each check of a script
//! runs against a small tree made here, so that what it must catch is there.

use crate::common::Run;
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn run(cmd: &mut Command) -> Run {
    let o = cmd.output().expect("runs");
    Run {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// Whether python3 and shfmt are here (scripts/test.sh installs both before
/// anything else); outside CI a test without them is skipped.
fn checker_tools() -> bool {
    let ok = ["python3", "shfmt"].iter().all(|p| {
        // runs: python3 shfmt
        Command::new(p)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    });
    if !ok {
        assert!(
            std::env::var_os("CI").is_none(),
            "python3 and shfmt are needed in CI (scripts/test.sh installs them)"
        );
        eprintln!("skipped: python3 or shfmt is not installed");
    }
    ok
}

/// A project tree with the given files (path, text).
fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let p: PathBuf = dir.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
    }
    dir
}

fn check(dir: &Path) -> Run {
    // runs: python3
    run(Command::new("python3")
        .arg(repo().join("scripts/check-commands"))
        .arg("--root")
        .arg(dir))
}

const SCRIPT: &str = "#!/usr/bin/env bash
wait_for() { # wait_for SECONDS NAME CMD...
    local secs=$1 name=$2
    shift 2
    \"$@\"
}
start() {
    mkdir -p /tmp/x
    wait_for 5 etcd etcdctl endpoint health
    out=$(date +%s | sed s/1/2/)
    nohup env A=1 B=\"$out\" memcached -d &
    \"$bin/pg_ctl\" start
}
\"start\"
";

const MANIFEST: &str = "# NAME PACKAGE WHERE
mkdir coreutils path
date coreutils path
sed sed path
nohup coreutils path
env coreutils path
etcdctl etcd-client path
memcached memcached path
pg_ctl postgresql /usr/lib/postgresql/*/bin
";

#[test]
fn every_program_a_script_runs_is_found_through_pipes_substitutions_and_wrappers() {
    if !checker_tools() {
        return;
    }
    let dir = tree(&[
        ("scripts/run.sh", SCRIPT),
        ("scripts/commands.txt", MANIFEST),
    ]);
    let ok = check(dir.path());
    assert_eq!(ok.code, 0, "{}", ok.stderr);
    assert!(ok.stdout.contains("8 programs"), "{}", ok.stdout);
    // each one, taken out of the declarations, is named with where it runs
    for (name, line) in [
        ("etcdctl", 9),
        ("memcached", 11),
        ("sed", 10),
        ("date", 10),
        ("pg_ctl", 12),
        ("mkdir", 8),
    ] {
        let manifest: String = MANIFEST
            .lines()
            .filter(|l| !l.starts_with(&format!("{name} ")))
            .map(|l| format!("{l}\n"))
            .collect();
        std::fs::write(dir.path().join("scripts/commands.txt"), manifest).unwrap();
        let r = check(dir.path());
        assert_eq!(r.code, 1, "{name}: {}", r.stderr);
        assert!(
            r.stderr.contains(&format!(
                "scripts/run.sh:{line}: runs `{name}`, which scripts/commands.txt does not declare"
            )),
            "{name}: {}",
            r.stderr
        );
        assert!(r.stderr.contains("1 problem(s)"), "{}", r.stderr);
    }
}

#[test]
fn a_declaration_nothing_uses_and_a_program_it_cannot_name_are_problems() {
    if !checker_tools() {
        return;
    }
    let dir = tree(&[
        ("scripts/run.sh", "#!/bin/sh\n\"$tool\" --x\n"),
        (
            "scripts/commands.txt",
            "redis-cli redis-tools path\ncc gcc build\n",
        ),
    ]);
    let r = check(dir.path());
    assert_eq!(r.code, 1);
    assert!(
        r.stderr
            .contains("scripts/run.sh:2: cannot tell which program this runs"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr
            .contains("scripts/commands.txt:1: `redis-cli` is declared but nothing runs it"),
        "{}",
        r.stderr
    );
    // a build tool is declared for cargo, which no script names
    assert!(!r.stderr.contains("`cc`"), "{}", r.stderr);
    // the comment that names it
    std::fs::write(
        dir.path().join("scripts/run.sh"),
        "#!/bin/sh\n# runs: redis-cli\n\"$tool\" --x\n",
    )
    .unwrap();
    let r = check(dir.path());
    assert_eq!(r.code, 0, "{}", r.stderr);
}

#[test]
fn the_programs_rust_tests_spawn_are_found_directly_and_through_helpers() {
    if !checker_tools() {
        return;
    }
    let rust = r#"
fn start(program: &str, port: u16) -> Child {
    Command::new(program).arg(port.to_string()).spawn().unwrap()
}
fn t() {
    Command::new("etcdctl").output();
    start("redis-server", 1);
    let bin = Path::new("/usr/lib/postgresql/15/bin");
    start(&bin.join("initdb").to_string_lossy(), 2);
    let exe = std::env::current_exe().unwrap();
    Command::new(exe);
}
fn text() -> &'static str {
    // not calls: Command::new(a) in a comment, and in a string
    "Command::new(b) and \"Command::new(c)\""
}
fn start_quietly(name: &str) -> Child {
    start(name, 0)
}
fn u() {
    start_quietly("memcached");
}
"#;
    let dir = tree(&[
        ("tests/t.rs", rust),
        (
            "scripts/commands.txt",
            "etcdctl etcd-client path\nredis-server redis-server path\ninitdb postgresql /usr/lib/postgresql/*/bin\nmemcached memcached path\n",
        ),
    ]);
    let r = check(dir.path());
    assert_eq!(r.code, 1);
    let problems: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(problems.len(), 2, "{}", r.stderr);
    assert!(
        problems[0].contains("tests/t.rs:11: cannot tell which program this runs"),
        "{}",
        r.stderr
    );
    std::fs::write(
        dir.path().join("tests/t.rs"),
        rust.replace(
            "    Command::new(exe);",
            "    // runs: yardstick\n    Command::new(exe);",
        ),
    )
    .unwrap();
    let r = check(dir.path());
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("5 programs"), "{}", r.stdout);
    // the helpers' call sites name the programs, through a helper of a helper too
    std::fs::write(
        dir.path().join("scripts/commands.txt"),
        "etcdctl etcd-client path\ninitdb postgresql /usr/lib/postgresql/*/bin\n",
    )
    .unwrap();
    let r = check(dir.path());
    assert!(
        r.stderr.contains("tests/t.rs:7: runs `redis-server`"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("tests/t.rs:22: runs `memcached`"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_program_declared_with_a_package_that_does_not_own_it_is_named() {
    if !checker_tools() {
        return;
    }
    let owner = Command::new("dpkg-query")
        .args(["-S", "/bin/sed"])
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).starts_with("sed:"));
    if !owner {
        eprintln!("skipped: not a Debian machine with sed from its package");
        return;
    }
    let dir = tree(&[
        ("scripts/run.sh", "#!/bin/sh\nsed -n p x\n"),
        ("scripts/commands.txt", "sed grep path\n"),
    ]);
    let r = check(dir.path());
    assert_eq!(r.code, 1);
    assert!(
        r.stderr
            .contains("`sed` is declared as package grep, but /usr/bin/sed belongs to sed"),
        "{}",
        r.stderr
    );
}

#[test]
fn this_repository_declares_every_program_it_runs() {
    if !checker_tools() {
        return;
    }
    let r = check(repo());
    assert_eq!(r.code, 0, "{}", r.stderr);
}

/// Runs `bash -c SCRIPT` with scripts/lib.sh sourced, in `dir`.
fn with_lib(dir: &Path, script: &str) -> Run {
    // runs: bash
    run(Command::new("bash")
        .arg("-c")
        .arg(format!(
            ". '{}'; {script}",
            repo().join("scripts/lib.sh").display()
        ))
        .current_dir(dir))
}

#[test]
fn a_server_that_never_becomes_ready_is_reported_with_its_logs_last_lines() {
    let dir = tree(&[(
        "server.log",
        &(1..=40)
            .map(|i| format!("log line {i}\n"))
            .collect::<String>(),
    )]);
    let r = with_lib(dir.path(), "wait_for 1 demo server.log false");
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("demo did not become ready within 1s"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("the last lines of server.log"));
    assert!(r.stderr.contains("| log line 40"), "{}", r.stderr);
    assert!(r.stderr.contains("| log line 26"), "{}", r.stderr);
    assert!(!r.stderr.contains("| log line 25"), "{}", r.stderr);
    let ok = with_lib(dir.path(), "wait_for 1 demo server.log true && echo ready");
    assert_eq!(ok.code, 0);
    assert_eq!(ok.stdout.trim(), "ready");
}

#[test]
fn need_installs_nothing_present_and_refuses_an_undeclared_program() {
    let dir = tree(&[(
        "scripts/commands.txt",
        "# the shell\nbash bash path\nkubectl kubectl optional\nfound bash /nonexistent/dir\n",
    )]);
    // present, or needed only outside the tests: nothing to install
    let ok = with_lib(dir.path(), "need bash kubectl && echo done");
    assert_eq!(ok.code, 0, "{}", ok.stderr);
    assert_eq!(ok.stdout.trim(), "done");
    let r = with_lib(dir.path(), "need etcdctl");
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains("etcdctl is not declared in scripts/commands.txt"),
        "{}",
        r.stderr
    );
    // declared in a directory: found only there, not on PATH
    let r = with_lib(dir.path(), "present found /nonexistent/dir || echo missing");
    assert_eq!(r.stdout.trim(), "missing");
}

/// `script` given `option`: one line naming it and the usage, exit 2.
fn refuses_an_unknown_option(script: &str, option: &str, usage: &str) {
    // runs: scripts/fresh-check scripts/flamegraph.sh scripts/selfbench.sh scripts/observe-cost.sh
    let r = run(Command::new(repo().join(script)).arg(option));
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains(&format!("unknown option {option}; usage: {usage}")),
        "{}",
        r.stderr
    );
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
}

#[test]
fn the_rehearsal_refuses_an_unknown_option_before_any_work() {
    refuses_an_unknown_option(
        "scripts/fresh-check",
        "--fast",
        "scripts/fresh-check [--keep] [REV]",
    );
}

#[test]
fn the_flame_graph_refuses_an_unknown_option_before_any_work() {
    refuses_an_unknown_option(
        "scripts/flamegraph.sh",
        "--svg",
        "scripts/flamegraph.sh [-o OUT.svg] [-- YARDSTICK-ARGS...]",
    );
}

#[test]
fn the_self_benchmark_refuses_bad_arguments_before_any_work() {
    refuses_an_unknown_option(
        "scripts/selfbench.sh",
        "--fast",
        "scripts/selfbench.sh [OPERATIONCOUNT]",
    );
    // runs: scripts/selfbench.sh
    let r = run(Command::new(repo().join("scripts/selfbench.sh")).arg("1e6"));
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.trim().ends_with(
            "selfbench.sh: OPERATIONCOUNT=1e6 is not a positive whole number; try the default, 20000000"
        ),
        "{}",
        r.stderr
    );
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    // runs: scripts/selfbench.sh
    let r = run(Command::new(repo().join("scripts/selfbench.sh")).env("SELFBENCH_ROUNDS", "0"));
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains("SELFBENCH_ROUNDS=0 is not a positive whole number"),
        "{}",
        r.stderr
    );
}

#[test]
fn the_observation_cost_script_refuses_bad_arguments_before_any_work() {
    refuses_an_unknown_option(
        "scripts/observe-cost.sh",
        "--fast",
        "scripts/observe-cost.sh [ROUNDS]",
    );
    // runs: scripts/observe-cost.sh
    let r =
        run(Command::new(repo().join("scripts/observe-cost.sh")).env("OBSERVE_COST_SECONDS", "2s"));
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains("OBSERVE_COST_SECONDS=2s is not a positive whole number; try the default, 5"),
        "{}",
        r.stderr
    );
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
}

/// Whether perf can sample here (scripts/test.sh installs it); outside CI
/// a test without it is skipped.
fn perf_samples() -> bool {
    // runs: perf
    let ok = Command::new("perf")
        .args([
            "record",
            "-q",
            "-N",
            "-e",
            "cpu-clock",
            "-o",
            "/dev/null",
            "--",
            "true",
        ])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var_os("CI").is_none(),
            "perf must sample in CI (scripts/test.sh installs linux-perf)"
        );
        eprintln!("skipped: perf is not installed or may not sample here");
    }
    ok
}

#[test]
fn a_flame_graph_shows_the_hot_loop_down_to_its_inlined_frames() {
    if !perf_samples() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("fg.svg");
    let out = dir.path().join("r.json");
    let profile = |args: &[&str]| {
        // runs: scripts/flamegraph.sh
        run(Command::new(repo().join("scripts/flamegraph.sh"))
            .env("FLAMEGRAPH_BIN", env!("CARGO_BIN_EXE_yardstick"))
            .arg("-o")
            .arg(&svg)
            .arg("--")
            .args(args))
    };
    let r = profile(&[
        "run",
        "--db",
        "null://",
        "-P",
        "workloadc",
        "-p",
        "recordcount=1000",
        "-p",
        "operationcount=5000000",
        "--threads",
        "1",
        "-q",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let drawn = std::fs::read_to_string(&svg).unwrap();
    assert!(drawn.starts_with("<?xml") && drawn.contains("<svg"));
    // the key batch's draw is a function of its own; the operation's next
    // key is inlined into the worker's loop, and shows as its own frame
    for frame in ["KeysAhead::refill", "Stream::next_run_op"] {
        assert!(drawn.contains(frame), "no {frame} in the flame graph");
    }
    let folded = std::fs::read_to_string(dir.path().join("fg.folded")).unwrap();
    assert!(folded
        .lines()
        .any(|l| l.contains("execute::steps::{{closure}};") && l.contains("KeysAhead::refill")));
    assert!(
        r.stdout.contains("self (on top of the stack):"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .lines()
            // where the CPU has AVX2 the batch runs as `refill_avx2`,
            // reached by a tail jump: `refill` is not on the stack
            .any(
                |l| l.ends_with("%  yardstick_core::workload::ahead::KeysAhead::refill")
                    || l.ends_with("%  yardstick_core::workload::ahead::KeysAhead::refill_avx2")
            ),
        "{}",
        r.stdout
    );
    assert!(out.exists(), "the profiled run wrote its result");
    // a run yardstick refuses stops the script with yardstick's own error
    let r = profile(&["run", "--db", "null://", "-P", "no-such-workload"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("no-such-workload"), "{}", r.stderr);
    assert!(
        r.stderr
            .contains("the profiled run failed (its error is above)"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_host_where_perf_may_not_sample_is_named_before_any_build() {
    // a perf that refuses, as one does under kernel.perf_event_paranoid 3
    let dir = tempfile::tempdir().unwrap();
    let perf = dir.path().join("perf");
    std::fs::write(
        &perf,
        "#!/bin/sh\necho 'Error: Access to performance monitoring is limited.' >&2\nexit 255\n",
    )
    .unwrap();
    std::fs::set_permissions(&perf, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        dir.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // runs: scripts/flamegraph.sh
    let r = run(Command::new(repo().join("scripts/flamegraph.sh"))
        .env("PATH", path)
        .env("SELFBENCH_TOOLS", dir.path().join("tools"))
        .env("FLAMEGRAPH_BIN", dir.path().join("no-such-binary")));
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("perf cannot sample on this host (kernel.perf_event_paranoid is ")
            && r.stderr.contains("sysctl kernel.perf_event_paranoid=1"),
        "{}",
        r.stderr
    );
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    assert!(!dir.path().join("tools").exists(), "nothing was built");
}
