//! Faults during measurement (`--at 30s 'COMMAND'`): each command runs with
//! `sh -c` at its offset into the measured phase, in a thread and process
//! group of its own (so a slow command delays no other, and a terminal's
//! Ctrl-C reaches the run, not it). Its output goes to a file, not a pipe,
//! so a command that leaves a server running in the background still ends.
//! What each did - start, end, exit status, the tail of its output - goes
//! into the result, where [`crate::result::availability`] measures the
//! run around it.
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A command to run at an offset into the measured phase.
#[derive(Debug, Clone, PartialEq)]
pub struct Fault {
    pub at: Duration,
    pub command: String,
}

/// How long a command may go on after the run ended before it is killed.
pub const GRACE: Duration = Duration::from_secs(30);
/// The output kept per command, from its end.
const TAIL: u64 = 2000;

/// What one fault did; times in seconds from the start of measurement.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FaultRecord {
    pub at_s: f64,
    pub command: String,
    /// `None`: the run ended before the fault's time.
    pub started_s: Option<f64>,
    pub ended_s: Option<f64>,
    pub exit_code: Option<i32>,
    /// The signal that ended the command (it was killed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    /// The last 2,000 bytes of its output (stdout and stderr).
    pub output: String,
    /// Why it did not run, or was killed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The run around it (filled in when the result is built).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub availability: Option<crate::result::availability::Availability>,
}

/// When the run's measured phase ended (set once by the runner).
#[derive(Debug, Default)]
pub(crate) struct RunEnd {
    at: Mutex<Option<Instant>>,
}

impl RunEnd {
    pub(crate) fn set(&self) {
        if let Ok(mut a) = self.at.lock() {
            a.get_or_insert_with(Instant::now);
        }
    }

    fn get(&self) -> Option<Instant> {
        self.at.lock().ok().and_then(|a| *a)
    }
}

/// Runs every fault at `measure_start + at`, each in its own thread;
/// returns their records in the order given once all ended (or were killed
/// `GRACE` after the run ended, or never started because it ended first).
pub(crate) fn run_all(
    faults: &[Fault],
    measure_start: Instant,
    stop: &AtomicBool,
    end: &RunEnd,
) -> Vec<FaultRecord> {
    std::thread::scope(|s| {
        let handles: Vec<_> = faults
            .iter()
            .map(|f| s.spawn(move || run_one(f, measure_start, stop, end)))
            .collect();
        handles
            .into_iter()
            .zip(faults)
            .map(|(h, f)| {
                h.join().unwrap_or_else(|_| FaultRecord {
                    note: Some("the fault's thread failed".into()),
                    ..unstarted(f)
                })
            })
            .collect()
    })
}

fn unstarted(f: &Fault) -> FaultRecord {
    FaultRecord {
        at_s: f.at.as_secs_f64(),
        command: f.command.clone(),
        started_s: None,
        ended_s: None,
        exit_code: None,
        signal: None,
        output: String::new(),
        note: None,
        availability: None,
    }
}

const POLL: Duration = Duration::from_millis(10);

fn run_one(f: &Fault, measure_start: Instant, stop: &AtomicBool, end: &RunEnd) -> FaultRecord {
    let due = measure_start + f.at;
    let secs = |t: Instant| t.saturating_duration_since(measure_start).as_secs_f64();
    let mut rec = unstarted(f);
    loop {
        let now = Instant::now();
        if now >= due {
            break;
        }
        if stop.load(Ordering::SeqCst) || end.get().is_some() {
            rec.note = Some("not run: the run ended before its time".into());
            return rec;
        }
        std::thread::sleep((due - now).min(POLL));
    }
    let out = match tempfile::tempfile() {
        Ok(f) => f,
        Err(e) => {
            rec.note = Some(format!("not run: no file for its output: {e}"));
            return rec;
        }
    };
    let started = Instant::now();
    let spawned = out.try_clone().and_then(|err| {
        let out2 = out.try_clone()?;
        Command::new("sh")
            .arg("-c")
            .arg(&f.command)
            .stdin(Stdio::null())
            .stdout(out2)
            .stderr(err)
            .process_group(0)
            .spawn()
    });
    rec.started_s = Some(secs(started));
    let mut child = match spawned {
        Ok(c) => c,
        Err(e) => {
            rec.note = Some(format!("not run: cannot start sh: {e}"));
            rec.started_s = None;
            return rec;
        }
    };
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Some(s),
            Ok(None) => {}
            Err(_) => break None,
        }
        if end.get().is_some_and(|e| e.elapsed() > GRACE) {
            // SAFETY: killpg(2) has no memory-safety preconditions; the group
            // is the command's own (process_group(0) above).
            unsafe { libc::killpg(child.id() as i32, libc::SIGKILL) };
            rec.note = Some(format!(
                "killed: still running {} s after the run ended",
                GRACE.as_secs()
            ));
            break child.wait().ok();
        }
        std::thread::sleep(POLL);
    };
    rec.ended_s = Some(secs(Instant::now()));
    if let Some(s) = status {
        rec.exit_code = s.code();
        rec.signal = s.signal();
    }
    rec.output = tail(out);
    rec
}

