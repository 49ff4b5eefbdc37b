//! The YCSB core workload's configuration, parsed from properties and checked
//! as a whole: every inconsistency is one clear message naming the fix.
use super::properties::{self as p, Properties, PropertyError};
use crate::binding::{InsertMode, Schema, UpdateMode};
use crate::generator::zipfian::Growth;
use crate::op::OpKind;
use std::time::Duration;

#[derive(Debug, Clone, PartialEq)]
pub enum RequestDistribution {
    Uniform,
    /// Scrambled Zipfian over the key space plus expected inserts.
    Zipfian {
        theta: f64,
    },
    /// Workload D's skewed latest.
    Latest {
        growth: Growth,
    },
    Hotspot {
        data_fraction: f64,
        opn_fraction: f64,
    },
    Sequential,
    Exponential {
        percentile: f64,
        frac: f64,
    },
}

impl RequestDistribution {
    pub fn name(&self) -> &'static str {
        match self {
            RequestDistribution::Uniform => "uniform",
            RequestDistribution::Zipfian { .. } => "zipfian",
            RequestDistribution::Latest { .. } => "latest",
            RequestDistribution::Hotspot { .. } => "hotspot",
            RequestDistribution::Sequential => "sequential",
            RequestDistribution::Exponential { .. } => "exponential",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LengthDistribution {
    Constant,
    Uniform,
    Zipfian,
}

/// The highest `target` accepted: a hundred million operations per second,
/// far beyond one client process, and a schedule step of 10 ns.
pub const MAX_TARGET: f64 = 1e8;

/// The longest scan accepted: a million records (YCSB's default is 1,000);
/// longer is a typo that would hold gigabytes per scan.
pub const MAX_SCAN_LENGTH: u64 = 1_000_000;

#[derive(Debug, Clone, PartialEq)]
pub struct CoreConfig {
    pub record_count: u64,
    pub operation_count: u64,
    pub field_count: usize,
    pub field_length: u64,
    pub min_field_length: u64,
    pub field_length_distribution: LengthDistribution,
    pub read_all_fields: bool,
    pub write_all_fields: bool,
    /// Operation mix: (weight, kind), weights as given.
    pub mix: Vec<(f64, OpKind)>,
    pub request_distribution: RequestDistribution,
    pub min_scan_length: u64,
    pub max_scan_length: u64,
    pub scan_length_distribution: LengthDistribution,
    pub ordered_inserts: bool,
    pub insert_start: u64,
    pub insert_count: u64,
    pub zero_padding: usize,
    pub table: String,
    pub field_name_prefix: String,
    pub data_integrity: bool,
    /// Field values are review-like text (`valuegenerator=text`), not random bytes.
    pub text_values: bool,
    /// Run phase of one of several instances (`--instance i/n`): (i, n). New
    /// records of instance i take every n-th key number past recordcount, so
    /// instances never insert the same key.
    pub instance: (u64, u64),
    pub max_execution_time: Option<Duration>,
    pub thread_count: usize,
    /// Operations per second over all threads; `None`: closed loop.
    pub target: Option<f64>,
    pub insertion_retry_limit: u32,
    pub insertion_retry_interval: Duration,
    pub retry_limit: u32,
    pub batch_size: usize,
    pub retry_backoff: Duration,
    pub insert_mode: InsertMode,
    pub update_mode: UpdateMode,
    pub status_interval: Duration,
    /// How paced operations wait for their starts.
    pub pacing: crate::run::Pacing,
}

fn invalid(msg: impl Into<String>) -> PropertyError {
    PropertyError::Invalid(msg.into())
}

fn length_distribution(
    props: &Properties,
    name: &str,
) -> Result<LengthDistribution, PropertyError> {
    Ok(
        match props.get_choice(name, &["constant", "uniform", "zipfian"])? {
            "constant" => LengthDistribution::Constant,
            "uniform" => LengthDistribution::Uniform,
            _ => LengthDistribution::Zipfian,
        },
    )
}

impl CoreConfig {
    pub fn from_properties(props: &Properties) -> Result<Self, PropertyError> {
        let workload = props.get(p::WORKLOAD);
        if !workload.ends_with("CoreWorkload") {
            return Err(invalid(format!(
                "workload={workload} is not supported: yardstick implements YCSB's CoreWorkload (site.ycsb.workloads.CoreWorkload)"
            )));
        }
        let record_count = props.get_u64(p::RECORD_COUNT)?;
        let operation_count = props.get_u64(p::OPERATION_COUNT)?;
        let field_count = props.get_u64(p::FIELD_COUNT)? as usize;
        if field_count == 0 || field_count > 1024 {
            return Err(invalid(format!(
                "fieldcount={field_count} is out of range: use 1 to 1024 fields"
            )));
        }
        let field_length = props.get_u64(p::FIELD_LENGTH)?;
        let min_field_length = props.get_u64(p::MIN_FIELD_LENGTH)?;
        let field_length_distribution = length_distribution(props, p::FIELD_LENGTH_DISTRIBUTION)?;
        if field_length == 0 || min_field_length == 0 {
            return Err(invalid(format!(
                "fieldlength={field_length} minfieldlength={min_field_length}: a field holds at least 1 byte; give 1 or more"
            )));
        }
        if min_field_length > field_length {
            return Err(invalid(format!(
                "minfieldlength={min_field_length} is larger than fieldlength={field_length}; lower minfieldlength"
            )));
        }
        // YCSB accepts and ignores it: a typo in it is still a typo
        props.get_bool(p::READ_ALL_FIELDS_BY_NAME)?;
        if field_length > 64 << 20 {
            return Err(invalid(format!(
                "fieldlength={field_length} is larger than 64 MiB; use a smaller value"
            )));
        }

        let mut mix = Vec::new();
        for (name, kind) in [
            (p::READ_PROPORTION, OpKind::Read),
            (p::UPDATE_PROPORTION, OpKind::Update),
            (p::INSERT_PROPORTION, OpKind::Insert),
            (p::SCAN_PROPORTION, OpKind::Scan),
            (p::READMODIFYWRITE_PROPORTION, OpKind::ReadModifyWrite),
        ] {
            let w = props.get_f64(name)?;
            if w < 0.0 {
                return Err(invalid(format!(
                    "{name}={w} is negative; proportions are >= 0"
                )));
            }
            if w > 1.0 {
                return Err(invalid(format!(
                    "{name}={w} is above 1; a proportion is a fraction of the operations, from 0 to 1"
                )));
            }
            mix.push((w, kind));
        }
        if mix.iter().all(|(w, _)| *w == 0.0) {
            return Err(invalid(
                "every operation proportion is 0; set readproportion, updateproportion, insertproportion, scanproportion or readmodifywriteproportion",
            ));
        }
        // YCSB would quietly treat proportions that do not add up to 1 as
        // weights; a proportion set on top of a workload file's usually means
        // another should have been lowered
        let sum: f64 = mix.iter().map(|(w, _)| w).sum();
        if (sum - 1.0).abs() > 1e-6 {
            let set: Vec<String> = mix
                .iter()
                .zip([
                    p::READ_PROPORTION,
                    p::UPDATE_PROPORTION,
                    p::INSERT_PROPORTION,
                    p::SCAN_PROPORTION,
                    p::READMODIFYWRITE_PROPORTION,
                ])
                .filter(|((w, _), _)| *w > 0.0)
                .map(|((w, _), n)| format!("{n}={w}"))
                .collect();
            return Err(invalid(format!(
                "the operation proportions add up to {sum} ({}), not 1; set them so they add up to 1",
                set.join(", ")
            )));
        }

        let fraction = |name: &str| -> Result<f64, PropertyError> {
            let v = props.get_f64(name)?;
            if !(0.0..=1.0).contains(&v) {
                return Err(invalid(format!(
                    "{name}={} must be between 0 and 1",
                    props.shown(name)
                )));
            }
            Ok(v)
        };
        // every distribution's settings are checked, used or not: a wrong
        // value is a mistake whichever distribution runs
        let hotspot = RequestDistribution::Hotspot {
            data_fraction: fraction(p::HOTSPOT_DATA_FRACTION)?,
            opn_fraction: fraction(p::HOTSPOT_OPN_FRACTION)?,
        };
        let percentile = props.get_f64(p::EXPONENTIAL_PERCENTILE)?;
        if !(0.0 < percentile && percentile < 100.0) {
            return Err(invalid(format!(
                "exponential.percentile={} must be between 0 and 100 (exclusive)",
                props.shown(p::EXPONENTIAL_PERCENTILE)
            )));
        }
        let frac = props.get_f64(p::EXPONENTIAL_FRAC)?;
        if frac <= 0.0 || frac > 1.0 {
            return Err(invalid(format!(
                "exponential.frac={} must be above 0 and at most 1 (a fraction of recordcount)",
                props.shown(p::EXPONENTIAL_FRAC)
            )));
        }
        let theta = props.get_f64(p::ZIPFIAN_CONSTANT)?;
        if theta <= 0.0 || theta == 1.0 || theta > 100.0 {
            return Err(invalid(format!(
                "zipfian.constant={} is not usable: choose a value above 0 (not 1) and at most 100, such as 0.99",
                props.shown(p::ZIPFIAN_CONSTANT)
            )));
        }
        // checked whatever the distribution, like the other distributions' settings
        let growth = match props.get_choice(p::LATEST_GROWTH, &["ycsb", "textbook"])? {
            "ycsb" => Growth::Ycsb,
            _ => Growth::Textbook,
        };
        let request_distribution = match props.get_choice(
            p::REQUEST_DISTRIBUTION,
            &[
                "uniform",
                "zipfian",
                "latest",
                "hotspot",
                "sequential",
                "exponential",
            ],
        )? {
            "uniform" => RequestDistribution::Uniform,
            "zipfian" => RequestDistribution::Zipfian { theta },
            "latest" => RequestDistribution::Latest { growth },
            "hotspot" => hotspot,
            "sequential" => RequestDistribution::Sequential,
            _ => RequestDistribution::Exponential { percentile, frac },
        };

        let min_scan_length = props.get_u64(p::MIN_SCAN_LENGTH)?;
        let max_scan_length = props.get_u64(p::MAX_SCAN_LENGTH)?;
        let scan_length_distribution = length_distribution(props, p::SCAN_LENGTH_DISTRIBUTION)?;
        if scan_length_distribution == LengthDistribution::Constant {
            return Err(invalid(
                "scanlengthdistribution=constant is not supported: use uniform or zipfian (set minscanlength=maxscanlength for a fixed length)",
            ));
        }
        if max_scan_length > MAX_SCAN_LENGTH {
            return Err(invalid(format!(
                "maxscanlength={} is longer than a scan can return: give at most {MAX_SCAN_LENGTH} records",
                props.shown(p::MAX_SCAN_LENGTH)
            )));
        }
        if min_scan_length == 0 || min_scan_length > max_scan_length {
            return Err(invalid(format!(
                "scan lengths minscanlength={min_scan_length} maxscanlength={max_scan_length} are inconsistent: need 1 <= minscanlength <= maxscanlength"
            )));
        }

        let ordered_inserts =
            props.get_choice(p::INSERT_ORDER, &["hashed", "ordered"])? == "ordered";
        let insert_start = props.get_u64(p::INSERT_START)?;
        let insert_count = if props.is_set(p::INSERT_COUNT) {
            props.get_u64(p::INSERT_COUNT)?
        } else {
            record_count.saturating_sub(insert_start)
        };
        if record_count > 0 && insert_start + insert_count > record_count {
            return Err(invalid(format!(
                "insertstart={insert_start} + insertcount={insert_count} exceeds recordcount={record_count}; recordcount must be at least insertstart + insertcount"
            )));
        }
        let zero_padding = props.get_u64(p::ZERO_PADDING)? as usize;
        if zero_padding > 200 {
            return Err(invalid(format!(
                "zeropadding={zero_padding} is too large; use at most 200"
            )));
        }
        let table = props.get(p::TABLE).to_string();
        if table.is_empty() || !table.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(invalid(format!(
                "table={table} is not a plain identifier: use letters, digits and underscores"
            )));
        }
        let field_name_prefix = props.get(p::FIELD_NAME_PREFIX).to_string();
        if field_name_prefix.is_empty()
            || !field_name_prefix
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            return Err(invalid(format!(
                "fieldnameprefix={field_name_prefix} is not a plain identifier: use letters, digits and underscores"
            )));
        }
        let data_integrity = props.get_bool(p::DATA_INTEGRITY)?;
        if data_integrity && field_length_distribution != LengthDistribution::Constant {
            return Err(invalid(
                "dataintegrity=true needs fieldlengthdistribution=constant (YCSB's rule): set fieldlengthdistribution=constant",
            ));
        }
        let text_values = props.get_choice(p::VALUE_GENERATOR, &["random", "text"])? == "text";
        if text_values && data_integrity {
            return Err(invalid(
                "valuegenerator=text cannot be verified by dataintegrity=true (YCSB's check needs its own deterministic values): drop one of them",
            ));
        }
        let met = props.get_f64(p::MAX_EXECUTION_TIME)?;
        if met < 0.0 || met > crate::units::MAX_RUN_TIME.as_secs_f64() {
            return Err(invalid(format!(
                "maxexecutiontime={} is out of range: give 0 (no limit) to {} seconds (31 days)",
                props.shown(p::MAX_EXECUTION_TIME),
                crate::units::MAX_RUN_TIME.as_secs()
            )));
        }
        let max_execution_time = (met > 0.0).then(|| Duration::from_secs_f64(met));
        let thread_count = props.get_u64(p::THREAD_COUNT)? as usize;
        if thread_count == 0 || thread_count > 4096 {
            return Err(invalid(format!(
                "threadcount={thread_count} must be between 1 and 4096"
            )));
        }
        let target = props.get_f64(p::TARGET)?;
        if target < 0.0 {
            return Err(invalid(format!(
                "target={target} is negative; use 0 for closed loop"
            )));
        }
        if target > MAX_TARGET {
            return Err(invalid(format!(
                "target={target} operations per second is more than any client reaches (one process does a few million); give at most {MAX_TARGET:.0}, or 0 for closed loop"
            )));
        }
        let insertion_retry_limit = props.get_u64(p::INSERTION_RETRY_LIMIT)?.min(1_000_000) as u32;
        let retry_interval = props.get_f64(p::INSERTION_RETRY_INTERVAL)?;
        if !(0.0..=3600.0).contains(&retry_interval) {
            return Err(invalid(format!(
                "core_workload_insertion_retry_interval={} is out of range: give 0 to 3600 seconds",
                props.shown(p::INSERTION_RETRY_INTERVAL)
            )));
        }
        let batch_size = props.get_u64(p::BATCH_SIZE)?;
        if !(1..=100_000).contains(&batch_size) {
            return Err(invalid(format!(
                "db.batchsize={batch_size} is out of range: use 1 (no batching) to 100000"
            )));
        }
        let retry_limit = props.get_u64(p::RETRY_LIMIT)?.min(1_000) as u32;
        let retry_backoff = props.get_f64(p::RETRY_BACKOFF)?;
        if !(0.0..=60.0).contains(&retry_backoff) {
            return Err(invalid(format!(
                "retry.backoff={} is out of range: use 0 to 60 seconds",
                props.shown(p::RETRY_BACKOFF)
            )));
        }
        let insert_mode = match props.get_choice(p::INSERT_SEMANTICS, &["insert", "upsert"])? {
            "insert" => InsertMode::Insert,
            _ => InsertMode::Upsert,
        };
        let update_mode = match props.get_choice(p::UPDATE_SEMANTICS, &["update", "upsert"])? {
            "update" => UpdateMode::Update,
            _ => UpdateMode::Upsert,
        };
        let si = props.get_f64(p::STATUS_INTERVAL)?;
        if !(0.1..=3600.0).contains(&si) {
            return Err(invalid(format!(
                "status.interval={si} is out of range: use 0.1 to 3600 seconds"
            )));
        }
        Ok(CoreConfig {
            record_count,
            operation_count,
            field_count,
            field_length,
            min_field_length,
            field_length_distribution,
            read_all_fields: props.get_bool(p::READ_ALL_FIELDS)?,
            write_all_fields: props.get_bool(p::WRITE_ALL_FIELDS)?,
            mix,
            request_distribution,
            min_scan_length,
            max_scan_length,
            scan_length_distribution,
            ordered_inserts,
            insert_start,
            insert_count,
            zero_padding,
            table,
            field_name_prefix,
            data_integrity,
            text_values,
            instance: (0, 1),
            max_execution_time,
            thread_count,
            target: (target > 0.0).then_some(target),
            insertion_retry_limit,
            insertion_retry_interval: Duration::from_secs_f64(retry_interval),
            retry_limit,
            batch_size: batch_size as usize,
            retry_backoff: Duration::from_secs_f64(retry_backoff),
            insert_mode,
            update_mode,
            status_interval: Duration::from_secs_f64(si),
            pacing: match props.get_choice(p::PACING, &["sleep", "spin"])? {
                "spin" => crate::run::Pacing::Spin,
                _ => crate::run::Pacing::Sleep,
            },
        })
    }

