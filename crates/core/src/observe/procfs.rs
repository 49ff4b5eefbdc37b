//! Reading Linux's /proc: the host's CPU, memory, disks and network, a
//! process tree's CPU, I/O and memory, and which process listens on a port.
//! Each parser takes the file's text, so the tests feed it the kernel's
//! formats without a kernel.
use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, ToSocketAddrs};

/// Clock ticks per second of /proc's CPU times (USER_HZ).
pub fn ticks_per_second() -> f64 {
    // SAFETY: sysconf reads a constant of the running system.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if hz > 0 {
        hz as f64
    } else {
        100.0
    }
}

/// One CPU line of /proc/stat, in seconds.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CpuTimes {
    /// user and nice
    pub user: f64,
    /// system, irq and softirq
    pub system: f64,
    pub iowait: f64,
    pub steal: f64,
    pub idle: f64,
}

impl CpuTimes {
    /// Time on a CPU, not waiting and not idle.
    pub fn busy(&self) -> f64 {
        self.user + self.system + self.steal
    }
}

/// /proc/stat: the machine's total (`None` key) and each core's CPU times,
/// and the context switches since boot.
pub fn cpu_stat(text: &str, hz: f64) -> (Vec<(Option<usize>, CpuTimes)>, Option<u64>) {
    let mut cpus = Vec::new();
    let mut ctxt = None;
    for line in text.lines() {
        let mut f = line.split_whitespace();
        let Some(label) = f.next() else { continue };
        if label == "ctxt" {
            ctxt = f.next().and_then(|v| v.parse().ok());
            continue;
        }
        let Some(core) = label.strip_prefix("cpu") else {
            continue;
        };
        let core = if core.is_empty() {
            None
        } else {
            match core.parse() {
                Ok(n) => Some(n),
                Err(_) => continue,
            }
        };
        let v: Vec<f64> = f.filter_map(|x| x.parse::<f64>().ok()).collect();
        let at = |i: usize| v.get(i).copied().unwrap_or(0.0) / hz;
        cpus.push((
            core,
            CpuTimes {
                user: at(0) + at(1),
                system: at(2) + at(5) + at(6),
                idle: at(3),
                iowait: at(4),
                steal: at(7),
            },
        ));
    }
    (cpus, ctxt)
}

/// /proc/meminfo's fields, in bytes.
pub fn meminfo(text: &str) -> HashMap<String, u64> {
    text.lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(':')?;
            let mut f = v.split_whitespace();
            let n: u64 = f.next()?.parse().ok()?;
            let scale = if f.next() == Some("kB") { 1024 } else { 1 };
            Some((k.trim().to_string(), n * scale))
        })
        .collect()
}

/// One block device's counters from /proc/diskstats.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DiskStats {
    pub device: String,
    pub reads: u64,
    pub read_bytes: u64,
    pub writes: u64,
    pub write_bytes: u64,
    /// Seconds the device had I/O in flight (its utilisation, as a rate).
    pub busy_s: f64,
}

/// /proc/diskstats, for the devices `keep` accepts. Sectors are 512 bytes
/// whatever the device's own sector size (the kernel's convention).
pub fn diskstats(text: &str, keep: impl Fn(&str) -> bool) -> Vec<DiskStats> {
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let device = *f.get(2)?;
            if !keep(device) {
                return None;
            }
            let n = |i: usize| f.get(i).and_then(|x| x.parse::<u64>().ok());
            Some(DiskStats {
                device: device.to_string(),
                reads: n(3)?,
                read_bytes: n(5)? * 512,
                writes: n(7)?,
                write_bytes: n(9)? * 512,
                busy_s: n(12)? as f64 / 1000.0,
            })
        })
        .collect()
}

/// Whole disks (what /sys/block lists), not partitions, RAM disks or loop
/// devices nobody attached.
pub fn is_disk(device: &str) -> bool {
    !device.starts_with("ram")
        && !device.starts_with("loop")
        && std::path::Path::new("/sys/block").join(device).exists()
}

/// /proc/net/dev: bytes received and sent per interface.
pub fn net_dev(text: &str) -> Vec<(String, u64, u64)> {
    text.lines()
        .skip(2)
        .filter_map(|l| {
            let (name, rest) = l.split_once(':')?;
            let f: Vec<u64> = rest
                .split_whitespace()
                .filter_map(|x| x.parse().ok())
                .collect();
            Some((name.trim().to_string(), *f.first()?, *f.get(8)?))
        })
        .collect()
}

