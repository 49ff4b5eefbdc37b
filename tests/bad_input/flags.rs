//! Bad flags of `load` and `run`: numbers out of range or not numbers,
//! negative values, durations without units or too long, sizes, instances,
//! start times, output paths that are not regular files, missing values.
use super::*;

/// (command line, words its one error line must contain)
pub(super) const CASES: &[(&str, &str)] = &[
    (
        "load --db null:// --until ci<2%",
        "--until applies to the run phase: use it with `yardstick run`",
    ),
    (
        "run --db null:// --until ci<0% --duration 1s",
        "--until 'ci<0%' is not a condition: write ci<2% (throughput) or p99",
    ),
    (
        "run --db null:// --until p95ci<2% --duration 1s",
        "--until 'p95ci<2%' is not a condition: write ci<2% (throughput) or",
    ),
    (
        "run --db null:// --until ci<2%,ci<1 --duration 1s",
        "--until 'ci<1' is not a condition: write ci<2% (throughput) or p99",
    ),
    (
        "run --db null:// --memory-limit 18446744073709551616",
        "is more than this machine's memory",
    ),
    (
        "load --db null:// --memory-limit 1000T",
        "is more than this machine's memory",
    ),
    (
        "run --db null:// --duration 32d",
        "'32d' is longer than 31 days",
    ),
    (
        "run --db null:// --threads 0",
        "threadcount=0 must be between 1 and 4096",
    ),
    (
        "run --db null:// --threads -1",
        "--threads -1: negative values are not accepted; give a positive value",
    ),
    (
        "run --db null:// --threads lots",
        "invalid value 'lots' for '--threads <THREADS>': not a whole number",
    ),
    (
        "run --db null:// --threads 99999999999999999999",
        "invalid value '99999999999999999999' for '--threads <THREADS>': too",
    ),
    (
        "run --db null:// --threads 100000",
        "threadcount=100000 must be between 1 and 4096",
    ),
    (
        "run --db null:// --threads 1.5",
        "invalid value '1.5' for '--threads <THREADS>': not a whole number",
    ),
    (
        "run --db null:// --concurrency 0",
        "--concurrency must be between 1 and 1024",
    ),
    (
        "run --db null:// --concurrency -3",
        "--concurrency -3: negative values are not accepted; give a positive",
    ),
    (
        "run --db null:// --concurrency x",
        "invalid value 'x' for '--concurrency <CONCURRENCY>': not a whole number",
    ),
    (
        "run --db null:// --concurrency 100000000",
        "--concurrency must be between 1 and 1024",
    ),
    (
        "run --db null:// --target -5",
        "--target -5: negative values are not accepted; give a positive value",
    ),
    (
        "run --db null:// --target nan",
        "'nan' is not a rate: give operations per second, e.g. --target 10000",
    ),
    (
        "run --db null:// --target inf",
        "'inf' is not a rate: give operations per second, e.g. --target 10000",
    ),
    (
        "run --db null:// --metrics-listen nowhere",
        "cannot listen on nowhere: invalid socket address",
    ),
    (
        "run --db null:// --tag build",
        "'build' is not a tag: write KEY=VALUE, e.g. build=a",
    ),
    (
        "run --db null:// --tag a/b=c",
        "'a/b' is not a tag key: use letters, digits",
    ),
    (
        "run --db null:// --tag nodes=3x",
        "tag nodes=3x: nodes is a count, a whole number above 0, e.g. nodes=3",
    ),
    (
        "run --db null:// --tag a=1 --tag a=2",
        "--tag a is given twice (1 and 2): give each key once",
    ),
    ("results {dir}/none", "cannot list it"),
    (
        "compare tag:build a.json",
        "'tag:build' is not a selector: write tag:KEY=VALUE",
    ),
    (
        "run --db null:// --target 1000@30",
        "'30' has no unit: write for example 30s, 30ms or 30us",
    ),
    (
        "run --db null:// --target fast@1s",
        "'fast' is not a rate: give operations per second, 0 or more",
    ),
    (
        "run --db null:// --target 100@1s,x",
        "'x' is not a rate step: write RATE@DURATION (1000@30s) or a ramp",
    ),
    (
        "run --db null:// --target file:{dir}/none.txt",
        "cannot read the schedule file",
    ),
    (
        "run --db null:// --target 0@5s",
        "the rate schedule schedules no operation: give a step a rate above 0",
    ),
    (
        "run --db null:// --target 100@1s --duration 5s",
        "--duration is longer than the --target schedule (1.0 s): lengthen",
    ),
    (
        "run --db null:// --target 1e9",
        "target=1000000000 operations per second is more than any client reaches",
    ),
    (
        "run --db null:// --target abc",
        "'abc' is neither a rate nor a rate schedule: give operations per second",
    ),
    (
        "run --db null:// --duration -1s",
        "--duration -1s: negative values are not accepted; give a positive value",
    ),
    (
        "run --db null:// --duration 1e30s",
        "invalid value '1e30s' for '--duration <DURATION>': '1e30s' is too long",
    ),
    (
        "run --db null:// --duration 5",
        "invalid value '5' for '--duration <DURATION>': '5' has no unit: write",
    ),
    (
        "run --db null:// --duration 5parsecs",
        "invalid value '5parsecs' for '--duration <DURATION>': '5parsecs' has an",
    ),
    (
        "run --db null:// --duration nans",
        "invalid value 'nans' for '--duration <DURATION>': 'nans' is not a",
    ),
    (
        "run --db null:// --duration 1e400s",
        "invalid value '1e400s' for '--duration <DURATION>': '1e400s' is not a",
    ),
    (
        "run --db null:// --duration 0s",
        "the run has no end: set operationcount (-p operationcount=N),",
    ),
    (
        "run --db null:// --duration 99999999999h",
        "invalid value '99999999999h' for '--duration <DURATION>':",
    ),
    (
        "run --db null:// --warmup -1s",
        "--warmup -1s: negative values are not accepted; give a positive value",
    ),
    (
        "run --db null:// --warmup 1e30s",
        "invalid value '1e30s' for '--warmup <WARMUP>': '1e30s' is too long to",
    ),
    (
        "run --db null:// --warmup 3",
        "invalid value '3' for '--warmup <WARMUP>': '3' has no unit: write for",
    ),
    (
        "run --db null:// --warmup 1e20h",
        "invalid value '1e20h' for '--warmup <WARMUP>': '1e20h' is too long to",
    ),
    (
        "run --db null:// --status-interval 0s",
        "status.interval=0 is out of range: use 0.1 to 3600 seconds",
    ),
    (
        "run --db null:// --status-interval 1e30s",
        "invalid value '1e30s' for '--status-interval <STATUS_INTERVAL>':",
    ),
    (
        "run --db null:// --status-interval 1ms",
        "status.interval=0.001 is out of range: use 0.1 to 3600 seconds",
    ),
    (
        "run --db null:// --status-interval 2h",
        "status.interval=7200 is out of range: use 0.1 to 3600 seconds",
    ),
    (
        "run --db null:// --status-interval x",
        "invalid value 'x' for '--status-interval <STATUS_INTERVAL>': 'x' is not",
    ),
    (
        "run --db null:// --seed -1",
        "--seed -1: negative values are not accepted; give a positive value",
    ),
    (
        "run --db null:// --seed x",
        "invalid value 'x' for '--seed <SEED>': not a whole number",
    ),
    (
        "run --db null:// --seed 99999999999999999999999",
        "invalid value '99999999999999999999999' for '--seed <SEED>': too large",
    ),
    (
        "run --db null:// --max-errors -1",
        "--max-errors -1: negative values are not accepted; give a positive value",
    ),
    (
        "run --db null:// --max-errors x",
        "invalid value 'x' for '--max-errors <N>': not a whole number",
    ),
    (
        "run --db null:// --on-error explode",
        "invalid value 'explode' for '--on-error <ON_ERROR>' [possible values:",
    ),
    (
        "run --db null:// --retries -1",
        "--retries -1: negative values are not accepted; give a positive value",
    ),
    (
        "run --db null:// --retries 1e12",
        "invalid value '1e12' for '--retries <N>': not a whole number",
    ),
    (
        "run --db null:// --retries 99999999999",
        "invalid value '99999999999' for '--retries <N>': 99999999999 is out of",
    ),
    (
        "run --db null:// --retries x",
        "invalid value 'x' for '--retries <N>': not a whole number",
    ),
    (
        "run --db null:// --instance 2/1",
        "invalid value '2/1' for '--instance <I/N>': '2/1' is not an instance:",
    ),
    (
        "run --db null:// --instance 1/0",
        "invalid value '1/0' for '--instance <I/N>': '1/0' is not an instance:",
    ),
    (
        "run --db null:// --instance x",
        "invalid value 'x' for '--instance <I/N>': 'x' is not an instance: write",
    ),
    (
        "run --db null:// --instance 1/",
        "invalid value '1/' for '--instance <I/N>': '1/' is not an instance:",
    ),
    (
        "run --db null:// --instance /2",
        "invalid value '/2' for '--instance <I/N>': '/2' is not an instance:",
    ),
    (
        "run --db null:// --instance 1/2/3",
        "invalid value '1/2/3' for '--instance <I/N>': '1/2/3' is not an",
    ),
    (
        "run --db null:// --start-at 2099-01-01T00:00:00Z",
        "invalid value '2099-01-01T00:00:00Z' for '--start-at <TIME>':",
    ),
    (
        "run --db null:// --start-at garbage",
        "invalid value 'garbage' for '--start-at <TIME>': 'garbage' is not a",
    ),
    (
        "run --db null:// --start-at 25:00",
        "invalid value '25:00' for '--start-at <TIME>': '25:00' is not a time:",
    ),
    (
        "run --db null:// --start-at 1e30",
        "invalid value '1e30' for '--start-at <TIME>': '1e30' is not a time: use",
    ),
    (
        "run --db null:// --memory-limit 0",
        "invalid value '0' for '--memory-limit <SIZE>': '0' is too small to run",
    ),
    (
        "run --db null:// --memory-limit 1k",
        "invalid value '1k' for '--memory-limit <SIZE>': '1k' is too small to",
    ),
    (
        "run --db null:// --memory-limit 10QB",
        "invalid value '10QB' for '--memory-limit <SIZE>': '10QB' is not a size:",
    ),
    (
        "run --db null:// --server-memory-limit 10QB",
        "invalid value '10QB' for '--server-memory-limit <SIZE>': '10QB' is not a size:",
    ),
    (
        "run --db null:// --server-memory-limit 1G",
        "this --db is an embedded engine inside the benchmark process: use --memory-limit",
    ),
    (
        "load --db sqlite://{dir}/x.db --server-memory-limit 1G",
        "--server-memory-limit caps a database server",
    ),
    (
        "run --db null:// --memory-limit -1G",
        "--memory-limit -1G: negative values are not accepted; give a positive",
    ),
    (
        "run --db null:// --memory-limit 1e30G",
        "invalid value '1e30G' for '--memory-limit <SIZE>': '1e30G' is not a",
    ),
    (
        "run --db null:// --memory-limit lots",
        "invalid value 'lots' for '--memory-limit <SIZE>': 'lots' is not a size:",
    ),
    (
        "run --db null:// --batch 0",
        "--batch applies to the load phase: use it with `yardstick load`",
    ),
    (
        "run --db null:// --batch -1",
        "--batch -1: negative values are not accepted; give a positive value",
    ),
    (
        "run --db null:// --batch x",
        "invalid value 'x' for '--batch <N>': not a whole number",
    ),
    (
        "run --db null:// --batch 1e12",
        "invalid value '1e12' for '--batch <N>': not a whole number",
    ),
    (
        "run --db null:// --format xml",
        "invalid value 'xml' for '--format <FORMAT>' [possible values: table,",
    ),
    (
        "run --db null:// --out {dir}/adir",
        "cannot write the result file {dir}/adir: is a directory; choose another",
    ),
    (
        "run --db null:// --out /dev/null",
        "cannot write the result file /dev/null: is a device, not a regular",
    ),
    (
        "run --db null:// --out {dir}/fifo",
        "cannot write the result file {dir}/fifo: is a FIFO, not a regular file;",
    ),
    (
        "run --db null:// --out {dir}/link.json",
        "cannot write the result file {dir}/link.json: is a symbolic link (a",
    ),
    (
        "run --db null:// --results-dir {dir}/afile",
        "{dir}/afile is a file, not a directory; choose another --out or --results-dir",
    ),
    (
        "run --db null:// --password-file {dir}/nosuchfile",
        "cannot read --password-file {dir}/nosuchfile: No such file or directory",
    ),
    (
        "run --db null:// --password-file {dir}/empty",
        "--password-file {dir}/empty is empty: put the password on its first line",
    ),
    (
        "run --db null:// --password-file {dir}/adir",
        "cannot read --password-file {dir}/adir: Is a directory (os error 21);",
    ),
    (
        "run --db null:// -P {dir}/nosuch.properties",
        "cannot read property file {dir}/nosuch.properties: No such file or",
    ),
    (
        "run --db null:// -P {dir}/adir",
        "cannot read property file {dir}/adir: Is a directory (os error 21);",
    ),
    (
        "run --db null:// -P nosuchworkload",
        "cannot read property file nosuchworkload: No such file or directory (os",
    ),
    (
        "run --db null:// -p noequals",
        "malformed override 'noequals': expected -p name=value",
    ),
    (
        "run --db null:// -p =value",
        "malformed override '=value': expected -p name=value",
    ),
    (
        "run --db null:// -p recordcount=",
        "property recordcount= (-p) is not a non-negative integer; fix the value",
    ),
    (
        "run --db null:// -p colour=red",
        "unknown property 'colour' (-p); `yardstick list properties` shows every",
    ),
    (
        "run --db null:// --bogus-flag",
        "unexpected argument '--bogus-flag' found",
    ),
    (
        "run --db",
        "a value is required for '--db <URL>' but none was supplied",
    ),
    (
        "run --db null:// --threads",
        "a value is required for '--threads <THREADS>' but none was supplied",
    ),
    (
        "run --db null:// extra-positional",
        "unexpected argument 'extra-positional' found",
    ),
    (
        "load --db null:// --threads 0",
        "threadcount=0 must be between 1 and 4096",
    ),
    (
        "load --db null:// --batch 0",
        "db.batchsize=0 is out of range: use 1 (no batching) to 100000",
    ),
    (
        "load --db null:// --duration 1e30s",
        "invalid value '1e30s' for '--duration <DURATION>': '1e30s' is too long",
    ),
    (
        "load --db null:// --target -1",
        "--target -1: negative values are not accepted; give a positive value",
    ),
    (
        "load --db null:// --instance 3/2",
        "invalid value '3/2' for '--instance <I/N>': '3/2' is not an instance:",
    ),
    (
        "load --db null:// -p recordcount=-5",
        "property recordcount=-5 (-p) is not a non-negative integer; fix the",
    ),
    (
        "load --db null:// --format html",
        "invalid value 'html' for '--format <FORMAT>' [possible values: table,",
    ),
    (
        "load --db null:// --on-error sometimes",
        "invalid value 'sometimes' for '--on-error <ON_ERROR>' [possible values:",
    ),
    (
        "load --db null:// --memory-limit 12XB",
        "invalid value '12XB' for '--memory-limit <SIZE>': '12XB' is not a size:",
    ),
    (
        "load --db null:// --start-at yesterday",
        "invalid value 'yesterday' for '--start-at <TIME>': 'yesterday' is not a",
    ),
];

#[test]
fn bad_flags_are_refused_in_one_line() {
    let fx = Fixture::new();
    let rows = split_rows(&fx, CASES);
    assert_none("flags", rows.len(), failures(&rows));
}
