//! The result's `observation` block: the sources, their series aligned with
//! the client's intervals, the configuration they read, and the figures per
//! operation a reader wants without arithmetic.
use super::Kind;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What was observed during one phase.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Observation {
    /// The client interval (`time_series[].index`) each sample closes;
    /// every series' values are parallel to it.
    pub index: Vec<i64>,
    /// The end of those intervals, seconds after measurement started.
    pub t_s: Vec<f64>,
    pub sources: Vec<SourceRecord>,
    /// Keyed by the value's dotted name (`host.cpu.user`).
    pub series: BTreeMap<String, Series>,
    /// Settings the sources read, by source.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub configuration: BTreeMap<String, BTreeMap<String, String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_operation: Option<PerOperation>,
}

/// One source and how its sampling went.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SourceRecord {
    pub name: String,
    pub state: SourceState,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Intervals with a sample.
    pub samples: u64,
    /// Intervals without one (the source was busy, failed or stopped).
    pub missed: u64,
    /// CPU the source's thread spent sampling, seconds.
    pub cpu_s: f64,
    /// Wall time one sample took, on average.
    pub mean_sample_ms: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SourceState {
    /// A sample at every interval.
    Ok,
    /// Some intervals have none (`message` says why).
    Partial,
    /// It could not observe this run (`message` says why and what to do).
    Unavailable,
    /// There is nothing of this kind to observe (a binding without statistics).
    Unsupported,
    /// It stopped answering and was abandoned at the end.
    Stalled,
}

/// One observed value over the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Series {
    pub source: String,
    pub kind: Kind,
    /// Of `values`: a counter's rate (`cores` for CPU seconds, `bytes/s`).
    pub unit: String,
    /// Counters: the unit of `measured`, their increase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_unit: Option<String>,
    /// One per interval; null where the source had no sample.
    pub values: Vec<Option<f64>>,
    /// Over the measured time (warm-up excluded): a counter's increase, a
    /// gauge's mean.
    pub measured: Option<f64>,
    /// The largest value of the measured intervals.
    pub max: Option<f64>,
}

/// The server's and the host's cost per operation over the measured time.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PerOperation {
    /// The operations divided by (transactions, for TPC-C).
    pub operations: u64,
    /// CPU microseconds of the server's processes per operation.
    pub server_cpu_us: Option<f64>,
    /// Bytes the server's processes read from and wrote to storage per operation.
    pub server_read_bytes: Option<f64>,
    pub server_write_bytes: Option<f64>,
    /// CPU microseconds of the whole host (client included) per operation.
    pub host_cpu_us: Option<f64>,
    /// Bytes the host's disks read and wrote per operation.
    pub host_disk_read_bytes: Option<f64>,
    pub host_disk_write_bytes: Option<f64>,
}

impl Observation {
    /// The increase of a counter over the measured time.
    pub fn measured(&self, name: &str) -> Option<f64> {
        self.series.get(name)?.measured
    }

    /// Fills `per_operation` from the measured totals, for `operations`.
    pub fn derive(&mut self, operations: u64) {
        if operations == 0 {
            return;
        }
        let per =
            |name: &str, scale: f64| self.measured(name).map(|v| v * scale / operations as f64);
        self.per_operation = Some(PerOperation {
            operations,
            server_cpu_us: per("process.cpu", 1e6),
            server_read_bytes: per("process.read_bytes", 1.0),
            server_write_bytes: per("process.write_bytes", 1.0),
            host_cpu_us: per("host.cpu.busy", 1e6),
            host_disk_read_bytes: per("host.disk.read_bytes", 1.0),
            host_disk_write_bytes: per("host.disk.write_bytes", 1.0),
        });
    }

    /// The `db.wait.*` series by the mean number of sessions waiting on
    /// each over the measured time, largest first: the top wait events. A
    /// gauge counts sessions at each sample (PostgreSQL's active-session
    /// history); a counter of seconds waited (performance_schema's) has a
    /// rate that is that mean.
    pub fn top_waits(&self, n: usize) -> Vec<(&str, f64)> {
        let mean = |s: &Series| match s.kind {
            Kind::Gauge => s.measured,
            Kind::Counter => {
                let v: Vec<f64> = s.values.iter().flatten().copied().collect();
                (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
            }
        };
        let mut w: Vec<(&str, f64)> = self
            .series
            .iter()
            .filter_map(|(k, s)| Some((k.strip_prefix("db.wait.")?, mean(s)?)))
            .filter(|(_, v)| *v > 0.0)
            .collect();
        w.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
        w.truncate(n);
        w
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(kind: Kind, measured: Option<f64>) -> Series {
        Series {
            source: "s".into(),
            kind,
            unit: "u".into(),
            total_unit: None,
            values: vec![],
            measured,
            max: None,
        }
    }

    #[test]
    fn figures_per_operation_divide_the_measured_increase() {
        let mut o = Observation::default();
        o.series
            .insert("process.cpu".into(), series(Kind::Counter, Some(2.0)));
        o.series.insert(
            "process.write_bytes".into(),
            series(Kind::Counter, Some(4000.0)),
        );
        o.series
            .insert("host.cpu.busy".into(), series(Kind::Counter, None));
        o.derive(0);
        assert_eq!(o.per_operation, None);
        o.derive(1000);
        let p = o.per_operation.unwrap();
        assert_eq!(p.server_cpu_us, Some(2000.0));
        assert_eq!(p.server_write_bytes, Some(4.0));
        assert_eq!((p.server_read_bytes, p.host_cpu_us), (None, None));
    }

    #[test]
    fn top_waits_rank_the_wait_gauges() {
        let mut o = Observation::default();
        for (k, v) in [
            ("db.wait.CPU", 1.5),
            ("db.wait.Lock:tuple", 0.2),
            ("db.wait.IO:DataFileRead", 0.7),
            ("db.wait.Client:ClientRead", 0.0),
            ("host.cpu.user", 9.0),
        ] {
            o.series.insert(k.into(), series(Kind::Gauge, Some(v)));
        }
        assert_eq!(o.top_waits(2), vec![("CPU", 1.5), ("IO:DataFileRead", 0.7)]);
        assert_eq!(o.top_waits(9).len(), 3);
        // seconds waited, as performance_schema counts them: the mean rate
        let mut waited = series(Kind::Counter, Some(30.0));
        waited.values = vec![Some(2.0), None, Some(4.0)];
        o.series
            .insert("db.wait.wait/io/file/innodb/innodb_log_file".into(), waited);
        assert_eq!(
            o.top_waits(1),
            vec![("wait/io/file/innodb/innodb_log_file", 3.0)]
        );
    }
}
