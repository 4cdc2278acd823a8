//! The sync-policy flags `app create` and `app set` share: `--sync-policy` and the retry
//! strategy `--sync-retry-*` builds.

use clap::ValueEnum;
use plumb_model::application::{Backoff, RetryStrategy};

/// `--sync-policy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SyncPolicyFlag {
    /// Manual sync.
    #[value(alias = "manual")]
    None,
    /// Automated sync.
    #[value(alias = "auto", alias = "automatic")]
    Automated,
}

/// The retry strategy of `--sync-retry-limit` (above 0) with its backoff flags.
pub fn retry_strategy(
    limit: i64,
    duration: &str,
    factor: i64,
    max_duration: &str,
) -> RetryStrategy {
    RetryStrategy {
        limit: Some(limit),
        backoff: Some(Backoff {
            duration: Some(duration.to_string()),
            factor: Some(factor),
            max_duration: Some(max_duration.to_string()),
        }),
        refresh: None,
    }
}
