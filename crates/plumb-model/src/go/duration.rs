//! Go's `time.Duration`: `time.ParseDuration` and `Duration.String()`, error texts included.
//!
//! Argo CD reads every duration it is given with `time.ParseDuration` (sync windows, retry
//! backoff, `DurationVar` flags) and writes them back with `String()`: `2m` is stored as `2m0s`,
//! `90s` as `1m30s`. The syntax is `[-+]?([0-9]*(\.[0-9]*)?[a-z]+)+` or a bare `0`, with units
//! `ns`, `us` (`µs`, `μs`), `ms`, `s`, `m` and `h`, and values within ±2⁶³ nanoseconds (about
//! 292 years). Callers that accept more (a bare number of seconds) or less (whole numbers only)
//! say so in a wrapper of their own over [`parse`].

use std::fmt;
use std::str::FromStr;

const NANOSECOND: u64 = 1;
const MICROSECOND: u64 = 1_000 * NANOSECOND;
const MILLISECOND: u64 = 1_000 * MICROSECOND;
const SECOND: u64 = 1_000 * MILLISECOND;
const MINUTE: u64 = 60 * SECOND;
const HOUR: u64 = 60 * MINUTE;

/// The largest magnitude Go's int64 nanoseconds hold (reached only by a negative duration).
const LIMIT: u64 = 1 << 63;

/// A duration as Go's `time.Duration`: signed nanoseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GoDuration(i64);

impl GoDuration {
    /// No time at all (`0s`).
    pub const ZERO: Self = Self(0);

    /// The duration of `nanos` nanoseconds.
    pub const fn from_nanos(nanos: i64) -> Self {
        Self(nanos)
    }

    /// The duration in nanoseconds (negative for a negative duration).
    pub const fn as_nanos(self) -> i64 {
        self.0
    }

    /// The same duration as a [`std::time::Duration`]; `None` when it is negative.
    pub fn to_std(self) -> Option<std::time::Duration> {
        u64::try_from(self.0)
            .ok()
            .map(std::time::Duration::from_nanos)
    }
}

/// Why a text is not a Go duration (Go's messages, the text quoted as written).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
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

/// Parses `text` as Go's `time.ParseDuration` does.
///
/// ```
/// use plumb_model::go::duration::parse;
/// assert_eq!(parse("1h30m")?.as_nanos(), 5_400_000_000_000);
/// assert_eq!(parse("-1.5s")?.as_nanos(), -1_500_000_000);
/// assert_eq!(
///     parse("90").unwrap_err().to_string(),
///     "time: missing unit in duration \"90\""
/// );
/// # Ok::<(), plumb_model::go::duration::Error>(())
/// ```
pub fn parse(text: &str) -> Result<GoDuration, Error> {
    let (negative, mut rest) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if rest == "0" {
        return Ok(GoDuration::ZERO);
    }
    if rest.is_empty() {
        return Err(invalid(text));
    }
    let mut total: u64 = 0;
    while !rest.is_empty() {
        let (nanos, after) = element(rest, text)?;
        total = total
            .checked_add(nanos)
            .filter(|t| *t <= LIMIT)
            .ok_or_else(|| invalid(text))?;
        rest = after;
    }
    if negative {
        // `LIMIT` itself is i64::MIN's magnitude: the cast wraps to it, and negating keeps it.
        return Ok(GoDuration((total as i64).wrapping_neg()));
    }
    i64::try_from(total)
        .map(GoDuration)
        .map_err(|_| invalid(text))
}

impl FromStr for GoDuration {
    type Err = Error;

    fn from_str(text: &str) -> Result<Self, Error> {
        parse(text)
    }
}

/// Go's `Duration.String()` of a whole number of seconds, for any `i64` (wider than a
/// [`GoDuration`] holds): `9s`, `1m30s`, `2h0m5s`, `-3s`.
pub fn format_secs(seconds: i64) -> String {
    go_string(
        seconds < 0,
        u128::from(seconds.unsigned_abs()) * u128::from(SECOND),
    )
}

impl fmt::Display for GoDuration {
    /// Go's `time.Duration.String()`: `1h2m3.5s`, `1m30s`, `5s`, `1.5ms`, `0s`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&go_string(self.0 < 0, u128::from(self.0.unsigned_abs())))
    }
}

fn invalid(text: &str) -> Error {
    Error::Invalid(text.to_string())
}

fn unit_nanos(unit: &str) -> Option<u64> {
    Some(match unit {
        "ns" => NANOSECOND,
        "us" | "µs" | "μs" => MICROSECOND,
        "ms" => MILLISECOND,
        "s" => SECOND,
        "m" => MINUTE,
        "h" => HOUR,
        _ => return None,
    })
}

