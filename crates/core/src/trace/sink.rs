//! Writing a trace while the run goes: each worker encodes its records into
//! its own buffer and hands full buffers to one writer thread, so the hot
//! path never takes a lock or makes a system call.
use super::format::{encode, frame, preamble, Entry, Header};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, OnceLock};

/// A worker hands its buffer over at this size.
const CHUNK: usize = 256 * 1024;

/// Room at a chunk's start for its frame (length and record count).
const FRAME: usize = 8;

struct Chunk {
    body: Vec<u8>,
    records: u32,
}

/// What a finished trace holds.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SinkSummary {
    pub records: u64,
    pub bytes: u64,
    /// Why the trace is incomplete (the first write that failed).
    pub error: Option<String>,
}

/// The trace file being written; workers write through [`WorkerTrace`]s.
pub struct Sink {
    tx: Mutex<Option<mpsc::SyncSender<Chunk>>>,
    /// Emptied buffers going back to the workers.
    spare: Arc<Mutex<Vec<Vec<u8>>>>,
    writer: Mutex<Option<std::thread::JoinHandle<SinkSummary>>>,
    path: PathBuf,
    /// The run's start, ns since 1970, for the header.
    start: Arc<OnceLock<u64>>,
    /// Whether the header gives the key shape, so records may carry key numbers.
    numbered: bool,
}

impl std::fmt::Debug for Sink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Sink({})", self.path.display())
    }
}

impl Sink {
    /// Creates (or replaces) `path`; its header is written once the run's
    /// start is known ([`Sink::started`]), ahead of the first records.
    pub fn create(path: &Path, header: &Header) -> std::io::Result<Sink> {
        // chunks are large and carry their frame: written as they come, unbuffered
        let mut file = std::fs::File::create(path)?;
        // a few chunks in flight; a worker faster than the disk waits here
        let (tx, rx) = mpsc::sync_channel::<Chunk>(16);
        let spare = Arc::new(Mutex::new(Vec::new()));
        let back = spare.clone();
        let start = Arc::new(OnceLock::new());
        let known = start.clone();
        let numbered = header.keys.is_some();
        let mut header = header.clone();
        let writer = std::thread::Builder::new()
            .name("yardstick-trace".into())
            .spawn(move || {
                let mut s = SinkSummary::default();
                let mut head = |file: &mut std::fs::File, s: &mut SinkSummary| {
                    header.started_unix_ns = known.get().copied().unwrap_or(0);
                    let head = preamble(&header);
                    match file.write_all(&head) {
                        Ok(()) => s.bytes = head.len() as u64,
                        Err(e) => s.error = Some(e.to_string()),
                    }
                };
                let mut headed = false;
                for mut c in rx {
                    if !std::mem::replace(&mut headed, true) {
                        head(&mut file, &mut s);
                    }
                    if s.error.is_none() {
                        let f = frame(&c.body[FRAME..], c.records);
                        c.body[..FRAME].copy_from_slice(&f);
                        match file.write_all(&c.body) {
                            Ok(()) => {
                                s.records += u64::from(c.records);
                                s.bytes += c.body.len() as u64;
                            }
                            Err(e) => s.error = Some(e.to_string()),
                        }
                    }
                    c.body.clear();
                    if let Ok(mut spare) = back.lock() {
                        spare.push(c.body);
                    }
                }
                if !headed {
                    head(&mut file, &mut s);
                }
                if let (None, Err(e)) = (&s.error, file.flush()) {
                    s.error = Some(e.to_string());
                }
                s
            })?;
        Ok(Sink {
            tx: Mutex::new(Some(tx)),
            spare,
            writer: Mutex::new(Some(writer)),
            path: path.to_path_buf(),
            start,
            numbered,
        })
    }

    /// The run starts (the trace's offsets count from) at `at`.
    pub(crate) fn started(&self, at: std::time::SystemTime) {
        let ns = at
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        let _ = self.start.set(ns);
    }

    /// A worker's buffer on this sink.
    pub(crate) fn worker(self: &Arc<Self>) -> WorkerTrace {
        WorkerTrace {
            sink: self.clone(),
            body: framed(Vec::with_capacity(CHUNK + 512)),
            records: 0,
            prev_start: 0,
            numbered: self.numbered,
        }
    }

    fn send(&self, c: Chunk) {
        let tx = self.tx.lock().ok().and_then(|t| t.clone());
        if let Some(tx) = tx {
            let _ = tx.send(c);
        }
    }

    fn spare(&self) -> Vec<u8> {
        self.spare
            .lock()
            .ok()
            .and_then(|mut s| s.pop())
            .map(framed)
            .unwrap_or_else(|| framed(Vec::with_capacity(CHUNK + 512)))
    }

