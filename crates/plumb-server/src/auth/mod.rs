//! Authentication, as Argo CD's session manager does it: local accounts (`argocd-cm`,
//! `argocd-secret`) logging in for HS256 session JWTs ([`login`]), API keys and project role
//! tokens of the same kind, revocable by their id; and, Plumb's addition, bearer tokens the
//! Kubernetes API server accepts (ServiceAccount tokens) of the subjects the operator listed,
//! checked with a TokenReview ([`kubernetes`]). [`csrf`] holds the checks that keep other sites
//! from using a browser's session cookie.
//!
//! Tokens arrive as `Authorization: Bearer` or Argo's `argocd.token` cookie. Nothing here logs a
//! token, password or hash.

pub(crate) mod accounts;
mod csrf;
pub(crate) mod jwt;
mod kubernetes;
mod login;
pub(crate) mod middleware;
pub(crate) mod store;
pub(crate) mod throttle;

use std::time::Duration;

use k8s_openapi::ByteString;
use subtle::ConstantTimeEq;

use crate::error::{Error, Result};
use crate::state::{AppState, SETTINGS_CONFIGMAP};
use accounts::{Account, Capability};
pub(crate) use csrf::{ApiContentTypes, RequestGuard};
pub(crate) use login::LoginCounter;
pub use throttle::ThrottleConfig;

/// The longest token accepted (a ServiceAccount token is about 1 KiB).
pub(crate) const MAX_TOKEN_BYTES: usize = 8 * 1024;
/// Argo's bcrypt cost.
const BCRYPT_COST: u32 = 10;
/// Argo's generated admin password length.
const INITIAL_PASSWORD_LEN: usize = 16;
/// Session length unless `users.session.duration` says otherwise.
const DEFAULT_SESSION: Duration = Duration::from_secs(24 * 3600);

/// Who is calling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Caller {
    /// The RBAC subject: the account name, `proj:<project>:<role>`, or the Kubernetes user's
    /// (`system:serviceaccount:<ns>:<name>`, `k8s:<name>`; [`kubernetes::subject_of`]).
    pub(crate) subject: String,
    /// Groups (Kubernetes users' groups, as [`kubernetes::group_of`] names them).
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
    /// A bearer token the Kubernetes API server accepted, of a subject argocd-cm lists.
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
    logins: LoginCounter,
}

impl Auth {
    pub(crate) fn new(config: ThrottleConfig) -> Self {
        Self {
            throttle: throttle::Throttle::new(config),
            logins: LoginCounter::default(),
        }
    }

    /// The login counter, for the server's `/metrics`.
    pub(crate) fn logins(&self) -> LoginCounter {
        self.logins.clone()
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
}
