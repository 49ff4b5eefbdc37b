//! `yardstick merge`: three concurrent processes running one specification
//! merge into one result whose counts add up and whose percentiles are exactly
//! those of one histogram of every sample; unrelated or damaged inputs are
//! refused in one line.
use crate::common::*;
use yardstick_core::stats::{decode_histogram, Summary};

fn run_three(dir: &std::path::Path) -> Vec<String> {
    let children: Vec<_> = (0..3)
        .map(|i| {
            std::process::Command::new(bin())
                .args([
                    "run",
                    "--db",
                    "null://?latency=100us",
                    "-P",
                    "workloada",
                    "-p",
                    "recordcount=1000",
                    "--duration",
                    "2s",
                    "--warmup",
                    "300ms",
                    "--seed",
                    "7",
                    "--threads",
                    "2",
                    "-q",
                    "--out",
                    &format!("r{i}.json"),
                ])
                .current_dir(dir)
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    (0..3).map(|i| format!("r{i}.json")).collect()
}

#[test]
fn merged_counts_add_up_and_percentiles_equal_those_of_all_samples() {
    let dir = tempfile::tempdir().unwrap();
    let files = run_three(dir.path());
    let mut args = vec!["merge"];
    args.extend(files.iter().map(String::as_str));
    args.extend(["-o", "merged.json"]);
    let r = yardstick(dir.path(), &args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let m = read_json(&dir.path().join("merged.json"));
    assert_schema_valid(&m);
    let inputs: Vec<serde_json::Value> = files
        .iter()
        .map(|f| read_json(&dir.path().join(f)))
        .collect();
    let total: u64 = inputs
        .iter()
        .map(|v| v["totals"]["operations"].as_u64().unwrap())
        .sum();
    assert_eq!(m["totals"]["operations"], total);
    // every measured operation is in one point of each time series, and in
    // one point of the merged series (warm-up points kept apart)
    let measured = |v: &serde_json::Value| -> u64 {
        v["time_series"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["warmup"] == false)
            .map(|p| p["ops"].as_u64().unwrap())
            .sum()
    };
    for v in &inputs {
        assert_eq!(measured(v), v["totals"]["operations"].as_u64().unwrap());
    }
    assert_eq!(measured(&m), total);
    for name in ["READ", "UPDATE"] {
        let n: u64 = inputs.iter().map(|v| count(v, name)).sum();
        assert_eq!(count(&m, name), n);
        // one histogram of every sample, built here from the inputs
        let mut all = None::<hdrhistogram::Histogram<u64>>;
        for v in &inputs {
            let h = decode_histogram(op_hist(v, name)).unwrap();
            match &mut all {
                Some(a) => a.add(&h).unwrap(),
                None => all = Some(h),
            }
        }
        let want = Summary::of(&all.unwrap());
        let got: Summary =
            serde_json::from_value(op(&m, name)["response_time_ns"].clone()).unwrap();
        // percentiles, counts and extremes exactly; mean and stdev up to the
        // last bit JSON's decimal form may round
        let exact = |s: &Summary| {
            (
                s.count, s.min, s.max, s.p50, s.p90, s.p95, s.p99, s.p999, s.p9999,
            )
        };
        assert_eq!(exact(&got), exact(&want), "{name}");
        assert!((got.mean - want.mean).abs() <= want.mean * 1e-12, "{name}");
        assert!(
            (got.stdev - want.stdev).abs() <= want.stdev * 1e-12,
            "{name}"
        );
    }
    // the three measured together: their rates add up over the shared window
    let sum: f64 = inputs
        .iter()
        .map(|v| v["totals"]["ops_per_sec"].as_f64().unwrap())
        .sum();
    let merged = m["totals"]["ops_per_sec"].as_f64().unwrap();
    assert!(
        (0.8..1.2).contains(&(merged / sum)),
        "merged {merged} vs sum {sum}"
    );
    assert_eq!(m["merged"]["files"].as_array().unwrap().len(), 3);
    assert!(m["warnings"][0]
        .as_str()
        .unwrap()
        .contains("no instance numbers"));
}

fn op_hist<'a>(v: &'a serde_json::Value, op: &str) -> &'a str {
    v["operations"][op]["histograms"]["response"]
        .as_str()
        .unwrap()
}

#[test]
fn unrelated_empty_truncated_and_foreign_results_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (i, w) in ["workloada", "workloadc"].iter().enumerate() {
        let r = yardstick(
            d,
            &[
                "run",
                "--db",
                "null://",
                "-P",
                w,
                "-p",
                "operationcount=500",
                "-q",
                "--out",
                &format!("w{i}.json"),
            ],
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
    }
    let refused = |args: &[&str], expect: &str| {
        let r = yardstick(d, args);
        assert_eq!(r.code, 2, "{}", r.stderr);
        assert!(r.stderr.contains(expect), "{}", r.stderr);
        assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
        assert!(!d.join("m.json").exists());
    };
    refused(
        &["merge", "w0.json", "w1.json", "-o", "m.json"],
        "not instances of one run: the workload (\"workloada\" vs \"workloadc\"), property",
    );
    refused(
        &["merge", "w0.json", "w1.json", "-o", "m.json"],
        "merge them anyway with --force",
    );
    // --force passes the configuration check (these two never overlapped)
    refused(
        &["merge", "--force", "w0.json", "w1.json", "-o", "m.json"],
        "never measured at the same time",
    );
    // one run twice: by name, by another name, as a copy
    refused(
        &["merge", "w0.json", "w0.json", "-o", "m.json"],
        "w0.json and w0.json are the same file",
    );
    refused(
        &["merge", "w0.json", "./w0.json", "-o", "m.json"],
        "are the same file",
    );
    std::fs::copy(d.join("w0.json"), d.join("copy.json")).unwrap();
    refused(
        &["merge", "--force", "w0.json", "copy.json", "-o", "m.json"],
        "w0.json and copy.json are the same run",
    );
    std::fs::write(d.join("empty.json"), "").unwrap();
    refused(&["merge", "w0.json", "empty.json", "-o", "m.json"], "empty");
    let text = std::fs::read_to_string(d.join("w0.json")).unwrap();
    std::fs::write(d.join("cut.json"), &text[..text.len() / 2]).unwrap();
    refused(
        &["merge", "w0.json", "cut.json", "-o", "m.json"],
        "truncated",
    );
    std::fs::write(
        d.join("v9.json"),
        text.replacen("\"schema_version\": 1", "\"schema_version\": 9", 1),
    )
    .unwrap();
    refused(
        &["merge", "w0.json", "v9.json", "-o", "m.json"],
        "schema version",
    );
    // the same run twice never measured at one time: no shared window
    let r = yardstick(
        d,
        &[
            "run",
            "--db",
            "null://",
            "-P",
            "workloada",
            "-p",
            "operationcount=500",
            "-q",
            "--out",
            "w2.json",
        ],
    );
    assert_eq!(r.code, 0);
    refused(
        &["merge", "w0.json", "w2.json", "-o", "m.json"],
        "never measured at the same time",
    );
}
