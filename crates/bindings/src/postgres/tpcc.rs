//! TPC-C on PostgreSQL (and its wire-compatible flavours): READ COMMITTED
//! (or the level asked for) with `SELECT ... FOR UPDATE` on the rows a transaction changes (the
//! increments are done by UPDATE, so no update is lost), prepared statements
//! typed by the server, serialization failures and deadlocks retried, and
//! the loader's fast path is `COPY ... FROM STDIN`.
use crate::tpcc::{
    Conn, DbError, Done, ErrorKind, Isolation, Opened, Pending, Row, Stmt, Support, TextRows, Value,
};
use crate::url::Target;
use futures_util::SinkExt;
use rust_decimal::prelude::{FromPrimitive, ToPrimitive};
use rust_decimal::Decimal;
use std::collections::HashMap;
use std::time::SystemTime;
use tokio_postgres::types::{ToSql, Type};
use tokio_postgres::{Client, Statement};

pub struct PgConn {
    client: Client,
    statements: HashMap<usize, Statement>,
    /// `BEGIN ISOLATION LEVEL ...`
    begin: String,
    /// BEGIN and deferred statements not sent yet.
    pending: Pending,
    pub version: String,
    /// The server settings recorded with the result.
    pub settings: std::collections::BTreeMap<String, String>,
}

fn err(e: tokio_postgres::Error) -> DbError {
    let retry = e.code().is_some_and(|c| {
        *c == tokio_postgres::error::SqlState::T_R_SERIALIZATION_FAILURE
            || *c == tokio_postgres::error::SqlState::T_R_DEADLOCK_DETECTED
    });
    DbError {
        kind: if retry {
            ErrorKind::Retry
        } else {
            ErrorKind::Other
        },
        message: crate::postgres::error_text(&e),
    }
}

/// A parameter converted to the type the server inferred for it.
fn param(v: &Value, ty: &Type) -> Result<Box<dyn ToSql + Sync + Send>, DbError> {
    let bad = || DbError::other(format!("cannot pass {v:?} as {ty}"));
    Ok(match (v, ty) {
        (Value::Null, _) if *ty == Type::INT4 => Box::new(None::<i32>),
        (Value::Null, _) if *ty == Type::INT8 => Box::new(None::<i64>),
        (Value::Null, _) if *ty == Type::TIMESTAMP => Box::new(None::<SystemTime>),
        (Value::Null, _) if *ty == Type::NUMERIC => Box::new(None::<Decimal>),
        (Value::Null, _) => Box::new(None::<String>),
        (Value::Int(i), t) if *t == Type::INT4 => Box::new(i32::try_from(*i).map_err(|_| bad())?),
        (Value::Int(i), t) if *t == Type::INT8 => Box::new(*i),
        (Value::Int(i), t) if *t == Type::INT2 => Box::new(i16::try_from(*i).map_err(|_| bad())?),
        (Value::Int(i), t) if *t == Type::NUMERIC => Box::new(Decimal::from(*i)),
        (Value::Num(f), t) if *t == Type::NUMERIC => {
            Box::new(Decimal::from_f64(*f).ok_or_else(bad)?.round_dp(4))
        }
        (Value::Num(f), t) if *t == Type::FLOAT8 => Box::new(*f),
        (Value::Now, t) if *t == Type::TIMESTAMP || *t == Type::TIMESTAMPTZ => {
            Box::new(SystemTime::now())
        }
        (Value::Text(s), _) => Box::new(s.clone()),
        (Value::Int(i), _) => Box::new(i.to_string()),
        _ => return Err(bad()),
    })
}

fn value(row: &tokio_postgres::Row, i: usize) -> Result<Value, DbError> {
    let ty = row.columns()[i].type_();
    let e = |e: tokio_postgres::Error| DbError::other(e);
    Ok(if *ty == Type::INT4 {
        row.try_get::<_, Option<i32>>(i)
            .map_err(e)?
            .map_or(Value::Null, |v| Value::Int(v.into()))
    } else if *ty == Type::INT8 {
        row.try_get::<_, Option<i64>>(i)
            .map_err(e)?
            .map_or(Value::Null, Value::Int)
    } else if *ty == Type::INT2 {
        row.try_get::<_, Option<i16>>(i)
            .map_err(e)?
            .map_or(Value::Null, |v| Value::Int(v.into()))
    } else if *ty == Type::NUMERIC {
        row.try_get::<_, Option<Decimal>>(i)
            .map_err(e)?
            .map_or(Value::Null, |d| Value::Num(d.to_f64().unwrap_or(0.0)))
    } else if *ty == Type::FLOAT8 {
        row.try_get::<_, Option<f64>>(i)
            .map_err(e)?
            .map_or(Value::Null, Value::Num)
    } else if *ty == Type::TIMESTAMP || *ty == Type::TIMESTAMPTZ {
        row.try_get::<_, Option<SystemTime>>(i)
            .map_err(e)?
            .map_or(Value::Null, |t| {
                Value::Text(yardstick_core::result::time::rfc3339(t))
            })
    } else {
        row.try_get::<_, Option<String>>(i)
            .map_err(e)?
            .map_or(Value::Null, Value::Text)
    })
}

