//! Target URLs: `scheme://[user[:password]@]host[:port][/path][?k=v&...]`.
//! Each binding declares the query options it accepts; anything else is an
//! error naming the accepted ones.
use std::collections::BTreeMap;
use std::time::Duration;
use yardstick_core::binding::BindingError;

#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    /// The URL as given: drivers that parse URLs themselves get it whole.
    pub url: String,
    pub scheme: String,
    /// Everything between `://` and `?`.
    pub rest: String,
    pub params: BTreeMap<String, String>,
}

impl Target {
    pub fn parse(url: &str) -> Result<Target, BindingError> {
        let (scheme, after) = url.split_once("://").ok_or_else(|| {
            BindingError::Config(format!("'{}' is not a URL: expected scheme://..., for example sqlite:///tmp/bench.db or null://", yardstick_core::result::redact_url(url)))
        })?;
        let (rest, query) = match after.split_once('?') {
            Some((r, q)) => (r, q),
            None => (after, ""),
        };
        let mut params = BTreeMap::new();
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            if params
                .insert(k.to_ascii_lowercase(), v.to_string())
                .is_some()
            {
                return Err(BindingError::Config(format!(
                    "option '{k}' is given twice in the URL: keep one"
                )));
            }
        }
        Ok(Target {
            url: url.to_string(),
            scheme: scheme.to_ascii_lowercase(),
            rest: rest.to_string(),
            params,
        })
    }

    /// Rejects query options not in `accepted`.
    pub(crate) fn allow_only(&self, accepted: &[&str]) -> Result<(), BindingError> {
        for k in self.params.keys() {
            if !accepted.contains(&k.as_str()) {
                return Err(BindingError::Config(format!(
                    "unknown option '{k}' in the {} URL; accepted options: {}",
                    self.scheme,
                    if accepted.is_empty() {
                        "none".to_string()
                    } else {
                        accepted.join(", ")
                    }
                )));
            }
        }
        // the options every network binding shares are checked here, before
        // a binding reads (or a driver silently ignores) them
        if accepted.contains(&"tls_insecure") {
            self.flag("tls_insecure")?;
        }
        if accepted.contains(&"timeout") {
            self.op_timeout()?;
            self.connect_timeout()?;
        }
        Ok(())
    }

    /// Option `name` as `true` or `false`; `None` when absent.
    pub(crate) fn flag(&self, name: &str) -> Result<Option<bool>, BindingError> {
        match self.param(name) {
            None => Ok(None),
            Some(v) if v.eq_ignore_ascii_case("true") => Ok(Some(true)),
            Some(v) if v.eq_ignore_ascii_case("false") => Ok(Some(false)),
            Some(v) => Err(BindingError::Config(format!(
                "URL option {name}={v} is not true or false"
            ))),
        }
    }

    pub(crate) fn param(&self, name: &str) -> Option<&str> {
        self.params.get(name).map(String::as_str)
    }

    /// The password in the URL's user information (`user:password@`), percent-decoded.
    pub(crate) fn url_password(&self) -> Option<String> {
        let authority = self.rest.split(['/', '?']).next().unwrap_or("");
        let (userinfo, _) = authority.rsplit_once('@')?;
        let (_, pass) = userinfo.split_once(':')?;
        (!pass.is_empty()).then(|| yardstick_core::result::redact::percent_decode(pass))
    }

    /// The password to log in with when the URL has none: `YARDSTICK_PASSWORD`
    /// (which `--password-file` sets), else the first set of the database's
    /// own variables `env` (`PGPASSWORD`, `MYSQL_PWD`, ...). Passwords given
    /// this way stay out of the command line, where `ps` shows it.
    pub(crate) fn password_from_env(&self, env: &[&str]) -> Option<String> {
        if self.url_password().is_some() {
            return None;
        }
        std::iter::once(PASSWORD_ENV)
            .chain(env.iter().copied())
            .find_map(|v| std::env::var(v).ok().filter(|p| !p.is_empty()))
    }

    /// This target with [`Target::password_from_env`]'s password put in the
    /// URL's user information when the URL has none (`user@host` ->
    /// `user:PASSWORD@host`; without a user, `:PASSWORD@host` when
    /// `without_user`), for drivers that read passwords from URLs. The
    /// password stays out of every output: the command line registers it
    /// with the redaction of everything it prints and writes.
    pub(crate) fn with_password(&self, env: &[&str], without_user: bool) -> Target {
        let Some(pw) = self.password_from_env(env) else {
            return self.clone();
        };
        let encoded: String = pw
            .bytes()
            .map(|b| {
                if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                    (b as char).to_string()
                } else {
                    format!("%{b:02X}")
                }
            })
            .collect();
        let authority_end = self.rest.find(['/', '?']).unwrap_or(self.rest.len());
        let (authority, path) = self.rest.split_at(authority_end);
        let rest = match authority.rsplit_once('@') {
            Some((user, host)) => {
                let user = user.split(':').next().unwrap_or(user);
                format!("{user}:{encoded}@{host}{path}")
            }
            None if without_user => format!(":{encoded}@{authority}{path}"),
            None => return self.clone(),
        };
        let query = self
            .url
            .split_once('?')
            .map_or(String::new(), |(_, q)| format!("?{q}"));
        let url = format!("{}://{rest}{query}", self.scheme);
        Target {
            url,
            rest,
            ..self.clone()
        }
    }

    /// `timeout`: how long one call of a network binding may take before it
    /// counts as `timeout` (default [`DEFAULT_TIMEOUT`]).
    pub(crate) fn op_timeout(&self) -> Result<Duration, BindingError> {
        self.positive("timeout", DEFAULT_TIMEOUT)
    }

    /// `connect_timeout`: how long opening a connection may take (default
    /// [`DEFAULT_CONNECT_TIMEOUT`]).
    pub(crate) fn connect_timeout(&self) -> Result<Duration, BindingError> {
        self.positive("connect_timeout", DEFAULT_CONNECT_TIMEOUT)
    }

    /// The limit on opening a binding (a connection and its setup
    /// statements): the connect timeout and twice the call timeout.
    pub(crate) fn setup_limit(&self) -> Result<Duration, BindingError> {
        Ok(self
            .connect_timeout()?
            .saturating_add(self.op_timeout()?.saturating_mul(2)))
    }

    /// The limit on a sizing call on a connection of its own (before and
    /// after a run): the connect timeout and the call timeout.
    pub(crate) fn side_limit(&self) -> Result<Duration, BindingError> {
        Ok(self.connect_timeout()?.saturating_add(self.op_timeout()?))
    }

    fn positive(&self, name: &str, default: Duration) -> Result<Duration, BindingError> {
        let d = self.duration_or(name, default)?;
        if d.is_zero() {
            return Err(BindingError::Config(format!(
                "URL option {name}={}: a time limit of zero fails every call; give a positive duration such as {}s",
                self.param(name).unwrap_or(""),
                default.as_secs()
            )));
        }
        Ok(d)
    }

    /// Option `name` as a duration (`5s`, `250ms`, ...), `default_secs` when absent.
    pub fn duration(&self, name: &str, default_secs: u64) -> Result<Duration, BindingError> {
        self.duration_or(name, Duration::from_secs(default_secs))
    }

    /// Option `name` as a duration ([`yardstick_core::units`]), `default` when absent.
    pub(crate) fn duration_or(
        &self,
        name: &str,
        default: Duration,
    ) -> Result<Duration, BindingError> {
        match self.param(name) {
            None => Ok(default),
            Some(v) => yardstick_core::units::parse_duration(v)
                .map_err(|e| BindingError::Config(format!("URL option {name}={v}: {e}"))),
        }
    }
}

