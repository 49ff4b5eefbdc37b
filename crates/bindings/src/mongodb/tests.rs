//! Tests of the MongoDB binding against the FerretDB scripts/services starts.
use super::*;

fn server_url() -> String {
    std::env::var("YARDSTICK_MONGODB_URL")
        .unwrap_or_else(|_| "mongodb://127.0.0.1:57017/ycsb".into())
}

fn available() -> bool {
    crate::testing::server_available(
        "MongoDB protocol server (FerretDB)",
        &server_url(),
        "scripts/services start ferretdb",
    )
}

fn open_url(url: &str, opts: &OpenOptions) -> Result<MongoBinding, BindingError> {
    MongoBinding::open(&Target::parse(url)?, opts)
}

/// A database per check: checks share the server but no documents.
fn open_fresh(opts: &OpenOptions) -> Result<MongoBinding, BindingError> {
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
        insert_mode: InsertMode::Insert,
        update_mode: UpdateMode::Update,
        create,
        sessions: 1,
        data_integrity: false,
        scans: true,
    }
}

#[test]
fn write_concern_and_server_are_recorded_and_bad_urls_are_one_clear_line() {
    let e = open_url("mongodb://127.0.0.1:1", &opts(true))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("names no database"), "{e}");
    let e = open_url(
        "mongodb://u:secretpw@127.0.0.1:1/db?serverSelectionTimeoutMS=500",
        &opts(true),
    )
    .err()
    .unwrap()
    .to_string();
    assert!(
        e.contains("cannot connect to MongoDB at 127.0.0.1:1") && !e.contains("secretpw"),
        "{e}"
    );
    if !available() {
        return;
    }
    let base = server_url();
    let url = format!(
        "{}/{}?w=1&journal=true",
        base.rsplit_once('/').unwrap().0,
        crate::testing::unique_name("wc")
    );
    let info = open_url(&url, &opts(true)).unwrap().info();
    assert_eq!(info.name, "ferretdb");
    assert!(
        info.settings["write_concern"].contains("Nodes(1)"),
        "{info:?}"
    );
    assert!(info.settings.contains_key("ferretdb_version"));
    let never = format!(
        "{}/never_loaded_{}",
        base.rsplit_once('/').unwrap().0,
        std::process::id()
    );
    let e = open_url(&never, &opts(false)).err().unwrap().to_string();
    assert!(e.contains("collection usertable does not exist"), "{e}");
}
