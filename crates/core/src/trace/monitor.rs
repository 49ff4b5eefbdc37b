//! A Redis MONITOR capture as a trace: one line per command the server ran,
//! `1700000000.123456 [0 127.0.0.1:50000] "HGETALL" "user1"` (a leading `+`
//! when read off the wire). Commands become the YCSB operations they carry
//! out; the rest are counted and skipped.
use super::format::{Header, Trace, TraceOp};
use crate::binding::Status;
use crate::op::OpKind;
use std::collections::BTreeMap;

/// A capture read as a trace.
#[derive(Debug, Clone, Default)]
pub struct Monitor {
    pub trace: Trace,
    /// Commands without a YCSB operation, by name (upper case), and how often.
    pub skipped: BTreeMap<String, u64>,
}

/// One line's parts: its time (ns since 1970), its client, its arguments.
fn parse_line(line: &str) -> Option<(u64, &str, Vec<Vec<u8>>)> {
    let line = line.strip_prefix('+').unwrap_or(line).trim_end();
    let (time, rest) = line.split_once(' ')?;
    let (secs, micros) = time.split_once('.')?;
    let micros: u64 = format!("{micros:0<6}").get(..6)?.parse().ok()?;
    let ns = secs.parse::<u64>().ok()?.checked_mul(1_000_000_000)? + micros * 1000;
    let rest = rest.strip_prefix('[')?;
    let (client, mut rest) = rest.split_once("] ")?;
    let mut args = Vec::new();
    while !rest.is_empty() {
        let (arg, after) = quoted(rest)?;
        args.push(arg);
        rest = after.trim_start();
    }
    (!args.is_empty()).then_some((ns, client, args))
}