    /// Waits for every handed-over chunk to be written (the workers' buffers
    /// are flushed when they drop) and closes the file.
    pub fn finish(&self) -> SinkSummary {
        if let Ok(mut tx) = self.tx.lock() {
            tx.take();
        }
        let writer = self.writer.lock().ok().and_then(|mut w| w.take());
        match writer.map(|w| w.join()) {
            Some(Ok(s)) => s,
            Some(Err(_)) => SinkSummary {
                error: Some("the trace writer failed".into()),
                ..Default::default()
            },
            None => SinkSummary::default(),
        }
    }
}

/// An empty chunk: its frame's room, zeroed.
fn framed(mut body: Vec<u8>) -> Vec<u8> {
    body.clear();
    body.resize(FRAME, 0);
    body
}

/// One worker's records on their way to the file.
pub(crate) struct WorkerTrace {
    sink: Arc<Sink>,
    body: Vec<u8>,
    records: u32,
    prev_start: u64,
    numbered: bool,
}

impl WorkerTrace {
    #[inline]
    pub(crate) fn push(&mut self, op: &Entry<'_>) {
        if self.numbered || op.keynum.is_none() {
            encode(&mut self.body, op, self.prev_start);
        } else {
            encode(
                &mut self.body,
                &Entry {
                    keynum: None,
                    ..*op
                },
                self.prev_start,
            );
        }
        self.prev_start = op.intended_ns.unwrap_or(op.start_ns);
        self.records += 1;
        if self.body.len() >= CHUNK {
            self.hand_over();
        }
    }

    #[cold]
    fn hand_over(&mut self) {
        if self.records == 0 {
            return;
        }
        let body = std::mem::replace(&mut self.body, self.sink.spare());
        self.sink.send(Chunk {
            body,
            records: self.records,
        });
        self.records = 0;
        self.prev_start = 0;
    }
}

impl Drop for WorkerTrace {
    fn drop(&mut self) {
        self.hand_over();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::binding::Status;
    use crate::op::OpKind;
    use crate::trace::TraceOp;

    #[test]
    fn workers_chunks_all_reach_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.trace");
        let sink = Arc::new(Sink::create(&path, &Header::default()).unwrap());
        sink.started(std::time::UNIX_EPOCH + std::time::Duration::from_secs(7));
        let threads: Vec<_> = (0..3u64)
            .map(|w| {
                let mut t = sink.worker();
                std::thread::spawn(move || {
                    // enough records for several chunks each
                    for i in 0..30_000u64 {
                        t.push(
                            &(TraceOp {
                                op: OpKind::Read,
                                status: Status::Ok,
                                start_ns: i * 1000 + w,
                                intended_ns: None,
                                latency_ns: 500,
                                arg: 0,
                                key: format!("user{w}-{i}").into_bytes(),
                            })
                            .entry(),
                        );
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let s = sink.finish();
        assert_eq!((s.records, s.error), (90_000, None));
        assert_eq!(s.bytes, std::fs::metadata(&path).unwrap().len());
        let t = super::super::read(&path).unwrap();
        assert_eq!(t.ops.len(), 90_000);
        assert_eq!(t.header.started_unix_ns, 7_000_000_000);
        assert!(t.ops.windows(2).all(|w| w[0].start_ns <= w[1].start_ns));
        assert_eq!(t.ops[3].key, b"user0-1");
    }

    #[test]
    fn key_numbers_are_kept_only_where_the_header_can_rebuild_them() {
        let dir = tempfile::tempdir().unwrap();
        let shape = crate::trace::KeyShape {
            zero_padding: 1,
            ordered: true,
        };
        for keys in [None, Some(shape)] {
            let path = dir.path().join("t.trace");
            let header = Header {
                keys,
                ..Default::default()
            };
            let sink = Arc::new(Sink::create(&path, &header).unwrap());
            let mut t = sink.worker();
            // the key the runner built from the number, and the number
            t.push(&Entry {
                op: OpKind::Read,
                status: Status::Ok,
                start_ns: 1,
                intended_ns: None,
                latency_ns: 1,
                arg: 0,
                key: b"user42",
                keynum: Some(42),
            });
            drop(t);
            let s = sink.finish();
            let read = super::super::read(&path).unwrap();
            assert_eq!(read.ops[0].key, b"user42", "{keys:?}");
            // the record after the chunk's 8-byte frame: with the number or the text
            let record = s.bytes as usize - super::super::format::preamble(&header).len() - 8;
            assert_eq!(record, if keys.is_some() { 7 } else { 13 }, "{keys:?}");
        }
    }

    #[test]
    fn a_failed_write_is_reported_not_hidden() {
        // /dev/full takes the open and refuses every write
        let sink = Arc::new(Sink::create(Path::new("/dev/full"), &Header::default()).unwrap());
        let mut t = sink.worker();
        for i in 0..20_000 {
            t.push(&Entry {
                op: OpKind::Read,
                status: Status::Ok,
                start_ns: i,
                intended_ns: None,
                latency_ns: 1,
                arg: 0,
                key: &[b'k'; 20],
                keynum: None,
            });
        }
        drop(t);
        let s = sink.finish();
        assert!(s.error.unwrap().contains("No space left"));
    }
}
