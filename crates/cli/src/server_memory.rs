//! `--server-memory-limit SIZE`: the database server's own memory capped for
//! the phase, page cache included, as the storage-engine reports capped
//! their engines' processes. Only a server on this machine can be capped:
//! the process that listens on the URL's port (found through
//! /proc/net/tcp{,6} and the processes' sockets) and its children move into a
//! memory cgroup of SIZE each, clean cached pages are dropped, and after the
//! phase they move back to where they were. An embedded engine runs inside
//! the benchmark process: `--memory-limit` caps it.
//!
//! A cgroup charges memory to where it was allocated: what the server held
//! before stays charged elsewhere unless the kernel moves it (cgroup v1's
//! move_charge_at_immigrate, gone from recent kernels and from v2). Where it
//! does not, the cgroup's limit is the budget less what the server holds
//! resident when capped, so the server's whole memory stays within the
//! budget; the result records both figures.
use crate::memlimit::{self, Cgroup};
use crate::CliError;
use std::path::PathBuf;
use yardstick_core::observe::procfs::{self, descendants, resident};
use yardstick_core::result::ServerMemory;

/// One server process moved into a cgroup of its own.
struct Capped {
    server: String,
    pid: u32,
    program: String,
    processes: usize,
    /// The memory cgroup the server came from (where it goes back to).
    home: PathBuf,
    cg: Cgroup,
    resident_before: Option<u64>,
    charges_moved: bool,
    /// The cgroup's own limit: the budget, less what the server held where
    /// that was not moved in.
    cgroup_limit: u64,
}

/// The servers of one phase under their caps; released (moved back) by
/// [`ServerCaps::release`] or, failing that, when dropped.
pub(crate) struct ServerCaps {
    limit: u64,
    page_cache: String,
    capped: Vec<Capped>,
}

/// Caps every server `url` names at `limit` bytes each.
pub(crate) fn cap(url: &str, limit: u64) -> Result<ServerCaps, CliError> {
    let servers = yardstick_bindings::servers(url)
        .map_err(|e| CliError::bad_input(e.to_string()))?
        .ok_or_else(|| {
            CliError::bad_input(
                "--server-memory-limit caps a database server, and this --db is an embedded engine inside the benchmark process: use --memory-limit",
            )
        })?;
    let mut caps = ServerCaps {
        limit,
        page_cache: String::new(),
        capped: Vec::new(),
    };
    for server in servers {
        let pid = listener(&server)?;
        if caps.capped.iter().any(|c| c.pid == pid) {
            continue;
        }
        caps.capped.push(cap_one(&server, pid, limit)?);
    }
    let (page_cache, warning) = memlimit::drop_page_cache();
    if let Some(w) = warning {
        eprintln!("yardstick: warning: {w}");
    }
    caps.page_cache = page_cache;
    Ok(caps)
}

fn cap_one(server: &str, pid: u32, limit: u64) -> Result<Capped, CliError> {
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let theirs = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap_or_default();
    let (home, _) = memlimit::locate(&mountinfo, &theirs).ok_or_else(|| {
        CliError::bad_input(format!(
            "cannot tell which memory cgroup the server at {server} (pid {pid}) is in; --server-memory-limit needs the cgroup memory controller"
        ))
    })?;
    let name = format!("yardstick-{}-server-{pid}", std::process::id());
    let mut cg = Cgroup::create_named(limit, &name).map_err(CliError::bad_input)?;
    let charges_moved = cg.move_charges();
    let mut procs = vec![pid];
    procs.extend(descendants(pid));
    let resident_before = procs.iter().map(|p| resident(*p)).sum::<Option<u64>>();
    let program = std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "?".into());
    let mut cgroup_limit = limit;
    if !charges_moved {
        let held = resident_before.unwrap_or(0);
        cgroup_limit = limit.saturating_sub(held);
        if cgroup_limit < limit / 16 {
            return Err(CliError::bad_input(format!(
                "the server {program} (pid {pid}) at {server} already holds {} MiB resident, which leaves the phase less than a sixteenth of --server-memory-limit {} MiB: give a larger limit or restart the server with a smaller cache",
                held >> 20,
                limit >> 20
            )));
        }
        cg.lower_limit(cgroup_limit).map_err(|e| {
            CliError::bad_input(format!(
                "cannot set the memory cgroup {} to {cgroup_limit} bytes: {e}",
                cg.dir().display()
            ))
        })?;
    }
    for (i, p) in procs.iter().enumerate() {
        if let Err(e) = cg.adopt(*p) {
            // a child that ended meanwhile is no loss; the server itself is
            if i > 0 && !std::path::Path::new(&format!("/proc/{p}")).exists() {
                continue;
            }
            for q in &procs[..i] {
                let _ = memlimit::adopt(&home, *q);
            }
            let held = resident_before.map_or(String::new(), |b| {
                format!(" (it holds {} MiB resident)", b >> 20)
            });
            return Err(CliError::bad_input(format!(
                "cannot move the server {program} (pid {p}) at {server} into a memory cgroup of {limit} bytes: {e}{held}; give a larger --server-memory-limit or restart the server with a smaller cache"
            )));
        }
    }
    Ok(Capped {
        server: server.to_string(),
        pid,
        program,
        processes: procs.len(),
        home,
        cg,
        resident_before,
        charges_moved,
        cgroup_limit,
    })
}

