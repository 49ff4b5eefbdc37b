//! `memcached://host:port`: memcached over its text protocol, with a small
//! client of our own on tokio (one connection per session, no pooling layer
//! between the operation and the socket).
//!
//! A record is one item, encoded by [`crate::kv`] (a one-field record is
//! stored raw). `insert` is `add` (or `set` with upsert semantics), a whole-
//! record `update` is `replace` (or `set`), a partial update is `gets` then
//! `cas`, retried when another client won the race. memcached cannot scan:
//! workloads with scans are refused when the binding opens.
use crate::kv;
use crate::url::Target;
use std::collections::BTreeMap;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{
    AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader, ReadBuf,
};
use tokio::net::TcpStream;
mod session;

pub use session::MemcachedSession;
use crate::registry::{Capabilities, Descriptor, Registered};
use yardstick_core::binding::*;

/// yardstick's own URL options.
pub(crate) const OPTIONS: &[&str] = &[
    "prefix",
    "timeout",
    "connect_timeout",
    "tls_ca",
    "tls_insecure",
];

/// `stats settings` entries recorded with every result.
const SETTINGS: &[&str] = &[
    "maxbytes",
    "maxconns",
    "item_size_max",
    "evictions",
    "num_threads",
    "lru_segmented",
];

/// Lost `cas` races in a row before a partial update is a `Conflict`.
const CAS_ATTEMPTS: usize = 16;

/// memcached's key length limit.
const MAX_KEY: usize = 250;

/// A plain or TLS connection.
enum Stream {
    Plain(TcpStream),
    Tls(Box<tokio_rustls::client::TlsStream<TcpStream>>),
}

impl AsyncRead for Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_read(cx, buf),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Stream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_write(cx, buf),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_flush(cx),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_shutdown(cx),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}

/// Where and how to connect.
struct Endpoint<'a> {
    addr: &'a str,
    tls: Option<&'a tokio_rustls::TlsConnector>,
    timeout: Duration,
}

struct Inner {
    addr: String,
    prefix: Vec<u8>,
    fields: usize,
    insert_mode: InsertMode,
    update_mode: UpdateMode,
    timeout: Duration,
    connect_timeout: Duration,
    tls: Option<tokio_rustls::TlsConnector>,
}

pub(crate) struct MemcachedBinding {
    inner: Arc<Inner>,
    info: EngineInfo,
}

/// One text-protocol connection.
struct Conn {
    io: BufReader<Stream>,
    out: Vec<u8>,
    line: Vec<u8>,
}

#[derive(Debug)]
enum Reply {
    Stored,
    NotStored,
    Exists,
    NotFound,
    Deleted,
}

#[derive(Debug)]
enum ConnError {
    Io(std::io::Error),
    Timeout,
    /// The server answered with an error line (`SERVER_ERROR ...`,
    /// `CLIENT_ERROR ...`, `ERROR`): its kind is the code.
    Server(yardstick_core::error::ServerError),
    Protocol(String),
}

impl std::fmt::Display for ConnError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConnError::Io(e) => write!(f, "{e}"),
            ConnError::Timeout => f.write_str("no reply within the timeout"),
            ConnError::Server(e) => write!(f, "{e}"),
            ConnError::Protocol(m) => write!(f, "unexpected reply: {m}"),
        }
    }
}

/// A memcached error line as the server's error: `SERVER_ERROR out of
/// memory` is code SERVER_ERROR, message "out of memory".
fn server_error(line: &[u8]) -> yardstick_core::error::ServerError {
    let text = String::from_utf8_lossy(line);
    let (code, message) = text.split_once(' ').unwrap_or((&text, ""));
    let message = if message.is_empty() {
        "the server did not understand the command"
    } else {
        message
    };
    yardstick_core::error::ServerError::new("memcached", code, message)
}

impl From<std::io::Error> for ConnError {
    fn from(e: std::io::Error) -> Self {
        ConnError::Io(e)
    }
}

impl ConnError {
    fn status(&self) -> Status {
        match self {
            ConnError::Io(_) => Status::Unavailable,
            ConnError::Timeout => Status::Timeout,
            ConnError::Server(_) | ConnError::Protocol(_) => Status::Error,
        }
    }

    /// Whether the connection can go on after this error.
    fn keeps_connection(&self) -> bool {
        matches!(self, ConnError::Server(_))
    }
}

impl Conn {
    async fn connect(ep: Endpoint<'_>) -> Result<Conn, ConnError> {
        let stream = tokio::time::timeout(ep.timeout, TcpStream::connect(ep.addr))
            .await
            .map_err(|_| ConnError::Timeout)??;
        stream.set_nodelay(true)?;
        let stream = match ep.tls {
            None => Stream::Plain(stream),
            Some(tls) => {
                let host = ep.addr.rsplit_once(':').map_or(ep.addr, |(h, _)| h);
                let name =
                    rustls::pki_types::ServerName::try_from(host.to_string()).map_err(|e| {
                        ConnError::Protocol(format!("{host} is not a TLS server name: {e}"))
                    })?;
                let s = tokio::time::timeout(ep.timeout, tls.connect(name, stream))
                    .await
                    .map_err(|_| ConnError::Timeout)??;
                Stream::Tls(Box::new(s))
            }
        };
        Ok(Conn {
            io: BufReader::with_capacity(64 * 1024, stream),
            out: Vec::with_capacity(4096),
            line: Vec::with_capacity(128),
        })
    }

