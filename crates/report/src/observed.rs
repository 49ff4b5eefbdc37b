//! Two runs' configurations and server behaviour side by side: what differs
//! in the settings the runs recorded (server, client, versions, host), and
//! what the server did per operation (CPU, I/O, cache hits, top wait
//! events). What `compare` opens with.
use crate::fmt::thousands;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use yardstick_core::binding::EngineInfo;
use yardstick_core::observe::Observation;
use yardstick_core::result::{HostInfo, RunResult};
use yardstick_core::tpcc::result::TpccResult;

/// One setting that differs: where it is recorded, its name, A's and B's
/// value ("-" where a run has none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    pub group: String,
    pub name: String,
    pub a: String,
    pub b: String,
}

fn diff_maps(
    group: &str,
    a: &BTreeMap<String, String>,
    b: &BTreeMap<String, String>,
    out: &mut Vec<Difference>,
) {
    let names: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    for n in names {
        let (x, y) = (a.get(n), b.get(n));
        if x != y {
            out.push(Difference {
                group: group.into(),
                name: n.clone(),
                a: x.cloned().unwrap_or_else(|| "-".into()),
                b: y.cloned().unwrap_or_else(|| "-".into()),
            });
        }
    }
}

/// What a result recorded of how it ran, whichever its kind (a YCSB phase
/// or a TPC-C run): what [`config_differences`] and [`server_table`] read.
pub struct Recorded<'a> {
    pub observation: Option<&'a Observation>,
    pub engine: &'a EngineInfo,
    /// The client's settings: explicit properties or TPC-C's configuration,
    /// threads, the tool's version.
    pub client: BTreeMap<String, String>,
    pub host: &'a HostInfo,
}

impl<'a> From<&'a RunResult> for Recorded<'a> {
    fn from(r: &'a RunResult) -> Self {
        let mut client: BTreeMap<String, String> = r
            .explicit_properties
            .keys()
            .filter_map(|k| Some((k.clone(), r.properties.get(k)?.clone())))
            .collect();
        client.insert(
            "threads x in flight".into(),
            format!("{} x {}", r.runner.threads, r.runner.concurrency),
        );
        client.insert("yardstick".into(), r.tool.version.clone());
        Recorded {
            observation: r.observation.as_ref(),
            engine: &r.binding.engine,
            client,
            host: &r.host,
        }
    }
}

impl<'a> From<&'a TpccResult> for Recorded<'a> {
    fn from(r: &'a TpccResult) -> Self {
        let c = &r.config;
        let client = BTreeMap::from([
            ("warehouses".to_string(), c.warehouses.to_string()),
            ("terminals".into(), c.terminals.to_string()),
            ("threads".into(), c.threads.to_string()),
            ("isolation".into(), r.database.isolation.clone()),
            ("statements".into(), r.database.statements.clone()),
            ("spec timing".into(), c.spec_timing.to_string()),
            ("duration".into(), format!("{} s", c.duration_s)),
            ("warm-up".into(), format!("{} s", c.warmup_s)),
            ("yardstick".into(), r.tool.version.clone()),
        ]);
        Recorded {
            observation: r.observation.as_ref(),
            engine: &r.database.engine,
            client,
            host: &r.host,
        }
    }
}

/// Every recorded setting that differs between `a` and `b`: the server's
/// own (observed configuration, the binding's settings and version), the
/// client's (explicit properties or TPC-C's configuration, threads), the
/// tool's version, the host.
pub fn config_differences(a: &Recorded, b: &Recorded) -> Vec<Difference> {
    let mut out = Vec::new();
    let config = |r: &Recorded| {
        r.observation
            .map(|o| o.configuration.clone())
            .unwrap_or_default()
    };
    let (ca, cb) = (config(a), config(b));
    let sources: BTreeSet<&String> = ca.keys().chain(cb.keys()).collect();
    let empty = BTreeMap::new();
    for s in sources {
        let (x, y) = (ca.get(s).unwrap_or(&empty), cb.get(s).unwrap_or(&empty));
        // the connection's own port and the observer's application name are not settings
        let keep = |m: &BTreeMap<String, String>| -> BTreeMap<String, String> {
            m.iter()
                .filter(|(k, _)| k.as_str() != "application_name")
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        };
        diff_maps(s, &keep(x), &keep(y), &mut out);
    }
    let (ea, eb) = (a.engine, b.engine);
    let mut va = ea.settings.clone();
    let mut vb = eb.settings.clone();
    va.insert("version".into(), format!("{} {}", ea.name, ea.version));
    vb.insert("version".into(), format!("{} {}", eb.name, eb.version));
    diff_maps("binding", &va, &vb, &mut out);
    diff_maps("client", &a.client, &b.client, &mut out);
    let host = |r: &Recorded| -> BTreeMap<String, String> {
        let h = r.host;
        BTreeMap::from([
            ("hostname".to_string(), h.hostname.clone()),
            ("cpu".into(), h.cpu_model.clone()),
            ("cores".into(), h.cores.to_string()),
            (
                "memory".into(),
                format!("{:.1} GiB", h.memory_bytes as f64 / (1u64 << 30) as f64),
            ),
            ("kernel".into(), h.kernel.clone()),
        ])
    };
    diff_maps("host", &host(a), &host(b), &mut out);
    out
}