/// PostgreSQL's entry in the registry's TPC-C dispatch.
pub(crate) const SUPPORT: Support = Support {
    open: |target, _create, isolation| Box::pin(async move {
        let c = PgConn::open(target, isolation).await?;
        let engine = yardstick_core::binding::EngineInfo {
            name: "postgresql".into(),
            version: c.version.clone(),
            settings: c.settings.clone(),
        };
        Ok(Opened {
            conn: Box::new(c),
            engine,
            isolation: crate::tpcc::locking(isolation),
            statements: PgConn::STATEMENTS,
            timeout: Some(target.op_timeout().map_err(DbError::other)?),
        })
    }),
    default_isolation: Isolation::ReadCommitted,
};

impl PgConn {
    /// How the terminals send statements, for the result.
    pub(crate) const STATEMENTS: &'static str = "prepared statements (extended protocol), pipelined: a transaction's independent statements go out together, BEGIN with the first and COMMIT with the last";

    /// Connects and checks that the server takes transactions at `isolation`.
    /// The connection's IO runs as a task of the calling runtime.
    pub async fn open(target: &Target, isolation: Isolation) -> Result<PgConn, DbError> {
        let ep = crate::postgres::endpoint(target).map_err(DbError::other)?;
        let client = crate::postgres::connect(&ep)
            .await
            .map_err(DbError::other)?;
        let version: String = client
            .query_one("SHOW server_version", &[])
            .await
            .map(|r| r.get(0))
            .map_err(err)?;
        let begin = format!("BEGIN ISOLATION LEVEL {}", isolation.sql());
        client
            .batch_execute(&format!("{begin}; ROLLBACK"))
            .await
            .map_err(|e| {
                DbError::other(format!(
                    "the server refuses isolation level {} ({}); choose another with --isolation",
                    isolation.sql(),
                    err(e)
                ))
            })?;
        let settings = crate::postgres::server_settings(&client).await;
        Ok(PgConn {
            client,
            statements: HashMap::new(),
            begin,
            pending: Pending::default(),
            version,
            settings,
        })
    }

    async fn statement(&mut self, sql: &'static str) -> Result<Statement, DbError> {
        if let Some(s) = self.statements.get(&(sql.as_ptr() as usize)) {
            return Ok(s.clone());
        }
        // placeholders and row locks are the same in every flavour
        let text = super::dialect(super::Flavor::Postgres).statement(sql);
        let st = self.client.prepare(&text).await.map_err(err)?;
        self.statements.insert(sql.as_ptr() as usize, st.clone());
        Ok(st)
    }

    /// Sends a pending BEGIN and the deferred statements.
    async fn flush(&mut self) -> Result<(), DbError> {
        if self.pending.any() {
            self.send(Vec::new(), None).await?;
        }
        Ok(())
    }

    /// Sends a pending BEGIN, the deferred statements, `stmts` and `end`
    /// (COMMIT) in one round trip and returns the answers to `stmts`.
    /// tokio-postgres sends a request when its future is first polled and
    /// answers them in order: polling every future once puts them all on
    /// the wire before the first answer is read.
    async fn send(
        &mut self,
        stmts: Vec<Stmt>,
        end: Option<&'static str>,
    ) -> Result<Vec<Done>, DbError> {
        let (begin, all, deferred) = self.pending.take(stmts);
        let skip = deferred + usize::from(begin);
        let mut bound = Vec::with_capacity(all.len());
        for s in &all {
            let (sql, params) = match s {
                Stmt::Query(sql, p) | Stmt::Exec(sql, p) => (*sql, p),
            };
            let st = self.statement(sql).await?;
            let b = Self::bind(&st, params)?;
            bound.push((st, b));
        }
        let client = &self.client;
        let refs: Vec<Vec<&(dyn ToSql + Sync)>> = bound
            .iter()
            .map(|(_, b)| b.iter().map(|b| &**b as &(dyn ToSql + Sync)).collect())
            .collect();
        let mut answers: Vec<Answer<'_>> = Vec::with_capacity(all.len() + 2);
        if begin {
            answers.push(simple(client, self.begin.as_str()));
        }
        for ((s, (st, _)), r) in all.iter().zip(&bound).zip(&refs) {
            answers.push(match s {
                Stmt::Query(..) => Box::pin(async move {
                    let got = client.query(st, r).await.map_err(err)?;
                    rows(&got).map(Done::Rows)
                }),
                Stmt::Exec(..) => {
                    Box::pin(
                        async move { client.execute(st, r).await.map_err(err).map(Done::Count) },
                    )
                }
            });
        }
        if let Some(end) = end {
            answers.push(simple(client, end));
        }
        let mut out = async move {
            let mut done: Vec<Option<Result<Done, DbError>>> = vec![None; answers.len()];
            // the first poll of each sends its request, in order
            std::future::poll_fn(|cx| {
                for (a, d) in answers.iter_mut().zip(done.iter_mut()) {
                    if let std::task::Poll::Ready(r) = a.as_mut().poll(cx) {
                        *d = Some(r);
                    }
                }
                std::task::Poll::Ready(())
            })
            .await;
            // then the answers, which come back in the same order
            for (a, d) in answers.iter_mut().zip(done.iter_mut()) {
                if d.is_none() {
                    *d = Some(a.await);
                }
            }
            done.into_iter()
                .map(|d| d.unwrap_or(Ok(Done::Count(0))))
                .collect::<Result<Vec<Done>, DbError>>()
        }
        .await?;
        if end.is_some() {
            out.pop();
        }
        out.drain(..skip);
        Ok(out)
    }

