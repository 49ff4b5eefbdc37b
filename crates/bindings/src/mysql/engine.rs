//! The storage engine under the tables: the URL's `engine` option (InnoDB,
//! or RocksDB as MariaDB's and Percona's MyRocks), checked against what the
//! server has, and the engine's key settings for the result (its cache,
//! compression and write buffer), since an engine comparison means little
//! without them.
use super::error_text;
use mysql_async::prelude::Queryable;
use mysql_async::Conn;
use std::collections::BTreeMap;
use yardstick_core::binding::BindingError;

/// InnoDB's settings recorded when the tables are InnoDB.
const INNODB: &[&str] = &[
    "innodb_buffer_pool_size",
    "innodb_page_size",
    "innodb_flush_method",
    "innodb_log_buffer_size",
    "innodb_compression_default",
    "innodb_compression_algorithm",
];

/// MyRocks's server variables recorded when the tables are RocksDB.
const ROCKSDB: &[&str] = &[
    "rocksdb_block_cache_size",
    "rocksdb_block_size",
    "rocksdb_cache_index_and_filter_blocks",
    "rocksdb_default_cf_options",
    "rocksdb_flush_log_at_trx_commit",
    "rocksdb_max_background_jobs",
    "rocksdb_use_direct_reads",
    "rocksdb_use_direct_io_for_flush_and_compaction",
    "rocksdb_max_row_locks",
];

/// The default column family's options recorded with MyRocks (from
/// information_schema.ROCKSDB_CF_OPTIONS): what it compresses with and how
/// much it buffers before a flush.
const ROCKSDB_CF: &[&str] = &[
    "COMPRESSION_TYPE",
    "BOTTOMMOST_COMPRESSION",
    "WRITE_BUFFER_SIZE",
    "MAX_WRITE_BUFFER_NUMBER",
    "TARGET_FILE_SIZE_BASE",
    "MAX_BYTES_FOR_LEVEL_BASE",
];

/// The engine the URL's `engine` option names, as the server spells it:
/// `innodb` is InnoDB, `rocksdb` and `myrocks` are ROCKSDB; other engine
/// names (Aria, MyISAM) pass as given.
pub(crate) fn parse(given: &str) -> Result<String, BindingError> {
    match given.to_ascii_lowercase().as_str() {
        "innodb" => Ok("InnoDB".into()),
        "rocksdb" | "myrocks" => Ok("ROCKSDB".into()),
        _ if !given.is_empty()
            && given
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_') =>
        {
            Ok(given.into())
        }
        _ => Err(BindingError::Config(format!(
            "engine={given} is not a storage engine name: use innodb or rocksdb (MyRocks), or another engine the server has"
        ))),
    }
}

/// Refuses an engine the server lacks, saying how to get it.
pub(crate) async fn check_available(
    c: &mut Conn,
    server: &str,
    engine: &str,
) -> Result<(), BindingError> {
    let support: Option<String> = c
        .exec_first(
            "SELECT SUPPORT FROM information_schema.ENGINES WHERE UPPER(ENGINE) = UPPER(?)",
            (engine,),
        )
        .await
        .map_err(|e| BindingError::Unavailable(format!("{server}: {}", error_text(&e))))?;
    match support.as_deref() {
        Some("YES" | "DEFAULT") => Ok(()),
        _ if engine == "ROCKSDB" => Err(BindingError::Config(format!(
            "{server} has no ROCKSDB storage engine (MyRocks): install it (Debian: mariadb-plugin-rocksdb) and start the server with --plugin-load-add=ha_rocksdb, or run INSTALL SONAME 'ha_rocksdb'"
        ))),
        _ => Err(BindingError::Config(format!(
            "{server} has no storage engine {engine}: SHOW ENGINES lists the ones it has; name one of them with engine="
        ))),
    }
}

