//! Rows as the tab-separated text of PostgreSQL's `COPY ... FROM STDIN` and
//! MySQL's `LOAD DATA`, written by the row generators directly, and back.
use super::{Row, RowSink, Value};

/// Bytes per piece of [`TextRows`] text.
const PIECE: usize = 64 << 10;

/// Rows as tab-separated text with backslash escapes and `\N` for NULL:
/// PostgreSQL's `COPY ... FROM STDIN` text format and MySQL's `LOAD DATA`
/// default; `now` is the text of a timestamp column's load time. Written by
/// the row generators directly ([`RowSink`]: no value in between) or from
/// values ([`TextRows::from_rows`]). Kept in pieces of whole rows and about
/// [`PIECE`] bytes, sent one after another: buffers the allocator keeps
/// reusing, where one of several MiB per batch came fresh from the kernel,
/// zeroed, each time.
pub struct TextRows {
    now: String,
    pieces: Vec<Vec<u8>>,
    buf: Vec<u8>,
    rows: usize,
    /// No column of the current row written yet.
    row_start: bool,
    digits: itoa::Buffer,
}

impl TextRows {
    pub fn new(now: &str) -> TextRows {
        TextRows {
            now: now.to_string(),
            pieces: Vec::new(),
            buf: Vec::with_capacity(PIECE + 1024),
            rows: 0,
            row_start: true,
            digits: itoa::Buffer::new(),
        }
    }

    #[cfg(any(test, feature = "postgres", feature = "mysql"))]
    pub(crate) fn from_rows(rows: &[Row], now: &str) -> TextRows {
        let mut t = TextRows::new(now);
        for row in rows {
            for v in row {
                match v {
                    Value::Null => t.null(),
                    Value::Int(n) => t.int(*n),
                    Value::Num(f) => t.num(*f),
                    Value::Now => t.now(),
                    Value::Text(s) => t.text(s),
                }
            }
            t.end_row();
        }
        t
    }

    /// Rows written.
    pub fn len(&self) -> usize {
        self.rows
    }

    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    /// The text, in pieces of whole rows.
    pub(crate) fn into_pieces(mut self) -> Vec<Vec<u8>> {
        if !self.buf.is_empty() {
            self.pieces.push(self.buf);
        }
        self.pieces
    }

    fn column(&mut self) -> &mut Vec<u8> {
        if !self.row_start {
            self.buf.push(b'\t');
        }
        self.row_start = false;
        &mut self.buf
    }

    /// Any text, escaped.
    pub fn text(&mut self, t: &str) {
        let buf = self.column();
        if !t
            .bytes()
            .any(|b| matches!(b, b'\\' | b'\t' | b'\n' | b'\r'))
        {
            buf.extend_from_slice(t.as_bytes());
            return;
        }
        for b in t.bytes() {
            match b {
                b'\\' => buf.extend_from_slice(b"\\\\"),
                b'\t' => buf.extend_from_slice(b"\\t"),
                b'\n' => buf.extend_from_slice(b"\\n"),
                b'\r' => buf.extend_from_slice(b"\\r"),
                b => buf.push(b),
            }
        }
    }
}

impl RowSink for TextRows {
    fn int(&mut self, v: i64) {
        self.column();
        self.buf.extend_from_slice(self.digits.format(v).as_bytes());
    }
    fn num(&mut self, v: f64) {
        self.column();
        fixed4(&mut self.buf, v, &mut self.digits);
    }
    fn alnum(&mut self, write: impl FnOnce(&mut Vec<u8>)) {
        let buf = self.column();
        let start = buf.len();
        write(buf);
        debug_assert!(buf[start..].iter().all(u8::is_ascii_alphanumeric));
    }
    fn now(&mut self) {
        self.column();
        self.buf.extend_from_slice(self.now.as_bytes());
    }
    fn null(&mut self) {
        self.column().extend_from_slice(b"\\N");
    }
    fn end_row(&mut self) {
        self.buf.push(b'\n');
        self.rows += 1;
        self.row_start = true;
        if self.buf.len() >= PIECE {
            let full = std::mem::replace(&mut self.buf, Vec::with_capacity(PIECE + 1024));
            self.pieces.push(full);
        }
    }
}

/// Tab-separated rows ([`TextRows`]) back as values: `\N` as NULL, every
/// other field as unescaped text.
pub fn rows_from_text<P: AsRef<[u8]>>(pieces: &[P]) -> Vec<Row> {
    let mut rows = Vec::new();
    for piece in pieces {
        for line in piece.as_ref().split(|&b| b == b'\n') {
            if line.is_empty() {
                continue;
            }
            let row = line
                .split(|&b| b == b'\t')
                .map(|field| {
                    if field == b"\\N" {
                        return Value::Null;
                    }
                    let mut out = Vec::with_capacity(field.len());
                    let mut bytes = field.iter();
                    while let Some(&b) = bytes.next() {
                        out.push(if b == b'\\' {
                            match bytes.next() {
                                Some(b't') => b'\t',
                                Some(b'n') => b'\n',
                                Some(b'r') => b'\r',
                                Some(&other) => other,
                                None => b'\\',
                            }
                        } else {
                            b
                        });
                    }
                    Value::Text(String::from_utf8_lossy(&out).into_owned())
                })
                .collect();
            rows.push(row);
        }
    }
    rows
}

