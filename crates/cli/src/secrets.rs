//! The secrets a process is given, masked in everything it prints and
//! writes: its arguments' passwords, the password variables, and
//! `--password-file`, whose password becomes YARDSTICK_PASSWORD for the
//! bindings and the child processes of suites.
use crate::CliError;
use std::ffi::OsString;

/// The variables passwords come from, masked in every output.
const PASSWORD_VARIABLES: &[&str] = &[
    yardstick_bindings::url::PASSWORD_ENV,
    "PGPASSWORD",
    "MYSQL_PWD",
    "REDISCLI_AUTH",
    "ETCDCTL_PASSWORD",
];

/// Masks every secret this process was given (arguments, password
/// variables) in all it prints and writes.
pub(crate) fn register_secrets(args: &[OsString]) {
    use yardstick_core::result::redact;
    for a in args {
        redact::register_in(&a.to_string_lossy());
    }
    for v in PASSWORD_VARIABLES {
        if let Ok(p) = std::env::var(v) {
            redact::register(&p);
        }
    }
}

/// `--password-file`: its first line becomes YARDSTICK_PASSWORD, for the
/// bindings and for the phases a suite runs as child processes.
pub(crate) fn read_password_file(path: &std::path::Path) -> Result<(), CliError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        CliError::bad_input(format!(
            "cannot read --password-file {}: {e}; give a readable file holding the password",
            path.display()
        ))
    })?;
    let password = text.lines().next().unwrap_or("").trim_end_matches('\r');
    if password.is_empty() {
        return Err(CliError::bad_input(format!(
            "--password-file {} is empty: put the password on its first line",
            path.display()
        )));
    }
    yardstick_core::result::redact::register(password);
    // before any thread starts: nothing reads the environment concurrently
    std::env::set_var(yardstick_bindings::url::PASSWORD_ENV, password);
    Ok(())
}
