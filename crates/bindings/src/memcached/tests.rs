//! Tests of the memcached binding: the protocol client against scripted
//! replies, the conformance suite against the memcached scripts/services starts.
use super::*;

fn server_url() -> String {
    std::env::var("YARDSTICK_MEMCACHED_URL")
        .unwrap_or_else(|_| "memcached://127.0.0.1:51211".into())
}

fn available() -> bool {
    crate::testing::server_available(
        "memcached",
        &server_url(),
        "scripts/services start memcached",
    )
}

fn open_url(url: &str, opts: &OpenOptions) -> Result<MemcachedBinding, BindingError> {
    MemcachedBinding::open(&Target::parse(url)?, opts)
}

fn open_fresh(opts: &OpenOptions) -> Result<MemcachedBinding, BindingError> {
    open_url(
        &format!(
            "{}?prefix={}:",
            server_url(),
            crate::testing::unique_name("conf")
        ),
        opts,
    )
}

yardstick_core::conformance_suite!(open_fresh, available, without_scan);

fn opts() -> OpenOptions {
    OpenOptions {
        schema: Schema {
            table: "usertable".into(),
            fields: vec!["field0".into(), "field1".into()],
        },
        insert_mode: InsertMode::Insert,
        update_mode: UpdateMode::Update,
        create: true,
        sessions: 1,
        data_integrity: false,
        scans: false,
    }
}

#[test]
fn unreachable_server_and_unsupported_urls_are_one_clear_line() {
    let e = open_url("memcached://127.0.0.1:1", &opts())
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("cannot connect to memcached at 127.0.0.1:1"),
        "{e}"
    );
    let e = open_url("memcached://u:pw@127.0.0.1:1", &opts())
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("no authentication") && !e.contains("pw@"), "{e}");
    let e = open_url("memcached://127.0.0.1:1?prefix=a%20b&x=1", &opts())
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("unknown option 'x'"), "{e}");
}

#[test]
fn error_lines_are_the_servers_errors_with_their_kind() {
    let e = server_error(b"SERVER_ERROR out of memory storing object");
    assert_eq!((e.code.as_str(), e.message.as_str()), ("SERVER_ERROR", "out of memory storing object"));
    assert_eq!(
        e.to_string(),
        "out of memory storing object (memcached SERVER_ERROR)"
    );
    assert_eq!(server_error(b"ERROR").code, "ERROR");
}

#[test]
fn version_and_settings_are_recorded_and_oversized_values_are_errors() {
    if !available() {
        return;
    }
    let b = open_fresh(&opts()).unwrap();
    let info = b.info();
    assert!(info.version.starts_with("1."), "{}", info.version);
    assert!(info.settings.contains_key("item_size_max"), "{info:?}");
    let rt = crate::testing::runtime();
    rt.block_on(async {
        let mut s = b.session().await.unwrap();
        let mut ws = WriteSet::default();
        ws.push(0).resize(3 << 20, b'x');
        ws.push(1).extend_from_slice(b"y");
        let out = s.insert(b"too-big", &ws).await;
        assert_eq!(out.status(), Status::Error);
        let detail = out.detail().unwrap_or("");
        // the server's own error line, with its kind as the code
        assert!(
            detail.contains("too large") && detail.contains("(memcached SERVER_ERROR)"),
            "{out:?}"
        );
        // the connection is still usable afterwards
        let mut rec = Record::with_fields(2);
        assert_eq!(
            s.read(b"too-big", Fields::All, &mut rec).await.status(),
            Status::NotFound
        );
    });
}

/// A private memcached serving TLS (-Z) with the test CA's certificate.
#[test]
fn tls_with_the_test_ca_reads_and_writes() {
    if !available() {
        return;
    }
    let ca = crate::testing::test_ca();
    let tls = std::path::Path::new(&ca).parent().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let certs = format!(
        "ssl_chain_cert={},ssl_key={}",
        tls.join("server.crt").display(),
        tls.join("server.key").display()
    );
    let root = std::process::Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false);
    let mut cmd = std::process::Command::new("memcached");
    cmd.args([
        "-Z",
        "-o",
        &certs,
        "-l",
        "127.0.0.1",
        "-p",
        &port.to_string(),
        "-U",
        "0",
    ]);
    if root {
        cmd.args(["-u", "nobody"]);
    }
    let mut server = cmd
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("memcached runs");
    let url = format!("memcached://127.0.0.1:{port}?tls_ca={ca}");
    let mut opened = Err(BindingError::Io("not tried".into()));
    for _ in 0..50 {
        opened = open_url(&url, &opts());
        if opened.is_ok() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let b = opened.unwrap();
    assert_eq!(b.info().settings["tls"], "true");
    let rt = crate::testing::runtime();
    rt.block_on(async {
        let mut s = b.session().await.unwrap();
        let mut ws = WriteSet::default();
        ws.push(0).extend_from_slice(b"over tls");
        ws.push(1).extend_from_slice(b"too");
        assert_eq!(s.insert(b"k", &ws).await.status(), Status::Ok);
        let mut rec = Record::with_fields(2);
        assert_eq!(s.read(b"k", Fields::All, &mut rec).await.status(), Status::Ok);
        assert_eq!(rec.get(0), Some(&b"over tls"[..]));
    });
    // a plain client cannot talk to the TLS listener
    let plain = format!("memcached://127.0.0.1:{port}?connect_timeout=2s");
    assert!(open_url(&plain, &opts()).is_err());
    let _ = server.kill();
    let _ = server.wait();
}
