//! One connection to HBase's Thrift2 gateway (`THBaseService`) and the calls
//! the binding makes, each a framed request and its reply on the same
//! socket. The structs are HBase's (`hbase.thrift`), by field id.
use super::thrift::{ty, DecodeError, Decoder, Encoder, Reply};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use yardstick_core::binding::{Record, ScanRows, Status, WriteSet};
use yardstick_core::error::ServerError;

/// How a call failed.
#[derive(Debug)]
pub(crate) enum CallError {
    /// The socket failed or closed: the gateway is down or restarting.
    Io(std::io::Error),
    /// No reply within the operation timeout.
    Timeout,
    /// The reply could not be read.
    Decode(DecodeError),
    /// HBase refused the call (TIOError, TIllegalArgument) or the gateway
    /// failed it (TApplicationException).
    Server(ServerError),
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallError::Io(e) => write!(f, "the connection to the Thrift gateway failed: {e}"),
            CallError::Timeout => f.write_str("no answer from the Thrift gateway within the timeout"),
            CallError::Decode(e) => e.fmt(f),
            CallError::Server(e) => e.fmt(f),
        }
    }
}

impl From<DecodeError> for CallError {
    fn from(e: DecodeError) -> Self {
        CallError::Decode(e)
    }
}

impl CallError {
    pub(crate) fn status(&self) -> Status {
        match self {
            CallError::Io(_) => Status::Unavailable,
            CallError::Timeout => Status::Timeout,
            CallError::Decode(_) => Status::Error,
            // what HBase says when a region or the cluster is not there
            CallError::Server(e)
                if ["NotServingRegion", "RegionOffline", "ConnectException", "ServerNotRunning"]
                    .iter()
                    .any(|m| e.message.contains(m)) =>
            {
                Status::Unavailable
            }
            CallError::Server(e) if e.message.contains("Timeout") => Status::Timeout,
            CallError::Server(_) => Status::Error,
        }
    }

    /// A failure after which the reply stream may be out of step.
    pub(crate) fn breaks_connection(&self) -> bool {
        !matches!(self, CallError::Server(_))
    }
}

/// Where the binding's cells live: table, family and the qualifiers of the
/// record's fields, in field order.
pub(crate) struct Layout {
    pub(crate) table: Vec<u8>,
    pub(crate) family: Vec<u8>,
    pub(crate) qualifiers: Vec<Vec<u8>>,
    /// TDurability of every put and delete (0: the family's default).
    pub(crate) durability: i32,
}

/// TCompareOperator.NOT_EQUAL. HBase reads an empty check value as "the
/// cell is absent or empty", so NOT_EQUAL to it matches a row whose cell is
/// there (a record whose first field is empty counts as absent; YCSB never
/// writes empty values).
const NOT_EQUAL: i32 = 3;

pub(crate) struct Conn {
    /// Buffered: a reply's length and body come in one read.
    stream: tokio::io::BufReader<TcpStream>,
    out: Vec<u8>,
    reply: Vec<u8>,
    seq: i32,
}

impl Conn {
    pub(crate) async fn connect(addr: &str, timeout: Duration) -> std::io::Result<Conn> {
        let stream = tokio::time::timeout(timeout, TcpStream::connect(addr))
            .await
            .map_err(|_| std::io::Error::new(std::io::ErrorKind::TimedOut, "connect timed out"))??;
        stream.set_nodelay(true)?;
        Ok(Conn {
            stream: tokio::io::BufReader::with_capacity(64 << 10, stream),
            out: Vec::with_capacity(4096),
            reply: Vec::with_capacity(4096),
            seq: 0,
        })
    }

