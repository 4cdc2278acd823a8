//! Authentication, as Argo CD's session manager does it: local accounts (`argocd-cm`,
//! `argocd-secret`) logging in for HS256 session JWTs, API keys and project role tokens of the
//! same kind, revocable by their id; and, Plumb's addition, any bearer token the Kubernetes API
//! server accepts (ServiceAccount tokens), checked with a TokenReview.
//!
//! Tokens arrive as `Authorization: Bearer` or Argo's `argocd.token` cookie. Nothing here logs a
//! token, password or hash.

pub(crate) mod accounts;
pub(crate) mod jwt;
pub(crate) mod middleware;
pub(crate) mod store;
pub(crate) mod throttle;

use std::time::{Duration, Instant};

use k8s_openapi::ByteString;
use k8s_openapi::api::authentication::v1::{TokenReview, TokenReviewSpec};
use kube::Api;
use kube::api::PostParams;
use subtle::ConstantTimeEq;

use crate::error::{Error, Result};
use crate::state::{AppState, SETTINGS_CONFIGMAP};
use accounts::{Account, Capability};
pub use throttle::ThrottleConfig;

/// The longest token accepted (a ServiceAccount token is about 1 KiB).
pub(crate) const MAX_TOKEN_BYTES: usize = 8 * 1024;
/// Argo's longest user name for local logins.
const MAX_USERNAME_BYTES: usize = 32;
/// Longer passwords are refused before bcrypt (which only reads 72 bytes).
const MAX_PASSWORD_BYTES: usize = 72;
/// Argo's bcrypt cost.
const BCRYPT_COST: u32 = 10;
/// Argo's generated admin password length.
const INITIAL_PASSWORD_LEN: usize = 16;
/// Session length unless `users.session.duration` says otherwise.
const DEFAULT_SESSION: Duration = Duration::from_secs(24 * 3600);
/// Login answers take at least this long, failed or not (Argo's verification delay).
const LOGIN_FLOOR: Duration = Duration::from_millis(500);

/// Who is calling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Caller {
    /// The RBAC subject: the account name, `proj:<project>:<role>`, or the Kubernetes user name.
    pub(crate) subject: String,
    /// Groups (Kubernetes users' groups).
    pub(crate) groups: Vec<String>,
    pub(crate) kind: CallerKind,
}

/// How the caller authenticated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CallerKind {
    /// `--disable-auth`: everything is allowed.
    Unrestricted,
    /// A local account's session or API key.
    Account {
        capability: &'static str,
        jti: String,
        exp: Option<i64>,
    },
    /// A project role token.
    ProjectRole { project: String, role: String },
    /// A bearer token the Kubernetes API server accepted.
    Kubernetes,
}

impl Caller {
    pub(crate) fn unrestricted() -> Self {
        Self {
            subject: String::new(),
            groups: Vec::new(),
            kind: CallerKind::Unrestricted,
        }
    }

    /// The issuer shown by userinfo.
    pub(crate) fn issuer(&self) -> &'static str {
        match self.kind {
            CallerKind::Kubernetes => "kubernetes",
            _ => jwt::ISSUER,
        }
    }

    /// The local account name when the caller is one.
    pub(crate) fn account(&self) -> Option<&str> {
        matches!(self.kind, CallerKind::Account { .. }).then_some(self.subject.as_str())
    }
}

/// State of authentication shared by requests.
#[derive(Debug)]
pub(crate) struct Auth {
    throttle: throttle::Throttle,
}

impl Auth {
    pub(crate) fn new(config: ThrottleConfig) -> Self {
        Self {
            throttle: throttle::Throttle::new(config),
        }
    }
}

