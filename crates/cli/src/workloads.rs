//! YCSB's workload files, built into the binary so `-P workloada` works from
//! any directory; a path to a file works too.
pub(crate) const BUILTIN: &[(&str, &str)] = &[
    ("workloada", include_str!("../../../workloads/workloada")),
    ("workloadb", include_str!("../../../workloads/workloadb")),
    ("workloadc", include_str!("../../../workloads/workloadc")),
    ("workloadd", include_str!("../../../workloads/workloadd")),
    ("workloade", include_str!("../../../workloads/workloade")),
    ("workloadf", include_str!("../../../workloads/workloadf")),
];

/// The built-in workload named like the last component of `arg`
/// (`workloada` or `workloads/workloada`), when `arg` is not an existing file.
pub(crate) fn builtin(arg: &std::path::Path) -> Option<(&'static str, &'static str)> {
    if arg.exists() {
        return None;
    }
    let name = arg.file_name()?.to_str()?;
    BUILTIN.iter().find(|(n, _)| *n == name).copied()
}

/// First comment line of a workload file: its one-line description.
pub(crate) fn description(text: &str) -> &str {
    text.lines()
        .find_map(|l| l.strip_prefix("# "))
        .unwrap_or("")
}
