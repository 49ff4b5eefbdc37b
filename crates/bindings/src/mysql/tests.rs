//! Tests of the MySQL/MariaDB binding: URL handling without a server, the
//! conformance suite and server behaviour against the MariaDB that
//! scripts/services starts.
use super::session::status_of;
use super::*;

fn server_url() -> String {
    std::env::var("YARDSTICK_MYSQL_URL")
        .unwrap_or_else(|_| "mysql://bench:benchpw@127.0.0.1:53306/ycsb".into())
}

fn available() -> bool {
    crate::testing::server_available("MariaDB", &server_url(), "scripts/services start mariadb")
}

fn open_url(url: &str, opts: &OpenOptions) -> Result<MysqlBinding, BindingError> {
    MysqlBinding::open(&Target::parse(url)?, opts)
}

#[test]
fn the_version_string_names_the_engine() {
    assert_eq!(engine_name("10.11.6-MariaDB-0+deb12u1"), "mariadb");
    assert_eq!(engine_name("8.0.11-TiDB-v7.5.0"), "tidb");
    assert_eq!(engine_name("8.0.36"), "mysql");
}

/// A fresh database per check, so checks run in parallel without sharing rows.
fn open_fresh_with(opts: &OpenOptions, query: &str) -> Result<MysqlBinding, BindingError> {
    open_url(&format!("{}{query}", fresh_database()?), opts)
}

/// The URL of a new, empty database on the test server.
fn fresh_database() -> Result<String, BindingError> {
    fresh_database_on(&server_url())
}

/// The URL of a new, empty database on the server of `base`.
fn fresh_database_on(base: &str) -> Result<String, BindingError> {
    let name = crate::testing::unique_name("conf");
    let base = base.to_string();
    let admin = Opts::from_url(&base).unwrap();
    run_cold(std::time::Duration::from_secs(60), async {
        let mut c = connect(&admin, Duration::from_secs(10))
            .await
            .map_err(|e| BindingError::Io(e.to_string()))?;
        // the databases of earlier test processes, once per process
        static SWEPT: std::sync::Once = std::sync::Once::new();
        if !SWEPT.is_completed() {
            let names: Vec<String> = c
                .query("SHOW DATABASES LIKE 'conf\\_%'")
                .await
                .map_err(|e| BindingError::Io(e.to_string()))?;
            for old in crate::testing::left_behind("conf", names) {
                let _ = c.query_drop(format!("DROP DATABASE IF EXISTS {old}")).await;
            }
            SWEPT.call_once(|| ());
        }
        c.query_drop(format!("CREATE DATABASE {name}"))
            .await
            .map_err(|e| BindingError::Io(e.to_string()))
    })?;
    Ok(format!("{}/{name}", base.rsplit_once('/').unwrap().0))
}

fn open_fresh(opts: &OpenOptions) -> Result<MysqlBinding, BindingError> {
    open_fresh_with(opts, "")
}

yardstick_core::conformance_suite!(open_fresh, available);

mod replace {
    use super::*;

    fn open_fresh(opts: &OpenOptions) -> Result<MysqlBinding, BindingError> {
        open_fresh_with(opts, "?upsert=replace")
    }

    yardstick_core::conformance_suite!(open_fresh, available);
}

fn opts(create: bool) -> OpenOptions {
    OpenOptions {
        schema: Schema {
            table: "usertable".into(),
            fields: (0..3).map(|i| format!("field{i}")).collect(),
        },
        insert_mode: InsertMode::Insert,
        update_mode: UpdateMode::Update,
        create,
        sessions: 1,
        data_integrity: false,
        scans: true,
    }
}

#[test]
fn bad_credentials_missing_database_and_dead_port_are_one_clear_line() {
    if !available() {
        return;
    }
    let url = server_url();
    let open = |u: &str| open_url(u, &opts(true)).err().unwrap().to_string();
    let e = open(&url.replace("benchpw", "wrongpw"));
    assert!(
        e.contains("wrong user or password") && !e.contains("wrongpw"),
        "{e}"
    );
    let e = open(&format!("{}/no_such_db", url.rsplit_once('/').unwrap().0));
    assert!(e.contains("database no_such_db does not exist"), "{e}");
    let e = open("mysql://bench:benchpw@127.0.0.1:1/ycsb");
    assert!(e.contains("cannot connect to MySQL at 127.0.0.1:1"), "{e}");
    let e = open(&format!("{url}?upsert=merge"));
    assert!(e.contains("upsert=merge is not known"), "{e}");
    let e = open(&format!("{url}?tls_ca=/no/such/ca.pem"));
    assert!(
        e.contains("tls_ca=/no/such/ca.pem is not a readable file"),
        "{e}"
    );
}

#[test]
fn server_variables_are_recorded_and_tls_with_the_test_ca_works() {
    if !available() {
        return;
    }
    let b = open_fresh(&opts(true)).unwrap();
    let info = b.info();
    assert_eq!(info.name, "mariadb");
    for s in [
        "innodb_buffer_pool_size",
        "innodb_flush_log_at_trx_commit",
        "sync_binlog",
        "binlog_format",
        "table_engine",
    ] {
        assert!(info.settings.contains_key(s), "{s} missing: {info:?}");
    }
    assert_eq!(info.settings["tls"], "false");
    assert!(b.disk_bytes().is_some());
    let ca = crate::testing::test_ca();
    let b = open_fresh_with(&opts(true), &format!("?tls_ca={ca}")).unwrap();
    assert_eq!(b.info().settings["tls"], "true");
    let rt = crate::testing::runtime();
    rt.block_on(async {
        let mut s = b.session().await.unwrap();
        let mut ws = WriteSet::default();
        for f in 0..3 {
            ws.push(f).extend_from_slice(b"over tls");
        }
        assert_eq!(s.insert(b"k", &ws).await.status(), Status::Ok);
        let mut c = s.get_mut().conn.take().unwrap();
        let cipher: Option<(String, String)> = c
            .query_first("SHOW SESSION STATUS LIKE 'Ssl_cipher'")
            .await
            .unwrap();
        assert!(
            !cipher.unwrap().1.is_empty(),
            "the session is not encrypted"
        );
    });
}