/// The key of a revoked session id in [`store::REVOKED_SECRET`]: the id itself when it is a
/// valid Secret key (the UUIDs this server issues), else its SHA-256.
fn revoked_key(jti: &str) -> String {
    let valid = !jti.is_empty()
        && jti.len() <= 253
        && jti
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if valid {
        return jti.to_string();
    }
    use sha2::Digest;
    sha2::Sha256::digest(jti.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Random bytes from the OS.
pub(crate) fn random_bytes<const N: usize>() -> Result<[u8; N]> {
    let mut b = [0u8; N];
    getrandom::fill(&mut b).map_err(|e| Error::Internal(format!("reading random bytes: {e}")))?;
    Ok(b)
}

/// A random version-4 UUID, the ids Argo gives tokens.
pub(crate) fn new_token_id() -> Result<String> {
    let mut b = random_bytes::<16>()?;
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    Ok(format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    ))
}

fn random_password() -> Result<String> {
    const LETTERS: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    let mut out = String::new();
    while out.len() < INITIAL_PASSWORD_LEN {
        for byte in random_bytes::<32>()? {
            // 248 = 4 * 62: no modulo bias.
            if byte < 248 && out.len() < INITIAL_PASSWORD_LEN {
                out.push(LETTERS[(byte % 62) as usize] as char);
            }
        }
    }
    Ok(out)
}

/// A bcrypt hash of `password` with Argo's cost.
pub(crate) async fn hash_password(password: String) -> Result<String> {
    bcrypt_hash(password).await
}

async fn bcrypt_hash(password: String) -> Result<String> {
    tokio::task::spawn_blocking(move || bcrypt::hash(password, BCRYPT_COST))
        .await
        .map_err(|e| Error::Internal(format!("hashing a password: {e}")))?
        .map_err(|e| Error::Internal(format!("hashing a password: {e}")))
}

async fn bcrypt_verify(password: String, hash: String) -> bool {
    tokio::task::spawn_blocking(move || bcrypt::verify(password, &hash).unwrap_or(false))
        .await
        .unwrap_or(false)
}

/// What Argo's server does at start: a signing key in `argocd-secret` (`server.secretkey`) if
/// there is none, and, while the admin account is enabled and has no password, a generated one:
/// its bcrypt hash in `argocd-secret`, the password itself in `argocd-initial-admin-secret`.
pub(crate) async fn bootstrap(client: &kube::Client, ns: &str) -> Result<()> {
    let cm = store::config_map(client, ns, SETTINGS_CONFIGMAP).await?;
    let admin_enabled = cm
        .get("admin.enabled")
        .is_none_or(|v| !matches!(v.trim(), "false" | "0" | "f" | "F" | "FALSE" | "False"));
    let key = base64::Engine::encode(
        &base64::engine::general_purpose::STANDARD,
        random_bytes::<32>()?,
    );
    let password = random_password()?;
    let hash = bcrypt_hash(password.clone()).await?;
    let now = jiff::Timestamp::now().to_string();
    let generated = store::update_secret(client, ns, |data| {
        let mut changed = false;
        if data.get("server.secretkey").is_none_or(|v| v.0.is_empty()) {
            data.insert(
                "server.secretkey".into(),
                ByteString(key.clone().into_bytes()),
            );
            changed = true;
        }
        let mut generated = false;
        if admin_enabled && data.get("admin.password").is_none_or(|v| v.0.is_empty()) {
            data.insert(
                "admin.password".into(),
                ByteString(hash.clone().into_bytes()),
            );
            data.insert(
                "admin.passwordMtime".into(),
                ByteString(now.clone().into_bytes()),
            );
            changed = true;
            generated = true;
        }
        Ok((changed, generated))
    })
    .await?;
    if generated {
        store::create_initial_admin_secret(client, ns, &password).await?;
        tracing::info!(
            "generated the admin password; it is in Secret {ns}/{}",
            store::INITIAL_ADMIN_SECRET
        );
    }
    Ok(())
}

impl AppState {
    fn auth_state(&self) -> Result<&Auth> {
        self.auth
            .as_deref()
            .ok_or_else(|| Error::FailedPrecondition("authentication is disabled".into()))
    }

    /// The signing key and the accounts, read now.
    pub(crate) async fn accounts(
        &self,
    ) -> Result<(Vec<u8>, std::collections::BTreeMap<String, Account>)> {
        let cm = store::config_map(&self.client, &self.namespace, SETTINGS_CONFIGMAP).await?;
        let secret = store::secret(&self.client, &self.namespace, store::SECRET).await?;
        let data = store::secret_data(secret.as_ref());
        let key = data.get("server.secretkey").cloned().unwrap_or_default();
        let accounts = accounts::parse(&cm, &data).map_err(Error::Internal)?;
        Ok((key, accounts))
    }

    /// Signs claims with `server.secretkey`.
    pub(crate) async fn sign(&self, claims: &jwt::Claims) -> Result<String> {
        let (key, _) = self.accounts().await?;
        if key.is_empty() {
            return Err(Error::Internal(format!(
                "Secret {}/{} has no server.secretkey",
                self.namespace,
                store::SECRET
            )));
        }
        jwt::sign(&key, claims).map_err(Error::Internal)
    }

    /// Argo's `VerifySessionToken`: tokens issued by `argocd` are ours; anything else goes to
    /// the Kubernetes API server.
    pub(crate) async fn authenticate(&self, token: &str) -> Result<Caller> {
        if token.len() > MAX_TOKEN_BYTES {
            return Err(Error::Unauthenticated(
                "invalid session: token is too long".into(),
            ));
        }
        if jwt::unverified_issuer(token).as_deref() == Some(jwt::ISSUER) {
            return self.authenticate_local(token).await;
        }
        self.authenticate_kubernetes(token).await
    }

    async fn authenticate_local(&self, token: &str) -> Result<Caller> {
        let invalid = |m: String| Error::Unauthenticated(format!("invalid session: {m}"));
        let (key, accounts) = self.accounts().await?;
        if key.is_empty() {
            return Err(invalid("the server has no signing key".into()));
        }
        let claims = jwt::verify(&key, token).map_err(invalid)?;
        if let Some(rest) = claims.sub.strip_prefix("proj:") {
            let Some((project, role)) = rest.split_once(':') else {
                return Err(invalid(format!("malformed subject {}", claims.sub)));
            };
            self.check_project_token(project, role, &claims)
                .await
                .map_err(invalid)?;
            return Ok(Caller {
                subject: claims.sub.clone(),
                groups: Vec::new(),
                kind: CallerKind::ProjectRole {
                    project: project.into(),
                    role: role.into(),
                },
            });
        }
        // Argo's GetSubjectAccountAndCapability: no suffix means an API key.
        let (name, capability) = match claims.sub.split_once(':') {
            Some((n, "login")) => (n, Capability::Login),
            Some((n, _)) => (n, Capability::ApiKey),
            None => (claims.sub.as_str(), Capability::ApiKey),
        };
        let account = accounts
            .get(name)
            .ok_or_else(|| invalid(format!("account {name} not found")))?;
        if !account.enabled {
            return Err(invalid(format!("account {name} is disabled")));
        }
        if !account.has(capability) {
            return Err(invalid(format!(
                "account {name} does not have '{}' capability",
                capability.as_str()
            )));
        }
        if claims.jti.is_empty() {
            return Err(invalid(
                "token does not have a unique identifier (jti claim) and cannot be validated"
                    .into(),
            ));
        }
        if self.is_revoked(&claims.jti).await? {
            return Err(invalid("token is revoked, please re-login".into()));
        }
        if capability == Capability::ApiKey
            && !account
                .tokens
                .iter()
                .any(|t| bool::from(t.id.as_bytes().ct_eq(claims.jti.as_bytes())))
        {
            return Err(invalid(format!(
                "account {name} does not have token with id {}",
                claims.jti
            )));
        }
        if account.password_mtime.is_some_and(|m| claims.iat < m) {
            return Err(invalid(
                "account password has changed since token issued".into(),
            ));
        }
        Ok(Caller {
            subject: name.to_string(),
            groups: Vec::new(),
            kind: CallerKind::Account {
                capability: capability.as_str(),
                jti: claims.jti.clone(),
                exp: claims.exp,
            },
        })
    }

    /// Argo's `GetJWTToken`: the role must still list the token (by id, or by issue time for
    /// tokens without one).
    async fn check_project_token(
        &self,
        project: &str,
        role: &str,
        claims: &jwt::Claims,
    ) -> std::result::Result<(), String> {
        crate::state::check_name("AppProject", project).map_err(|e| e.to_string())?;
        let obj = self
            .projects()
            .get_opt(project)
            .await
            .map_err(|e| format!("reading AppProject {project}: {e}"))?
            .ok_or_else(|| format!("project {project} not found"))?;
        let value = crate::state::to_value(&obj).map_err(|e| e.to_string())?;
        let roles = value
            .pointer("/spec/roles")
            .and_then(serde_json::Value::as_array)
            .cloned()
            .unwrap_or_default();
        let role_obj = roles
            .iter()
            .find(|r| r.get("name").and_then(serde_json::Value::as_str) == Some(role))
            .ok_or_else(|| format!("role '{role}' does not exist in project '{project}'"))?;
        let tokens = role_obj
            .get("jwtTokens")
            .and_then(serde_json::Value::as_array)
            .cloned()
            .unwrap_or_default();
        let found = tokens.iter().any(|t| {
            let id = t
                .get("id")
                .and_then(serde_json::Value::as_str)
                .unwrap_or("");
            let iat = t.get("iat").and_then(json_i64).unwrap_or(-1);
            if claims.jti.is_empty() {
                iat == claims.iat
            } else {
                bool::from(id.as_bytes().ct_eq(claims.jti.as_bytes()))
            }
        });
        if !found {
            return Err(format!(
                "token for role '{role}' in project '{project}' does not exist (it was deleted or never issued)"
            ));
        }
        Ok(())
    }

    async fn authenticate_kubernetes(&self, token: &str) -> Result<Caller> {
        let api: Api<TokenReview> = Api::all(self.client.clone());
        let review = TokenReview {
            spec: TokenReviewSpec {
                token: token.to_string(),
                audiences: None,
            },
            ..TokenReview::default()
        };
        let answer = api
            .create(&PostParams::default(), &review)
            .await
            .map_err(|e| Error::kube("checking a bearer token with a TokenReview", e))?;
        let status = answer.status.unwrap_or_default();
        if status.authenticated != Some(true) {
            return Err(Error::Unauthenticated(
                "invalid session: the token is not a session of this server and the Kubernetes API server does not accept it".into(),
            ));
        }
        let user = status.user.unwrap_or_default();
        let subject = user.username.unwrap_or_default();
        if subject.is_empty() {
            return Err(Error::Unauthenticated(
                "invalid session: the Kubernetes API server named no user".into(),
            ));
        }
        Ok(Caller {
            subject,
            groups: user.groups.unwrap_or_default(),
            kind: CallerKind::Kubernetes,
        })
    }

    /// Argo's `VerifyUsernamePassword` and session `Create`: a session JWT for `username`.
    pub(crate) async fn login(&self, username: &str, password: &str) -> Result<String> {
        let start = Instant::now();
        let result = self.login_inner(username, password).await;
        // The same floor for every answer, so its timing tells nothing.
        let spent = start.elapsed();
        if spent < LOGIN_FLOOR {
            let jitter = u64::from(random_bytes::<1>()?[0]) * 2;
            tokio::time::sleep(LOGIN_FLOOR - spent + Duration::from_millis(jitter)).await;
        }
        result
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
        if auth.throttle.exceeded(username) {
            tracing::warn!(user = username, "too many failed logins; refused");
            return Err(invalid());
        }
        let (_, accounts) = self.accounts().await?;
        let account = accounts.get(username);
        // Run bcrypt even for unknown users, so response times do not reveal who exists.
        let hash = account
            .and_then(|a| a.password_hash.clone())
            .unwrap_or_else(|| DUMMY_HASH.clone());
        let valid = password.len() <= MAX_PASSWORD_BYTES
            && bcrypt_verify(password.to_string(), hash).await
            && account.is_some_and(|a| a.password_hash.is_some());
        let Some(account) = account.filter(|_| valid) else {
            auth.throttle.record(username, true);
            return Err(invalid());
        };
        if !account.enabled {
            return Err(Error::Unauthenticated(format!(
                "Account {username} is disabled"
            )));
        }
        if !account.has(Capability::Login) {
            return Err(Error::Unauthenticated(format!(
                "Account {username} does not have login capability"
            )));
        }
        auth.throttle.record(username, false);
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

    /// Revokes the caller's session (logout).
    pub(crate) async fn revoke_session(&self, caller: &Caller) -> Result<()> {
        if let CallerKind::Account {
            capability: "login",
            jti,
            exp,
        } = &caller.kind
        {
            self.auth_state()?;
            self.revoke(jti, *exp).await?;
        }
        Ok(())
    }

    /// Records `jti` as revoked until `exp` (0: forever) in [`store::REVOKED_SECRET`], dropping
    /// entries that expired (their tokens are refused for their age anyway).
    async fn revoke(&self, jti: &str, exp: Option<i64>) -> Result<()> {
        let now = jiff::Timestamp::now().as_second();
        let key = revoked_key(jti);
        let exp = exp.unwrap_or(0);
        store::update_named_secret(
            &self.client,
            &self.namespace,
            store::REVOKED_SECRET,
            |data| {
                let before = data.len();
                data.retain(|_, v| {
                    let e: i64 = std::str::from_utf8(&v.0)
                        .ok()
                        .and_then(|t| t.parse().ok())
                        .unwrap_or(0);
                    e == 0 || e > now
                });
                let fresh = data
                    .insert(key.clone(), ByteString(exp.to_string().into_bytes()))
                    .is_none();
                Ok((fresh || data.len() != before, ()))
            },
        )
        .await
    }

    /// Whether `jti` was revoked (read from the Secret on every check, so a logout through one
    /// replica, or before a restart, holds everywhere).
    async fn is_revoked(&self, jti: &str) -> Result<bool> {
        let secret = store::secret(&self.client, &self.namespace, store::REVOKED_SECRET).await?;
        Ok(store::secret_data(secret.as_ref()).contains_key(&revoked_key(jti)))
    }
}

/// A bcrypt hash (of Argo's string for the purpose) compared against when the user does not
/// exist, so that takes as long as a wrong password.
static DUMMY_HASH: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    bcrypt::hash("for_consistent_response_time", BCRYPT_COST).unwrap_or_default()
});

/// An integer that JSON may carry as a number or (int64 in grpc-gateway) a string.
pub(crate) fn json_i64(v: &serde_json::Value) -> Option<i64> {
    v.as_i64()
        .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_ids_are_uuid_v4_and_passwords_alphanumeric() {
        let id = new_token_id().expect("id");
        assert_eq!(id.len(), 36);
        assert_eq!(&id[14..15], "4");
        assert_ne!(id, new_token_id().expect("id"));
        let p = random_password().expect("password");
        assert_eq!(p.len(), INITIAL_PASSWORD_LEN);
        assert!(p.chars().all(|c| c.is_ascii_alphanumeric()));
    }

    #[test]
    fn the_dummy_hash_is_a_valid_bcrypt_hash() {
        assert_eq!(
            bcrypt::verify("not the password", &DUMMY_HASH).ok(),
            Some(false)
        );
    }
}
