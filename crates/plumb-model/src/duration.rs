//! Durations in Plumb's own settings keys (`plumb.render.timeout`, `plumb.health.
//! missingStatusGracePeriod`): Go's unit syntax with whole numbers (`90s`, `1m30s`, `500ms`,
//! `1h`), or a bare number of seconds. Argo's own keys take all of Go's syntax
//! ([`crate::go::duration`]).

use std::time::Duration;

use crate::go::duration as go;

/// The duration `text` spells, or None when it is not one (empty, a unit Go does not know here,
/// a number without a unit after another part, an overflow).
pub fn parse_duration(text: &str) -> Option<Duration> {
    let text = text.trim();
    if let Ok(seconds) = text.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    // Plumb's keys were documented with whole numbers and the units ms, s, m and h only: no
    // sign, fraction, `ns` or `us`, which Go would also read. The range is Go's (up to
    // 2562047h).
    if !text
        .bytes()
        .all(|b| b.is_ascii_digit() || b"msh".contains(&b))
    {
        return None;
    }
    go::parse(text).ok()?.to_std()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_units_and_bare_seconds() {
        assert_eq!(parse_duration("90"), Some(Duration::from_secs(90)));
        assert_eq!(parse_duration(" 1m30s "), Some(Duration::from_secs(90)));
        assert_eq!(parse_duration("1h30m"), Some(Duration::from_secs(5400)));
        assert_eq!(parse_duration("500ms"), Some(Duration::from_millis(500)));
        assert_eq!(parse_duration("0s"), Some(Duration::ZERO));
        for bad in [
            "",
            "m",
            "2x",
            "-1s",
            "1.5m",
            "s2",
            "90 s",
            "99999999999999999999h",
        ] {
            assert_eq!(parse_duration(bad), None, "{bad:?}");
        }
    }
}
