//! End-to-end against Redis and memcached: load + run through the CLI against
//! the shared test servers (`scripts/services start redis memcached`), and a
//! private server of each that the test kills in the middle of a run.
use crate::common::*;
use crate::faults::*;
use std::process::Child;

mod redis {
    use super::*;

    fn url() -> String {
        REDIS.url()
    }

    fn available() -> bool {
        REDIS.available()
    }

    #[test]
    fn workload_a_hash_model_and_workload_e_scans_with_the_password_redacted() {
        if !available() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let u = format!("{}?prefix=e2e{}:", url(), std::process::id());
        let (r, v) = load_and_run(dir.path(), &u, "workloada", &[]);
        assert_eq!(v["binding"]["engine"]["name"], "redis");
        assert!(v["binding"]["engine"]["settings"]["appendonly"].is_string());
        let text = format!(
            "{}{}{}",
            r.stdout,
            r.stderr,
            std::fs::read_to_string(dir.path().join("r.json")).unwrap()
        );
        assert!(!text.contains("benchpw"), "the password leaked");
        assert!(v["binding"]["url"]
            .as_str()
            .unwrap()
            .starts_with("redis://:***@127.0.0.1:56379"));
        let e = tempfile::tempdir().unwrap();
        let u = format!("{}?prefix=e2e_e{}:", url(), std::process::id());
        let (_, v) = load_and_run(e.path(), &u, "workloade", &[]);
        assert!(count(&v, "SCAN") > 0);
        assert!(
            op(&v, "SCAN")["scan_rows"].is_object() || op(&v, "SCAN")["rows"].as_u64().unwrap() > 0
        );
    }

