//! Encoding and decoding of trace records (the layout is in the module's doc).
use super::MAGIC;
use crate::binding::Status;
use crate::op::OpKind;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

/// What a trace says about the run that wrote it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Header {
    pub version: u32,
    /// Wall-clock time of the run's start (its offsets' zero), ns since 1970.
    pub started_unix_ns: u64,
    pub workload: String,
    /// The database's scheme (the URL itself is not kept: it may hold secrets).
    pub database: String,
    /// The run's resolved properties, so a replay writes values of the same shape.
    pub properties: BTreeMap<String, String>,
    /// How the run builds a key from its number: records of its keys carry
    /// the number alone (version 2; absent in version 1 traces).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keys: Option<KeyShape>,
}

/// YCSB's key of a record number: `user`, the number (FNV-hashed unless
/// ordered), zero-padded to `zero_padding` digits.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub struct KeyShape {
    pub zero_padding: usize,
    pub ordered: bool,
}

impl KeyShape {
    /// The shape `props` give keys, when they are valid.
    fn of(props: &crate::workload::Properties) -> Option<KeyShape> {
        use crate::workload::properties as p;
        Some(KeyShape {
            zero_padding: usize::try_from(props.get_u64(p::ZERO_PADDING).ok()?).ok()?,
            ordered: props
                .get_choice(p::INSERT_ORDER, &["hashed", "ordered"])
                .ok()?
                == "ordered",
        })
    }

    /// Writes the key of record `keynum` into `buf`.
    pub fn build(&self, keynum: u64, buf: &mut Vec<u8>) {
        crate::workload::keys::build_key(keynum, self.zero_padding, self.ordered, buf);
    }
}

impl Header {
    /// The header of a run of `workload` on `database` (a scheme) with
    /// `props`, secrets masked.
    pub fn of(
        workload: &str,
        database: &str,
        props: &crate::workload::Properties,
        redactor: &crate::result::Redactor,
    ) -> Header {
        Header {
            version: 2,
            started_unix_ns: 0,
            workload: workload.to_string(),
            database: database.to_string(),
            properties: props
                .resolved()
                .into_iter()
                .map(|(k, v)| (k, redactor.redact(&v)))
                .collect(),
            keys: KeyShape::of(props),
        }
    }
}

/// One operation of a trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceOp {
    pub op: OpKind,
    pub status: Status,
    /// Actual start of its first attempt, ns since the run's start.
    pub start_ns: u64,
    /// Intended start on the open-loop schedule, ns since the run's start.
    pub intended_ns: Option<u64>,
    /// From the first attempt's start to the end.
    pub latency_ns: u64,
    pub arg: u64,
    pub key: Vec<u8>,
}

impl TraceOp {
    /// When a replay should issue it: its intended start, or its start.
    pub fn at_ns(&self) -> u64 {
        self.intended_ns.unwrap_or(self.start_ns)
    }
}

/// A record on its way to the file: a [`TraceOp`] that borrows its key.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Entry<'a> {
    pub op: OpKind,
    pub status: Status,
    pub start_ns: u64,
    pub intended_ns: Option<u64>,
    pub latency_ns: u64,
    pub arg: u64,
    pub key: &'a [u8],
    /// The key's record number, when the key is the header's [`KeyShape`]
    /// of it: written in its place.
    pub keynum: Option<u64>,
}

impl TraceOp {
    #[cfg(test)]
    pub(crate) fn entry(&self) -> Entry<'_> {
        Entry {
            op: self.op,
            status: self.status,
            start_ns: self.start_ns,
            intended_ns: self.intended_ns,
            latency_ns: self.latency_ns,
            arg: self.arg,
            key: &self.key,
            keynum: None,
        }
    }
}

/// The high bit of a record's operation byte: its key is a record number.
const NUMBERED: u8 = 0x80;

/// A trace read whole.
#[derive(Debug, Clone, Default)]
pub struct Trace {
    pub header: Header,
    /// In the order of their starts.
    pub ops: Vec<TraceOp>,
}

#[derive(Debug, thiserror::Error)]
pub enum TraceReadError {
    #[error("cannot read {0}: {1}")]
    Io(String, std::io::Error),
    #[error("{0} is not a yardstick trace (it does not start with YSTRACE1)")]
    NotTrace(String),
    #[error("{0} is damaged at byte {1}: {2}")]
    Damaged(String, usize, &'static str),
    #[error("{0}: its header is not valid JSON: {1}")]
    Header(String, serde_json::Error),
}

fn get_varint(b: &[u8], at: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *b.get(*at)?;
        *at += 1;
        v |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return Some(v);
        }
    }
    None
}

