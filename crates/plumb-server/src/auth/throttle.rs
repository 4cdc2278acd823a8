//! Failed-login counting as Argo CD's session manager does it: per user name, at most
//! `ARGOCD_SESSION_FAILURE_MAX_FAIL_COUNT` (5) failures within
//! `ARGOCD_SESSION_FAILURE_WINDOW_SECONDS` (300) before every further attempt is refused
//! (correct password or not), the table bounded by `ARGOCD_SESSION_MAX_CACHE_SIZE` (10000)
//! with `admin` never evicted to make room.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::accounts::ADMIN;

/// The limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThrottleConfig {
    /// Failures after which logins are refused.
    pub max_failures: u32,
    /// How long failures count (0: forever).
    pub window: Duration,
    /// User names remembered at most.
    pub max_entries: usize,
}

impl Default for ThrottleConfig {
    fn default() -> Self {
        Self {
            max_failures: 5,
            window: Duration::from_secs(300),
            max_entries: 10_000,
        }
    }
}

impl ThrottleConfig {
    /// Argo's environment variables; unparsable or out-of-range values keep the default.
    pub fn from_env() -> Self {
        let num = |name: &str, min: u64| {
            std::env::var(name)
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok())
                .filter(|v| *v >= min && *v <= i32::MAX as u64)
        };
        let d = Self::default();
        Self {
            max_failures: num("ARGOCD_SESSION_FAILURE_MAX_FAIL_COUNT", 1)
                .map_or(d.max_failures, |v| v as u32),
            window: num("ARGOCD_SESSION_FAILURE_WINDOW_SECONDS", 0)
                .map_or(d.window, Duration::from_secs),
            max_entries: num("ARGOCD_SESSION_MAX_CACHE_SIZE", 1)
                .map_or(d.max_entries, |v| v as usize),
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Attempts {
    last_failed: Instant,
    count: u32,
}

/// The failure table.
#[derive(Debug, Default)]
pub(crate) struct Throttle {
    config: ThrottleConfig,
    failures: Mutex<HashMap<String, Attempts>>,
}

impl Throttle {
    pub(crate) fn new(config: ThrottleConfig) -> Self {
        Self {
            config,
            failures: Mutex::new(HashMap::new()),
        }
    }

    fn in_window(&self, a: &Attempts, now: Instant) -> bool {
        self.config.window.is_zero() || now.duration_since(a.last_failed) <= self.config.window
    }

    /// Whether `user` had too many failures recently.
    pub(crate) fn exceeded(&self, user: &str) -> bool {
        let now = Instant::now();
        let failures = self.failures.lock().unwrap_or_else(|p| p.into_inner());
        failures
            .get(user)
            .is_some_and(|a| a.count >= self.config.max_failures && self.in_window(a, now))
    }

    /// Counts a failure (`failed`) or forgets the user (a success).
    pub(crate) fn record(&self, user: &str, failed: bool) {
        let now = Instant::now();
        let mut failures = self.failures.lock().unwrap_or_else(|p| p.into_inner());
        if !self.config.window.is_zero() {
            let window = self.config.window;
            failures.retain(|_, a| now.duration_since(a.last_failed) <= window);
        }
        if !failed {
            failures.remove(user);
            return;
        }
        if failures.len() >= self.config.max_entries && !failures.contains_key(user) {
            // Evict someone else than admin and this user: flooding the table with made-up
            // names must not reset admin's count.
            let victim = failures
                .keys()
                .find(|k| k.as_str() != ADMIN && k.as_str() != user)
                .cloned();
            if let Some(v) = victim {
                failures.remove(&v);
            }
        }
        let entry = failures.entry(user.to_string()).or_insert(Attempts {
            last_failed: now,
            count: 0,
        });
        entry.count = entry.count.saturating_add(1);
        entry.last_failed = now;
        tracing::warn!(user, failures = entry.count, "failed login");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locks_after_max_failures_and_a_success_resets() {
        let t = Throttle::new(ThrottleConfig {
            max_failures: 3,
            window: Duration::from_secs(300),
            max_entries: 100,
        });
        for _ in 0..2 {
            t.record("alice", true);
        }
        assert!(!t.exceeded("alice"));
        t.record("alice", false);
        assert!(!t.exceeded("alice"));
        for _ in 0..3 {
            t.record("alice", true);
        }
        assert!(t.exceeded("alice"));
        assert!(!t.exceeded("bob"));
    }

    #[test]
    fn flooding_made_up_names_does_not_evict_admin() {
        let t = Throttle::new(ThrottleConfig {
            max_failures: 2,
            window: Duration::from_secs(300),
            max_entries: 3,
        });
        t.record(ADMIN, true);
        t.record(ADMIN, true);
        for i in 0..50 {
            t.record(&format!("user{i}"), true);
        }
        assert!(t.exceeded(ADMIN));
    }
}
