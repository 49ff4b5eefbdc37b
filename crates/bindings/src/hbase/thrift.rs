//! The part of Thrift the binding speaks: the strict binary protocol in the
//! framed transport (a 4-byte length before each message), which HBase's
//! Thrift2 gateway serves with `-f`. Written here rather than generated from
//! `hbase.thrift`: a dozen structs of a 1,000-line IDL are used, the encoder
//! writes into the session's reused buffer, and the build needs no Thrift
//! compiler.
use std::fmt;

/// Thrift's type codes.
pub(crate) mod ty {
    pub(crate) const STOP: u8 = 0;
    pub(crate) const BOOL: u8 = 2;
    pub(crate) const BYTE: u8 = 3;
    pub(crate) const DOUBLE: u8 = 4;
    pub(crate) const I16: u8 = 6;
    pub(crate) const I32: u8 = 8;
    pub(crate) const I64: u8 = 10;
    pub(crate) const BINARY: u8 = 11;
    pub(crate) const STRUCT: u8 = 12;
    pub(crate) const MAP: u8 = 13;
    pub(crate) const SET: u8 = 14;
    pub(crate) const LIST: u8 = 15;
}

const VERSION_1: u32 = 0x8001_0000;
const CALL: u32 = 1;
const REPLY: u32 = 2;
const EXCEPTION: u32 = 3;

/// Writes one framed call into a buffer the caller reuses.
pub(crate) struct Encoder<'a>(pub(crate) &'a mut Vec<u8>);

impl Encoder<'_> {
    /// Starts the frame and the message header of a call to `method`.
    pub(crate) fn call<'b>(buf: &'b mut Vec<u8>, method: &str, seq: i32) -> Encoder<'b> {
        buf.clear();
        buf.extend_from_slice(&[0; 4]); // the frame length, set by `finish`
        buf.extend_from_slice(&(VERSION_1 | CALL).to_be_bytes());
        let mut e = Encoder(buf);
        e.bytes(method.as_bytes());
        e.i32(seq);
        e
    }

    pub(crate) fn field(&mut self, ty: u8, id: i16) -> &mut Self {
        self.0.push(ty);
        self.0.extend_from_slice(&id.to_be_bytes());
        self
    }

    pub(crate) fn stop(&mut self) -> &mut Self {
        self.0.push(ty::STOP);
        self
    }

    pub(crate) fn bool(&mut self, v: bool) -> &mut Self {
        self.0.push(u8::from(v));
        self
    }

    pub(crate) fn i32(&mut self, v: i32) -> &mut Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }

    pub(crate) fn bytes(&mut self, v: &[u8]) -> &mut Self {
        self.i32(v.len() as i32);
        self.0.extend_from_slice(v);
        self
    }

    pub(crate) fn list(&mut self, elem: u8, len: usize) -> &mut Self {
        self.0.push(elem);
        self.i32(len as i32)
    }

    /// A binary field.
    pub(crate) fn binary_field(&mut self, id: i16, v: &[u8]) -> &mut Self {
        self.field(ty::BINARY, id).bytes(v)
    }

    /// Ends the arguments struct and sets the frame's length.
    pub(crate) fn finish(&mut self) {
        self.stop();
        let len = (self.0.len() - 4) as u32;
        self.0[..4].copy_from_slice(&len.to_be_bytes());
    }
}

/// What a reply could not be read as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum DecodeError {
    /// The frame ended inside a value.
    Short,
    /// Not what the protocol allows here.
    Bad(String),
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::Short => f.write_str("the gateway's reply ended early"),
            DecodeError::Bad(m) => write!(f, "the gateway's reply is not Thrift: {m}"),
        }
    }
}

type Result<T> = std::result::Result<T, DecodeError>;

/// Reads one reply frame (without its length).
pub(crate) struct Decoder<'a> {
    buf: &'a [u8],
    pos: usize,
}

/// A reply's header: a result struct follows, or the server's own exception.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Reply {
    Result,
    /// TApplicationException: an unknown method, a bad argument, an internal error.
    Exception(String),
}

