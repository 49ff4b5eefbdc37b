//! Tests of the CQL binding: options without a server, the conformance suite
//! and server behaviour against the Cassandra that scripts/services starts.
use super::*;

fn server_url() -> String {
    std::env::var("YARDSTICK_CQL_URL").unwrap_or_else(|_| "cql://127.0.0.1:59042/ycsb".into())
}

fn available() -> bool {
    crate::testing::server_available(
        "Cassandra",
        &server_url(),
        "scripts/services start cassandra",
    )
}

fn open_url(url: &str, opts: &OpenOptions) -> Result<CqlBinding, BindingError> {
    CqlBinding::open(&Target::parse(url)?, opts)
}

/// A keyspace per check: checks share the node but no rows.
fn open_fresh(opts: &OpenOptions) -> Result<CqlBinding, BindingError> {
    let base = server_url();
    let url = format!(
        "{}/{}",
        base.rsplit_once('/').unwrap().0,
        crate::testing::unique_name("conf")
    );
    open_url(&url, opts)
}

yardstick_core::conformance_suite!(open_fresh, available);

fn opts(create: bool) -> OpenOptions {
    OpenOptions {
        schema: Schema {
            table: "usertable".into(),
            fields: vec!["field0".into()],
        },
        insert_mode: InsertMode::Upsert,
        update_mode: UpdateMode::Upsert,
        create,
        sessions: 1,
        data_integrity: false,
        scans: true,
    }
}

#[test]
fn bad_urls_missing_keyspaces_and_dead_nodes_are_one_clear_line() {
    let e = open_url("cql://127.0.0.1:9042", &opts(true))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("names no keyspace"), "{e}");
    let e = open_url("cql://127.0.0.1:9042/ks?consistency=most", &opts(true))
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("consistency=most is not a CQL consistency level"),
        "{e}"
    );
    let e = open_url("cql://u:secretpw@127.0.0.1:1/ks", &opts(true))
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("cannot connect to Cassandra at 127.0.0.1:1") && !e.contains("secretpw"),
        "{e}"
    );
    if !available() {
        return;
    }
    let url = format!("{}_never_loaded", server_url());
    let e = open_url(&url, &opts(false)).err().unwrap().to_string();
    assert!(
        e.contains("does not exist") && e.contains("yardstick load"),
        "{e}"
    );
}

#[test]
fn consistency_replication_and_version_are_recorded() {
    if !available() {
        return;
    }
    let base = server_url();
    let url = format!(
        "{}/{}?consistency=quorum",
        base.rsplit_once('/').unwrap().0,
        crate::testing::unique_name("info")
    );
    let info = open_url(&url, &opts(true)).unwrap().info();
    assert!(info.version.starts_with("5."), "{}", info.version);
    assert_eq!(info.settings["consistency"], "Quorum");
    assert_eq!(info.settings["replication_factor"], "1");
    assert!(
        info.settings["writes"].contains("insert: INSERT;"),
        "{info:?}"
    );
}

#[test]
fn tls_with_the_test_ca_reads_and_writes_and_an_unknown_issuer_is_refused() {
    if !available() {
        return;
    }
    // the test node accepts plain and TLS clients on one port
    let ca = crate::testing::test_ca();
    let base = server_url();
    let url = format!(
        "{}/{}?tls_ca={ca}",
        base.rsplit_once('/').unwrap().0,
        crate::testing::unique_name("tls")
    );
    let b = open_url(&url, &opts(true)).unwrap();
    assert_eq!(b.info().settings["tls"], "true");
    let rt = crate::testing::runtime();
    rt.block_on(async {
        let mut s = b.session().await.unwrap();
        let mut ws = WriteSet::default();
        ws.push(0).extend_from_slice(b"over tls");
        assert_eq!(s.insert(b"user1", &ws).await.status(), Status::Ok);
        let mut rec = Record::with_fields(1);
        let read = s.read(b"user1", Fields::All, &mut rec).await;
        assert_eq!(read.status(), Status::Ok);
        assert_eq!(rec.get(0), Some(&b"over tls"[..]));
    });
    // trusting only the server's own leaf certificate: its issuer is unknown
    let leaf = std::path::Path::new(&ca).with_file_name("server.crt");
    let url = format!(
        "{}/{}?tls_ca={}&connect_timeout=5s",
        base.rsplit_once('/').unwrap().0,
        crate::testing::unique_name("tls"),
        leaf.display()
    );
    let e = open_url(&url, &opts(true)).err().unwrap().to_string();
    assert!(
        e.contains("cannot connect to Cassandra") && !e.contains('\n'),
        "{e}"
    );
    let e = open_url(
        "cql://127.0.0.1:59042/ks?tls_ca=/nonexistent/ca.pem",
        &opts(true),
    )
    .err()
    .unwrap()
    .to_string();
    assert!(e.contains("cannot read tls_ca=/nonexistent/ca.pem"), "{e}");
}

#[test]
fn a_session_keeps_the_schema_of_its_own_keyspace_only() {
    if !available() {
        return;
    }
    // two keyspaces on the node: the session knows only its own (with its
    // replication, for token-aware routing), not the node's others
    let other = open_fresh(&opts(true)).unwrap();
    let b = open_fresh(&opts(true)).unwrap();
    let rt = crate::testing::runtime();
    let known: Vec<String> = rt.block_on(async {
        let s = connect(&b.inner, true).await.unwrap();
        let state = s.get_cluster_state();
        state.keyspaces_iter().map(|(k, _)| k.to_string()).collect()
    });
    assert_eq!(known, std::slice::from_ref(&b.inner.keyspace));
    assert_ne!(other.inner.keyspace, b.inner.keyspace);
}