impl ServerCaps {
    /// Moves the servers back where they were and says what happened under
    /// each cap.
    pub(crate) fn release(mut self) -> Vec<ServerMemory> {
        let page_cache = self.page_cache.clone();
        let limit = self.limit;
        self.capped
            .drain(..)
            .map(|c| {
                let oom = c.cg.oom_killed();
                let alive = std::path::Path::new(&format!("/proc/{}", c.pid)).exists();
                let mut record = c.cg.record(&page_cache, oom);
                record.bytes = limit;
                if c.charges_moved {
                    record
                        .mechanism
                        .push_str(", the memory the server held moved in with it");
                } else {
                    record.mechanism.push_str(&format!(
                        ", set to the budget less the {} MiB the server held before (the kernel does not move it)",
                        c.resident_before.unwrap_or(0) >> 20
                    ));
                }
                go_home(&c);
                ServerMemory {
                    server: c.server,
                    pid: c.pid,
                    program: c.program,
                    processes: c.processes,
                    resident_bytes_before: c.resident_before,
                    charges_moved: c.charges_moved,
                    cgroup_limit_bytes: c.cgroup_limit,
                    limit: record,
                    alive_after: alive,
                }
            })
            .collect()
    }
}

/// The result's warnings about the capped servers: an OOM kill, a server
/// gone.
pub(crate) fn note(warnings: &mut Vec<String>, servers: &[ServerMemory]) {
    for s in servers {
        let who = format!("the server {} (pid {}) at {}", s.program, s.pid, s.server);
        if s.limit.oom_killed {
            warnings.push(format!(
                "{who} was killed by --server-memory-limit {} (the cgroup's OOM killer): the figures after that are of a server that was down",
                s.limit.bytes
            ));
        } else if !s.alive_after {
            warnings.push(format!("{who} was not running at the end of the phase"));
        }
    }
}

/// Every process still in the cap (children the server started during the
/// phase included) goes back to the server's own cgroup.
fn go_home(c: &Capped) {
    for p in c.cg.procs() {
        let _ = memlimit::adopt(&c.home, p);
    }
}

impl Drop for ServerCaps {
    fn drop(&mut self) {
        for c in &self.capped {
            go_home(c);
        }
    }
}

/// The pid of the process that listens on `server` (`host:port`) on this
/// machine.
fn listener(server: &str) -> Result<u32, CliError> {
    procfs::listener(server).map_err(|e| {
        CliError::bad_input(format!(
            "--server-memory-limit: {e}; it caps a server running here (cap a remote one on its own machine, e.g. systemd-run -p MemoryMax=SIZE)"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_port_nobody_listens_on_and_an_embedded_engine_are_refused() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        assert_eq!(
            listener(&format!("127.0.0.1:{port}")).ok(),
            Some(std::process::id())
        );
        drop(l);
        let e = listener(&format!("127.0.0.1:{port}"))
            .err()
            .unwrap()
            .message;
        assert!(e.contains("no process listens on"), "{e}");
        let e = cap("sqlite:///tmp/x.db", 1 << 30).err().unwrap().message;
        assert!(e.contains("use --memory-limit"), "{e}");
    }
}
