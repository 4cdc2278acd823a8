//! Go's `time.ParseDuration` and `time.Duration.String()`, for the flags Argo CD declares with
//! `DurationVar` (`app sync --retry-backoff-duration`, `--retry-backoff-max-duration`). Argo
//! parses such a flag when the command line is read, rejecting `90` (no unit) and `1d` (no such
//! unit), and writes the value back in Go's canonical form: `2m` becomes `2m0s`, `90s` becomes
//! `1m30s`. Error texts are Go's (`time: invalid duration "soon"`).

use std::fmt;
use std::str::FromStr;

const NANOSECOND: u64 = 1;
const MICROSECOND: u64 = 1_000 * NANOSECOND;
const MILLISECOND: u64 = 1_000 * MICROSECOND;
const SECOND: u64 = 1_000 * MILLISECOND;
const MINUTE: u64 = 60 * SECOND;
const HOUR: u64 = 60 * MINUTE;

/// A duration as Go's `time.Duration`: signed nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct GoDuration(i64);

fn quote(s: &str) -> String {
    format!("{s:?}")
}

fn invalid(orig: &str) -> String {
    format!("time: invalid duration {}", quote(orig))
}

fn unit(u: &str) -> Option<u64> {
    Some(match u {
        "ns" => NANOSECOND,
        "us" | "µs" | "μs" => MICROSECOND,
        "ms" => MILLISECOND,
        "s" => SECOND,
        "m" => MINUTE,
        "h" => HOUR,
        _ => return None,
    })
}

// Go's `leadingInt`: the digits at the start of `s` (overflow past 1<<63 is an error).
fn leading_int(s: &str) -> Option<(u64, &str)> {
    let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let mut x: u64 = 0;
    for b in s[..end].bytes() {
        x = x
            .checked_mul(10)
            .and_then(|x| x.checked_add(u64::from(b - b'0')))
            .filter(|x| *x <= 1 << 63)?;
    }
    Some((x, &s[end..]))
}

// Go's `leadingFraction`: digits after the point, as a value and a scale; digits that would
// overflow are dropped, as Go does.
fn leading_fraction(s: &str) -> (u64, f64, &str) {
    let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (mut x, mut scale, mut overflow) = (0u64, 1.0f64, false);
    for b in s[..end].bytes() {
        if overflow {
            continue;
        }
        match x
            .checked_mul(10)
            .and_then(|y| y.checked_add(u64::from(b - b'0')))
            .filter(|y| *y <= 1 << 63)
        {
            Some(y) => {
                x = y;
                scale *= 10.0;
            }
            None => overflow = true,
        }
    }
    (x, scale, &s[end..])
}

impl FromStr for GoDuration {
    type Err = String;

