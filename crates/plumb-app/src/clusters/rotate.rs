//! Argo's `ClusterService.RotateAuth` (`server/cluster/cluster.go`) and the token rotation of
//! `util/clusterauth`: the cluster's bearer token is a ServiceAccount token Secret's (what
//! `cluster add` stores); a new token Secret is made beside it (same annotations, Argo's
//! generated name), the new token is tried, stored in the cluster Secret, the ServiceAccount's
//! `secrets` list pointed at the new Secret and the old Secret deleted, which revokes the old
//! token. Used by `plumb server` and by `plumb cluster rotate-auth` in core mode.

use std::time::Duration;

use base64::Engine as _;
use k8s_openapi::api::core::v1::{ObjectReference, Secret, ServiceAccount};
use kube::api::{Api, DeleteParams, ObjectMeta, PostParams};
use serde_json::Value;

use super::ClusterSecret;
use super::record;

/// How long the token controller has to fill the new Secret (Argo's poll: 30 s).
pub const TOKEN_TIMEOUT: Duration = Duration::from_secs(30);

/// Why the token could not be rotated. Never holds a token.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RotateError {
    /// The cluster authenticates otherwise (Argo's InvalidArgument).
    #[error("Cluster '{0}' does not use bearer token authentication")]
    NotBearer(String),
    /// The cluster Secret cannot be used.
    #[error("{0}")]
    Config(String),
    /// The bearer token is not a ServiceAccount token Secret's.
    #[error("failed to parse service account token: {0}")]
    Token(&'static str),
    /// A request to the cluster or the control plane failed.
    #[error("{what}")]
    Api {
        /// What was being done.
        what: String,
        /// The cause.
        #[source]
        source: Box<kube::Error>,
    },
    /// The token controller did not fill the new Secret in time.
    #[error(
        "timed out waiting for secret to generate new token: Secret {namespace}/{name} still has no token after {seconds}s"
    )]
    Timeout {
        /// The new Secret's namespace.
        namespace: String,
        /// Its name.
        name: String,
        /// The limit.
        seconds: u64,
    },
}

fn api(what: impl Into<String>) -> impl FnOnce(kube::Error) -> RotateError {
    let what = what.into();
    move |e| RotateError::Api {
        what,
        source: Box::new(e),
    }
}

/// The claims of a legacy ServiceAccount token (Argo's `ServiceAccountClaims`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceAccountClaims {
    /// `kubernetes.io/serviceaccount/namespace`.
    pub namespace: String,
    /// `kubernetes.io/serviceaccount/secret.name`.
    pub secret_name: String,
    /// `kubernetes.io/serviceaccount/service-account.name`.
    pub service_account_name: String,
}