fn tail(mut f: std::fs::File) -> String {
    let len = f.seek(SeekFrom::End(0)).unwrap_or(0);
    let _ = f.seek(SeekFrom::Start(len.saturating_sub(TAIL)));
    let mut buf = Vec::new();
    let _ = f.read_to_end(&mut buf);
    String::from_utf8_lossy(&buf).into_owned()
}

/// `30s`, `1m30s`-free durations as the flag takes them: [`crate::units`].
pub fn parse_at(offset: &str, command: &str) -> Result<Fault, String> {
    let at = crate::units::parse_duration(offset).map_err(|e| {
        format!("--at {offset}: {e}; write the offset into the measured phase first, then the command: --at 30s 'COMMAND'")
    })?;
    if command.trim().is_empty() {
        return Err(format!(
            "--at {offset} has an empty command: give a shell command, e.g. --at {offset} 'kill -9 1234'"
        ));
    }
    Ok(Fault {
        at,
        command: command.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fault(ms: u64, command: &str) -> Fault {
        Fault {
            at: Duration::from_millis(ms),
            command: command.into(),
        }
    }

    #[test]
    fn commands_run_at_their_offsets_each_in_its_own_time() {
        let start = Instant::now();
        let (stop, end) = (AtomicBool::new(false), RunEnd::default());
        let faults = [
            fault(100, "sleep 0.4; echo slow"),
            fault(200, "echo fast; echo to stderr >&2; exit 3"),
            // a server left running in the background does not hold it
            fault(150, "sleep 5 >/dev/null 2>&1 & echo $! > /dev/null"),
        ];
        let recs = run_all(&faults, start, &stop, &end);
        let slow = &recs[0];
        assert!((slow.started_s.unwrap() - 0.1).abs() < 0.05, "{slow:?}");
        assert!(slow.ended_s.unwrap() >= 0.5, "{slow:?}");
        assert_eq!((slow.exit_code, slow.output.as_str()), (Some(0), "slow\n"));
        let fast = &recs[1];
        // not held up by the slow one before it
        assert!((fast.started_s.unwrap() - 0.2).abs() < 0.05, "{fast:?}");
        assert!(fast.ended_s.unwrap() < 0.45, "{fast:?}");
        assert_eq!(fast.exit_code, Some(3));
        assert_eq!(fast.output, "fast\nto stderr\n");
        assert!(recs[2].ended_s.unwrap() < 1.0, "{:?}", recs[2]);
        assert!(start.elapsed() < Duration::from_secs(3));
    }

    #[test]
    fn a_fault_after_the_end_of_the_run_does_not_run() {
        let (stop, end) = (AtomicBool::new(false), RunEnd::default());
        end.set();
        let recs = run_all(
            &[fault(60_000, "touch /nonexistent/x")],
            Instant::now(),
            &stop,
            &end,
        );
        assert_eq!(recs[0].started_s, None);
        assert!(recs[0]
            .note
            .as_deref()
            .unwrap()
            .contains("ended before its time"));
    }

    #[test]
    fn offsets_and_commands_are_checked() {
        assert_eq!(
            parse_at("2.5s", "true").unwrap().at,
            Duration::from_millis(2500)
        );
        assert!(parse_at("30", "true").unwrap_err().contains("has no unit"));
        assert!(parse_at("3s", " ").unwrap_err().contains("empty command"));
    }
}
