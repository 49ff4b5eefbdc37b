//! Passwords and tokens never reach output, logs or result files: URLs are
//! stored with their secrets replaced, and every message that may echo a
//! secret goes through a `Redactor` that knows the run's secrets. The
//! process's own secrets (from its arguments, `--password-file` and the
//! password variables) are [`register`]ed once and masked by every
//! `Redactor` and by [`redact`], even in a URL too malformed to parse.

const MASK: &str = "***";

/// Query parameters whose values are secrets.
const SECRET_PARAMS: &[&str] = &[
    "password",
    "passwd",
    "pwd",
    "pass",
    "token",
    "secret",
    "auth",
    "authtoken",
    "apikey",
    "api_key",
    "sslpassword",
    "access_token",
];

fn is_secret_param(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    SECRET_PARAMS.contains(&n.as_str())
}

/// The secrets in `text`: a URL's password (`scheme://user:pass@host`, found
/// even when the rest of the URL is malformed: everything from `://` to the
/// last `@` before the path), and the values of secret parameters, in a
/// query (`?password=...&`) or a libpq key=value string (`password=... `,
/// quoted or not).
pub(crate) fn url_secrets(url: &str) -> Vec<String> {
    let mut out = Vec::new();
    if let Some((_, rest)) = url.split_once("://") {
        let authority_end = rest.find(['/', '?', '#', ' ']).unwrap_or(rest.len());
        let authority = &rest[..authority_end];
        if let Some((userinfo, _)) = authority.rsplit_once('@') {
            if let Some((_, pass)) = userinfo.split_once(':') {
                if !pass.is_empty() {
                    out.push(pass.to_string());
                }
            }
        }
    }
    let query = url.split_once('?').map_or("", |(_, q)| q);
    for pair in query.split(['&', ';']) {
        if let Some((k, v)) = pair.split_once('=') {
            if is_secret_param(k) && !v.is_empty() {
                out.push(v.to_string());
            }
        }
    }
    out.extend(keyword_secrets(url));
    out
}

/// Secret values of `key=value` words (libpq's connection strings):
/// `password=secret` or `password='a secret'`.
fn keyword_secrets(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(eq) = rest.find('=') {
        let key_start = rest[..eq]
            .rfind(|c: char| c.is_whitespace() || c == '?' || c == '&' || c == ';')
            .map_or(0, |i| i + 1);
        let key = rest[key_start..eq].trim();
        let after = &rest[eq + 1..];
        let (value, used) = match after.strip_prefix('\'') {
            Some(q) => {
                let end = q.find('\'').unwrap_or(q.len());
                (&q[..end], end + 2)
            }
            None => {
                let end = after
                    .find(|c: char| c.is_whitespace() || c == '&' || c == ';')
                    .unwrap_or(after.len());
                (&after[..end], end)
            }
        };
        if is_secret_param(key) && !value.is_empty() {
            out.push(value.to_string());
        }
        rest = &after[used.min(after.len())..];
    }
    out
}

/// The process's own secrets, masked by every redaction.
static GLOBAL: std::sync::RwLock<Vec<String>> = std::sync::RwLock::new(Vec::new());

/// Adds a secret of this process (a password given by file or variable) to
/// every redaction from now on.
pub fn register(secret: &str) {
    let secret = secret.trim_end_matches(['\n', '\r']);
    if secret.is_empty() {
        return;
    }
    if let Ok(mut g) = GLOBAL.write() {
        if !g.iter().any(|s| s == secret) {
            g.push(secret.to_string());
            // longest first, so a secret containing another is masked whole
            g.sort_by_key(|s| std::cmp::Reverse(s.len()));
        }
    }
}

/// Registers the secrets of `text` (an argument that may hold a URL or a
/// connection string), percent-decoded too.
pub fn register_in(text: &str) {
    for s in url_secrets(text) {
        register(&percent_decode(&s));
        register(&s);
    }
}

/// `text` with the process's registered secrets masked.
pub fn redact(text: &str) -> String {
    Redactor::default().redact(text)
}

/// The URL with its password and secret query values replaced by `***`.
pub fn redact_url(url: &str) -> String {
    let mut r = Redactor::default();
    r.add_url(url);
    r.redact(url)
}

/// Replaces every known secret in text.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    secrets: Vec<String>,
}

impl Redactor {
    pub fn add_url(&mut self, url: &str) {
        for s in url_secrets(url) {
            self.add(&s);
            // drivers may echo the percent-decoded form
            let decoded = percent_decode(&s);
            if decoded != s {
                self.add(&decoded);
            }
        }
    }

    pub fn add(&mut self, secret: &str) {
        if !secret.is_empty() && !self.secrets.iter().any(|s| s == secret) {
            self.secrets.push(secret.to_string());
            // longest first, so a secret containing another is masked whole
            self.secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        }
    }

    pub fn redact(&self, text: &str) -> String {
        let mut out = text.to_string();
        for s in &self.secrets {
            out = out.replace(s.as_str(), MASK);
        }
        if let Ok(g) = GLOBAL.read() {
            for s in g.iter() {
                out = out.replace(s.as_str(), MASK);
            }
        }
        out
    }
}

/// `s` with its `%XX` escapes decoded (as URLs carry passwords).
pub fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let Ok(v) = u8::from_str_radix(&s[i + 1..i + 3], 16) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_and_tokens_are_masked() {
        assert_eq!(
            redact_url(
                "postgres://bench:s3cr%40t@127.0.0.1:5432/db?sslmode=disable&password=other"
            ),
            "postgres://bench:***@127.0.0.1:5432/db?sslmode=disable&password=***"
        );
        assert_eq!(
            redact_url("redis://:tok@host:6379"),
            "redis://:***@host:6379"
        );
        assert_eq!(redact_url("sqlite:///tmp/a.db"), "sqlite:///tmp/a.db");
        assert_eq!(redact_url("null://?latency=200us"), "null://?latency=200us");
        let mut r = Redactor::default();
        r.add_url("postgres://u:s3cr%40t@h/db");
        assert_eq!(
            r.redact("auth failed for s3cr@t and s3cr%40t"),
            "auth failed for *** and ***"
        );
    }

    #[test]
    fn malformed_urls_and_connection_strings_lose_their_passwords() {
        // a port that is not a number: the URL does not parse, its password is found
        assert_eq!(
            redact_url("postgres://u:hunter2@db:54x/ycsb"),
            "postgres://u:***@db:54x/ycsb"
        );
        assert_eq!(
            redact_url("host=db user=u password=hunter2 dbname=x"),
            "host=db user=u password=*** dbname=x"
        );
        assert_eq!(
            redact_url("host=db password='two words' port=5432"),
            "host=db password='***' port=5432"
        );
        assert_eq!(redact_url("mysql://u:p@@h/db"), "mysql://u:***@h/db");
    }

    #[test]
    fn registered_secrets_are_masked_everywhere() {
        register("regist3red-secret\n");
        register_in("redis://:another%2Fone@h");
        assert_eq!(
            redact("a regist3red-secret, another/one and another%2Fone"),
            "a ***, *** and ***"
        );
        assert_eq!(Redactor::default().redact("regist3red-secret"), "***");
    }
}
