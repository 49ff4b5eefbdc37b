//! The TPC-C driver: T terminals, each a thread with its own connection and a
//! home warehouse (terminal t serves warehouse t mod W + 1 and, for
//! Stock-Level, district (t / W) mod 10 + 1), drawing transactions from the
//! standard mix. Latency is measured from a transaction's first attempt to
//! its end, retries included; a sampler thread turns the terminals' counters
//! into a time series once per interval.
use super::txn::{self, Ended};
use super::{Conn, DbError, ErrorKind};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use yardstick_core::rng::{derive_seed, Rng};
use yardstick_core::stats::{encode_histogram, new_histogram, Summary};
use yardstick_core::tpcc::result::{TpccPoint, TxnResult};
use yardstick_core::tpcc::{Constants, Deck, Random, Txn, DISTRICTS};

#[derive(Debug, Clone)]
pub struct Plan {
    pub warehouses: u32,
    pub terminals: u32,
    pub duration: Duration,
    pub warmup: Duration,
    pub spec_timing: bool,
    pub retry_limit: u32,
    pub seed: u64,
    pub constants: Constants,
    pub interval: Duration,
}

#[derive(Default)]
struct TxnStats {
    hist: Option<hdrhistogram::Histogram<u64>>,
    committed: u64,
    rolled_back: u64,
    retries: u64,
    errors: u64,
}

#[derive(Default)]
struct TermStats {
    txns: [TxnStats; 5],
    /// Distinct error messages with counts.
    messages: Vec<(String, String, u64)>,
}

impl TermStats {
    fn completed(&self, t: Txn) -> u64 {
        let s = &self.txns[t.index()];
        s.committed + s.rolled_back
    }
}

/// What a run measured.
pub struct Measured {
    pub transactions: std::collections::BTreeMap<String, TxnResult>,
    pub series: Vec<TpccPoint>,
    pub elapsed: Duration,
    pub tpmc: f64,
    pub tpm_total: f64,
    pub interrupted: bool,
    pub cpu: Duration,
    pub error_samples: Vec<(String, String, u64)>,
    /// A terminal that could not connect, with the reason.
    pub failed: Option<String>,
}

/// Runs the terminals; `connect` opens a connection on the terminal's thread.
pub fn run<C, F>(plan: &Plan, connect: F, stop: &AtomicBool) -> Measured
where
    C: Conn,
    F: Fn() -> Result<C, DbError> + Sync,
{
    let stats: Vec<Arc<Mutex<TermStats>>> = (0..plan.terminals)
        .map(|_| Arc::new(Mutex::new(TermStats::default())))
        .collect();
    let start = Instant::now();
    let measure_from = start + plan.warmup;
    let end = measure_from + plan.duration;
    let done = AtomicBool::new(false);
    let failed: Mutex<Option<String>> = Mutex::new(None);
    let mut series = Vec::new();
    let mut interrupted = false;
    let mut cpu_at_measure = None;
    std::thread::scope(|scope| {
        for (t, st) in stats.iter().enumerate() {
            let (connect, done, failed) = (&connect, &done, &failed);
            scope.spawn(move || {
                let mut conn = match connect() {
                    Ok(c) => c,
                    Err(e) => {
                        let mut f = failed.lock().unwrap_or_else(|p| p.into_inner());
                        f.get_or_insert_with(|| format!("terminal {t} cannot connect: {e}"));
                        return;
                    }
                };
                terminal(plan, t as u32, &mut conn, st, measure_from, end, done);
            });
        }
        // the sampler
        let mut last = (0u64, 0u64, 0u64);
        let mut next = start + plan.interval;
        loop {
            let now = Instant::now();
            if now >= end
                || stop.load(Ordering::SeqCst)
                || failed.lock().map(|f| f.is_some()).unwrap_or(true)
            {
                interrupted = now < end;
                done.store(true, Ordering::SeqCst);
                break;
            }
            if cpu_at_measure.is_none() && now >= measure_from {
                cpu_at_measure = Some(yardstick_core::run::cpu::process_cpu_time());
            }
            std::thread::sleep(
                next.saturating_duration_since(now)
                    .min(Duration::from_millis(50)),
            );
            if Instant::now() < next {
                continue;
            }
            let (mut no, mut total, mut errors) = (0, 0, 0);
            for s in &stats {
                let s = s.lock().unwrap_or_else(|p| p.into_inner());
                no += s.completed(Txn::NewOrder);
                total += Txn::ALL.iter().map(|t| s.completed(*t)).sum::<u64>();
                errors += s.txns.iter().map(|x| x.errors).sum::<u64>();
            }
            let secs = plan.interval.as_secs_f64();
            let t_s = next.saturating_duration_since(measure_from).as_secs_f64()
                - measure_from.saturating_duration_since(next).as_secs_f64();
            series.push(TpccPoint {
                t_s,
                warmup: next <= measure_from,
                tpmc: (no - last.0) as f64 * 60.0 / secs,
                tpm_total: (total - last.1) as f64 * 60.0 / secs,
                errors: errors - last.2,
            });
            last = (no, total, errors);
            next += plan.interval;
        }
    });
    let ended = Instant::now().min(end);
    let elapsed = ended.saturating_duration_since(measure_from);
    let cpu = cpu_at_measure
        .map(|c| yardstick_core::run::cpu::process_cpu_time().saturating_sub(c))
        .unwrap_or_default();
    // merge the terminals
    let mut merged: Vec<TxnStats> = (0..5).map(|_| TxnStats::default()).collect();
    let mut messages: Vec<(String, String, u64)> = Vec::new();
    for s in &stats {
        let s = s.lock().unwrap_or_else(|p| p.into_inner());
        for (m, t) in merged.iter_mut().zip(s.txns.iter()) {
            m.committed += t.committed;
            m.rolled_back += t.rolled_back;
            m.retries += t.retries;
            m.errors += t.errors;
            if let Some(h) = &t.hist {
                let mh = m.hist.get_or_insert_with(new_histogram);
                let _ = mh.add(h);
            }
        }
        for (txn, msg, n) in &s.messages {
            match messages.iter_mut().find(|(a, b, _)| a == txn && b == msg) {
                Some(e) => e.2 += n,
                None => messages.push((txn.clone(), msg.clone(), *n)),
            }
        }
    }
    let minutes = elapsed.as_secs_f64() / 60.0;
    let total: u64 = merged.iter().map(|m| m.committed + m.rolled_back).sum();
    let mut transactions = std::collections::BTreeMap::new();
    for t in Txn::ALL {
        let m = &merged[t.index()];
        let h = m.hist.clone().unwrap_or_else(new_histogram);
        let count = m.committed + m.rolled_back;
        transactions.insert(
            t.name().to_string(),
            TxnResult {
                count,
                committed: m.committed,
                rolled_back: m.rolled_back,
                retries: m.retries,
                errors: m.errors,
                share: if total > 0 {
                    count as f64 / total as f64
                } else {
                    0.0
                },
                response_time_ns: Summary::of(&h),
                histogram: encode_histogram(&h),
            },
        );
    }
    let no = transactions["NEW-ORDER"].count;
    Measured {
        tpmc: if minutes > 0.0 {
            no as f64 / minutes
        } else {
            0.0
        },
        tpm_total: if minutes > 0.0 {
            total as f64 / minutes
        } else {
            0.0
        },
        transactions,
        series,
        elapsed,
        interrupted: interrupted || stop.load(Ordering::SeqCst),
        cpu,
        error_samples: messages,
        failed: failed.into_inner().unwrap_or_else(|p| p.into_inner()),
    }
}

