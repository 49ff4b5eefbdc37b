//! Merging the results of several instances of one run (`yardstick merge`):
//! HdrHistograms are added exactly, so the merged percentiles are those of one
//! histogram of every sample; counts add up; throughput is the operations of
//! every instance inside the window all of them were measuring, divided by
//! that window.
use super::build::cdf;
use super::time::{parse_rfc3339, rfc3339};
use super::*;
use crate::run::IntervalPoint;
use crate::stats::{decode_histogram, encode_histogram, Summary};
use hdrhistogram::Histogram;
use std::time::{Duration, SystemTime};

/// Properties that may differ between the instances of one run.
const PER_INSTANCE: &[&str] = &["insertstart", "insertcount"];

/// Why results cannot be merged.
#[derive(Debug, PartialEq)]
pub struct MergeError(pub String);

impl std::fmt::Display for MergeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn err(msg: impl Into<String>) -> MergeError {
    MergeError(msg.into())
}

fn start_of(r: &RunResult, name: &str) -> Result<SystemTime, MergeError> {
    parse_rfc3339(&r.started_at).ok_or_else(|| {
        err(format!(
            "{name}: started_at {} is not a timestamp; is the file damaged?",
            r.started_at
        ))
    })
}

/// The same measurement read twice: one run's result given twice (under two
/// names, or a copy) would double every count.
fn same_run(a: &RunResult, b: &RunResult) -> bool {
    a.started_at == b.started_at
        && a.ended_at == b.ended_at
        && a.seed == b.seed
        && a.host == b.host
        && a.instance == b.instance
        && a.totals.operations == b.totals.operations
}

/// Checks that every result is an instance of the same run as the first:
/// no run twice, and the same phase, workload, database, semantics and
/// properties (`force` turns differences of configuration into warnings).
fn check_related(results: &[(String, RunResult)], force: bool) -> Result<Vec<String>, MergeError> {
    let (first_name, first) = &results[0];
    let mut warnings = Vec::new();
    for (i, (name, r)) in results.iter().enumerate() {
        if let Some((other, _)) = results[..i].iter().find(|(_, o)| same_run(o, r)) {
            return Err(err(format!(
                "{other} and {name} are the same run (same start, seed, host and counts): give each instance's result once"
            )));
        }
    }
    for (name, r) in &results[1..] {
        let mut differ: Vec<String> = Vec::new();
        let mut field = |what: &str, a: &dyn std::fmt::Debug, b: &dyn std::fmt::Debug| {
            differ.push(format!("{what} ({a:?} vs {b:?})"));
        };
        if r.phase != first.phase {
            field("the phase", &first.phase, &r.phase);
        }
        if r.workload != first.workload {
            field("the workload", &first.workload, &r.workload);
        }
        if r.binding.url != first.binding.url {
            field("the database", &first.binding.url, &r.binding.url);
        }
        if r.semantics != first.semantics {
            field("the semantics", &first.semantics, &r.semantics);
        }
        let mut keys: Vec<&String> = first.properties.keys().chain(r.properties.keys()).collect();
        keys.sort();
        keys.dedup();
        for k in keys {
            let (a, b) = (first.properties.get(k), r.properties.get(k));
            if a != b && !PER_INSTANCE.contains(&k.as_str()) {
                field(&format!("property {k}"), &a, &b);
            }
        }
        if !differ.is_empty() {
            let what = format!(
                "{first_name} and {name} are not instances of one run: {} differ{}",
                differ.join(", "),
                if differ.len() == 1 { "s" } else { "" }
            );
            if !force {
                return Err(err(format!("{what}; merge them anyway with --force")));
            }
            warnings.push(format!("{what} (merged with --force)"));
        }
        if r.tool.version != first.tool.version {
            warnings.push(format!(
                "{first_name} and {name} were made by different yardstick versions ({} and {})",
                first.tool.version, r.tool.version
            ));
        }
    }
    let count = first.instance.count;
    if count > 1 {
        let mut seen = std::collections::BTreeSet::new();
        for (name, r) in results {
            if r.instance.count != count {
                return Err(err(format!(
                    "{name} is instance {}/{} but {first_name} is one of {count}: not one run",
                    r.instance.index, r.instance.count
                )));
            }
            if !seen.insert(r.instance.index) {
                return Err(err(format!(
                    "instance {}/{count} appears twice ({name}): give each instance's result once",
                    r.instance.index
                )));
            }
        }
        if seen.len() as u64 != count {
            warnings.push(format!(
                "only {} of {count} instances were merged: the figures cover part of the run",
                seen.len()
            ));
        }
    } else {
        warnings.push(
            "the results carry no instance numbers (--instance): merged as concurrent runs of one specification".into(),
        );
    }
    Ok(warnings)
}