/// A row of [`server_table`]: its label, the run's figure, how it is shown.
type Figure = (String, Option<f64>, fn(f64) -> String);

/// The figures of one run's observation compared row by row; `per` is what
/// the counters are divided by ("op", TPC-C's "txn").
fn figures(o: &Observation, per_unit: &str) -> Vec<Figure> {
    let per = o.per_operation.clone().unwrap_or_default();
    let us = |v: f64| format!("{v:.1} µs");
    // a read-only run writes a fraction of a byte per operation
    let bytes = |v: f64| {
        if v < 10.0 {
            format!("{v:.2} B")
        } else {
            format!("{v:.0} B")
        }
    };
    let ratio = |v: f64| format!("{:.2}%", v * 100.0);
    let gauge = |n: &str| o.series.get(n).and_then(|s| s.measured);
    let mean = |v: f64| format!("{v:.1}");
    let mb = |v: f64| format!("{:.1} MB", v / 1e6);
    let secs = |v: f64| format!("{v:.2} s");
    vec![
        (format!("server CPU per {per_unit}"), per.server_cpu_us, us),
        (
            format!("server read per {per_unit}"),
            per.server_read_bytes,
            bytes,
        ),
        (
            format!("server write per {per_unit}"),
            per.server_write_bytes,
            bytes,
        ),
        (format!("host CPU per {per_unit}"), per.host_cpu_us, us),
        (
            format!("host disk read per {per_unit}"),
            per.host_disk_read_bytes,
            bytes,
        ),
        (
            format!("host disk write per {per_unit}"),
            per.host_disk_write_bytes,
            bytes,
        ),
        ("cache hit ratio".into(), gauge("db.cache_hit_ratio"), ratio),
        // an LSM engine's shape: what a read goes through, what is owed
        ("L0 files (mean)".into(), gauge("db.level.L0.files"), mean),
        ("reads found in L0".into(), found_in_l0(o), ratio),
        (
            "pending compaction".into(),
            gauge("db.compaction.pending_bytes"),
            mb,
        ),
        (
            "compaction written".into(),
            gauge("db.compaction.write_bytes"),
            mb,
        ),
        ("write stall time".into(), gauge("db.stall_time"), secs),
    ]
}

/// The share of the reads that found their key in L0, from RocksDB's
/// `db.get.found.*` tickers (kept with `statistics=true`).
fn found_in_l0(o: &Observation) -> Option<f64> {
    let found = |level: &str| {
        o.series
            .get(&format!("db.get.found.{level}"))
            .and_then(|s| s.measured)
    };
    let l0 = found("L0")?;
    let all: f64 = ["memtable", "L0", "L1", "L2_up"]
        .iter()
        .filter_map(|l| found(l))
        .sum();
    (all > 0.0).then(|| l0 / all)
}

/// The server's behaviour in `a` and `b` side by side, per `per_unit` ("op",
/// or "txn" for TPC-C); empty unless both were observed.
pub fn server_table(a: &Recorded, b: &Recorded, per_unit: &str) -> String {
    let (Some(oa), Some(ob)) = (a.observation, b.observation) else {
        return String::new();
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<24} {:>14} {:>14} {:>9}",
        "server behaviour", "A", "B", "change"
    );
    for ((label, x, show), (_, y, _)) in
        figures(oa, per_unit).into_iter().zip(figures(ob, per_unit))
    {
        if x.is_none() && y.is_none() {
            continue;
        }
        let s = |v: Option<f64>| v.map_or("-".to_string(), show);
        let change = match (x, y) {
            // past tenfold a percentage is noise to read: say the factor
            (Some(x), Some(y)) if x != 0.0 && (y / x).abs() >= 10.0 => {
                format!("x{:.0}", y / x)
            }
            (Some(x), Some(y)) if x != 0.0 => format!("{:>+8.1}%", (y - x) / x * 100.0),
            _ => String::new(),
        };
        let _ = writeln!(out, "{label:<24} {:>14} {:>14} {change:>9}", s(x), s(y));
    }
    for (name, o) in [("A", oa), ("B", ob)] {
        let waits = o.top_waits(5);
        if !waits.is_empty() {
            let list: Vec<String> = waits.iter().map(|(w, n)| format!("{w} {n:.2}")).collect();
            let _ = writeln!(
                out,
                "top wait events {name} (mean active sessions): {}",
                list.join(", ")
            );
        }
    }
    let ops = |o: &Observation| o.per_operation.as_ref().map_or(0, |p| p.operations);
    let noun = if per_unit == "txn" {
        "transactions"
    } else {
        "operations"
    };
    let _ = writeln!(
        out,
        "per {per_unit}: the server's and the host's measured increase over {} and {} {noun}",
        thousands(ops(oa)),
        thousands(ops(ob))
    );
    out
}

#[cfg(test)]
#[path = "observed_tests.rs"]
mod tests;