impl<'a> Decoder<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Decoder { buf, pos: 0 }
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self.pos.checked_add(n).ok_or(DecodeError::Short)?;
        let s = self.buf.get(self.pos..end).ok_or(DecodeError::Short)?;
        self.pos = end;
        Ok(s)
    }

    pub(crate) fn byte(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }

    pub(crate) fn bool(&mut self) -> Result<bool> {
        Ok(self.byte()? != 0)
    }

    pub(crate) fn i16(&mut self) -> Result<i16> {
        let b = self.take(2)?;
        Ok(i16::from_be_bytes([b[0], b[1]]))
    }

    pub(crate) fn i32(&mut self) -> Result<i32> {
        let b = self.take(4)?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn len(&mut self) -> Result<usize> {
        usize::try_from(self.i32()?).map_err(|_| DecodeError::Bad("a negative length".into()))
    }

    pub(crate) fn bytes(&mut self) -> Result<&'a [u8]> {
        let n = self.len()?;
        self.take(n)
    }

    pub(crate) fn string(&mut self) -> Result<String> {
        Ok(String::from_utf8_lossy(self.bytes()?).into_owned())
    }

    /// The next field's (type, id), or `None` at the struct's end.
    pub(crate) fn field(&mut self) -> Result<Option<(u8, i16)>> {
        match self.byte()? {
            ty::STOP => Ok(None),
            t => Ok(Some((t, self.i16()?))),
        }
    }

    /// A list's element type and length.
    pub(crate) fn list(&mut self) -> Result<(u8, usize)> {
        let elem = self.byte()?;
        Ok((elem, self.len()?))
    }

    /// Skips a value of type `t` (fields this client does not read).
    pub(crate) fn skip(&mut self, t: u8) -> Result<()> {
        match t {
            ty::BOOL | ty::BYTE => self.take(1).map(|_| ()),
            ty::I16 => self.take(2).map(|_| ()),
            ty::I32 => self.take(4).map(|_| ()),
            ty::I64 | ty::DOUBLE => self.take(8).map(|_| ()),
            ty::BINARY => self.bytes().map(|_| ()),
            ty::STRUCT => {
                while let Some((t, _)) = self.field()? {
                    self.skip(t)?;
                }
                Ok(())
            }
            ty::MAP => {
                let (k, v) = (self.byte()?, self.byte()?);
                for _ in 0..self.len()? {
                    self.skip(k)?;
                    self.skip(v)?;
                }
                Ok(())
            }
            ty::SET | ty::LIST => {
                let (elem, n) = self.list()?;
                (0..n).try_for_each(|_| self.skip(elem))
            }
            t => Err(DecodeError::Bad(format!("type code {t}"))),
        }
    }

    /// Reads the message header of the reply to call `seq`.
    pub(crate) fn reply(&mut self, seq: i32) -> Result<Reply> {
        let head = self.i32()? as u32;
        if head & 0xffff_0000 != VERSION_1 {
            return Err(DecodeError::Bad(format!(
                "version word {head:#x} (is the gateway started with -f, the framed transport, and the binary protocol?)"
            )));
        }
        self.bytes()?;
        let got = self.i32()?;
        if got != seq {
            return Err(DecodeError::Bad(format!(
                "the reply to call {got} came for call {seq}"
            )));
        }
        match head & 0xff {
            REPLY => Ok(Reply::Result),
            EXCEPTION => {
                let mut message = String::from("the gateway failed the call");
                while let Some((t, id)) = self.field()? {
                    match (t, id) {
                        (ty::BINARY, 1) => message = self.string()?,
                        _ => self.skip(t)?,
                    }
                }
                Ok(Reply::Exception(message))
            }
            t => Err(DecodeError::Bad(format!("message type {t}"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_is_framed_with_its_header_and_arguments() {
        let mut buf = Vec::new();
        let mut e = Encoder::call(&mut buf, "get", 7);
        e.binary_field(1, b"t").field(ty::STRUCT, 2);
        e.binary_field(1, b"row").stop();
        e.finish();
        let len = u32::from_be_bytes([buf[0], buf[1], buf[2], buf[3]]) as usize;
        assert_eq!(len, buf.len() - 4);
        let mut d = Decoder::new(&buf[4..]);
        assert_eq!(d.i32().unwrap() as u32, 0x8001_0001);
        assert_eq!(d.bytes().unwrap(), b"get");
        assert_eq!(d.i32().unwrap(), 7);
        assert_eq!(d.field().unwrap(), Some((ty::BINARY, 1)));
        assert_eq!(d.bytes().unwrap(), b"t");
        assert_eq!(d.field().unwrap(), Some((ty::STRUCT, 2)));
        d.skip(ty::STRUCT).unwrap();
        assert_eq!(d.field().unwrap(), None);
    }

    fn reply(kind: u32, seq: i32, body: &[u8]) -> Vec<u8> {
        let mut b = (0x8001_0000u32 | kind).to_be_bytes().to_vec();
        b.extend_from_slice(&3i32.to_be_bytes());
        b.extend_from_slice(b"put");
        b.extend_from_slice(&seq.to_be_bytes());
        b.extend_from_slice(body);
        b
    }

    #[test]
    fn replies_exceptions_and_garbage_are_told_apart() {
        assert_eq!(
            Decoder::new(&reply(2, 5, &[0])).reply(5),
            Ok(Reply::Result)
        );
        let mut body = vec![ty::BINARY, 0, 1, 0, 0, 0, 4];
        body.extend_from_slice(b"oops");
        body.extend_from_slice(&[ty::I32, 0, 2, 0, 0, 0, 6, ty::STOP]);
        assert_eq!(
            Decoder::new(&reply(3, 5, &body)).reply(5),
            Ok(Reply::Exception("oops".into()))
        );
        assert!(Decoder::new(&reply(2, 4, &[0])).reply(5).is_err());
        let e = Decoder::new(b"HTTP/1.1 400").reply(1).unwrap_err();
        assert!(e.to_string().contains("framed transport"), "{e}");
        assert_eq!(
            Decoder::new(&[0, 0]).i32().unwrap_err(),
            DecodeError::Short
        );
        // a length longer than the frame is short, not a panic
        assert_eq!(
            Decoder::new(&[0, 0, 0, 9, 1]).bytes().unwrap_err(),
            DecodeError::Short
        );
    }

    #[test]
    fn unknown_fields_of_every_type_are_skipped() {
        let mut buf = Vec::new();
        let mut e = Encoder(&mut buf);
        e.field(ty::I64, 1).0.extend_from_slice(&(-1i64).to_be_bytes());
        e.field(ty::LIST, 2).list(ty::I32, 2).i32(1).i32(2);
        e.field(ty::MAP, 3);
        e.0.extend_from_slice(&[ty::BINARY, ty::BOOL]);
        e.i32(1).bytes(b"k").bool(true);
        e.field(ty::BOOL, 4).bool(true);
        e.stop();
        let mut d = Decoder::new(&buf);
        d.skip(ty::STRUCT).unwrap();
        assert_eq!(d.pos, buf.len());
    }
}