#[inline]
pub(super) fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzigzag(v: u64) -> i64 {
    (v >> 1) as i64 ^ -((v & 1) as i64)
}

/// Writes `v` as a LEB128 varint at `buf[at..]`; returns the new end.
#[inline]
fn varint_at(buf: &mut [u8; 52], mut at: usize, mut v: u64) -> usize {
    while v >= 0x80 {
        buf[at] = v as u8 | 0x80;
        v >>= 7;
        at += 1;
    }
    buf[at] = v as u8;
    at + 1
}

/// Appends one record; `prev_start` is the chunk's previous record's time
/// (0 first).
/// The fixed part goes through a stack buffer: one copy instead of a
/// capacity check per byte.
#[inline]
pub(super) fn encode(out: &mut Vec<u8>, op: &Entry<'_>, prev_start: u64) {
    // 2 bytes and five varints of at most 10 bytes each
    let mut buf = [0u8; 52];
    buf[0] = op.op.index() as u8 | if op.keynum.is_some() { NUMBERED } else { 0 };
    buf[1] = op.status.index() as u8;
    // the intended start is exact (the schedule's own instant): it is the
    // record's time, and the actual start its lag
    let time = op.intended_ns.unwrap_or(op.start_ns);
    let mut at = varint_at(&mut buf, 2, zigzag(time as i64 - prev_start as i64));
    let lag = op
        .intended_ns
        .map_or(0, |i| op.start_ns.saturating_sub(i) + 1);
    at = varint_at(&mut buf, at, lag);
    at = varint_at(&mut buf, at, op.latency_ns);
    at = varint_at(&mut buf, at, op.arg);
    // a key number takes 1-4 bytes where YCSB's key text takes about 24:
    // less to copy here and for the kernel
    match op.keynum {
        Some(n) => {
            at = varint_at(&mut buf, at, n);
            out.extend_from_slice(&buf[..at]);
        }
        None => {
            at = varint_at(&mut buf, at, op.key.len() as u64);
            out.extend_from_slice(&buf[..at]);
            out.extend_from_slice(op.key);
        }
    }
}

fn decode_chunk(
    b: &[u8],
    records: u32,
    keys: Option<KeyShape>,
    ops: &mut Vec<TraceOp>,
) -> Result<(), (usize, &'static str)> {
    let mut at = 0;
    let mut prev = 0u64;
    for _ in 0..records {
        let bad = |at: usize, why| (at, why);
        let (Some(&op), Some(&status)) = (b.get(at), b.get(at + 1)) else {
            return Err(bad(at, "a record is cut short"));
        };
        at += 2;
        let numbered = op & NUMBERED != 0;
        let op = *OpKind::ALL
            .get((op & !NUMBERED) as usize)
            .ok_or(bad(at, "unknown operation"))?;
        let status = *Status::ALL
            .get(status as usize)
            .ok_or(bad(at, "unknown status"))?;
        let mut next = || get_varint(b, &mut at).ok_or(bad(at, "a number is cut short"));
        let time = (prev as i64).wrapping_add(unzigzag(next()?)) as u64;
        let lag = next()?;
        let latency_ns = next()?;
        let arg = next()?;
        let key = if numbered {
            let n = next()?;
            let shape = keys.ok_or(bad(at, "a key number, but the header has no key shape"))?;
            let mut key = Vec::with_capacity(24);
            shape.build(n, &mut key);
            key
        } else {
            let len = next()? as usize;
            let key = b
                .get(at..at.saturating_add(len))
                .ok_or(bad(at, "a key is cut short"))?
                .to_vec();
            at += len;
            key
        };
        prev = time;
        ops.push(TraceOp {
            op,
            status,
            start_ns: time + lag.saturating_sub(1),
            intended_ns: (lag > 0).then_some(time),
            latency_ns,
            arg,
            key,
        });
    }
    if at != b.len() {
        return Err((at, "a chunk holds more than its records"));
    }
    Ok(())
}

