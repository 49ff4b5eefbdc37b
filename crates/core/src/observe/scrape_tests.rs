use super::*;
use crate::observe::Kind;
use std::net::TcpListener;

const PAGE: &str = r#"# HELP node_cpu_seconds_total Seconds the CPUs spent in each mode.
# TYPE node_cpu_seconds_total counter
node_cpu_seconds_total{cpu="0",mode="idle"} 100.5
node_cpu_seconds_total{cpu="0",mode="user"} 10
node_cpu_seconds_total{cpu="1",mode="user"} 5.5
# TYPE node_load1 gauge
node_load1 0.75
# TYPE node_network_receive_bytes_total counter
node_network_receive_bytes_total{device="lo"} 1e3
# TYPE go_gc_duration_seconds summary
go_gc_duration_seconds{quantile="0.5"} 0.001
# TYPE weird gauge
weird{path="a\"}b",x="1"} 7 1700000000000
untyped_total 3
"#;

fn get(v: &[Value], n: &str) -> Option<(f64, Kind)> {
    v.iter().find(|x| x.name == n).map(|x| (x.value, x.kind))
}

#[test]
fn the_default_set_is_summed_over_the_labels_it_does_not_name() {
    let (v, cut) = parse_page(PAGE, &Keep::Default, "remote.h:9100");
    assert_eq!(cut, 0);
    assert_eq!(
        get(&v, "remote.h:9100.node_cpu_seconds_total.mode=user"),
        Some((15.5, Kind::Counter))
    );
    assert_eq!(
        get(&v, "remote.h:9100.node_cpu_seconds_total.mode=idle"),
        Some((100.5, Kind::Counter))
    );
    assert_eq!(
        get(&v, "remote.h:9100.node_load1"),
        Some((0.75, Kind::Gauge))
    );
    assert_eq!(
        get(
            &v,
            "remote.h:9100.node_network_receive_bytes_total.device=lo"
        ),
        Some((1000.0, Kind::Counter))
    );
    // not in the set
    assert_eq!(v.len(), 4, "{v:?}");
}

#[test]
fn patterns_keep_every_label_set_and_read_escaped_labels() {
    let keep = Keep::Patterns(vec!["weird".into(), "untyped*".into(), "node_cpu_*".into()]);
    let (v, _) = parse_page(PAGE, &keep, "p");
    assert_eq!(get(&v, "p.weird.path=a\"}b.x=1"), Some((7.0, Kind::Gauge)));
    // untyped, but named like a counter
    assert_eq!(get(&v, "p.untyped_total"), Some((3.0, Kind::Counter)));
    assert_eq!(
        get(&v, "p.node_cpu_seconds_total.cpu=1.mode=user"),
        Some((5.5, Kind::Counter))
    );
    assert!(glob("pg_stat_*", "pg_stat_database_blks_hit") && !glob("pg_*_x", "pg_stat"));
    assert!(glob("*", "") && glob("a*b*c", "axxbyyc") && !glob("a*b", "ab_c"));
}

#[test]
fn too_many_series_are_cut_at_the_cap() {
    let page: String = (0..MAX_SERIES + 7)
        .map(|i| format!("m{{i=\"{i}\"}} 1\n"))
        .collect();
    let (v, cut) = parse_page(&page, &Keep::Patterns(vec!["m".into()]), "p");
    assert_eq!((v.len(), cut), (MAX_SERIES, 7));
}

#[test]
fn endpoints_are_parsed_and_their_passwords_masked() {
    let e = Endpoint::parse("http://scraper:s3cr3t-scrape@127.0.0.1:9100/metrics").unwrap();
    assert_eq!(e.host_port, "127.0.0.1:9100");
    assert_eq!(e.path, "/metrics");
    assert!(!e.shown.contains("s3cr3t-scrape"), "{}", e.shown);
    assert_eq!(
        Endpoint::parse("http://127.0.0.1:9187").unwrap().path,
        "/metrics"
    );
    for (bad, why) in [
        ("https://h:1/metrics", "https is not supported"),
        (
            "ftp://h:1",
            "give on, off or an exporter's http://HOST:PORT/metrics",
        ),
        ("http://localhost/metrics", "name the exporter's port"),
    ] {
        let e = Endpoint::parse(bad).unwrap_err();
        assert!(e.contains(why), "{bad}: {e}");
    }
    assert_eq!(
        dechunk("5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"),
        "hello world"
    );
}