fn add(
    into: &mut Option<Histogram<u64>>,
    encoded: Option<&str>,
    name: &str,
) -> Result<(), MergeError> {
    let Some(text) = encoded else {
        return Ok(());
    };
    let h = decode_histogram(text).map_err(|e| {
        err(format!(
            "{name}: a histogram cannot be decoded ({e}); is the file damaged?"
        ))
    })?;
    match into {
        Some(m) => m
            .add(&h)
            .map_err(|e| err(format!("{name}: histograms cannot be added: {e:?}")))?,
        None => *into = Some(h),
    }
    Ok(())
}

fn merge_op(parts: &[(&str, &OpResult)]) -> Result<OpResult, MergeError> {
    let (mut response, mut service, mut failed, mut scan_rows) = (None, None, None, None);
    let mut statuses = BTreeMap::new();
    let (mut count, mut rows, mut bytes) = (0, 0, 0);
    for (name, o) in parts {
        count += o.count;
        rows += o.rows;
        bytes += o.bytes;
        for (k, v) in &o.statuses {
            *statuses.entry(k.clone()).or_insert(0) += v;
        }
        add(&mut response, Some(&o.histograms.response), name)?;
        add(&mut service, Some(&o.histograms.service), name)?;
        add(&mut failed, o.histograms.failed.as_deref(), name)?;
        add(&mut scan_rows, o.histograms.scan_rows.as_deref(), name)?;
    }
    let response = response.expect("at least one part");
    let service = service.expect("at least one part");
    Ok(OpResult {
        count,
        statuses,
        response_time_ns: Summary::of(&response),
        service_time_ns: Summary::of(&service),
        failed_response_time_ns: failed.as_ref().map(Summary::of),
        rows,
        bytes,
        scan_rows: scan_rows.as_ref().map(Summary::of),
        response_cdf: cdf(&response),
        histograms: Histograms {
            response: encode_histogram(&response),
            service: encode_histogram(&service),
            failed: failed.as_ref().map(encode_histogram),
            scan_rows: scan_rows.as_ref().map(encode_histogram),
        },
    })
}

/// Operations of `r` inside [from, to] (absolute), from its time series;
/// an interval partly inside counts in proportion.
fn ops_within(r: &RunResult, start: SystemTime, from: SystemTime, to: SystemTime) -> f64 {
    let secs = |t: SystemTime| -> f64 {
        match t.duration_since(start) {
            Ok(d) => d.as_secs_f64(),
            Err(e) => -e.duration().as_secs_f64(),
        }
    };
    let (lo, hi) = (secs(from), secs(to));
    r.time_series
        .iter()
        .filter(|p| !p.warmup && p.length_s > 0.0)
        .map(|p| {
            let (a, b) = (p.t_s - p.length_s, p.t_s);
            let inside = (b.min(hi) - a.max(lo)).max(0.0);
            p.ops as f64 * inside / p.length_s
        })
        .sum()
}

/// The tags every instance carries with the same value.
fn common_tags(results: &[(String, RunResult)]) -> std::collections::BTreeMap<String, String> {
    let mut tags = results[0].1.tags.clone();
    tags.retain(|k, v| results.iter().all(|(_, r)| r.tags.get(k) == Some(v)));
    tags
}

/// The instances' schedule steps added up, step by step (each instance ran
/// the same schedule, so step i is the same time span in each); none when
/// they had different schedules.
fn merged_steps(s: &[&Schedule]) -> Vec<crate::run::StepRate> {
    let n = s[0].steps.len();
    if s.iter().any(|x| x.steps.len() != n) {
        return Vec::new();
    }
    (0..n)
        .map(|i| {
            let mut st = s[0].steps[i].clone();
            for x in &s[1..] {
                let o = &x.steps[i];
                st.from_ops_per_sec += o.from_ops_per_sec;
                st.to_ops_per_sec += o.to_ops_per_sec;
                st.intended_operations += o.intended_operations;
                st.operations += o.operations;
                st.achieved_ops_per_sec += o.achieved_ops_per_sec;
            }
            st
        })
        .collect()
}

