//! The published JSON Schemas of the suite and matrix index files are the
//! schemas of the types that write and read them (`schemars`), so a change
//! to the index types shows here as a change to schema/*.schema.json.
//! `YARDSTICK_BLESS=1 cargo test schema` rewrites the files after a
//! deliberate change (and the index's schema_version must say so).
use crate::common::*;
use std::path::Path;
use yardstick_orchestrate::index::{
    MatrixIndex, SuiteIndex, MATRIX_SCHEMA_VERSION, SUITE_SCHEMA_VERSION,
};

fn published(name: &str, version: u32, mut schema: schemars::Schema) -> serde_json::Value {
    let kind = name.trim_end_matches(".schema.json");
    let o = schema.as_object_mut().expect("a schema object");
    o.insert(
        "$id".into(),
        format!("https://yardstick.dev/schema/{kind}-v{version}.json").into(),
    );
    o.insert(
        "description".into(),
        format!(
            "index.json of yardstick {} (schema_version {version}); written by yardstick_orchestrate::index",
            kind.trim_end_matches("-index")
        )
        .into(),
    );
    serde_json::to_value(&schema).unwrap()
}

fn check(name: &str, want: serde_json::Value) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("schema")
        .join(name);
    let text = serde_json::to_string_pretty(&want).unwrap() + "\n";
    if std::env::var_os("YARDSTICK_BLESS").is_some() {
        std::fs::write(&path, &text).unwrap();
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == text,
        "schema/{name} is not the schema of the index types: rerun with YARDSTICK_BLESS=1 to rewrite it, and raise the schema_version if readers of the old format break"
    );
    // the published schema is itself valid and accepts a minimal index
    jsonschema::validator_for(&read_json(&path)).expect("a valid JSON Schema");
}

#[test]
fn the_published_index_schemas_are_the_types_schemas() {
    check(
        "suite-index.schema.json",
        published(
            "suite-index.schema.json",
            SUITE_SCHEMA_VERSION,
            schemars::schema_for!(SuiteIndex),
        ),
    );
    check(
        "matrix-index.schema.json",
        published(
            "matrix-index.schema.json",
            MATRIX_SCHEMA_VERSION,
            schemars::schema_for!(MatrixIndex),
        ),
    );
}

#[test]
fn an_index_without_a_schema_version_is_read_as_version_one_and_a_newer_one_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("index.json");
    let index = serde_json::json!({
        "kind": "yardstick storage-engine matrix",
        "tool_version": "0.1.0", "records": 1, "fieldcount": 1, "fieldlength": 1,
        "values": "text", "duration_s": 1.0, "warmup_s": 0.0, "seed": 1,
        "budgets": [null], "tests": [], "loads": [], "cells": []
    });
    let read = |v: &serde_json::Value| yardstick_orchestrate::index::from_value(&p, v.clone());
    assert!(matches!(
        read(&index),
        Ok(yardstick_orchestrate::index::AnyIndex::Matrix(m)) if m.schema_version == 1
    ));
    let mut newer = index.clone();
    newer["schema_version"] = 2.into();
    let e = read(&newer).unwrap_err().to_string();
    assert!(
        e.contains("schema version 2, but") && e.contains("use the yardstick that wrote it"),
        "{e}"
    );
    // and `report` says so in one line
    std::fs::write(&p, serde_json::to_vec(&newer).unwrap()).unwrap();
    let r = yardstick(dir.path(), &["report", "index.json", "-o", "r.html"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(r.stderr.trim().lines().count(), 1, "{}", r.stderr);
    assert!(r.stderr.contains("schema version"), "{}", r.stderr);
}

/// The TPC-C schema shares the YCSB one's definitions (host, client,
/// observation) and is strict: the report's fixture, a real observed run,
/// matches, and an unknown field, a transaction of the wrong name or an
/// observation without its per-transaction figures' count is named.
#[test]
fn the_tpcc_schema_accepts_a_real_run_and_names_what_breaks_it() {
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/report/src/testdata/tpcc-run.json");
    let good = read_json(&fixture);
    assert_tpcc_schema_valid(&good);
    assert!(!good["observation"]["per_operation"].is_null());
    let broken = |f: &dyn Fn(&mut serde_json::Value)| {
        let mut v = good.clone();
        f(&mut v);
        schema_errors(&v, "tpcc-result.schema.json")
    };
    let e = broken(&|v| v["tpmC"] = 1.into());
    assert!(e.iter().any(|e| e.contains("tpmC")), "{e:?}");
    let e = broken(&|v| {
        let t = v["transactions"]["PAYMENT"].clone();
        v["transactions"]["REFUND"] = t;
    });
    assert!(e.iter().any(|e| e.contains("REFUND")), "{e:?}");
    let e = broken(&|v| {
        v["observation"]["per_operation"]
            .as_object_mut()
            .unwrap()
            .remove("operations");
    });
    assert!(e.iter().any(|e| e.contains("operations")), "{e:?}");
    // a YCSB result is not a TPC-C one
    let e = broken(&|v| v["kind"] = "run".into());
    assert!(!e.is_empty());
}