    /// Sends a call whose arguments `args` writes and reads its reply; the
    /// decoder is left at the result struct's first field.
    async fn call(
        &mut self,
        method: &str,
        args: impl FnOnce(&mut Encoder),
    ) -> Result<Decoder<'_>, CallError> {
        self.seq = self.seq.wrapping_add(1);
        let mut e = Encoder::call(&mut self.out, method, self.seq);
        args(&mut e);
        e.finish();
        self.stream
            .get_mut()
            .write_all(&self.out)
            .await
            .map_err(CallError::Io)?;
        let mut len = [0u8; 4];
        self.stream.read_exact(&mut len).await.map_err(CallError::Io)?;
        let len = u32::from_be_bytes(len) as usize;
        self.reply.resize(len, 0);
        self.stream
            .read_exact(&mut self.reply)
            .await
            .map_err(CallError::Io)?;
        let mut d = Decoder::new(&self.reply);
        match d.reply(self.seq)? {
            Reply::Result => Ok(d),
            Reply::Exception(m) => Err(CallError::Server(ServerError::new(
                "Thrift",
                "TApplicationException",
                m,
            ))),
        }
    }

    /// Reads a result struct: `success` reads field 0; a declared exception
    /// (TIOError, TIllegalArgument) is the server's error.
    fn result<T>(
        d: &mut Decoder<'_>,
        mut success: impl FnMut(&mut Decoder<'_>, u8) -> Result<T, DecodeError>,
    ) -> Result<Option<T>, CallError> {
        let mut out = None;
        while let Some((t, id)) = d.field()? {
            match id {
                0 => out = Some(success(d, t)?),
                1 | 2 => {
                    let mut message = String::new();
                    while let Some((t, id)) = d.field()? {
                        match (t, id) {
                            (ty::BINARY, 1) => message = d.string()?,
                            _ => d.skip(t)?,
                        }
                    }
                    let code = if id == 1 { "TIOError" } else { "TIllegalArgument" };
                    return Err(CallError::Server(ServerError::new("HBase", code, message)));
                }
                _ => d.skip(t)?,
            }
        }
        Ok(out)
    }

    /// A call returning nothing.
    async fn void(&mut self, method: &str, args: impl FnOnce(&mut Encoder)) -> Result<(), CallError> {
        let mut d = self.call(method, args).await?;
        Self::result(&mut d, |d, t| d.skip(t)).map(|_| ())
    }

    /// A call returning a bool.
    async fn boolean(
        &mut self,
        method: &str,
        args: impl FnOnce(&mut Encoder),
    ) -> Result<bool, CallError> {
        let mut d = self.call(method, args).await?;
        Ok(Self::result(&mut d, |d, _| d.bool())?.unwrap_or(false))
    }

    /// `get`: the row's cells of `field` (all fields with `None`) into
    /// `out`; the number of cells found and their bytes.
    pub(crate) async fn get(
        &mut self,
        l: &Layout,
        row: &[u8],
        field: Option<usize>,
        out: &mut Record,
    ) -> Result<(usize, u64), CallError> {
        let mut d = self
            .call("get", |e| {
                e.binary_field(1, &l.table).field(ty::STRUCT, 2);
                e.binary_field(1, row);
                columns(e, 2, l, field);
                e.stop();
            })
            .await?;
        let mut found = (0, 0);
        Self::result(&mut d, |d, _| {
            found = result_cells(d, l, out)?;
            Ok(())
        })?;
        Ok(found)
    }

    /// `put`; with `must_exist`, a put only when the row's first field is
    /// present (`checkAndMutate`) or absent (`checkAndPut`); false when the
    /// check failed.
    pub(crate) async fn put(
        &mut self,
        l: &Layout,
        row: &[u8],
        values: &WriteSet,
        must_exist: Option<bool>,
    ) -> Result<bool, CallError> {
        match must_exist {
            None => self
                .void("put", |e| {
                    e.binary_field(1, &l.table).field(ty::STRUCT, 2);
                    put_struct(e, l, row, values);
                })
                .await
                .map(|()| true),
            // the check value left out: "the column is absent"
            Some(false) => {
                self.boolean("checkAndPut", |e| {
                    e.binary_field(1, &l.table).binary_field(2, row);
                    e.binary_field(3, &l.family).binary_field(4, &l.qualifiers[0]);
                    e.field(ty::STRUCT, 6);
                    put_struct(e, l, row, values);
                })
                .await
            }
            Some(true) => {
                self.if_present(l, row, |e| {
                    e.field(ty::STRUCT, 1);
                    put_struct(e, l, row, values);
                })
                .await
            }
        }
    }

    /// Deletes the row if it exists; false when it did not.
    pub(crate) async fn delete(&mut self, l: &Layout, row: &[u8]) -> Result<bool, CallError> {
        self.if_present(l, row, |e| {
            e.field(ty::STRUCT, 2);
            e.binary_field(1, row);
            if l.durability != 0 {
                e.field(ty::I32, 7).i32(l.durability);
            }
            e.stop();
        })
        .await
    }

    /// `checkAndMutate` of one mutation (a TMutation union's member, written
    /// by `mutation`) applied only while the row's first field is present.
    async fn if_present(
        &mut self,
        l: &Layout,
        row: &[u8],
        mutation: impl FnOnce(&mut Encoder),
    ) -> Result<bool, CallError> {
        self.boolean("checkAndMutate", |e| {
            e.binary_field(1, &l.table).binary_field(2, row);
            e.binary_field(3, &l.family).binary_field(4, &l.qualifiers[0]);
            e.field(ty::I32, 5).i32(NOT_EQUAL);
            e.binary_field(6, b"");
            e.field(ty::STRUCT, 7).binary_field(1, row);
            e.field(ty::LIST, 2).list(ty::STRUCT, 1);
            mutation(e);
            e.stop(); // the union
            e.stop(); // TRowMutations
        })
        .await
    }

    /// `putMultiple` of whole records.
    pub(crate) async fn put_multiple<'r>(
        &mut self,
        l: &Layout,
        rows: impl Iterator<Item = (&'r [u8], &'r WriteSet)>,
        n: usize,
    ) -> Result<(), CallError> {
        self.void("putMultiple", |e| {
            e.binary_field(1, &l.table);
            e.field(ty::LIST, 2).list(ty::STRUCT, n);
            for (row, values) in rows {
                put_struct(e, l, row, values);
            }
        })
        .await
    }

    /// `getScannerResults`: up to `n` rows from `start` in key order into
    /// `out`; the bytes read.
    pub(crate) async fn scan(
        &mut self,
        l: &Layout,
        start: &[u8],
        n: u64,
        field: Option<usize>,
        out: &mut ScanRows,
    ) -> Result<u64, CallError> {
        let n = i32::try_from(n).unwrap_or(i32::MAX);
        let mut d = self
            .call("getScannerResults", |e| {
                e.binary_field(1, &l.table).field(ty::STRUCT, 2);
                e.binary_field(1, start);
                columns(e, 3, l, field);
                e.field(ty::I32, 4).i32(n);
                e.field(ty::I32, 15).i32(n);
                e.stop();
                e.field(ty::I32, 3).i32(n);
            })
            .await?;
        let mut bytes = 0;
        Self::result(&mut d, |d, _| {
            let (_, rows) = d.list()?;
            for _ in 0..rows {
                let mut key = None;
                let mut cells = Vec::new();
                while let Some((t, id)) = d.field()? {
                    match (t, id) {
                        (ty::BINARY, 1) => key = Some(d.bytes()?),
                        (ty::LIST, 2) => cells = column_values(d)?,
                        _ => d.skip(t)?,
                    }
                }
                let rec = out.push(key.unwrap_or_default());
                bytes += fill(l, &cells, rec).1;
            }
            Ok(())
        })?;
        Ok(bytes)
    }

    /// Calls on tables and namespaces, by name: `tableExists`, ...
    pub(crate) async fn table_call(
        &mut self,
        method: &str,
        ns: &[u8],
        table: &[u8],
    ) -> Result<bool, CallError> {
        self.boolean(method, |e| {
            e.field(ty::STRUCT, 1);
            table_name(e, ns, table);
        })
        .await
    }

    /// `disableTable` then `truncateTable` (which enables it again), keeping its regions.
    pub(crate) async fn truncate(&mut self, ns: &[u8], table: &[u8]) -> Result<(), CallError> {
        self.void("disableTable", |e| {
            e.field(ty::STRUCT, 1);
            table_name(e, ns, table);
        })
        .await?;
        self.void("truncateTable", |e| {
            e.field(ty::STRUCT, 1);
            table_name(e, ns, table);
            e.field(ty::BOOL, 2).bool(true);
        })
        .await
    }

    /// `createNamespace` (an existing one is left alone).
    pub(crate) async fn create_namespace(&mut self, ns: &[u8]) -> Result<(), CallError> {
        match self
            .void("createNamespace", |e| {
                e.field(ty::STRUCT, 1).binary_field(1, ns).stop();
            })
            .await
        {
            Err(CallError::Server(e)) if e.message.contains("NamespaceExist") => Ok(()),
            r => r,
        }
    }

    /// `createTable` with one family of one version and `compression` (a
    /// TCompressionAlgorithm), in one region: HBase 2.6's gateway passes each
    /// split key as the whole request's buffer, so a pre-split table is made
    /// with HBase's shell.
    pub(crate) async fn create_table(
        &mut self,
        ns: &[u8],
        table: &[u8],
        family: &[u8],
        compression: i32,
    ) -> Result<(), CallError> {
        self.void("createTable", |e| {
            e.field(ty::STRUCT, 1).field(ty::STRUCT, 1);
            table_name(e, ns, table);
            e.field(ty::LIST, 2).list(ty::STRUCT, 1);
            e.binary_field(1, family);
            e.field(ty::I32, 6).i32(compression);
            e.field(ty::I32, 10).i32(1);
            e.stop().stop();
        })
        .await
    }

    /// The settings of `family` in the table's descriptor, as (name, value).
    pub(crate) async fn family_settings(
        &mut self,
        ns: &[u8],
        table: &[u8],
        family: &[u8],
    ) -> Result<Vec<(String, String)>, CallError> {
        let mut d = self
            .call("getTableDescriptor", |e| {
                e.field(ty::STRUCT, 1);
                table_name(e, ns, table);
            })
            .await?;
        let mut out = Vec::new();
        Self::result(&mut d, |d, _| {
            while let Some((t, id)) = d.field()? {
                if (t, id) != (ty::LIST, 2) {
                    d.skip(t)?;
                    continue;
                }
                let (_, n) = d.list()?;
                for _ in 0..n {
                    let f = super::info::family_descriptor(d)?;
                    if f.name == family {
                        out = f.settings;
                    }
                }
            }
            Ok(())
        })?;
        Ok(out)
    }
}

