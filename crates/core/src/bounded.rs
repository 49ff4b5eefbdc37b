//! A session whose every call ends within a time limit, for drivers that
//! wait as long as a stalled server lets them: past the limit the call is
//! abandoned (its future dropped), counts as `timeout`, and the session is
//! told ([`Session::abandoned`]) so it can drop a connection left halfway
//! through a request.
use crate::binding::{
    Batch, BindingError, Fields, Outcome, Record, ScanRows, Session, Status, WriteSet,
};
use std::time::Duration;

/// `inner` with every call bounded by `limit`.
pub struct Bounded<S> {
    inner: S,
    limit: Duration,
}

impl<S: Session> Bounded<S> {
    pub fn new(inner: S, limit: Duration) -> Self {
        Bounded { inner, limit }
    }

    /// The session inside.
    pub fn get_mut(&mut self) -> &mut S {
        &mut self.inner
    }

    /// A call's outcome, or `timeout` when it was abandoned at the limit.
    fn finish(&mut self, r: Result<Outcome, tokio::time::error::Elapsed>) -> Outcome {
        r.unwrap_or_else(|_| {
            self.inner.abandoned();
            Outcome::failed(
                Status::Timeout,
                format!("no answer within {:?} (the URL's timeout)", self.limit),
            )
        })
    }
}

impl<S: Session> Session for Bounded<S> {
    async fn read(&mut self, key: &[u8], fields: Fields, out: &mut Record) -> Outcome {
        let r = tokio::time::timeout(self.limit, self.inner.read(key, fields, out)).await;
        self.finish(r)
    }

    async fn scan(
        &mut self,
        start: &[u8],
        count: u64,
        fields: Fields,
        out: &mut ScanRows,
    ) -> Outcome {
        let r = tokio::time::timeout(self.limit, self.inner.scan(start, count, fields, out)).await;
        self.finish(r)
    }

    async fn update(&mut self, key: &[u8], values: &WriteSet) -> Outcome {
        let r = tokio::time::timeout(self.limit, self.inner.update(key, values)).await;
        self.finish(r)
    }

    async fn insert(&mut self, key: &[u8], values: &WriteSet) -> Outcome {
        let r = tokio::time::timeout(self.limit, self.inner.insert(key, values)).await;
        self.finish(r)
    }

    async fn delete(&mut self, key: &[u8]) -> Outcome {
        let r = tokio::time::timeout(self.limit, self.inner.delete(key)).await;
        self.finish(r)
    }

    async fn insert_batch(&mut self, batch: &Batch) -> Outcome {
        let r = tokio::time::timeout(self.limit, self.inner.insert_batch(batch)).await;
        self.finish(r)
    }

    /// Emptying a table is not an operation of the run: no limit.
    async fn clear(&mut self) -> Result<Option<u64>, BindingError> {
        self.inner.clear().await
    }

    fn abandoned(&mut self) {
        self.inner.abandoned();
    }
}
