//! `compare` of two TPC-C runs: what differs in their configurations, the
//! server per transaction side by side, then tpmC (tested on the
//! per-interval samples) and each transaction's response times: the step
//! of a tuning diary (docs/tuning-diary.md).
use super::{header, row, what_differs, TESTED};
use std::fmt::Write as _;
use yardstick_core::tpcc::result::TpccResult;

/// Loud warnings: what makes the two runs measure different things.
fn differences(a: &TpccResult, b: &TpccResult) -> Vec<String> {
    let mut w = Vec::new();
    let (ca, cb) = (&a.config, &b.config);
    if ca.warehouses != cb.warehouses {
        w.push(format!(
            "warehouses differ: {} vs {} (tpmC grows with them)",
            ca.warehouses, cb.warehouses
        ));
    }
    if ca.terminals != cb.terminals || ca.spec_timing != cb.spec_timing {
        w.push(format!(
            "different terminals: {} vs {}, spec timing {} vs {}",
            ca.terminals, cb.terminals, ca.spec_timing, cb.spec_timing
        ));
    }
    if a.database.scheme != b.database.scheme || a.database.isolation != b.database.isolation {
        w.push(format!(
            "different databases: {} at {} vs {} at {}",
            a.database.scheme, a.database.isolation, b.database.scheme, b.database.isolation
        ));
    }
    if a.tool.version != b.tool.version {
        w.push(format!(
            "made by different yardstick versions: {} vs {}",
            a.tool.version, b.tool.version
        ));
    }
    for (name, r) in [("A", a), ("B", b)] {
        if !r.complete {
            w.push(format!(
                "{name} is incomplete (interrupted or stopped early)"
            ));
        }
        let errors: u64 = r.transactions.values().map(|t| t.errors).sum();
        if errors > 0 {
            w.push(format!("{name} had {errors} failed transactions"));
        }
        let failed: Vec<String> = r
            .checks
            .iter()
            .filter(|c| !c.pass)
            .map(|c| c.condition.to_string())
            .collect();
        if !failed.is_empty() {
            w.push(format!(
                "{name} failed consistency conditions {}",
                failed.join(", ")
            ));
        }
    }
    w
}

/// The measured intervals' tpmC (warm-up left out).
fn tpmc_samples(r: &TpccResult) -> Vec<f64> {
    r.time_series
        .iter()
        .filter(|p| !p.warmup)
        .map(|p| p.tpmc)
        .collect()
}

fn latency(ns: f64) -> String {
    if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.1} µs", ns / 1e3)
    }
}

/// The comparison as text.
pub(crate) fn render(a: &TpccResult, b: &TpccResult) -> String {
    let mut out = String::new();
    for w in differences(a, b) {
        let _ = writeln!(out, "WARNING: {w}");
    }
    what_differs(&mut out, &a.into(), &b.into(), "txn");
    header(&mut out, "transaction");
    let count = |v: f64| format!("{v:.0}");
    row(
        &mut out,
        ("ALL", "tpmC"),
        (a.tpmc, b.tpmc),
        count,
        Some((&tpmc_samples(a), &tpmc_samples(b))),
    );
    row(
        &mut out,
        ("ALL", "tpm total"),
        (a.tpm_total, b.tpm_total),
        count,
        None,
    );
    for (kind, x) in &a.transactions {
        let Some(y) = b.transactions.get(kind) else {
            continue;
        };
        let (rx, ry) = (&x.response_time_ns, &y.response_time_ns);
        row(
            &mut out,
            (kind, "mean latency"),
            (rx.mean, ry.mean),
            latency,
            None,
        );
        row(
            &mut out,
            (kind, "p99 latency"),
            (rx.p99 as f64, ry.p99 as f64),
            latency,
            None,
        );
    }
    let _ = writeln!(
        out,
        "\n{TESTED} tpmC is tested on its per-interval values; the transactions' latencies are whole-run figures from their histograms."
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result() -> TpccResult {
        serde_json::from_str(include_str!("../../../report/src/testdata/tpcc-run.json")).unwrap()
    }

    #[test]
    fn a_tuning_step_shows_what_changed_and_whether_tpmc_moved() {
        let (a, mut b) = (result(), result());
        b.tpmc = a.tpmc * 2.0;
        for p in b.time_series.iter_mut() {
            p.tpmc *= 2.0;
        }
        b.config.terminals += 4;
        let t = render(&a, &b);
        assert!(t.contains("WARNING: different terminals"), "{t}");
        assert!(t.contains("client terminals"), "{t}");
        let tpmc = t
            .lines()
            .find(|l| l.starts_with("ALL") && l.contains("tpmC"))
            .unwrap();
        assert!(
            tpmc.contains("+100.0%") && tpmc.contains("significant"),
            "{tpmc}"
        );
        let new_order = t
            .lines()
            .find(|l| l.starts_with("NEW-ORDER") && l.contains("p99 latency"))
            .unwrap_or_else(|| panic!("{t}"));
        assert!(new_order.contains("whole run only"), "{new_order}");
        assert!(
            t.contains("per txn: the server's and the host's measured increase"),
            "{t}"
        );
    }

    #[test]
    fn like_runs_have_no_warnings() {
        let t = render(&result(), &result());
        assert!(!t.contains("WARNING"), "{t}");
        assert!(!t.contains("what differs"), "{t}");
    }
}
