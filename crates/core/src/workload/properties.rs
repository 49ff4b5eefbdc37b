//! YCSB-style properties: every property yardstick knows, with its YCSB name,
//! default and meaning, in one table; a store that reads property files and
//! `-p` overrides, rejects unknown names (suggesting the closest known one),
//! and remembers where each value came from.

use std::collections::BTreeMap;
use std::path::Path;

/// One known property.
#[derive(Debug, Clone, Copy)]
pub struct PropertyDef {
    pub name: &'static str,
    /// Default as text; empty when derived from other properties (see `doc`).
    pub default: &'static str,
    pub doc: &'static str,
}

macro_rules! props {
    ($($konst:ident = $name:literal, $default:literal, $doc:literal;)*) => {
        $(pub const $konst: &str = $name;)*
        /// Every property yardstick understands, in documentation order.
        pub const PROPERTIES: &[PropertyDef] = &[
            $(PropertyDef { name: $name, default: $default, doc: $doc },)*
        ];
    };
}

props! {
    WORKLOAD = "workload", "site.ycsb.workloads.CoreWorkload", "workload class; only YCSB's CoreWorkload is implemented";
    RECORD_COUNT = "recordcount", "0", "records loaded, and the key space of the run phase";
    OPERATION_COUNT = "operationcount", "0", "operations in the run phase (0: bounded by time only)";
    FIELD_COUNT = "fieldcount", "10", "fields per record";
    FIELD_LENGTH = "fieldlength", "100", "field value length in bytes (the maximum for non-constant distributions)";
    MIN_FIELD_LENGTH = "minfieldlength", "1", "minimum field length for the uniform and zipfian length distributions";
    FIELD_LENGTH_DISTRIBUTION = "fieldlengthdistribution", "constant", "constant, uniform or zipfian";
    READ_ALL_FIELDS = "readallfields", "true", "reads return every field (false: one random field)";
    READ_ALL_FIELDS_BY_NAME = "readallfieldsbyname", "false", "accepted for compatibility; reads of all fields always name the columns";
    WRITE_ALL_FIELDS = "writeallfields", "false", "updates write every field (false: one random field)";
    READ_PROPORTION = "readproportion", "0.95", "share of reads in the run-phase mix";
    UPDATE_PROPORTION = "updateproportion", "0.05", "share of updates";
    INSERT_PROPORTION = "insertproportion", "0", "share of inserts (grows the key space)";
    SCAN_PROPORTION = "scanproportion", "0", "share of scans";
    READMODIFYWRITE_PROPORTION = "readmodifywriteproportion", "0", "share of read-modify-writes (read a record, then update it)";
    REQUEST_DISTRIBUTION = "requestdistribution", "uniform", "key popularity: uniform, zipfian, latest, hotspot, sequential or exponential";
    ZIPFIAN_CONSTANT = "zipfian.constant", "0.99", "theta of the zipfian and scrambled zipfian distributions";
    LATEST_GROWTH = "latest.growth", "ycsb", "latest: how popularity follows inserts; ycsb (YCSB's generator: eta stays that of recordcount) or textbook (Gray's formula for the current count)";
    HOTSPOT_DATA_FRACTION = "hotspotdatafraction", "0.2", "hotspot: fraction of keys in the hot set";
    HOTSPOT_OPN_FRACTION = "hotspotopnfraction", "0.8", "hotspot: fraction of operations on the hot set";
    EXPONENTIAL_PERCENTILE = "exponential.percentile", "95", "exponential: percent of operations within exponential.frac of the newest keys";
    EXPONENTIAL_FRAC = "exponential.frac", "0.8571428571", "exponential: that fraction of recordcount";
    MIN_SCAN_LENGTH = "minscanlength", "1", "shortest scan, in records";
    MAX_SCAN_LENGTH = "maxscanlength", "1000", "longest scan, in records";
    SCAN_LENGTH_DISTRIBUTION = "scanlengthdistribution", "uniform", "uniform or zipfian (short scans most likely)";
    INSERT_ORDER = "insertorder", "hashed", "hashed (keys scattered by FNV-1a, as YCSB) or ordered (sequential keys)";
    INSERT_START = "insertstart", "0", "first record number this process loads, and the low end of the run's key range";
    INSERT_COUNT = "insertcount", "", "records this process loads (default: recordcount - insertstart)";
    ZERO_PADDING = "zeropadding", "1", "key numbers are left-padded with zeros to this many digits";
    TABLE = "table", "usertable", "table (or collection) name";
    FIELD_NAME_PREFIX = "fieldnameprefix", "field", "field names are this prefix and the field number";
    VALUE_GENERATOR = "valuegenerator", "random", "field values: random (YCSB's random printable bytes, which hardly compress) or text (review-like text that compresses like real records; yardstick's own property)";
    DATA_INTEGRITY = "dataintegrity", "false", "write deterministic values and verify every read (needs constant field lengths)";
    MAX_EXECUTION_TIME = "maxexecutiontime", "0", "stop after this many seconds (0: no limit); --duration sets it";
    THREAD_COUNT = "threadcount", "1", "worker threads; --threads sets it";
    TARGET = "target", "0", "target operations per second over all threads, open loop (0: closed loop); --target sets it";
    INSERTION_RETRY_LIMIT = "core_workload_insertion_retry_limit", "0", "retries of a failed insert";
    INSERTION_RETRY_INTERVAL = "core_workload_insertion_retry_interval", "3", "average seconds between insert retries";
    BATCH_SIZE = "db.batchsize", "1", "load phase: records per insert call (YCSB JDBC's name); above 1 each call is one BATCH-INSERT operation using the binding's bulk path; --batch sets it";
    RETRY_LIMIT = "retry.limit", "0", "run phase: retries of an operation that failed with conflict, timeout or unavailable, counted in the result's retries (latency covers every attempt); --retries sets it";
    RETRY_BACKOFF = "retry.backoff", "0.01", "seconds before the first retry, doubled per attempt up to 1 s, with 0.8-1.2x jitter";
    INSERT_SEMANTICS = "insert.semantics", "insert", "what an insert is: insert (fails on an existing key) or upsert (blind write)";
    UPDATE_SEMANTICS = "update.semantics", "update", "what an update is: update (the record must exist) or upsert (blind write)";
    STATUS_INTERVAL = "status.interval", "1", "seconds between status lines and time-series points (0.1 to 3600); --status-interval sets it";
    PACING = "pacing", "sleep", "how a paced operation (--target) waits for its start: sleep (a kernel timer wakes it just before; the client leaves its cores to a server beside it) or spin (yields through the last 2 ms: starts within a microsecond even on a noisy host, a core busy while any operation waits; for a client machine of its own)";
}