    async fn flush(&mut self) -> Result<(), ConnError> {
        self.io.get_mut().write_all(&self.out).await?;
        self.out.clear();
        Ok(())
    }

    /// Reads one reply line (without `\r\n`) into `self.line`.
    async fn read_line(&mut self) -> Result<(), ConnError> {
        self.line.clear();
        let n = self.io.read_until(b'\n', &mut self.line).await?;
        if n == 0 || !self.line.ends_with(b"\r\n") {
            return Err(ConnError::Io(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "memcached closed the connection",
            )));
        }
        self.line.truncate(self.line.len() - 2);
        if self.line.starts_with(b"SERVER_ERROR")
            || self.line.starts_with(b"CLIENT_ERROR")
            || self.line == b"ERROR"
        {
            return Err(ConnError::Server(server_error(&self.line)));
        }
        Ok(())
    }

    /// `get`/`gets` of one key: the value into `value`, and its cas id.
    async fn get(
        &mut self,
        key: &[u8],
        with_cas: bool,
        value: &mut Vec<u8>,
    ) -> Result<Option<u64>, ConnError> {
        self.out
            .extend_from_slice(if with_cas { b"gets " } else { b"get " });
        self.out.extend_from_slice(key);
        self.out.extend_from_slice(b"\r\n");
        self.flush().await?;
        self.read_line().await?;
        if self.line == b"END" {
            return Ok(None);
        }
        // VALUE <key> <flags> <bytes> [<cas unique>]
        let text = std::str::from_utf8(&self.line).map_err(|_| self.protocol())?;
        let mut parts = text.split(' ');
        if parts.next() != Some("VALUE") {
            return Err(self.protocol());
        }
        let _key = parts.next();
        let _flags = parts.next();
        let len: usize = parts
            .next()
            .and_then(|b| b.parse().ok())
            .ok_or_else(|| self.protocol())?;
        let cas: u64 = match parts.next() {
            Some(c) => c.parse().map_err(|_| self.protocol())?,
            None => 0,
        };
        value.resize(len + 2, 0);
        self.io.read_exact(value).await?;
        if !value.ends_with(b"\r\n") {
            return Err(ConnError::Protocol("value not followed by CRLF".into()));
        }
        value.truncate(len);
        self.read_line().await?;
        if self.line != b"END" {
            return Err(self.protocol());
        }
        Ok(Some(cas))
    }

    /// A storage command: `set`, `add`, `replace`, or `cas` with an id.
    async fn store(
        &mut self,
        verb: &str,
        key: &[u8],
        data: &[u8],
        cas: Option<u64>,
    ) -> Result<Reply, ConnError> {
        self.out.extend_from_slice(verb.as_bytes());
        self.out.push(b' ');
        self.out.extend_from_slice(key);
        self.out.extend_from_slice(b" 0 0 ");
        self.out
            .extend_from_slice(itoa::Buffer::new().format(data.len()).as_bytes());
        if let Some(c) = cas {
            self.out.push(b' ');
            self.out
                .extend_from_slice(itoa::Buffer::new().format(c).as_bytes());
        }
        self.out.extend_from_slice(b"\r\n");
        if data.len() > 16 * 1024 {
            // large values go straight from their buffer, not through `out`
            self.flush().await?;
            self.io.get_mut().write_all(data).await?;
            self.out.extend_from_slice(b"\r\n");
        } else {
            self.out.extend_from_slice(data);
            self.out.extend_from_slice(b"\r\n");
        }
        self.flush().await?;
        self.reply().await
    }

    async fn delete(&mut self, key: &[u8]) -> Result<Reply, ConnError> {
        self.out.extend_from_slice(b"delete ");
        self.out.extend_from_slice(key);
        self.out.extend_from_slice(b"\r\n");
        self.flush().await?;
        self.reply().await
    }

    async fn reply(&mut self) -> Result<Reply, ConnError> {
        self.read_line().await?;
        Ok(match self.line.as_slice() {
            b"STORED" => Reply::Stored,
            b"NOT_STORED" => Reply::NotStored,
            b"EXISTS" => Reply::Exists,
            b"NOT_FOUND" => Reply::NotFound,
            b"DELETED" => Reply::Deleted,
            _ => return Err(self.protocol()),
        })
    }

    /// A command whose reply is `STAT name value` lines up to `END`, or one line.
    async fn lines(&mut self, command: &str) -> Result<Vec<String>, ConnError> {
        self.out.extend_from_slice(command.as_bytes());
        self.out.extend_from_slice(b"\r\n");
        self.flush().await?;
        let mut out = Vec::new();
        loop {
            self.read_line().await?;
            let l = String::from_utf8_lossy(&self.line).into_owned();
            if l == "END" {
                return Ok(out);
            }
            let single = !l.starts_with("STAT ");
            out.push(l);
            if single {
                return Ok(out);
            }
        }
    }

    fn protocol(&self) -> ConnError {
        ConnError::Protocol(String::from_utf8_lossy(&self.line).into_owned())
    }
}

