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
    /// Failures within the window.
    count: u32,
    /// Attempts admitted and not settled yet: they count against the limit as if they had
    /// failed, so parallel guesses cannot all pass the check before any is recorded
    /// (GHSA-4439-h7jw-5cjj).
    in_flight: u32,
}

/// How an admitted attempt ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Wrong password or unknown user: counted.
    Failed,
    /// The right password: the user's failures are forgotten (Argo's reset on success).
    Succeeded,
    /// Neither (the password was right but the account may not log in, or the server could
    /// not read the accounts): nothing counted.
    Neutral,
}

/// The failure table.
#[derive(Debug, Default)]
pub(crate) struct Throttle {
    config: ThrottleConfig,
    failures: Mutex<HashMap<String, Attempts>>,
}

/// An attempt admitted by [`Throttle::begin`]. It holds a slot until settled; one dropped
/// unsettled (the request was cancelled while the password was being checked) counts as a
/// failure, so cancelling cannot be used to guess for free.
#[derive(Debug)]
pub(crate) struct Attempt<'a> {
    throttle: &'a Throttle,
    user: String,
    settled: bool,
}

impl Attempt<'_> {
    /// Ends the attempt with `outcome`.
    pub(crate) fn settle(mut self, outcome: Outcome) {
        self.settled = true;
        self.throttle.settle(&self.user, outcome);
    }
}

impl Drop for Attempt<'_> {
    fn drop(&mut self) {
        if !self.settled {
            self.throttle.settle(&self.user, Outcome::Failed);
        }
    }
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

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Attempts>> {
        self.failures.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Admits an attempt of `user` unless its failures plus the attempts still being checked
    /// reach the limit (`None`: refused). Checking and reserving happen under one lock, so
    /// however many logins run at once, at most `max_failures` passwords of a user are checked
    /// before the limit holds.
    pub(crate) fn begin(&self, user: &str) -> Option<Attempt<'_>> {
        let now = Instant::now();
        let mut failures = self.lock();
        self.forget_expired(&mut failures, now);
        if !failures.contains_key(user) {
            self.make_room(&mut failures, user);
        }
        let entry = failures.entry(user.to_string()).or_insert(Attempts {
            last_failed: now,
            count: 0,
            in_flight: 0,
        });
        if entry.count.saturating_add(entry.in_flight) >= self.config.max_failures {
            return None;
        }
        entry.in_flight += 1;
        Some(Attempt {
            throttle: self,
            user: user.to_string(),
            settled: false,
        })
    }

    fn settle(&self, user: &str, outcome: Outcome) {
        let now = Instant::now();
        let mut failures = self.lock();
        let entry = failures.entry(user.to_string()).or_insert(Attempts {
            last_failed: now,
            count: 0,
            in_flight: 1,
        });
        entry.in_flight = entry.in_flight.saturating_sub(1);
        match outcome {
            Outcome::Failed => {
                entry.count = entry.count.saturating_add(1);
                entry.last_failed = now;
                tracing::warn!(user, failures = entry.count, "failed login");
            }
            Outcome::Succeeded => entry.count = 0,
            Outcome::Neutral => {}
        }
        if entry.count == 0 && entry.in_flight == 0 {
            failures.remove(user);
        }
    }

    /// Drops failures older than the window (entries with attempts in flight stay).
    fn forget_expired(&self, failures: &mut HashMap<String, Attempts>, now: Instant) {
        if self.config.window.is_zero() {
            return;
        }
        let window = self.config.window;
        failures.retain(|_, a| a.in_flight > 0 || now.duration_since(a.last_failed) <= window);
        for a in failures.values_mut() {
            if !self.in_window(a, now) {
                a.count = 0;
            }
        }
    }

    /// Evicts someone else than admin, `user` and users with attempts in flight when the table
    /// is full: flooding the table with made-up names must not reset admin's count.
    fn make_room(&self, failures: &mut HashMap<String, Attempts>, user: &str) {
        if failures.len() < self.config.max_entries {
            return;
        }
        let victim = failures
            .iter()
            .find(|(k, a)| k.as_str() != ADMIN && k.as_str() != user && a.in_flight == 0)
            .map(|(k, _)| k.clone());
        if let Some(v) = victim {
            failures.remove(&v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn throttle(max_failures: u32, max_entries: usize) -> Throttle {
        Throttle::new(ThrottleConfig {
            max_failures,
            window: Duration::from_secs(300),
            max_entries,
        })
    }

    fn fail(t: &Throttle, user: &str) {
        t.begin(user).expect("admitted").settle(Outcome::Failed);
    }

    #[test]
    fn locks_after_max_failures_and_a_success_resets() {
        let t = throttle(3, 100);
        for _ in 0..2 {
            fail(&t, "alice");
        }
        t.begin("alice")
            .expect("admitted")
            .settle(Outcome::Succeeded);
        for _ in 0..3 {
            fail(&t, "alice");
        }
        assert!(t.begin("alice").is_none());
        assert!(t.begin("bob").is_some());
    }

    #[test]
    fn attempts_in_flight_count_against_the_limit() {
        // GHSA-4439-h7jw-5cjj: N parallel guesses all admitted before any failed.
        let t = throttle(5, 100);
        let admitted: Vec<_> = (0..40).filter_map(|_| t.begin("admin")).collect();
        assert_eq!(admitted.len(), 5);
        for a in admitted {
            a.settle(Outcome::Failed);
        }
        assert!(t.begin("admin").is_none());
    }

    #[test]
    fn neutral_outcomes_free_the_slot_and_cancelled_attempts_count() {
        let t = throttle(2, 100);
        t.begin("carol").expect("admitted").settle(Outcome::Neutral);
        t.begin("carol").expect("admitted").settle(Outcome::Neutral);
        // Dropped unsettled: a request cancelled while its password was being checked.
        drop(t.begin("carol").expect("admitted"));
        drop(t.begin("carol").expect("admitted, one failure so far"));
        assert!(t.begin("carol").is_none(), "two cancelled attempts counted");
    }

    #[test]
    fn threads_racing_cannot_pass_the_limit() {
        let t = std::sync::Arc::new(throttle(5, 100));
        let barrier = std::sync::Arc::new(std::sync::Barrier::new(32));
        let handles: Vec<_> = (0..32)
            .map(|_| {
                let (t, barrier) = (t.clone(), barrier.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    match t.begin("admin") {
                        Some(a) => {
                            a.settle(Outcome::Failed);
                            1
                        }
                        None => 0,
                    }
                })
            })
            .collect();
        let checked: u32 = handles.into_iter().map(|h| h.join().expect("thread")).sum();
        assert_eq!(checked, 5);
    }

    #[test]
    fn flooding_made_up_names_does_not_evict_admin() {
        let t = throttle(2, 3);
        fail(&t, ADMIN);
        fail(&t, ADMIN);
        for i in 0..50 {
            fail(&t, &format!("user{i}"));
        }
        assert!(t.begin(ADMIN).is_none());
    }
}
