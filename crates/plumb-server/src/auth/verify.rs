//! Checking a token: Argo's session JWTs, API keys and project role tokens here, anything
//! else through the Kubernetes API server ([`super::kubernetes`]).

use subtle::ConstantTimeEq;

use super::accounts::Capability;
use super::caller::{Caller, CallerKind};
use super::jwt;
use crate::error::{Error, Result};
use crate::gateway::json_i64;
use crate::state::AppState;

/// A browser session's ID token renewed while its request was checked: the new `argocd.token`.
#[derive(Debug)]
pub(crate) struct Renewed {
    pub(crate) id_token: String,
    /// Whether the server's `url` is https (the cookie is then `Secure` in any case).
    pub(crate) https: bool,
}

impl AppState {
    /// Argo's `VerifySessionToken`: tokens issued by `argocd` are ours; anything else goes to
    /// the Kubernetes API server.
    pub(crate) async fn authenticate(&self, token: &str) -> Result<Caller> {
        self.authenticate_session(token, false)
            .await
            .map(|(caller, _)| caller)
    }

    /// [`AppState::authenticate`]; for a browser's cookie (`browser`), an SSO session's ID
    /// token near or past its expiry is renewed with the stored refresh token (Argo's
    /// `getClaims`), and the caller is the renewed session's.
    pub(crate) async fn authenticate_session(
        &self,
        token: &str,
        browser: bool,
    ) -> Result<(Caller, Option<Renewed>)> {
        if token.len() > super::token_cookie::max_token_bytes() {
            return Err(Error::Unauthenticated(
                "invalid session: token is too long".into(),
            ));
        }
        let issuer = jwt::unverified_issuer(token);
        if issuer.as_deref() == Some(jwt::ISSUER) {
            return Ok((self.authenticate_local(token).await?, None));
        }
        if let Some(issuer) = issuer
            && let Some(found) = self.authenticate_sso(&issuer, token, browser).await?
        {
            return Ok(found);
        }
        Ok((self.authenticate_kubernetes(token).await?, None))
    }

    /// An ID token of the SSO provider (by its unverified `iss`, as Argo picks the verifier);
    /// `None` when SSO is off or the token names another issuer.
    async fn authenticate_sso(
        &self,
        issuer: &str,
        token: &str,
        browser: bool,
    ) -> Result<Option<(Caller, Option<Renewed>)>> {
        let inputs = self.sso_inputs().await?;
        let settings = match inputs.settings() {
            Ok(Some(s))
                if s.config.issuer.trim_end_matches('/') == issuer.trim_end_matches('/') =>
            {
                s
            }
            _ => return Ok(None),
        };
        let provider = match self.auth_state()?.sso.provider(settings.clone()).await {
            super::sso::Status::Ready(p) => p,
            super::sso::Status::Unavailable(why) => {
                return Err(Error::Unauthenticated(format!(
                    "invalid session: single sign-on is unavailable: {why}"
                )));
            }
            super::sso::Status::Off => return Ok(None),
        };
        let refused = |why: String| {
            tracing::info!(issuer = %settings.config.issuer, "refused an SSO token: {why}");
            Error::Unauthenticated(format!(
                "invalid session: {}: {why}",
                super::sso::TOKEN_VERIFICATION_ERROR
            ))
        };
        let key = &inputs.server_key;
        let (claims, renewed) = match provider.verify(token, None).await {
            Ok(claims) if browser => {
                self.refuse_revoked_sso(token).await?;
                match self.sso_renew_early(&provider, key, token, &claims).await {
                    Some(t) => (t.claims, Some(t.id_token)),
                    None => (claims, None),
                }
            }
            Ok(claims) => {
                self.refuse_revoked_sso(token).await?;
                (claims, None)
            }
            Err(super::sso::provider::Refused::Expired) if browser => {
                self.refuse_revoked_sso(token).await?;
                let t = self
                    .sso_renew_expired(&provider, key, token)
                    .await
                    .map_err(|why| refused(format!("{why}; log in again")))?;
                (t.claims, Some(t.id_token))
            }
            Err(e) => return Err(refused(e.to_string())),
        };
        let sso = &self.auth_state()?.sso;
        let claims = sso
            .userinfo
            .with_groups(&provider, claims)
            .await
            .map_err(|why| {
                tracing::info!(issuer = %settings.config.issuer, "refused an SSO token: {why}");
                Error::Unauthenticated(format!("invalid session: {why}"))
            })?;
        let renewed = renewed.map(|id_token| Renewed {
            id_token,
            https: settings.url.starts_with("https://"),
        });
        Ok(Some((sso_caller(provider.issuer(), claims), renewed)))
    }

    /// An SSO token logged out (its hash in the revoked list) is refused.
    async fn refuse_revoked_sso(&self, token: &str) -> Result<()> {
        if self
            .is_revoked(&super::sso::sessions::token_hash(token))
            .await?
        {
            return Err(Error::Unauthenticated(
                "invalid session: token is revoked, please re-login".into(),
            ));
        }
        Ok(())
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
}

/// Argo's `GetUserIdentifier` (Dex's `federated_claims.user_id`, else `sub`) as the subject, the
/// `groups` claim as the groups userinfo shows.
pub(crate) fn sso_caller(
    issuer: &str,
    claims: serde_json::Map<String, serde_json::Value>,
) -> Caller {
    let sub = claims
        .get("sub")
        .and_then(serde_json::Value::as_str)
        .unwrap_or_default();
    let subject = claims
        .get("federated_claims")
        .and_then(|f| f.get("user_id"))
        .and_then(serde_json::Value::as_str)
        .filter(|u| !u.is_empty())
        .unwrap_or(sub)
        .to_string();
    let groups = match claims.get("groups") {
        Some(serde_json::Value::Array(items)) => items
            .iter()
            .filter_map(serde_json::Value::as_str)
            .map(str::to_string)
            .collect(),
        Some(serde_json::Value::String(g)) => vec![g.clone()],
        _ => Vec::new(),
    };
    Caller {
        subject,
        groups,
        kind: CallerKind::Sso {
            issuer: issuer.to_string(),
            claims: std::sync::Arc::new(claims),
        },
    }
}
