//! The buffers a call reads into and writes from: a record read back, the
//! rows of a scan, the records of a batch insert (the values of a write
//! are [`WriteSet`]'s own file).
//! Each slot owns one of each for the whole run, so calls do not allocate.
use super::WriteSet;

/// One record read back: a value slot per field of the schema, reused between
/// calls so reads do not allocate.
#[derive(Debug, Clone, Default)]
pub struct Record {
    /// Each field's buffer beside its presence: kept in two vectors, a read
    /// touched three cache lines of a record that is cold when a thread runs
    /// many slots; now two.
    fields: Vec<Field>,
    /// A field was set since the last clear: a read that found nothing
    /// (null://, a missing key) leaves nothing to clear.
    dirty: bool,
}

#[derive(Debug, Clone, Default)]
struct Field {
    value: Vec<u8>,
    present: bool,
}

impl Record {
    pub fn with_fields(n: usize) -> Self {
        Record {
            fields: vec![Field::default(); n],
            dirty: false,
        }
    }

    /// Forgets the values but keeps the buffers.
    #[inline]
    pub fn clear(&mut self) {
        if std::mem::take(&mut self.dirty) {
            self.fields.iter_mut().for_each(|f| f.present = false);
        }
    }

    /// Field `i`, the fields up to it added when the schema had fewer.
    #[inline]
    fn field(&mut self, i: usize) -> &mut Field {
        if i >= self.fields.len() {
            self.fields.resize(i + 1, Field::default());
        }
        self.dirty = true;
        &mut self.fields[i]
    }

    /// Sets field `i` to `data`.
    #[inline]
    pub fn set(&mut self, i: usize, data: &[u8]) {
        let f = self.field(i);
        f.value.clear();
        f.value.extend_from_slice(data);
        f.present = true;
    }

    /// Sets field `i` to `data`, taking the buffer; gives back the one it
    /// replaces, emptied, for the caller to reuse (a read that owns its
    /// value already moves it in without a copy).
    #[inline]
    pub fn put(&mut self, i: usize, data: Vec<u8>) -> Vec<u8> {
        let f = self.field(i);
        f.present = true;
        let mut old = std::mem::replace(&mut f.value, data);
        old.clear();
        old
    }

    /// Takes field `i`'s buffer out, leaving the field absent and an empty
    /// buffer in its place: `None` when the field is not present.
    #[inline]
    pub fn take(&mut self, i: usize) -> Option<Vec<u8>> {
        let f = self.fields.get_mut(i).filter(|f| f.present)?;
        f.present = false;
        Some(std::mem::take(&mut f.value))
    }

    pub fn get(&self, i: usize) -> Option<&[u8]> {
        let f = self.fields.get(i)?;
        f.present.then_some(f.value.as_slice())
    }

    /// Fields present, with their index.
    pub fn present(&self) -> impl Iterator<Item = (usize, &[u8])> {
        self.fields
            .iter()
            .enumerate()
            .filter_map(|(i, f)| f.present.then_some((i, f.value.as_slice())))
    }

    pub fn len(&self) -> usize {
        self.fields.iter().filter(|f| f.present).count()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn bytes(&self) -> u64 {
        self.present().map(|(_, d)| d.len() as u64).sum()
    }
}

/// Rows returned by a scan, in key order; buffers are reused between scans.
#[derive(Debug, Default)]
pub struct ScanRows {
    rows: Vec<(Vec<u8>, Record)>,
    len: usize,
    fields: usize,
}

impl ScanRows {
    pub fn with_fields(fields: usize) -> Self {
        ScanRows {
            rows: Vec::new(),
            len: 0,
            fields,
        }
    }

    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// Starts the next row with `key` and returns its record to fill.
    pub fn push(&mut self, key: &[u8]) -> &mut Record {
        if self.len == self.rows.len() {
            self.rows
                .push((Vec::new(), Record::with_fields(self.fields)));
        }
        let (k, rec) = &mut self.rows[self.len];
        k.clear();
        k.extend_from_slice(key);
        rec.clear();
        self.len += 1;
        rec
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn rows(&self) -> impl Iterator<Item = (&[u8], &Record)> {
        self.rows[..self.len].iter().map(|(k, r)| (k.as_slice(), r))
    }
}

/// Records of one batch insert (`db.batchsize` > 1 in the load phase), in key
/// order of generation; buffers are reused between batches.
#[derive(Debug, Default, Clone)]
pub struct Batch {
    rows: Vec<(Vec<u8>, WriteSet)>,
    len: usize,
}

impl Batch {
    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// Starts the next record: its key buffer and value set, both cleared.
    pub fn push(&mut self) -> (&mut Vec<u8>, &mut WriteSet) {
        if self.len == self.rows.len() {
            self.rows.push((Vec::new(), WriteSet::default()));
        }
        let (k, v) = &mut self.rows[self.len];
        k.clear();
        v.clear();
        self.len += 1;
        (k, v)
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn rows(&self) -> impl Iterator<Item = (&[u8], &WriteSet)> {
        self.rows[..self.len].iter().map(|(k, v)| (k.as_slice(), v))
    }

    pub fn bytes(&self) -> u64 {
        self.rows().map(|(_, v)| v.bytes()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_put_into_a_record_is_moved_in_and_the_old_buffer_given_back() {
        let mut r = Record::with_fields(2);
        r.set(0, b"first");
        let v = b"second".to_vec();
        let at = v.as_ptr();
        let old = r.put(0, v);
        assert!(
            old.is_empty() && old.capacity() >= 5,
            "the old buffer, emptied"
        );
        assert_eq!(
            (r.get(0), r.get(0).unwrap().as_ptr()),
            (Some(&b"second"[..]), at)
        );
        assert_eq!(r.get(1), None);
        // past the schema's fields, as `set` does
        r.put(3, b"x".to_vec());
        assert_eq!(r.get(3), Some(&b"x"[..]));
        r.clear();
        assert!(r.is_empty());
    }

    #[test]
    fn a_field_taken_out_is_absent_and_its_buffer_the_callers() {
        let mut r = Record::with_fields(2);
        let v = b"value".to_vec();
        let at = v.as_ptr();
        r.put(1, v);
        let taken = r.take(1).expect("field 1 is present");
        assert_eq!((taken.as_slice(), taken.as_ptr()), (&b"value"[..], at));
        assert_eq!((r.take(1), r.take(0)), (None, None));
        assert_eq!((r.get(1), r.len()), (None, 0));
        assert_eq!(r.take(9), None, "past the schema's fields");
        r.set(1, b"again");
        assert_eq!(r.get(1), Some(&b"again"[..]));
    }

    #[test]
    fn a_clear_forgets_every_field_set_or_put_since_the_last_one() {
        let mut r = Record::with_fields(3);
        r.set(0, b"a");
        r.set(2, b"c");
        r.clear();
        assert_eq!((r.get(0), r.get(2), r.len()), (None, None, 0));
        r.clear(); // nothing set since: still empty
        assert!(r.is_empty());
        r.put(1, b"b".to_vec());
        r.clear();
        assert_eq!(r.get(1), None);
        r.set(1, b"again");
        assert_eq!(r.get(1), Some(&b"again"[..]));
    }
}
