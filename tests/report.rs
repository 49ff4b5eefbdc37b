//! `yardstick report`: one self-contained HTML file whose structure is valid
//! and which renders to a non-blank page in headless Chromium; Markdown and
//! CSV exports of the same tables; hostile text escaped; bad input refused.
use crate::common::*;
use std::path::Path;

/// A suite of two targets with repetitions, an SLO search and a matrix-free
/// set of plain results, reported together.
fn make_results(dir: &Path) {
    let r = yardstick(
        dir,
        &[
            "suite",
            "ycsb",
            "--db",
            "sqlite://r.db",
            "--db",
            "null://?latency=20us",
            "--records",
            "1000",
            "--repeat",
            "2",
            "--only",
            "load,a,c,e",
            "--duration",
            "1200ms",
            "--warmup",
            "0s",
            "--threads",
            "1",
            "--out-dir",
            "suite",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = yardstick(
        dir,
        &[
            "suite",
            "ycsb",
            "--db",
            "null://?latency=1ms",
            "--only",
            "c",
            "--records",
            "100",
            "--slo",
            "p99<20ms",
            "--slo-bisections",
            "1",
            "--duration",
            "700ms",
            "--warmup",
            "0s",
            "--threads",
            "1",
            "--out-dir",
            "slo",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
}

/// Checks the document is well formed and self-contained: doctype, language,
/// charset and title; every element closed in order; no script, stylesheet
/// link, image or remote reference; entities only where `&` appears; every
/// SVG with a viewBox and a title; every table with a caption and a header.
fn check_structure(html: &str) -> Result<(), String> {
    if !html.starts_with("<!DOCTYPE html>") {
        return Err("no <!DOCTYPE html> first".into());
    }
    for needed in ["<html lang=\"en\">", "<meta charset=\"utf-8\">", "<title>"] {
        if !html.contains(needed) {
            return Err(format!("{needed} missing"));
        }
    }
    const VOID: &[&str] = &["meta", "br", "hr", "img", "input", "link", "wbr"];
    let mut stack: Vec<String> = Vec::new();
    let mut rest = &html["<!DOCTYPE html>".len()..];
    let mut svgs = 0;
    let mut tables = 0;
    while let Some(lt) = rest.find('<') {
        let text = &rest[..lt];
        check_entities(text)?;
        let gt = rest[lt..].find('>').ok_or("a tag is never closed")? + lt;
        let tag = &rest[lt + 1..gt];
        rest = &rest[gt + 1..];
        if let Some(name) = tag.strip_prefix('/') {
            let open = stack.pop().ok_or(format!("</{name}> closes nothing"))?;
            if open != name {
                return Err(format!("</{name}> closes <{open}>"));
            }
            continue;
        }
        let name: String = tag
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect::<String>()
            .to_ascii_lowercase();
        if ["script", "link", "img", "iframe", "object"].contains(&name.as_str()) {
            return Err(format!(
                "<{name}> found: the report must be self-contained and inert"
            ));
        }
        for attr in ["src=", "href=\"http", "url("] {
            if tag.contains(attr) {
                return Err(format!("external reference in <{tag}>"));
            }
        }
        if tag.contains("http") && !tag.contains("xmlns=\"http://www.w3.org/2000/svg\"") {
            return Err(format!("a URL in <{tag}>"));
        }
        check_entities(tag)?;
        if name == "svg" {
            svgs += 1;
            if !tag.contains("viewBox=") {
                return Err("an <svg> without viewBox".into());
            }
            if !rest.starts_with("<title>") {
                return Err("an <svg> whose first child is not <title>".into());
            }
        }
        if name == "table" {
            tables += 1;
            if !rest.starts_with("<caption>") {
                return Err("a <table> without <caption>".into());
            }
        }
        if name == "style" {
            let end = rest.find("</style>").ok_or("<style> never closed")?;
            rest = &rest[end + "</style>".len()..];
            continue;
        }
        if !tag.ends_with('/') && !VOID.contains(&name.as_str()) {
            stack.push(name);
        }
    }
    if !stack.is_empty() {
        return Err(format!("unclosed elements: {stack:?}"));
    }
    if svgs == 0 || tables == 0 {
        return Err(format!("{svgs} charts and {tables} tables"));
    }
    Ok(())
}

fn check_entities(s: &str) -> Result<(), String> {
    for (i, _) in s.match_indices('&') {
        let tail = &s[i..];
        if !["&amp;", "&lt;", "&gt;", "&quot;", "&#39;"]
            .iter()
            .any(|e| tail.starts_with(e))
        {
            return Err(format!("a bare & in {:?}", &s[i..(i + 20).min(s.len())]));
        }
    }
    Ok(())
}

#[test]
fn the_structure_checker_catches_broken_documents() {
    let ok = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>t</title></head><body><svg viewBox=\"0 0 1 1\"><title>c</title><rect/></svg><table><caption>x</caption></table></body></html>";
    assert_eq!(check_structure(ok), Ok(()));
    for (bad, why) in [
        (ok.replace("</table>", ""), "closes"),
        (ok.replace("<title>c</title>", ""), "title"),
        (ok.replace("<rect/>", "<script>x</script>"), "script"),
        (
            ok.replace("<rect/>", "<image href=\"https://x\"/>"),
            "external",
        ),
        (ok.replace("<caption>x", "<caption>a & b"), "bare &"),
        (ok.replace(" viewBox=\"0 0 1 1\"", ""), "viewBox"),
    ] {
        let e = check_structure(&bad).unwrap_err();
        assert!(e.contains(why), "{why}: {e}");
    }
}

#[test]
fn the_html_report_is_valid_self_contained_and_has_every_section() {
    let dir = tempfile::tempdir().unwrap();
    make_results(dir.path());
    let r = yardstick(
        dir.path(),
        &[
            "report",
            "suite",
            "slo",
            "-o",
            "report.html",
            "--title",
            "A & B",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    check_structure(&html).unwrap_or_else(|e| panic!("report.html: {e}"));
    assert!(html.contains("<title>A &amp; B</title>"));
    for id in [
        "throughput",
        "latency",
        "slo",
        "over-time",
        "server",
        "configuration",
    ] {
        assert!(
            html.contains(&format!("<section id=\"{id}\"")),
            "section {id}"
        );
    }
    // charts: grouped throughput bars with CI whiskers (two repetitions), p99
    // bars, log-axis CDFs, time series, the SLO curve with its bound
    assert!(html.contains("Throughput per workload and target"));
    assert!(
        html.contains("stroke=\"#222\""),
        "confidence-interval whiskers"
    );
    assert!(html.contains("Latency CDF · c"));
    // the percentile spectrum, its axis named by percentiles up to 99.999%
    assert!(html.contains("Latency by percentile · c"));
    assert!(html.contains(">99.9%<"), "the spectrum's axis labels");
    assert!(
        html.contains("target p99&lt;20ms"),
        "the suite's bound on the spectrum"
    );
    assert!(html.contains("response time (µs, log scale)"));
    assert!(html.contains("Throughput over time · a"));
    // what the server did, on the same time axis: the host's CPU and the
    // SQLite file's size; the figures per operation in a table
    assert!(html.contains("What the server did"));
    assert!(html.contains("CPU · a") && html.contains("sqlite://r.db host"));
    assert!(html.contains("Data size · a"));
    assert!(html.contains("<caption>The server per operation</caption>"));
    assert!(html.contains("Throughput vs latency · c"));
    assert!(html.contains("bound p99&lt;20ms"));
    // every number is in a table too: both targets, each phase, each operation
    for needle in [
        "<td>sqlite://r.db</td>",
        "<td>null://?latency=20us</td>",
        "<td>SCAN</td>",
        "<td>UPDATE</td>",
        "dirty (after a)",
    ] {
        assert!(html.contains(needle), "{needle}");
    }
    // the SLO search's outcome (a busy machine can miss every step's rate)
    assert!(
        html.contains("<td>met</td>") || html.contains("<td>unmet</td>"),
        "no SLO status cell"
    );
    // configuration, collapsible, per run
    assert!(html.matches("<details>").count() >= 16);
    assert!(html.contains("<dt>command line</dt>"));
    assert!(html.contains("<dt>semantics</dt>"));

    // Markdown and CSV carry the same tables
    let r = yardstick(dir.path(), &["report", "suite", "slo", "-o", "report.md"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let md = std::fs::read_to_string(dir.path().join("report.md")).unwrap();
    assert!(md.starts_with("# yardstick report"));
    assert!(md.contains("## Throughput\n\n| target | workload |"));
    assert!(md.contains("## Maximum throughput under the latency bound"));
    let r = yardstick(
        dir.path(),
        &["report", "suite", "-o", "t.txt", "--format", "csv"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let csv = std::fs::read_to_string(dir.path().join("t.txt")).unwrap();
    assert!(csv.starts_with("table,target,workload,records,runs,"));
    let rows = csv.lines().filter(|l| l.starts_with("throughput,")).count();
    assert_eq!(rows, 2 * 4, "two targets x four phases");
    assert!(csv
        .lines()
        .any(|l| l.starts_with("latency,sqlite://r.db,e,SCAN,")));
}

#[test]
fn the_report_renders_to_a_non_blank_page_in_headless_chromium() {
    // Debian's package and program are both `chromium`
    let installed = std::process::Command::new("chromium")
        .arg("--version")
        .output()
        .is_ok();
    if !installed {
        assert!(
            std::env::var_os("CI").is_none(),
            "chromium is needed in CI (scripts/test.sh installs it with apt-get)"
        );
        eprintln!("skipped: chromium is not installed (apt-get install chromium)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    make_results(dir.path());
    let r = yardstick(dir.path(), &["report", "suite", "slo", "-o", "report.html"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let shot = dir.path().join("shot.png");
    let out = std::process::Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--window-size=1000,1400",
        ])
        .arg(format!(
            "--user-data-dir={}",
            dir.path().join("profile").display()
        ))
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!(
            "file://{}",
            dir.path().join("report.html").display()
        ))
        .output()
        .expect("chromium runs");
    assert!(
        shot.exists(),
        "no screenshot: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let decoder = png::Decoder::new(std::fs::File::open(&shot).unwrap());
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let px = match info.color_type {
        png::ColorType::Rgba => 4,
        png::ColorType::Rgb => 3,
        other => panic!("unexpected PNG color type {other:?}"),
    };
    let pixels: Vec<&[u8]> = buf[..info.buffer_size()].chunks(px).collect();
    let non_white = pixels
        .iter()
        .filter(|p| p[0] < 235 || p[1] < 235 || p[2] < 235)
        .count();
    // the first series' bar colour (#4e79a7) and the warning box (#fff4e5)
    let close = |p: &[u8], c: [u8; 3]| (0..3).all(|i| (p[i] as i32 - c[i] as i32).abs() <= 6);
    let bars = pixels
        .iter()
        .filter(|p| close(p, [0x4e, 0x79, 0xa7]))
        .count();
    let total = pixels.len();
    assert!(
        non_white * 100 > total * 3,
        "the page looks blank: {non_white} of {total} pixels are not white"
    );
    assert!(
        bars > 500,
        "no chart bars drawn ({bars} pixels of the first series' colour)"
    );
}

#[test]
fn hostile_text_is_escaped_and_bad_inputs_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let r = yardstick(
        dir.path(),
        &[
            "run",
            "--db",
            "null://",
            "-p",
            "operationcount=200",
            "-q",
            "--out",
            "r.json",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let mut v = read_json(&dir.path().join("r.json"));
    v["binding"]["url"] = serde_json::json!("null://<script>alert(1)</script>");
    v["warnings"] = serde_json::json!(["a <b>bold</b> & \"quoted\" warning"]);
    std::fs::write(dir.path().join("h.json"), serde_json::to_vec(&v).unwrap()).unwrap();
    let r = yardstick(dir.path(), &["report", "h.json", "-o", "h.html"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let html = std::fs::read_to_string(dir.path().join("h.html")).unwrap();
    check_structure(&html).unwrap_or_else(|e| panic!("{e}"));
    assert!(!html.contains("<script>") && html.contains("&lt;script&gt;"));
    assert!(html.contains("a &lt;b&gt;bold&lt;/b&gt; &amp; &quot;quoted&quot; warning"));
    assert!(html.contains("<section id=\"warnings\" class=\"warnings\">"));

    std::fs::write(dir.path().join("empty.json"), "").unwrap();
    std::fs::write(
        dir.path().join("cut.json"),
        "{\"schema_version\": 1, \"tool\"",
    )
    .unwrap();
    std::fs::create_dir(dir.path().join("nothing")).unwrap();
    for (args, expect) in [
        (vec!["report", "empty.json", "-o", "x.html"], "empty"),
        (vec!["report", "cut.json", "-o", "x.html"], "truncated"),
        (
            vec!["report", "missing.json", "-o", "x.html"],
            "cannot read",
        ),
        (vec!["report", "nothing", "-o", "x.html"], "no result files"),
        (
            vec!["report", "r.json", "-o", "/proc/x.html"],
            "choose another -o",
        ),
    ] {
        let r = yardstick(dir.path(), &args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains(expect), "{args:?}: {}", r.stderr);
        assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    }
    assert!(!dir.path().join("x.html").exists());
}

#[test]
fn semantics_that_differ_between_targets_are_flagged() {
    let dir = tempfile::tempdir().unwrap();
    for (db, sem, out) in [
        ("sqlite://a.db", "update", "a.json"),
        ("null://", "upsert", "b.json"),
    ] {
        let load = yardstick(
            dir.path(),
            &[
                "load",
                "--db",
                db,
                "-p",
                "recordcount=100",
                "-q",
                "--out",
                "l.json",
            ],
        );
        assert_eq!(load.code, 0, "{}", load.stderr);
        let r = yardstick(
            dir.path(),
            &[
                "run",
                "--db",
                db,
                "-p",
                "recordcount=100",
                "-p",
                "operationcount=300",
                "-p",
                &format!("update.semantics={sem}"),
                "-q",
                "--out",
                out,
            ],
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
    }
    let r = yardstick(dir.path(), &["report", "a.json", "b.json", "-o", "r.md"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let md = std::fs::read_to_string(dir.path().join("r.md")).unwrap();
    assert!(
        md.contains("operation semantics differ between targets")
            && md.contains("update=update")
            && md.contains("update=upsert"),
        "{md}"
    );
}

#[test]
fn tpcc_results_get_tpmc_bars_transaction_latency_checks_and_configuration() {
    let dir = tempfile::tempdir().unwrap();
    tpcc_sqlite_runs(
        dir.path(),
        "2s",
        &[("1", &["--out", "t1.json"]), ("2", &["--out", "t2.json"])],
    );
    // a third run whose checks failed and that was interrupted
    let mut bad = read_json(&dir.path().join("t2.json"));
    bad["checks"][1]["pass"] = false.into();
    bad["checks"][1]["detail"] = "district 1: next order 3001, max order 3005".into();
    bad["complete"] = false.into();
    bad["interrupted"] = true.into();
    std::fs::write(
        dir.path().join("bad.json"),
        serde_json::to_vec(&bad).unwrap(),
    )
    .unwrap();
    let r = yardstick(
        dir.path(),
        &[
            "report",
            "t1.json",
            "t2.json",
            "bad.json",
            "-o",
            "tpcc.html",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("report of 3 results"), "{}", r.stdout);
    let html = std::fs::read_to_string(dir.path().join("tpcc.html")).unwrap();
    check_structure(&html).unwrap_or_else(|e| panic!("tpcc.html: {e}"));
    assert!(html.contains("<section id=\"tpcc\""));
    // the host under the runs, after tpmC over time
    let server = html
        .find("<section id=\"server\"")
        .expect("a server section");
    assert!(server > html.find("<section id=\"tpcc\"").unwrap());
    assert!(html.contains("CPU · tpcc 1 W · 1 terminals"));
    assert!(html.contains("tpmC per configuration and target"));
    assert!(html.contains("p90 response time per transaction"));
    assert!(html.contains("tpmC over time"));
    // both configurations are bar groups, every transaction is a table row
    assert!(html.contains("1 W · 1 terminals"));
    assert!(html.contains("1 W · 2 terminals"));
    for t in [
        "NEW-ORDER",
        "PAYMENT",
        "ORDER-STATUS",
        "DELIVERY",
        "STOCK-LEVEL",
    ] {
        assert!(html.matches(&format!("<td>{t}</td>")).count() == 3, "{t}");
    }
    assert!(html.contains("<td>11 of 11 pass</td>"));
    assert!(html.contains("<td>10 of 11 pass</td>"));
    // the failed check and the interruption are warnings
    let warnings = html
        .split("<section id=\"warnings\"")
        .nth(1)
        .unwrap()
        .split("</section>")
        .next()
        .unwrap();
    assert!(
        warnings.contains("consistency condition 2") && warnings.contains("next order 3001"),
        "{warnings}"
    );
    assert!(warnings.contains("(interrupted)"), "{warnings}");
    // configuration, per run: isolation and the NURand constants
    assert_eq!(html.matches("<summary>TPC-C · sqlite").count(), 3);
    assert!(html.contains("<dt>isolation</dt>"));
    assert!(html.contains("<dt>statements</dt>"));
    assert!(html.contains("NURand C (load)"));
    // the same tables as Markdown and CSV
    let r = yardstick(dir.path(), &["report", "t1.json", "-o", "t.md"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let md = std::fs::read_to_string(dir.path().join("t.md")).unwrap();
    assert!(
        md.contains("## TPC-C runs\n\n| target | warehouses |"),
        "{md}"
    );
    assert!(md.contains("## TPC-C transactions (response time in ms)"));
    let r = yardstick(dir.path(), &["report", "t1.json", "-o", "t.csv"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let csv = std::fs::read_to_string(dir.path().join("t.csv")).unwrap();
    assert_eq!(csv.lines().filter(|l| l.starts_with("tpcc,")).count(), 1);
    assert_eq!(
        csv.lines()
            .filter(|l| l.starts_with("tpcc-transactions,"))
            .count(),
        5
    );
    // a TPC-C result of another schema version is refused in one line
    let mut other = read_json(&dir.path().join("t1.json"));
    other["schema_version"] = 99.into();
    std::fs::write(
        dir.path().join("v99.json"),
        serde_json::to_vec(&other).unwrap(),
    )
    .unwrap();
    let r = yardstick(dir.path(), &["report", "v99.json", "-o", "x.html"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("TPC-C result schema version 99"),
        "{}",
        r.stderr
    );
}
