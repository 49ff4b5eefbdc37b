//! Durations as yardstick reads them everywhere: command-line flags, URL
//! options and yardstick's own properties all go through [`parse_duration`],
//! so `30s` means the same in each. A bare number is refused rather than given
//! a unit: the command line used to read `2` as seconds and URL options as
//! microseconds, and a reader cannot tell which a script meant. (YCSB's own
//! properties, such as `maxexecutiontime` in seconds, keep YCSB's units.)
use std::time::Duration;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DurationError {
    #[error("'{0}' has no unit: write for example {0}s, {0}ms or {0}us")]
    NoUnit(String),
    #[error("'{0}' is not a duration: write for example 30s, 250ms, 5m or 1.5h")]
    NotADuration(String),
    #[error("'{0}' has an unknown unit: use ns, us, ms, s, m, h or d")]
    UnknownUnit(String),
    #[error("'{0}' is too long to be a duration")]
    TooLong(String),
}

/// The longest measured phase accepted (`--duration`, `maxexecutiontime`):
/// 31 days; longer is a typo (`1e9s`) or a wait nobody watches.
pub const MAX_RUN_TIME: Duration = Duration::from_secs(31 * 86_400);

/// `500ns`, `200us` (or `µs`), `1.5ms`, `30s`, `5m` (or `min`), `1.5h`, `2d`.
pub fn parse_duration(text: &str) -> Result<Duration, DurationError> {
    let s = text.trim();
    // the unit is the trailing run of letters, so `1e3ms` keeps its exponent
    let split = s
        .char_indices()
        .rev()
        .take_while(|&(_, c)| c.is_ascii_alphabetic() || c == 'µ')
        .last()
        .map_or(s.len(), |(i, _)| i);
    let (number, unit) = s.split_at(split);
    let v: f64 = number
        .trim()
        .parse()
        .ok()
        .filter(|v: &f64| v.is_finite() && *v >= 0.0)
        .ok_or_else(|| DurationError::NotADuration(s.to_string()))?;
    let seconds = match unit {
        "" => return Err(DurationError::NoUnit(number.trim().to_string())),
        "ns" => v / 1e9,
        "us" | "µs" => v / 1e6,
        "ms" => v / 1e3,
        "s" => v,
        "m" | "min" => v * 60.0,
        "h" => v * 3600.0,
        "d" => v * 86_400.0,
        _ => return Err(DurationError::UnknownUnit(s.to_string())),
    };
    Duration::try_from_secs_f64(seconds).map_err(|_| DurationError::TooLong(s.to_string()))
}

/// A record count that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CountError {
    #[error("'{0}' is not a record count: use for example 100k, 1M or 250000")]
    NotACount(String),
    #[error("'{0}' is not a record count: give at least 1")]
    OutOfRange(String),
}

/// `1M`, `100k`, `2.5M`, `1G` or `1B` (10^9), or a plain count; at least 1.
pub fn parse_count(text: &str) -> Result<u64, CountError> {
    let t = text.trim();
    let bad = || CountError::NotACount(text.to_string());
    let (num, mult) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let m = match c.to_ascii_lowercase() {
                'k' => 1e3,
                'm' => 1e6,
                'g' | 'b' => 1e9,
                _ => return Err(bad()),
            };
            (&t[..i], m)
        }
        _ => (t, 1.0),
    };
    let v: f64 = num.trim().parse().map_err(|_| bad())?;
    let n = (v * mult).round();
    if !(1.0..1e15).contains(&n) {
        return Err(CountError::OutOfRange(text.to_string()));
    }
    Ok(n as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_parse_with_suffixes() {
        assert_eq!(parse_count("1M"), Ok(1_000_000));
        assert_eq!(parse_count("100k"), Ok(100_000));
        assert_eq!(parse_count("2.5m"), Ok(2_500_000));
        assert_eq!(parse_count("450000"), Ok(450_000));
        assert_eq!(parse_count("2B"), Ok(2_000_000_000));
        assert_eq!(parse_count("0"), Err(CountError::OutOfRange("0".into())));
        assert!(parse_count("NaN").is_err());
        assert!(parse_count("lots").is_err());
        assert!(parse_count("3x").is_err());
    }

    #[test]
    fn every_unit_reads_the_same_everywhere() {
        assert_eq!(parse_duration("500ns"), Ok(Duration::from_nanos(500)));
        assert_eq!(parse_duration("200us"), Ok(Duration::from_micros(200)));
        assert_eq!(parse_duration("200µs"), Ok(Duration::from_micros(200)));
        assert_eq!(parse_duration("1.5ms"), Ok(Duration::from_micros(1500)));
        assert_eq!(parse_duration(" 30s "), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("5m"), Ok(Duration::from_secs(300)));
        assert_eq!(parse_duration("2min"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("1.5h"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration("0s"), Ok(Duration::ZERO));
        assert_eq!(parse_duration("1.5e3ms"), Ok(Duration::from_millis(1500)));
    }

    #[test]
    fn bare_numbers_negative_huge_and_unknown_units_are_refused_with_the_fix() {
        let e = parse_duration("50").unwrap_err();
        assert_eq!(e, DurationError::NoUnit("50".into()));
        assert_eq!(
            e.to_string(),
            "'50' has no unit: write for example 50s, 50ms or 50us"
        );
        assert!(matches!(
            parse_duration("-1ms"),
            Err(DurationError::NotADuration(_))
        ));
        assert!(matches!(
            parse_duration("soon"),
            Err(DurationError::NotADuration(_))
        ));
        assert!(matches!(
            parse_duration("3 fortnights"),
            Err(DurationError::UnknownUnit(_))
        ));
        // the overflow that panicked in Duration::from_secs_f64
        assert_eq!(
            parse_duration("1e300s"),
            Err(DurationError::TooLong("1e300s".into()))
        );
        assert!(matches!(
            parse_duration("NaNs"),
            Err(DurationError::NotADuration(_))
        ));
    }
}