/// YCSB properties that have no effect in yardstick: accepted with a warning so
/// YCSB property files keep working.
pub(crate) const IGNORED_YCSB_PROPERTIES: &[(&str, &str)] = &[
    ("measurementtype", "yardstick always records HdrHistograms"),
    (
        "measurement.interval",
        "yardstick always records both response and service time",
    ),
    ("measurement.trackjvm", "there is no JVM"),
    (
        "histogram.buckets",
        "yardstick always records HdrHistograms",
    ),
    (
        "hdrhistogram.percentiles",
        "the result holds the full histograms",
    ),
    (
        "hdrhistogram.fileoutput",
        "the result holds the full histograms",
    ),
    ("timeseries.granularity", "use --status-interval"),
    ("exporter", "use --format"),
    ("exportfile", "use --out"),
    ("db", "use --db URL"),
    ("dotransactions", "use yardstick load or yardstick run"),
];

/// A property value and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Value {
    pub value: String,
    pub source: String,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum PropertyError {
    #[error("unknown property '{name}' ({origin}){hint}; `yardstick list properties` shows every property")]
    Unknown {
        name: String,
        origin: String,
        hint: String,
    },
    #[error("property {name}={value} ({origin}) is not {expected}; fix the value")]
    Malformed {
        name: String,
        value: String,
        origin: String,
        expected: String,
    },
    #[error("cannot read property file {path}: {reason}; check the path given to -P")]
    Unreadable { path: String, reason: String },
    #[error("malformed override '{0}': expected -p name=value")]
    BadOverride(String),
    #[error("{0}")]
    Invalid(String),
}

/// Resolved properties: defaults, then files in order, then overrides.
#[derive(Debug, Clone, Default)]
pub struct Properties {
    set: BTreeMap<String, Value>,
    /// Messages for YCSB properties that were accepted but have no effect.
    pub warnings: Vec<String>,
}

/// `value` cut to 40 characters for a message (a value can be a megabyte).
pub(crate) fn shorten(value: &str) -> String {
    let n = value.chars().count();
    if n <= 40 {
        return value.to_string();
    }
    let head: String = value.chars().take(40).collect();
    format!("{head}... ({n} characters)")
}