/// One process's figures, summed over a tree by [`usage`].
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Usage {
    /// User and system CPU of the process and of its children it reaped.
    pub cpu_s: f64,
    /// Bytes it made the storage layer read and write (children reaped included).
    pub read_bytes: Option<u64>,
    pub write_bytes: Option<u64>,
    pub context_switches: u64,
    /// Private (anonymous) resident memory.
    pub rss_anon: u64,
    /// File-backed and shared resident memory (the same pages in every
    /// process that maps them).
    pub rss_shared: u64,
    pub threads: u64,
}

/// The fields after the command name of /proc/PID/stat (which may hold
/// spaces and parentheses), numbered from the state as 0.
fn stat_fields(stat: &str) -> Option<Vec<&str>> {
    Some(stat.rsplit_once(')')?.1.split_whitespace().collect())
}

/// The parent pid in a /proc/PID/stat line.
pub fn parent_of(stat: &str) -> Option<u32> {
    stat_fields(stat)?.get(1)?.parse().ok()
}

/// CPU seconds in a /proc/PID/stat line: utime, stime, cutime, cstime.
pub fn stat_cpu(stat: &str, hz: f64) -> Option<f64> {
    let f = stat_fields(stat)?;
    let mut s = 0.0;
    for i in 11..15 {
        s += f.get(i)?.parse::<f64>().ok()?;
    }
    Some(s / hz)
}

/// read_bytes and write_bytes of /proc/PID/io.
pub fn io(text: &str) -> (Option<u64>, Option<u64>) {
    let field = |k: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(k))
            .and_then(|v| v.trim().parse().ok())
    };
    (field("read_bytes:"), field("write_bytes:"))
}

/// A kB field of /proc/PID/status, in bytes (or a plain count).
pub fn status_field(text: &str, key: &str) -> Option<u64> {
    let v = text
        .lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))?;
    let mut f = v.split_whitespace();
    let n: u64 = f.next()?.parse().ok()?;
    Some(if f.next() == Some("kB") { n * 1024 } else { n })
}

/// Every process id on the machine.
pub fn pids() -> Vec<u32> {
    std::fs::read_dir("/proc")
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// Every descendant of `pid` (PostgreSQL's backends, for example): from
/// each thread's `children` list where the kernel has them (a few reads),
/// else from every process's parent (a read per process on the machine).
pub fn descendants(pid: u32) -> Vec<u32> {
    children_lists(pid).unwrap_or_else(|| descendants_by_scan(pid))
}

/// The children of `pid`'s threads, and theirs; `None` without the lists.
fn children_lists(pid: u32) -> Option<Vec<u32>> {
    let mut out = Vec::new();
    let mut todo = vec![pid];
    while let Some(p) = todo.pop() {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{p}/task")) else {
            continue; // ended meanwhile
        };
        for t in tasks.flatten() {
            let text = match std::fs::read_to_string(t.path().join("children")) {
                Ok(t) => t,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound && p == pid => return None,
                Err(_) => continue,
            };
            for c in text.split_whitespace().filter_map(|c| c.parse().ok()) {
                out.push(c);
                todo.push(c);
            }
        }
    }
    Some(out)
}

fn descendants_by_scan(pid: u32) -> Vec<u32> {
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

/// Resident memory of a process, bytes.
pub fn resident(pid: u32) -> Option<u64> {
    status_field(
        &std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?,
        "VmRSS",
    )
}

/// `procs` summed (the first is the tree's root); `None` when the root is
/// gone. Context switches are summed over every thread (a process's status
/// counts its main thread only).
pub fn usage(procs: &[u32], hz: f64) -> Option<(Usage, usize)> {
    let mut u = Usage::default();
    let (mut reads, mut writes) = (Some(0u64), Some(0u64));
    let mut seen = 0;
    for (i, p) in procs.iter().enumerate() {
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{p}/stat")) else {
            if i == 0 {
                return None;
            }
            continue; // a child that ended: its parent reaps its figures
        };
        seen += 1;
        u.cpu_s += stat_cpu(&stat, hz).unwrap_or(0.0);
        let (r, w) = std::fs::read_to_string(format!("/proc/{p}/io"))
            .map(|t| io(&t))
            .unwrap_or((None, None));
        reads = reads.zip(r).map(|(a, b)| a + b);
        writes = writes.zip(w).map(|(a, b)| a + b);
        if let Ok(status) = std::fs::read_to_string(format!("/proc/{p}/status")) {
            u.rss_anon += status_field(&status, "RssAnon").unwrap_or(0);
            let shared = status_field(&status, "RssFile").unwrap_or(0)
                + status_field(&status, "RssShmem").unwrap_or(0);
            u.rss_shared = u.rss_shared.max(shared);
            u.threads += status_field(&status, "Threads").unwrap_or(1);
        }
        if let Ok(tasks) = std::fs::read_dir(format!("/proc/{p}/task")) {
            for t in tasks.flatten() {
                if let Ok(s) = std::fs::read_to_string(t.path().join("status")) {
                    u.context_switches += status_field(&s, "voluntary_ctxt_switches").unwrap_or(0)
                        + status_field(&s, "nonvoluntary_ctxt_switches").unwrap_or(0);
                }
            }
        }
    }
    u.read_bytes = reads;
    u.write_bytes = writes;
    Some((u, seen))
}