    #[test]
    fn workload_a_runs_on_a_three_master_cluster() {
        let cluster = std::env::var("YARDSTICK_REDIS_CLUSTER_URL").unwrap_or_else(|_| {
            "redis://:benchpw@127.0.0.1:46391,127.0.0.1:46392,127.0.0.1:46393".into()
        });
        if !yardstick_bindings::testing::server_available(
            "Redis Cluster",
            "redis://127.0.0.1:46391",
            "scripts/services start redis-cluster",
        ) {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let u = format!("{cluster}?prefix=e2e{}:", std::process::id());
        let (r, v) = load_and_run(dir.path(), &u, "workloada", &[]);
        assert_eq!(v["binding"]["engine"]["settings"]["redis_mode"], "cluster");
        assert!(!r.stdout.contains("benchpw") && !r.stderr.contains("benchpw"));
        let r = yardstick(dir.path(), &["run", "--db", &cluster, "-P", "workloade"]);
        assert_eq!(r.code, 2, "{}", r.stderr);
        assert!(r.stderr.contains("no global key order"), "{}", r.stderr);
    }

    #[test]
    fn string_model_refuses_scans_and_bad_logins_exit_2_before_any_work() {
        if !available() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let string_url = format!("{}?model=string", url());
        let r = yardstick(dir.path(), &["run", "--db", &string_url, "-P", "workloade"]);
        assert_eq!(r.code, 2, "{}", r.stderr);
        assert!(r.stderr.contains("scans"), "{}", r.stderr);
        // bad logins and unreachable servers: tests/bad_urls.rs
        assert!(
            results_in(dir.path()).is_empty(),
            "no result for a run that never started"
        );
    }

    /// The hash model on the driver, the string model on yardstick's own connection.
    const MODELS: [&str; 2] = ["", "?model=string"];

    #[test]
    fn a_server_killed_mid_run_gives_counted_errors_and_a_partial_result() {
        for model in MODELS {
            let port = free_port();
            let server_args = redis_unpersisted(port);
            let Some(mut server) = spawn_server("redis-server", &server_args, port) else {
                return;
            };
            let dir = tempfile::tempdir().unwrap();
            let u = format!("redis://127.0.0.1:{port}{model}");
            // continue (the default): the run goes on to its end, errors counted by status
            let (r, v) = run_through_a_kill(dir.path(), &u, &mut || stop(&mut server), &[]);
            assert_eq!(r.code, 0, "{u}: {}", r.stderr);
            assert_errors_counted(&v);
            assert!(v["elapsed_s"].as_f64().unwrap() >= 3.5, "ran to its end");
            // --on-error stop: the first error ends the run, partial result, exit code 1
            let Some(mut server) = spawn_server("redis-server", &server_args, port) else {
                return;
            };
            let (r, v) = run_through_a_kill(
                dir.path(),
                &u,
                &mut || stop(&mut server),
                &["--on-error", "stop"],
            );
            assert_eq!(r.code, 1, "{u}: {}", r.stderr);
            assert_eq!(v["complete"], false);
            assert!(v["elapsed_s"].as_f64().unwrap() < 3.5, "stopped early");
        }
    }

    #[test]
    fn a_server_stalled_at_the_end_ends_the_run_in_time_and_says_so() {
        let port = free_port();
        let args = strings(&[
            "--port",
            &port.to_string(),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
        ]);
        let Some(mut server) = spawn_server("redis-server", &args, port) else {
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        // the second run has its own keys: the first left hashes under the same names
        for model in ["", "&model=string&prefix=s:"] {
            let u = format!("redis://127.0.0.1:{port}?timeout=2s{model}");
            run_through_a_sigstop(dir.path(), &u, server.id());
        }
        stop(&mut server);
    }

    #[test]
    fn a_server_without_persistence_restarted_mid_run_loses_inserts_and_verify_fails() {
        let port = free_port();
        let args = redis_unpersisted(port);
        let Some(mut server) = spawn_server("redis-server", &args, port) else {
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        let u = format!("redis://127.0.0.1:{port}");
        // killed and started again, empty: what it acknowledged is gone
        let mut restarted = None;
        let (r, v) = run_through_a_kill(
            dir.path(),
            &u,
            &mut || {
                stop(&mut server);
                restarted = spawn_server("redis-server", &args, port);
            },
            INSERTS_ONLY,
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert!(
            v["inserts"]["acknowledged"].as_u64().unwrap() > 0,
            "{}",
            v["inserts"]
        );
        let check = yardstick(dir.path(), &["verify", "--db", &u, "kill.json", "-q"]);
        if let Some(mut s) = restarted {
            stop(&mut s);
        }
        assert_eq!(check.code, 1, "{}{}", check.stdout, check.stderr);
        assert!(
            check
                .stdout
                .contains("the database lost acknowledged writes"),
            "{}",
            check.stdout
        );
        let lost: u64 = check
            .stdout
            .split(" lost")
            .next()
            .and_then(|s| s.rsplit(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap();
        assert!(lost > 0, "{}", check.stdout);
    }
}

mod memcached {
    use super::*;

    fn url() -> String {
        MEMCACHED.url()
    }

    fn available() -> bool {
        MEMCACHED.available()
    }

    #[test]
    fn workload_a_runs_and_scans_are_refused_before_any_work() {
        if !available() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let u = format!("{}?prefix=e2e{}:", url(), std::process::id());
        let (_, v) = load_and_run(dir.path(), &u, "workloada", &[]);
        assert_eq!(v["binding"]["engine"]["name"], "memcached");
        assert!(count(&v, "UPDATE") > 0);
        let e = tempfile::tempdir().unwrap();
        let r = yardstick(e.path(), &["run", "--db", &url(), "-P", "workloade"]);
        assert_eq!(r.code, 2, "{}", r.stderr);
        assert!(r.stderr.contains("memcached cannot do"), "{}", r.stderr);
        assert!(results_in(e.path()).is_empty());
    }

    #[test]
    fn a_server_killed_mid_run_with_retries_counts_errors_and_retries() {
        let port = free_port();
        let mut server_args = strings(&["-l", "127.0.0.1", "-p", &port.to_string(), "-U", "0"]);
        if is_root() {
            server_args.extend(strings(&["-u", "nobody"]));
        }
        let Some(mut server) = spawn_server("memcached", &server_args, port) else {
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        let u = format!("memcached://127.0.0.1:{port}");
        let (r, v) = run_through_a_kill(
            dir.path(),
            &u,
            &mut || stop(&mut server),
            &["--retries", "2", "-p", "retry.backoff=0.05"],
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert_errors_counted(&v);
        assert!(
            v["totals"]["retries"].as_u64().unwrap() > 0,
            "{}",
            v["totals"]
        );
    }

    #[test]
    fn a_server_stalled_at_the_end_ends_the_run_in_time_and_says_so() {
        let port = free_port();
        let mut args = strings(&["-l", "127.0.0.1", "-p", &port.to_string(), "-U", "0"]);
        if is_root() {
            args.extend(strings(&["-u", "nobody"]));
        }
        let Some(mut server) = spawn_server("memcached", &args, port) else {
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        let u = format!("memcached://127.0.0.1:{port}?timeout=2s");
        run_through_a_sigstop(dir.path(), &u, server.id());
        stop(&mut server);
    }
}

fn stop(server: &mut Child) {
    server.kill().unwrap();
    server.wait().unwrap();
}
