//! Facts about the machine the client ran on, stored with every result.
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct HostInfo {
    pub hostname: String,
    pub os: String,
    pub kernel: String,
    pub arch: String,
    pub cpu_model: String,
    pub cores: usize,
    pub memory_bytes: u64,
}

fn read(path: &str) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// This machine's memory (MemTotal), if /proc says.
pub fn memory_bytes() -> Option<u64> {
    std::fs::read_to_string("/proc/meminfo")
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map(|kb| kb * 1024)
}

impl HostInfo {
    /// One line for reports: host, CPU, cores, memory, OS and kernel.
    pub fn summary(&self) -> String {
        format!(
            "{} · {} · {} cores · {:.1} GiB · {} · kernel {}",
            self.hostname,
            self.cpu_model,
            self.cores,
            self.memory_bytes as f64 / (1u64 << 30) as f64,
            self.os,
            self.kernel
        )
    }

    pub fn capture() -> Self {
        let cpuinfo = read("/proc/cpuinfo");
        let cpu_model = cpuinfo
            .lines()
            .find_map(|l| {
                l.strip_prefix("model name")
                    .and_then(|r| r.split_once(':'))
                    .map(|(_, v)| v.trim().to_string())
            })
            .unwrap_or_else(|| "unknown".to_string());
        let memory_bytes = memory_bytes().unwrap_or(0);
        let os = read("/etc/os-release")
            .lines()
            .find_map(|l| l.strip_prefix("PRETTY_NAME="))
            .map(|v| v.trim_matches('"').to_string())
            .unwrap_or_else(|| std::env::consts::OS.to_string());
        HostInfo {
            hostname: read("/proc/sys/kernel/hostname").trim().to_string(),
            os,
            kernel: read("/proc/sys/kernel/osrelease").trim().to_string(),
            arch: std::env::consts::ARCH.to_string(),
            cpu_model,
            cores: crate::run::cpu::available_cores(),
            memory_bytes,
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn captures_this_linux_host() {
        let h = super::HostInfo::capture();
        assert!(h.cores >= 1);
        assert!(h.memory_bytes > 0, "{h:?}");
        assert!(!h.kernel.is_empty());
    }

    #[test]
    fn the_summary_names_memory_in_gib() {
        let h = super::HostInfo {
            hostname: "db1".into(),
            os: "Debian 12".into(),
            kernel: "6.1".into(),
            arch: "x86_64".into(),
            cpu_model: "Xeon".into(),
            cores: 2,
            memory_bytes: 24 << 30,
        };
        assert_eq!(
            h.summary(),
            "db1 · Xeon · 2 cores · 24.0 GiB · Debian 12 · kernel 6.1"
        );
    }
}
