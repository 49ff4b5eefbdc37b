//! How a terminal sends a transaction's statements, and how many round
//! trips to the server that took. yardstick's own connections pipeline
//! (statements whose answers the transaction does not need wait and go
//! with the next ones; BEGIN goes with the first statement); the common
//! published TPC-C clients (go-tpc, BenchmarkSQL, HammerDB through their
//! drivers) wait for each statement's answer before sending the next, so
//! their latency and tpmC measure more round trips. `--sending one-by-one`
//! sends as they do, so figures can be put beside theirs.
use super::{one_by_one, Conn, DbError, Done, Row, Stmt, TextRows, Value};

/// How a transaction's statements are sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sending {
    /// What the connection does best: pipelines where the driver can.
    Pipelined,
    /// One statement per round trip, BEGIN and COMMIT included.
    OneByOne,
}

impl Sending {
    pub const NAMES: &'static str = "pipelined or one-by-one";

    pub fn parse(s: &str) -> Option<Sending> {
        match s.to_ascii_lowercase().replace('_', "-").as_str() {
            "pipelined" => Some(Sending::Pipelined),
            "one-by-one" => Some(Sending::OneByOne),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Sending::Pipelined => "pipelined",
            Sending::OneByOne => "one-by-one",
        }
    }
}

/// A terminal's connection, sending as `sending` says and counting the
/// requests it waits for: round trips to a server (calls into the process
/// for SQLite). A pipelined connection holds BEGIN and deferred statements
/// until its next request, so they cost none of their own.
pub struct Counted {
    inner: Box<dyn Conn>,
    sending: Sending,
    /// Round trips so far.
    pub trips: u64,
}

impl Counted {
    pub fn new(inner: Box<dyn Conn>, sending: Sending) -> Counted {
        Counted {
            inner,
            sending,
            trips: 0,
        }
    }

    fn one_by_one(&self) -> bool {
        self.sending == Sending::OneByOne
    }
}

#[async_trait::async_trait(?Send)]
impl Conn for Counted {
    async fn begin(&mut self) -> Result<(), DbError> {
        self.inner.begin().await?;
        if self.one_by_one() {
            // BEGIN on its own: an empty pipeline sends what waits
            self.trips += 1;
            self.inner.pipeline(Vec::new()).await?;
        }
        Ok(())
    }

    async fn commit(&mut self) -> Result<(), DbError> {
        self.trips += 1;
        self.inner.commit().await
    }

    async fn rollback(&mut self) -> Result<(), DbError> {
        self.trips += 1;
        self.inner.rollback().await
    }

    async fn query(&mut self, sql: &'static str, params: &[Value]) -> Result<Vec<Row>, DbError> {
        self.trips += 1;
        self.inner.query(sql, params).await
    }

    async fn execute(&mut self, sql: &'static str, params: &[Value]) -> Result<u64, DbError> {
        self.trips += 1;
        self.inner.execute(sql, params).await
    }

    async fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        self.trips += 1;
        self.inner.batch(sql).await
    }

    async fn load(&mut self, table: &str, rows: &[Row]) -> Result<(), DbError> {
        self.inner.load(table, rows).await
    }

    fn text_load_time(&self) -> Option<String> {
        self.inner.text_load_time()
    }

    async fn load_text(&mut self, table: &str, text: TextRows) -> Result<(), DbError> {
        self.inner.load_text(table, text).await
    }

    async fn pipeline(&mut self, stmts: Vec<Stmt>) -> Result<Vec<Done>, DbError> {
        if self.one_by_one() {
            // each through query or execute above: one round trip each
            return one_by_one(self, stmts).await;
        }
        self.trips += 1;
        self.inner.pipeline(stmts).await
    }

    async fn defer(&mut self, stmts: Vec<Stmt>) -> Result<(), DbError> {
        if self.one_by_one() {
            return one_by_one(self, stmts).await.map(|_| ());
        }
        self.inner.defer(stmts).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// A connection that logs what reaches it.
    #[derive(Default)]
    struct Log(Arc<Mutex<Vec<String>>>);

    #[async_trait::async_trait(?Send)]
    impl Conn for Log {
        async fn begin(&mut self) -> Result<(), DbError> {
            self.0.lock().unwrap().push("begin".into());
            Ok(())
        }
        async fn commit(&mut self) -> Result<(), DbError> {
            self.0.lock().unwrap().push("commit".into());
            Ok(())
        }
        async fn rollback(&mut self) -> Result<(), DbError> {
            self.0.lock().unwrap().push("rollback".into());
            Ok(())
        }
        async fn query(&mut self, sql: &'static str, _: &[Value]) -> Result<Vec<Row>, DbError> {
            self.0.lock().unwrap().push(format!("query {sql}"));
            Ok(Vec::new())
        }
        async fn execute(&mut self, sql: &'static str, _: &[Value]) -> Result<u64, DbError> {
            self.0.lock().unwrap().push(format!("execute {sql}"));
            Ok(1)
        }
        async fn batch(&mut self, _: &str) -> Result<(), DbError> {
            Ok(())
        }
        async fn load(&mut self, _: &str, _: &[Row]) -> Result<(), DbError> {
            Ok(())
        }
        async fn pipeline(&mut self, stmts: Vec<Stmt>) -> Result<Vec<Done>, DbError> {
            self.0
                .lock()
                .unwrap()
                .push(format!("pipeline of {}", stmts.len()));
            Ok(stmts.iter().map(|_| Done::Count(1)).collect())
        }
        async fn defer(&mut self, stmts: Vec<Stmt>) -> Result<(), DbError> {
            self.0
                .lock()
                .unwrap()
                .push(format!("defer of {}", stmts.len()));
            Ok(())
        }
    }

    async fn transaction(c: &mut Counted) {
        c.begin().await.unwrap();
        c.query("SELECT 1", &[]).await.unwrap();
        let two = vec![
            Stmt::Exec("UPDATE a", vec![]),
            Stmt::Query("SELECT b", vec![]),
        ];
        c.pipeline(two).await.unwrap();
        c.defer(vec![Stmt::Exec("INSERT c", vec![])]).await.unwrap();
        c.commit().await.unwrap();
    }

    #[test]
    fn one_by_one_sends_every_statement_alone_and_counts_each() {
        let rt = super::super::runtime().unwrap();
        let log = Log::default();
        let seen = log.0.clone();
        let mut c = Counted::new(Box::new(log), Sending::Pipelined);
        rt.block_on(transaction(&mut c));
        // BEGIN and the deferred INSERT ride with other requests
        assert_eq!(c.trips, 3);
        assert_eq!(
            *seen.lock().unwrap(),
            [
                "begin",
                "query SELECT 1",
                "pipeline of 2",
                "defer of 1",
                "commit"
            ]
        );
        let log = Log::default();
        let seen = log.0.clone();
        let mut c = Counted::new(Box::new(log), Sending::OneByOne);
        rt.block_on(transaction(&mut c));
        assert_eq!(c.trips, 6, "BEGIN, 4 statements, COMMIT");
        assert_eq!(
            *seen.lock().unwrap(),
            [
                "begin",
                "pipeline of 0",
                "query SELECT 1",
                "execute UPDATE a",
                "query SELECT b",
                "execute INSERT c",
                "commit"
            ]
        );
        assert_eq!(Sending::parse("One_By_One"), Some(Sending::OneByOne));
        assert_eq!(Sending::parse("batched"), None);
    }
}
