//! The built-in sequences: YCSB's (load A, run A, B, C, F, D, reload, E) and
//! the read/write mixes, with what each preset adds to every phase.
use super::*;

/// One phase of a sequence.
#[derive(Debug, Clone, PartialEq)]
pub struct StepDef {
    pub name: &'static str,
    pub load: bool,
    /// The built-in workload file it starts from.
    pub workload: &'static str,
    pub props: &'static [(&'static str, &'static str)],
    /// Records per batch (loads).
    pub batch: Option<u64>,
    /// Whether it writes (so the data is dirty afterwards).
    pub writes: bool,
    pub description: &'static str,
}

const fn load(name: &'static str, workload: &'static str, description: &'static str) -> StepDef {
    StepDef {
        name,
        load: true,
        workload,
        props: &[],
        batch: None,
        writes: true,
        description,
    }
}

const fn run(
    name: &'static str,
    workload: &'static str,
    writes: bool,
    description: &'static str,
) -> StepDef {
    StepDef {
        name,
        load: false,
        workload,
        props: &[],
        batch: None,
        writes,
        description,
    }
}

/// YCSB's recommended order: D grows the data set, so E gets a fresh load.
pub const YCSB: &[StepDef] = &[
    load("load", "workloada", "load recordcount records"),
    run("a", "workloada", true, "A: 50% reads, 50% updates"),
    run("b", "workloadb", true, "B: 95% reads, 5% updates"),
    run("c", "workloadc", false, "C: 100% reads"),
    run(
        "f",
        "workloadf",
        true,
        "F: 50% reads, 50% read-modify-writes",
    ),
    run(
        "d",
        "workloadd",
        true,
        "D: 95% reads of the latest, 5% inserts",
    ),
    load("reload", "workloade", "empty the table and load it again"),
    run("e", "workloade", true, "E: 95% short scans, 5% inserts"),
];

const MIX_FIELDS: &[(&str, &str)] = &[("fieldcount", "10"), ("fieldlength", "10")];

/// The MongoDB/SequoiaDB/Cassandra/HBase report's scenarios.
pub(crate) const MIXES: &[StepDef] = &[
    StepDef {
        props: MIX_FIELDS,
        ..load("load", "workloadc", "single-record load")
    },
    StepDef {
        props: MIX_FIELDS,
        batch: Some(3000),
        ..load(
            "batch-load",
            "workloadc",
            "batch load, 3,000 records per batch",
        )
    },
    StepDef {
        props: &[
            ("fieldcount", "10"),
            ("fieldlength", "10"),
            ("readproportion", "1"),
            ("updateproportion", "0"),
        ],
        ..run("read100", "workloadc", false, "100% reads")
    },
    StepDef {
        props: &[
            ("fieldcount", "10"),
            ("fieldlength", "10"),
            ("readproportion", "0.5"),
            ("updateproportion", "0"),
            ("insertproportion", "0.5"),
        ],
        ..run(
            "read50-insert50",
            "workloada",
            true,
            "50% reads, 50% inserts",
        )
    },
    StepDef {
        props: &[
            ("fieldcount", "10"),
            ("fieldlength", "10"),
            ("readproportion", "0.05"),
            ("updateproportion", "0.95"),
        ],
        ..run("update95-read5", "workloada", true, "95% updates, 5% reads")
    },
    StepDef {
        props: &[
            ("fieldcount", "10"),
            ("fieldlength", "10"),
            ("readproportion", "0.95"),
            ("updateproportion", "0.05"),
        ],
        ..run("read95-update5", "workloadb", true, "95% reads, 5% updates")
    },
    StepDef {
        props: &[
            ("fieldcount", "10"),
            ("fieldlength", "10"),
            ("readproportion", "0.95"),
            ("updateproportion", "0"),
            ("insertproportion", "0.05"),
            ("requestdistribution", "latest"),
        ],
        ..run(
            "read95-insert5",
            "workloadd",
            true,
            "95% reads of the latest records, 5% inserts",
        )
    },
];

/// The preset's sequence, the properties it adds to every phase, and its defaults.
pub struct Preset {
    pub steps: &'static [StepDef],
    pub props: &'static [(&'static str, &'static str)],
    pub records: &'static [u64],
    pub slo: Option<&'static str>,
}

pub fn preset(name: SuiteName) -> Preset {
    match name {
        SuiteName::Ycsb => Preset {
            steps: YCSB,
            props: &[],
            records: &[100_000],
            slo: None,
        },
        SuiteName::Ydb => Preset {
            steps: YCSB,
            props: &[
                ("requestdistribution", "zipfian"),
                ("insert.semantics", "insert"),
                ("update.semantics", "update"),
            ],
            records: &[100_000],
            slo: Some("p99<50ms"),
        },
        SuiteName::Scaling => Preset {
            steps: YCSB,
            props: &[],
            records: &[1_000_000, 10_000_000],
            slo: None,
        },
        // The report ran YCSB, whose Cassandra and HBase bindings write
        // blindly; blind writes everywhere keep its systems comparable.
        SuiteName::Mixes => Preset {
            steps: MIXES,
            props: &[
                ("insert.semantics", "upsert"),
                ("update.semantics", "upsert"),
            ],
            records: &[100_000],
            slo: None,
        },
    }
}