    fn bind(
        st: &Statement,
        params: &[Value],
    ) -> Result<Vec<Box<dyn ToSql + Sync + Send>>, DbError> {
        params
            .iter()
            .zip(st.params())
            .map(|(v, t)| param(v, t))
            .collect()
    }
}

fn rows(rows: &[tokio_postgres::Row]) -> Result<Vec<Row>, DbError> {
    rows.iter()
        .map(|r| (0..r.len()).map(|i| value(r, i)).collect())
        .collect()
}

type Answer<'a> = std::pin::Pin<Box<dyn std::future::Future<Output = Result<Done, DbError>> + 'a>>;

/// A statement in the simple query protocol (BEGIN, COMMIT) as a pipeline's answer.
fn simple<'a>(client: &'a Client, sql: &'a str) -> Answer<'a> {
    Box::pin(async move {
        client.batch_execute(sql).await.map_err(err)?;
        Ok(Done::Count(0))
    })
}

#[async_trait::async_trait(?Send)]
impl Conn for PgConn {
    async fn begin(&mut self) -> Result<(), DbError> {
        self.pending.begin();
        Ok(())
    }

    async fn commit(&mut self) -> Result<(), DbError> {
        if self.pending.commit_is_empty() {
            return Ok(());
        }
        self.send(Vec::new(), Some("COMMIT")).await.map(|_| ())
    }

    async fn rollback(&mut self) -> Result<(), DbError> {
        if self.pending.rollback() {
            return Ok(());
        }
        self.client.batch_execute("ROLLBACK").await.map_err(err)
    }

    async fn query(&mut self, sql: &'static str, params: &[Value]) -> Result<Vec<Row>, DbError> {
        let mut out = self.pipeline(vec![Stmt::Query(sql, params.to_vec())]).await?;
        Ok(out.pop().map(Done::rows).unwrap_or_default())
    }

    async fn execute(&mut self, sql: &'static str, params: &[Value]) -> Result<u64, DbError> {
        let out = self.pipeline(vec![Stmt::Exec(sql, params.to_vec())]).await?;
        Ok(out.last().map_or(0, Done::count))
    }

    async fn pipeline(&mut self, stmts: Vec<Stmt>) -> Result<Vec<Done>, DbError> {
        self.send(stmts, None).await
    }

    async fn defer(&mut self, stmts: Vec<Stmt>) -> Result<(), DbError> {
        self.pending.defer(stmts);
        Ok(())
    }

    async fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        self.flush().await?;
        self.client.batch_execute(sql).await.map_err(err)
    }

    async fn load(&mut self, table: &str, rows: &[Row]) -> Result<(), DbError> {
        let now = load_time();
        self.load_text(table, TextRows::from_rows(rows, &now)).await
    }

    fn text_load_time(&self) -> Option<String> {
        Some(load_time())
    }

    /// One `COPY ... FROM STDIN`.
    async fn load_text(&mut self, table: &str, text: TextRows) -> Result<(), DbError> {
        self.flush().await?;
        let cols = yardstick_core::tpcc::columns(table);
        let statement = format!("COPY {table} ({}) FROM STDIN", cols.join(", "));
        let pieces = text.into_pieces();
        let client = &self.client;
        async move {
            let sink = client
                .copy_in::<_, bytes::Bytes>(statement.as_str())
                .await
                .map_err(err)?;
            futures_util::pin_mut!(sink);
            for p in pieces {
                sink.feed(bytes::Bytes::from(p)).await.map_err(err)?;
            }
            sink.finish().await.map_err(err)?;
            Ok(())
        }
        .await
    }
}

/// Now as the text of a timestamp column in COPY's text format.
fn load_time() -> String {
    yardstick_core::result::time::rfc3339(SystemTime::now())
}