/// Reads the trace at `path` whole, its operations ordered by start.
pub fn read(path: &Path) -> Result<Trace, TraceReadError> {
    let name = path.display().to_string();
    let mut b = Vec::new();
    std::fs::File::open(path)
        .and_then(|mut f| f.read_to_end(&mut b))
        .map_err(|e| TraceReadError::Io(name.clone(), e))?;
    parse(&b, &name)
}

pub(super) fn parse(b: &[u8], name: &str) -> Result<Trace, TraceReadError> {
    let damaged = |at, why| TraceReadError::Damaged(name.to_string(), at, why);
    if !b.starts_with(MAGIC) {
        return Err(TraceReadError::NotTrace(name.to_string()));
    }
    let u32_at = |at: usize| -> Option<usize> {
        Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?) as usize)
    };
    let mut at = MAGIC.len();
    let n = u32_at(at).ok_or_else(|| damaged(at, "the header is cut short"))?;
    at += 4;
    let header = b
        .get(at..at + n)
        .ok_or_else(|| damaged(at, "the header is cut short"))?;
    let header: Header =
        serde_json::from_slice(header).map_err(|e| TraceReadError::Header(name.to_string(), e))?;
    at += n;
    let mut ops = Vec::new();
    while at < b.len() {
        let (Some(len), Some(records)) = (u32_at(at), u32_at(at + 4)) else {
            return Err(damaged(at, "a chunk's length is cut short"));
        };
        at += 8;
        let chunk = b
            .get(at..at + len)
            .ok_or_else(|| damaged(at, "a chunk is cut short"))?;
        decode_chunk(chunk, records as u32, header.keys, &mut ops)
            .map_err(|(i, why)| damaged(at + i, why))?;
        at += len;
    }
    ops.sort_by_key(|o| o.start_ns);
    Ok(Trace { header, ops })
}

/// The file's start: magic and header.
pub(super) fn preamble(h: &Header) -> Vec<u8> {
    let json = serde_json::to_vec(h).unwrap_or_default();
    let mut out = MAGIC.to_vec();
    out.extend_from_slice(&(json.len() as u32).to_le_bytes());
    out.extend_from_slice(&json);
    out
}