/// The digits after a decimal point, as Go's `leadingFraction` keeps them: a value and its scale
/// (`10^digits kept`); digits that would overflow are dropped.
struct Fraction {
    value: u64,
    scale: f64,
    /// Whether any digit followed the point (`1.s` has none, and is still valid).
    present: bool,
}

/// One `<number><unit>` element at the start of `s` (the whole duration being `text`), in
/// nanoseconds, and what follows it. Errors come in Go's order.
fn element<'a>(s: &'a str, text: &str) -> Result<(u64, &'a str), Error> {
    if !s.starts_with(|c: char| c == '.' || c.is_ascii_digit()) {
        return Err(invalid(text));
    }
    let (whole, after_int) = leading_int(s).ok_or_else(|| invalid(text))?;
    let has_int = after_int.len() != s.len();
    let (fraction, rest) = match after_int.strip_prefix('.') {
        Some(after) => leading_fraction(after),
        None => (
            Fraction {
                value: 0,
                scale: 1.0,
                present: false,
            },
            after_int,
        ),
    };
    if !has_int && !fraction.present {
        return Err(invalid(text));
    }
    let end = rest
        .find(|c: char| c == '.' || c.is_ascii_digit())
        .unwrap_or(rest.len());
    let (unit_text, rest) = rest.split_at(end);
    if unit_text.is_empty() {
        return Err(Error::MissingUnit(text.to_string()));
    }
    let unit = unit_nanos(unit_text).ok_or_else(|| Error::UnknownUnit {
        unit: unit_text.to_string(),
        text: text.to_string(),
    })?;
    let nanos = element_nanos(whole, &fraction, unit).ok_or_else(|| invalid(text))?;
    Ok((nanos, rest))
}

/// `whole.fraction` units in nanoseconds, `None` past Go's range.
fn element_nanos(whole: u64, fraction: &Fraction, unit: u64) -> Option<u64> {
    if whole > LIMIT / unit {
        return None;
    }
    let mut nanos = whole * unit;
    if fraction.value > 0 {
        // Go computes the fractional part in float64, truncating.
        nanos += (fraction.value as f64 * (unit as f64 / fraction.scale)) as u64;
        if nanos > LIMIT {
            return None;
        }
    }
    Some(nanos)
}

/// Go's `leadingInt`: the digits at the start of `s` (overflow past 1<<63 is an error).
fn leading_int(s: &str) -> Option<(u64, &str)> {
    let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let mut x: u64 = 0;
    for b in s[..end].bytes() {
        x = x
            .checked_mul(10)
            .and_then(|x| x.checked_add(u64::from(b - b'0')))
            .filter(|x| *x <= LIMIT)?;
    }
    Some((x, &s[end..]))
}

/// Go's `leadingFraction` over the digits at the start of `s`, and what follows them.
fn leading_fraction(s: &str) -> (Fraction, &str) {
    let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (mut value, mut scale) = (0u64, 1.0f64);
    for b in s[..end].bytes() {
        match value
            .checked_mul(10)
            .and_then(|v| v.checked_add(u64::from(b - b'0')))
            .filter(|v| *v <= LIMIT)
        {
            Some(v) => {
                value = v;
                scale *= 10.0;
            }
            None => break,
        }
    }
    let fraction = Fraction {
        value,
        scale,
        present: end > 0,
    };
    (fraction, &s[end..])
}

/// Go's `Duration.String()` of a duration of `nanos` nanoseconds, negative or not.
fn go_string(negative: bool, nanos: u128) -> String {
    let sign = if negative { "-" } else { "" };
    if nanos == 0 {
        return "0s".to_string();
    }
    if nanos < u128::from(SECOND) {
        let (prec, unit) = if nanos < u128::from(MICROSECOND) {
            (0, "ns")
        } else if nanos < u128::from(MILLISECOND) {
            (3, "µs")
        } else {
            (6, "ms")
        };
        let (fraction, whole) = fmt_frac(nanos, prec);
        return format!("{sign}{whole}{fraction}{unit}");
    }
    let (fraction, secs) = fmt_frac(nanos, 9);
    let (h, m, s) = (secs / 3600, (secs / 60) % 60, secs % 60);
    if h > 0 {
        format!("{sign}{h}h{m}m{s}{fraction}s")
    } else if m > 0 {
        format!("{sign}{m}m{s}{fraction}s")
    } else {
        format!("{sign}{s}{fraction}s")
    }
}