/// Sleeps until `until` or the run ends; false when it ended.
fn pause(d: Duration, done: &AtomicBool) -> bool {
    let until = Instant::now() + d;
    while Instant::now() < until {
        if done.load(Ordering::Relaxed) {
            return false;
        }
        std::thread::sleep((until - Instant::now()).min(Duration::from_millis(100)));
    }
    true
}

fn terminal<C: Conn>(
    plan: &Plan,
    t: u32,
    conn: &mut C,
    stats: &Mutex<TermStats>,
    measure_from: Instant,
    end: Instant,
    done: &AtomicBool,
) {
    let w_id = t % plan.warehouses + 1;
    let d_id = (t / plan.warehouses) % DISTRICTS + 1;
    let mut r = Random::new(
        derive_seed(plan.seed, &[0x7e, u64::from(t)]),
        plan.constants,
    );
    let mut deck_rng = Rng::new(derive_seed(plan.seed, &[0x7d, u64::from(t)]));
    let mut deck = Deck::new();
    while !done.load(Ordering::Relaxed) && Instant::now() < end {
        let kind = deck.draw(&mut deck_rng);
        if plan.spec_timing {
            let (keying, _) = kind.keying_and_think_s();
            if !pause(Duration::from_secs_f64(keying), done) {
                break;
            }
        }
        let started = Instant::now();
        let mut retries = 0;
        let outcome = loop {
            let res = match kind {
                Txn::NewOrder => {
                    let input = r.new_order(w_id, plan.warehouses);
                    txn::new_order(conn, &input)
                }
                Txn::Payment => {
                    let input = r.payment(w_id, plan.warehouses);
                    txn::payment(conn, &input)
                }
                Txn::OrderStatus => {
                    let input = r.order_status(w_id);
                    txn::order_status(conn, &input)
                }
                Txn::Delivery => {
                    let input = r.delivery(w_id);
                    txn::delivery(conn, &input).map(|(e, _)| e)
                }
                Txn::StockLevel => {
                    let input = r.stock_level(w_id, d_id);
                    txn::stock_level(conn, &input).map(|(e, _)| e)
                }
            };
            match res {
                Err(e)
                    if e.kind == ErrorKind::Retry
                        && retries < plan.retry_limit
                        && !done.load(Ordering::Relaxed) =>
                {
                    retries += 1;
                    std::thread::sleep(Duration::from_millis(1 << retries.min(6)));
                }
                other => break other,
            }
        };
        let finished = Instant::now();
        if started >= measure_from && finished <= end {
            let mut s = stats.lock().unwrap_or_else(|p| p.into_inner());
            let x = &mut s.txns[kind.index()];
            x.retries += u64::from(retries);
            match &outcome {
                Ok(ended) => {
                    match ended {
                        Ended::Committed => x.committed += 1,
                        Ended::RolledBack => x.rolled_back += 1,
                    }
                    let ns = (finished - started).as_nanos().min(u128::from(u64::MAX)) as u64;
                    let _ = x.hist.get_or_insert_with(new_histogram).record(ns.max(1));
                }
                Err(e) => {
                    x.errors += 1;
                    let msg: String = e.message.chars().take(300).collect();
                    if let Some(m) = s
                        .messages
                        .iter_mut()
                        .find(|(a, b, _)| a == kind.name() && *b == msg)
                    {
                        m.2 += 1;
                    } else if s.messages.len() < 20 {
                        s.messages.push((kind.name().into(), msg, 1));
                    }
                }
            }
        }
        if plan.spec_timing {
            // think time: negative exponential with the transaction's mean, capped at 10x
            let (_, mean) = kind.keying_and_think_s();
            let u = deck_rng.next_f64().max(1e-12);
            if !pause(
                Duration::from_secs_f64((-u.ln() * mean).min(10.0 * mean)),
                done,
            ) {
                break;
            }
        }
    }
}