/// A chunk's frame around `records` encoded records.
pub(super) fn frame(body: &[u8], records: u32) -> [u8; 8] {
    let mut f = [0u8; 8];
    f[..4].copy_from_slice(&(body.len() as u32).to_le_bytes());
    f[4..].copy_from_slice(&records.to_le_bytes());
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(start: u64, intended: Option<u64>, key: &str) -> TraceOp {
        TraceOp {
            op: OpKind::Update,
            status: Status::NotFound,
            start_ns: start,
            intended_ns: intended,
            latency_ns: 1_234_567,
            arg: 3,
            key: key.as_bytes().to_vec(),
        }
    }

    fn file(chunks: &[&[TraceOp]]) -> Vec<u8> {
        let mut out = preamble(&Header {
            version: 1,
            workload: "workloada".into(),
            ..Default::default()
        });
        for c in chunks {
            let mut body = Vec::new();
            let mut prev = 0;
            for o in *c {
                encode(&mut body, &o.entry(), prev);
                prev = o.intended_ns.unwrap_or(o.start_ns);
            }
            out.extend_from_slice(&frame(&body, c.len() as u32));
            out.extend_from_slice(&body);
        }
        out
    }

    #[test]
    fn records_survive_the_round_trip_and_come_back_in_start_order() {
        // a later start before an earlier one within a chunk (slots end out
        // of order), an open-loop record late by 5 µs, a huge offset
        let a = [
            op(1_000_000, None, "user1"),
            op(900_000, Some(895_000), "user22"),
            op(86_400_000_000_000, Some(86_400_000_000_000), ""),
        ];
        let b = [
            op(950_000, None, "user333"),
            op(950_001, None, "user007"),
            op(950_002, None, "18446744073709551615"),
            op(950_003, None, "x18446744073709551616"),
            op(950_004, None, "123456789012345678901"),
            op(950_005, None, "0"),
        ];
        let t = parse(&file(&[&a, &b]), "t").unwrap();
        assert_eq!(t.header.workload, "workloada");
        let starts: Vec<u64> = t.ops.iter().map(|o| o.start_ns).collect();
        assert_eq!(
            starts,
            [
                900_000,
                950_000,
                950_001,
                950_002,
                950_003,
                950_004,
                950_005,
                1_000_000,
                86_400_000_000_000
            ]
        );
        assert_eq!(t.ops[0], a[1]);
        assert_eq!(t.ops[0].at_ns(), 895_000);
        // keys come back exact
        assert_eq!(&t.ops[1..7], &b[..]);
        assert_eq!(t.ops[7], a[0]);
        assert_eq!(t.ops[7].at_ns(), 1_000_000);
        assert_eq!(t.ops[8].intended_ns, Some(86_400_000_000_000));
        // a typical YCSB record is compact
        let mut one = Vec::new();
        let typical = op(1_000_100, Some(1_000_000), "user6284781860667377211");
        encode(&mut one, &typical.entry(), 1_000_000);
        assert!(one.len() <= 34, "{} bytes", one.len());
    }

    #[test]
    fn a_key_number_comes_back_as_the_key_the_run_built() {
        let shape = |zero_padding, ordered| KeyShape {
            zero_padding,
            ordered,
        };
        for (keys, keynum) in [
            (shape(1, false), 41),
            (shape(12, true), 7),
            (shape(1, false), u64::MAX),
        ] {
            let mut built = Vec::new();
            keys.build(keynum, &mut built);
            let mut out = preamble(&Header {
                version: 2,
                keys: Some(keys),
                ..Default::default()
            });
            let mut body = Vec::new();
            let o = op(1_000, None, "");
            // a numbered record, then one with its key's text
            encode(
                &mut body,
                &Entry {
                    keynum: Some(keynum),
                    ..o.entry()
                },
                0,
            );
            let text = op(2_000, None, "user-from-a-replay");
            encode(&mut body, &text.entry(), 1_000);
            out.extend_from_slice(&frame(&body, 2));
            out.extend_from_slice(&body);
            let t = parse(&out, "t").unwrap();
            assert_eq!(t.ops[0].key, built, "{keys:?} {keynum}");
            assert_eq!(t.ops[1], text);
        }
        // YCSB's keys: the record number alone, a third of a key's text
        let mut one = Vec::new();
        let typical = op(1_000_100, Some(1_000_000), "");
        let numbered = Entry {
            keynum: Some(999_999),
            ..typical.entry()
        };
        encode(&mut one, &numbered, 1_000_000);
        assert!(one.len() <= 12, "{} bytes", one.len());
        // a number the header cannot turn into a key is damage, named
        let mut out = preamble(&Header::default());
        out.extend_from_slice(&frame(&one, 1));
        out.extend_from_slice(&one);
        let err = parse(&out, "t.trace").unwrap_err().to_string();
        assert!(err.contains("no key shape"), "{err}");
    }

    #[test]
    fn the_header_of_a_run_gives_its_key_shape() {
        let mut props = crate::workload::Properties::default();
        let r = crate::result::Redactor::default();
        let h = Header::of("workloada", "null", &props, &r);
        assert_eq!(
            h.keys,
            Some(KeyShape {
                zero_padding: 1,
                ordered: false
            })
        );
        props.set_override("zeropadding=12").unwrap();
        props.set_override("insertorder=ordered").unwrap();
        let h = Header::of("workloada", "null", &props, &r);
        assert_eq!(
            h.keys,
            Some(KeyShape {
                zero_padding: 12,
                ordered: true
            })
        );
        // keys the runner would refuse: no shape, text keys instead
        props.set_override("zeropadding=many").unwrap();
        assert_eq!(Header::of("workloada", "null", &props, &r).keys, None);
    }

    #[test]
    fn damage_is_named_with_its_place() {
        let good = file(&[&[op(5, None, "k1"), op(6, None, "k2")]]);
        let err = |b: &[u8]| parse(b, "t.trace").unwrap_err().to_string();
        assert!(err(b"PK\x03\x04 zip").contains("not a yardstick trace"));
        let cut = err(&good[..good.len() - 1]);
        assert!(
            cut.contains("t.trace is damaged at byte") && cut.contains("cut short"),
            "{cut}"
        );
        let mut bad_op = good.clone();
        // each record: op, status, start, lag, latency (3 bytes), arg, key
        let first = good.len() - 2 * (2 + 1 + 1 + 3 + 1 + 1 + 2);
        bad_op[first] = 200;
        assert!(
            err(&bad_op).contains("unknown operation"),
            "{}",
            err(&bad_op)
        );
        let mut header = good.clone();
        header[12] = b'!';
        assert!(err(&header).contains("header is not valid JSON"));
    }
}
