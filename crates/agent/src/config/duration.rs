//! Durations as Antrea's configuration writes them (Go's `time.Duration` text): one or more
//! whole numbers each followed by a unit, `h`, `m`, `s` or `ms`, such as `90s`, `5m` or
//! `1m30s`; `0` alone is zero.

use std::time::Duration;

/// What a duration value may be, for error messages.
pub const DURATION_FORMAT: &str = "a duration such as 90s, 5m or 1m30s (units h, m, s, ms)";

/// Parses `text`; `None` when it is not a duration or does not fit.
pub fn parse_duration(text: &str) -> Option<Duration> {
    let text = text.trim();
    if text == "0" {
        return Some(Duration::ZERO);
    }
    let mut rest = text;
    let mut total = Duration::ZERO;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        if digits == 0 {
            return None;
        }
        let number: u64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let (unit, len) = [("ms", 2), ("h", 1), ("m", 1), ("s", 1)]
            .into_iter()
            .find(|(unit, _)| rest.starts_with(unit))?;
        rest = &rest[len..];
        let part = match unit {
            "ms" => Duration::from_millis(number),
            "s" => Duration::from_secs(number),
            "m" => Duration::from_secs(number.checked_mul(60)?),
            _ => Duration::from_secs(number.checked_mul(3600)?),
        };
        total = total.checked_add(part)?;
    }
    (!text.is_empty()).then_some(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_go_durations() {
        assert_eq!(parse_duration("90s"), Some(Duration::from_secs(90)));
        assert_eq!(parse_duration("5m"), Some(Duration::from_secs(300)));
        assert_eq!(parse_duration("1h1m30s"), Some(Duration::from_secs(3690)));
        assert_eq!(parse_duration("250ms"), Some(Duration::from_millis(250)));
        assert_eq!(parse_duration("0"), Some(Duration::ZERO));
        for bad in [
            "",
            "5",
            "m",
            "5x",
            "1.5s",
            "-5s",
            "5s5",
            "99999999999999999999h",
        ] {
            assert_eq!(parse_duration(bad), None, "{bad:?}");
        }
    }
}