/// Merges the results of the instances of one run; `results` pairs each with
/// its file name for messages. `force` merges runs of different
/// configurations (with a warning); the same run twice is always refused.
pub fn merge(results: Vec<(String, RunResult)>, force: bool) -> Result<RunResult, MergeError> {
    if results.len() < 2 {
        return Err(err("merge needs at least two results"));
    }
    let mut warnings = check_related(&results, force)?;
    let starts: Vec<SystemTime> = results
        .iter()
        .map(|(n, r)| start_of(r, n))
        .collect::<Result<_, _>>()?;
    let ends: Vec<SystemTime> = starts
        .iter()
        .zip(&results)
        .map(|(s, (_, r))| *s + Duration::from_secs_f64(r.elapsed_s.max(0.0)))
        .collect();
    let from = *starts.iter().max().expect("two or more");
    let to = *ends.iter().min().expect("two or more");
    let window = to
        .duration_since(from)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0);
    if window <= 0.0 {
        return Err(err(
            "the runs never measured at the same time, so their throughputs cannot be added: start the instances together (--start-at) and merge the results of one run",
        ));
    }
    let earliest = *starts.iter().min().expect("two or more");
    let latest = *ends.iter().max().expect("two or more");
    let in_window: f64 = results
        .iter()
        .zip(&starts)
        .map(|((_, r), s)| ops_within(r, *s, from, to))
        .sum();

    let mut names: Vec<&String> = results
        .iter()
        .flat_map(|(_, r)| r.operations.keys())
        .collect();
    names.sort();
    names.dedup();
    let mut operations = BTreeMap::new();
    for op in names {
        let parts: Vec<(&str, &OpResult)> = results
            .iter()
            .filter_map(|(n, r)| r.operations.get(op).map(|o| (n.as_str(), o)))
            .collect();
        operations.insert(op.clone(), merge_op(&parts)?);
    }

    let sum = |f: &dyn Fn(&RunResult) -> u64| -> u64 { results.iter().map(|(_, r)| f(r)).sum() };
    let total_ops = sum(&|r| r.totals.operations);
    let cpu: f64 = results.iter().map(|(_, r)| r.client.cpu_seconds).sum();

    // time series on one grid: intervals keyed by their end, from the earliest start
    let len = results[0]
        .1
        .time_series
        .first()
        .map_or(1.0, |p| p.length_s)
        .max(1e-3);
    // warm-up points apart, so that the measured points add up to the totals
    // even where one instance still warmed up while another measured
    let mut grid: BTreeMap<(i64, bool), IntervalPoint> = BTreeMap::new();
    for ((_, r), s) in results.iter().zip(&starts) {
        let offset = s
            .duration_since(earliest)
            .map(|d| d.as_secs_f64())
            .unwrap_or(0.0);
        for p in &r.time_series {
            let key = ((p.t_s + offset) / len).round() as i64;
            let e = grid
                .entry((key, !p.warmup))
                .or_insert_with(|| IntervalPoint {
                    index: key,
                    t_s: key as f64 * len,
                    length_s: len,
                    warmup: p.warmup,
                    ops: 0,
                    errors: 0,
                    not_found: 0,
                    duplicate_key: 0,
                    ops_per_sec: 0.0,
                    late: 0,
                    client_cpu_cores: 0.0,
                    intended_ops_per_sec: None,
                    per_op: Vec::new(),
                });
            e.ops += p.ops;
            e.errors += p.errors;
            e.not_found += p.not_found;
            e.duplicate_key += p.duplicate_key;
            e.late += p.late;
            e.client_cpu_cores += p.client_cpu_cores;
            if let Some(i) = p.intended_ops_per_sec {
                *e.intended_ops_per_sec.get_or_insert(0.0) += i;
            }
            e.ops_per_sec = e.ops as f64 / len;
            for o in &p.per_op {
                match e.per_op.iter_mut().find(|x| x.op == o.op) {
                    Some(x) => {
                        let n = (x.count + o.count).max(1) as f64;
                        x.mean_ns = (x.mean_ns * x.count as f64 + o.mean_ns * o.count as f64) / n;
                        x.count += o.count;
                        x.errors += o.errors;
                        x.not_found += o.not_found;
                        x.duplicate_key += o.duplicate_key;
                        // per-interval percentiles cannot be merged exactly:
                        // the highest instance's (exact ones are in `operations`)
                        x.p50_ns = x.p50_ns.max(o.p50_ns);
                        x.p99_ns = x.p99_ns.max(o.p99_ns);
                        x.max_ns = x.max_ns.max(o.max_ns);
                    }
                    None => e.per_op.push(o.clone()),
                }
            }
        }
    }

    let mut samples: BTreeMap<(String, String, String), u64> = BTreeMap::new();
    for (_, r) in &results {
        for s in &r.error_samples {
            *samples
                .entry((s.op.clone(), s.status.clone(), s.message.clone()))
                .or_insert(0) += s.count;
        }
        for w in &r.warnings {
            if !warnings.contains(w) {
                warnings.push(w.clone());
            }
        }
    }
    let schedule = if results.iter().all(|(_, r)| r.schedule.is_some()) {
        let s: Vec<&Schedule> = results
            .iter()
            .filter_map(|(_, r)| r.schedule.as_ref())
            .collect();
        let late: u64 = s.iter().map(|x| x.late_operations).sum();
        let worst = s
            .iter()
            .max_by(|a, b| a.start_lag_ns.p99.cmp(&b.start_lag_ns.p99))
            .expect("all have one");
        Some(Schedule {
            late_operations: late,
            late_fraction: late as f64 / total_ops.max(1) as f64,
            start_lag_ns: worst.start_lag_ns,
            final_lag_ns: s.iter().map(|x| x.final_lag_ns).max().unwrap_or(0),
            unstarted_operations: s.iter().map(|x| x.unstarted_operations).sum(),
            achieved_fraction_of_target: s
                .iter()
                .map(|x| x.achieved_fraction_of_target)
                .sum::<f64>()
                / s.len() as f64,
            rate_schedule: s[0].rate_schedule.clone(),
            steps: merged_steps(&s),
        })
    } else {
        None
    };

    let (_, first) = &results[0];
    let files: Vec<String> = results.iter().map(|(n, _)| n.clone()).collect();
    let mut hosts: Vec<String> = results
        .iter()
        .map(|(_, r)| r.host.hostname.clone())
        .collect();
    hosts.dedup();
    Ok(RunResult {
        schema_version: first.schema_version,
        tool: first.tool.clone(),
        command_line: first.command_line.clone(),
        phase: first.phase,
        workload: first.workload.clone(),
        seed: first.seed,
        instance: Instance {
            index: 0,
            count: results.len() as u64,
        },
        properties: first.properties.clone(),
        explicit_properties: first.explicit_properties.clone(),
        semantics: first.semantics.clone(),
        binding: BindingInfo {
            compression_ratio: None,
            cleared: None,
            ..first.binding.clone()
        },
        runner: RunnerInfo {
            threads: results.iter().map(|(_, r)| r.runner.threads).sum(),
            ..first.runner.clone()
        },
        host: first.host.clone(),
        started_at: rfc3339(earliest),
        ended_at: rfc3339(latest),
        elapsed_s: window,
        complete: results.iter().all(|(_, r)| r.complete),
        interrupted: results.iter().any(|(_, r)| r.interrupted),
        incomplete_reason: results.iter().find_map(|(name, r)| {
            r.incomplete_reason
                .as_ref()
                .map(|why| format!("instance {name}: {why}"))
        }),
        totals: Totals {
            operations: total_ops,
            errors: sum(&|r| r.totals.errors),
            ops_per_sec: in_window / window,
            warmup_operations: sum(&|r| r.totals.warmup_operations),
            retries: sum(&|r| r.totals.retries),
        },
        operations,
        schedule,
        client: ClientInfo {
            cpu_seconds: cpu,
            cpu_cores_used: results.iter().map(|(_, r)| r.client.cpu_cores_used).sum(),
            cores_available: results.iter().map(|(_, r)| r.client.cores_available).sum(),
            cpu_ns_per_op: cpu * 1e9 / total_ops.max(1) as f64,
            peak_rss_bytes: results
                .iter()
                .filter_map(|(_, r)| r.client.peak_rss_bytes)
                .max(),
            floor: None,
            histogram: None,
            limited: None,
        },
        time_series: grid.into_values().collect(),
        warnings,
        error_samples: samples
            .into_iter()
            .map(|((op, status, message), count)| ErrorSample {
                op,
                status,
                message,
                count,
            })
            .collect(),
        memory_limit: None,
        server_memory: Vec::new(),
        observation: None,
        // each instance keeps its own: verify takes the instance results
        inserts: None,
        verification: None,
        tags: common_tags(&results),
        faults: Vec::new(),
        trace: None,
        replayed: None,
        convergence: None,
        merged: Some(Merged {
            files,
            hosts,
            window_s: window,
        }),
    })
}
