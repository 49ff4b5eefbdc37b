//! Scaling across cluster sizes: results tagged with their node count
//! (`--tag nodes=3`, and `--tag cores=8` for the cores of each node) are
//! lined up by size, each with its throughput per node and per core and its
//! scaling efficiency against the smallest size measured, as the YDB report
//! computes it: measured throughput / (per-core throughput on the smallest
//! cluster x the cores of this one).
use crate::html::Inputs;
use crate::section::{ordered, Section, Table};
use crate::svg::{Line, LineChart};
use std::collections::BTreeMap;

/// The tags that give a cluster's size; the series of a point is every
/// other tag.
pub const NODES_TAG: &str = "nodes";
pub const CORES_TAG: &str = "cores";

/// One measured result at one cluster size.
#[derive(Debug, Clone, PartialEq)]
struct Point {
    /// What is compared across sizes: the workload, the binding and the
    /// other tags.
    series: String,
    unit: &'static str,
    nodes: u32,
    cores_per_node: Option<u32>,
    throughput: f64,
}

/// A positive count in tag `key`, or None.
fn count(tags: &BTreeMap<String, String>, key: &str) -> Option<u32> {
    tags.get(key)?.parse().ok().filter(|&n| n > 0)
}

fn series_of(what: String, tags: &BTreeMap<String, String>) -> String {
    let rest: Vec<String> = tags
        .iter()
        .filter(|(k, _)| *k != NODES_TAG && *k != CORES_TAG)
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    if rest.is_empty() {
        what
    } else {
        format!("{what} [{}]", rest.join(", "))
    }
}

fn points(inputs: &Inputs) -> Vec<Point> {
    let runs = inputs.entries.iter().filter_map(|e| {
        let tags = &e.result.tags;
        Some(Point {
            series: series_of(
                format!("{} · {}", e.workload, e.result.binding.scheme),
                tags,
            ),
            unit: "ops/s",
            nodes: count(tags, NODES_TAG)?,
            cores_per_node: count(tags, CORES_TAG),
            throughput: e.result.records_per_sec(),
        })
    });
    let tpcc = inputs.tpcc.iter().filter_map(|e| {
        let tags = &e.result.tags;
        Some(Point {
            series: series_of(format!("tpcc · {}", e.result.database.scheme), tags),
            unit: "tpmC",
            nodes: count(tags, NODES_TAG)?,
            cores_per_node: count(tags, CORES_TAG),
            throughput: e.result.tpmc,
        })
    });
    runs.chain(tpcc).collect()
}

/// One cluster size of a series: the mean of its repetitions.
#[derive(Debug, Clone, PartialEq)]
struct Size {
    nodes: u32,
    cores: Option<u32>,
    runs: usize,
    throughput: f64,
}

/// The sizes of one series, smallest first; cores are used when every size
/// gives them, else nodes are the unit.
fn sizes(points: &[&Point]) -> Vec<Size> {
    let keys = ordered(points.iter().map(|p| (p.nodes, p.cores_per_node)));
    let with_cores = keys.iter().all(|(_, c)| c.is_some());
    let mut out: Vec<Size> = keys
        .into_iter()
        .map(|(nodes, per)| {
            let x: Vec<f64> = points
                .iter()
                .filter(|p| p.nodes == nodes && p.cores_per_node == per)
                .map(|p| p.throughput)
                .collect();
            Size {
                nodes,
                cores: if with_cores {
                    per.map(|c| c * nodes)
                } else {
                    None
                },
                runs: x.len(),
                throughput: x.iter().sum::<f64>() / x.len() as f64,
            }
        })
        .collect();
    out.sort_by_key(|s| (s.cores.unwrap_or(s.nodes), s.nodes));
    out
}

/// The unit of scale of a size: its cores where known, else its nodes.
fn units(s: &Size) -> f64 {
    f64::from(s.cores.unwrap_or(s.nodes))
}

/// Throughput / (the smallest size's throughput per unit x this size's
/// units).
fn efficiency(base: &Size, s: &Size) -> f64 {
    s.throughput / (base.throughput / units(base) * units(s))
}

pub(crate) fn section(inputs: &Inputs) -> Option<Section> {
    let points = points(inputs);
    let mut table = Table {
        id: "nodes".into(),
        title: "Scaling across nodes".into(),
        columns: [
            "series",
            "nodes",
            "cores",
            "runs",
            "throughput",
            "per node",
            "per core",
            "scaling efficiency (%)",
        ]
        .map(String::from)
        .to_vec(),
        rows: vec![],
    };
    let mut charts = Vec::new();
    for series in ordered(points.iter().map(|p| p.series.clone())) {
        let mine: Vec<&Point> = points.iter().filter(|p| p.series == series).collect();
        let sizes = sizes(&mine);
        if sizes.len() < 2 {
            continue;
        }
        let unit = mine[0].unit;
        let base = &sizes[0];
        for s in &sizes {
            table.rows.push(vec![
                series.clone(),
                s.nodes.to_string(),
                s.cores.map_or("-".into(), |c| c.to_string()),
                s.runs.to_string(),
                format!("{:.0} {unit}", s.throughput),
                format!("{:.0}", s.throughput / f64::from(s.nodes)),
                s.cores.map_or("-".into(), |c| {
                    format!("{:.1}", s.throughput / f64::from(c))
                }),
                format!("{:.1}", efficiency(base, s) * 100.0),
            ]);
        }
        let x_label = if base.cores.is_some() {
            "cores"
        } else {
            "nodes"
        };
        charts.push(
            LineChart {
                title: format!("Scaling · {series}"),
                x_label: x_label.into(),
                y_label: unit.into(),
                lines: vec![
                    Line {
                        name: "measured".into(),
                        points: sizes.iter().map(|s| (units(s), s.throughput)).collect(),
                        markers: true,
                        ..Line::default()
                    },
                    Line {
                        name: format!("linear from {} {x_label}", units(base)),
                        points: sizes
                            .iter()
                            .map(|s| (units(s), base.throughput / units(base) * units(s)))
                            .collect(),
                        dashed: true,
                        ..Line::default()
                    },
                ],
                ..LineChart::default()
            }
            .render(),
        );
    }
    if table.rows.is_empty() {
        return None;
    }
    Some(Section {
        id: "nodes",
        title: "Scaling across nodes".into(),
        intro: format!(
            "Results tagged {NODES_TAG}=N (and {CORES_TAG}=C, the cores of each node) lined up by \
             cluster size; scaling efficiency is the throughput over the smallest size's \
             throughput per core (per node without {CORES_TAG}) times this size's cores: \
             100% is linear."
        ),
        charts,
        tables: vec![table],
    })
}

#[cfg(test)]
#[path = "nodes_tests.rs"]
mod tests;
