//! Tests of the PostgreSQL binding: URL and flavour handling without a server,
//! the conformance suite and server behaviour against the PostgreSQL that
//! scripts/services starts.
use super::*;

fn server_url() -> String {
    std::env::var("YARDSTICK_PG_URL")
        .unwrap_or_else(|_| "postgres://bench:benchpw@127.0.0.1:55432/ycsb".into())
}

fn available() -> bool {
    crate::testing::server_available(
        "PostgreSQL",
        &server_url(),
        "scripts/services start postgres",
    )
}

/// A fresh database per check, so checks run in parallel without sharing rows.
fn open_fresh(opts: &OpenOptions) -> Result<PostgresBinding, BindingError> {
    open_fresh_with(opts, "")
}

fn open_fresh_with(opts: &OpenOptions, query: &str) -> Result<PostgresBinding, BindingError> {
    let name = crate::testing::unique_name("conf");
    let base = server_url();
    run_cold(std::time::Duration::from_secs(60), async {
        let client = connect(&Endpoint {
            config: Config::from_str(&base).unwrap(),
            tls: None,
        })
        .await?;
        // the databases of earlier test processes, once per process
        static SWEPT: std::sync::Once = std::sync::Once::new();
        if !SWEPT.is_completed() {
            let rows = client
                .query(
                    "SELECT datname FROM pg_database WHERE datname LIKE 'conf\\_%'",
                    &[],
                )
                .await
                .map_err(|e| BindingError::Io(e.to_string()))?;
            let names = rows.iter().map(|r| r.get::<_, String>(0));
            for old in crate::testing::left_behind("conf", names) {
                let _ = client
                    .batch_execute(&format!("DROP DATABASE IF EXISTS {old}"))
                    .await;
            }
            SWEPT.call_once(|| ());
        }
        client
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .await
            .map_err(|e| BindingError::Io(e.to_string()))
    })?;
    let url = format!("{}/{name}{query}", base.rsplit_once('/').unwrap().0);
    PostgresBinding::open(&Target::parse(&url)?, opts)
}

yardstick_core::conformance_suite!(open_fresh, available);

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
    let open = |u: &str| {
        PostgresBinding::open(&Target::parse(u).unwrap(), &opts(true))
            .err()
            .unwrap()
            .to_string()
    };
    let wrong = url.replace("benchpw", "wrongpw");
    let e = open(&wrong);
    assert!(
        e.contains("wrong user or password") && !e.contains("wrongpw"),
        "{e}"
    );
    let e = open(&format!("{}/no_such_db", url.rsplit_once('/').unwrap().0));
    assert!(e.contains("database no_such_db does not exist"), "{e}");
    let e = open("postgres://bench:benchpw@127.0.0.1:1/ycsb");
    // the driver's own text stops at "error connecting to server"
    assert!(
        e.contains("cannot connect to PostgreSQL at 127.0.0.1:1") && e.contains("refused"),
        "{e}"
    );
}

/// The server's message and SQLSTATE reach the outcome, not the driver's
/// "db error".
#[test]
fn a_failed_statement_says_what_the_server_said_with_its_sqlstate() {
    if !available() {
        return;
    }
    let b = open_fresh(&opts(true)).unwrap();
    crate::testing::runtime().block_on(async {
        let mut s = b.session().await.unwrap();
        let live = s.get_mut().live().await.unwrap();
        live.client
            .batch_execute("DROP TABLE usertable")
            .await
            .unwrap();
        let mut out = Record::with_fields(3);
        let o = s.read(b"user1", Fields::All, &mut out).await;
        let detail = o.detail().unwrap_or_default();
        assert_eq!(o.status(), Status::Error, "{detail}");
        assert!(
            detail.contains("relation \"usertable\" does not exist (SQLSTATE 42P01)"),
            "{detail}"
        );
    });
}

#[test]
fn server_version_and_settings_are_recorded() {
    if !available() {
        return;
    }
    let b = open_fresh(&opts(true)).unwrap();
    let info = b.info();
    assert_eq!(info.name, "postgresql");
    assert!(
        info.version.starts_with(char::is_numeric),
        "{}",
        info.version
    );
    for s in [
        "shared_buffers",
        "synchronous_commit",
        "fsync",
        "wal_level",
        "default_transaction_isolation",
    ] {
        assert!(info.settings.contains_key(s), "{s} missing");
    }
    assert!(b.disk_bytes().is_some());
}

fn batch(keys: &[&str]) -> Batch {
    let mut b = Batch::default();
    for k in keys {
        let (key, values) = b.push();
        key.extend_from_slice(k.as_bytes());
        for f in 0..3 {
            // COPY's reserved characters must survive the round trip
            values
                .push(f)
                .extend_from_slice(format!("{k}\t\\N\n{f}").as_bytes());
        }
    }
    b
}

