//! Operation traces: `--trace FILE` records every operation of a run
//! (intended start, actual start, operation, key, status, latency) and
//! `yardstick replay` plays a trace, or a Redis MONITOR capture, back
//! open-loop on its own timetable.
//!
//! The file (documented in docs/trace.md; all integers little-endian):
//!
//! ```text
//! "YSTRACE1"                  magic, 8 bytes
//! u32 n, n bytes              header: JSON (Header)
//! chunks, to the end:
//!   u32 bytes, u32 records    one worker's records, in the order they ended
//!   records:
//!     u8  operation           OpKind index (READ 0, UPDATE 1, ...); + 0x80
//!                             when the key is given by its number
//!     u8  status              Status index (ok 0, ...)
//!     zigzag varint           time: the intended start (paced runs), else the
//!                             actual start, ns since the run's start, as a
//!                             difference from the chunk's previous record's
//!     varint                  lag: actual start - intended start, + 1
//!                             (0: closed loop, time is the actual start)
//!     varint                  latency: ns from the first attempt's start to the end
//!     varint                  arg: scan length; fields of a read or update
//!                             (0 all, i + 1 field i); a read-modify-write's
//!                             read fields + written fields << 32; records
//!                             of a batch
//!     varint n, n bytes       key (a batch's first key), or with 0x80 set:
//!     varint                  the key's record number; the header's `keys`
//!                             (zero padding, order) rebuild YCSB's key
//! ```
//!
//! Varints are LEB128. A YCSB record takes about 10 bytes: the runner hands
//! over the number it built the key from (parsing a key's digits back cost
//! more client CPU than writing them, measured; and the text was 31 bytes).
mod format;
mod monitor;
mod sink;

pub(crate) use format::Entry;
pub use format::{read, Header, KeyShape, Trace, TraceOp, TraceReadError};
pub use monitor::{read_monitor, Monitor};
pub(crate) use sink::WorkerTrace;
pub use sink::{Sink, SinkSummary};

/// The file's first bytes.
pub const MAGIC: &[u8; 8] = b"YSTRACE1";
