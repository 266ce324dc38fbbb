//! The AGE cell: how long ago a timestamp was, in the short human form kubectl prints
//! (`45s`, `3m12s`, `5h`, `2d3h`, `3y`).

use k8s_openapi::jiff::Timestamp;

/// The age of `created` (RFC 3339) at `now` (seconds since the Unix epoch); `<unknown>` when
/// there is no valid timestamp.
pub fn since(created: Option<&str>, now: i64) -> String {
    let Some(created) = created.and_then(|c| c.parse::<Timestamp>().ok()) else {
        return "<unknown>".to_owned();
    };
    let seconds = now - created.as_second();
    human(seconds)
}

/// `seconds` in the short form: the coarser the longer it is.
fn human(seconds: i64) -> String {
    if seconds < -1 {
        return "<invalid>".to_owned();
    }
    let seconds = seconds.max(0);
    let (minutes, hours) = (seconds / 60, seconds / 3600);
    let days = hours / 24;
    let with_rest = |big: i64, unit: &str, small: i64, small_unit: &str| {
        if small == 0 {
            format!("{big}{unit}")
        } else {
            format!("{big}{unit}{small}{small_unit}")
        }
    };
    if seconds < 120 {
        format!("{seconds}s")
    } else if minutes < 10 {
        with_rest(minutes, "m", seconds % 60, "s")
    } else if minutes < 180 {
        format!("{minutes}m")
    } else if hours < 8 {
        with_rest(hours, "h", minutes % 60, "m")
    } else if hours < 48 {
        format!("{hours}h")
    } else if hours < 24 * 8 {
        with_rest(days, "d", hours % 24, "h")
    } else if days < 365 * 2 {
        format!("{days}d")
    } else if days < 365 * 8 {
        with_rest(days / 365, "y", days % 365, "d")
    } else {
        format!("{}y", days / 365)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_range_has_its_form() {
        let cases = [
            (-5, "<invalid>"),
            (-1, "0s"),
            (45, "45s"),
            (119, "119s"),
            (192, "3m12s"),
            (300, "5m"),
            (3000, "50m"),
            (4 * 3600 + 60, "4h1m"),
            (10 * 3600, "10h"),
            (3 * 86400 + 7200, "3d2h"),
            (30 * 86400, "30d"),
            (3 * 365 * 86400 + 86400, "3y1d"),
            (9 * 365 * 86400, "9y"),
        ];
        for (seconds, want) in cases {
            assert_eq!(human(seconds), want, "{seconds}s");
        }
    }

    #[test]
    fn a_missing_or_bad_timestamp_is_unknown() {
        let created: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
        let later = created.as_second() + 90;
        assert_eq!(since(None, later), "<unknown>");
        assert_eq!(since(Some("yesterday"), later), "<unknown>");
        assert_eq!(since(Some("2026-01-01T00:00:00Z"), later), "90s");
        assert_eq!(since(Some(&created.to_string()), created.as_second()), "0s");
    }
}
