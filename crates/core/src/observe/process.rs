//! A server's process tree on this machine: the process that listens on
//! the URL's port (or `--server-pid`) and its descendants, summed: CPU, the
//! bytes it made the storage layer read and write, context switches,
//! memory and processes.
use super::procfs;
use super::{Source, SourceError, Value};

/// One server's processes.
pub struct Process {
    pid: u32,
    hz: f64,
    program: String,
    /// Where it was found, for warnings.
    found: String,
    /// The tree as last found (the root first), and samples since: finding
    /// the descendants reads every process on the machine, so it is done
    /// every tenth sample, or when one of them has ended. A process that
    /// ends leaves its figures to its parent, so nothing is lost between.
    tree: Vec<u32>,
    since_scan: u32,
}

/// Samples between two searches for the server's descendants.
const RESCAN: u32 = 10;

impl Process {
    /// The tree under `pid`; `found` says how it was found
    /// ("listening on 127.0.0.1:5432", "--server-pid").
    pub fn new(pid: u32, found: &str) -> Process {
        let program = std::fs::read_to_string(format!("/proc/{pid}/comm"))
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| "?".into());
        Process {
            pid,
            hz: procfs::ticks_per_second(),
            program,
            found: found.to_string(),
            tree: Vec::new(),
            since_scan: 0,
        }
    }

    /// Whether `pid` is a process on this machine.
    pub fn exists(pid: u32) -> bool {
        pid > 0 && std::path::Path::new(&format!("/proc/{pid}/stat")).exists()
    }
}

impl Source for Process {
    fn name(&self) -> String {
        format!("server process {} (pid {})", self.program, self.pid)
    }

    fn sample(&mut self) -> Result<Vec<Value>, SourceError> {
        let gone = self.tree.iter().any(|p| !Process::exists(*p));
        if self.tree.is_empty() || gone || self.since_scan >= RESCAN {
            self.tree = vec![self.pid];
            self.tree.extend(procfs::descendants(self.pid));
            self.since_scan = 0;
        }
        self.since_scan += 1;
        let (u, n) = procfs::usage(&self.tree, self.hz).ok_or_else(|| {
            SourceError::Unavailable(format!(
                "the process ({}) has gone; restart the server or give the new one's --server-pid",
                self.found
            ))
        })?;
        let mut out = vec![
            Value::counter("process.cpu", "s", u.cpu_s),
            Value::counter(
                "process.context_switches",
                "operations",
                u.context_switches as f64,
            ),
            Value::gauge("process.memory.private", "bytes", u.rss_anon as f64),
            Value::gauge("process.memory.shared", "bytes", u.rss_shared as f64),
            Value::gauge("process.processes", "processes", n as f64),
            Value::gauge("process.threads", "threads", u.threads as f64),
        ];
        if let (Some(r), Some(w)) = (u.read_bytes, u.write_bytes) {
            out.push(Value::counter("process.read_bytes", "bytes", r as f64));
            out.push(Value::counter("process.write_bytes", "bytes", w as f64));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn this_process_is_sampled_and_a_missing_one_is_unavailable() {
        // enough CPU to show at the kernel's 10 ms ticks
        let start = crate::run::cpu::thread_cpu_time();
        let mut x = 0u64;
        while crate::run::cpu::thread_cpu_time() - start < Duration::from_millis(30) {
            x = x.wrapping_add(std::hint::black_box(1));
        }
        assert!(x > 0);
        let mut p = Process::new(std::process::id(), "--server-pid");
        let v = p.sample().unwrap();
        let get = |n: &str| v.iter().find(|x| x.name == n).map(|x| x.value);
        assert!(get("process.cpu").unwrap() > 0.0);
        assert!(get("process.threads").unwrap() >= 1.0);
        assert!(p.name().contains(&format!("pid {}", std::process::id())));
        assert!(!Process::exists(0));
        let mut gone = Process::new(0, "--server-pid");
        match gone.sample() {
            Err(SourceError::Unavailable(w)) => assert!(w.contains("--server-pid"), "{w}"),
            other => panic!("{other:?}"),
        }
    }
}
