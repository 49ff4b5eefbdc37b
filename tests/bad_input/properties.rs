//! Bad properties, given with -p and in property files (-P): values out of
//! range, not numbers, unknown choices, inconsistent sets, unknown names,
//! and files that are not property files. The URL carries a password,
//! which must not appear in any message.
use super::*;

/// A database the rows never reach: every row is refused before it opens.
const DB: &str = "postgres://bench:S3cretPw@127.0.0.1:1/ycsb";

/// (-p values on top of workloada, words the one error line must contain)
pub(super) const CASES: &[(&[&str], &str)] = &[
    (
        &["recordcount=-1"],
        "property recordcount=-1 (-p) is not a non-negative integer; fix the",
    ),
    (
        &["recordcount=abc"],
        "property recordcount=abc (-p) is not a non-negative integer; fix the",
    ),
    (
        &["recordcount=1e30"],
        "property recordcount=1e30 (-p) is not a non-negative integer; fix the",
    ),
    (
        &["recordcount=99999999999999999999999"],
        "property recordcount=99999999999999999999999 (-p) is not a non-negative",
    ),
    (
        &["recordcount=1.5"],
        "property recordcount=1.5 (-p) is not a non-negative integer; fix the",
    ),
    (
        &["operationcount=-1"],
        "property operationcount=-1 (-p) is not a non-negative integer; fix the",
    ),
    (
        &["operationcount=lots"],
        "property operationcount=lots (-p) is not a non-negative integer; fix",
    ),
    (
        &["operationcount=1e40"],
        "property operationcount=1e40 (-p) is not a non-negative integer; fix",
    ),
    (
        &["fieldcount=0"],
        "fieldcount=0 is out of range: use 1 to 1024 fields",
    ),
    (
        &["fieldcount=-1"],
        "property fieldcount=-1 (-p) is not a non-negative integer; fix the value",
    ),
    (
        &["fieldcount=x"],
        "property fieldcount=x (-p) is not a non-negative integer; fix the value",
    ),
    (
        &["fieldcount=100000000"],
        "fieldcount=100000000 is out of range: use 1 to 1024 fields",
    ),
    (
        &["fieldlength=0"],
        "fieldlength=0 minfieldlength=1: a field holds at least 1 byte; give 1",
    ),
    (
        &["fieldlength=-1"],
        "property fieldlength=-1 (-p) is not a non-negative integer; fix the",
    ),
    (
        &["fieldlength=huge"],
        "property fieldlength=huge (-p) is not a non-negative integer; fix the",
    ),
    (
        &["fieldlength=10000000000"],
        "fieldlength=10000000000 is larger than 64 MiB; use a smaller value",
    ),
    (
        &["minfieldlength=0"],
        "fieldlength=100 minfieldlength=0: a field holds at least 1 byte; give 1",
    ),
    (
        &["minfieldlength=200"],
        "minfieldlength=200 is larger than fieldlength=100; lower minfieldlength",
    ),
    (
        &["minfieldlength=x"],
        "property minfieldlength=x (-p) is not a non-negative integer; fix the",
    ),
    (
        &["fieldlengthdistribution=pareto"],
        "property fieldlengthdistribution=pareto (-p) is not one of constant,",
    ),
    (
        &["fieldlengthdistribution="],
        "property fieldlengthdistribution= (-p) is not one of constant, uniform,",
    ),
    (
        &["readallfields=maybe"],
        "property readallfields=maybe (-p) is not true or false; fix the value",
    ),
    (
        &["readallfields=2"],
        "property readallfields=2 (-p) is not true or false; fix the value",
    ),
    (
        &["readallfieldsbyname=perhaps"],
        "property readallfieldsbyname=perhaps (-p) is not true or false; fix the",
    ),
    (
        &["writeallfields=yes please"],
        "property writeallfields=yes please (-p) is not true or false; fix the",
    ),
    (
        &["readproportion=1.5"],
        "readproportion=1.5 is above 1; a proportion is a fraction of the",
    ),
    (
        &["readproportion=-0.1"],
        "readproportion=-0.1 is negative; proportions are >= 0",
    ),
    (
        &["readproportion=x"],
        "property readproportion=x (-p) is not a number; fix the value",
    ),
    (
        &["readproportion=nan"],
        "property readproportion=nan (-p) is not a number; fix the value",
    ),
    (
        &["readproportion=inf"],
        "property readproportion=inf (-p) is not a number; fix the value",
    ),
    (
        &["updateproportion=2"],
        "updateproportion=2 is above 1; a proportion is a fraction of the",
    ),
    (
        &["insertproportion=-1"],
        "insertproportion=-1 is negative; proportions are >= 0",
    ),
    (
        &["scanproportion=1e9"],
        "scanproportion=1000000000 is above 1; a proportion is a fraction of the",
    ),
    (
        &["readmodifywriteproportion=abc"],
        "property readmodifywriteproportion=abc (-p) is not a number; fix the",
    ),
    (
        &["readproportion=0.6"],
        "the operation proportions add up to 1.1 (readproportion=0.6,",
    ),
    (
        &["readproportion=0.9", "updateproportion=0.9"],
        "the operation proportions add up to 1.8 (readproportion=0.9,",
    ),
    (
        &["requestdistribution=pareto"],
        "property requestdistribution=pareto (-p) is not one of uniform,",
    ),
    (
        &["requestdistribution="],
        "property requestdistribution= (-p) is not one of uniform, zipfian,",
    ),
    (
        &["latest.growth=gray"],
        "property latest.growth=gray (-p) is not one of ycsb, textbook",
    ),
    (
        &["requestdistribution=uniform", "latest.growth=YCSB!"],
        "property latest.growth=YCSB! (-p) is not one of ycsb, textbook",
    ),
    (
        &["zipfian.constant=1"],
        "zipfian.constant=1 is not usable: choose a value above 0 (not 1) and at",
    ),
    (
        &["zipfian.constant=0"],
        "zipfian.constant=0 is not usable: choose a value above 0 (not 1) and at",
    ),
    (
        &["zipfian.constant=-0.5"],
        "zipfian.constant=-0.5 is not usable: choose a value above 0 (not 1) and",
    ),
    (
        &["zipfian.constant=x"],
        "property zipfian.constant=x (-p) is not a number; fix the value",
    ),
    (
        &["zipfian.constant=nan"],
        "property zipfian.constant=nan (-p) is not a number; fix the value",
    ),
    (
        &["zipfian.constant=1e300"],
        "zipfian.constant=1e300 is not usable: choose a value above 0 (not 1)",
    ),
    (
        &["hotspotdatafraction=1.5"],
        "hotspotdatafraction=1.5 must be between 0 and 1",
    ),
    (
        &["hotspotdatafraction=-0.1"],
        "hotspotdatafraction=-0.1 must be between 0 and 1",
    ),
    (
        &["hotspotopnfraction=2"],
        "hotspotopnfraction=2 must be between 0 and 1",
    ),
    (
        &["hotspotopnfraction=x"],
        "property hotspotopnfraction=x (-p) is not a number; fix the value",
    ),
    (
        &["exponential.percentile=0"],
        "exponential.percentile=0 must be between 0 and 100 (exclusive)",
    ),
    (
        &["exponential.percentile=100"],
        "exponential.percentile=100 must be between 0 and 100 (exclusive)",
    ),
    (
        &["exponential.percentile=150"],
        "exponential.percentile=150 must be between 0 and 100 (exclusive)",
    ),
    (
        &["exponential.percentile=x"],
        "property exponential.percentile=x (-p) is not a number; fix the value",
    ),
    (
        &["exponential.frac=0"],
        "exponential.frac=0 must be above 0 and at most 1 (a fraction of",
    ),
    (
        &["exponential.frac=-1"],
        "exponential.frac=-1 must be above 0 and at most 1 (a fraction of",
    ),
    (
        &["exponential.frac=x"],
        "property exponential.frac=x (-p) is not a number; fix the value",
    ),
    (
        &["minscanlength=0"],
        "scan lengths minscanlength=0 maxscanlength=1000 are inconsistent: need",
    ),
    (
        &["minscanlength=-1"],
        "property minscanlength=-1 (-p) is not a non-negative integer; fix the",
    ),
    (
        &["minscanlength=2000"],
        "scan lengths minscanlength=2000 maxscanlength=1000 are inconsistent:",
    ),
    (
        &["maxscanlength=0"],
        "scan lengths minscanlength=1 maxscanlength=0 are inconsistent: need 1",
    ),
    (
        &["maxscanlength=x"],
        "property maxscanlength=x (-p) is not a non-negative integer; fix the",
    ),
    (
        &["maxscanlength=1e12"],
        "maxscanlength=1e12 is longer than a scan can return: give at most",
    ),
    (
        &["scanlengthdistribution=normal"],
        "property scanlengthdistribution=normal (-p) is not one of constant,",
    ),
    (
        &["insertorder=random"],
        "property insertorder=random (-p) is not one of hashed, ordered; fix the",
    ),
    (
        &["insertorder="],
        "property insertorder= (-p) is not one of hashed, ordered; fix the value",
    ),
    (
        &["insertstart=-1"],
        "property insertstart=-1 (-p) is not a non-negative integer; fix the",
    ),
    (
        &["insertstart=x"],
        "property insertstart=x (-p) is not a non-negative integer; fix the value",
    ),
    (
        &["insertstart=2000", "recordcount=1000"],
        "insertstart=2000 + insertcount=0 exceeds recordcount=1000; recordcount",
    ),
    (
        &["insertcount=-1"],
        "property insertcount=-1 (-p) is not a non-negative integer; fix the",
    ),
    (
        &["insertcount=5000", "recordcount=1000"],
        "insertstart=0 + insertcount=5000 exceeds recordcount=1000; recordcount",
    ),
    (
        &["insertcount=x"],
        "property insertcount=x (-p) is not a non-negative integer; fix the value",
    ),
    (
        &["zeropadding=-1"],
        "property zeropadding=-1 (-p) is not a non-negative integer; fix the",
    ),
    (
        &["zeropadding=x"],
        "property zeropadding=x (-p) is not a non-negative integer; fix the value",
    ),
    (
        &["zeropadding=1000000"],
        "zeropadding=1000000 is too large; use at most 200",
    ),
    (
        &["table="],
        "table= is not a plain identifier: use letters, digits and underscores",
    ),
    (
        &["fieldnameprefix="],
        "fieldnameprefix= is not a plain identifier: use letters, digits and",
    ),
    (
        &["valuegenerator=lorem"],
        "property valuegenerator=lorem (-p) is not one of random, text; fix the",
    ),
    (
        &["dataintegrity=maybe"],
        "property dataintegrity=maybe (-p) is not true or false; fix the value",
    ),
    (
        &["dataintegrity=true", "fieldlengthdistribution=uniform"],
        "dataintegrity=true needs fieldlengthdistribution=constant (YCSB's",
    ),
    (
        &["maxexecutiontime=-1"],
        "maxexecutiontime=-1 is out of range: give 0 (no limit) to 2678400",
    ),
    (
        &["maxexecutiontime=1e30"],
        "maxexecutiontime=1e30 is out of range: give 0 (no limit) to 2678400",
    ),
    (
        &["maxexecutiontime=x"],
        "property maxexecutiontime=x (-p) is not a number; fix the value",
    ),
    (
        &["threadcount=0"],
        "threadcount=0 must be between 1 and 4096",
    ),
    (
        &["threadcount=-1"],
        "property threadcount=-1 (-p) is not a non-negative integer; fix the",
    ),
    (
        &["threadcount=x"],
        "property threadcount=x (-p) is not a non-negative integer; fix the value",
    ),
    (
        &["target=-1"],
        "target=-1 is negative; use 0 for closed loop",
    ),
    (
        &["target=1e12"],
        "target=1000000000000 operations per second is more than any client",
    ),
    (
        &["target=x"],
        "property target=x (-p) is not a number; fix the value",
    ),
    (
        &["target=nan"],
        "property target=nan (-p) is not a number; fix the value",
    ),
    (
        &["core_workload_insertion_retry_limit=-1"],
        "property core_workload_insertion_retry_limit=-1 (-p) is not a",
    ),
    (
        &["core_workload_insertion_retry_limit=x"],
        "property core_workload_insertion_retry_limit=x (-p) is not a",
    ),
    (
        &["core_workload_insertion_retry_interval=-1"],
        "core_workload_insertion_retry_interval=-1 is out of range: give 0 to",
    ),
    (
        &["core_workload_insertion_retry_interval=1e30"],
        "core_workload_insertion_retry_interval=1e30 is out of range: give 0 to",
    ),
    (
        &["core_workload_insertion_retry_interval=x"],
        "property core_workload_insertion_retry_interval=x (-p) is not a number;",
    ),
    (
        &["db.batchsize=0"],
        "db.batchsize=0 is out of range: use 1 (no batching) to 100000",
    ),
    (
        &["db.batchsize=-1"],
        "property db.batchsize=-1 (-p) is not a non-negative integer; fix the",
    ),
    (
        &["db.batchsize=x"],
        "property db.batchsize=x (-p) is not a non-negative integer; fix the",
    ),
    (
        &["retry.limit=-1"],
        "property retry.limit=-1 (-p) is not a non-negative integer; fix the",
    ),
    (
        &["retry.limit=x"],
        "property retry.limit=x (-p) is not a non-negative integer; fix the value",
    ),
    (
        &["retry.backoff=-1"],
        "retry.backoff=-1 is out of range: use 0 to 60 seconds",
    ),
    (
        &["retry.backoff=nan"],
        "property retry.backoff=nan (-p) is not a number; fix the value",
    ),
    (
        &["retry.backoff=1e30"],
        "retry.backoff=1e30 is out of range: use 0 to 60 seconds",
    ),
    (
        &["retry.backoff=x"],
        "property retry.backoff=x (-p) is not a number; fix the value",
    ),
    (
        &["insert.semantics=sometimes"],
        "property insert.semantics=sometimes (-p) is not one of insert, upsert;",
    ),
    (
        &["update.semantics=never"],
        "property update.semantics=never (-p) is not one of update, upsert; fix",
    ),
    (
        &["status.interval=0"],
        "status.interval=0 is out of range: use 0.1 to 3600 seconds",
    ),
    (
        &["status.interval=0.01"],
        "status.interval=0.01 is out of range: use 0.1 to 3600 seconds",
    ),
    (
        &["status.interval=1e9"],
        "status.interval=1000000000 is out of range: use 0.1 to 3600 seconds",
    ),
    (
        &["status.interval=x"],
        "property status.interval=x (-p) is not a number; fix the value",
    ),
    (
        &["status.interval=-1"],
        "status.interval=-1 is out of range: use 0.1 to 3600 seconds",
    ),
    (
        &["workload=site.ycsb.workloads.RestWorkload"],
        "workload=site.ycsb.workloads.RestWorkload is not supported: yardstick",
    ),
    (
        &["workload="],
        "workload= is not supported: yardstick implements YCSB's CoreWorkload",
    ),
    (
        &["recordcont=10"],
        "unknown property 'recordcont' (-p); did you mean 'recordcount'?;",
    ),
    (
        &["readproportoin=0.5"],
        "unknown property 'readproportoin' (-p); did you mean 'readproportion'?;",
    ),
    (&["=5"], "malformed override '=5': expected -p name=value"),
    (
        &["noequals"],
        "malformed override 'noequals': expected -p name=value",
    ),
    (
        &["minfieldlength=200", "fieldlengthdistribution=uniform"],
        "minfieldlength=200 is larger than fieldlength=100; lower minfieldlength",
    ),
    (
        &["hotspotdatafraction=nan"],
        "property hotspotdatafraction=nan (-p) is not a number; fix the value",
    ),
    (
        &["fieldcount=1e4"],
        "fieldcount=10000 is out of range: use 1 to 1024 fields",
    ),
    (
        &["readallfields="],
        "property readallfields= (-p) is not true or false; fix the value",
    ),
    (
        &["requestdistribution=ZIPF"],
        "property requestdistribution=ZIPF (-p) is not one of uniform, zipfian,",
    ),
];

