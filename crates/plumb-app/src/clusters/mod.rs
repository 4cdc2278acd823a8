//! Destination clusters other than the controller's own, from Argo CD cluster Secrets
//! (label `argocd.argoproj.io/secret-type: cluster`, keys `name`, `server`, `config`).

use kube::config::{KubeConfigOptions, Kubeconfig};
use serde_json::{Value, json};

use crate::error::{Error, Result};

/// The label that marks an Argo CD cluster Secret.
pub const CLUSTER_SECRET_LABEL: &str = "argocd.argoproj.io/secret-type=cluster";

/// What a cluster Secret says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterSecret {
    /// `name` (what `destination.name` matches).
    pub name: String,
    /// `server` (what `destination.server` matches).
    pub server: String,
    /// The kube client configuration built from `config`.
    config: Value,
    /// The Secret's resourceVersion, to notice changes.
    pub version: String,
    /// The Secret's UID: Argo CD's cluster ID, which its sharding algorithms hash.
    pub id: String,
    /// The `shard` key: pins the cluster to that controller shard (Argo CD's field).
    pub shard: Option<i64>,
}

impl ClusterSecret {
    /// Reads a cluster Secret; `None` for Secrets that are not valid cluster Secrets (logged).
    pub fn from_secret(secret: &k8s_openapi::api::core::v1::Secret) -> Option<Self> {
        let data = secret.data.as_ref()?;
        let text = |k: &str| {
            data.get(k)
                .and_then(|b| String::from_utf8(b.0.clone()).ok())
                .unwrap_or_default()
        };
        let server = text("server");
        if server.is_empty() {
            tracing::warn!(secret = ?secret.metadata.name, "cluster Secret without a server key ignored");
            return None;
        }
        let config = match text("config") {
            t if t.trim().is_empty() => json!({}),
            t => match serde_json::from_str(&t) {
                Ok(v) => v,
                Err(e) => {
                    tracing::warn!(secret = ?secret.metadata.name, "cluster Secret config is not JSON: {e}");
                    return None;
                }
            },
        };
        let name = match text("name") {
            n if n.is_empty() => server.clone(),
            n => n,
        };
        let shard = match text("shard").trim() {
            "" => None,
            t => match t.parse::<i64>() {
                Ok(n) => Some(n),
                Err(_) => {
                    // Argo CD logs and ignores it too (`SecretToCluster`): the cluster stays,
                    // placed by the sharding algorithm.
                    tracing::warn!(
                        "cluster Secret {}: shard {t:?} is not an integer; ignored, the cluster is placed by the sharding algorithm",
                        secret.metadata.name.as_deref().unwrap_or_default()
                    );
                    None
                }
            },
        };
        Some(Self {
            name,
            server,
            config,
            version: secret.metadata.resource_version.clone().unwrap_or_default(),
            id: secret.metadata.uid.clone().unwrap_or_default(),
            shard,
        })
    }

    /// A kube client for the cluster: Argo's `config` (bearer token, basic auth, client
    /// certificate, CA, insecure, server name) mapped onto a kubeconfig.
    pub async fn client(&self) -> Result<kube::Client> {
        let c = &self.config;
        let tls = c.get("tlsClientConfig").cloned().unwrap_or(json!({}));
        let s = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
        let mut cluster = json!({"server": self.server});
        if let Some(ca) = s(&tls, "caData") {
            cluster["certificate-authority-data"] = json!(ca);
        }
        if tls.get("insecure").and_then(Value::as_bool) == Some(true) {
            cluster["insecure-skip-tls-verify"] = json!(true);
        }
        if let Some(n) = s(&tls, "serverName") {
            cluster["tls-server-name"] = json!(n);
        }
        let mut user = json!({});
        for (from, to) in [
            ("bearerToken", "token"),
            ("username", "username"),
            ("password", "password"),
        ] {
            if let Some(v) = s(c, from) {
                user[to] = json!(v);
            }
        }
        if let Some(v) = s(&tls, "certData") {
            user["client-certificate-data"] = json!(v);
        }
        if let Some(v) = s(&tls, "keyData") {
            user["client-key-data"] = json!(v);
        }
        let kubeconfig: Kubeconfig = serde_json::from_value(json!({
            "apiVersion": "v1", "kind": "Config",
            "clusters": [{"name": self.name, "cluster": cluster}],
            "users": [{"name": self.name, "user": user}],
            "contexts": [{"name": self.name, "context": {"cluster": self.name, "user": self.name}}],
            "current-context": self.name,
        }))
        .map_err(|e| Error::UnknownCluster(format!("{} (unusable config: {e})", self.server)))?;
        let config =
            kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
                .await
                .map_err(|e| {
                    Error::UnknownCluster(format!("{} (unusable config: {e})", self.server))
                })?;
        Ok(crate::k8s_requests::counted(
            plumb_kube::client_from(config)?,
            &self.server,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::ByteString;
    use k8s_openapi::api::core::v1::Secret;

    fn secret(pairs: &[(&str, &str)]) -> Secret {
        let mut s = Secret::default();
        s.metadata.name = Some("prod".into());
        s.metadata.resource_version = Some("7".into());
        s.data = Some(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), ByteString(v.as_bytes().to_vec())))
                .collect(),
        );
        s
    }

    #[test]
    fn reads_argo_cluster_secrets() {
        let c = ClusterSecret::from_secret(&secret(&[
            ("name", "prod"),
            ("server", "https://10.1.2.3:6443"),
            (
                "config",
                r#"{"bearerToken":"t","tlsClientConfig":{"insecure":true}}"#,
            ),
        ]))
        .expect("valid");
        assert_eq!(
            (c.name.as_str(), c.server.as_str(), c.version.as_str()),
            ("prod", "https://10.1.2.3:6443", "7")
        );
        assert!(
            ClusterSecret::from_secret(&secret(&[("name", "x")])).is_none(),
            "no server"
        );
        assert!(
            ClusterSecret::from_secret(&secret(&[("server", "https://a"), ("config", "{nope")]))
                .is_none()
        );
        let unnamed =
            ClusterSecret::from_secret(&secret(&[("server", "https://a")])).expect("valid");
        assert_eq!(unnamed.name, "https://a");
    }

    // A malformed `shard` never drops the cluster: a value that is not an integer is ignored
    // (Argo CD's `SecretToCluster` warns and ignores it too); a negative or out-of-range one is
    // kept for sharding to place on shard 0 (`sharding::argo::distribute`).
    #[test]
    fn a_malformed_shard_is_ignored_and_keeps_the_cluster() {
        let shard_of = |v: &str| {
            ClusterSecret::from_secret(&secret(&[("server", "https://a"), ("shard", v)]))
                .expect("the cluster is kept")
                .shard
        };
        assert_eq!(shard_of("2"), Some(2));
        assert_eq!(shard_of(" 2\n"), Some(2));
        assert_eq!(shard_of("-1"), Some(-1));
        assert_eq!(shard_of(""), None);
        for hostile in [
            "abc",
            "1.5",
            "0x1",
            "1e3",
            "99999999999999999999",
            "2 3",
            "\u{0}",
        ] {
            assert_eq!(shard_of(hostile), None, "{hostile:?}");
        }
        let mut s = secret(&[("server", "https://a")]);
        if let Some(d) = s.data.as_mut() {
            d.insert("shard".into(), ByteString(vec![0xff, 0xfe]));
        }
        let c = ClusterSecret::from_secret(&s).expect("not UTF-8: the cluster is kept");
        assert_eq!(c.shard, None);
    }
}
