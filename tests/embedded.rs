//! End-to-end against the embedded engines: load with text values, run
//! workloads A and E through the CLI, and check what the result records (the
//! engine's version and options, bytes on disk, the compression ratio) and
//! that bad input stops before any work.
use crate::common::*;

/// The engines built into this test binary, with their version's first digits.
fn engines() -> Vec<(&'static str, &'static str)> {
    // lmdb, redb and fjall are in every build; the others are features
    let mut v = vec![("lmdb", "0.9"), ("redb", "4."), ("fjall", "3.")];
    if cfg!(feature = "rocksdb") {
        v.push(("rocksdb", "7."));
    }
    if cfg!(feature = "leveldb") {
        v.push(("leveldb", "1."));
    }
    if cfg!(feature = "wiredtiger") {
        v.push(("wiredtiger", "3."));
    }
    v
}

#[test]
fn every_engine_loads_text_runs_workloads_a_and_e_and_records_its_bytes_on_disk() {
    for (engine, version) in engines() {
        let dir = tempfile::tempdir().unwrap();
        let db = format!("{engine}://{}", dir.path().join("db").display());
        let (_, v) = load_and_run(dir.path(), &db, "workloada", &["-p", "valuegenerator=text"]);
        assert_eq!(v["binding"]["engine"]["name"], engine);
        let got = v["binding"]["engine"]["version"].as_str().unwrap();
        assert!(got.starts_with(version), "{engine} version {got}");
        assert!(v["binding"]["disk_bytes_after"].as_u64().unwrap() > 0);
        assert!(count(&v, "READ") > 0 && count(&v, "UPDATE") > 0);
        let load = read_json(&dir.path().join("l.json"));
        assert_schema_valid(&load);
        assert_eq!(load["properties"]["valuegenerator"], "text");
        let ratio = load["binding"]["compression_ratio"].as_f64().unwrap();
        assert!(ratio > 0.0, "{engine}: {ratio}");
        // scans (workload E) in key order through the engine's iterator
        let e = tempfile::tempdir().unwrap();
        let db = format!("{engine}://{}", e.path().join("db").display());
        let (_, v) = load_and_run(e.path(), &db, "workloade", &[]);
        assert!(count(&v, "SCAN") > 0, "{engine}");
        assert!(op(&v, "SCAN")["rows"].as_u64().unwrap() > count(&v, "SCAN"));
    }
}

#[cfg(feature = "rocksdb")]
#[test]
fn block_compression_shrinks_text_but_not_random_bytes() {
    let ratio = |values: &str, compression: &str| {
        let dir = tempfile::tempdir().unwrap();
        let db = format!(
            "rocksdb://{}?compression={compression}",
            dir.path().join("db").display()
        );
        let r = yardstick(
            dir.path(),
            &[
                "load",
                "--db",
                &db,
                "-P",
                "workloada",
                "-p",
                "recordcount=20000",
                "-p",
                &format!("valuegenerator={values}"),
                "-p",
                "insert.semantics=upsert",
                "-q",
                "--out",
                "l.json",
            ],
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
        let v = read_json(&dir.path().join("l.json"));
        assert_eq!(
            v["binding"]["engine"]["settings"]["compression"],
            compression
        );
        v["binding"]["compression_ratio"].as_f64().unwrap()
    };
    let text = ratio("text", "zstd");
    let random = ratio("random", "zstd");
    let plain = ratio("text", "none");
    assert!(text > 1.3, "zstd on text: {text}");
    assert!(random < 1.2, "zstd on random bytes: {random}");
    assert!(plain < 1.1 && plain < text, "no compression: {plain}");
}

#[test]
fn bad_input_stops_before_any_work() {
    // bad URLs (no directory, unknown options) of every engine: tests/bad_urls.rs
    let dir = tempfile::tempdir().unwrap();
    let r = yardstick(
        dir.path(),
        &[
            "load",
            "--db",
            "sqlite://x.db",
            "-P",
            "workloadc",
            "-p",
            "valuegenerator=poems",
        ],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("valuegenerator"), "{}", r.stderr);
}

#[test]
fn a_second_process_on_a_directory_in_use_is_refused() {
    let (engine, _) = engines()[0];
    let dir = tempfile::tempdir().unwrap();
    let db = format!("{engine}://{}", dir.path().join("db").display());
    let load = yardstick(
        dir.path(),
        &[
            "load",
            "--db",
            &db,
            "-P",
            "workloadc",
            "-p",
            "recordcount=1000",
            "-q",
        ],
    );
    assert_eq!(load.code, 0, "{}", load.stderr);
    // a long run holds the directory while a second one tries it
    let mut first = std::process::Command::new(bin())
        .args([
            "run",
            "--db",
            &db,
            "-P",
            "workloadc",
            "-p",
            "recordcount=1000",
            "--duration",
            "20s",
            "-q",
            "--out",
            "first.json",
        ])
        .current_dir(dir.path())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut refused = None;
    for _ in 0..100 {
        std::thread::sleep(std::time::Duration::from_millis(100));
        let r = yardstick(
            dir.path(),
            &[
                "run",
                "--db",
                &db,
                "-P",
                "workloadc",
                "-p",
                "recordcount=1000",
                "-q",
            ],
        );
        if r.code == 2 && r.stderr.contains("in use by another process") {
            refused = Some(r);
            break;
        }
    }
    let _ = first.kill();
    let _ = first.wait();
    let r = refused.expect("the second process was refused while the first ran");
    assert_eq!(r.stderr.trim().lines().count(), 1, "{}", r.stderr);
}
