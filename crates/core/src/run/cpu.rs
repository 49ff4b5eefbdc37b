//! CPU time of this process, to report the client's cost per operation and to
//! warn when the client itself saturates the machine.
use std::time::Duration;

/// User + system CPU time consumed by the whole process so far.
pub(crate) fn process_cpu_time() -> Duration {
    // SAFETY: rusage is plain integers, for which all-zero bytes are valid.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes into the struct we pass; RUSAGE_SELF is valid.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    if rc != 0 {
        return Duration::ZERO;
    }
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, (t.tv_usec as u32) * 1000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// The process's peak resident set size so far, in bytes (the kernel's
/// high-water mark: heap, stacks, mapped binary, an embedded engine's cache).
pub fn peak_rss_bytes() -> Option<u64> {
    // SAFETY: as in process_cpu_time.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes into the struct we pass; RUSAGE_SELF is valid.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    // Linux reports kilobytes
    (rc == 0 && usage.ru_maxrss > 0).then(|| usage.ru_maxrss as u64 * 1024)
}

/// CPU time consumed by the calling thread so far.
pub(crate) fn thread_cpu_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec we pass; the clock id is valid.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return Duration::ZERO;
    }
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Logical CPUs available to this process.
pub fn available_cores() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_time_grows_with_work() {
        // spin until this thread's clock says 20 ms (a busy machine takes
        // longer in wall time); the process's clock counts them too
        let (before, t0) = (process_cpu_time(), thread_cpu_time());
        let mut x = 0u64;
        let start = std::time::Instant::now();
        while thread_cpu_time() - t0 < Duration::from_millis(20)
            && start.elapsed() < Duration::from_secs(20)
        {
            x = x.wrapping_mul(31).wrapping_add(std::hint::black_box(7));
        }
        std::hint::black_box(x);
        assert!(process_cpu_time() - before >= Duration::from_millis(20));
        let mine = thread_cpu_time();
        std::thread::sleep(Duration::from_millis(30));
        // sleeping costs (almost) no CPU
        assert!(thread_cpu_time() - mine < Duration::from_millis(10));
        assert!(available_cores() >= 1);
        // the peak covers at least a buffer touched now
        let buf = vec![1u8; 64 << 20];
        std::hint::black_box(&buf);
        assert!(peak_rss_bytes().unwrap() >= 64 << 20);
    }
}