/// The property files of the files table.
pub(super) fn write_files(d: &Path) {
    let w = |name: &str, bytes: &[u8]| std::fs::write(d.join(name), bytes).unwrap();
    w(
        "garbage.properties",
        b"this is not a property file at all\n",
    );
    w("badvalue.properties", b"recordcount=abc\n");
    w("binary.properties", b"\xff\xfe\x00\x01");
    w(
        "longline.properties",
        format!("recordcount={}\n", "9".repeat(1_000_000)).as_bytes(),
    );
    w(
        "proportions.properties",
        b"readproportion=0.7\nupdateproportion=0.7\n",
    );
    w("unknown.properties", b"colour=red\n");
    w("continuation.properties", b"recordcount=\\");
    w("nul.properties", b"recordcount=1\0\n");
    w("bom.properties", b"\xef\xbb\xbfrecordcount=abc\n");
    w("hugenumber.properties", b"fieldlength=1e30\n");
    w("negative.properties", b"operationcount=-5\n");
    w("secret.properties", b"db.passwd=hunter2\nrecordcount=x\n");
}

#[test]
fn bad_properties_are_refused_in_one_line() {
    let rows: Vec<(Vec<String>, String)> = CASES
        .iter()
        .map(|(props, words)| {
            let mut args: Vec<String> = ["run", "--db", DB, "-P", "workloada"]
                .iter()
                .map(|s| s.to_string())
                .collect();
            for p in *props {
                args.extend(["-p".to_string(), p.to_string()]);
            }
            (args, words.to_string())
        })
        .collect();
    assert_none("properties", rows.len(), failures(&rows));
}