/// A TTableName struct (ends it).
fn table_name(e: &mut Encoder, ns: &[u8], table: &[u8]) {
    e.binary_field(1, ns).binary_field(2, table).stop();
}

/// The `columns` field (list<TColumn>) with the family, or one of its qualifiers.
fn columns(e: &mut Encoder, id: i16, l: &Layout, field: Option<usize>) {
    e.field(ty::LIST, id).list(ty::STRUCT, 1);
    e.binary_field(1, &l.family);
    if let Some(f) = field {
        e.binary_field(2, &l.qualifiers[f]);
    }
    e.stop();
}

/// A TPut struct of the present values (ends it).
fn put_struct(e: &mut Encoder, l: &Layout, row: &[u8], values: &WriteSet) {
    e.binary_field(1, row);
    e.field(ty::LIST, 2).list(ty::STRUCT, values.len());
    for (f, v) in values.iter() {
        e.binary_field(1, &l.family)
            .binary_field(2, &l.qualifiers[f])
            .binary_field(3, v)
            .stop();
    }
    if l.durability != 0 {
        e.field(ty::I32, 6).i32(l.durability);
    }
    e.stop();
}

/// A TResult's cells found and their bytes, its cells put in `out`.
fn result_cells(d: &mut Decoder<'_>, l: &Layout, out: &mut Record) -> Result<(usize, u64), DecodeError> {
    let mut cells = Vec::new();
    while let Some((t, id)) = d.field()? {
        match (t, id) {
            (ty::LIST, 2) => cells = column_values(d)?,
            _ => d.skip(t)?,
        }
    }
    Ok(fill(l, &cells, out))
}

/// A cell as (qualifier, value).
type Cell<'a> = (&'a [u8], &'a [u8]);

/// A list<TColumnValue> as cells.
fn column_values<'a>(d: &mut Decoder<'a>) -> Result<Vec<Cell<'a>>, DecodeError> {
    let (_, n) = d.list()?;
    let mut cells = Vec::with_capacity(n);
    for _ in 0..n {
        let (mut q, mut v) = (&b""[..], &b""[..]);
        while let Some((t, id)) = d.field()? {
            match (t, id) {
                (ty::BINARY, 2) => q = d.bytes()?,
                (ty::BINARY, 3) => v = d.bytes()?,
                _ => d.skip(t)?,
            }
        }
        cells.push((q, v));
    }
    Ok(cells)
}

/// Puts the cells whose qualifier names a field into `out`: (cells, bytes).
fn fill(l: &Layout, cells: &[Cell<'_>], out: &mut Record) -> (usize, u64) {
    let mut bytes = 0;
    for (q, v) in cells {
        if let Some(f) = l.qualifiers.iter().position(|x| x == q) {
            out.set(f, v);
            bytes += v.len() as u64;
        }
    }
    (cells.len(), bytes)
}
