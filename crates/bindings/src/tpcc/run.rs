//! TPC-C's terminals as the core runner's [`Work`]: each slot is a terminal
//! with its own connection and home warehouse (terminal t serves warehouse
//! t mod W + 1 and, for Stock-Level, district (t / W) mod 10 + 1), drawing
//! transactions from the standard mix. The runner gives them what YCSB runs
//! get: pacing (`--target`), warm-up, the status line, per-interval
//! histograms, signal handling and the error budget. A transaction is timed
//! from its first attempt to its end, retries included; keying and think
//! times (`--spec-timing`) lie outside the measurement.
use super::trips::{Counted, Sending};
use super::txn::{self, Ended};
use super::{Conn, DbError, ErrorKind, Isolation};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use yardstick_core::binding::{BindingError, Outcome, Status};
use yardstick_core::result::ErrorSample;
use yardstick_core::rng::{derive_seed, Rng};
use yardstick_core::run::{Origin, Recording, RunOutput, SlotId, Stepped, Work};
use yardstick_core::stats::{encode_histogram, Summary};
use yardstick_core::tpcc::result::{RoundTrips, TpccPoint, TxnResult};
use yardstick_core::tpcc::{Constants, Deck, Random, Txn, DISTRICTS};

/// The terminals of one `tpcc run`.
#[derive(Debug, Clone)]
pub struct Terminals {
    pub url: String,
    /// `None`: the binding's default level.
    pub isolation: Option<Isolation>,
    pub warehouses: u32,
    /// Keying and think times of clause 5.2.5.7.
    pub spec_timing: bool,
    /// Retries of a transaction that hit a serialization failure, deadlock or busy database.
    pub retry_limit: u32,
    pub seed: u64,
    pub constants: Constants,
    /// A transaction's time limit ([`super::Opened::timeout`]).
    pub timeout: Option<Duration>,
    /// How a transaction's statements are sent.
    pub sending: Sending,
    /// Per transaction kind: (transactions ended, round trips they took).
    pub trips: std::sync::Arc<[(AtomicU64, AtomicU64); 5]>,
}

/// One terminal: its connection, home warehouse and district, and generators.
pub struct Terminal {
    /// `None` after a transaction was abandoned at its timeout: the next one
    /// connects anew.
    conn: Option<Counted>,
    index: u64,
    w_id: u32,
    d_id: u32,
    input: Random,
    deck_rng: Rng,
    deck: Deck,
}

impl Terminals {
    async fn connect(&self, t: u64) -> Result<Counted, DbError> {
        let opened = super::open(&self.url, false, self.isolation)
            .await
            .map_err(|e| DbError::other(format!("terminal {t} cannot connect: {e}")))?;
        Ok(Counted::new(opened.conn, self.sending))
    }

    /// Round trips per transaction, by kind (those that ended) and overall.
    pub fn round_trips(&self) -> RoundTrips {
        let mut by = BTreeMap::new();
        let (mut all, mut trips) = (0, 0);
        for (t, (n, r)) in Txn::ALL.iter().zip(self.trips.iter()) {
            let (n, r) = (n.load(Ordering::Relaxed), r.load(Ordering::Relaxed));
            if n > 0 {
                by.insert(t.op().name().to_string(), r as f64 / n as f64);
            }
            all += n;
            trips += r;
        }
        RoundTrips {
            sending: self.sending.name().into(),
            per_transaction: trips as f64 / all.max(1) as f64,
            by_transaction: by,
        }
    }

    /// A transaction within the time limit; past it the connection, in an
    /// unknown state, is dropped.
    async fn bounded(&self, t: &mut Terminal, kind: Txn) -> Result<Ended, DbError> {
        let Some(limit) = self.timeout else {
            return self.transaction(t, kind).await;
        };
        match tokio::time::timeout(limit, self.transaction(t, kind)).await {
            Ok(r) => r,
            Err(_) => {
                t.conn = None;
                Err(DbError {
                    kind: ErrorKind::Timeout,
                    message: format!("no answer within {limit:?} (the URL's timeout)"),
                })
            }
        }
    }

    async fn transaction(&self, t: &mut Terminal, kind: Txn) -> Result<Ended, DbError> {
        let c = match t.conn.as_mut() {
            Some(c) => c,
            None => t.conn.insert(self.connect(t.index).await?),
        };
        let (w, r) = (t.w_id, &mut t.input);
        let c: &mut dyn Conn = c;
        match kind {
            Txn::NewOrder => txn::new_order(c, &r.new_order(w, self.warehouses)).await,
            Txn::Payment => txn::payment(c, &r.payment(w, self.warehouses)).await,
            Txn::OrderStatus => txn::order_status(c, &r.order_status(w)).await,
            Txn::Delivery => txn::delivery(c, &r.delivery(w)).await.map(|(e, _)| e),
            Txn::StockLevel => txn::stock_level(c, &r.stock_level(w, t.d_id))
                .await
                .map(|(e, _)| e),
        }
    }
}

impl Work for Terminals {
    type Slot = Terminal;

