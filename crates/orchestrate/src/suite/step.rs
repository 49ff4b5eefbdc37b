//! One step of a suite: its child `yardstick load|run` (or SLO search), the
//! result it leaves, and how the index records it.
use super::*;

pub(super) struct StepCtx<'a> {
    pub(super) plan: &'a SuitePlan,
    pub(super) env: &'a Env<'a>,
    pub(super) def: &'a StepDef,
    pub(super) db: &'a str,
    pub(super) records: u64,
    /// Run phases: the records the chain holds now (loaded plus inserted).
    pub(super) records_now: std::cell::Cell<u64>,
    pub(super) id: String,
}

pub(super) struct Outcome {
    pub(super) code: i32,
    pub(super) file: Option<String>,
    pub(super) result: Option<RunResult>,
    pub(super) slo: Option<SloOutcome>,
}

impl StepCtx<'_> {
    /// The phase's command line (open loop at `target` when given),
    /// writing its result to `file`.
    pub(super) fn args(&self, target: Option<f64>, file: &std::path::Path) -> Vec<String> {
        let d = self.def;
        let mut args: Vec<String> = vec![
            if d.load { "load" } else { "run" }.into(),
            "--db".into(),
            self.db.to_string(),
            "-P".into(),
            d.workload.into(),
        ];
        let records = if d.load {
            self.records
        } else {
            self.records_now.get()
        };
        let mut props: Vec<String> = vec![format!("recordcount={records}")];
        props.extend(self.plan.props.iter().cloned());
        props.extend(d.props.iter().map(|(k, v)| format!("{k}={v}")));
        for p in props {
            args.extend(["-p".into(), p]);
        }
        args.extend([
            "--seed".into(),
            self.plan.spec.seed.to_string(),
            "-q".into(),
        ]);
        args.extend([
            "--concurrency".into(),
            self.plan.spec.concurrency.to_string(),
        ]);
        if d.load {
            args.extend([
                "--threads".into(),
                self.plan.load_threads.to_string(),
                "--clear".into(),
            ]);
            if let Some(b) = d.batch {
                args.extend(["--batch".into(), b.to_string()]);
            }
        } else {
            args.extend([
                "--threads".into(),
                self.plan.spec.threads.to_string(),
                "--duration".into(),
                format!("{}ms", self.plan.spec.duration.as_millis()),
                "--warmup".into(),
                format!("{}ms", self.plan.spec.warmup.as_millis()),
            ]);
            if let Some(rate) = target {
                args.extend(["--target".into(), format!("{rate:.3}")]);
            }
        }
        args.extend(["--out".into(), file.display().to_string()]);
        args
    }

    /// Runs the phase once (open loop at `target` when given).
    pub(super) fn once(&self, target: Option<(f64, usize)>) -> Result<Outcome, Error> {
        let name = match target {
            Some((_, k)) => format!("{}-slo{k:02}.json", self.id),
            None => format!("{}.json", self.id),
        };
        let file = self.plan.spec.out_dir.join(&name);
        let _ = std::fs::remove_file(&file);
        let args = self.args(target.map(|(rate, _)| rate), &file);
        let code = self.env.phase(&args)?;
        let result = if file.exists() {
            yardstick_core::result::read::read(&file).ok()
        } else {
            None
        };
        if let Some(n) = result.as_ref().and_then(|r| r.runner.next_insert_keynum) {
            self.records_now.set(self.records_now.get().max(n));
        }
        Ok(Outcome {
            code,
            file: result.as_ref().map(|_| name),
            result,
            slo: None,
        })
    }

    /// The SLO search of one run phase.
    pub(super) fn slo_search(&self, slo: &Slo) -> Result<Outcome, Error> {
        let probe = self.once(None)?;
        let Some(max) = probe.result.as_ref().filter(|_| probe.code == 0) else {
            return Ok(probe);
        };
        let max_rate = max.totals.ops_per_sec;
        let max_value = slo.value_ns(max);
        (self.env.say)(&format!(
            "  closed loop: {max_rate:.0} ops/s, p{} {}",
            slo.percentile,
            max_value.map_or("-".into(), crate::slo::fmt_ns)
        ));
        let mut search = Search::new(max_rate, self.plan.spec.slo_bisections);
        let mut code = 0;
        while let Some(rate) = search.next() {
            if self.env.control.stop.load(Ordering::SeqCst) {
                code = self.env.control.exit_code();
                break;
            }
            let o = self.once(Some((rate, search.points.len() + 1)))?;
            let Some(r) = &o.result else {
                code = if o.code == 0 { 1 } else { o.code };
                break;
            };
            if crate::interrupted(o.code) {
                code = o.code;
                break;
            }
            let mut p = slo.judge(r, rate);
            p.result = o.file;
            (self.env.say)(&format!(
                "  target {rate:.0} ops/s: achieved {:.0}, p{} {} · {}",
                p.achieved,
                slo.percentile,
                p.value_ns.map_or("-".into(), crate::slo::fmt_ns),
                if p.pass {
                    "meets the bound".to_string()
                } else {
                    p.why.clone()
                }
            ));
            search.points.push(p);
        }
        let knee = search.knee().cloned();
        let message = match (&knee, search.best_unmet()) {
            (Some(k), _) => format!(
                "{:.0} ops/s with p{} {} (bound {})",
                k.achieved,
                slo.percentile,
                k.value_ns.map_or("-".into(), crate::slo::fmt_ns),
                crate::slo::fmt_ns(slo.bound_ns)
            ),
            (None, Some(b)) => format!(
                "the bound {} is never met: the best step was {:.0} ops/s with p{} {}",
                slo.text,
                b.achieved,
                slo.percentile,
                b.value_ns.map_or("-".into(), crate::slo::fmt_ns)
            ),
            (None, None) => format!("the bound {} could not be measured", slo.text),
        };
        (self.env.say)(&format!("  {message}"));
        let mut curve = search.points.clone();
        curve.sort_by(|a, b| a.target.total_cmp(&b.target));
        let knee_result = knee
            .as_ref()
            .and_then(|k| k.result.as_ref())
            .and_then(|f| yardstick_core::result::read::read(&self.plan.spec.out_dir.join(f)).ok());
        Ok(Outcome {
            code,
            file: knee
                .as_ref()
                .and_then(|k| k.result.clone())
                .or(probe.file.clone()),
            result: knee_result.or(probe.result.clone()),
            slo: Some(SloOutcome {
                bound: slo.clone(),
                max_ops_per_sec: max_rate,
                max_value_ns: max_value,
                probe_result: probe.file,
                status: if knee.is_some() {
                    SloStatus::Met
                } else {
                    SloStatus::Unmet
                },
                knee_ops_per_sec: knee.as_ref().map(|k| k.achieved),
                knee_value_ns: knee.as_ref().and_then(|k| k.value_ns),
                message,
                curve,
            }),
        })
    }
}