/// Answers one request on a free loopback port with `head` and a page
/// whose node_load1 says whether the request carried u:s3cr3t-basic.
fn serve_once(head: &'static str) -> String {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        if let Ok((mut s, _)) = l.accept() {
            let mut request = Vec::new();
            let mut buf = [0u8; 4096];
            while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                match s.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => request.extend_from_slice(&buf[..n]),
                }
            }
            let text = String::from_utf8_lossy(&request);
            let auth = text.contains("Authorization: Basic dTpzM2NyM3QtYmFzaWM=");
            let body = format!("node_load1 {}\n", u8::from(auth) * 2);
            let _ = write!(s, "{head}\r\nContent-Length: {}\r\n\r\n{body}", body.len());
        }
    });
    addr
}

#[test]
fn a_page_is_fetched_with_its_credentials_and_a_dead_exporter_fails_the_sample() {
    let addr = serve_once("HTTP/1.1 200 OK");
    let e = Endpoint::parse(&format!("http://u:s3cr3t-basic@{addr}/metrics")).unwrap();
    let mut s = Scrape::new(e, Keep::Default);
    let v = s.sample().unwrap();
    assert_eq!(
        get(&v, &format!("remote.{addr}.node_load1")),
        Some((2.0, Kind::Gauge))
    );
    let addr = serve_once("HTTP/1.1 404 Not Found");
    let e = Endpoint::parse(&format!("http://{addr}/nope")).unwrap();
    assert_eq!(e.fetch().unwrap_err(), "HTTP 404 for /nope");
    let dead = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let mut s = Scrape::new(
        Endpoint::parse(&format!("http://{dead}/metrics")).unwrap(),
        Keep::Default,
    );
    match s.sample() {
        Err(SourceError::Failed(w)) => assert!(w.contains("check that the exporter runs"), "{w}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_databases_own_page_keeps_its_set_as_db_series_and_histogram_sums_grow() {
    let page = "# TYPE etcd_disk_wal_fsync_duration_seconds histogram\n\
etcd_disk_wal_fsync_duration_seconds_bucket{le=\"0.001\"} 5\n\
etcd_disk_wal_fsync_duration_seconds_sum 0.25\n\
etcd_disk_wal_fsync_duration_seconds_count 10\n\
# TYPE etcd_mvcc_db_total_size_in_bytes gauge\n\
etcd_mvcc_db_total_size_in_bytes 2.5e+07\n\
# TYPE grpc_server_handled_total counter\n\
grpc_server_handled_total{grpc_code=\"OK\",grpc_method=\"Range\"} 7\n\
grpc_server_handled_total{grpc_code=\"Unavailable\",grpc_method=\"Range\"} 1\n\
# TYPE node_load1 gauge\n\
node_load1 3\n";
    let (v, cut) = parse_page(page, &Keep::Set(ETCD_SET), "db");
    assert_eq!(cut, 0);
    assert_eq!(
        get(&v, "db.etcd_disk_wal_fsync_duration_seconds_sum"),
        Some((0.25, Kind::Counter))
    );
    assert_eq!(
        get(&v, "db.etcd_disk_wal_fsync_duration_seconds_count"),
        Some((10.0, Kind::Counter))
    );
    assert_eq!(
        get(&v, "db.etcd_mvcc_db_total_size_in_bytes"),
        Some((2.5e7, Kind::Gauge))
    );
    assert_eq!(
        get(&v, "db.grpc_server_handled_total.grpc_method=Range"),
        Some((8.0, Kind::Counter))
    );
    // not in the set, and no bucket lines
    assert_eq!(v.len(), 4, "{v:?}");
    // a database's page that cannot be read names where and the fix
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    drop(l);
    let e = Endpoint::parse(&format!("http://127.0.0.1:{port}/metrics")).unwrap();
    let mut s = Scrape::database("etcd", e, Keep::Set(ETCD_SET), "check the etcd member");
    assert_eq!(s.name(), "etcd");
    match s.sample() {
        Err(SourceError::Failed(w)) => {
            assert!(
                w.contains(&format!("127.0.0.1:{port}")) && w.ends_with("check the etcd member"),
                "{w}"
            )
        }
        other => panic!("{other:?}"),
    }
}