/// Go's `fmtFrac`: `.ddd` of the last `prec` digits of `v`, trailing zeros and a bare point
/// dropped; returns the text and `v` with those digits removed.
fn fmt_frac(v: u128, prec: u32) -> (String, u128) {
    let mut digits = String::new();
    let mut v = v;
    let mut print = false;
    for _ in 0..prec {
        let digit = (v % 10) as u8;
        print = print || digit != 0;
        if print {
            digits.insert(0, char::from(b'0' + digit));
        }
        v /= 10;
    }
    if print {
        digits.insert(0, '.');
    }
    (digits, v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canon(s: &str) -> String {
        s.parse::<GoDuration>().unwrap().to_string()
    }

    fn secs(text: &str) -> f64 {
        parse(text).unwrap().as_nanos() as f64 / 1e9
    }

    #[test]
    fn parses_and_prints_like_go() {
        for (input, want) in [
            ("5s", "5s"),
            ("3m0s", "3m0s"),
            ("3m", "3m0s"),
            ("2m", "2m0s"),
            ("90s", "1m30s"),
            ("1h", "1h0m0s"),
            ("1h30m", "1h30m0s"),
            ("1.5h", "1h30m0s"),
            ("500ms", "500ms"),
            ("1500ms", "1.5s"),
            ("1.5ms", "1.5ms"),
            ("2us", "2µs"),
            ("2µs", "2µs"),
            ("7ns", "7ns"),
            ("0", "0s"),
            ("0s", "0s"),
            ("+10s", "10s"),
            ("-5s", "-5s"),
            (".5s", "500ms"),
            ("1.s", "1s"),
            ("1h1m1.000000001s", "1h1m1.000000001s"),
            ("2562047h47m16.854775807s", "2562047h47m16.854775807s"),
        ] {
            assert_eq!(canon(input), want, "{input}");
        }
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
        assert_eq!(parse("1500ms").unwrap().as_nanos(), 1_500_000_000);
        assert_eq!(parse("3µs").unwrap().as_nanos(), 3_000);
        assert_eq!(parse("3μs").unwrap().as_nanos(), 3_000);
        assert_eq!(parse("3us").unwrap().as_nanos(), 3_000);
        assert_eq!(parse("7ns").unwrap().as_nanos(), 7);
        assert_eq!(parse("1.0000000001s").unwrap().as_nanos(), 1_000_000_000);
        assert_eq!(
            parse("2562047h47m16.854775807s").unwrap().as_nanos(),
            i64::MAX
        );
        assert_eq!(
            parse("-2562047h47m16.854775808s").unwrap().as_nanos(),
            i64::MIN
        );
    }

    #[test]
    fn go_error_messages() {
        let err = |t: &str| parse(t).unwrap_err().to_string();
        assert_eq!(err(""), "time: invalid duration \"\"");
        assert_eq!(err("soon"), "time: invalid duration \"soon\"");
        assert_eq!(err("1"), "time: missing unit in duration \"1\"");
        assert_eq!(err("5s3"), "time: missing unit in duration \"5s3\"");
        assert_eq!(err("1d"), "time: unknown unit \"d\" in duration \"1d\"");
        assert_eq!(err("3M"), "time: unknown unit \"M\" in duration \"3M\"");
        assert_eq!(err("h"), "time: invalid duration \"h\"");
        assert_eq!(
            err("1h 30m"),
            "time: unknown unit \"h \" in duration \"1h 30m\""
        );
        assert_eq!(err("."), "time: invalid duration \".\"");
        assert_eq!(err(".s"), "time: invalid duration \".s\"");
        assert_eq!(err("-"), "time: invalid duration \"-\"");
        assert_eq!(err("3600"), "time: missing unit in duration \"3600\"");
        assert_eq!(err("2562048h"), "time: invalid duration \"2562048h\"");
        assert_eq!(
            err("9999999999999999999h"),
            "time: invalid duration \"9999999999999999999h\""
        );
        assert_eq!(
            err("2562047h47m16.854775808s"),
            "time: invalid duration \"2562047h47m16.854775808s\""
        );
        // Go checks the number before the unit.
        assert_eq!(
            err("99999999999999999999d"),
            "time: invalid duration \"99999999999999999999d\""
        );
    }

    #[test]
    fn whole_seconds_print_like_go() {
        assert_eq!(format_secs(0), "0s");
        assert_eq!(format_secs(9), "9s");
        assert_eq!(format_secs(90), "1m30s");
        assert_eq!(format_secs(3600), "1h0m0s");
        assert_eq!(format_secs(7205), "2h0m5s");
        assert_eq!(format_secs(-3), "-3s");
        assert_eq!(format_secs(i64::MIN), "-2562047788015215h30m8s");
    }

    #[test]
    fn negative_durations_have_no_std_form() {
        assert_eq!(
            parse("1m30s").unwrap().to_std(),
            Some(std::time::Duration::from_secs(90))
        );
        assert_eq!(parse("-1s").unwrap().to_std(), None);
    }
}
