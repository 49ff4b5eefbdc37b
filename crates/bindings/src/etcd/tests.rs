//! The etcd binding against the shared test cluster and private members.
use super::*;
use std::time::Duration;

fn server_url() -> String {
    std::env::var("YARDSTICK_ETCD_URL")
        .unwrap_or_else(|_| "etcd://127.0.0.1:52379,127.0.0.1:52479,127.0.0.1:52579".into())
}

fn available() -> bool {
    let first = server_url().replace(',', "/");
    crate::testing::server_available("etcd", &first, "scripts/services start etcd")
}

fn open_url(url: &str, opts: &OpenOptions) -> Result<EtcdBinding, BindingError> {
    EtcdBinding::open(&Target::parse(url)?, opts)
}

fn open_fresh(opts: &OpenOptions) -> Result<EtcdBinding, BindingError> {
    open_url(
        &format!(
            "{}?prefix={}/",
            server_url(),
            crate::testing::unique_name("conf")
        ),
        opts,
    )
}

yardstick_core::conformance_suite!(open_fresh, available);

fn opts() -> OpenOptions {
    OpenOptions {
        schema: Schema {
            table: "usertable".into(),
            fields: vec!["field0".into()],
        },
        insert_mode: InsertMode::Insert,
        update_mode: UpdateMode::Update,
        create: true,
        sessions: 1,
        data_integrity: false,
        scans: true,
    }
}

/// Serializable reads come from whichever member the channel picks and may
/// trail the leader, so they do not promise read-your-writes (the
/// conformance suite's premise); they must still see a write shortly.
#[test]
fn serializable_reads_are_recorded_and_catch_up_with_writes() {
    if !available() {
        return;
    }
    let url = format!(
        "{}?consistency=serializable&prefix={}/",
        server_url(),
        crate::testing::unique_name("ser")
    );
    let b = open_url(&url, &opts()).unwrap();
    assert_eq!(b.info().settings["reads"], "serializable (local member)");
    let rt = crate::testing::runtime();
    rt.block_on(async {
        let mut s = b.session().await.unwrap();
        let mut ws = WriteSet::default();
        ws.push(0).extend_from_slice(b"v");
        assert_eq!(s.insert(b"k", &ws).await.status(), Status::Ok);
        let mut rec = Record::with_fields(1);
        let mut seen = false;
        for _ in 0..100 {
            if s.read(b"k", Fields::All, &mut rec).await.status() == Status::Ok {
                seen = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(seen, "a serializable read never saw the write");
    });
}

#[test]
fn prefix_ends_bound_scans_to_the_prefix() {
    assert_eq!(prefix_end(b"abc/"), b"abc0".to_vec());
    assert_eq!(prefix_end(b"a\xff"), b"b".to_vec());
    assert_eq!(prefix_end(b""), vec![0]);
}

#[test]
fn cluster_facts_are_recorded_and_bad_urls_are_one_clear_line() {
    let e = open_url("etcd://127.0.0.1:1", &opts())
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("cannot connect to etcd at http://127.0.0.1:1"),
        "{e}"
    );
    let e = open_url(&format!("{}?consistency=eventual", server_url()), &opts())
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("consistency=eventual is not known"), "{e}");
    if !available() {
        return;
    }
    let b = open_fresh(&opts()).unwrap();
    let info = b.info();
    assert!(info.version.starts_with("3."), "{}", info.version);
    assert_eq!(info.settings["cluster_members"], "3");
    assert_eq!(info.settings["reads"], "linearizable (quorum)");
}

/// A private single-member etcd serving TLS with the test CA's certificate.
#[test]
fn tls_with_the_test_ca_connects_and_is_recorded() {
    if !available() {
        return;
    }
    let tls = std::path::PathBuf::from(crate::testing::test_ca());
    let tls = tls.parent().unwrap();
    let (mut etcd, client, _dir) = private_member(Some(tls), &[]);
    let b = open_when_up(&format!(
        "etcd://127.0.0.1:{client}?tls_ca={}",
        crate::testing::test_ca()
    ));
    assert_eq!(b.info().settings["tls"], "true");
    let rt = crate::testing::runtime();
    rt.block_on(async {
        let mut s = b.session().await.unwrap();
        let mut ws = WriteSet::default();
        ws.push(0).extend_from_slice(b"over tls");
        assert_eq!(s.insert(b"k", &ws).await.status(), Status::Ok);
    });
    // plain HTTP to a TLS member fails at open, in one line
    let e = open_url(
        &format!("etcd://127.0.0.1:{client}?connect_timeout=2s&timeout=2s"),
        &opts(),
    )
    .err()
    .unwrap()
    .to_string();
    assert!(e.contains("cannot connect to etcd"), "{e}");
    let _ = etcd.kill();
    let _ = etcd.wait();
}

