//! Retrying a failed sync: Argo CD's exponential backoff and its messages.

use std::time::Duration;

use plumb_model::application::RetryStrategy;

/// Argo CD's defaults: 5 s, doubled each time, at most 3 minutes.
const DEFAULT_DURATION: Duration = Duration::from_secs(5);
const DEFAULT_FACTOR: i64 = 2;
const DEFAULT_MAX: Duration = Duration::from_secs(180);

/// Parses a Go duration (`5s`, `3m0s`, `1h30m`, `250ms`) or plain seconds (`30`), as Argo CD
/// accepts in `backoff.duration` (`strconv.Atoi`, then `time.ParseDuration`). Surrounding blanks
/// are ignored, and a negative duration is none: a wait cannot be negative.
pub fn parse_duration(text: &str) -> Option<Duration> {
    let text = text.trim();
    if let Ok(secs) = text.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    plumb_model::go::duration::parse(text).ok()?.to_std()
}

/// How many retries a strategy allows: `None` for unlimited (a negative limit).
pub fn limit(strategy: &RetryStrategy) -> Option<u64> {
    let l = strategy.limit.unwrap_or(0);
    u64::try_from(l).ok()
}

/// The wait before retry number `retry_count + 1`: `duration * factor^retry_count`, capped at
/// `maxDuration` (Argo CD's `RetryStrategy.NextRetryAt`).
pub fn backoff(strategy: &RetryStrategy, retry_count: u32) -> Duration {
    let b = strategy.backoff.as_ref();
    let base = b
        .and_then(|b| b.duration.as_deref())
        .and_then(parse_duration)
        .unwrap_or(DEFAULT_DURATION);
    let factor = b.and_then(|b| b.factor).unwrap_or(DEFAULT_FACTOR).max(1);
    let max = b
        .and_then(|b| b.max_duration.as_deref())
        .and_then(parse_duration)
        .unwrap_or(DEFAULT_MAX);
    let mut wait = base;
    for _ in 0..retry_count {
        wait = wait.saturating_mul(u32::try_from(factor).unwrap_or(u32::MAX));
        if wait >= max {
            break;
        }
    }
    wait.min(max)
}

/// Argo CD's message while waiting to retry: `<message>. Retrying attempt #<n> at 3:04PM.`
pub fn retrying_message(message: &str, attempt: u64, at: &jiff::Zoned) -> String {
    format!(
        "{}. Retrying attempt #{attempt} at {}.",
        message.trim_end_matches('.'),
        at.strftime("%-I:%M%p")
    )
}

/// Argo CD's final message after retries: `<message> (retried <n> times).`
pub fn retried_message(message: &str, retries: u64) -> String {
    format!(
        "{} (retried {retries} times).",
        message.trim_end_matches('.')
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use plumb_model::application::Backoff;

    #[test]
    fn go_durations_and_plain_seconds() {
        assert_eq!(parse_duration("5s"), Some(Duration::from_secs(5)));
        assert_eq!(parse_duration("3m0s"), Some(Duration::from_secs(180)));
        assert_eq!(parse_duration("1h30m"), Some(Duration::from_secs(5400)));
        assert_eq!(parse_duration("250ms"), Some(Duration::from_millis(250)));
        assert_eq!(parse_duration("30"), Some(Duration::from_secs(30)));
        assert_eq!(parse_duration("1.5m"), Some(Duration::from_secs(90)));
        assert_eq!(parse_duration("1m30s"), Some(Duration::from_secs(90)));
        assert_eq!(parse_duration("soon"), None);
        // Values past Duration's range are refused, not a panic.
        assert_eq!(parse_duration("99999999999999999999999h"), None);
        assert_eq!(parse_duration("18446744073709551615s1s"), None);
        assert_eq!(parse_duration("5x"), None);
    }

    #[test]
    fn backoff_grows_by_factor_and_stops_at_the_cap() {
        let s = RetryStrategy {
            limit: Some(5),
            backoff: Some(Backoff {
                duration: Some("2s".into()),
                factor: Some(3),
                max_duration: Some("20s".into()),
            }),
            ..RetryStrategy::default()
        };
        let waits: Vec<u64> = (0..4).map(|n| backoff(&s, n).as_secs()).collect();
        assert_eq!(waits, [2, 6, 18, 20]);
        let defaults = RetryStrategy::default();
        assert_eq!(backoff(&defaults, 0), Duration::from_secs(5));
        assert_eq!(backoff(&defaults, 10), Duration::from_secs(180));
        assert_eq!(
            limit(&RetryStrategy {
                limit: Some(-1),
                ..RetryStrategy::default()
            }),
            None
        );
    }

    #[test]
    fn argo_messages() {
        let at: jiff::Zoned = "2026-11-30T15:04:05+00:00[UTC]".parse().unwrap();
        assert_eq!(
            retrying_message("one or more objects failed to apply", 2, &at),
            "one or more objects failed to apply. Retrying attempt #2 at 3:04PM."
        );
        assert_eq!(
            retried_message("one or more objects failed to apply", 3),
            "one or more objects failed to apply (retried 3 times)."
        );
    }
}
