//! Errors from databases, said in one line that keeps the cause.
//!
//! A server's error carries its own code ([`ServerError`]: SQLSTATE, MySQL
//! error number, Redis error prefix, gRPC status, MongoDB code), so a reader
//! can look it up; any other error is said with its whole chain of causes
//! ([`chain`]), because drivers often print only the outer layer ("db
//! error", "invalid configuration"). Both are [`shorten`]ed: a server can
//! answer with a megabyte of text, and an error line is read by people.
use std::borrow::Cow;
use std::fmt;

/// The longest error text kept, in characters; the rest is counted, not shown.
pub(crate) const MAX_ERROR_CHARS: usize = 300;

/// An error a database server reported, in its own terms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerError {
    /// Whose code it is: "SQLSTATE", "MySQL error", "Redis", "gRPC status", ...
    pub system: &'static str,
    pub code: String,
    pub message: String,
}

impl ServerError {
    pub fn new(system: &'static str, code: impl fmt::Display, message: impl fmt::Display) -> Self {
        ServerError {
            system,
            code: code.to_string(),
            message: message.to_string(),
        }
    }
}

impl fmt::Display for ServerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({} {})",
            shorten(self.message.trim()),
            self.system,
            self.code
        )
    }
}

impl std::error::Error for ServerError {}

/// `e` and its causes, outermost first, joined by ": ", leaving out a cause
/// whose text the previous one already contains and a part said twice in a
/// row (drivers repeat their outer layer: "Input/output error: Input/output
/// error").
pub fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let text = c.to_string();
        if !text.is_empty() && !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        cause = c.source();
    }
    let mut parts: Vec<&str> = Vec::new();
    for p in out.split(": ") {
        if parts.last() != Some(&p) {
            parts.push(p);
        }
    }
    shorten(&parts.join(": ")).into_owned()
}

/// `s` on one line and at most [`MAX_ERROR_CHARS`] characters, with how
/// much was left out.
pub(crate) fn shorten(s: &str) -> Cow<'_, str> {
    let one_line = !s.contains(['\n', '\r']);
    let count = s.chars().count();
    if one_line && count <= MAX_ERROR_CHARS {
        return Cow::Borrowed(s);
    }
    let flat: String = s
        .split(['\n', '\r'])
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" / ");
    let count = flat.chars().count();
    if count <= MAX_ERROR_CHARS {
        return Cow::Owned(flat);
    }
    let kept: String = flat.chars().take(MAX_ERROR_CHARS).collect();
    Cow::Owned(format!(
        "{kept}... ({} more characters)",
        count - MAX_ERROR_CHARS
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Layer(&'static str, Option<Box<Layer>>);
    impl fmt::Display for Layer {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(self.0)
        }
    }
    impl std::error::Error for Layer {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            self.1.as_deref().map(|l| l as _)
        }
    }

    #[test]
    fn a_chain_says_every_cause_once() {
        let e = Layer(
            "db error",
            Some(Box::new(Layer(
                "ERROR: relation \"t\" does not exist",
                Some(Box::new(Layer("relation \"t\" does not exist", None))),
            ))),
        );
        assert_eq!(chain(&e), "db error: ERROR: relation \"t\" does not exist");
        let io = Layer(
            "Input/output error: Input/output error",
            Some(Box::new(Layer("Connection refused (os error 111)", None))),
        );
        assert_eq!(
            chain(&io),
            "Input/output error: Connection refused (os error 111)"
        );
    }

    #[test]
    fn server_errors_name_their_code() {
        let e = ServerError::new("SQLSTATE", "42P01", "relation \"t\" does not exist\n");
        assert_eq!(
            e.to_string(),
            "relation \"t\" does not exist (SQLSTATE 42P01)"
        );
    }

    #[test]
    fn long_and_multi_line_text_is_cut_to_one_short_line() {
        let huge = "x".repeat(1 << 20);
        let s = shorten(&huge);
        assert!(s.chars().count() < MAX_ERROR_CHARS + 40, "{}", s.len());
        assert!(s.ends_with(&format!(
            "({} more characters)",
            (1 << 20) - MAX_ERROR_CHARS
        )));
        assert_eq!(shorten("a\n  b\r\n\nc"), "a / b / c");
        assert!(matches!(shorten("short"), Cow::Borrowed("short")));
    }
}
