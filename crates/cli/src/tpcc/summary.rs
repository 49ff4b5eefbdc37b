//! The text summary of a TPC-C result and its consistency checks.
use yardstick_core::tpcc::result::{Check, TpccResult};

/// One line per consistency condition.
pub(super) fn checks_text(checks: &[Check]) -> String {
    let mut s = String::new();
    for c in checks {
        s.push_str(&format!(
            "  condition {} {}: {} ({})\n",
            c.condition,
            if c.pass { "PASS" } else { "FAIL" },
            c.name,
            c.detail
        ));
    }
    s
}

/// The text summary of a TPC-C result.
pub(crate) fn summary(r: &TpccResult) -> String {
    use yardstick_report::fmt::latency;
    let mut s = format!(
        "yardstick tpcc · {} {} · {} warehouses · {} terminals · {:.1} s · {} · isolation: {}\n\n  tpmC {:.0} · tpmTotal {:.0} · client CPU {:.2} cores ({:.0} µs per transaction)\n\n",
        r.database.engine.name,
        r.database.engine.version,
        r.config.warehouses,
        r.config.terminals,
        r.elapsed_s,
        if r.config.spec_timing {
            "keying and think times"
        } else {
            "no think time"
        },
        r.database.isolation,
        r.tpmc,
        r.tpm_total,
        r.client.cpu_cores_used,
        r.client.cpu_ns_per_op / 1e3
    );
    if let Some(t) = &r.round_trips {
        s.push_str(&format!(
            "  statements sent {}: {:.1} round trips per transaction\n\n",
            t.sending, t.per_transaction
        ));
    }
    s.push_str(&format!(
        "  {:<13} {:>9} {:>6} {:>9} {:>8} {:>7} {:>6} {:>9} {:>9} {:>9} {:>9} {:>9}\n",
        "transaction",
        "count",
        "share",
        "committed",
        "rollback",
        "retries",
        "errors",
        "mean",
        "p50",
        "p90",
        "p99",
        "max"
    ));
    for t in yardstick_core::tpcc::Txn::ALL {
        if let Some(x) = r.transactions.get(t.name()) {
            let l = &x.response_time_ns;
            s.push_str(&format!(
                "  {:<13} {:>9} {:>5.1}% {:>9} {:>8} {:>7} {:>6} {:>9} {:>9} {:>9} {:>9} {:>9}\n",
                t.name(),
                x.count,
                x.share * 100.0,
                x.committed,
                x.rolled_back,
                x.retries,
                x.errors,
                latency(l.mean),
                latency(l.p50 as f64),
                latency(l.p90 as f64),
                latency(l.p99 as f64),
                latency(l.max as f64)
            ));
        }
    }
    if !r.checks.is_empty() {
        s.push_str("\n  consistency:\n");
        s.push_str(&checks_text(&r.checks).replace("  condition", "    condition"));
    }
    for w in &r.warnings {
        s.push_str(&format!("\nwarning: {w}"));
    }
    if !r.warnings.is_empty() {
        s.push('\n');
    }
    s
}
