//! Opening a database for TPC-C through the registry: a binding that runs
//! TPC-C says so in its descriptor ([`Support`]), with the function that
//! opens one of its connections; every caller gets the same [`Opened`].
use super::{Conn, DbError, Done, Isolation, Row, Stmt, TextRows, Value};
use crate::registry;
use crate::url::Target;
use yardstick_core::binding::{BindingError, EngineInfo};

/// Opening a connection: it lives on the runtime that awaited this.
pub(crate) type Opening<'a> =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<Opened, DbError>> + 'a>>;

/// A binding's TPC-C entry point (its descriptor's `capabilities.tpcc`).
#[derive(Debug, Clone, Copy)]
pub struct Support {
    /// Opens one connection; `create` allows creating the database (a new
    /// SQLite file), and the connection runs its transactions at the level given.
    pub open: for<'a> fn(&'a Target, bool, Isolation) -> Opening<'a>,
    /// The level its transactions run at unless `--isolation` says otherwise.
    pub default_isolation: Isolation,
}

/// A connection opened for TPC-C, and what the result records about it.
pub struct Opened {
    pub conn: Box<dyn Conn>,
    pub engine: EngineInfo,
    /// How transactions are isolated, in words for the result.
    pub isolation: String,
    /// How the terminals send statements, for the result.
    pub statements: &'static str,
    /// A transaction's time limit (the URL's `timeout`); `None` for an
    /// engine in the process, which cannot stall.
    pub timeout: Option<std::time::Duration>,
}

/// The TPC-C support of the binding `url` names; the error lists the schemes
/// that have it.
pub fn support(url: &str) -> Result<(Target, Support), DbError> {
    let target = Target::parse(url).map_err(DbError::other)?;
    let found = match registry::find(&target.scheme) {
        Ok(d) => d.capabilities.tpcc,
        // a known binding this binary lacks: say how to build it
        Err(e @ BindingError::Unsupported(_)) => return Err(DbError::other(e)),
        Err(_) => None,
    };
    match found {
        Some(s) => Ok((target, s)),
        None => {
            let with: Vec<String> = crate::REGISTRY
                .iter()
                .filter_map(|e| e.descriptor)
                .filter(|d| d.capabilities.tpcc.is_some())
                .map(|d| format!("{}://", d.name()))
                .collect();
            Err(DbError::other(format!(
                "yardstick tpcc does not support {}://: use {}",
                target.scheme,
                with.join(", ")
            )))
        }
    }
}

/// Opens one TPC-C connection to `url` at `isolation` (the binding's default
/// when `None`).
pub async fn open(
    url: &str,
    create: bool,
    isolation: Option<Isolation>,
) -> Result<Opened, DbError> {
    let (target, s) = support(url)?;
    (s.open)(&target, create, isolation.unwrap_or(s.default_isolation)).await
}

/// The words the result gives the isolation of a server whose transactions
/// lock the rows they change with SELECT ... FOR UPDATE.
pub fn locking(isolation: Isolation) -> String {
    format!("{isolation}, with SELECT ... FOR UPDATE on the rows a transaction changes")
}

/// A boxed connection is a connection, so code generic over [`Conn`] runs
/// on whatever [`open`] returned.
#[async_trait::async_trait(?Send)]
impl<C: Conn + ?Sized> Conn for Box<C> {
    async fn begin(&mut self) -> Result<(), DbError> {
        (**self).begin().await
    }
    async fn commit(&mut self) -> Result<(), DbError> {
        (**self).commit().await
    }
    async fn rollback(&mut self) -> Result<(), DbError> {
        (**self).rollback().await
    }
    async fn query(&mut self, sql: &'static str, params: &[Value]) -> Result<Vec<Row>, DbError> {
        (**self).query(sql, params).await
    }
    async fn execute(&mut self, sql: &'static str, params: &[Value]) -> Result<u64, DbError> {
        (**self).execute(sql, params).await
    }
    async fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        (**self).batch(sql).await
    }
    async fn create_index(&mut self, ddl: &str) -> Result<(), DbError> {
        (**self).create_index(ddl).await
    }
    async fn load(&mut self, table: &str, rows: &[Row]) -> Result<(), DbError> {
        (**self).load(table, rows).await
    }
    fn text_load_time(&self) -> Option<String> {
        (**self).text_load_time()
    }
    async fn load_text(&mut self, table: &str, text: TextRows) -> Result<(), DbError> {
        (**self).load_text(table, text).await
    }
    async fn pipeline(&mut self, stmts: Vec<Stmt>) -> Result<Vec<Done>, DbError> {
        (**self).pipeline(stmts).await
    }
    async fn defer(&mut self, stmts: Vec<Stmt>) -> Result<(), DbError> {
        (**self).defer(stmts).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_binding_without_tpcc_is_refused_with_the_schemes_that_have_it() {
        let e = support("null://").err().unwrap().message;
        assert!(
            e.starts_with("yardstick tpcc does not support null://: use ")
                && e.contains("sqlite://"),
            "{e}"
        );
        let e = support("oracle://x").err().unwrap().message;
        assert!(
            e.contains("does not support oracle://: use sqlite://"),
            "{e}"
        );
    }

    #[test]
    fn defaults_come_from_the_binding() {
        let (_, s) = support("sqlite:///x.db").unwrap();
        assert_eq!(s.default_isolation, Isolation::Serializable);
    }
}