impl Inner {
    fn endpoint(&self) -> Endpoint<'_> {
        Endpoint {
            addr: &self.addr,
            tls: self.tls.as_ref(),
            timeout: self.connect_timeout,
        }
    }
}

impl Registered for MemcachedBinding {
    const DESCRIPTOR: Descriptor = Descriptor {
        schemes: &["memcached"],
        server_port: Some(11211),
        flavours: &[],
        description: "memcached (text protocol, own client): get/add/set/replace/cas/delete; no scans",
        example: "memcached://127.0.0.1:11211",
        docs: "docs/bindings/memcached.md",
        options: OPTIONS,
        capabilities: Capabilities {
            batch_load: false,
            scan: false,
            tpcc: None,
        },
    };

    fn open(target: &Target, opts: &OpenOptions) -> Result<Self, BindingError> {
        crate::net::use_ring_for_tls();
        target.allow_only(OPTIONS)?;
        if opts.scans {
            return Err(BindingError::Unsupported(
                "the workload has scans, which memcached cannot do (it has no key order); set scanproportion=0 or use another database".into(),
            ));
        }
        let authority = target.rest.split('/').next().unwrap_or("");
        if authority.contains('@') {
            return Err(BindingError::Unsupported(
                "memcached's text protocol has no authentication (SASL needs the binary protocol); remove user:password@ from the URL".into(),
            ));
        }
        if authority.contains(',') {
            return Err(BindingError::Unsupported(
                "several memcached servers in one URL (client-side sharding) are not supported; give one host:port".into(),
            ));
        }
        let addr = match authority {
            "" => "127.0.0.1:11211".to_string(),
            a => crate::url::host_port(a, 11211, "memcached")?,
        };
        let prefix = target.param("prefix").unwrap_or("").as_bytes().to_vec();
        if prefix.iter().any(|b| *b <= b' ') {
            return Err(BindingError::Config(
                "prefix must not contain spaces or control characters (memcached keys cannot)"
                    .into(),
            ));
        }
        let inner = Inner {
            addr,
            prefix,
            fields: opts.schema.fields.len(),
            insert_mode: opts.insert_mode,
            update_mode: opts.update_mode,
            timeout: target.op_timeout()?,
            connect_timeout: target.connect_timeout()?,
            tls: match (target.param("tls_ca"), target.param("tls_insecure")) {
                (None, None) => None,
                (ca, insecure) => Some(tokio_rustls::TlsConnector::from(std::sync::Arc::new(
                    crate::net::tls_config("tls_ca", ca, insecure == Some("true"))?,
                ))),
            },
        };
        let server = format!("memcached at {}", inner.addr);
        let unreachable = |e: ConnError| {
            BindingError::Unavailable(format!(
                "cannot connect to {server}: {e}; check that the server runs and the URL is right"
            ))
        };
        let (version, stats) = yardstick_core::run::run_cold(target.setup_limit()?, async {
            let mut c = Conn::connect(inner.endpoint()).await.map_err(unreachable)?;
            // a server that never answers (a TLS listener spoken to in plain text) is bounded too
            let ask = async {
                let version = c.lines("version").await?;
                let stats = c.lines("stats settings").await?;
                Ok::<_, ConnError>((version, stats))
            };
            tokio::time::timeout(inner.timeout, ask)
                .await
                .unwrap_or(Err(ConnError::Timeout))
                .map_err(unreachable)
        })?;
        let version = version
            .first()
            .and_then(|v| v.strip_prefix("VERSION "))
            .unwrap_or("unknown")
            .to_string();
        let mut settings = BTreeMap::new();
        for line in &stats {
            let mut p = line.splitn(3, ' ');
            if let (Some("STAT"), Some(name), Some(value)) = (p.next(), p.next(), p.next()) {
                if SETTINGS.contains(&name) {
                    settings.insert(name.to_string(), value.to_string());
                }
            }
        }
        settings.insert("tls".into(), inner.tls.is_some().to_string());
        settings.insert(
            "record layout".into(),
            "one item per record (fields length-prefixed; one field stored raw)".into(),
        );
        Ok(MemcachedBinding {
            inner: Arc::new(inner),
            info: EngineInfo {
                name: "memcached".into(),
                version,
                settings,
            },
        })
    }
}


#[cfg(test)]
mod tests;
