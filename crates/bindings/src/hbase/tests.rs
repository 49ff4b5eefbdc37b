//! Tests of the HBase binding: options and errors without a server, the
//! conformance suite against the HBase and Thrift2 gateway scripts/services starts.
use super::*;

/// The test server's URL (scripts/services hbase): the gateway, and the
/// master's info port for the version.
fn server_url() -> String {
    std::env::var("YARDSTICK_HBASE_URL")
        .unwrap_or_else(|_| "hbase://127.0.0.1:59090?info=127.0.0.1:56010".into())
}

/// The server's URL with namespace `ns` and the options `extra` added.
fn url_in(ns: &str, extra: &str) -> String {
    let t = Target::parse(&server_url()).unwrap();
    let authority = t.rest.split('/').next().unwrap_or("");
    let mut query: Vec<String> = t.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
    query.extend((!extra.is_empty()).then(|| extra.to_string()));
    format!("hbase://{authority}/{ns}?{}", query.join("&"))
}

fn available() -> bool {
    crate::testing::server_available("HBase", &server_url(), "scripts/services start hbase")
}

fn open_url(url: &str, opts: &OpenOptions) -> Result<HbaseBinding, BindingError> {
    HbaseBinding::open(&Target::parse(url)?, opts)
}

/// A namespace of its own for each check: a fresh, empty table.
fn open_fresh(opts: &OpenOptions) -> Result<HbaseBinding, BindingError> {
    open_url(&url_in(&crate::testing::unique_name("conf"), ""), opts)
}

yardstick_core::conformance_suite!(open_fresh, available);

fn opts() -> OpenOptions {
    yardstick_core::conformance::options(InsertMode::Insert, UpdateMode::Update)
}

#[test]
fn bad_options_and_an_unreachable_gateway_are_one_clear_line() {
    let err = |url: &str| open_url(url, &opts()).err().unwrap().to_string();
    let e = err("hbase://127.0.0.1:1");
    assert!(e.contains("cannot connect to the HBase Thrift2 gateway at 127.0.0.1:1"), "{e}");
    assert!(err("hbase://127.0.0.1:1?durability=sometimes").contains("durability=sometimes is not one of default, skip_wal"));
    assert!(err("hbase://127.0.0.1:1?compression=rar").contains("compression=rar is not one of none, gz"));
    assert!(err("hbase://127.0.0.1:1/a-b").contains("'a-b' is not an HBase namespace"));
    assert!(err("hbase://u:p@127.0.0.1:1").contains("takes no user:password"));
    assert!(err("hbase://127.0.0.1:1?family=a:b").contains("family must be"));
    assert!(err("hbase://127.0.0.1:1?colour=red").contains("unknown option 'colour'"));
}

#[test]
fn a_missing_table_is_refused_with_the_fix() {
    if !available() {
        return;
    }
    let url = url_in(&crate::testing::unique_name("none"), "");
    let e = open_url(&url, &OpenOptions { create: false, ..opts() })
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("run `yardstick load` first"), "{e}");
}

#[test]
fn the_result_records_the_version_and_the_familys_settings() {
    if !available() {
        return;
    }
    let url = url_in(&crate::testing::unique_name("info"), "durability=skip_wal");
    let b = open_url(&url, &opts()).unwrap();
    let info = b.info();
    assert_eq!(info.name, "hbase");
    assert!(info.version.starts_with("2."), "{}", info.version);
    let s = &info.settings;
    assert_eq!(s["durability"], "skip_wal");
    assert!(s["table"].ends_with(":usertable (created by this run, one region)"), "{}", s["table"]);
    assert_eq!(s["family"], "family");
    assert_eq!(s["family max versions"], "1");
    assert_eq!(s["family compression"], "NONE");
}
