//! Number formatting shared by the text outputs.

/// `1234567` -> `1,234,567`
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A latency in nanoseconds as a short human string: `812ns`, `12.3µs`, `4.56ms`, `1.20s`.
pub fn latency(ns: f64) -> String {
    if ns < 1_000.0 {
        format!("{ns:.0}ns")
    } else if ns < 1_000_000.0 {
        format!("{:.1}µs", ns / 1e3)
    } else if ns < 1_000_000_000.0 {
        format!("{:.2}ms", ns / 1e6)
    } else {
        format!("{:.2}s", ns / 1e9)
    }
}

/// Operations per second, rounded for reading.
pub fn rate(ops: f64) -> String {
    if ops >= 100.0 {
        thousands(ops.round() as u64)
    } else {
        format!("{ops:.1}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_numbers_for_people() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(1234567), "1,234,567");
        assert_eq!(thousands(123), "123");
        assert_eq!(latency(812.0), "812ns");
        assert_eq!(latency(12_345.0), "12.3µs");
        assert_eq!(latency(4_560_000.0), "4.56ms");
        assert_eq!(latency(1_200_000_000.0), "1.20s");
        assert_eq!(rate(12345.4), "12,345");
        assert_eq!(rate(2.25), "2.2");
    }
}