/// Refuses a table that exists under another engine than the one asked for:
/// the run would measure the other engine.
pub(crate) fn check_table(table: &str, has: &str, asked: &str) -> Result<(), BindingError> {
    if has.eq_ignore_ascii_case(asked) {
        return Ok(());
    }
    Err(BindingError::Config(format!(
        "table {table} exists as {has}, not {asked} as engine= asks: drop it (or name another database in the URL) and load again"
    )))
}

/// The key settings of `engine` (InnoDB or ROCKSDB), added to `settings`.
pub(crate) async fn record(c: &mut Conn, engine: &str, settings: &mut BTreeMap<String, String>) {
    let names = if engine.eq_ignore_ascii_case("ROCKSDB") {
        ROCKSDB
    } else if engine.eq_ignore_ascii_case("InnoDB") {
        INNODB
    } else {
        &[]
    };
    super::add_variables(c, names, settings).await;
    if names != ROCKSDB {
        return;
    }
    let options: Vec<(String, String)> = c
        .query("SELECT OPTION_TYPE, VALUE FROM information_schema.ROCKSDB_CF_OPTIONS WHERE CF_NAME = 'default'")
        .await
        .unwrap_or_default();
    for (name, value) in options {
        if ROCKSDB_CF.contains(&name.as_str()) {
            settings.insert(format!("rocksdb_cf_default.{}", name.to_ascii_lowercase()), value);
        }
    }
    let plugin: Option<(String, String)> = c
        .query_first("SELECT PLUGIN_VERSION, PLUGIN_MATURITY FROM information_schema.PLUGINS WHERE PLUGIN_NAME = 'ROCKSDB'")
        .await
        .unwrap_or(None);
    if let Some((version, maturity)) = plugin {
        settings.insert("rocksdb_plugin".into(), format!("{version} ({maturity})"));
    }
}

/// The engine of the TPC-C tables: the URL's `engine` (checked against the
/// server, and against the tables when they exist; the session creates new
/// tables with it), or the engine of the tables there, or the server's
/// default.
pub(crate) async fn of_tpcc_tables(
    conn: &mut mysql_async::Conn,
    ep: &crate::mysql::Endpoint,
) -> Result<String, crate::tpcc::DbError> {
    let has: Option<String> = conn
        .query_first(
            "SELECT ENGINE FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'warehouse'",
        )
        .await
        .map_err(crate::mysql::tpcc::err_plain)?;
    let Some(asked) = &ep.engine else {
        let default: Option<String> = conn
            .query_first("SELECT @@default_storage_engine")
            .await
            .map_err(crate::mysql::tpcc::err_plain)?;
        return Ok(has.or(default).unwrap_or_default());
    };
    check_available(conn, &ep.server, asked)
        .await
        .map_err(crate::tpcc::DbError::other)?;
    if let Some(has) = &has {
        check_table("warehouse", has, asked).map_err(crate::tpcc::DbError::other)?;
    }
    conn.query_drop(format!("SET SESSION default_storage_engine = {asked}"))
        .await
        .map_err(crate::mysql::tpcc::err_plain)?;
    Ok(asked.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engine_names_are_spelled_as_the_server_does() {
        assert_eq!(parse("innodb").unwrap(), "InnoDB");
        assert_eq!(parse("RocksDB").unwrap(), "ROCKSDB");
        assert_eq!(parse("myrocks").unwrap(), "ROCKSDB");
        assert_eq!(parse("Aria").unwrap(), "Aria");
        for bad in ["", "InnoDB; DROP TABLE x", "rocks-db"] {
            let e = parse(bad).unwrap_err().to_string();
            assert!(e.contains("is not a storage engine name"), "{e}");
        }
    }

    #[test]
    fn a_table_under_another_engine_is_refused() {
        assert!(check_table("usertable", "ROCKSDB", "ROCKSDB").is_ok());
        assert!(check_table("usertable", "InnoDB", "innodb").is_ok());
        let e = check_table("usertable", "InnoDB", "ROCKSDB")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("usertable exists as InnoDB, not ROCKSDB") && e.contains("drop it"),
            "{e}"
        );
    }
}