    pub fn schema(&self) -> Schema {
        Schema {
            table: self.table.clone(),
            fields: (0..self.field_count)
                .map(|i| format!("{}{}", self.field_name_prefix, i))
                .collect(),
        }
    }

    /// Share of `kind` in the run-phase mix.
    pub fn proportion(&self, kind: OpKind) -> f64 {
        let total: f64 = self.mix.iter().map(|(w, _)| w).sum();
        self.mix
            .iter()
            .filter(|(_, k)| *k == kind)
            .map(|(w, _)| w / total)
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(kv: &[&str]) -> Result<CoreConfig, PropertyError> {
        let mut props = Properties::new();
        for o in kv {
            props.set_override(o)?;
        }
        CoreConfig::from_properties(&props)
    }

    #[test]
    fn defaults_are_ycsb_defaults() {
        let c = cfg(&["recordcount=1000"]).unwrap();
        assert_eq!(c.field_count, 10);
        assert_eq!(c.field_length, 100);
        assert!(c.read_all_fields && !c.write_all_fields);
        assert_eq!(c.proportion(OpKind::Read), 0.95);
        assert_eq!(c.request_distribution, RequestDistribution::Uniform);
        assert_eq!(c.insert_count, 1000);
        assert_eq!(c.schema().fields[9], "field9");
        assert_eq!(c.insert_mode, InsertMode::Insert);
        assert_eq!(c.target, None);
    }

    #[test]
    fn custom_mixes_need_only_properties() {
        let c = cfg(&[
            "recordcount=10",
            "readproportion=0.05",
            "updateproportion=0.95",
        ])
        .unwrap();
        assert!((c.proportion(OpKind::Update) - 0.95).abs() < 1e-12);
    }

    #[test]
    fn inconsistent_settings_are_rejected_with_a_fix() {
        let e = |kv: &[&str]| cfg(kv).unwrap_err().to_string();
        assert!(e(&["readproportion=0", "updateproportion=0"])
            .contains("every operation proportion is 0"));
        assert!(e(&["requestdistribution=pareto"]).contains("one of uniform"));
        assert!(e(&["dataintegrity=true", "fieldlengthdistribution=uniform"]).contains("constant"));
        assert!(e(&["recordcount=10", "insertstart=5", "insertcount=10"])
            .contains("exceeds recordcount"));
        assert!(e(&["minscanlength=10", "maxscanlength=5"]).contains("minscanlength"));
        assert!(
            e(&["zipfian.constant=1", "requestdistribution=zipfian"]).contains("zipfian.constant")
        );
        assert!(e(&["readproportion=-1"]).contains("negative"));
        assert!(e(&["table=users;drop"]).contains("identifier"));
        assert!(e(&["workload=site.ycsb.workloads.RestWorkload"]).contains("CoreWorkload"));
        assert!(e(&["status.interval=0.01"]).contains("status.interval"));
    }
}
