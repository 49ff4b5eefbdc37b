//! Helpers shared by the network bindings.
use yardstick_core::binding::BindingError;

/// Runs a cold-path future (opening, sizing) on its own thread and runtime, so
/// it works both from plain code and from inside another runtime.
pub fn run_cold<T: Send>(
    fut: impl std::future::Future<Output = Result<T, BindingError>> + Send,
) -> Result<T, BindingError> {
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(|e| BindingError::Io(format!("cannot start a runtime: {e}")))?
                    .block_on(fut)
            })
            .join()
            .unwrap_or_else(|_| Err(BindingError::Io("the connection thread failed".into())))
    })
}

/// A unique name per call in this process, for tests that need a fresh
/// database, keyspace or key prefix on a shared server.
pub fn unique_name(stem: &str) -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    format!(
        "{stem}_{}_{}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    )
}
