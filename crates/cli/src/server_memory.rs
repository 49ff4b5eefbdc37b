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
use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, ToSocketAddrs};
use std::path::PathBuf;
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
    let not_here = |why: &str| {
        CliError::bad_input(format!(
            "--server-memory-limit: {why} {server} on this machine; it caps a server running here (cap a remote one on its own machine, e.g. systemd-run -p MemoryMax=SIZE)"
        ))
    };
    let addrs: Vec<std::net::SocketAddr> = server
        .to_socket_addrs()
        .map_err(|_| not_here("cannot resolve"))?
        .collect();
    let port = addrs.first().map(|a| a.port()).unwrap_or(0);
    let ips: Vec<IpAddr> = addrs.iter().map(|a| a.ip()).collect();
    let mut inodes = Vec::new();
    for (file, v6) in [("/proc/net/tcp", false), ("/proc/net/tcp6", true)] {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        for (ip, p, inode) in listening(&text, v6) {
            if p == port && (ip.is_unspecified() || ips.iter().any(|a| same_ip(*a, ip))) {
                inodes.push(inode);
            }
        }
    }
    if inodes.is_empty() {
        return Err(not_here("no process listens on"));
    }
    owner(&inodes).ok_or_else(|| not_here("cannot find (or may not see) the process listening on"))
}

fn same_ip(a: IpAddr, b: IpAddr) -> bool {
    let v4 = |ip: IpAddr| match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map(IpAddr::V4).unwrap_or(ip),
        v4 => v4,
    };
    v4(a) == v4(b)
}

/// The listening sockets of a /proc/net/tcp (or tcp6) text: address, port,
/// socket inode.
fn listening(text: &str, v6: bool) -> Vec<(IpAddr, u16, u64)> {
    const LISTEN: &str = "0A";
    text.lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            if f.get(3) != Some(&LISTEN) {
                return None;
            }
            let (addr, port) = f.get(1)?.split_once(':')?;
            let port = u16::from_str_radix(port, 16).ok()?;
            let inode = f.get(9)?.parse().ok()?;
            Some((decode(addr, v6)?, port, inode))
        })
        .collect()
}

/// The kernel prints each 32-bit word of an address in host byte order.
fn decode(hex: &str, v6: bool) -> Option<IpAddr> {
    let word = |i: usize| -> Option<[u8; 4]> {
        Some(
            u32::from_str_radix(hex.get(i * 8..i * 8 + 8)?, 16)
                .ok()?
                .to_ne_bytes(),
        )
    };
    if v6 {
        let mut b = [0u8; 16];
        for i in 0..4 {
            b[i * 4..i * 4 + 4].copy_from_slice(&word(i)?);
        }
        Some(IpAddr::V6(Ipv6Addr::from(b)))
    } else {
        Some(IpAddr::V4(Ipv4Addr::from(word(0)?)))
    }
}

/// The process holding one of the socket `inodes`.
fn owner(inodes: &[u64]) -> Option<u32> {
    let wanted: Vec<String> = inodes.iter().map(|i| format!("socket:[{i}]")).collect();
    for pid in pids() {
        let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            if let Ok(target) = std::fs::read_link(fd.path()) {
                if wanted.iter().any(|w| target.as_os_str() == w.as_str()) {
                    return Some(pid);
                }
            }
        }
    }
    None
}

fn pids() -> Vec<u32> {
    std::fs::read_dir("/proc")
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// Every descendant of `pid` (PostgreSQL's backends, for example).
fn descendants(pid: u32) -> Vec<u32> {
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    for p in pids() {
        if let Some(parent) = std::fs::read_to_string(format!("/proc/{p}/stat"))
            .ok()
            .and_then(|s| parent_of(&s))
        {
            children.entry(parent).or_default().push(p);
        }
    }
    let mut out = Vec::new();
    let mut todo = vec![pid];
    while let Some(p) = todo.pop() {
        for c in children.get(&p).into_iter().flatten() {
            out.push(*c);
            todo.push(*c);
        }
    }
    out
}

/// The parent pid in a /proc/PID/stat line (after the command name, which
/// may hold spaces and parentheses).
fn parent_of(stat: &str) -> Option<u32> {
    stat.rsplit_once(')')?
        .1
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// Resident memory of a process, bytes.
fn resident(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kb * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listening_sockets_are_read_from_the_kernels_table() {
        let tcp = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:D0C2 00000000:0000 0A 00000000:00000000 00:00000000 00000000   105        0 4242 1 0000000000000000 100 0 0 10 0
   1: 0100007F:D0C2 0100007F:9C40 01 00000000:00000000 00:00000000 00000000   105        0 4243 1 0000000000000000 20 4 30 10 -1
   2: 00000000:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 77 1 0000000000000000 100 0 0 10 0";
        let l = listening(tcp, false);
        assert_eq!(
            l,
            vec![
                (IpAddr::V4(Ipv4Addr::new(127, 0, 0, 1)), 53442, 4242),
                (IpAddr::V4(Ipv4Addr::UNSPECIFIED), 8080, 77)
            ]
        );
        let tcp6 = "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000001000000:1F90 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 99 1 0000000000000000 100 0 0 10 0";
        assert_eq!(
            listening(tcp6, true),
            vec![(IpAddr::V6(Ipv6Addr::LOCALHOST), 8080, 99)]
        );
    }

    #[test]
    fn the_parent_is_read_past_a_command_name_with_parentheses() {
        assert_eq!(
            parent_of("123 (postgres: (bench) idle) S 77 123 123 0"),
            Some(77)
        );
        assert_eq!(parent_of("garbage"), None);
    }

    #[test]
    fn mapped_addresses_match_their_ipv4_form() {
        let v4 = IpAddr::V4(Ipv4Addr::LOCALHOST);
        let mapped = IpAddr::V6(Ipv4Addr::LOCALHOST.to_ipv6_mapped());
        assert!(same_ip(v4, mapped) && same_ip(mapped, v4));
        assert!(!same_ip(v4, IpAddr::V6(Ipv6Addr::LOCALHOST)));
    }

    #[test]
    fn this_process_is_found_listening_and_an_embedded_engine_is_refused() {
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
