//! Passwords: taken from each database's own variables (PGPASSWORD,
//! PGPASSFILE, MYSQL_PWD, REDISCLI_AUTH), from YARDSTICK_PASSWORD and from
//! --password-file, so they stay off the command line; and never written
//! anywhere: every artifact of a suite, a report and a refused URL is
//! searched for the password.
use crate::common::*;
use std::path::Path;

const PASSWORD: &str = "benchpw";

/// yardstick with `env` added to its environment.
fn with_env(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    let out = std::process::Command::new(bin())
        .args(args)
        .envs(env.iter().copied())
        .current_dir(dir)
        .output()
        .unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// `url` without its password.
fn no_password(url: &str) -> String {
    url.replace(&format!(":{PASSWORD}@"), "@")
}

/// Every file under `dir`, none holding `secret`.
fn assert_no_file_holds(dir: &Path, secret: &str) {
    let mut stack = vec![dir.to_path_buf()];
    let mut files = 0;
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if let Ok(bytes) = std::fs::read(&p) {
                files += 1;
                assert!(
                    !String::from_utf8_lossy(&bytes).contains(secret),
                    "{} holds the password",
                    p.display()
                );
            }
        }
    }
    assert!(files > 0, "nothing was written under {}", dir.display());
}

fn load(dir: &Path, url: &str, env: &[(&str, &str)], extra: &[&str]) -> Run {
    let mut args = vec![
        "load",
        "--db",
        url,
        "-P",
        "workloada",
        "-p",
        "recordcount=200",
        "--clear",
        "-q",
    ];
    args.extend_from_slice(extra);
    with_env(dir, &args, env)
}

#[test]
fn each_databases_own_password_variables_work() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut tried = 0;
    if POSTGRES.available() {
        let u = no_password(&POSTGRES.url());
        // outside the directory searched at the end
        let secrets = tempfile::tempdir().unwrap();
        let pgpass = secrets.path().join("pgpass");
        std::fs::write(&pgpass, format!("*:*:*:bench:{PASSWORD}\n")).unwrap();
        for env in [
            ("PGPASSWORD", PASSWORD.to_string()),
            ("YARDSTICK_PASSWORD", PASSWORD.to_string()),
            ("PGPASSFILE", pgpass.display().to_string()),
        ] {
            let r = load(d, &u, &[(env.0, env.1.as_str())], &[]);
            assert_eq!(r.code, 0, "{}: {}", env.0, r.stderr);
        }
        let r = load(d, &u, &[], &[]);
        assert_one_error(
            &r,
            "no password",
            "asks user bench for a password and none was given",
        );
        tried += 1;
    }
    if MARIADB.available() {
        let u = no_password(&MARIADB.url());
        let r = load(d, &u, &[("MYSQL_PWD", PASSWORD)], &[]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        tried += 1;
    }
    if REDIS.available() {
        let u = REDIS.url().replace(&format!(":{PASSWORD}@"), "");
        let r = load(d, &u, &[("REDISCLI_AUTH", PASSWORD)], &[]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        tried += 1;
    }
    if tried == 0 {
        return;
    }
    assert_no_file_holds(d, PASSWORD);
}

#[test]
fn a_password_file_keeps_the_password_off_the_command_line() {
    if !POSTGRES.available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let file = d.join("secret");
    std::fs::write(&file, format!("{PASSWORD}\n")).unwrap();
    let u = no_password(&POSTGRES.url());
    let f = file.display().to_string();
    let r = load(d, &u, &[], &["--password-file", &f]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    std::fs::remove_file(&file).unwrap();
    for (args, expect) in [
        (
            vec!["--password-file", "missing"],
            "cannot read --password-file missing",
        ),
        (
            vec!["--password-file", "/dev/null"],
            "--password-file /dev/null is empty",
        ),
    ] {
        let r = load(d, &u, &[], &args);
        assert_one_error(&r, &args.join(" "), expect);
    }
}

#[test]
fn no_artifact_of_a_suite_a_report_or_a_refusal_holds_the_password() {
    if !POSTGRES.available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let u = POSTGRES.url();
    let suite = yardstick(
        d,
        &[
            "suite",
            "mixes",
            "--db",
            &u,
            "--records",
            "2000",
            "--duration",
            "300ms",
            "--warmup",
            "0s",
            "--threads",
            "1",
            "--out-dir",
            "suite",
        ],
    );
    assert_eq!(suite.code, 0, "{}", suite.stderr);
    let report = yardstick(d, &["report", "suite", "-o", "report.html"]);
    assert_eq!(report.code, 0, "{}", report.stderr);
    let mut outputs = vec![suite, report];
    // refusals that echo what they were given
    for bad in [
        u.replace("127.0.0.1:", "127.0.0.1:x"),
        format!("host=127.0.0.1 user=bench password={PASSWORD} dbname=ycsb"),
        format!("{u}?colour=red"),
    ] {
        let r = yardstick(d, &["run", "--db", &bad, "-p", "operationcount=10"]);
        assert_eq!(r.code, 2, "{}", r.stderr);
        outputs.push(r);
    }
    for r in &outputs {
        assert!(!r.stdout.contains(PASSWORD), "stdout: {}", r.stdout);
        assert!(!r.stderr.contains(PASSWORD), "stderr: {}", r.stderr);
    }
    assert_no_file_holds(d, PASSWORD);
}