/// Argo's `ParseServiceAccountToken`: the claims read without verifying the signature (the
/// API server verifies the token). A token issued by the TokenRequest API names no Secret and
/// cannot be rotated this way.
pub fn parse_service_account_token(token: &str) -> Result<ServiceAccountClaims, RotateError> {
    let mut parts = token.split('.');
    let (Some(_), Some(payload), Some(_), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(RotateError::Token("token is malformed: not a JWT"));
    };
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload.trim_end_matches('='))
        .map_err(|_| RotateError::Token("token is malformed: the claims are not base64url"))?;
    let claims: Value = serde_json::from_slice(&bytes)
        .map_err(|_| RotateError::Token("token is malformed: the claims are not JSON"))?;
    let claim = |k: &str| {
        claims
            .get(format!("kubernetes.io/serviceaccount/{k}"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let parsed = ServiceAccountClaims {
        namespace: claim("namespace"),
        secret_name: claim("secret.name"),
        service_account_name: claim("service-account.name"),
    };
    if parsed.namespace.is_empty()
        || parsed.secret_name.is_empty()
        || parsed.service_account_name.is_empty()
    {
        return Err(RotateError::Token(
            "the token names no ServiceAccount token Secret (a TokenRequest token cannot be rotated)",
        ));
    }
    Ok(parsed)
}

/// Argo's generated name of the new token Secret: the old name without its last `-` part.
fn generate_name(secret_name: &str) -> String {
    let mut parts: Vec<&str> = secret_name.split('-').collect();
    parts.pop();
    format!("{}-", parts.join("-"))
}

/// Argo's `GenerateNewClusterManagerSecret`: a token Secret with the old one's annotations,
/// waited for until the token controller fills it.
async fn new_token_secret(
    client: &kube::Client,
    claims: &ServiceAccountClaims,
    timeout: Duration,
) -> Result<(String, String), RotateError> {
    let secrets: Api<Secret> = Api::namespaced(client.clone(), &claims.namespace);
    let old = secrets.get(&claims.secret_name).await.map_err(api(format!(
        "failed to generate new cluster manager secret: reading Secret {}/{}",
        claims.namespace, claims.secret_name
    )))?;
    let fresh = Secret {
        metadata: ObjectMeta {
            generate_name: Some(generate_name(&claims.secret_name)),
            annotations: old.metadata.annotations,
            ..Default::default()
        },
        type_: Some("kubernetes.io/service-account-token".into()),
        ..Default::default()
    };
    let created = secrets
        .create(&PostParams::default(), &fresh)
        .await
        .map_err(api(format!(
            "failed to generate new cluster manager secret in namespace {}",
            claims.namespace
        )))?;
    let name = created.metadata.name.unwrap_or_default();
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let s = secrets.get(&name).await.map_err(api(format!(
            "failed to generate new cluster manager secret: reading Secret {}/{name}",
            claims.namespace
        )))?;
        if let Some(token) = s.data.as_ref().and_then(|d| d.get("token")) {
            let token = String::from_utf8(token.0.clone())
                .map_err(|_| RotateError::Token("the new token is not UTF-8"))?;
            return Ok((name, token));
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(RotateError::Timeout {
                namespace: claims.namespace.clone(),
                name,
                seconds: timeout.as_secs(),
            });
        }
    }
}

/// Argo's `RotateServiceAccountSecrets`: the ServiceAccount's `secrets` list names the new
/// Secret instead of the old one, and the old Secret is deleted (its token stops working).
async fn retire_old_secret(
    client: &kube::Client,
    claims: &ServiceAccountClaims,
    new_name: &str,
) -> Result<(), RotateError> {
    let accounts: Api<ServiceAccount> = Api::namespaced(client.clone(), &claims.namespace);
    let what = format!(
        "failed to rotate service account secrets: ServiceAccount {}/{}",
        claims.namespace, claims.service_account_name
    );
    let mut sa = accounts
        .get(&claims.service_account_name)
        .await
        .map_err(api(what.clone()))?;
    let mut list: Vec<ObjectReference> = sa
        .secrets
        .take()
        .unwrap_or_default()
        .into_iter()
        .filter(|r| r.name.as_deref() != Some(claims.secret_name.as_str()))
        .collect();
    if !list.iter().any(|r| r.name.as_deref() == Some(new_name)) {
        list.push(ObjectReference {
            name: Some(new_name.to_string()),
            ..Default::default()
        });
    }
    sa.secrets = Some(list);
    accounts
        .replace(&claims.service_account_name, &PostParams::default(), &sa)
        .await
        .map_err(api(what))?;
    let secrets: Api<Secret> = Api::namespaced(client.clone(), &claims.namespace);
    match secrets
        .delete(&claims.secret_name, &DeleteParams::default())
        .await
    {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
        Err(e) => Err(api(format!(
            "failed to rotate service account secrets: deleting Secret {}/{}",
            claims.namespace, claims.secret_name
        ))(e)),
    }
}

/// What a rotation did (for the log line Argo writes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rotated {
    /// The old token Secret, deleted.
    pub old_secret: String,
    /// The new one.
    pub new_secret: String,
    /// The cluster's version, read with the new token.
    pub server_version: String,
}

