//! Logging in with a local account's password (Argo's `VerifyUsernamePassword` and session
//! `Create`): the failure throttle, bcrypt for known and unknown users alike, and a floor on
//! the answer's time, so neither the answer nor its timing tells whether a user exists.

use std::future::Future;
use std::time::Duration;

use super::accounts::{Account, Capability};
use super::password::BCRYPT_COST;
use super::random::{new_token_id, random_bytes};
use super::shared::count;
use super::throttle::Outcome;
use super::{jwt, store};
use crate::error::{Error, Result};
use crate::state::{AppState, SETTINGS_CONFIGMAP};

/// Session length unless `users.session.duration` says otherwise.
const DEFAULT_SESSION: Duration = Duration::from_secs(24 * 3600);

/// Argo's longest user name for local logins.
const MAX_USERNAME_BYTES: usize = 32;
/// Longer passwords are refused before bcrypt (which only reads 72 bytes).
const MAX_PASSWORD_BYTES: usize = 72;
/// Login answers take at least this long, failed or not (Argo's verification delay).
pub(super) const LOGIN_FLOOR: Duration = Duration::from_millis(500);

/// A bcrypt hash (of Argo's string for the purpose) compared against when the user does not
/// exist, so that takes as long as a wrong password.
static DUMMY_HASH: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    bcrypt::hash("for_consistent_response_time", BCRYPT_COST).unwrap_or_default()
});

/// The hash a password is checked against: the account's, or the dummy one for an unknown
/// user or an account without a password, so every login runs bcrypt at Argo's cost.
fn hash_to_check(account: Option<&Account>) -> String {
    account
        .and_then(|a| a.password_hash.clone())
        .unwrap_or_else(|| DUMMY_HASH.clone())
}

/// Whether `password` is `account`'s. `verify` (bcrypt on the blocking pool) runs exactly once
/// whether or not the account exists; a match against the dummy hash never counts.
async fn password_matches<F, Fut>(account: Option<&Account>, password: &str, verify: F) -> bool
where
    F: FnOnce(String, String) -> Fut,
    Fut: Future<Output = bool>,
{
    let matched = verify(password.to_string(), hash_to_check(account)).await;
    matched
        && password.len() <= MAX_PASSWORD_BYTES
        && account.is_some_and(|a| a.password_hash.is_some())
}

async fn bcrypt_verify(password: String, hash: String) -> bool {
    tokio::task::spawn_blocking(move || bcrypt::verify(password, &hash).unwrap_or(false))
        .await
        .unwrap_or(false)
}

/// Runs `answer` and holds its result until `floor` (plus up to `jitter_ms`) has passed since
/// the start, so the answer's time says nothing about what it found.
async fn with_floor<T>(floor: Duration, jitter_ms: u64, answer: impl Future<Output = T>) -> T {
    let start = tokio::time::Instant::now();
    let result = answer.await;
    let spent = start.elapsed();
    if spent < floor {
        tokio::time::sleep(floor - spent + Duration::from_millis(jitter_ms)).await;
    }
    result
}

impl AppState {
    /// Argo's `VerifyUsernamePassword` and session `Create`: a session JWT for `username`.
    pub(crate) async fn login(&self, username: &str, password: &str) -> Result<String> {
        let jitter = u64::from(random_bytes::<1>()?[0]) * 2;
        with_floor(LOGIN_FLOOR, jitter, self.login_inner(username, password)).await
    }

    async fn login_inner(&self, username: &str, password: &str) -> Result<String> {
        let invalid = || Error::Unauthenticated("Invalid username or password".into());
        if password.is_empty() {
            return Err(Error::Unauthenticated(
                "Blank passwords are not allowed".into(),
            ));
        }
        if username.len() > MAX_USERNAME_BYTES {
            return Err(Error::InvalidArgument(format!(
                "Username is too long ({MAX_USERNAME_BYTES} bytes max)"
            )));
        }
        let auth = self.auth_state()?;
        // Reserved before anything is awaited: an attempt in flight counts against the limit
        // until it is settled, so parallel guesses cannot all slip past the check.
        let Some(attempt) = auth.throttle.begin(username) else {
            tracing::warn!(user = username, "too many failed logins; refused");
            count(&auth.logins, "throttled");
            return Err(invalid());
        };
        let accounts = match self.accounts().await {
            Ok((_, accounts)) => accounts,
            Err(e) => {
                attempt.settle(Outcome::Neutral);
                return Err(e);
            }
        };
        let account = accounts.get(username);
        if !password_matches(account, password, bcrypt_verify).await {
            attempt.settle(Outcome::Failed);
            count(&auth.logins, "failed");
            return Err(invalid());
        }
        let Some(account) = account else {
            // password_matches is never true without an account.
            attempt.settle(Outcome::Failed);
            return Err(invalid());
        };
        if let Err(refused) = may_log_in(account) {
            attempt.settle(Outcome::Neutral);
            return Err(refused);
        }
        attempt.settle(Outcome::Succeeded);
        count(&auth.logins, "success");
        self.session_token(username).await
    }

