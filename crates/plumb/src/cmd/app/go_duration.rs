//! The flags Argo CD declares with `DurationVar` (`app sync --retry-backoff-duration`,
//! `--retry-backoff-max-duration`): Go's `time.ParseDuration` when the command line is read,
//! rejecting `90` (no unit) and `1d` (no such unit), and the value written back in Go's canonical
//! form (`2m` becomes `2m0s`, `90s` becomes `1m30s`), both from [`plumb_model::go::duration`].

use std::fmt;
use std::str::FromStr;

use plumb_model::go::duration::{self as go, Error};

/// A duration as Go's `time.Duration`, read from a flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct GoDuration(go::GoDuration);

impl FromStr for GoDuration {
    type Err = String;

    /// Go's `time.ParseDuration`: `[-+]?([0-9]*(\.[0-9]*)?[a-z]+)+`, or `0`.
    fn from_str(text: &str) -> Result<Self, String> {
        go::parse(text).map(Self).map_err(|e| flag_message(&e))
    }
}

impl fmt::Display for GoDuration {
    /// Go's `time.Duration.String()`: `1h2m3.5s`, `1m30s`, `5s`, `1.5ms`, `0s`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// Go's message with the text quoted by Rust's escaping, as the CLI has always printed a flag's
/// error (the shared error quotes the text as written, as sync-window errors always have).
fn flag_message(err: &Error) -> String {
    match err {
        Error::Invalid(text) => format!("time: invalid duration {text:?}"),
        Error::MissingUnit(text) => format!("time: missing unit in duration {text:?}"),
        Error::UnknownUnit { unit, text } => {
            format!("time: unknown unit {unit:?} in duration {text:?}")
        }
        other => other.to_string(),
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
            ("3m", "3m0s"),
            ("90s", "1m30s"),
            ("1.5h", "1h30m0s"),
            ("1500ms", "1.5s"),
            ("2us", "2µs"),
            ("0", "0s"),
            ("-5s", "-5s"),
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
            // Rust's escaping, not the text as written.
            (
                "1\"d",
                "time: unknown unit \"\\\"d\" in duration \"1\\\"d\"",
            ),
        ] {
            assert_eq!(input.parse::<GoDuration>().unwrap_err(), want, "{input:?}");
        }
    }
}
