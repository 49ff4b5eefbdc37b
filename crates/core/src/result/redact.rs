//! Passwords and tokens never reach output, logs or result files: URLs are
//! stored with their secrets replaced, and every message that may echo a
//! secret goes through a `Redactor` that knows the run's secrets.

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

/// Splits `scheme://user:pass@host/...` into its secrets (password and secret
/// query values).
pub(crate) fn url_secrets(url: &str) -> Vec<String> {
    let mut out = Vec::new();
    if let Some((_, rest)) = url.split_once("://") {
        let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let authority = &rest[..authority_end];
        if let Some((userinfo, _)) = authority.rsplit_once('@') {
            if let Some((_, pass)) = userinfo.split_once(':') {
                if !pass.is_empty() {
                    out.push(pass.to_string());
                }
            }
        }
    }
    if let Some((_, query)) = url.split_once('?') {
        for pair in query.split(['&', ';']) {
            if let Some((k, v)) = pair.split_once('=') {
                if is_secret_param(k) && !v.is_empty() {
                    out.push(v.to_string());
                }
            }
        }
    }
    out
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
        out
    }
}

fn percent_decode(s: &str) -> String {
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
}