/// One `"..."` argument with Redis's escapes (sdscatrepr), and what follows it.
fn quoted(s: &str) -> Option<(Vec<u8>, &str)> {
    let b = s.strip_prefix('"')?.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => return Some((out, s.get(i + 2..)?)),
            b'\\' => {
                let c = *b.get(i + 1)?;
                i += 2;
                out.push(match c {
                    b'n' => b'\n',
                    b'r' => b'\r',
                    b't' => b'\t',
                    b'a' => 0x07,
                    b'b' => 0x08,
                    b'x' => {
                        let hex = std::str::from_utf8(b.get(i..i + 2)?).ok()?;
                        i += 2;
                        u8::from_str_radix(hex, 16).ok()?
                    }
                    other => other,
                });
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    None
}

/// Reads a MONITOR capture. Reads: GET, HGET, HMGET, HGETALL. Writes: SET,
/// HSET, HMSET, SETEX, PSETEX are updates; SETNX, HSETNX, SET ... NX are
/// inserts, and so is a write whose key the same client adds to a sorted
/// set next (the ZADD of an index, as YCSB's Redis binding and ours do).
/// Deletes: DEL, UNLINK (their first key). Everything else is skipped.
pub fn read_monitor(text: &str, name: &str) -> Result<Monitor, String> {
    let mut m = Monitor::default();
    // per client: the index of its last write, for the ZADD that follows an insert
    let mut last_write: BTreeMap<String, usize> = BTreeMap::new();
    let mut first_ns = None;
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() || line.trim() == "+OK" || line.trim() == "OK" {
            continue;
        }
        let Some((ns, client, args)) = parse_line(line) else {
            return Err(format!(
                "{name} line {}: not a Redis MONITOR line (expected: 1700000000.123456 [0 127.0.0.1:50000] \"GET\" \"key\")",
                n + 1
            ));
        };
        let t0 = *first_ns.get_or_insert(ns);
        let cmd = String::from_utf8_lossy(&args[0]).to_ascii_uppercase();
        let nx = args.iter().skip(3).any(|a| a.eq_ignore_ascii_case(b"NX"));
        let kind = match cmd.as_str() {
            "GET" | "HGET" | "HMGET" | "HGETALL" => Some(OpKind::Read),
            "SET" if nx => Some(OpKind::Insert),
            "SET" | "HSET" | "HMSET" | "SETEX" | "PSETEX" => Some(OpKind::Update),
            "SETNX" | "HSETNX" => Some(OpKind::Insert),
            "DEL" | "UNLINK" => Some(OpKind::Delete),
            "ZADD" => {
                let member = args.get(4).or(args.get(3));
                let owner = last_write.get(client).copied();
                if let (Some(member), Some(i)) = (member, owner) {
                    if m.trace.ops[i].key == *member {
                        m.trace.ops[i].op = OpKind::Insert;
                        last_write.remove(client);
                        continue;
                    }
                }
                None
            }
            _ => None,
        };
        let (Some(kind), Some(key)) = (kind, args.get(1)) else {
            *m.skipped.entry(cmd).or_default() += 1;
            continue;
        };
        if kind != OpKind::Read {
            last_write.insert(client.to_string(), m.trace.ops.len());
        }
        m.trace.ops.push(TraceOp {
            op: kind,
            status: Status::Ok,
            start_ns: ns.saturating_sub(t0),
            intended_ns: None,
            latency_ns: 0,
            arg: 0,
            key: key.clone(),
        });
    }
    if m.trace.ops.is_empty() {
        return Err(format!(
            "{name} holds no command replay can carry out (reads, writes, deletes)"
        ));
    }
    m.trace.ops.sort_by_key(|o| o.start_ns);
    m.trace.header = Header {
        version: 1,
        started_unix_ns: first_ns.unwrap_or(0),
        workload: format!("redis-monitor:{name}"),
        database: "redis".into(),
        properties: BTreeMap::new(),
        keys: None,
    };
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_capture_becomes_operations_at_their_times() {
        let capture = concat!(
            "+OK\n",
            "1700000000.000100 [0 127.0.0.1:5000] \"HGETALL\" \"user1\"\n",
            "1700000000.000350 [0 127.0.0.1:5001] \"EVALSHA\" \"abc\" \"2\" \"user2\" \"_idx\"\n",
            "1700000000.000360 [0 lua] \"HSET\" \"user2\" \"field0\" \"a\\\"b\\x00\"\n",
            "1700000000.000370 [0 lua] \"ZADD\" \"_idx\" \"0\" \"user2\"\n",
            "+1700000000.001 [0 127.0.0.1:5000] \"hset\" \"user1\" \"field3\" \"v\"\n",
            "1700000000.002000 [0 127.0.0.1:5000] \"SET\" \"k\\n9\" \"v\" \"NX\"\n",
            "1700000000.003000 [0 127.0.0.1:5002] \"DEL\" \"user1\"\n",
            "1700000000.004000 [0 127.0.0.1:5002] \"PING\"\n",
        );
        let m = read_monitor(capture, "cap.txt").unwrap();
        let ops: Vec<(OpKind, &[u8], u64)> = m
            .trace
            .ops
            .iter()
            .map(|o| (o.op, &o.key[..], o.start_ns))
            .collect();
        assert_eq!(
            ops,
            [
                (OpKind::Read, &b"user1"[..], 0),
                // the script's HSET with its index ZADD: an insert
                (OpKind::Insert, b"user2", 260_000),
                (OpKind::Update, b"user1", 900_000),
                (OpKind::Insert, b"k\n9", 1_900_000),
                (OpKind::Delete, b"user1", 2_900_000),
            ]
        );
        assert_eq!(m.skipped.get("EVALSHA"), Some(&1));
        assert_eq!(m.skipped.get("PING"), Some(&1));
        assert_eq!(m.trace.header.started_unix_ns, 1_700_000_000_000_100_000);
    }

    #[test]
    fn what_is_not_a_capture_is_named() {
        let e = read_monitor("hello world\n", "x.txt").unwrap_err();
        assert!(
            e.starts_with("x.txt line 1: not a Redis MONITOR line"),
            "{e}"
        );
        let e = read_monitor("1700000000.1 [0 a:1] \"PING\"\n", "p.txt").unwrap_err();
        assert!(e.contains("no command replay can carry out"), "{e}");
        // an unterminated quote is not a line
        assert!(read_monitor("1700000000.1 [0 a:1] \"GET\" \"k\n", "q").is_err());
    }
}