/// Why no process could be found listening on a server's address.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ListenerError {
    #[error("cannot resolve {0}")]
    Unresolved(String),
    #[error("no process listens on {0} on this machine")]
    NotListening(String),
    #[error("cannot find (or may not see) the process listening on {0}")]
    Hidden(String),
}

/// The pid of the process that listens on `server` (`host:port`) on this
/// machine, found through /proc/net/tcp{,6} and the processes' sockets.
pub fn listener(server: &str) -> Result<u32, ListenerError> {
    let addrs: Vec<std::net::SocketAddr> = server
        .to_socket_addrs()
        .map_err(|_| ListenerError::Unresolved(server.into()))?
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
        return Err(ListenerError::NotListening(server.into()));
    }
    owner(&inodes).ok_or_else(|| ListenerError::Hidden(server.into()))
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

/// The mount a path is on: what the result records of a data directory's
/// filesystem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    pub point: String,
    pub fstype: String,
    pub source: String,
    pub options: String,
}

/// Mount points escape space, tab, newline and backslash as octal.
fn unescape(field: &str) -> String {
    let mut out = String::new();
    let mut rest = field;
    while let Some(i) = rest.find('\\') {
        out.push_str(&rest[..i]);
        let code = rest
            .get(i + 1..i + 4)
            .and_then(|o| u8::from_str_radix(o, 8).ok());
        match code {
            Some(c) => {
                out.push(c as char);
                rest = &rest[i + 4..];
            }
            None => {
                out.push('\\');
                rest = &rest[i + 1..];
            }
        }
    }
    out + rest
}

/// The mount `path` (absolute, symlinks resolved) is on, from a
/// `/proc/self/mountinfo` text: the longest mount point that contains it
/// (the last of equal ones, which is on top).
pub fn mount_of(mountinfo: &str, path: &std::path::Path) -> Option<Mount> {
    let mut best: Option<Mount> = None;
    for line in mountinfo.lines() {
        let Some((left, right)) = line.split_once(" - ") else {
            continue;
        };
        let l: Vec<&str> = left.split(' ').collect();
        let r: Vec<&str> = right.split(' ').collect();
        let (Some(point), Some(options), Some(fstype), Some(source)) =
            (l.get(4), l.get(5), r.first(), r.get(1))
        else {
            continue;
        };
        let point = unescape(point);
        if !path.starts_with(&point) {
            continue;
        }
        if best.as_ref().is_none_or(|b| point.len() >= b.point.len()) {
            best = Some(Mount {
                point,
                fstype: fstype.to_string(),
                source: unescape(source),
                options: options.to_string(),
            });
        }
    }
    best
}

/// `path`'s filesystem as settings: the path, the mount point, the
/// filesystem type, the device and the mount options.
pub fn filesystem_of(path: &std::path::Path) -> std::collections::BTreeMap<String, String> {
    let mut out = std::collections::BTreeMap::new();
    let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    out.insert("path".into(), real.display().to_string());
    let info = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    if let Some(m) = mount_of(&info, &real) {
        out.insert("filesystem".into(), m.fstype);
        out.insert("mount".into(), m.point);
        out.insert("device".into(), m.source);
        out.insert("mount_options".into(), m.options);
    }
    out
}

#[cfg(test)]
#[path = "procfs_tests.rs"]
mod tests;
