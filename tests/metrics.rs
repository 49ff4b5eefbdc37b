//! `--metrics-listen`: a real Prometheus (Debian's package) scrapes a run on
//! loopback, and `promtool check metrics` accepts what it serves.
use crate::common::*;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Skips outside CI when a program is missing; fails in CI.
fn have(program: &str) -> bool {
    let ok = Command::new(program)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        assert!(
            std::env::var_os("CI").is_none(),
            "{program} is needed in CI (scripts/test.sh installs the prometheus package)"
        );
        eprintln!("skipped: {program} is not installed (apt-get install prometheus)");
    }
    ok
}

struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Prometheus on a free port, scraping `target` every 500 ms.
fn prometheus(dir: &std::path::Path, target: &str) -> (Killed, String) {
    let port = free_port();
    let config = dir.join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 500ms\n  scrape_timeout: 400ms\nscrape_configs:\n  - job_name: yardstick\n    static_configs:\n      - targets: ['{target}']\n"
        ),
    )
    .unwrap();
    let web = format!("127.0.0.1:{port}");
    let child = Command::new("prometheus")
        .arg(format!("--config.file={}", config.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            dir.join("tsdb").display()
        ))
        .arg(format!("--web.listen-address={web}"))
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.join("prometheus.log")).unwrap())
        .spawn()
        .expect("prometheus starts");
    let p = Killed(child);
    let until = Instant::now() + Duration::from_secs(60);
    while http_get(&web, "/-/ready", "*/*").map(|r| r.0) != Some(200) {
        assert!(
            Instant::now() < until,
            "prometheus did not get ready in 60 s"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    (p, web)
}

/// An instant query's result: (labels, value) per series.
fn query(web: &str, q: &str) -> Vec<(serde_json::Value, f64)> {
    let enc: String = q
        .bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect();
    let (code, body) = http_get(web, &format!("/api/v1/query?query={enc}"), "*/*").unwrap();
    assert_eq!(code, 200, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    v["data"]["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["metric"].clone(),
                s["value"][1].as_str().unwrap().parse().unwrap(),
            )
        })
        .collect()
}

#[test]
fn prometheus_scrapes_a_live_run_and_promtool_accepts_the_exposition() {
    if !have("prometheus") || !have("promtool") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let target = format!("127.0.0.1:{}", free_port());
    let (_prom, web) = prometheus(d, &target);
    // target discovery takes a few seconds: wait for the first (failed) scrape
    let until = Instant::now() + Duration::from_secs(60);
    while query(&web, "up").is_empty() {
        assert!(Instant::now() < until, "prometheus never scraped in 60 s");
        std::thread::sleep(Duration::from_millis(200));
    }
    let run = Command::new(bin())
        .args([
            "run",
            "--db",
            "null://",
            "-P",
            "workloada",
            "-p",
            "recordcount=1000",
            "--target",
            "500",
            "--duration",
            "5s",
            "--status-interval",
            "250ms",
            "--metrics-listen",
            &target,
            "--tag",
            "build=a",
            "--out",
            "m.json",
            "-q",
        ])
        .current_dir(d)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // mid-run, the exposition as a scraper sees it passes promtool's checks
    std::thread::sleep(Duration::from_millis(2500));
    let (code, text) = http_get(&target, "/metrics", "text/plain").expect("the endpoint answers");
    assert_eq!(code, 200);
    assert!(
        text.contains("yardstick_operations_total{operation=\"READ\",status=\"ok\"}"),
        "{text}"
    );
    let mut check = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        check
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
    }
    let out = check.wait_with_output().unwrap();
    assert!(
        out.status.success() && out.stdout.is_empty() && out.stderr.is_empty(),
        "promtool check metrics: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let (_, om) = http_get(
        &target,
        "/metrics",
        "application/openmetrics-text; version=1.0.0",
    )
    .unwrap();
    assert!(om.ends_with("# EOF\n"), "{om}");

    let out = run.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!("metrics at http://{target}/metrics")),
        "{stderr}"
    );
    let result = read_json(&d.join("m.json"));
    let total = result["totals"]["operations"].as_f64().unwrap();

    // what Prometheus stored: the counters rose to at most the result's totals
    let ops = query(&web, "sum(max_over_time(yardstick_operations_total[5m]))");
    let scraped = ops.first().map(|s| s.1).unwrap_or(0.0);
    assert!(
        scraped > 0.0 && scraped <= total,
        "scraped {scraped} of {total}; up: {:?}; log: {}",
        query(&web, "up"),
        std::fs::read_to_string(d.join("prometheus.log")).unwrap_or_default()
    );
    let info = query(&web, "max_over_time(yardstick_run_info[5m])");
    assert_eq!(info.len(), 1, "{info:?}");
    assert_eq!(info[0].0["run_id"], "m");
    assert_eq!(info[0].0["tag_build"], "a");
    assert_eq!(info[0].0["workload"], "workloada");
    let rate = query(&web, "max_over_time(yardstick_intended_rate[5m])");
    assert_eq!(rate.first().map(|s| s.1), Some(500.0));
    let p99 = query(
        &web,
        "histogram_quantile(0.99, sum by (le) (max_over_time(yardstick_response_time_seconds_bucket[5m])))",
    );
    assert!(
        p99.first().is_some_and(|s| s.1 > 0.0 && s.1 < 1.0),
        "{p99:?}"
    );
}

#[test]
fn the_grafana_dashboard_queries_parse_and_use_only_served_metrics() {
    if !have("promtool") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let addr = format!("127.0.0.1:{}", free_port());
    let mut run = Command::new(bin())
        .args([
            "run",
            "--db",
            "null://",
            "-P",
            "workloada",
            "-p",
            "recordcount=100",
            "--target",
            "200",
            "--duration",
            "3s",
            "--status-interval",
            "250ms",
            "--metrics-listen",
            &addr,
            "--out",
            "m.json",
            "-q",
        ])
        .current_dir(d)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let (_, served) = http_get(&addr, "/metrics", "text/plain").expect("the endpoint answers");
    assert!(run.wait().unwrap().success());
    let names: std::collections::BTreeSet<&str> = served
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split(['{', ' ']).next())
        .collect();

    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("deploy/grafana/yardstick-dashboard.json");
    let dash: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut exprs = Vec::new();
    for p in dash["panels"].as_array().unwrap() {
        for t in p["targets"].as_array().unwrap() {
            exprs.push(t["expr"].as_str().unwrap().to_string());
        }
    }
    assert!(exprs.len() >= 6, "{exprs:?}");
    let mut rules = String::from("groups:\n  - name: dashboard\n    rules:\n");
    for (i, e) in exprs.iter().enumerate() {
        for m in e
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .filter(|w| w.starts_with("yardstick_"))
        {
            assert!(
                names.contains(m),
                "the dashboard asks for {m}, which is not served"
            );
        }
        // Grafana's variables as Prometheus would see them
        let e = e.replace("$__rate_interval", "1m").replace("$run_id", ".*");
        rules.push_str(&format!(
            "      - record: dashboard_{i}\n        expr: '{e}'\n"
        ));
    }
    std::fs::write(d.join("rules.yml"), rules).unwrap();
    let out = Command::new("promtool")
        .args(["check", "rules"])
        .arg(d.join("rules.yml"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "promtool check rules: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