/// `f` with four decimals, as `format!("{f:.4}")` writes the loader's
/// amounts (whole cents or ten-thousandths) without float formatting's
/// exact-digit machinery.
fn fixed4(buf: &mut Vec<u8>, f: f64, digits: &mut itoa::Buffer) {
    let scaled = (f * 10_000.0).round();
    if !scaled.is_finite() || scaled.abs() >= 9e15 {
        use std::io::Write as _;
        let _ = write!(buf, "{f:.4}");
        return;
    }
    let scaled = scaled as i64;
    if scaled < 0 {
        buf.push(b'-');
    }
    let abs = scaled.unsigned_abs();
    buf.extend_from_slice(digits.format(abs / 10_000).as_bytes());
    buf.push(b'.');
    let frac = digits.format(abs % 10_000 + 10_000).as_bytes();
    buf.extend_from_slice(&frac[1..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tab_separated_rows_escape_and_mark_nulls() {
        let rows = vec![vec![
            Value::Int(7),
            Value::Text("a\tb\\c\nd".into()),
            Value::Null,
            Value::Num(12.5),
            Value::Now,
        ]];
        let text = TextRows::from_rows(&rows, "2026-01-02 03:04:05");
        assert_eq!(text.len(), 1);
        let pieces = text.into_pieces();
        assert_eq!(
            pieces,
            vec![b"7\ta\\tb\\\\c\\nd\t\\N\t12.5000\t2026-01-02 03:04:05\n".to_vec()]
        );
        // and back: NULL, the rest as unescaped text
        assert_eq!(
            rows_from_text(&pieces),
            vec![vec![
                Value::Text("7".into()),
                Value::Text("a\tb\\c\nd".into()),
                Value::Null,
                Value::Text("12.5000".into()),
                Value::Text("2026-01-02 03:04:05".into()),
            ]]
        );
        // whole rows per piece, nothing lost between pieces
        let many: Vec<Row> = (0..5000)
            .map(|i| vec![Value::Int(i), Value::Text("x".repeat(40))])
            .collect();
        let pieces = TextRows::from_rows(&many, "").into_pieces();
        assert!(pieces.len() > 2, "{}", pieces.len());
        assert!(pieces
            .iter()
            .all(|p| p.len() < PIECE + 100 && p.ends_with(b"\n")));
        let back = rows_from_text(&pieces);
        assert_eq!(back.len(), 5000);
        assert!(back
            .iter()
            .enumerate()
            .all(|(i, r)| r[0] == Value::Text(i.to_string())));
    }

    #[test]
    fn generated_rows_written_as_text_equal_their_values_written_as_text() {
        use yardstick_core::tpcc::{rows, Constants, Random};
        let k = Constants {
            c_last: 3,
            c_id: 4,
            ol_i_id: 5,
        };
        // each generator drawing from two equal streams, one into values and
        // one into text
        let mut values = rows::Values::default();
        let mut direct = TextRows::new("2026-01-02 03:04:05");
        let (mut a, mut b) = (Random::new(9, k), Random::new(9, k));
        for i in 1..=50 {
            rows::item(&mut a, i, &mut values);
            rows::item(&mut b, i, &mut direct);
            rows::warehouse(&mut a, i, &mut values);
            rows::warehouse(&mut b, i, &mut direct);
            rows::stock(&mut a, 1, i, &mut values);
            rows::stock(&mut b, 1, i, &mut direct);
            rows::district(&mut a, 1, i, &mut values);
            rows::district(&mut b, 1, i, &mut direct);
            rows::customer(&mut a, 1, 1, i * 50, &mut values);
            rows::customer(&mut b, 1, 1, i * 50, &mut direct);
            rows::history(&mut a, 1, 1, i, &mut values);
            rows::history(&mut b, 1, 1, i, &mut direct);
        }
        let from_values = TextRows::from_rows(&values.rows, "2026-01-02 03:04:05");
        assert_eq!(direct.len(), 300);
        assert_eq!(from_values.into_pieces(), direct.into_pieces());

        struct OrderText([TextRows; 3]);
        impl rows::OrderSinks for OrderText {
            type Sink = TextRows;
            fn orders(&mut self) -> &mut TextRows {
                &mut self.0[0]
            }
            fn lines(&mut self) -> &mut TextRows {
                &mut self.0[1]
            }
            fn new_orders(&mut self) -> &mut TextRows {
                &mut self.0[2]
            }
        }
        let mut values = rows::OrderValues::default();
        let mut direct = OrderText(std::array::from_fn(|_| TextRows::new("now")));
        for o_id in 2095..=2105 {
            rows::order(&mut a, 1, 2, o_id, o_id - 2000, &mut values);
            rows::order(&mut b, 1, 2, o_id, o_id - 2000, &mut direct);
        }
        let [orders, lines, new_orders] = direct.0;
        assert_eq!((orders.len(), new_orders.len()), (11, 5));
        for (v, t) in [
            (values.orders, orders),
            (values.lines, lines),
            (values.new_orders, new_orders),
        ] {
            assert_eq!(
                TextRows::from_rows(&v.rows, "now").into_pieces(),
                t.into_pieces()
            );
        }
    }

    #[test]
    fn amounts_are_written_as_float_formatting_would() {
        let mut digits = itoa::Buffer::new();
        let mut check = |f: f64| {
            let mut buf = Vec::new();
            fixed4(&mut buf, f, &mut digits);
            assert_eq!(String::from_utf8(buf).unwrap(), format!("{f:.4}"), "{f}");
        };
        for k in -100_000..100_000 {
            check(f64::from(k) / 100.0);
            check(f64::from(k) / 10_000.0);
        }
        for f in [0.0, 1e12 + 0.25, -3_000_000.5, 5e20, f64::NAN] {
            check(f);
        }
    }
}
