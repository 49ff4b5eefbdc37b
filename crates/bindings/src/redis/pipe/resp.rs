//! RESP2 as the pipe speaks it: commands encoded in place, and the replies
//! to GET and SET parsed from the input.
use std::mem::MaybeUninit;
use yardstick_core::binding::WriteSet;

/// A RESP2 reply to GET or SET.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(in crate::redis) enum Reply {
    /// `+OK` or another status.
    Status,
    /// `$-1` (GET of a missing key, SET NX/XX refused).
    Nil,
    Bulk(Vec<u8>),
    Int(i64),
    /// `-ERR ...`: the server's error line.
    Error(String),
}

/// A command's argument.
#[derive(Clone, Copy)]
pub(in crate::redis) enum Arg<'a> {
    Bytes(&'a [u8]),
    /// Entry `k` (of `len` bytes) of a write set: its bytes made straight
    /// into the output when they are owed ([`WriteSet::write_entry`]).
    Entry(&'a WriteSet, usize, usize),
}

impl<'a> Arg<'a> {
    /// The write set's entry `k`.
    pub(in crate::redis) fn entry(set: &'a WriteSet, k: usize) -> Option<Self> {
        let (_, len) = set.lengths().nth(k)?;
        Some(Arg::Entry(set, k, len))
    }

    fn len(&self) -> usize {
        match self {
            Arg::Bytes(b) => b.len(),
            Arg::Entry(_, _, len) => *len,
        }
    }
}

/// `*N $len arg ...` in RESP2, appended in place: one reservation for the
/// whole command and one copy per argument. Appended piece by piece (a
/// capacity check and a `memcpy` call for each of a SET's ten pieces, the
/// lengths through `itoa`) it cost ~330 instructions a SET, a tenth of a
/// pipelined SET's client CPU.
pub(super) fn encode(out: &mut Vec<u8>, args: &[Arg<'_>]) {
    // a header is a tag, at most 20 digits and CRLF; an argument its bytes and CRLF
    let room = HEAD + args.iter().map(|a| HEAD + a.len() + 2).sum::<usize>();
    out.reserve(room);
    // SAFETY: `reserve` made room for `room` bytes past the length and
    // what is written below is at most that; every byte up to the new
    // length is written before it is set.
    unsafe {
        let start = out.as_mut_ptr();
        let mut p = head(start.add(out.len()), b'*', args.len());
        for a in args {
            let len = a.len();
            p = head(p, b'$', len);
            match a {
                Arg::Bytes(b) => std::ptr::copy_nonoverlapping(b.as_ptr(), p, len),
                // `len` bytes of the reserved room, written, not read
                Arg::Entry(set, k, _) => set.write_entry(
                    *k,
                    std::slice::from_raw_parts_mut(p.cast::<MaybeUninit<u8>>(), len),
                ),
            }
            p = p.add(len);
            p.cast::<[u8; 2]>().write_unaligned(*b"\r\n");
            p = p.add(2);
        }
        out.set_len(p.offset_from(start) as usize);
    }
}

/// The most a RESP header takes: a tag, a `usize`'s 20 digits and CRLF.
const HEAD: usize = 23;

/// Writes `tag`, `n` in decimal and CRLF at `p`; returns where they end.
/// Numbers under 10,000 (every count and key, most values) take a branch or
/// two and a table of digit pairs instead of a division per digit.
///
/// # Safety
/// `p` must have room for [`HEAD`] bytes.
#[inline(always)]
unsafe fn head(p: *mut u8, tag: u8, n: usize) -> *mut u8 {
    // SAFETY: the caller gives room for the tag, up to 20 digits and CRLF.
    unsafe {
        p.write(tag);
        let d = p.add(1);
        let pair = |at: *mut u8, k: usize| {
            at.cast::<[u8; 2]>()
                .write_unaligned([PAIRS[2 * k], PAIRS[2 * k + 1]])
        };
        let end = if n < 10 {
            d.write(b'0' + n as u8);
            d.add(1)
        } else if n < 100 {
            pair(d, n);
            d.add(2)
        } else if n < 10_000 {
            let (hi, lo) = (n / 100, n % 100);
            if hi < 10 {
                d.write(b'0' + hi as u8);
                pair(d.add(1), lo);
                d.add(3)
            } else {
                pair(d, hi);
                pair(d.add(2), lo);
                d.add(4)
            }
        } else {
            let digits = n.ilog10() as usize + 1;
            let (mut m, mut at) = (n, d.add(digits));
            while m > 0 {
                at = at.sub(1);
                at.write(b'0' + (m % 10) as u8);
                m /= 10;
            }
            d.add(digits)
        };
        end.cast::<[u8; 2]>().write_unaligned(*b"\r\n");
        end.add(2)
    }
}

/// "00" to "99", two bytes each.
const PAIRS: [u8; 200] = {
    let mut t = [0u8; 200];
    let mut k = 0;
    while k < 100 {
        t[2 * k] = b'0' + (k / 10) as u8;
        t[2 * k + 1] = b'0' + (k % 10) as u8;
        k += 1;
    }
    t
};

/// One reply from the start of `b` and the bytes it took; `None` when it
/// has not fully arrived. A bulk reply goes into a buffer of `spare` when
/// there is one.
pub(super) fn parse_reply(b: &[u8], spare: &mut Vec<Vec<u8>>) -> Result<Option<(Reply, usize)>, String> {
    let Some(eol) = b.windows(2).position(|w| w == b"\r\n") else {
        return Ok(None);
    };
    let line = &b[1..eol];
    let text = || String::from_utf8_lossy(line).into_owned();
    let int = || {
        resp_int(line).ok_or_else(|| format!("a malformed RESP length or integer: {:?}", text()))
    };
    let reply = match b[0] {
        b'+' => Reply::Status,
        b'-' => Reply::Error(text()),
        b':' => Reply::Int(int()?),
        b'$' => {
            let len = int()?;
            if len < 0 {
                Reply::Nil
            } else {
                let (start, len) = (eol + 2, len as usize);
                if b.len() < start + len + 2 {
                    return Ok(None);
                }
                let mut v = spare.pop().unwrap_or_default();
                v.extend_from_slice(&b[start..start + len]);
                return Ok(Some((Reply::Bulk(v), start + len + 2)));
            }
        }
        other => {
            return Err(format!(
                "an unexpected RESP reply type {:?} to GET or SET",
                other as char
            ))
        }
    };
    Ok(Some((reply, eol + 2)))
}

/// A RESP length or integer: an optional minus and 1 to 19 decimal digits,
/// nothing else. By hand: through `str::from_utf8` and `str::parse` it
/// was ~120 instructions of every GET's reply (~4% of a pipelined GET).
pub(super) fn resp_int(line: &[u8]) -> Option<i64> {
    let (negative, digits) = match line {
        [b'-', rest @ ..] => (true, rest),
        _ => (false, line),
    };
    if digits.is_empty() || digits.len() > 19 {
        return None;
    }
    let mut n = 0u64;
    for &d in digits {
        let v = d.wrapping_sub(b'0');
        if v > 9 {
            return None;
        }
        n = n * 10 + v as u64;
    }
    // 19 digits fit a u64; the sign's range is checked here
    if negative {
        0i64.checked_sub_unsigned(n)
    } else {
        i64::try_from(n).ok()
    }
}

