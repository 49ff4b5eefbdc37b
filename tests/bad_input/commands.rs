//! Bad arguments of the other commands: `tpcc load|run|check`, `matrix`,
//! `suite`, `merge`, `compare`, `report` and `list`.
use super::*;

/// (command line, words its one error line must contain)
pub(super) const CASES: &[(&str, &str)] = &[
    (
        "tpcc load --db sqlite://{dir}/t.db --warehouses 0",
        "invalid value '0' for '--warehouses <WAREHOUSES>': 0 is out of range:",
    ),
    (
        "tpcc load --db sqlite://{dir}/t.db --warehouses -1",
        "--warehouses -1: negative values are not accepted; give a positive value",
    ),
    (
        "tpcc load --db sqlite://{dir}/t.db --warehouses x",
        "invalid value 'x' for '--warehouses <WAREHOUSES>': not a whole number",
    ),
    (
        "tpcc load --db sqlite://{dir}/t.db --warehouses 1000000000",
        "invalid value '1000000000' for '--warehouses <WAREHOUSES>': 1000000000",
    ),
    (
        "tpcc load --db sqlite://{dir}/t.db --warehouses 1 --loaders 0",
        "invalid value '0' for '--loaders <LOADERS>': 0 is out of range: give 1",
    ),
    (
        "tpcc load --db sqlite://{dir}/t.db --warehouses 1 --loaders -2",
        "--loaders -2: negative values are not accepted; give a positive value",
    ),
    (
        "tpcc load --db sqlite://{dir}/t.db --warehouses 1 --method teleport",
        "invalid value 'teleport' for '--method <METHOD>' [possible values:",
    ),
    (
        "tpcc load --db sqlite://{dir}/t.db --warehouses 1 --seed x",
        "invalid value 'x' for '--seed <SEED>': not a whole number",
    ),
    (
        "tpcc load --db oracle://x --warehouses 1",
        "yardstick tpcc does not support oracle://: use sqlite://, postgres://,",
    ),
    (
        "tpcc load --db null:// --warehouses 1",
        "yardstick tpcc does not support null://: use sqlite://, postgres://,",
    ),
    (
        "tpcc run --db sqlite://{dir}/t.db --warehouses 0",
        "invalid value '0' for '--warehouses <WAREHOUSES>': 0 is out of range:",
    ),
    (
        "tpcc run --db sqlite://{dir}/t.db --warehouses 1 --terminals 0",
        "invalid value '0' for '--terminals <TERMINALS>': 0 is out of range:",
    ),
    (
        "tpcc run --db sqlite://{dir}/t.db --warehouses 1 --terminals -1",
        "--terminals -1: negative values are not accepted; give a positive value",
    ),
    (
        "tpcc run --db sqlite://{dir}/t.db --warehouses 1 --duration 1e30s",
        "invalid value '1e30s' for '--duration <DURATION>': '1e30s' is too long",
    ),
    (
        "tpcc run --db sqlite://{dir}/t.db --warehouses 1 --duration 10",
        "invalid value '10' for '--duration <DURATION>': '10' has no unit: write",
    ),
    (
        "tpcc run --db sqlite://{dir}/t.db --warehouses 1 --warmup -1s",
        "--warmup -1s: negative values are not accepted; give a positive value",
    ),
    (
        "tpcc run --db sqlite://{dir}/t.db --warehouses 1 --isolation chaotic",
        "--isolation chaotic is not a level yardstick tpcc runs: use",
    ),
    (
        "tpcc run --db sqlite://{dir}/t.db --warehouses 1 --target -1",
        "--target -1: negative values are not accepted; give a positive value",
    ),
    (
        "tpcc run --db sqlite://{dir}/t.db --warehouses 1 --target nan",
        "--target NaN: give a positive rate of transactions per second",
    ),
    (
        "tpcc run --db sqlite://{dir}/t.db --warehouses 1 --retries -1",
        "--retries -1: negative values are not accepted; give a positive value",
    ),
    (
        "tpcc run --db sqlite://{dir}/t.db --warehouses 1 --threads 0",
        "invalid value '0' for '--threads <THREADS>': 0 is out of range: give 1",
    ),
    (
        "tpcc run --db sqlite://{dir}/t.db --warehouses 1 --memory-limit 1QB",
        "invalid value '1QB' for '--memory-limit <SIZE>': '1QB' is not a size:",
    ),
    (
        "tpcc run --db sqlite://{dir}/t.db --warehouses 1 --status-interval 0s",
        "SQLite database {dir}/t.db does not exist: run `yardstick tpcc load`",
    ),
    (
        "tpcc run --db sqlite://{dir}/t.db --warehouses 1 --out {dir}/adir",
        "SQLite database {dir}/t.db does not exist: run `yardstick tpcc load`",
    ),
    (
        "tpcc run --db sqlite://{dir}/nosuch.db --warehouses 1",
        "SQLite database {dir}/nosuch.db does not exist: run `yardstick tpcc",
    ),
    (
        "tpcc check --db sqlite://{dir}/nosuch.db",
        "SQLite database {dir}/nosuch.db does not exist: run `yardstick tpcc",
    ),
    (
        "tpcc check --db oracle://x",
        "yardstick tpcc does not support oracle://: use sqlite://, postgres://,",
    ),
    ("tpcc explode", "unrecognized subcommand 'explode'"),
    (
        "matrix --db null:// --budgets lots",
        "--budgets: 'lots' is not a size: use for example 3G, 512MiB or 1.5GiB",
    ),
    (
        "matrix --db null:// --budgets 0",
        "--budgets: '0' is too small to run a benchmark process in: give at",
    ),
    (
        "matrix --db null:// --budgets -1G",
        "--budgets -1G: negative values are not accepted; give a positive value",
    ),
    (
        "matrix --db null:// --tests nosuchtest",
        "--tests nosuchtest is not a test: use read, write-1, write-3, write-6,",
    ),
    (
        "matrix --db null:// --records 0",
        "--records must be at least 1",
    ),
    (
        "matrix --db null:// --records x",
        "invalid value 'x' for '--records <RECORDS>': not a whole number",
    ),
    (
        "matrix --db null:// --records -5",
        "--records -5: negative values are not accepted; give a positive value",
    ),
    (
        "matrix --db null:// --fieldcount 0",
        "fieldcount=0 is out of range: use 1 to 1024 fields",
    ),
    (
        "matrix --db null:// --fieldlength 0",
        "fieldlength=0 minfieldlength=1: a field holds at least 1 byte; give 1",
    ),
    (
        "matrix --db null:// --fieldlength -1",
        "--fieldlength -1: negative values are not accepted; give a positive",
    ),
    (
        "matrix --db null:// --values emoji",
        "--values emoji is not known: use text or random",
    ),
    (
        "matrix --db null:// --duration 1e30s",
        "invalid value '1e30s' for '--duration <DURATION>': '1e30s' is too long",
    ),
    (
        "matrix --db null:// --warmup 5",
        "invalid value '5' for '--warmup <WARMUP>': '5' has no unit: write for",
    ),
    (
        "matrix --db oracle://x",
        "unknown database scheme 'oracle://'; known schemes: null, sqlite,",
    ),
    (
        "matrix --db null:// --out-dir {dir}/afile",
        "cannot create {dir}/afile: File exists (os error 17); choose another",
    ),
    (
        "matrix",
        "the following required arguments were not provided: --db <URL>",
    ),
    (
        "suite nosuchsuite --db null://",
        "invalid value 'nosuchsuite' for '<SUITE>' [possible values: ycsb, ydb,",
    ),
    (
        "suite ycsb --db null:// --records 0",
        "invalid value '0' for '--records <RECORDS>': '0' is not a record count:",
    ),
    (
        "suite ycsb --db null:// --records x",
        "invalid value 'x' for '--records <RECORDS>': 'x' is not a record count:",
    ),
    (
        "suite ycsb --db null:// --repeat 0",
        "--repeat must be at least 1",
    ),
    (
        "suite ycsb --db null:// --repeat -1",
        "--repeat -1: negative values are not accepted; give a positive value",
    ),
    (
        "suite ycsb --db null:// --slo fast",
        "--slo 'fast' has no '<' bound: write [OPERATION:]pNN<LATENCY, e.g.",
    ),
    (
        "suite ycsb --db null:// --slo p99",
        "--slo 'p99' has no '<' bound: write [OPERATION:]pNN<LATENCY, e.g.",
    ),
    (
        "suite ycsb --db null:// --slo p99<-5ms",
        "--slo 'p99<-5ms' has no positive latency: write",
    ),
    (
        "suite ycsb --db null:// --slo-bisections 0",
        "--slo-bisections must be at least 1: the search halves the rate range",
    ),
    (
        "suite ycsb --db null:// --threads 0",
        "--threads, --load-threads and --concurrency must be at least 1",
    ),
    (
        "suite ycsb --db null:// --load-threads 0",
        "--threads, --load-threads and --concurrency must be at least 1",
    ),
    (
        "suite ycsb --db null:// --concurrency 0",
        "--threads, --load-threads and --concurrency must be at least 1",
    ),
    (
        "suite ycsb --db null:// --only Z",
        "--only Z is not a phase of this suite: use load, a, b, c, f, d, reload,",
    ),
    (
        "suite ycsb --db null:// --duration 1e30s",
        "invalid value '1e30s' for '--duration <DURATION>': '1e30s' is too long",
    ),
    (
        "suite ycsb --db null:// --warmup x",
        "invalid value 'x' for '--warmup <WARMUP>': 'x' is not a duration: write",
    ),
    (
        "suite ycsb --db null:// -p colour=red",
        "unknown property 'colour' (-p); `yardstick list properties` shows every",
    ),
    (
        "suite ycsb --db null:// --out-dir {dir}/afile",
        "cannot create {dir}/afile: File exists (os error 17); choose another",
    ),
    (
        "suite ycsb --db oracle://x",
        "unknown database scheme 'oracle://'; known schemes: null, sqlite,",
    ),
    (
        "merge {dir}/ok.json",
        "2 values required by '<FILES> <FILES>...'; only 1 was provided",
    ),
    (
        "merge {dir}/ok.json {dir}/ok.json -o {dir}/m.json",
        "{dir}/ok.json and {dir}/ok.json are the same file: give each instance's",
    ),
    (
        "merge {dir}/ok.json {dir}/nosuch.json -o {dir}/m.json",
        "{dir}/nosuch.json: cannot read it: No such file or directory (os error",
    ),
    (
        "merge {dir}/ok.json {dir}/garbage.json -o {dir}/m.json",
        "{dir}/garbage.json: not JSON (expected ident at line 1 column 2); is it",
    ),
    (
        "merge {dir}/ok.json {dir}/ok2.json -o {dir}/adir",
        "cannot write {dir}/adir: is a directory; choose another -o",
    ),
    (
        "verify {dir}/ok.json",
        "the following required arguments were not provided: --db <URL>",
    ),
    (
        "verify --db null://?store=memory",
        "the following required arguments were not provided: <RESULTS>...",
    ),
    (
        "verify --db oracle://x {dir}/ok.json",
        "unknown database scheme 'oracle://'",
    ),
    (
        "verify --db null:// {dir}/ok.json",
        "null:// stores nothing, so there is nothing to read back: verify with",
    ),
    (
        "run --db null:// --verify -p operationcount=10",
        "null:// stores nothing, so there is nothing to read back: verify with",
    ),
    (
        "verify --db null://?store=memory {dir}/nosuch.json",
        "{dir}/nosuch.json: cannot read it: No such file or directory (os error",
    ),
    (
        "verify --db null://?store=memory {dir}/garbage.json",
        "{dir}/garbage.json: not JSON (expected ident at line 1 column 2); is it",
    ),
    (
        "verify --db null://?store=memory {dir}/ok.json",
        "nothing to verify: the phases inserted no records",
    ),
    (
        "verify --db null://?store=memory {dir}/ok.json --concurrency 0",
        "--threads must be at least 1 and --concurrency between 1 and 1024",
    ),
    (
        "verify --db null://?store=memory {dir}/ok.json --threads -1",
        "--threads -1: negative values are not accepted; give a positive value",
    ),
    (
        "replay {dir}/ok.json.trace",
        "the following required arguments were not provided: --db <URL>",
    ),
    (
        "replay --db null://",
        "the following required arguments were not provided: <FILE>",
    ),
    (
        "replay {dir}/nosuch.trace --db null://",
        "cannot read {dir}/nosuch.trace: No such file or directory (os error 2);",
    ),
    (
        "replay {dir}/garbage.json --db null://",
        "{dir}/garbage.json line 1: not a Redis MONITOR line (expected:",
    ),
    (
        "replay {dir}/empty --db null://",
        "{dir}/empty holds no command replay can carry out",
    ),
    (
        "replay {dir}/cut.trace --db null://",
        "{dir}/cut.trace is damaged at byte",
    ),
    (
        "replay {dir}/ok.json.trace --db null:// --speed 0",
        "--speed must be a positive number (2 plays twice as fast",
    ),
    (
        "replay {dir}/ok.json.trace --db null:// --speed x",
        "invalid value 'x' for '--speed <SPEED>'",
    ),
    (
        "replay {dir}/ok.json.trace --db oracle://x",
        "unknown database scheme 'oracle://'",
    ),
    (
        "replay {dir}/ok.json.trace --db null:// --concurrency 0",
        "--threads must be at least 1 and --concurrency between 1 and 1024",
    ),
    (
        "replay {dir}/ok.json.trace --db null:// --out {dir}/adir",
        "cannot write the result file {dir}/adir: is a directory; choose another",
    ),
    (
        "replay {dir}/ok.json.trace --db null:// --trace {dir}/adir",
        "cannot write the trace file {dir}/adir: is a directory; choose another",
    ),
    (
        "run --db null:// -p operationcount=10 --trace {dir}/adir",
        "cannot write the trace file {dir}/adir: is a directory; choose another",
    ),
    (
        "run --db null:// -p operationcount=10 --trace {dir}/link.json",
        "cannot write the trace file {dir}/link.json:",
    ),
    (
        "tpcc run --db sqlite://{dir}/t.db --warehouses 1 --sending batched",
        "--sending batched: give pipelined or one-by-one",
    ),
    (
        "suite ycsb --db null:// --repeat 2 --until ci<5%",
        "--until ends a series of repetitions: give --repeat 3 or more",
    ),
    (
        "suite ycsb --db null:// --repeat 5 --until ci<500%",
        "--until 'ci<500%' is not a condition: write ci<2% (throughput) or p99",
    ),
    (
        "compare {dir}/ok.json",
        "the following required arguments were not provided: <B>",
    ),
    (
        "compare {dir}/ok.json {dir}/nosuch.json",
        "{dir}/nosuch.json: cannot read it: No such file or directory (os error",
    ),
    (
        "compare {dir}/ok.json {dir}/garbage.json",
        "{dir}/garbage.json: not JSON (expected ident at line 1 column 2); is it",
    ),
    (
        "report {dir}/ok.json --format pdf",
        "invalid value 'pdf' for '--format <FORMAT>' [possible values: html, md,",
    ),
    (
        "report {dir}/nosuch.json -o {dir}/r.html",
        "{dir}/nosuch.json: cannot read it: No such file or directory (os error",
    ),
    (
        "report {dir}/garbage.json -o {dir}/r.html",
        "{dir}/garbage.json: not JSON (expected ident at line 1 column 2); is it",
    ),
    (
        "report {dir}/ok.json -o {dir}/adir",
        "cannot write {dir}/adir: is a directory; choose another -o",
    ),
    (
        "report",
        "the following required arguments were not provided: --out <FILE>",
    ),
    (
        "list colours",
        "invalid value 'colours' for '[WHAT]' [possible values: all, bindings,",
    ),
];

#[test]
fn bad_arguments_of_the_other_commands_are_refused_in_one_line() {
    let fx = Fixture::new();
    let rows = split_rows(&fx, CASES);
    assert_none("arguments", rows.len(), failures(&rows));
}
