//! The conformance suite every binding must pass: CRUD, missing keys, duplicate
//! inserts under each semantics, update vs upsert, scan order and length, large
//! and empty values, `dataintegrity` verification, and values handed over
//! owed (made where the binding sends them).
//!
//! A binding's tests invoke [`conformance_suite!`](crate::conformance_suite)
//! with a function that opens a fresh, empty database for the given options;
//! the macro expands to one `#[test]` per check.
use crate::binding::{
    Batch, Binding, BindingError, Fields, InsertMode, OpenOptions, Record, ScanRows, Schema,
    Session, Status, UpdateMode, WriteSet,
};
use crate::workload::{CoreConfig, Properties, SharedState, Stream};

pub type CheckResult = Result<(), String>;

/// Names of the checks, in the order the macro runs them.
pub const CHECKS: &[&str] = &[
    "crud",
    "missing_keys",
    "insert_semantics",
    "update_semantics",
    "scan",
    "large_and_empty_values",
    "data_integrity",
    "owed_values",
    "batch_insert",
    "clear",
];

/// The checks of a binding that cannot scan: `scan` is replaced by `scans_refused`.
pub const CHECKS_WITHOUT_SCAN: &[&str] = &[
    "crud",
    "missing_keys",
    "insert_semantics",
    "update_semantics",
    "scans_refused",
    "large_and_empty_values",
    "data_integrity",
    "owed_values",
    "batch_insert",
    "clear_refused",
];

fn schema(fields: usize) -> Schema {
    Schema {
        table: "usertable".into(),
        fields: (0..fields).map(|i| format!("field{i}")).collect(),
    }
}

/// The options the checks open a binding with (a three-field schema).
pub fn options(insert_mode: InsertMode, update_mode: UpdateMode) -> OpenOptions {
    OpenOptions {
        schema: schema(3),
        insert_mode,
        update_mode,
        create: true,
        sessions: 1,
        data_integrity: true,
        scans: false,
    }
}

fn values(pairs: &[(usize, &[u8])]) -> WriteSet {
    let mut ws = WriteSet::default();
    for (f, v) in pairs {
        ws.push(*f).extend_from_slice(v);
    }
    ws
}

macro_rules! ensure {
    ($cond:expr, $($msg:tt)*) => {
        if !$cond {
            return Err(format!($($msg)*));
        }
    };
}

// after `ensure!`, which the checks use (macros are in scope from their definition on)
mod checks;
use checks::*;

fn expect_status(what: &str, got: Status, want: Status) -> CheckResult {
    ensure!(
        got == want,
        "{what}: expected status {:?}, got {:?}",
        want,
        got
    );
    Ok(())
}

async fn session<B: Binding>(
    open: &dyn Fn(&OpenOptions) -> Result<B, BindingError>,
    opts: &OpenOptions,
) -> Result<(B, B::Session), String> {
    let b = open(opts).map_err(|e| format!("open: {e}"))?;
    let s = b.session().await.map_err(|e| format!("session: {e}"))?;
    Ok((b, s))
}

async fn read_all<S: Session>(s: &mut S, key: &[u8]) -> (Status, Record) {
    let mut rec = Record::with_fields(3);
    let out = s.read(key, Fields::All, &mut rec).await;
    (out.status(), rec)
}

/// Runs one named check on a fresh single-threaded runtime.
pub fn run_check<B: Binding>(
    name: &str,
    open: &dyn Fn(&OpenOptions) -> Result<B, BindingError>,
) -> CheckResult {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    rt.block_on(async {
        match name {
            "crud" => crud(open).await,
            "missing_keys" => missing_keys(open).await,
            "insert_semantics" => insert_semantics(open).await,
            "update_semantics" => update_semantics(open).await,
            "scan" => scan(open).await,
            "scans_refused" => scans_refused(open),
            "batch_insert" => batch_insert(open).await,
            "large_and_empty_values" => large_and_empty_values(open).await,
            "data_integrity" => data_integrity(open).await,
            "owed_values" => owed_values(open).await,
            "clear" => clear(open).await,
            "clear_refused" => clear_refused(open).await,
            other => Err(format!("no conformance check named {other}")),
        }
    })
}

/// Expands to one `#[test]` per conformance check. `$open` is a function
/// `fn(&OpenOptions) -> Result<B, BindingError>` returning a fresh, empty database.
#[macro_export]
macro_rules! conformance_suite {
    ($open:expr) => {
        $crate::conformance_suite!($open, || true);
    };
    // `$available`: `fn() -> bool`, false to skip (a server binding outside CI
    // whose server is not running; it must panic in CI instead).
    ($open:expr, $available:expr) => {
        $crate::conformance_suite!(@tests $open, $available; crud missing_keys insert_semantics update_semantics scan large_and_empty_values data_integrity owed_values batch_insert clear);
    };
    // A binding without scans (a key-value cache): it must refuse scan workloads at open.
    ($open:expr, $available:expr, without_scan) => {
        $crate::conformance_suite!(@tests $open, $available; crud missing_keys insert_semantics update_semantics scans_refused large_and_empty_values data_integrity owed_values batch_insert clear_refused);
    };
    (@tests $open:expr, $available:expr; $($check:ident)*) => {
        $(
            #[test]
            fn $check() {
                if !($available)() {
                    return;
                }
                if let Err(e) = $crate::conformance::run_check(stringify!($check), &$open) {
                    panic!("conformance check {} failed: {}", stringify!($check), e);
                }
            }
        )*
    };
}