    /// A signed session JWT for `username` (`users.session.duration` long).
    async fn session_token(&self, username: &str) -> Result<String> {
        let cm = store::config_map(&self.client, &self.namespace, SETTINGS_CONFIGMAP).await?;
        let duration = cm
            .get("users.session.duration")
            .and_then(|d| plumb_model::duration::parse_duration(d))
            .unwrap_or(DEFAULT_SESSION);
        let claims = jwt::Claims::new(
            format!("{username}:login"),
            i64::try_from(duration.as_secs()).unwrap_or(i64::MAX),
            new_token_id()?,
        );
        self.sign(&claims).await
    }
}

/// Argo's checks after the password matched: enabled, and the `login` capability.
fn may_log_in(account: &Account) -> Result<()> {
    if !account.enabled {
        return Err(Error::Unauthenticated(format!(
            "Account {} is disabled",
            account.name
        )));
    }
    if !account.has(Capability::Login) {
        return Err(Error::Unauthenticated(format!(
            "Account {} does not have login capability",
            account.name
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    fn account(hash: Option<String>) -> Account {
        Account {
            name: "alice".into(),
            enabled: true,
            capabilities: vec![Capability::Login],
            password_hash: hash,
            password_mtime: None,
            tokens: Vec::new(),
        }
    }

    /// The hashes `password_matches` handed to bcrypt.
    async fn checked(account: Option<&Account>, password: &str) -> (bool, Vec<String>) {
        let seen = Mutex::new(Vec::new());
        let matched = password_matches(account, password, |p, h| {
            seen.lock().expect("lock").push(h.clone());
            async move { bcrypt::verify(p, &h).unwrap_or(false) }
        })
        .await;
        (matched, seen.into_inner().expect("lock"))
    }

    #[test]
    fn the_dummy_hash_is_a_valid_bcrypt_hash_at_argos_cost() {
        assert_eq!(
            bcrypt::verify("not the password", &DUMMY_HASH).ok(),
            Some(false)
        );
        // The cost decides bcrypt's time: the dummy must cost what a real password costs.
        assert!(
            DUMMY_HASH.starts_with(&format!("$2b${BCRYPT_COST:02}$")),
            "{}",
            *DUMMY_HASH
        );
    }

    #[tokio::test]
    async fn unknown_users_and_accounts_without_password_run_bcrypt_too() {
        // The login timing floor for unknown users: the same work as a wrong password.
        let (matched, hashes) = checked(None, "guess").await;
        assert!(!matched);
        assert_eq!(hashes, vec![DUMMY_HASH.as_str()]);
        let (matched, hashes) = checked(Some(&account(None)), "guess").await;
        assert!(!matched);
        assert_eq!(hashes, vec![DUMMY_HASH.as_str()]);
        // Even the dummy's own password never logs anyone in.
        let (matched, _) = checked(None, "for_consistent_response_time").await;
        assert!(!matched);
        let (matched, _) = checked(Some(&account(None)), "for_consistent_response_time").await;
        assert!(!matched);
        let hash = bcrypt::hash("right", 4).expect("hash");
        let (matched, hashes) = checked(Some(&account(Some(hash.clone()))), "right").await;
        assert!(matched);
        assert_eq!(hashes, [hash]);
    }

    #[tokio::test(start_paused = true)]
    async fn answers_are_held_until_the_floor() {
        // Virtual time: what is checked is the floor, not how fast this machine is.
        let start = tokio::time::Instant::now();
        with_floor(LOGIN_FLOOR, 0, async {}).await;
        assert!(start.elapsed() >= LOGIN_FLOOR);
        let start = tokio::time::Instant::now();
        with_floor(LOGIN_FLOOR, 10, async {
            tokio::time::sleep(Duration::from_secs(2)).await;
        })
        .await;
        let spent = start.elapsed();
        assert!(spent >= Duration::from_secs(2) && spent < Duration::from_secs(2) + LOGIN_FLOOR);
    }
}
