//! Window durations as Go's `time.ParseDuration` reads them (Argo parses `duration` with it):
//! a sequence of decimal numbers with optional fraction and a unit each (`1h30m`, `1.5h`, `90s`,
//! `300ms`), units `ns`, `us`/`µs`/`μs`, `ms`, `s`, `m`, `h`, an optional sign, and a bare `0`.
//! Errors carry Go's messages.

use jiff::SignedDuration;

pub use plumb_model::go::duration::Error as DurationError;

/// Parses a duration like Go's `time.ParseDuration`, as the signed duration window arithmetic
/// uses.
pub fn parse(text: &str) -> Result<SignedDuration, DurationError> {
    plumb_model::go::duration::parse(text).map(|d| SignedDuration::from_nanos(d.as_nanos()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(text: &str) -> f64 {
        parse(text).unwrap().as_secs_f64()
    }

    #[test]
    fn go_duration_syntax() {
        assert_eq!(secs("1h"), 3600.0);
        assert_eq!(secs("30m"), 1800.0);
        assert_eq!(secs("1h30m"), 5400.0);
        assert_eq!(secs("90s"), 90.0);
        assert_eq!(secs("1.5h"), 5400.0);
        assert_eq!(secs(".5m"), 30.0);
        assert_eq!(secs("2h45m30.5s"), 9930.5);
        assert_eq!(secs("0"), 0.0);
        assert_eq!(secs("-1h"), -3600.0);
        assert_eq!(secs("+10m"), 600.0);
        assert_eq!(parse("1500ms").unwrap(), SignedDuration::from_millis(1500));
        assert_eq!(parse("3µs").unwrap(), SignedDuration::from_micros(3));
        assert_eq!(parse("3us").unwrap(), SignedDuration::from_micros(3));
        assert_eq!(parse("7ns").unwrap(), SignedDuration::from_nanos(7));
        assert_eq!(
            parse("2562047h47m16.854775807s").unwrap(),
            SignedDuration::from_nanos(i64::MAX)
        );
    }

    #[test]
    fn go_error_messages() {
        let err = |t: &str| parse(t).unwrap_err().to_string();
        assert_eq!(err(""), "time: invalid duration \"\"");
        assert_eq!(err("1"), "time: missing unit in duration \"1\"");
        assert_eq!(err("1d"), "time: unknown unit \"d\" in duration \"1d\"");
        assert_eq!(err("h"), "time: invalid duration \"h\"");
        assert_eq!(
            err("1h 30m"),
            "time: unknown unit \"h \" in duration \"1h 30m\""
        );
        assert_eq!(err("."), "time: invalid duration \".\"");
        assert_eq!(err("-"), "time: invalid duration \"-\"");
        assert_eq!(err("3600"), "time: missing unit in duration \"3600\"");
        assert_eq!(err("2562048h"), "time: invalid duration \"2562048h\"");
    }
}
