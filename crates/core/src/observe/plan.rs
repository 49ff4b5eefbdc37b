//! Which sources a phase observes: the host always; the server's process
//! tree when the server is on this machine (found by the port it listens
//! on, or `--server-pid`); a data directory; and the binding's own
//! statistics, or the engine's size for an embedded engine.
use super::dirsize::{DirSize, EngineSize};
use super::process::Process;
use super::procfs::{self, ListenerError};
use super::scrape::{Endpoint, Keep, Scrape};
use super::{host::Host, Absent, Observer, Source};
use crate::binding::Binding;
use std::path::PathBuf;
use std::sync::Arc;

/// What the user asked to observe beyond the defaults.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The server's main process, when the process listening on the URL's
    /// port is not it (a proxy in front) or cannot be seen.
    pub server_pid: Option<u32>,
    /// A local server's data directory.
    pub data_dir: Option<PathBuf>,
    /// Prometheus exporters to scrape (`--observe URL`).
    pub exporters: Vec<Endpoint>,
    /// What to keep of their pages.
    pub keep: Keep,
}

/// The sources of one phase, before the binding is open.
pub struct Plan {
    sources: Vec<Box<dyn Source>>,
    embedded: bool,
    /// How long after its tick a sample may come back: the status interval.
    limit: std::time::Duration,
    /// Said before the run starts (a wrong `--server-pid`).
    pub warnings: Vec<String>,
}

impl Plan {
    /// `servers` are the URL's `host:port`s, `None` for an engine inside
    /// this process.
    pub fn new(opts: &Options, servers: Option<&[String]>, interval: std::time::Duration) -> Plan {
        let mut sources: Vec<Box<dyn Source>> = vec![Box::new(Host::new())];
        let mut warnings = Vec::new();
        match (opts.server_pid, servers) {
            (Some(pid), _) if Process::exists(pid) => {
                sources.push(Box::new(Process::new(pid, "--server-pid")));
            }
            (Some(pid), _) => warnings.push(format!(
                "observation: --server-pid {pid}: no such process on this machine; give the pid of the server's main process (e.g. `pgrep -o postgres`), or leave it out to find the server by its port"
            )),
            (None, Some(servers)) => {
                let mut seen = Vec::new();
                for s in servers {
                    match procfs::listener(s) {
                        Ok(pid) if seen.contains(&pid) => {}
                        Ok(pid) => {
                            seen.push(pid);
                            sources.push(Box::new(Process::new(pid, &format!("listening on {s}"))));
                        }
                        Err(ListenerError::Hidden(_)) => sources.push(Box::new(Absent {
                            name: format!("server process at {s}"),
                            why: format!("cannot see the process listening on {s} (another user's); run as that user or root, or give --server-pid"),
                            warn: true,
                        })),
                        Err(e) => sources.push(Box::new(Absent {
                            name: format!("server process at {s}"),
                            why: format!("not on this machine ({e}); observe its host with --observe http://HOST:9100/metrics (node_exporter)"),
                            warn: false,
                        })),
                    }
                }
            }
            (None, None) => {}
        }
        if let Some(dir) = &opts.data_dir {
            sources.push(Box::new(DirSize::new(dir)));
        }
        for e in &opts.exporters {
            sources.push(Box::new(Scrape::new(e.clone(), opts.keep.clone())));
        }
        Plan {
            sources,
            embedded: servers.is_none(),
            limit: interval,
            warnings,
        }
    }

    /// Adds the binding's sources (its statistics; an embedded engine's
    /// size) and starts every one.
    pub fn start<B: Binding>(self, binding: &Arc<B>, scheme: &str) -> Observer {
        let size = self.embedded.then(|| {
            let b = binding.clone();
            let path = b.data_path();
            Box::new(EngineSize::new(move || b.data_size()).at(path)) as Box<dyn Source>
        });
        self.start_with(binding.statistics(), size, scheme)
    }

    /// Starts every source, with the database's `statistics` (the result
    /// says when there are none) and an engine's `size`.
    pub fn start_with(
        mut self,
        statistics: Option<Box<dyn Source>>,
        size: Option<Box<dyn Source>>,
        scheme: &str,
    ) -> Observer {
        self.sources.push(statistics.unwrap_or_else(|| {
            Box::new(Absent {
                name: "database".into(),
                why: format!("the {scheme} binding reports no statistics of its own"),
                warn: false,
            })
        }));
        self.sources.extend(size);
        let mut o = Observer::start(self.sources, self.limit);
        o.warn(self.warnings);
        o
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECOND: std::time::Duration = std::time::Duration::from_secs(1);

    fn names(p: &Plan) -> Vec<String> {
        p.sources.iter().map(|s| s.name()).collect()
    }

    #[test]
    fn a_listening_server_is_found_and_a_remote_one_is_said_to_be_elsewhere() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let here = l.local_addr().unwrap().to_string();
        let p = Plan::new(&Options::default(), Some(&[here.clone(), here]), SECOND);
        let n = names(&p);
        assert_eq!(n.len(), 2, "{n:?}");
        assert!(
            n[1].contains(&format!("pid {}", std::process::id())),
            "{n:?}"
        );
        drop(l);
        let gone = "127.0.0.1:1".to_string();
        let mut p = Plan::new(&Options::default(), Some(&[gone]), SECOND);
        let why = p.sources[1].sample().unwrap_err().to_string();
        assert!(
            why.contains("not on this machine") && why.contains("--observe"),
            "{why}"
        );
    }

    #[test]
    fn a_wrong_server_pid_is_one_warning_and_the_host_is_still_observed() {
        let opts = Options {
            server_pid: Some(0),
            data_dir: Some("/nonexistent-dir".into()),
            ..Options::default()
        };
        let p = Plan::new(&opts, None, SECOND);
        assert_eq!(p.warnings.len(), 1);
        assert!(
            p.warnings[0].contains("--server-pid 0: no such process"),
            "{:?}",
            p.warnings
        );
        assert_eq!(
            names(&p),
            vec!["host".to_string(), "data directory /nonexistent-dir".into()]
        );
        assert!(p.embedded);
    }
}
