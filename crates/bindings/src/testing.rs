//! Helpers for tests that need a real server: in CI (`CI` set) a missing
//! server fails the test; elsewhere the test is skipped with a printed reason.
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

/// Whether the server of `url` (scheme://[user[:pass]@]host:port/...) accepts
/// TCP connections. Panics in CI when it does not.
pub fn server_available(name: &str, url: &str, how_to_start: &str) -> bool {
    let authority = url.split_once("://").map(|(_, r)| r).unwrap_or(url);
    let authority = authority.split(['/', '?']).next().unwrap_or("");
    let hosts = authority
        .rsplit_once('@')
        .map(|(_, h)| h)
        .unwrap_or(authority);
    // a cluster's URL lists its members: the first must answer
    let hostport = hosts.split(',').next().unwrap_or(hosts);
    let reachable = hostport
        .to_socket_addrs()
        .ok()
        .and_then(|mut a| a.next())
        .is_some_and(|addr| TcpStream::connect_timeout(&addr, Duration::from_secs(2)).is_ok());
    if !reachable {
        if std::env::var_os("CI").is_some() {
            panic!("{name} is not reachable at {hostport}, and CI requires it: start it with {how_to_start}");
        }
        eprintln!("skipped: {name} is not reachable at {hostport} (start it with {how_to_start})");
    }
    reachable
}

/// The test CA that signed the test servers' certificates: under
/// `YARDSTICK_SERVICES_DIR` (where scripts/services keeps its data), by default
/// /tmp/yardstick-services.
pub fn test_ca() -> String {
    let dir = std::env::var("YARDSTICK_SERVICES_DIR")
        .unwrap_or_else(|_| "/tmp/yardstick-services".into());
    format!("{dir}/tls/ca.crt")
}

/// A unique name per call in this process, for tests that need a fresh
/// database, keyspace or key prefix on a shared server.
pub fn unique_name(stem: &str) -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    format!(
        "{stem}_{}_{}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    )
}

/// Of `names`, those made by `unique_name(stem)` in processes that have
/// exited: the databases earlier test runs left behind, safe to drop.
#[cfg(test)]
pub(crate) fn left_behind(stem: &str, names: impl IntoIterator<Item = String>) -> Vec<String> {
    let alive = |pid: u32| std::path::Path::new(&format!("/proc/{pid}")).exists();
    names
        .into_iter()
        .filter(|name| {
            let Some(rest) = name.strip_prefix(stem).and_then(|r| r.strip_prefix('_')) else {
                return false;
            };
            match rest.split_once('_') {
                Some((pid, n)) if n.bytes().all(|b| b.is_ascii_digit()) && !n.is_empty() => {
                    pid.parse::<u32>().is_ok_and(|pid| !alive(pid))
                }
                _ => false,
            }
        })
        .collect()
}

/// A single-threaded runtime with I/O and timers, as a worker thread has.
#[cfg(test)]
pub(crate) fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a test runtime")
}

/// This test process's directory for database files, made on first use:
/// `<temp>/yardstick-tests/scratch_<pid>_0`. The directories of test processes
/// that have exited are removed then, so embedded databases that tests keep
/// open until the process ends do not pile up run after run.
#[cfg(test)]
pub(crate) fn scratch_dir() -> &'static std::path::Path {
    static DIR: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let parent = std::env::temp_dir().join("yardstick-tests");
        sweep(&parent);
        let dir = parent.join(format!("scratch_{}_0", std::process::id()));
        std::fs::create_dir_all(&dir)
            .unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
        dir
    })
}

/// Removes the scratch directories under `parent` left by exited processes.
#[cfg(test)]
fn sweep(parent: &std::path::Path) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    let names = entries.filter_map(|e| e.ok()?.file_name().into_string().ok());
    for name in left_behind("scratch", names) {
        // another test process may be sweeping the same directory
        let _ = std::fs::remove_dir_all(parent.join(name));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clusters_url_is_reachable_through_its_first_member() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let url = format!("etcd://u:p@127.0.0.1:{port},127.0.0.1:1,127.0.0.1:2/x?y=z");
        assert!(server_available("etcd", &url, "nothing"));
    }

    #[test]
    fn the_scratch_directories_of_exited_processes_are_swept() {
        let parent = tempfile::tempdir().unwrap();
        let gone = 4_194_305u32;
        let me = std::process::id();
        for name in [
            format!("scratch_{gone}_0"),
            format!("scratch_{me}_0"),
            "keep".to_string(),
        ] {
            std::fs::create_dir_all(parent.path().join(&name).join("db")).unwrap();
            std::fs::write(parent.path().join(&name).join("db/file"), b"x").unwrap();
        }
        sweep(parent.path());
        let mut left: Vec<String> = std::fs::read_dir(parent.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        assert_eq!(left, vec!["keep".to_string(), format!("scratch_{me}_0")]);
        let own = scratch_dir();
        assert!(own.is_dir());
        assert!(own.ends_with(format!("scratch_{me}_0")));
    }

    #[test]
    fn only_names_of_exited_processes_are_left_behind() {
        let me = std::process::id();
        // pid_max is at most 2^22 on Linux: this pid cannot be running
        let gone = 4_194_305u32;
        let names = [
            format!("conf_{me}_0"),
            format!("conf_{gone}_0"),
            format!("conf_{gone}_17"),
            format!("conference_{gone}_1"),
            format!("conf_{gone}_x"),
            format!("conf_{gone}_"),
            "conf".to_string(),
            "ycsb".to_string(),
        ];
        assert_eq!(
            left_behind("conf", names),
            vec![format!("conf_{gone}_0"), format!("conf_{gone}_17")]
        );
        assert!(unique_name("conf").starts_with(&format!("conf_{me}_")));
    }
}
