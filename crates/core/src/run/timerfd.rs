//! Waking at a precise instant without spinning. The runtime's timer has
//! millisecond ticks (it fires up to ~2 ms late), so a paced slot used to
//! sleep on it to 2 ms before its time and spin the rest: a paced run at
//! 5,000 ops/s burnt a whole core, taken from a server on the same machine.
//! A timerfd is a kernel high-resolution timer; its expiry reaches the
//! thread's runtime as readiness, so the thread's other slots run meanwhile
//! and the thread sleeps in epoll when none has work. Worker threads also
//! ask for a timer slack of 1 µs (Linux delays a sleeping thread's wake-up by
//! 50 µs by default to batch wake-ups).
use std::cell::Cell;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::{Duration, Instant};
use tokio::io::unix::AsyncFd;
use tokio::io::Interest;

thread_local! {
    /// Whether this thread's runtime has a reactor, so timers can be awaited.
    static REACTOR: Cell<bool> = const { Cell::new(false) };
}

/// Marks this thread as one whose tasks run on a runtime with IO enabled
/// (a worker thread) and whose waits sleep (`pacing=sleep`), and makes its
/// sleeps precise.
pub(crate) fn sleep_precisely_on_this_thread() {
    REACTOR.with(|r| r.set(true));
    // SAFETY: prctl with PR_SET_TIMERSLACK takes an integer and touches no memory.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
}

/// Whether this thread's waits sleep on [`sleep_until`] (else they spin).
pub(crate) fn sleeps() -> bool {
    REACTOR.with(|r| r.get())
}

struct Timer(OwnedFd);

impl AsRawFd for Timer {
    fn as_raw_fd(&self) -> RawFd {
        self.0.as_raw_fd()
    }
}

/// Sleeps until `t` on a timerfd. Only where [`available`]; an error means
/// the kernel refused the timer and the caller waits another way.
pub(crate) async fn sleep_until(t: Instant) -> io::Result<()> {
    let left = t.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Ok(());
    }
    // SAFETY: plain system calls on a descriptor this function owns.
    let fd = unsafe {
        libc::timerfd_create(
            libc::CLOCK_MONOTONIC,
            libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd was just created and is owned by nothing else.
    let timer = Timer(unsafe { OwnedFd::from_raw_fd(fd) });
    let spec = libc::itimerspec {
        it_interval: timespec(Duration::ZERO),
        it_value: timespec(left),
    };
    // SAFETY: spec outlives the call; the old value is not asked for.
    if unsafe { libc::timerfd_settime(fd, 0, &spec, std::ptr::null_mut()) } < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: Timer owns the descriptor and always returns that one.
    let timer = unsafe { AsyncFd::register_with_interest(timer, Interest::READABLE) }
        .map_err(|e| e.into_parts().1)?;
    loop {
        let mut ready = timer.readable().await?;
        let mut expirations = [0u8; 8];
        // SAFETY: reads 8 bytes into a buffer of 8.
        let n = unsafe { libc::read(fd, expirations.as_mut_ptr().cast(), 8) };
        if n == 8 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::WouldBlock {
            return Err(e);
        }
        ready.clear_ready();
    }
}

fn timespec(d: Duration) -> libc::timespec {
    libc::timespec {
        tv_sec: d.as_secs() as libc::time_t,
        tv_nsec: d.subsec_nanos() as libc::c_long,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_sleep_to_their_instants_without_holding_the_thread() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let cpu = crate::run::cpu::thread_cpu_time;
        let (start, cpu0) = (Instant::now(), cpu());
        // two slots on one thread, 200 ms apart: each wakes at or after its
        // own instant, and the thread is idle while they wait
        let (a, b) = (
            start + Duration::from_millis(20),
            start + Duration::from_millis(220),
        );
        let woke = rt.block_on(async {
            let one = async {
                sleep_until(a).await.unwrap();
                Instant::now()
            };
            let two = async {
                sleep_until(b).await.unwrap();
                Instant::now()
            };
            futures_util::future::join(one, two).await
        });
        assert!(woke.0 >= a && woke.1 >= b, "{woke:?}");
        assert!(woke.0 < b, "the first slot waited for the second");
        let used = cpu() - cpu0;
        // spinning would have used the whole 220 ms
        assert!(
            used < Duration::from_millis(100),
            "spent {used:?} of CPU in 220 ms"
        );
        // an instant already past returns at once
        rt.block_on(sleep_until(start)).unwrap();
    }
}
