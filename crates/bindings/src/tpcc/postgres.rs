//! TPC-C on PostgreSQL (and its wire-compatible flavours): READ COMMITTED
//! (or the level asked for) with `SELECT ... FOR UPDATE` on the rows a transaction changes (the
//! increments are done by UPDATE, so no update is lost), prepared statements
//! typed by the server, serialization failures and deadlocks retried, and
//! the loader's fast path is `COPY ... FROM STDIN`.
use super::{Conn, DbError, ErrorKind, Isolation, Row, Value};
use crate::url::Target;
use futures_util::SinkExt;
use rust_decimal::prelude::{FromPrimitive, ToPrimitive};
use rust_decimal::Decimal;
use std::collections::HashMap;
use std::time::SystemTime;
use tokio_postgres::types::{ToSql, Type};
use tokio_postgres::{Client, Statement};

pub struct PgConn {
    rt: tokio::runtime::Runtime,
    client: Client,
    statements: HashMap<usize, Statement>,
    /// `BEGIN ISOLATION LEVEL ...`
    begin: String,
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
        message: e
            .as_db_error()
            .map_or_else(|| e.to_string(), |d| d.message().to_string()),
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

impl PgConn {
    /// Connects and checks that the server takes transactions at `isolation`.
    pub fn open(url: &str, isolation: Isolation) -> Result<PgConn, DbError> {
        let target = Target::parse(url).map_err(DbError::other)?;
        let ep = crate::postgres::endpoint(&target, url).map_err(DbError::other)?;
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(DbError::other)?;
        let client = rt
            .block_on(crate::postgres::connect(&ep))
            .map_err(DbError::other)?;
        let version: String = rt
            .block_on(client.query_one("SHOW server_version", &[]))
            .map(|r| r.get(0))
            .map_err(err)?;
        let begin = format!("BEGIN ISOLATION LEVEL {}", isolation.sql());
        rt.block_on(client.batch_execute(&format!("{begin}; ROLLBACK")))
            .map_err(|e| {
                DbError::other(format!(
                    "the server refuses isolation level {} ({}); choose another with --isolation",
                    isolation.sql(),
                    err(e)
                ))
            })?;
        let settings = rt.block_on(crate::postgres::server_settings(&client));
        Ok(PgConn {
            rt,
            client,
            statements: HashMap::new(),
            begin,
            version,
            settings,
        })
    }

    fn statement(&mut self, sql: &'static str) -> Result<Statement, DbError> {
        if let Some(s) = self.statements.get(&(sql.as_ptr() as usize)) {
            return Ok(s.clone());
        }
        let text = super::numbered_placeholders(sql);
        let st = self.rt.block_on(self.client.prepare(&text)).map_err(err)?;
        self.statements.insert(sql.as_ptr() as usize, st.clone());
        Ok(st)
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

/// COPY's text format: tab-separated, backslash escapes, `\N` for NULL.
fn copy_text(rows: &[Row]) -> Vec<u8> {
    let mut buf = Vec::with_capacity(rows.len() * 128);
    let now = yardstick_core::result::time::rfc3339(SystemTime::now());
    for row in rows {
        for (i, v) in row.iter().enumerate() {
            if i > 0 {
                buf.push(b'\t');
            }
            match v {
                Value::Null => buf.extend_from_slice(b"\\N"),
                Value::Int(n) => buf.extend_from_slice(n.to_string().as_bytes()),
                Value::Num(f) => buf.extend_from_slice(format!("{f:.4}").as_bytes()),
                Value::Now => buf.extend_from_slice(now.as_bytes()),
                Value::Text(t) => {
                    for b in t.bytes() {
                        match b {
                            b'\\' => buf.extend_from_slice(b"\\\\"),
                            b'\t' => buf.extend_from_slice(b"\\t"),
                            b'\n' => buf.extend_from_slice(b"\\n"),
                            b'\r' => buf.extend_from_slice(b"\\r"),
                            b => buf.push(b),
                        }
                    }
                }
            }
        }
        buf.push(b'\n');
    }
    buf
}

impl Conn for PgConn {
    fn begin(&mut self) -> Result<(), DbError> {
        self.rt
            .block_on(self.client.batch_execute(&self.begin))
            .map_err(err)
    }

    fn commit(&mut self) -> Result<(), DbError> {
        self.rt
            .block_on(self.client.batch_execute("COMMIT"))
            .map_err(err)
    }

    fn rollback(&mut self) -> Result<(), DbError> {
        self.rt
            .block_on(self.client.batch_execute("ROLLBACK"))
            .map_err(err)
    }

    fn query(&mut self, sql: &'static str, params: &[Value]) -> Result<Vec<Row>, DbError> {
        let st = self.statement(sql)?;
        let bound = Self::bind(&st, params)?;
        let refs: Vec<&(dyn ToSql + Sync)> =
            bound.iter().map(|b| &**b as &(dyn ToSql + Sync)).collect();
        let rows = self
            .rt
            .block_on(self.client.query(&st, &refs))
            .map_err(err)?;
        rows.iter()
            .map(|r| (0..r.len()).map(|i| value(r, i)).collect())
            .collect()
    }

    fn execute(&mut self, sql: &'static str, params: &[Value]) -> Result<u64, DbError> {
        let st = self.statement(sql)?;
        let bound = Self::bind(&st, params)?;
        let refs: Vec<&(dyn ToSql + Sync)> =
            bound.iter().map(|b| &**b as &(dyn ToSql + Sync)).collect();
        self.rt
            .block_on(self.client.execute(&st, &refs))
            .map_err(err)
    }

    fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        self.rt
            .block_on(self.client.batch_execute(sql))
            .map_err(err)
    }

    fn load(&mut self, table: &str, rows: &[Row]) -> Result<(), DbError> {
        let cols = yardstick_core::tpcc::columns(table);
        let statement = format!("COPY {table} ({}) FROM STDIN", cols.join(", "));
        let data = bytes::Bytes::from(copy_text(rows));
        let client = &self.client;
        self.rt.block_on(async move {
            let sink = client
                .copy_in::<_, bytes::Bytes>(statement.as_str())
                .await
                .map_err(err)?;
            futures_util::pin_mut!(sink);
            sink.send(data).await.map_err(err)?;
            sink.finish().await.map_err(err)?;
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_text_escapes_and_marks_nulls() {
        let rows = vec![vec![
            Value::Int(7),
            Value::Text("a\tb\\c\nd".into()),
            Value::Null,
            Value::Num(12.5),
        ]];
        assert_eq!(
            copy_text(&rows),
            b"7\ta\\tb\\\\c\\nd\t\\N\t12.5000\n".to_vec()
        );
    }
}
