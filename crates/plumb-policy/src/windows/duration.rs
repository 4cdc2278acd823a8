//! Window durations as Go's `time.ParseDuration` reads them (Argo parses `duration` with it):
//! a sequence of decimal numbers with optional fraction and a unit each (`1h30m`, `1.5h`, `90s`,
//! `300ms`), units `ns`, `us`/`µs`/`μs`, `ms`, `s`, `m`, `h`, an optional sign, and a bare `0`.
//! Errors carry Go's messages.

use jiff::SignedDuration;

/// Why a duration cannot be parsed (Go's messages).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DurationError {
    /// Not a duration at all, or out of range.
    #[error("time: invalid duration \"{0}\"")]
    Invalid(String),
    /// A number without a unit.
    #[error("time: missing unit in duration \"{0}\"")]
    MissingUnit(String),
    /// A unit Go does not know.
    #[error("time: unknown unit \"{unit}\" in duration \"{text}\"")]
    UnknownUnit {
        /// The unit.
        unit: String,
        /// The whole duration.
        text: String,
    },
}

fn unit_nanos(unit: &str) -> Option<u128> {
    Some(match unit {
        "ns" => 1,
        "us" | "µs" | "μs" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "m" => 60 * 1_000_000_000,
        "h" => 3_600 * 1_000_000_000,
        _ => return None,
    })
}

fn leading_digits(s: &str) -> (&str, &str) {
    let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    s.split_at(end)
}

/// Parses a duration like Go's `time.ParseDuration`.
pub fn parse(text: &str) -> Result<SignedDuration, DurationError> {
    let invalid = || DurationError::Invalid(text.to_string());
    let (negative, mut s) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if s == "0" {
        return Ok(SignedDuration::ZERO);
    }
    if s.is_empty() {
        return Err(invalid());
    }
    // Go keeps nanoseconds in an int64; past that the duration is invalid.
    let limit = i64::MAX as u128 + u128::from(negative);
    let mut total: u128 = 0;
    while !s.is_empty() {
        if !s.starts_with(|c: char| c == '.' || c.is_ascii_digit()) {
            return Err(invalid());
        }
        let (int, rest) = leading_digits(s);
        let (frac, rest) = match rest.strip_prefix('.') {
            Some(after) => leading_digits(after),
            None => ("", rest),
        };
        if int.is_empty() && frac.is_empty() {
            return Err(invalid());
        }
        let unit_end = rest
            .find(|c: char| c == '.' || c.is_ascii_digit())
            .unwrap_or(rest.len());
        let (unit, rest) = rest.split_at(unit_end);
        if unit.is_empty() {
            return Err(DurationError::MissingUnit(text.to_string()));
        }
        let scale = unit_nanos(unit).ok_or_else(|| DurationError::UnknownUnit {
            unit: unit.to_string(),
            text: text.to_string(),
        })?;
        let whole: u128 = if int.is_empty() {
            0
        } else {
            int.parse().map_err(|_| invalid())?
        };
        let mut nanos = whole.checked_mul(scale).ok_or_else(invalid)?;
        // The fraction is cut to nanoseconds, as Go does (`1.0000000001s` is one second).
        let mut place = scale;
        for digit in frac.bytes() {
            place /= 10;
            if place == 0 {
                break;
            }
            nanos += u128::from(digit - b'0') * place;
        }
        total = total.checked_add(nanos).ok_or_else(invalid)?;
        if total > limit {
            return Err(invalid());
        }
        s = rest;
    }
    let signed = if negative {
        -(total as i128)
    } else {
        total as i128
    };
    i64::try_from(signed)
        .map(SignedDuration::from_nanos)
        .map_err(|_| invalid())
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