    async fn open(&self, slot: SlotId) -> Result<Terminal, BindingError> {
        let t = slot.index;
        let conn = self
            .connect(t)
            .await
            .map_err(|e| BindingError::Unavailable(e.message))?;
        let w = u64::from(self.warehouses);
        Ok(Terminal {
            conn: Some(conn),
            index: t,
            w_id: (t % w) as u32 + 1,
            d_id: ((t / w) % u64::from(DISTRICTS)) as u32 + 1,
            input: Random::new(derive_seed(self.seed, &[0x7e, t]), self.constants),
            deck_rng: Rng::new(derive_seed(self.seed, &[0x7d, t])),
            deck: Deck::new(),
        })
    }

    async fn step(
        &self,
        t: &mut Terminal,
        intended: Option<Instant>,
        rec: &Recording<'_>,
    ) -> Option<Stepped> {
        let kind = t.deck.draw(&mut t.deck_rng);
        let (keying, think) = kind.keying_and_think_s();
        if self.spec_timing && !rec.pause(Duration::from_secs_f64(keying)).await {
            return None;
        }
        let first = rec.stamp();
        let trips_before = t.conn.as_ref().map_or(0, |c| c.trips);
        let mut retries = 0u32;
        let (outcome, start, end) = loop {
            let (res, start, end) = rec.timed(self.bounded(t, kind)).await;
            match res {
                Err(e) if e.kind == ErrorKind::Retry && retries < self.retry_limit => {
                    retries += 1;
                    rec.retry(kind.op());
                    let backoff = Duration::from_millis(1 << retries.min(6));
                    if !rec.pause(backoff).await {
                        break (Err(e), start, end);
                    }
                }
                other => break (other, start, end),
            }
        };
        let out = match outcome {
            Ok(Ended::Committed) => Outcome::ok(0, 0),
            Ok(Ended::RolledBack) => Outcome::of(Status::RolledBack),
            Err(e) if e.kind == ErrorKind::Retry => Outcome::failed(Status::Conflict, e.message),
            Err(e) if e.kind == ErrorKind::Timeout => Outcome::failed(Status::Timeout, e.message),
            Err(e) => Outcome::failed(Status::Error, e.message),
        };
        let ended = rec.record(kind.op(), &out, Origin::of(intended, first), start, end);
        // a connection dropped at its timeout took its count along
        if let (Some(c), Some(slot)) = (&t.conn, Txn::ALL.iter().position(|k| *k == kind)) {
            let (n, r) = &self.trips[slot];
            n.fetch_add(1, Ordering::Relaxed);
            r.fetch_add(c.trips.saturating_sub(trips_before), Ordering::Relaxed);
        }
        if self.spec_timing {
            // think time: negative exponential with the transaction's mean, capped at 10x
            let u = t.deck_rng.next_f64().max(1e-12);
            rec.pause(Duration::from_secs_f64((-u.ln() * think).min(10.0 * think)))
                .await;
        }
        Some(Stepped { end: ended, ops: 1 })
    }
}

/// What TPC-C's result takes from a run of the terminals.
pub struct Measured {
    pub transactions: BTreeMap<String, TxnResult>,
    pub series: Vec<TpccPoint>,
    pub tpmc: f64,
    pub tpm_total: f64,
    /// Transactions that failed (after their retries).
    pub errors: u64,
    pub error_samples: Vec<ErrorSample>,
}

