//! libpq's password file, as `psql` reads it: `PGPASSFILE` or `~/.pgpass`,
//! lines `hostname:port:database:username:password` where `*` matches
//! anything and `\:` and `\\` escape; the first matching line wins.
use std::path::PathBuf;

/// The file libpq would read.
fn path() -> Option<PathBuf> {
    std::env::var_os("PGPASSFILE")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".pgpass")))
}

/// A line's five fields, unescaped.
fn fields(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut field = String::new();
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => field.extend(chars.next()),
            ':' => out.push(std::mem::take(&mut field)),
            c => field.push(c),
        }
    }
    out.push(field);
    out
}

/// The password of the first line of `text` matching the connection.
pub(crate) fn find(text: &str, host: &str, port: u16, db: &str, user: &str) -> Option<String> {
    let port = port.to_string();
    text.lines()
        .filter(|l| !l.trim_start().starts_with('#') && !l.trim().is_empty())
        .map(fields)
        .filter(|f| f.len() == 5)
        .find(|f| {
            let ok = |field: &str, want: &str| field == "*" || field == want;
            ok(&f[0], host) && ok(&f[1], &port) && ok(&f[2], db) && ok(&f[3], user)
        })
        .map(|f| f[4].clone())
}

/// The password file's password for the connection, if it has one.
pub(crate) fn lookup(host: &str, port: u16, db: &str, user: &str) -> Option<String> {
    let text = std::fs::read_to_string(path()?).ok()?;
    find(&text, host, port, db, user)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_matching_line_wins_with_wildcards_and_escapes() {
        let text = "# comment\n\
            otherhost:5432:*:bench:nope\n\
            127.0.0.1:55432:ycsb:bench:be\\:nch\\\\pw\n\
            *:*:*:*:fallback\n";
        assert_eq!(
            find(text, "127.0.0.1", 55432, "ycsb", "bench").as_deref(),
            Some("be:nch\\pw")
        );
        assert_eq!(
            find(text, "10.0.0.1", 5432, "x", "y").as_deref(),
            Some("fallback")
        );
        assert_eq!(find("a:b:c", "a", 1, "c", "d"), None, "not five fields");
    }
}
