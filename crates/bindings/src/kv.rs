//! Records as one value, for key-value stores that hold a blob per key
//! (memcached, Redis's string model).
//!
//! Layout: for each schema field in order, a little-endian `u32` length followed
//! by that many bytes; `u32::MAX` marks a field the record does not have. A
//! schema of exactly one field is stored raw, with no header, so a value is
//! byte-for-byte what a plain GET/SET tool (redis-benchmark, memtier) writes.
use yardstick_core::binding::{Fields, Record, WriteSet};

const ABSENT: u32 = u32::MAX;

/// Why a stored value could not be decoded.
#[derive(Debug, PartialEq, Eq)]
pub struct Malformed;

impl std::fmt::Display for Malformed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("stored value is not a yardstick record (written by another tool, or with another fieldcount)")
    }
}

/// The stored value of a one-field record, which is its field as it is: a
/// writer can send it without encoding (copying) it first. None for other
/// schemas, or when `values` lacks the field.
pub fn as_stored(fields: usize, values: &WriteSet) -> Option<&[u8]> {
    let k = stored_entry(fields, values)?;
    values.iter().nth(k).map(|(_, v)| v)
}

/// Which entry of `values` [`as_stored`] gives, its bytes left as they
/// are (owed ones stay owed).
pub fn stored_entry(fields: usize, values: &WriteSet) -> Option<usize> {
    if fields != 1 {
        return None;
    }
    values.lengths().position(|(i, _)| i == 0)
}

/// Encodes `values` as a whole record of `fields` fields into `out`.
pub fn encode(fields: usize, values: &WriteSet, out: &mut Vec<u8>) {
    out.clear();
    if fields == 1 {
        if let Some((_, v)) = values.iter().find(|(i, _)| *i == 0) {
            out.extend_from_slice(v);
        }
        return;
    }
    let mut slots: [Option<&[u8]>; 32] = [None; 32];
    let mut extra: Vec<Option<&[u8]>> = Vec::new();
    let slots: &mut [Option<&[u8]>] = if fields <= slots.len() {
        &mut slots[..fields]
    } else {
        extra.resize(fields, None);
        &mut extra
    };
    for (i, v) in values.iter() {
        if i < fields {
            slots[i] = Some(v);
        }
    }
    write_slots(slots, out);
}

fn write_slots(slots: &[Option<&[u8]>], out: &mut Vec<u8>) {
    let len: usize = slots.iter().map(|s| 4 + s.map_or(0, <[u8]>::len)).sum();
    out.reserve(len);
    for s in slots {
        match s {
            Some(v) => {
                out.extend_from_slice(&(v.len() as u32).to_le_bytes());
                out.extend_from_slice(v);
            }
            None => out.extend_from_slice(&ABSENT.to_le_bytes()),
        }
    }
}

/// Splits a stored value into its fields.
pub fn split(fields: usize, data: &[u8]) -> Result<Vec<Option<&[u8]>>, Malformed> {
    if fields == 1 {
        return Ok(vec![Some(data)]);
    }
    let mut out = Vec::with_capacity(fields);
    let mut rest = data;
    for _ in 0..fields {
        let (len, tail) = rest.split_first_chunk::<4>().ok_or(Malformed)?;
        let len = u32::from_le_bytes(*len);
        if len == ABSENT {
            out.push(None);
            rest = tail;
            continue;
        }
        let len = len as usize;
        if tail.len() < len {
            return Err(Malformed);
        }
        out.push(Some(&tail[..len]));
        rest = &tail[len..];
    }
    if !rest.is_empty() {
        return Err(Malformed);
    }
    Ok(out)
}

/// Decodes the selected fields of a stored value into `out`; returns the bytes read.
pub fn decode(
    fields: usize,
    data: &[u8],
    which: Fields,
    out: &mut Record,
) -> Result<u64, Malformed> {
    if fields == 1 {
        out.set(0, data);
        return Ok(data.len() as u64);
    }
    let parts = split(fields, data)?;
    let mut bytes = 0;
    for (_, field) in which.columns(fields) {
        if let Some(Some(v)) = parts.get(field) {
            out.set(field, v);
            bytes += v.len() as u64;
        }
    }
    Ok(bytes)
}

/// [`decode`] of a value the caller owns: a one-field value moves into the
/// record without a copy. Gives back a buffer for the caller to reuse (the
/// record's old one, or `data` when its fields were copied out).
pub fn decode_owned(
    fields: usize,
    data: Vec<u8>,
    which: Fields,
    out: &mut Record,
) -> (Result<u64, Malformed>, Vec<u8>) {
    if fields == 1 {
        let bytes = data.len() as u64;
        return (Ok(bytes), out.put(0, data));
    }
    (decode(fields, &data, which, out), data)
}