#[test]
fn copy_batches_insert_and_refuse_duplicates_and_upserts() {
    if !available() {
        return;
    }
    let upsert = OpenOptions {
        insert_mode: InsertMode::Upsert,
        ..opts(true)
    };
    let e = open_fresh_with(&upsert, "?batch=copy")
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("batch=copy cannot upsert"), "{e}");
    let b = open_fresh_with(&opts(true), "?batch=copy").unwrap();
    assert!(b.info().settings["batch"].starts_with("COPY"));
    crate::testing::runtime().block_on(async {
        let mut s = b.session().await.unwrap();
        let out = s.insert_batch(&batch(&["k1", "k2", "k3"])).await;
        assert_eq!((out.status(), out.rows()), (Status::Ok, 3));
        let mut rec = Record::with_fields(3);
        assert_eq!(
            s.read(b"k2", Fields::All, &mut rec).await.status(),
            Status::Ok
        );
        assert_eq!(rec.get(1), Some(&b"k2\t\\N\n1"[..]));
        let out = s.insert_batch(&batch(&["k4", "k1"])).await;
        assert_eq!(out.status(), Status::DuplicateKey);
        // the failed COPY left the connection usable
        assert_eq!(
            s.read(b"k4", Fields::All, &mut rec).await.status(),
            Status::NotFound
        );
    });
}

#[test]
fn multi_row_batches_split_at_the_parameter_limit() {
    if !available() {
        return;
    }
    let b = open_fresh(&opts(true)).unwrap();
    let keys: Vec<String> = (0..20_000).map(|i| format!("key{i:05}")).collect();
    let refs: Vec<&str> = keys.iter().map(String::as_str).collect();
    crate::testing::runtime().block_on(async {
        let mut s = b.session().await.unwrap();
        // 20,000 rows x 4 parameters is more than 65,535: two statements
        let out = s.insert_batch(&batch(&refs)).await;
        assert_eq!((out.status(), out.rows()), (Status::Ok, 20_000), "{out:?}");
        let mut rows = ScanRows::with_fields(3);
        s.scan(b"key19998", 10, Fields::All, &mut rows).await;
        assert_eq!(rows.len(), 2);
    });
}

#[test]
fn tls_verifies_the_server_against_the_given_ca() {
    if !available() {
        return;
    }
    let ca = crate::testing::test_ca();
    let b = open_fresh_with(&opts(true), &format!("?sslrootcert={ca}")).unwrap();
    assert_eq!(b.info().settings["tls"], "true");
    let b = open_fresh_with(&opts(true), "?sslmode=require&tls_insecure=true").unwrap();
    assert_eq!(b.info().settings["tls"], "true");
    let b = open_fresh(&opts(true)).unwrap();
    assert_eq!(b.info().settings["tls"], "false");
    // the test CA is not among the system's roots
    let e = open_fresh_with(&opts(true), "?sslmode=require")
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("cannot connect to PostgreSQL"), "{e}");
    let e = open_fresh_with(&opts(true), "?sslrootcert=/no/such.pem")
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("cannot read sslrootcert=/no/such.pem"), "{e}");
}

#[test]
fn flavors_change_the_dialect_the_schema_and_the_retry_policy() {
    let f = vec!["field0 TEXT".to_string()];
    assert_eq!(
        create_table("usertable", &f, Flavor::Yugabyte, Some("HASH")),
        "CREATE TABLE IF NOT EXISTS usertable (YCSB_KEY VARCHAR(255), field0 TEXT, PRIMARY KEY (YCSB_KEY HASH))"
    );
    assert!(create_table("usertable", &f, Flavor::Postgres, None)
        .contains("COLLATE \"C\" PRIMARY KEY"));
    assert!(!create_table("usertable", &f, Flavor::Cockroach, None).contains("COLLATE"));
    let t = |u: &str| Target::parse(u).unwrap();
    let url = "postgres://u:p@127.0.0.1:1/db?flavor=oracle";
    let e = PostgresBinding::open(&t(url), &opts(true))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("flavor=oracle is not known"), "{e}");
    let url = "postgres://u:p@127.0.0.1:1/db?sharding=hash";
    let e = PostgresBinding::open(&t(url), &opts(true))
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("sharding applies to flavor=yugabyte only"),
        "{e}"
    );
    if !available() {
        return;
    }
    assert_eq!(open_fresh(&opts(true)).unwrap().conflict_retries(), None);
    // the flavor's retry policy, over a PostgreSQL server that speaks the same protocol
    let b = open_fresh_with(&opts(true), "?flavor=cockroach").unwrap();
    assert_eq!(
        (b.conflict_retries(), b.info().name.as_str()),
        (Some(10), "cockroachdb")
    );
}
