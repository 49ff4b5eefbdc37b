//! Bad input files: property files (-P), result files given to merge,
//! compare and report (empty, not JSON, truncated, another schema version,
//! negative or fractional counts, damaged histograms, wrong types), and
//! suite and matrix directories whose index.json is not theirs.
use super::*;
use serde_json::Value;

/// (command line, words its one error line must contain)
pub(super) const CASES: &[(&str, &str)] = &[
    (
        "run --db null:// -P {dir}/garbage.properties",
        "unknown property 'this' ({dir}/garbage.properties:1); `yardstick list",
    ),
    (
        "run --db null:// -P {dir}/badvalue.properties",
        "property recordcount=abc ({dir}/badvalue.properties:1) is not a",
    ),
    (
        "run --db null:// -P {dir}/binary.properties",
        "cannot read property file {dir}/binary.properties: stream did not",
    ),
    (
        "run --db null:// -P {dir}/longline.properties",
        "property recordcount=9999999999999999999999999999999999999999...",
    ),
    (
        "run --db null:// -P {dir}/proportions.properties",
        "the operation proportions add up to 1.4 (readproportion=0.7,",
    ),
    (
        "run --db null:// -P {dir}/unknown.properties",
        "unknown property 'colour' ({dir}/unknown.properties:1); `yardstick list",
    ),
    (
        "run --db null:// -P {dir}/continuation.properties",
        "recordcount is 0: set -p recordcount=N (or -P a workload file that sets",
    ),
    (
        "run --db null:// -P {dir}/nul.properties",
        "property recordcount=1\\u{0} ({dir}/nul.properties:1) is not a",
    ),
    (
        "run --db null:// -P {dir}/bom.properties",
        "property recordcount=abc ({dir}/bom.properties:1) is not a non-negative",
    ),
    (
        "run --db null:// -P {dir}/hugenumber.properties",
        "property fieldlength=1e30 ({dir}/hugenumber.properties:1) is not a",
    ),
    (
        "run --db null:// -P {dir}/negative.properties",
        "property operationcount=-5 ({dir}/negative.properties:1) is not a",
    ),
    (
        "run --db null:// -P {dir}/secret.properties",
        "unknown property 'db.passwd' ({dir}/secret.properties:1); `yardstick",
    ),
    (
        "load --db null:// -P {dir}/garbage.properties",
        "unknown property 'this' ({dir}/garbage.properties:1); `yardstick list",
    ),
    (
        "load --db null:// -P {dir}/badvalue.properties",
        "property recordcount=abc ({dir}/badvalue.properties:1) is not a",
    ),
    (
        "suite ycsb --db null:// -p colour=red",
        "unknown property 'colour' (-p); `yardstick list properties` shows every",
    ),
    (
        "merge {dir}/ok.json {dir}/empty.json -o {dir}/m.json",
        "{dir}/empty.json: the file is empty, not a yardstick result",
    ),
    (
        "compare {dir}/ok.json {dir}/empty.json",
        "{dir}/empty.json: the file is empty, not a yardstick result",
    ),
    (
        "compare {dir}/empty.json {dir}/ok.json",
        "{dir}/empty.json: the file is empty, not a yardstick result",
    ),
    (
        "report {dir}/empty.json -o {dir}/r.html",
        "{dir}/empty.json: the file is empty, not a yardstick result or index",
    ),
    (
        "merge {dir}/ok.json {dir}/garbage.json -o {dir}/m.json",
        "{dir}/garbage.json: not JSON (expected ident at line 1 column 2); is it",
    ),
    (
        "compare {dir}/ok.json {dir}/garbage.json",
        "{dir}/garbage.json: not JSON (expected ident at line 1 column 2); is it",
    ),
    (
        "compare {dir}/garbage.json {dir}/ok.json",
        "{dir}/garbage.json: not JSON (expected ident at line 1 column 2); is it",
    ),
    (
        "report {dir}/garbage.json -o {dir}/r.html",
        "{dir}/garbage.json: not JSON (expected ident at line 1 column 2); is it",
    ),
    (
        "merge {dir}/ok.json {dir}/array.json -o {dir}/m.json",
        "{dir}/array.json: no schema_version: this is not a yardstick result",
    ),
    (
        "compare {dir}/ok.json {dir}/array.json",
        "{dir}/array.json: no schema_version: this is not a yardstick result",
    ),
    (
        "compare {dir}/array.json {dir}/ok.json",
        "{dir}/array.json: no schema_version: this is not a yardstick result",
    ),
    (
        "report {dir}/array.json -o {dir}/r.html",
        "{dir}/array.json: no schema_version: this is not a yardstick result",
    ),
    (
        "merge {dir}/ok.json {dir}/obj.json -o {dir}/m.json",
        "{dir}/obj.json: no schema_version: this is not a yardstick result (this",
    ),
    (
        "compare {dir}/ok.json {dir}/obj.json",
        "{dir}/obj.json: no schema_version: this is not a yardstick result (this",
    ),
    (
        "compare {dir}/obj.json {dir}/ok.json",
        "{dir}/obj.json: no schema_version: this is not a yardstick result (this",
    ),
    (
        "report {dir}/obj.json -o {dir}/r.html",
        "{dir}/obj.json: no schema_version: this is not a yardstick result (this",
    ),
    (
        "merge {dir}/ok.json {dir}/trunc.json -o {dir}/m.json",
        "{dir}/trunc.json: not JSON (EOF while parsing",
    ),
    (
        "compare {dir}/ok.json {dir}/trunc.json",
        "{dir}/trunc.json: not JSON (EOF while parsing",
    ),
    (
        "compare {dir}/trunc.json {dir}/ok.json",
        "{dir}/trunc.json: not JSON (EOF while parsing",
    ),
    (
        "report {dir}/trunc.json -o {dir}/r.html",
        "{dir}/trunc.json: not JSON (EOF while parsing",
    ),
    (
        "merge {dir}/ok.json {dir}/future.json -o {dir}/m.json",
        "{dir}/future.json: schema version 999, but this yardstick reads version",
    ),
    (
        "compare {dir}/ok.json {dir}/future.json",
        "{dir}/future.json: schema version 999, but this yardstick reads version",
    ),
    (
        "compare {dir}/future.json {dir}/ok.json",
        "{dir}/future.json: schema version 999, but this yardstick reads version",
    ),
    (
        "report {dir}/future.json -o {dir}/r.html",
        "{dir}/future.json: schema version 999, but this yardstick reads version",
    ),
    (
        "merge {dir}/ok.json {dir}/neg.json -o {dir}/m.json",
        "{dir}/neg.json: not a complete yardstick result (invalid value: integer",
    ),
    (
        "compare {dir}/ok.json {dir}/neg.json",
        "{dir}/neg.json: not a complete yardstick result (invalid value: integer",
    ),
    (
        "compare {dir}/neg.json {dir}/ok.json",
        "{dir}/neg.json: not a complete yardstick result (invalid value: integer",
    ),
    (
        "report {dir}/neg.json -o {dir}/r.html",
        "{dir}/neg.json: not a complete yardstick result (invalid value: integer",
    ),
    (
        "merge {dir}/ok.json {dir}/badhist.json -o {dir}/m.json",
        "{dir}/badhist.json: not a complete yardstick result (the response",
    ),
    (
        "compare {dir}/ok.json {dir}/badhist.json",
        "{dir}/badhist.json: not a complete yardstick result (the response",
    ),
    (
        "compare {dir}/badhist.json {dir}/ok.json",
        "{dir}/badhist.json: not a complete yardstick result (the response",
    ),
    (
        "report {dir}/badhist.json -o {dir}/r.html",
        "{dir}/badhist.json: not a complete yardstick result (the response",
    ),
    (
        "merge {dir}/ok.json {dir}/nan.json -o {dir}/m.json",
        "{dir}/nan.json: not JSON (expected value at line 1",
    ),
    (
        "compare {dir}/ok.json {dir}/nan.json",
        "{dir}/nan.json: not JSON (expected value at line 1",
    ),
    (
        "compare {dir}/nan.json {dir}/ok.json",
        "{dir}/nan.json: not JSON (expected value at line 1",
    ),
    (
        "report {dir}/nan.json -o {dir}/r.html",
        "{dir}/nan.json: not JSON (expected value at line 1",
    ),
    (
        "merge {dir}/ok.json {dir}/huge.json -o {dir}/m.json",
        "{dir}/huge.json: not a complete yardstick result (invalid type:",
    ),
    (
        "compare {dir}/ok.json {dir}/huge.json",
        "{dir}/huge.json: not a complete yardstick result (invalid type:",
    ),
    (
        "compare {dir}/huge.json {dir}/ok.json",
        "{dir}/huge.json: not a complete yardstick result (invalid type:",
    ),
    (
        "report {dir}/huge.json -o {dir}/r.html",
        "{dir}/huge.json: not a complete yardstick result (invalid type:",
    ),
    (
        "merge {dir}/ok.json {dir}/binary.json -o {dir}/m.json",
        "{dir}/binary.json: cannot read it: stream did not contain valid UTF-8",
    ),
    (
        "compare {dir}/ok.json {dir}/binary.json",
        "{dir}/binary.json: cannot read it: stream did not contain valid UTF-8",
    ),
    (
        "compare {dir}/binary.json {dir}/ok.json",
        "{dir}/binary.json: cannot read it: stream did not contain valid UTF-8",
    ),
    (
        "report {dir}/binary.json -o {dir}/r.html",
        "{dir}/binary.json: cannot read it: stream did not contain valid UTF-8",
    ),
    (
        "merge {dir}/ok.json {dir}/wrongtype.json -o {dir}/m.json",
        "{dir}/wrongtype.json: not a complete yardstick result (invalid type:",
    ),
    (
        "compare {dir}/ok.json {dir}/wrongtype.json",
        "{dir}/wrongtype.json: not a complete yardstick result (invalid type:",
    ),
    (
        "compare {dir}/wrongtype.json {dir}/ok.json",
        "{dir}/wrongtype.json: not a complete yardstick result (invalid type:",
    ),
    (
        "report {dir}/wrongtype.json -o {dir}/r.html",
        "{dir}/wrongtype.json: not a complete yardstick result (invalid type:",
    ),
    (
        "merge {dir}/ok.json {dir}/noops.json -o {dir}/m.json",
        "{dir}/noops.json: not a complete yardstick result (missing field",
    ),
    (
        "compare {dir}/ok.json {dir}/noops.json",
        "{dir}/noops.json: not a complete yardstick result (missing field",
    ),
    (
        "compare {dir}/noops.json {dir}/ok.json",
        "{dir}/noops.json: not a complete yardstick result (missing field",
    ),
    (
        "report {dir}/noops.json -o {dir}/r.html",
        "{dir}/noops.json: not a complete yardstick result (missing field",
    ),
    (
        "suite ycsb --db null:// --records 100 --out-dir {dir}/suite-garbage",
        "{dir}/suite-garbage/index.json: not JSON (expected value at line 1",
    ),
    (
        "suite ycsb --db null:// --records 100 --out-dir {dir}/suite-obj",
        "{dir}/suite-obj/index.json: not a complete yardstick suite index",
    ),
    (
        "suite ycsb --db null:// --records 100 --out-dir {dir}/suite-other",
        "{dir}/suite-other/index.json: not a complete yardstick suite index",
    ),
    (
        "suite ycsb --db null:// --records 100 --out-dir {dir}/suite-future",
        "{dir}/suite-future/index.json: schema version 999, but this yardstick",
    ),
    (
        "matrix --db null:// --records 100 --out-dir {dir}/suite-garbage",
        "{dir}/suite-garbage/index.json: not JSON (expected value at line 1",
    ),
    (
        "matrix --db null:// --records 100 --out-dir {dir}/matrix-obj",
        "{dir}/matrix-obj/index.json: not a complete yardstick matrix index",
    ),
    (
        "report {dir}/suite-garbage",
        "the following required arguments were not provided: --out <FILE>",
    ),
    (
        "report {dir}/suite-obj",
        "the following required arguments were not provided: --out <FILE>",
    ),
    (
        "report {dir}/suite-future",
        "the following required arguments were not provided: --out <FILE>",
    ),
    (
        "report {dir}/suite-garbage/index.json",
        "the following required arguments were not provided: --out <FILE>",
    ),
    (
        "report {dir}/matrix-obj",
        "the following required arguments were not provided: --out <FILE>",
    ),
    (
        "report {dir}/emptydir",
        "the following required arguments were not provided: --out <FILE>",
    ),
    (
        "merge {dir}/ok.json {dir}/badhist2.json -o {dir}/m.json",
        "{dir}/badhist2.json: not a complete yardstick result (the service",
    ),
    (
        "compare {dir}/ok.json {dir}/badhist2.json",
        "{dir}/badhist2.json: not a complete yardstick result (the service",
    ),
    (
        "report {dir}/badhist2.json -o {dir}/r.html",
        "{dir}/badhist2.json: not a complete yardstick result (the service",
    ),
];

