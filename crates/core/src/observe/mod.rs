//! Observation: what the host, the server process and the database did
//! while a run was measured, kept in the result beside the client's time
//! series.
//!
//! Each [`Source`] (the host's /proc, a server's process tree, a database's
//! statistics views, an exporter's page) runs on a thread of its own. The
//! sampler's interval close sends every source a tick without waiting; a
//! source samples when it gets one. A sample that comes back more than an
//! interval after its tick is abandoned, and a tick that finds its source
//! still busy with the one before is missed, so a stalled or slow source
//! never delays a run or another source. Counters become per-second rates
//! over the time between their own samples; gauges are kept as read.
//!
//! | file | what it holds |
//! |---|---|
//! | [`plan`] | which sources a phase observes |
//! | [`observer`] | the threads, the ticks, the series they build |
//! | [`record`] | the result's `observation` block and the per-operation figures |
//! | [`host`] | CPU by state (all cores and each), memory, disks, network |
//! | [`process`] | a server's process tree: CPU, I/O, memory, context switches |
//! | [`dirsize`] | a data directory's size |
//! | [`scrape`] | `--observe URL`: a Prometheus exporter's page |
//! | [`remote`] | what the database sources share: their runtime, limit and hit ratio |
//! | [`procfs`] | the /proc parsers they share, and who listens on a port |
pub mod dirsize;
pub mod host;
pub mod observer;
pub mod plan;
pub mod process;
pub mod procfs;
pub mod record;
pub mod remote;
pub mod scrape;

pub use observer::{Finished, Observer};
pub use plan::{Options, Plan};
pub use record::{Observation, PerOperation, Series, SourceRecord, SourceState};

/// How a value changes between samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// Grows from sample to sample (kept as its rate per second).
    Counter,
    /// A level (kept as read).
    Gauge,
}

/// One reading of one named value.
#[derive(Debug, Clone, PartialEq)]
pub struct Value {
    /// Dotted, source first: `host.cpu.user`, `process.read_bytes`,
    /// `db.wait.Lock:transactionid`.
    pub name: String,
    pub kind: Kind,
    /// The unit of the value (a counter's rate is this per second).
    pub unit: &'static str,
    pub value: f64,
}

impl Value {
    pub fn counter(name: impl Into<String>, unit: &'static str, value: f64) -> Value {
        Value {
            name: name.into(),
            kind: Kind::Counter,
            unit,
            value,
        }
    }

    pub fn gauge(name: impl Into<String>, unit: &'static str, value: f64) -> Value {
        Value {
            name: name.into(),
            kind: Kind::Gauge,
            unit,
            value,
        }
    }
}

/// Why a sample gave nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SourceError {
    /// The source cannot work in this run (not on this machine, not
    /// permitted, not supported): said once, and the source stops.
    #[error("{0}")]
    Unavailable(String),
    /// The source has nothing to observe here (a binding without
    /// statistics): recorded in the result, not warned about.
    #[error("{0}")]
    Unsupported(String),
    /// This sample failed; the next may not.
    #[error("{0}")]
    Failed(String),
}

/// Something that can be sampled for values.
pub trait Source: Send {
    /// Names the source in the result and in warnings ("host", "postgresql").
    fn name(&self) -> String;

    /// The values now. Called on the source's own thread, once per tick.
    fn sample(&mut self) -> Result<Vec<Value>, SourceError>;

    /// Warnings about a partial view (a statistics view only partly
    /// readable, say), each with its fix; taken after every sample.
    fn warnings(&mut self) -> Vec<String> {
        Vec::new()
    }

    /// Settings the source read (the server's configuration), taken once
    /// when the source finishes.
    fn configuration(&mut self) -> std::collections::BTreeMap<String, String> {
        Default::default()
    }
}

/// A source that only says why it cannot observe anything: what a binding
/// without statistics, or a server not on this machine, puts in the result.
pub struct Absent {
    pub name: String,
    pub why: String,
    /// Something the user can fix (warned about), not merely nothing to see.
    pub warn: bool,
}

impl Source for Absent {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn sample(&mut self) -> Result<Vec<Value>, SourceError> {
        let why = self.why.clone();
        Err(if self.warn {
            SourceError::Unavailable(why)
        } else {
            SourceError::Unsupported(why)
        })
    }
}
