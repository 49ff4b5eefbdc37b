//! The inserts of a YCSB phase as the result records them - how many the
//! database acknowledged, how many it refused, how many went unanswered - and
//! what reading them back (`yardstick verify`) found.
use crate::workload::{Fate, Phase, SharedState};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::Path;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Inserts {
    /// The record numbers this process's inserts took, [first, end), before
    /// `--instance` spreads a run's new records over the instances.
    pub first: u64,
    pub end: u64,
    /// Answered ok, or duplicate key (the record is there).
    pub acknowledged: u64,
    /// Refused (an error or a conflict): the record must be absent.
    pub failed: u64,
    /// Unanswered (timeout, lost connection, abandoned at the end): either way.
    pub unknown: u64,
    /// The file next to the result listing the failed and unknown keys (one
    /// per line: key number, key, fate); absent when every insert was acknowledged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keys_file: Option<String>,
    /// False when more inserts went unacknowledged than the run could keep
    /// (4 million): the counts stand, but absent keys cannot be judged.
    pub keys_complete: bool,
}

impl Inserts {
    /// What `state`'s inserts of `phase` came to.
    pub fn of(state: &SharedState, phase: Phase) -> Self {
        let (first, end) = state.insert_range(phase);
        let (failed, unknown) = (state.ledger.failed(), state.ledger.unknown());
        Inserts {
            first,
            end,
            acknowledged: (end - first).saturating_sub(failed + unknown),
            failed,
            unknown,
            keys_file: None,
            keys_complete: state.ledger.complete(),
        }
    }
}

/// The side file's name for the result at `result`: `<result>.inserts.tsv`.
pub fn keys_file_name(result: &Path) -> String {
    format!(
        "{}.inserts.tsv",
        result
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    )
}

/// Writes the unacknowledged keys of `state` as the side file `path`, with
/// the key each number stands for.
pub fn write_keys(state: &SharedState, path: &Path) -> std::io::Result<()> {
    let (keys, _) = state.ledger.keys();
    let mut text = Vec::with_capacity(keys.len() * 32 + 32);
    text.extend_from_slice(b"# keynum\tkey\tfate\n");
    let mut key = Vec::new();
    for (keynum, fate) in keys {
        crate::workload::keys::build_key(
            keynum,
            state.config.zero_padding,
            state.config.ordered_inserts,
            &mut key,
        );
        write!(text, "{keynum}\t")?;
        text.extend_from_slice(&key);
        writeln!(text, "\t{}", fate.name())?;
    }
    crate::result::write_atomic(path, &text)
}

/// Reads a side file written by [`write_keys`].
pub fn read_keys(path: &Path) -> Result<Vec<(u64, Fate)>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        format!(
            "cannot read {}: {e}; it is written next to its result, keep them together",
            path.display()
        )
    })?;
    let mut keys = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        let mut cols = line.split('\t');
        let keynum = cols.next().and_then(|k| k.parse::<u64>().ok());
        let fate = cols.nth(1).and_then(Fate::parse);
        match (keynum, fate) {
            (Some(k), Some(f)) => keys.push((k, f)),
            _ => {
                return Err(format!(
                    "{} line {}: not `keynum<TAB>key<TAB>failed|unknown`; the file is damaged, run the phase again",
                    path.display(),
                    i + 1
                ))
            }
        }
    }
    Ok(keys)
}

/// What reading back every insert found.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Verification {
    /// Keys read back.
    pub checked: u64,
    /// Acknowledged and present (with the value written, where checked).
    pub acknowledged_present: u64,
    /// Acknowledged but absent: lost writes.
    pub lost: u64,
    /// Acknowledged and present with a value other than the one written.
    pub differing: u64,
    /// Refused by the database, yet present.
    pub failed_present: u64,
    pub failed_absent: u64,
    pub unknown_present: u64,
    pub unknown_absent: u64,
    /// Keys the database did not answer for: nothing can be said of them.
    pub unreadable: u64,
    /// Whether values were compared (every phase ran with dataintegrity=true).
    pub values_checked: bool,
    /// Up to 20 keys of each finding, as "lost user123".
    pub examples: Vec<String>,
    pub seconds: f64,
}

impl Verification {
    /// No acknowledged write lost or changed, no refused write present, every key read.
    pub fn passed(&self) -> bool {
        self.lost == 0 && self.differing == 0 && self.failed_present == 0 && self.unreadable == 0
    }

    /// The findings in one line.
    pub fn line(&self) -> String {
        let mut s = format!(
            "verify: {} keys read: {} acknowledged present, {} lost",
            self.checked, self.acknowledged_present, self.lost
        );
        if self.values_checked {
            s += &format!(", {} with other values", self.differing);
        }
        s += &format!(
            "; failed inserts: {} absent, {} present; unanswered inserts: {} present, {} absent",
            self.failed_absent, self.failed_present, self.unknown_present, self.unknown_absent
        );
        if self.unreadable > 0 {
            s += &format!("; {} keys unreadable", self.unreadable);
        }
        if !self.values_checked {
            s += " (presence only: values are checked when the phases ran with dataintegrity=true)";
        }
        s
    }
}