fn def(name: &str) -> Option<&'static PropertyDef> {
    PROPERTIES.iter().find(|d| d.name == name)
}

/// Levenshtein distance, for "did you mean" hints.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + (ca != *cb) as usize)
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The known name closest to `name`, if it is close enough to be a typo.
pub(crate) fn closest_property(name: &str) -> Option<&'static str> {
    let lower = name.to_ascii_lowercase();
    PROPERTIES
        .iter()
        .map(|d| (edit_distance(&lower, d.name), d.name))
        .min()
        .filter(|(d, n)| *d <= (n.len() / 3).max(2))
        .map(|(_, n)| n)
}

impl Properties {
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets `name` from `source`, rejecting unknown names.
    pub fn set(&mut self, name: &str, value: &str, source: &str) -> Result<(), PropertyError> {
        let name = name.trim();
        let value = value.trim();
        if def(name).is_none() {
            if let Some((_, why)) = IGNORED_YCSB_PROPERTIES.iter().find(|(n, _)| *n == name) {
                self.warnings
                    .push(format!("property {name} ({source}) has no effect: {why}"));
                return Ok(());
            }
            let hint = closest_property(name)
                .map(|n| format!("; did you mean '{n}'?"))
                .unwrap_or_default();
            return Err(PropertyError::Unknown {
                name: name.to_string(),
                origin: source.to_string(),
                hint,
            });
        }
        self.set.insert(
            name.to_string(),
            Value {
                value: value.to_string(),
                source: source.to_string(),
            },
        );
        Ok(())
    }

    /// Reads a Java-style property file (`name=value`, `name: value` or `name value`;
    /// `#` and `!` start comments; a trailing backslash continues a line).
    pub fn load_file(&mut self, path: &Path) -> Result<(), PropertyError> {
        let text = std::fs::read_to_string(path).map_err(|e| PropertyError::Unreadable {
            path: path.display().to_string(),
            reason: e.to_string(),
        })?;
        self.load_str(&text, &path.display().to_string())
    }

    pub fn load_str(&mut self, text: &str, origin: &str) -> Result<(), PropertyError> {
        // a file saved by an editor that writes a byte-order mark
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let mut pending = String::new();
        let mut start_line = 0;
        for (i, raw) in text.lines().enumerate() {
            let line = raw.trim_start();
            if pending.is_empty() {
                start_line = i + 1;
                if line.is_empty() || line.starts_with('#') || line.starts_with('!') {
                    continue;
                }
            }
            if let Some(cont) = line.strip_suffix('\\') {
                pending.push_str(cont);
                continue;
            }
            pending.push_str(line);
            let entry = std::mem::take(&mut pending);
            let split = entry
                .find(['=', ':'])
                .or_else(|| entry.find(char::is_whitespace));
            let (k, v) = match split {
                Some(at) => (&entry[..at], &entry[at + 1..]),
                None => (entry.as_str(), ""),
            };
            self.set(k, v, &format!("{origin}:{start_line}"))?;
        }
        Ok(())
    }

