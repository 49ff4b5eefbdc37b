//! SIGINT, SIGTERM and SIGHUP. The first asks the run to stop: it ends at
//! once, writes its partial result (`complete: false`, the signal named) and
//! exits with 128 + the signal's number. A second one exits without waiting,
//! removing the result file being written. A child working on the run's
//! behalf (a memory-capped phase, a suite's phase) runs in a process group of
//! its own, so a terminal's Ctrl-C reaches it once, through this process,
//! which passes every signal on.
use crate::CliError;
use std::sync::atomic::Ordering;
use std::sync::OnceLock;
use yardstick_core::run::Control;

const SIGNALS: [i32; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// The process's control, its signal handling installed on first use.
pub(crate) fn control() -> Result<Control, CliError> {
    static CONTROL: OnceLock<Result<Control, String>> = OnceLock::new();
    CONTROL
        .get_or_init(|| {
            let control = Control::default();
            let mut signals = signal_hook::iterator::Signals::new(SIGNALS)
                .map_err(|e| format!("cannot handle signals: {e}"))?;
            let c = control.clone();
            std::thread::Builder::new()
                .name("yardstick-signals".into())
                .spawn(move || {
                    for sig in signals.forever() {
                        on_signal(&c, sig);
                    }
                })
                .map_err(|e| format!("cannot start the signal thread: {e}"))?;
            Ok(control)
        })
        .clone()
        .map_err(CliError::failed)
}

fn on_signal(c: &Control, sig: i32) {
    let child = c.child.load(Ordering::SeqCst);
    if child > 0 {
        // SAFETY: kill(2) has no memory-safety preconditions; the pid is our
        // own child's, registered while it runs.
        unsafe { libc::kill(child, sig) };
    }
    let name = yardstick_core::run::signal_name(sig);
    if c.stop_for(sig) {
        eprintln!("\nyardstick: {name}: stopping; writing the partial result (the same signal again exits at once)");
    } else if child == 0 {
        eprintln!("\nyardstick: {name} again: exiting without waiting");
        yardstick_core::result::write::remove_pending();
        std::process::exit(128 + sig);
    }
    // with a child, the child exits and this process ends when it has
}