/// Whether `values` writes every field of the record, so a write needs no
/// read of the old value.
pub(crate) fn is_whole(fields: usize, values: &WriteSet) -> bool {
    let mut seen = 0u64;
    for (i, _) in values.lengths() {
        if i >= fields {
            return false;
        }
        if i < 64 {
            seen |= 1 << i;
        }
    }
    fields <= 64 && seen.count_ones() as usize == fields
}

/// The stored value `old` with `values` written over it, into `out`.
pub fn merge(
    fields: usize,
    old: &[u8],
    values: &WriteSet,
    out: &mut Vec<u8>,
) -> Result<(), Malformed> {
    out.clear();
    if fields == 1 {
        match values.iter().find(|(i, _)| *i == 0) {
            Some((_, v)) => out.extend_from_slice(v),
            None => out.extend_from_slice(old),
        }
        return Ok(());
    }
    let mut slots = split(fields, old)?;
    for (i, v) in values.iter() {
        if i < fields {
            slots[i] = Some(v);
        }
    }
    write_slots(&slots, out);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ws(pairs: &[(usize, &[u8])]) -> WriteSet {
        let mut w = WriteSet::default();
        for (i, v) in pairs {
            w.push(*i).extend_from_slice(v);
        }
        w
    }

    #[test]
    fn a_one_field_record_is_stored_as_its_field_without_encoding() {
        let one = ws(&[(0, b"value")]);
        let mut encoded = Vec::new();
        encode(1, &one, &mut encoded);
        assert_eq!(as_stored(1, &one), Some(&encoded[..]));
        assert_eq!(as_stored(2, &ws(&[(0, b"a"), (1, b"b")])), None);
        assert_eq!(as_stored(1, &ws(&[(1, b"other")])), None);
    }

    #[test]
    fn records_round_trip_with_empty_and_absent_fields() {
        let mut buf = Vec::new();
        encode(3, &ws(&[(2, b"two"), (0, b"")]), &mut buf);
        let mut rec = Record::with_fields(3);
        assert_eq!(decode(3, &buf, Fields::All, &mut rec), Ok(3));
        assert_eq!(rec.get(0), Some(&b""[..]));
        assert_eq!(rec.get(1), None);
        assert_eq!(rec.get(2), Some(&b"two"[..]));
        let mut one = Record::with_fields(3);
        decode(3, &buf, Fields::One(2), &mut one).unwrap();
        assert_eq!((one.len(), one.get(2)), (1, Some(&b"two"[..])));
    }

    #[test]
    fn one_field_schemas_store_the_raw_value() {
        let mut buf = Vec::new();
        encode(1, &ws(&[(0, b"payload")]), &mut buf);
        assert_eq!(buf, b"payload");
        let mut rec = Record::with_fields(1);
        decode(1, b"written by redis-benchmark", Fields::All, &mut rec).unwrap();
        assert_eq!(rec.get(0), Some(&b"written by redis-benchmark"[..]));
    }

    #[test]
    fn an_owned_value_moves_in_when_it_is_the_one_field_and_is_given_back_otherwise() {
        let mut rec = Record::with_fields(1);
        let v = b"payload".to_vec();
        let at = v.as_ptr();
        let (bytes, spare) = decode_owned(1, v, Fields::All, &mut rec);
        assert_eq!((bytes, rec.get(0)), (Ok(7), Some(&b"payload"[..])));
        assert_eq!(rec.get(0).map(<[u8]>::as_ptr), Some(at));
        assert!(spare.is_empty());
        let mut buf = Vec::new();
        encode(3, &ws(&[(2, b"two")]), &mut buf);
        let mut three = Record::with_fields(3);
        let (bytes, spare) = decode_owned(3, buf.clone(), Fields::All, &mut three);
        assert_eq!(
            (bytes, three.get(2), spare),
            (Ok(3), Some(&b"two"[..]), buf)
        );
    }

    #[test]
    fn merge_overwrites_only_the_written_fields() {
        let mut old = Vec::new();
        encode(3, &ws(&[(0, b"a"), (1, b"b"), (2, b"c")]), &mut old);
        let mut new = Vec::new();
        merge(3, &old, &ws(&[(1, b"BB")]), &mut new).unwrap();
        let parts = split(3, &new).unwrap();
        assert_eq!(
            parts,
            vec![Some(&b"a"[..]), Some(&b"BB"[..]), Some(&b"c"[..])]
        );
        assert!(is_whole(3, &ws(&[(0, b""), (2, b""), (1, b"")])));
        assert!(!is_whole(3, &ws(&[(0, b""), (2, b"")])));
    }

    #[test]
    fn foreign_or_truncated_values_are_malformed() {
        let mut buf = Vec::new();
        encode(3, &ws(&[(0, b"abc"), (1, b"d"), (2, b"e")]), &mut buf);
        assert_eq!(split(3, &buf[..buf.len() - 1]), Err(Malformed));
        assert_eq!(split(2, &buf), Err(Malformed));
        assert_eq!(split(3, b"hello world"), Err(Malformed));
    }
}
