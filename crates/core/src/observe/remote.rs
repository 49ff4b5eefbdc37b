//! What the database sources share: each reads over its own connection with
//! async calls, so it runs on a runtime of its own (on its source thread),
//! every sample within a limit, and a failed sample drops the connection so
//! the next one starts afresh.
use super::{Source, SourceError, Value};
use std::collections::BTreeMap;
use std::time::Duration;

/// How long one sample (its connection included) may take.
pub const LIMIT: Duration = Duration::from_secs(2);

/// A database's statistics read over a connection of their own.
#[allow(async_fn_in_trait)]
pub trait Remote: Send {
    fn name(&self) -> String;

    /// One sample (connecting first where there is no connection).
    async fn read(&mut self) -> Result<Vec<Value>, SourceError>;

    /// Drops the connection after a failed or late sample.
    fn reset(&mut self);

    fn warnings(&mut self) -> Vec<String> {
        Vec::new()
    }

    fn configuration(&mut self) -> BTreeMap<String, String> {
        BTreeMap::new()
    }
}

/// A [`Remote`] as a [`Source`].
pub struct Driven<R> {
    rt: Option<tokio::runtime::Runtime>,
    inner: R,
}

impl<R: Remote> Driven<R> {
    pub fn new(inner: R) -> Driven<R> {
        Driven { rt: None, inner }
    }
}

impl<R: Remote> Source for Driven<R> {
    fn name(&self) -> String {
        self.inner.name()
    }

    fn sample(&mut self) -> Result<Vec<Value>, SourceError> {
        if self.rt.is_none() {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| SourceError::Unavailable(format!("no runtime: {e}")))?;
            self.rt = Some(rt);
        }
        let rt = self.rt.as_ref().expect("made above");
        let r = rt.block_on(async {
            tokio::time::timeout(LIMIT, self.inner.read())
                .await
                .unwrap_or_else(|_| Err(SourceError::Failed(format!("no answer within {LIMIT:?}"))))
        });
        if r.is_err() {
            self.inner.reset();
        }
        r
    }

    fn warnings(&mut self) -> Vec<String> {
        self.inner.warnings()
    }

    fn configuration(&mut self) -> BTreeMap<String, String> {
        self.inner.configuration()
    }
}

/// A hit ratio over each interval: hits / (hits + misses) of the counters'
/// growth since the last sample.
#[derive(Debug, Default)]
pub struct HitRatio(Option<(f64, f64)>);

impl HitRatio {
    /// The ratio since the last call (none the first time, or when nothing
    /// was looked up), as a gauge named `db.cache_hit_ratio`.
    pub fn next(&mut self, hits: f64, misses: f64) -> Option<Value> {
        let (h0, m0) = self.0.replace((hits, misses))?;
        let (dh, dm) = (hits - h0, misses - m0);
        (dh >= 0.0 && dm >= 0.0 && dh + dm > 0.0)
            .then(|| Value::gauge("db.cache_hit_ratio", "ratio", dh / (dh + dm)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fails its second read, and counts its resets.
    struct Flaky(u32, u32);

    impl Remote for Flaky {
        fn name(&self) -> String {
            "flaky".into()
        }

        async fn read(&mut self) -> Result<Vec<Value>, SourceError> {
            self.0 += 1;
            match self.0 {
                2 => Err(SourceError::Failed("lost".into())),
                3 => {
                    tokio::time::sleep(LIMIT * 2).await;
                    Ok(vec![])
                }
                n => Ok(vec![Value::counter("f.reads", "operations", n as f64)]),
            }
        }

        fn reset(&mut self) {
            self.1 += 1;
        }
    }

    #[test]
    fn a_failed_or_late_read_resets_the_connection() {
        let mut d = Driven::new(Flaky(0, 0));
        assert_eq!(d.sample().unwrap()[0].value, 1.0);
        assert_eq!(d.sample(), Err(SourceError::Failed("lost".into())));
        // the third read outlasts the limit
        assert_eq!(
            d.sample(),
            Err(SourceError::Failed("no answer within 2s".into()))
        );
        assert_eq!(d.inner.1, 2);
        assert_eq!(d.sample().unwrap()[0].value, 4.0);
    }

    #[test]
    fn the_hit_ratio_is_over_each_interval() {
        let mut r = HitRatio::default();
        assert_eq!(r.next(90.0, 10.0), None);
        assert_eq!(r.next(180.0, 10.0).map(|v| v.value), Some(1.0));
        assert_eq!(r.next(190.0, 20.0).map(|v| v.value), Some(0.5));
        assert_eq!(r.next(190.0, 20.0), None, "nothing looked up");
    }
}
