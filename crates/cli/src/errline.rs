//! Errors in one line: whatever a server or clap says, the user reads one
//! line of sane length that names the problem and where the fix is.
use std::ffi::OsString;

/// At most this many characters of a message (a server can answer with a
/// megabyte of text over many lines).
const MAX: usize = 500;

/// `message` as one line: whitespace runs folded, control characters shown
/// as escapes (a NUL read from a file must not reach the terminal), cut at
/// [`MAX`] characters.
pub(crate) fn error_line(message: &str) -> String {
    let one: String = message
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .flat_map(|c| match c {
            c if c.is_control() => c.escape_default().collect::<Vec<_>>(),
            // a byte-order mark or other invisible format character
            '\u{feff}' | '\u{200b}'..='\u{200f}' => c.escape_unicode().collect(),
            c => vec![c],
        })
        .collect();
    if one.chars().count() <= MAX {
        return one;
    }
    let cut: String = one.chars().take(MAX).collect();
    format!("{cut}... ({} more characters)", one.chars().count() - MAX)
}

/// A command-line error of clap's in one line: its first paragraph in
/// plainer words, its tips, and where the accepted arguments are listed.
pub(crate) fn clap_error_line(e: &clap::Error, args: &[OsString]) -> String {
    let text = e.to_string();
    let mut parts: Vec<String> = Vec::new();
    for (i, para) in text.split("\n\n").enumerate() {
        let para = para.trim();
        if i == 0 {
            let joined: Vec<&str> = para.lines().map(str::trim).collect();
            parts.push(plain(&joined.join(" ")));
        } else if para.starts_with("tip:") && !para.contains("use '-- ") {
            parts.push(para.lines().map(str::trim).collect::<Vec<_>>().join(" "));
        }
    }
    let line = parts.join("; ");
    let line = line.strip_prefix("error: ").unwrap_or(&line).to_string();
    let line = negative(e, args).unwrap_or(line);
    match subcommand(args) {
        sub if sub.is_empty() => format!("{line}; see yardstick --help"),
        sub => format!("{line}; see yardstick {sub} --help"),
    }
}

/// clap's words for a value its number parsers refused, in the user's terms.
fn plain(line: &str) -> String {
    let mut out = line
        .replace("invalid digit found in string", "not a whole number")
        .replace("number too large to fit in target type", "too large")
        .replace("invalid float literal", "not a number")
        .replace("cannot parse integer from empty string", "empty");
    // "5000 is not in 1..=100" -> "5000 is out of range: give 1 to 100"
    if let Some(at) = out.find(" is not in ") {
        let range = &out[at + " is not in ".len()..];
        if let Some((lo, hi)) = range.split_once("..=") {
            let hi: String = hi.chars().take_while(char::is_ascii_digit).collect();
            let tail = &range[lo.len() + 3 + hi.len()..];
            out = format!("{} is out of range: give {lo} to {hi}{tail}", &out[..at]);
        }
    }
    out
}

/// clap takes `--threads -1` for an unknown flag `-1`: say what it is.
fn negative(e: &clap::Error, args: &[OsString]) -> Option<String> {
    if e.kind() != clap::error::ErrorKind::UnknownArgument {
        return None;
    }
    let bad = match e.get(clap::error::ContextKind::InvalidArg)? {
        clap::error::ContextValue::String(s) => s.clone(),
        _ => return None,
    };
    let rest = bad.strip_prefix('-')?;
    if !rest.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
        return None;
    }
    // the whole argument (`-1s`, not clap's `-1`) and the flag it was given to
    let at = args
        .iter()
        .position(|a| a.to_string_lossy().starts_with(&bad))?;
    let value = args[at].to_string_lossy();
    let flag = at
        .checked_sub(1)
        .map(|i| args[i].to_string_lossy().into_owned())
        .filter(|f| f.starts_with("--"));
    Some(match flag {
        Some(flag) => {
            format!("{flag} {value}: negative values are not accepted; give a positive value")
        }
        None => format!("'{value}': negative values are not accepted; give a positive value"),
    })
}

/// The subcommand (with `tpcc`'s own) whose help lists the arguments.
fn subcommand(args: &[OsString]) -> String {
    let mut cmd = crate::list::command();
    let mut path = Vec::new();
    for a in args.iter().skip(1) {
        let a = a.to_string_lossy();
        if a.starts_with('-') {
            break;
        }
        match cmd.find_subcommand(a.as_ref()) {
            Some(sub) => {
                path.push(a.into_owned());
                cmd = sub.clone();
            }
            None => break,
        }
    }
    path.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(args: &[&str]) -> String {
        let args: Vec<OsString> = args.iter().map(OsString::from).collect();
        let e = crate::list::command()
            .try_get_matches_from(&args)
            .unwrap_err();
        clap_error_line(&e, &args)
    }

    #[test]
    fn clap_errors_are_one_line_with_the_help_to_read() {
        let e = err(&["yardstick", "run", "--threads", "lots"]);
        assert!(!e.contains('\n'), "{e}");
        assert!(e.starts_with("invalid value 'lots' for '--threads"), "{e}");
        assert!(e.contains("not a whole number"), "{e}");
        assert!(e.ends_with("see yardstick run --help"), "{e}");
        let e = err(&["yardstick", "tpcc", "run", "--db", "sqlite://x"]);
        assert!(e.contains("--warehouses"), "{e}");
        assert!(e.ends_with("see yardstick tpcc run --help"), "{e}");
        let e = err(&["yardstick", "rnu"]);
        assert!(e.contains("unrecognized subcommand 'rnu'"), "{e}");
        assert!(e.ends_with("see yardstick --help"), "{e}");
    }

    #[test]
    fn negative_values_and_ranges_are_said_plainly() {
        let e = err(&["yardstick", "run", "--threads", "-1"]);
        assert!(
            e.starts_with("--threads -1: negative values are not accepted"),
            "{e}"
        );
        let e = err(&["yardstick", "run", "--duration", "-1s"]);
        assert!(e.starts_with("--duration -1s: negative values"), "{e}");
        let e = err(&[
            "yardstick",
            "tpcc",
            "load",
            "--db",
            "x",
            "--warehouses",
            "0",
        ]);
        assert!(e.contains("0 is out of range: give 1 to 100000"), "{e}");
    }

    #[test]
    fn error_lines_are_one_short_line_without_control_characters() {
        assert_eq!(error_line("a\n  b\tc"), "a b c");
        assert_eq!(error_line("value 1\0 here"), "value 1\\u{0} here");
        assert_eq!(error_line("\u{feff}recordcount"), "\\u{feff}recordcount");
        let long = error_line(&"x".repeat(2000));
        assert!(long.ends_with("... (1500 more characters)"), "{long}");
    }
}
