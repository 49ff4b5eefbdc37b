//! The client host from /proc: CPU by state over all cores and per core,
//! context switches, memory, disk I/O per device and network bytes per
//! interface.
use super::procfs;
use super::{Source, SourceError, Value};

/// This machine.
pub struct Host {
    hz: f64,
    /// Whole disks, found once (a disk attached during a run is not followed).
    disks: Vec<String>,
}

impl Host {
    pub fn new() -> Host {
        let text = std::fs::read_to_string("/proc/diskstats").unwrap_or_default();
        Host {
            hz: procfs::ticks_per_second(),
            disks: procfs::diskstats(&text, procfs::is_disk)
                .into_iter()
                .map(|d| d.device)
                .collect(),
        }
    }
}

impl Default for Host {
    fn default() -> Self {
        Host::new()
    }
}

fn read(path: &str) -> Result<String, SourceError> {
    std::fs::read_to_string(path).map_err(|e| {
        SourceError::Unavailable(format!(
            "cannot read {path}: {e}; host statistics need Linux's /proc"
        ))
    })
}

impl Source for Host {
    fn name(&self) -> String {
        "host".into()
    }

    fn sample(&mut self) -> Result<Vec<Value>, SourceError> {
        let mut out = Vec::new();
        let (cpus, ctxt) = procfs::cpu_stat(&read("/proc/stat")?, self.hz);
        for (core, t) in cpus {
            let prefix = match core {
                None => "host.cpu".to_string(),
                Some(n) => format!("host.core{n}"),
            };
            for (state, v) in [
                ("user", t.user),
                ("system", t.system),
                ("iowait", t.iowait),
                ("steal", t.steal),
            ] {
                out.push(Value::counter(format!("{prefix}.{state}"), "s", v));
            }
            if core.is_none() {
                out.push(Value::counter("host.cpu.busy", "s", t.busy()));
            }
        }
        if let Some(c) = ctxt {
            out.push(Value::counter(
                "host.context_switches",
                "operations",
                c as f64,
            ));
        }
        let m = procfs::meminfo(&read("/proc/meminfo")?);
        if let (Some(total), Some(avail)) = (m.get("MemTotal"), m.get("MemAvailable")) {
            out.push(Value::gauge(
                "host.memory.used",
                "bytes",
                total.saturating_sub(*avail) as f64,
            ));
        }
        for (key, name) in [
            ("Cached", "host.memory.cached"),
            ("Dirty", "host.memory.dirty"),
        ] {
            if let Some(v) = m.get(key) {
                out.push(Value::gauge(name, "bytes", *v as f64));
            }
        }
        let disks = procfs::diskstats(&read("/proc/diskstats")?, |d| {
            self.disks.iter().any(|k| k == d)
        });
        let (mut rb, mut wb) = (0.0, 0.0);
        for d in &disks {
            let p = format!("host.disk.{}", d.device);
            out.push(Value::counter(
                format!("{p}.reads"),
                "operations",
                d.reads as f64,
            ));
            out.push(Value::counter(
                format!("{p}.writes"),
                "operations",
                d.writes as f64,
            ));
            out.push(Value::counter(
                format!("{p}.read_bytes"),
                "bytes",
                d.read_bytes as f64,
            ));
            out.push(Value::counter(
                format!("{p}.write_bytes"),
                "bytes",
                d.write_bytes as f64,
            ));
            out.push(Value::counter(format!("{p}.busy"), "busy s", d.busy_s));
            rb += d.read_bytes as f64;
            wb += d.write_bytes as f64;
        }
        if !disks.is_empty() {
            out.push(Value::counter("host.disk.read_bytes", "bytes", rb));
            out.push(Value::counter("host.disk.write_bytes", "bytes", wb));
        }
        for (nic, rx, tx) in procfs::net_dev(&read("/proc/net/dev")?) {
            out.push(Value::counter(
                format!("host.net.{nic}.rx_bytes"),
                "bytes",
                rx as f64,
            ));
            out.push(Value::counter(
                format!("host.net.{nic}.tx_bytes"),
                "bytes",
                tx as f64,
            ));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_host_has_cpu_memory_and_network_values() {
        let v = Host::new().sample().unwrap();
        let has = |n: &str| v.iter().any(|x| x.name == n);
        assert!(has("host.cpu.user") && has("host.cpu.busy") && has("host.core0.system"));
        assert!(has("host.memory.used") && has("host.net.lo.rx_bytes"));
        let busy = v.iter().find(|x| x.name == "host.cpu.busy").unwrap();
        assert!(busy.value > 0.0 && busy.kind == super::super::Kind::Counter);
    }
}
