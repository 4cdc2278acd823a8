//! Times and durations printed the way Argo CD's Go CLI prints them.
//!
//! - `metav1.Time` through `%s` is Go's `time.Time.String()` in the local zone:
//!   `2026-07-20 10:15:32 +0000 UTC`; a nil `*metav1.Time` prints `<nil>`.
//! - Progress rows use `2006-01-02T15:04:05-07:00` (`2026-07-20T10:15:32+00:00`).
//! - Durations are Go's `time.Duration.String()` of whole seconds (`9s`, `1m30s`, `2h0m5s`).

use jiff::Timestamp;
use jiff::tz::TimeZone;

/// What Go prints for a nil `*metav1.Time`.
pub const NIL: &str = "<nil>";

/// Parses an RFC 3339 time as the API server writes it.
pub fn parse(rfc3339: &str) -> Option<Timestamp> {
    rfc3339.parse().ok()
}

/// Go's `time.Time.String()` of an API time in `tz`; unparseable input is printed as it came.
pub fn go_time(rfc3339: Option<&str>, tz: &TimeZone) -> String {
    let Some(text) = rfc3339 else {
        return NIL.to_string();
    };
    match parse(text) {
        Some(ts) => {
            let zoned = ts.to_zoned(tz.clone());
            let mut out = zoned.strftime("%Y-%m-%d %H:%M:%S").to_string();
            let nanos = ts.subsec_nanosecond();
            if nanos > 0 {
                let frac = format!("{nanos:09}");
                out.push('.');
                out.push_str(frac.trim_end_matches('0'));
            }
            out.push(' ');
            out.push_str(&zoned.strftime("%z %Z").to_string());
            out
        }
        None => text.to_string(),
    }
}

/// A progress-row timestamp (`2006-01-02T15:04:05-07:00`).
pub fn row_timestamp(ts: Timestamp, tz: &TimeZone) -> String {
    ts.to_zoned(tz.clone())
        .strftime("%Y-%m-%dT%H:%M:%S%:z")
        .to_string()
}

/// Go's `time.Duration.String()` for a whole number of seconds.
pub fn go_duration(seconds: i64) -> String {
    plumb_model::go::duration::format_secs(seconds)
}

/// Whole seconds from `start` to `end` (Argo: `FinishedAt.Unix() - StartedAt.Unix()`).
pub fn seconds_between(start: Timestamp, end: Timestamp) -> i64 {
    end.as_second() - start.as_second()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_time_string_in_utc_and_offsets() {
        let utc = TimeZone::UTC;
        assert_eq!(
            go_time(Some("2026-07-20T10:15:32Z"), &utc),
            "2026-07-20 10:15:32 +0000 UTC"
        );
        assert_eq!(go_time(None, &utc), "<nil>");
        assert_eq!(go_time(Some("yesterday"), &utc), "yesterday");
        let paris = TimeZone::get("Europe/Paris").unwrap();
        assert_eq!(
            go_time(Some("2026-07-20T10:15:32Z"), &paris),
            "2026-07-20 12:15:32 +0200 CEST"
        );
        assert_eq!(
            go_time(Some("2026-07-20T10:15:32.250Z"), &utc),
            "2026-07-20 10:15:32.25 +0000 UTC"
        );
    }

    #[test]
    fn row_timestamps_carry_the_offset() {
        let ts: Timestamp = "2026-07-20T10:15:32Z".parse().unwrap();
        assert_eq!(
            row_timestamp(ts, &TimeZone::UTC),
            "2026-07-20T10:15:32+00:00"
        );
        let ny = TimeZone::get("America/New_York").unwrap();
        assert_eq!(row_timestamp(ts, &ny), "2026-07-20T06:15:32-04:00");
    }

    #[test]
    fn durations_like_go() {
        assert_eq!(go_duration(0), "0s");
        assert_eq!(go_duration(9), "9s");
        assert_eq!(go_duration(90), "1m30s");
        assert_eq!(go_duration(3600), "1h0m0s");
        assert_eq!(go_duration(7205), "2h0m5s");
        assert_eq!(go_duration(-3), "-3s");
    }
}