/// The damaged results and indexes the rows name, made from ok.json.
pub(super) fn write_files(d: &Path) {
    let w = |name: &str, bytes: &[u8]| std::fs::write(d.join(name), bytes).unwrap();
    let ok = std::fs::read(d.join("ok.json")).unwrap();
    let v: Value = serde_json::from_slice(&ok).unwrap();
    let op = v["operations"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    let changed = |name: &str, f: &dyn Fn(&mut Value)| {
        let mut c = v.clone();
        f(&mut c);
        w(name, &serde_json::to_vec(&c).unwrap());
    };
    w("empty.json", b"");
    w("garbage.json", b"not json\n");
    w("array.json", b"[]");
    w("obj.json", b"{}");
    w("trunc.json", &ok[..2000]);
    w("binary.json", b"\x00\xff{\x01");
    changed("future.json", &|c| c["schema_version"] = 999.into());
    changed("neg.json", &|c| c["operations"][&op]["count"] = (-5).into());
    changed("huge.json", &|c| {
        c["operations"][&op]["count"] = 1e30.into()
    });
    changed("wrongtype.json", &|c| c["operations"] = "x".into());
    changed("noops.json", &|c| {
        c.as_object_mut().unwrap().remove("operations");
    });
    changed("badhist.json", &|c| {
        c["operations"][&op]["histograms"]["response"] = "!!!not base64!!!".into()
    });
    // base64 of "hello world": decodes, but is no histogram
    changed("badhist2.json", &|c| {
        c["operations"][&op]["histograms"]["service"] = "aGVsbG8gd29ybGQ=".into()
    });
    let text = serde_json::to_string(&v).unwrap();
    w(
        "nan.json",
        text.replacen("\"elapsed_s\":", "\"elapsed_s\":NaN,\"x\":", 1)
            .as_bytes(),
    );
    for (dir, index) in [
        ("suite-garbage", "garbage"),
        ("suite-obj", "{}"),
        (
            "suite-other",
            r#"{"kind":"matrix","schema_version":1,"cells":[]}"#,
        ),
        (
            "suite-future",
            r#"{"kind":"suite","schema_version":999,"steps":[]}"#,
        ),
        ("matrix-obj", "{}"),
    ] {
        std::fs::create_dir(d.join(dir)).unwrap();
        w(&format!("{dir}/index.json"), index.as_bytes());
    }
}

#[test]
fn bad_input_files_are_refused_in_one_line() {
    let fx = Fixture::new();
    let rows = split_rows(&fx, CASES);
    assert_none("input files", rows.len(), failures(&rows));
}