/// A private single-member etcd on free ports, serving TLS with the test
/// certificate in `tls` when given; its process, client port and data directory.
fn private_member(
    tls: Option<&std::path::Path>,
    extra: &[&str],
) -> (std::process::Child, u16, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let port = |l: &std::net::TcpListener| l.local_addr().unwrap().port();
    let (a, b) = (
        std::net::TcpListener::bind("127.0.0.1:0").unwrap(),
        std::net::TcpListener::bind("127.0.0.1:0").unwrap(),
    );
    let (client, peer) = (port(&a), port(&b));
    drop((a, b));
    let scheme = if tls.is_some() { "https" } else { "http" };
    let mut args: Vec<String> = [
        "--name",
        "t",
        "--data-dir",
        dir.path().join("d").to_str().unwrap(),
        "--listen-client-urls",
        &format!("{scheme}://127.0.0.1:{client}"),
        "--advertise-client-urls",
        &format!("{scheme}://127.0.0.1:{client}"),
        "--listen-peer-urls",
        &format!("http://127.0.0.1:{peer}"),
        "--initial-advertise-peer-urls",
        &format!("http://127.0.0.1:{peer}"),
        "--initial-cluster",
        &format!("t=http://127.0.0.1:{peer}"),
        "--unsafe-no-fsync",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    if let Some(tls) = tls {
        for (flag, file) in [("--cert-file", "server.crt"), ("--key-file", "server.key")] {
            args.push(flag.into());
            args.push(tls.join(file).display().to_string());
        }
    }
    args.extend(extra.iter().map(|s| s.to_string()));
    let etcd = std::process::Command::new("etcd")
        .args(&args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("etcd runs");
    (etcd, client, dir)
}

/// Opens `url`, retrying while the member starts.
fn open_when_up(url: &str) -> EtcdBinding {
    let mut opened = Err(BindingError::Io("not tried".into()));
    for _ in 0..100 {
        opened = open_url(url, &opts());
        if opened.is_ok() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    opened.unwrap()
}

fn etcdctl(client: u16, args: &[&str]) {
    let out = std::process::Command::new("etcdctl")
        .env("ETCDCTL_API", "3")
        .args(["--endpoints", &format!("127.0.0.1:{client}")])
        .args(args)
        .output()
        .expect("etcdctl runs");
    assert!(
        out.status.success(),
        "etcdctl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// With a login, the token goes with every request and is renewed when the
/// member has dropped it (a 1 s token lifetime here).
#[test]
fn a_login_is_used_and_renewed_and_a_wrong_password_is_one_clear_line() {
    if !available() {
        return;
    }
    let (mut etcd, client, _dir) = private_member(None, &["--auth-token-ttl", "1"]);
    open_when_up(&format!("etcd://127.0.0.1:{client}"));
    etcdctl(
        client,
        &["user", "add", "root:rootpw", "--interactive=false"],
    );
    etcdctl(client, &["auth", "enable"]);
    let b = open_url(&format!("etcd://root:rootpw@127.0.0.1:{client}"), &opts()).unwrap();
    let rt = crate::testing::runtime();
    rt.block_on(async {
        let mut s = b.session().await.unwrap();
        let mut ws = WriteSet::default();
        ws.push(0).extend_from_slice(b"logged in");
        assert_eq!(s.insert(b"k", &ws).await.status(), Status::Ok);
        tokio::time::sleep(Duration::from_millis(2500)).await;
        let mut rec = Record::with_fields(1);
        let r = s.read(b"k", Fields::All, &mut rec).await;
        assert_eq!(r.status(), Status::Ok, "{:?}", r.detail());
    });
    let e = open_url(&format!("etcd://root:wrong@127.0.0.1:{client}"), &opts())
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("refused the login: wrong user or password"),
        "{e}"
    );
    assert!(!e.contains("wrong@"), "{e}");
    let _ = etcd.kill();
    let _ = etcd.wait();
}

#[test]
fn grpc_statuses_map_to_outcomes_the_channel_timeout_among_them() {
    let s = |code, message: &str| status_of(&tonic::Status::new(code, message));
    assert_eq!(s(tonic::Code::DeadlineExceeded, ""), Status::Timeout);
    assert_eq!(s(tonic::Code::Cancelled, "Timeout expired"), Status::Timeout);
    assert_eq!(s(tonic::Code::Cancelled, "operation was canceled"), Status::Unavailable);
    assert_eq!(s(tonic::Code::Unavailable, ""), Status::Unavailable);
    assert_eq!(s(tonic::Code::InvalidArgument, "bad key"), Status::Error);
}