/// Per-transaction figures, tpmC and the time series of a run's output.
pub fn measured(out: &RunOutput) -> Measured {
    let ops = |t: Txn| out.total.ops[t.op().index()].as_deref();
    let completed: u64 = Txn::ALL
        .iter()
        .filter_map(|t| ops(*t))
        .map(|o| o.completed())
        .sum();
    let mut transactions = BTreeMap::new();
    for t in Txn::ALL {
        let r = match ops(t) {
            Some(o) => TxnResult {
                count: o.completed(),
                committed: o.statuses[Status::Ok.index()],
                rolled_back: o.statuses[Status::RolledBack.index()],
                retries: o.retries,
                errors: o.errors(),
                share: o.completed() as f64 / completed.max(1) as f64,
                response_time_ns: Summary::of(&o.response),
                histogram: encode_histogram(&o.response),
            },
            None => TxnResult {
                count: 0,
                committed: 0,
                rolled_back: 0,
                retries: 0,
                errors: 0,
                share: 0.0,
                response_time_ns: Summary::of(&yardstick_core::stats::new_histogram()),
                histogram: encode_histogram(&yardstick_core::stats::new_histogram()),
            },
        };
        transactions.insert(t.name().to_string(), r);
    }
    let per_minute = |n: u64, secs: f64| {
        if secs > 0.0 {
            n as f64 * 60.0 / secs
        } else {
            0.0
        }
    };
    // the drain after the end is left out of the chart's rates (its
    // transactions are in the totals)
    let series = out
        .series
        .iter()
        .filter(|p| p.warmup)
        .chain(yardstick_core::run::rate_points(&out.series))
        .map(|p| {
            let done = |o: &yardstick_core::run::PointOp| o.count - o.errors;
            let new_orders = p
                .per_op
                .iter()
                .filter(|o| o.op == Txn::NewOrder.op())
                .map(done)
                .sum();
            TpccPoint {
                t_s: p.t_s,
                warmup: p.warmup,
                tpmc: per_minute(new_orders, p.length_s),
                tpm_total: per_minute(p.per_op.iter().map(done).sum(), p.length_s),
                errors: p.errors,
            }
        })
        .collect();
    let secs = out.measured_elapsed.as_secs_f64();
    Measured {
        tpmc: per_minute(transactions[Txn::NewOrder.name()].count, secs),
        tpm_total: per_minute(completed, secs),
        errors: transactions.values().map(|t| t.errors).sum(),
        transactions,
        series,
        error_samples: out
            .total
            .error_samples
            .iter()
            .map(|(op, status, message, count)| ErrorSample {
                op: op.name().into(),
                status: status.name().into(),
                message: message.clone(),
                count: *count,
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use yardstick_core::op::OpKind;
    use yardstick_core::run::{IntervalPoint, PointOp};
    use yardstick_core::stats::Recorder;

    fn point(t_s: f64, length_s: f64, per_op: Vec<(OpKind, u64, u64)>) -> IntervalPoint {
        let ops = per_op.iter().map(|o| o.1).sum();
        IntervalPoint {
            index: 0,
            t_s,
            length_s,
            warmup: false,
            ops,
            errors: per_op.iter().map(|o| o.2).sum(),
            not_found: 0,
            duplicate_key: 0,
            ops_per_sec: 0.0,
            late: 0,
            client_cpu_cores: 0.0,
            intended_ops_per_sec: None,
            per_op: per_op
                .into_iter()
                .map(|(op, count, errors)| PointOp {
                    op,
                    count,
                    errors,
                    not_found: 0,
                    duplicate_key: 0,
                    p50_ns: 1,
                    p99_ns: 1,
                    max_ns: 1,
                    mean_ns: 1.0,
                })
                .collect(),
        }
    }

    #[test]
    fn transactions_tpmc_and_the_series_come_from_the_runners_recorder() {
        let mut rec = Recorder::new();
        for _ in 0..97 {
            rec.record(OpKind::NewOrder, Status::Ok, 2_000_000, 2_000_000, 0, 0);
        }
        rec.record(
            OpKind::NewOrder,
            Status::RolledBack,
            1_000_000,
            1_000_000,
            0,
            0,
        );
        rec.record(
            OpKind::NewOrder,
            Status::Conflict,
            9_000_000,
            1_000_000,
            0,
            0,
        );
        rec.record_retry(OpKind::NewOrder);
        rec.record_retry(OpKind::NewOrder);
        rec.record_error_message(OpKind::NewOrder, Status::Conflict, "deadlock");
        for _ in 0..101 {
            rec.record(OpKind::Payment, Status::Ok, 1_000_000, 1_000_000, 0, 0);
        }
        let out = RunOutput {
            faults: Vec::new(),
            total: rec,
            series: vec![
                point(
                    1.0,
                    1.0,
                    vec![(OpKind::NewOrder, 60, 1), (OpKind::Payment, 50, 0)],
                ),
                // the drain: half an interval
                point(
                    1.5,
                    0.5,
                    vec![(OpKind::NewOrder, 39, 0), (OpKind::Payment, 51, 0)],
                ),
            ],
            started_at: std::time::SystemTime::now(),
            ended_at: std::time::SystemTime::now(),
            measured_elapsed: Duration::from_secs(30),
            warmup_ops: 0,
            interrupted: false,
            abandoned: 0,
            stop_cause: None,
            unstarted: 0,
            final_lag_ns: 0,
            cpu: Duration::ZERO,
            late_reports: 0,
            stopped_by_errors: false,
            convergence: None,
            floor: None,
            peak_rss_bytes: None,
            worker_busy: Vec::new(),
            waited: Duration::ZERO,
        };
        let m = measured(&out);
        let no = &m.transactions["NEW-ORDER"];
        assert_eq!(
            (
                no.count,
                no.committed,
                no.rolled_back,
                no.errors,
                no.retries
            ),
            (98, 97, 1, 1, 2),
            "rollbacks complete, a conflict after its retries does not"
        );
        assert!((no.share - 98.0 / 199.0).abs() < 1e-12);
        // rolled-back New-Orders count towards tpmC, as clause 5.4.2 says
        assert!((m.tpmc - 98.0 * 2.0).abs() < 1e-9);
        assert!((m.tpm_total - 199.0 * 2.0).abs() < 1e-9);
        assert_eq!(m.errors, 1);
        assert_eq!(m.transactions["DELIVERY"].count, 0);
        assert_eq!(m.transactions.len(), 5);
        // the short drain after the end is left out of the rates over time
        // (no cliff), its transactions are in the totals above
        assert_eq!(m.series.len(), 1);
        assert_eq!(m.series[0].tpmc, 59.0 * 60.0);
        assert_eq!(m.series[0].errors, 1);
        assert_eq!(m.error_samples.len(), 1);
        assert_eq!(
            (
                m.error_samples[0].op.as_str(),
                m.error_samples[0].status.as_str()
            ),
            ("NEW-ORDER", "conflict")
        );
    }
}