    /// Applies a `name=value` override from the command line.
    pub fn set_override(&mut self, kv: &str) -> Result<(), PropertyError> {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| PropertyError::BadOverride(kv.to_string()))?;
        if k.trim().is_empty() {
            return Err(PropertyError::BadOverride(kv.to_string()));
        }
        self.set(k, v, "-p")
    }

    pub(crate) fn is_set(&self, name: &str) -> bool {
        self.set.contains_key(name)
    }

    /// The value of `name`, or its default.
    pub fn get(&self, name: &str) -> &str {
        match self.set.get(name) {
            Some(v) => &v.value,
            None => def(name).map(|d| d.default).unwrap_or(""),
        }
    }

    fn source(&self, name: &str) -> String {
        self.set
            .get(name)
            .map(|v| v.source.clone())
            .unwrap_or_else(|| "default".to_string())
    }

    /// The value of `name` as a message shows it: at most 40 characters.
    pub(crate) fn shown(&self, name: &str) -> String {
        shorten(self.get(name))
    }

    fn malformed(&self, name: &str, expected: &str) -> PropertyError {
        PropertyError::Malformed {
            name: name.to_string(),
            value: self.shown(name),
            origin: self.source(name),
            expected: expected.to_string(),
        }
    }

    pub(crate) fn get_u64(&self, name: &str) -> Result<u64, PropertyError> {
        let v = self.get(name);
        v.parse::<u64>()
            .or_else(|_| {
                // YCSB files sometimes say 1e6 or 1000000.0
                v.parse::<f64>()
                    .ok()
                    .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f < 1.8e19)
                    .map(|f| f as u64)
                    .ok_or(())
            })
            .map_err(|_| self.malformed(name, "a non-negative integer"))
    }

    pub(crate) fn get_f64(&self, name: &str) -> Result<f64, PropertyError> {
        self.get(name)
            .parse::<f64>()
            .ok()
            .filter(|f| f.is_finite())
            .ok_or_else(|| self.malformed(name, "a number"))
    }

    pub(crate) fn get_bool(&self, name: &str) -> Result<bool, PropertyError> {
        match self.get(name).to_ascii_lowercase().as_str() {
            "true" => Ok(true),
            "false" => Ok(false),
            _ => Err(self.malformed(name, "true or false")),
        }
    }

    /// One of `choices`, case-insensitively.
    pub(crate) fn get_choice(
        &self,
        name: &str,
        choices: &[&'static str],
    ) -> Result<&'static str, PropertyError> {
        let v = self.get(name).to_ascii_lowercase();
        choices
            .iter()
            .find(|c| **c == v)
            .copied()
            .ok_or_else(|| self.malformed(name, &format!("one of {}", choices.join(", "))))
    }

    /// Every known property with its resolved value (defaults included).
    pub(crate) fn resolved(&self) -> BTreeMap<String, String> {
        PROPERTIES
            .iter()
            .map(|d| (d.name.to_string(), self.get(d.name).to_string()))
            .collect()
    }

    /// Properties set explicitly, with their source.
    pub fn explicit(&self) -> &BTreeMap<String, Value> {
        &self.set
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_and_overrides_resolve_in_order() {
        let mut p = Properties::new();
        p.load_str(
            "# comment\nrecordcount=1000\n! also a comment\nreadproportion : 0.5\nfieldcount 3\ntable=a\\\n  b\n",
            "f",
        )
        .unwrap();
        assert_eq!(p.get_u64(RECORD_COUNT).unwrap(), 1000);
        assert_eq!(p.get_f64(READ_PROPORTION).unwrap(), 0.5);
        assert_eq!(p.get_u64(FIELD_COUNT).unwrap(), 3);
        assert_eq!(p.get(TABLE), "ab");
        p.set_override("recordcount=5").unwrap();
        assert_eq!(p.get_u64(RECORD_COUNT).unwrap(), 5);
        assert_eq!(p.explicit()["recordcount"].source, "-p");
        assert_eq!(p.get(FIELD_LENGTH), "100", "defaults apply");
        assert_eq!(p.resolved()["fieldlength"], "100");
    }

    #[test]
    fn unknown_property_suggests_the_closest_name() {
        let mut p = Properties::new();
        let e = p.set_override("recordcont=5").unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("did you mean 'recordcount'"), "{msg}");
        let e = p
            .set_override("completelydifferent=1")
            .unwrap_err()
            .to_string();
        assert!(!e.contains("did you mean"), "{e}");
    }

    #[test]
    fn malformed_values_name_the_property_and_its_source() {
        let mut p = Properties::new();
        p.load_str("recordcount=lots\nreadallfields=yes\n", "w")
            .unwrap();
        let e = p.get_u64(RECORD_COUNT).unwrap_err().to_string();
        assert!(e.contains("recordcount=lots") && e.contains("w:1"), "{e}");
        assert!(p.get_bool(READ_ALL_FIELDS).is_err());
        assert!(p.set_override("noequals").is_err());
        p.set_override("recordcount=1e6").unwrap();
        assert_eq!(p.get_u64(RECORD_COUNT).unwrap(), 1_000_000);
        p.set_override("requestdistribution=Zipfian").unwrap();
        assert_eq!(
            p.get_choice(REQUEST_DISTRIBUTION, &["uniform", "zipfian"])
                .unwrap(),
            "zipfian"
        );
    }

    #[test]
    fn ycsb_only_properties_are_accepted_with_a_warning() {
        let mut p = Properties::new();
        p.load_str("measurementtype=histogram\n", "w").unwrap();
        assert_eq!(p.warnings.len(), 1);
    }

    #[test]
    fn unreadable_file_is_a_clear_error() {
        let mut p = Properties::new();
        let e = p
            .load_file(Path::new("/nonexistent/workloadz"))
            .unwrap_err();
        assert!(e.to_string().contains("/nonexistent/workloadz"));
    }
}
