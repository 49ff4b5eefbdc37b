//! The metrics endpoint: a thread answering `GET /metrics` on a TCP
//! address with the latest snapshot, one connection at a time (scrapes come
//! every few seconds; a slow client is cut off after 2 s). It stops when the
//! [`Exporter`] is dropped.
use super::{render, Format, RunInfo, Snapshot};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("cannot listen on {0}: {1}; give a free HOST:PORT (port 0 picks one)")]
    Bind(String, std::io::Error),
    #[error("cannot start the metrics thread: {0}")]
    Thread(std::io::Error),
}

/// A running metrics endpoint.
pub struct Exporter {
    addr: SocketAddr,
    snapshot: Arc<Mutex<Snapshot>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Exporter {
    /// Listens on `addr` (`127.0.0.1:9400`, `[::]:0`) and serves `info` with
    /// the snapshots given to [`Exporter::snapshot`].
    pub fn start(addr: &str, info: RunInfo) -> Result<Exporter, ServeError> {
        let listener =
            TcpListener::bind(addr).map_err(|e| ServeError::Bind(addr.to_string(), e))?;
        let local = listener
            .local_addr()
            .map_err(|e| ServeError::Bind(addr.to_string(), e))?;
        let snapshot = Arc::new(Mutex::new(Snapshot::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let (s, st) = (snapshot.clone(), stop.clone());
        let thread = std::thread::Builder::new()
            .name("yardstick-metrics".into())
            .spawn(move || {
                for conn in listener.incoming() {
                    if st.load(Ordering::SeqCst) {
                        break;
                    }
                    if let Ok(c) = conn {
                        // a broken scrape is the scraper's to retry
                        let _ = answer(c, &info, &s);
                    }
                }
            })
            .map_err(ServeError::Thread)?;
        Ok(Exporter {
            addr: local,
            snapshot,
            stop,
            thread: Some(thread),
        })
    }

    /// The address it listens on (the port chosen when 0 was asked for).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The snapshot scrapes see; update it in place.
    pub fn snapshot(&self) -> std::sync::MutexGuard<'_, Snapshot> {
        self.snapshot.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Drop for Exporter {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // wake the accept with a connection of our own
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_millis(200));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Reads one request (at most 16 KiB of head) and answers it.
fn answer(mut c: TcpStream, info: &RunInfo, snapshot: &Mutex<Snapshot>) -> std::io::Result<()> {
    c.set_read_timeout(Some(Duration::from_secs(2)))?;
    c.set_write_timeout(Some(Duration::from_secs(2)))?;
    let mut head = Vec::new();
    let mut buf = [0u8; 2048];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 16 * 1024 {
        let n = c.read(&mut buf)?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&buf[..n]);
    }
    let head = String::from_utf8_lossy(&head);
    let mut lines = head.lines();
    let first: Vec<&str> = lines.next().unwrap_or("").split(' ').collect();
    let accept = lines
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.trim().eq_ignore_ascii_case("accept"))
        .map(|(_, v)| v.trim().to_string())
        .unwrap_or_default();
    let (status, ctype, body) = match first.as_slice() {
        ["GET", path, ..] if path.split('?').next() == Some("/metrics") => {
            let f = Format::negotiate(&accept);
            let s = snapshot.lock().unwrap_or_else(|p| p.into_inner()).clone();
            ("200 OK", f.content_type(), render(info, &s, f))
        }
        ["GET", ..] => (
            "404 Not Found",
            "text/plain; charset=utf-8",
            "yardstick serves its metrics at /metrics\n".to_string(),
        ),
        _ => (
            "405 Method Not Allowed",
            "text/plain; charset=utf-8",
            "GET /metrics\n".to_string(),
        ),
    };
    write!(
        c,
        "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )?;
    c.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(addr: SocketAddr, path: &str, accept: &str) -> String {
        let mut c = TcpStream::connect(addr).unwrap();
        write!(
            c,
            "GET {path} HTTP/1.1\r\nHost: x\r\nAccept: {accept}\r\n\r\n"
        )
        .unwrap();
        let mut s = String::new();
        c.read_to_string(&mut s).unwrap();
        s
    }

    #[test]
    fn scrapes_get_the_latest_snapshot_in_the_format_asked_for() {
        let e = Exporter::start("127.0.0.1:0", RunInfo::default()).unwrap();
        let addr = e.addr();
        assert_ne!(addr.port(), 0);
        let r = get(addr, "/metrics", "text/plain");
        assert!(r.starts_with("HTTP/1.1 200 OK\r\n"), "{r}");
        assert!(r.contains("Content-Type: text/plain; version=0.0.4"));
        assert!(r.contains("yardstick_finished 0\n"));
        e.snapshot().finished = true;
        let r = get(
            addr,
            "/metrics",
            "application/openmetrics-text; version=1.0.0",
        );
        assert!(r.contains("application/openmetrics-text"), "{r}");
        assert!(r.contains("yardstick_finished 1\n"));
        assert!(r.ends_with("# EOF\n"));
        assert!(get(addr, "/", "").starts_with("HTTP/1.1 404"));
        let mut c = TcpStream::connect(addr).unwrap();
        write!(c, "POST /metrics HTTP/1.1\r\n\r\n").unwrap();
        let mut s = String::new();
        c.read_to_string(&mut s).unwrap();
        assert!(s.starts_with("HTTP/1.1 405"), "{s}");
        // a client that sends nothing is cut off; the next scrape is served
        let idle = TcpStream::connect(addr).unwrap();
        assert!(get(addr, "/metrics", "").starts_with("HTTP/1.1 200"));
        drop(idle);
        let taken = Exporter::start(&addr.to_string(), RunInfo::default());
        assert!(matches!(taken, Err(ServeError::Bind(..))));
        drop(e);
        assert!(TcpStream::connect(addr).is_err(), "stopped on drop");
    }
}