/// The server's message and error number reach the outcome.
#[test]
fn a_failed_statement_says_what_the_server_said_with_its_error_number() {
    if !available() {
        return;
    }
    let b = open_fresh_with(&opts(true), "").unwrap();
    let rt = crate::testing::runtime();
    rt.block_on(async {
        let mut s = b.session().await.unwrap();
        let c = s.get_mut().conn.as_mut().unwrap();
        c.query_drop("DROP TABLE usertable").await.unwrap();
        let mut out = Record::with_fields(3);
        let o = s.read(b"user1", Fields::All, &mut out).await;
        let detail = o.detail().unwrap_or_default();
        assert_eq!(o.status(), Status::Error, "{detail}");
        assert!(
            detail.contains("usertable' doesn't exist (MySQL error 1146)"),
            "{detail}"
        );
    });
}

#[test]
fn tidb_flavor_clusters_the_key_maps_its_errors_and_asks_for_retries() {
    let sql = Sql::new(
        "usertable",
        &["field0".to_string()],
        Dialect {
            placeholder: Placeholder::Question,
            upsert: Upsert::OnDuplicateKey,
            row_locks: true,
        },
    );
    assert!(create_table(&sql, "InnoDB", true).ends_with("PRIMARY KEY (YCSB_KEY) CLUSTERED)"));
    assert!(create_table(&sql, "InnoDB", false).ends_with("ENGINE=InnoDB"));
    let server = |code| {
        mysql_async::Error::Server(mysql_async::ServerError {
            code,
            message: String::new(),
            state: String::new(),
        })
    };
    assert_eq!(status_of(&server(9007)), Status::Conflict);
    assert_eq!(status_of(&server(9005)), Status::Unavailable);
    let url = "mysql://u:p@127.0.0.1:1/db?flavor=oracle";
    let e = open_url(url, &opts(true)).err().unwrap().to_string();
    assert!(e.contains("flavor=oracle is not known"), "{e}");
    if !available() {
        return;
    }
    // over a MariaDB server whose table exists already (MariaDB has no
    // CLUSTERED keyword): the flavor's client side, recording and retry policy
    let db = fresh_database().unwrap();
    let plain = open_url(&db, &opts(true)).unwrap();
    assert_eq!(plain.conflict_retries(), None);
    let b = open_url(&format!("{db}?flavor=tidb"), &opts(false)).unwrap();
    assert_eq!(b.conflict_retries(), Some(10));
    assert_eq!(b.info().settings["flavor"], "tidb");
    assert_eq!(
        b.info().name,
        "mariadb",
        "the engine name comes from the server's version"
    );
}

/// MyRocks: the MariaDB with the RocksDB engine that scripts/services starts.
mod myrocks {
    use super::*;

    fn server_url() -> String {
        std::env::var("YARDSTICK_MYROCKS_URL")
            .unwrap_or_else(|_| "mysql://bench:benchpw@127.0.0.1:53307/ycsb".into())
    }

    fn available() -> bool {
        crate::testing::server_available(
            "MariaDB with MyRocks",
            &server_url(),
            "scripts/services start myrocks",
        )
    }

    fn open_fresh(opts: &OpenOptions) -> Result<MysqlBinding, BindingError> {
        open_url(
            &format!("{}?engine=rocksdb", fresh_database_on(&server_url())?),
            opts,
        )
    }

    yardstick_core::conformance_suite!(open_fresh, available);

    #[test]
    fn the_tables_are_rocksdb_and_its_settings_are_recorded() {
        if !available() {
            return;
        }
        let b = open_fresh(&opts(true)).unwrap();
        let s = &b.info().settings;
        assert_eq!(s["table_engine"], "ROCKSDB");
        for k in [
            "rocksdb_block_cache_size",
            "rocksdb_flush_log_at_trx_commit",
            "rocksdb_cf_default.compression_type",
            "rocksdb_cf_default.write_buffer_size",
            "rocksdb_plugin",
        ] {
            assert!(s.contains_key(k), "{k} missing: {s:?}");
        }
        assert!(!s.contains_key("innodb_page_size"), "{s:?}");
    }

    #[test]
    fn a_table_of_another_engine_and_a_server_without_rocksdb_are_refused() {
        if !available() {
            return;
        }
        let db = fresh_database_on(&server_url()).unwrap();
        let b = open_url(&format!("{db}?engine=innodb"), &opts(true)).unwrap();
        assert_eq!(b.info().settings["table_engine"], "InnoDB");
        assert!(b.info().settings.contains_key("innodb_buffer_pool_size"));
        let e = open_url(&format!("{db}?engine=rocksdb"), &opts(false))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("usertable exists as InnoDB, not ROCKSDB"), "{e}");
        if !super::available() {
            return;
        }
        let e = open_url(&format!("{}?engine=myrocks", super::server_url()), &opts(true))
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("has no ROCKSDB storage engine") && e.contains("mariadb-plugin-rocksdb"),
            "{e}"
        );
    }
}