    /// Go's `time.ParseDuration`: `[-+]?([0-9]*(\.[0-9]*)?[a-z]+)+`, or `0`.
    fn from_str(orig: &str) -> Result<Self, String> {
        let mut s = orig;
        let mut neg = false;
        if let Some(rest) = s.strip_prefix('-') {
            neg = true;
            s = rest;
        } else if let Some(rest) = s.strip_prefix('+') {
            s = rest;
        }
        if s == "0" {
            return Ok(Self(0));
        }
        if s.is_empty() {
            return Err(invalid(orig));
        }
        let mut d: u64 = 0;
        while !s.is_empty() {
            if !s.starts_with(|c: char| c == '.' || c.is_ascii_digit()) {
                return Err(invalid(orig));
            }
            let before = s.len();
            let (mut v, rest) = leading_int(s).ok_or_else(|| invalid(orig))?;
            s = rest;
            let pre = before != s.len();
            let (mut f, mut scale, mut post) = (0u64, 1.0f64, false);
            if let Some(rest) = s.strip_prefix('.') {
                let before = rest.len();
                let (fv, fs, rest) = leading_fraction(rest);
                (f, scale, post) = (fv, fs, before != rest.len());
                s = rest;
            }
            if !pre && !post {
                return Err(invalid(orig));
            }
            let end = s
                .find(|c: char| c == '.' || c.is_ascii_digit())
                .unwrap_or(s.len());
            if end == 0 {
                return Err(format!("time: missing unit in duration {}", quote(orig)));
            }
            let (u, rest) = s.split_at(end);
            s = rest;
            let unit = unit(u).ok_or_else(|| {
                format!(
                    "time: unknown unit {} in duration {}",
                    quote(u),
                    quote(orig)
                )
            })?;
            if v > (1 << 63) / unit {
                return Err(invalid(orig));
            }
            v *= unit;
            if f > 0 {
                // Go computes the fractional part in float64, truncating.
                v += (f as f64 * (unit as f64 / scale)) as u64;
                if v > 1 << 63 {
                    return Err(invalid(orig));
                }
            }
            d = d
                .checked_add(v)
                .filter(|d| *d <= 1 << 63)
                .ok_or_else(|| invalid(orig))?;
        }
        if neg {
            return Ok(Self((d as i64).wrapping_neg()));
        }
        i64::try_from(d).map(Self).map_err(|_| invalid(orig))
    }
}

// Go's `fmtFrac`: `.ddd` of the last `prec` digits of `v`, trailing zeros and a bare point
// dropped; returns the text and `v` with those digits removed.
fn frac(v: u64, prec: u32) -> (String, u64) {
    let mut digits = String::new();
    let mut v = v;
    let mut print = false;
    for _ in 0..prec {
        let digit = v % 10;
        print = print || digit != 0;
        if print {
            digits.insert(0, char::from(b'0' + digit as u8));
        }
        v /= 10;
    }
    if print {
        digits.insert(0, '.');
    }
    (digits, v)
}

impl fmt::Display for GoDuration {
    /// Go's `time.Duration.String()`: `1h2m3.5s`, `1m30s`, `5s`, `1.5ms`, `0s`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let neg = self.0 < 0;
        let u = self.0.unsigned_abs();
        let sign = if neg { "-" } else { "" };
        if u == 0 {
            return f.write_str("0s");
        }
        if u < SECOND {
            let (prec, unit) = if u < MICROSECOND {
                (0, "ns")
            } else if u < MILLISECOND {
                (3, "µs")
            } else {
                (6, "ms")
            };
            let (fraction, whole) = frac(u, prec);
            return write!(f, "{sign}{whole}{fraction}{unit}");
        }
        let (fraction, secs) = frac(u, 9);
        let (h, m, s) = (secs / 3600, (secs / 60) % 60, secs % 60);
        if h > 0 {
            write!(f, "{sign}{h}h{m}m{s}{fraction}s")
        } else if m > 0 {
            write!(f, "{sign}{m}m{s}{fraction}s")
        } else {
            write!(f, "{sign}{s}{fraction}s")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canon(s: &str) -> String {
        s.parse::<GoDuration>().unwrap().to_string()
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
    fn rejects_with_go_messages() {
        for (input, want) in [
            ("soon", "time: invalid duration \"soon\""),
            ("", "time: invalid duration \"\""),
            ("-", "time: invalid duration \"-\""),
            (".s", "time: invalid duration \".s\""),
            ("90", "time: missing unit in duration \"90\""),
            ("5s3", "time: missing unit in duration \"5s3\""),
            ("1d", "time: unknown unit \"d\" in duration \"1d\""),
            ("3M", "time: unknown unit \"M\" in duration \"3M\""),
            (
                "9999999999999999999h",
                "time: invalid duration \"9999999999999999999h\"",
            ),
            (
                "2562047h47m16.854775808s",
                "time: invalid duration \"2562047h47m16.854775808s\"",
            ),
        ] {
            assert_eq!(input.parse::<GoDuration>().unwrap_err(), want, "{input:?}");
        }
    }
}