/// Rotates the token of the cluster `stored` (a cluster Secret of `control`, the control
/// namespace's Secrets): the new token is tried before it is stored, and the old one revoked
/// only once the new one is stored.
pub async fn rotate(
    control: &Api<Secret>,
    stored: &Secret,
    timeout: Duration,
) -> Result<Rotated, RotateError> {
    let parsed = ClusterSecret::from_secret(stored)
        .ok_or_else(|| RotateError::Config("the cluster Secret has no server".into()))?;
    let server = parsed.server.clone();
    let token = match &parsed.config {
        Ok(c) if c.exec.is_none() => c.bearer_token.clone(),
        _ => None,
    }
    .ok_or_else(|| RotateError::NotBearer(server.clone()))?;
    let claims = parse_service_account_token(&token)?;
    let unusable = |e: crate::Error| RotateError::Config(crate::chain(&e));
    let client = parsed.client().await.map_err(unusable)?;
    let (new_name, new_token) = new_token_secret(&client, &claims, timeout).await?;
    // Token authentication from now on: a client certificate pair is not kept (as Argo).
    let mut cluster = record::unsanitized(stored);
    if let Some(tls) = cluster["config"]["tlsClientConfig"].as_object_mut() {
        tls.remove("certData");
        tls.remove("keyData");
    }
    cluster["config"]["bearerToken"] = Value::String(new_token);
    let updated = record::to_secret(&cluster, stored.clone())
        .map_err(|e| RotateError::Config(e.to_string()))?;
    let tried = ClusterSecret::from_secret(&updated)
        .ok_or_else(|| RotateError::Config("the cluster Secret has no server".into()))?
        .client()
        .await
        .map_err(unusable)?;
    let version = tried
        .apiserver_version()
        .await
        .map_err(api("failed to get server version"))?;
    let name = stored.metadata.name.clone().unwrap_or_default();
    control
        .replace(&name, &PostParams::default(), &updated)
        .await
        .map_err(api(format!(
            "failed to update cluster in database: Secret {name}"
        )))?;
    retire_old_secret(&client, &claims, &new_name).await?;
    tracing::info!(cluster = %server, "Rotated auth (old: {}, new: {new_name})", claims.secret_name);
    Ok(Rotated {
        old_secret: claims.secret_name,
        new_secret: new_name,
        server_version: format!("{}.{}", version.major, version.minor),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jwt(claims: &Value) -> String {
        let e = |b: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(b);
        format!(
            "{}.{}.{}",
            e(br#"{"alg":"RS256"}"#),
            e(claims.to_string().as_bytes()),
            e(b"signature")
        )
    }

    #[test]
    fn legacy_token_claims_are_read() {
        let t = jwt(&serde_json::json!({
            "iss": "kubernetes/serviceaccount",
            "kubernetes.io/serviceaccount/namespace": "kube-system",
            "kubernetes.io/serviceaccount/secret.name": "argocd-manager-long-lived-token",
            "kubernetes.io/serviceaccount/service-account.name": "argocd-manager",
        }));
        let c = parse_service_account_token(&t).unwrap();
        assert_eq!(c.namespace, "kube-system");
        assert_eq!(c.secret_name, "argocd-manager-long-lived-token");
        assert_eq!(c.service_account_name, "argocd-manager");
        assert_eq!(generate_name(&c.secret_name), "argocd-manager-long-lived-");
        assert_eq!(
            generate_name("argocd-manager-token-x7k2p"),
            "argocd-manager-token-"
        );
    }

    // Hostile or unsupported tokens: refused with a reason, never echoed.
    #[test]
    fn other_tokens_are_refused_without_quoting_them() {
        let bound = jwt(&serde_json::json!({"kubernetes.io": {"namespace": "a"}}));
        for bad in [
            "s3cret-opaque-token".to_string(),
            "a.b".into(),
            "a.!!!.c".into(),
            format!(
                "x.{}.y",
                base64::engine::general_purpose::URL_SAFE_NO_PAD.encode("s3cret")
            ),
            "a.b.c.d".into(),
            bound,
            "x".repeat(1 << 20),
        ] {
            let e = parse_service_account_token(&bad).unwrap_err().to_string();
            assert!(
                e.starts_with("failed to parse service account token: "),
                "{e}"
            );
            assert!(!e.contains("s3cret") && e.len() < 200, "{e}");
        }
    }
}