/// `host[:port]` with `default_port` when it names none; a port that is
/// not one (0, above 65535, not a number) is refused, naming `scheme`.
pub(crate) fn host_port(
    text: &str,
    default_port: u16,
    scheme: &str,
) -> Result<String, BindingError> {
    // an IPv6 address is bracketed: [::1] or [::1]:9042
    let port_at = match text.rfind(']') {
        Some(end) => text[end..].find(':').map(|i| end + i),
        None => text.rfind(':'),
    };
    let Some(at) = port_at else {
        return Ok(format!("{text}:{default_port}"));
    };
    match text[at + 1..].parse::<u16>() {
        Ok(p) if p > 0 && at > 0 => Ok(text.to_string()),
        _ => Err(BindingError::Config(format!(
            "{text} in the {scheme} URL is not host:port: give a port from 1 to 65535, as in 127.0.0.1:{default_port}"
        ))),
    }
}

/// The network bindings' limit on one call (URL option `timeout`).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// The network bindings' limit on opening a connection (`connect_timeout`).
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The variable any binding takes its password from (`--password-file` sets it).
pub const PASSWORD_ENV: &str = "YARDSTICK_PASSWORD";

/// `64MiB`, `512KiB`, `1G`, `1000000` (bytes).
pub fn parse_bytes(s: &str) -> Option<u64> {
    let s = s.trim();
    let i = s.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(s.len());
    let v: f64 = s[..i]
        .trim()
        .parse()
        .ok()
        .filter(|v: &f64| v.is_finite() && *v >= 0.0)?;
    let mult = match s[i..].to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kb" | "kib" => 1024.0,
        "m" | "mb" | "mib" => 1024.0 * 1024.0,
        "g" | "gb" | "gib" => 1024.0 * 1024.0 * 1024.0,
        "t" | "tb" | "tib" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    };
    // beyond 16 EiB saturates: the callers' own bounds refuse it by name
    Some(v * mult).filter(|b| b.is_finite()).map(|b| b as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_urls_and_options() {
        let t = Target::parse("SQLITE:///tmp/x.db?journal_mode=wal&cache_size=64MiB").unwrap();
        assert_eq!(t.scheme, "sqlite");
        assert_eq!(t.rest, "/tmp/x.db");
        assert_eq!(t.param("cache_size"), Some("64MiB"));
        assert!(t.allow_only(&["journal_mode", "cache_size"]).is_ok());
        let e = t.allow_only(&["journal_mode"]).unwrap_err().to_string();
        assert!(
            e.contains("unknown option 'cache_size'") && e.contains("journal_mode"),
            "{e}"
        );
        assert!(Target::parse("no-scheme").is_err());
        let t = Target::parse("postgres://u:p%40ss@h:5432/db").unwrap();
        assert_eq!(t.url_password().as_deref(), Some("p@ss"));
        assert_eq!(t.password_from_env(&["PATH"]), None, "the URL's wins");
        let t = Target::parse("postgres://u@h/db").unwrap();
        assert_eq!(t.url_password(), None);
        assert_eq!(t.password_from_env(&["NO_SUCH_VARIABLE_HERE"]), None);
        assert_eq!(
            t.password_from_env(&["NO_SUCH_VARIABLE_HERE", "HOME"]),
            std::env::var("HOME").ok()
        );
        // the variable's value goes into the URL, percent-encoded
        let home = std::env::var("HOME").unwrap();
        let enc: String = home.replace('/', "%2F");
        let w = t.with_password(&["HOME"], false);
        assert_eq!(w.url, format!("postgres://u:{enc}@h/db"));
        assert_eq!(w.url_password().as_deref(), Some(home.as_str()));
        let r = Target::parse("redis://h:6379/0?pipeline=4").unwrap();
        assert_eq!(
            r.with_password(&["HOME"], false).url,
            r.url,
            "no user: unchanged"
        );
        let w = r.with_password(&["HOME"], true);
        assert_eq!(w.url, format!("redis://:{enc}@h:6379/0?pipeline=4"));
        assert_eq!(w.param("pipeline"), Some("4"));
        let t = Target::parse("null://").unwrap();
        assert_eq!((t.rest.as_str(), t.params.len()), ("", 0));
    }

    #[test]
    fn parses_durations_and_sizes() {
        let t = Target::parse("null://?latency=200us&bare=50&fast=fast").unwrap();
        assert_eq!(
            t.duration("latency", 0).unwrap(),
            Duration::from_micros(200)
        );
        assert_eq!(t.duration("absent", 2).unwrap(), Duration::from_secs(2));
        let e = t.duration("bare", 0).unwrap_err().to_string();
        assert!(e.contains("URL option bare=50: '50' has no unit"), "{e}");
        let e = t.duration("fast", 0).unwrap_err().to_string();
        assert!(e.contains("'fast' is not a duration"), "{e}");
        assert_eq!(parse_bytes("64MiB"), Some(64 << 20));
        assert_eq!(parse_bytes("1g"), Some(1 << 30));
        assert_eq!(parse_bytes("lots"), None);
    }
}
