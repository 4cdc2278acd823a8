//! Destination clusters other than the controller's own, from Argo CD cluster Secrets
//! (label `argocd.argoproj.io/secret-type: cluster`, keys `name`, `server`, `config`,
//! `namespaces`, `clusterResources`, `shard`).
//!
//! `config` is read field by field ([`config`]); a malformed one keeps the cluster, whose
//! connection then fails with the field's name. Credentials from an exec plugin are run with
//! limits ([`exec`]) and cached per cluster ([`auth`]).

pub mod auth;
pub mod config;
pub mod exec;
pub mod manager;
pub mod record;
pub mod rotate;

use std::sync::Arc;

use kube::config::{KubeConfigOptions, Kubeconfig};
use serde_json::{Value, json};

pub use auth::{Clock, ExecAuth};
pub use config::{ClusterConfig, ConfigError, ExecProviderConfig, TlsClientConfig};
pub use exec::{ExecCredential, ExecError, ExecLimits};

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
    /// `config`, or why it cannot be used.
    pub config: std::result::Result<ClusterConfig, ConfigError>,
    /// `namespaces` (comma-separated, blanks dropped, as Argo's `SecretToCluster`): a
    /// namespaced cluster (Argo's `Cluster.Namespaces`): only these are watched and managed,
    /// and what a project-scoped cluster adds to its project's destinations. Empty: the whole
    /// cluster.
    pub namespaces: Vec<String>,
    /// `clusterResources`: whether a namespaced cluster's cluster-scoped kinds are managed.
    pub cluster_resources: bool,
    /// The Secret's resourceVersion, to notice changes.
    pub version: String,
    /// The Secret's UID: Argo CD's cluster ID, which its sharding algorithms hash.
    pub id: String,
    /// The `shard` key: pins the cluster to that controller shard (Argo CD's field).
    pub shard: Option<i64>,
    /// The `project` key: the AppProject the cluster is scoped to (empty: none, as in Argo).
    pub project: Option<String>,
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
        let config = ClusterConfig::parse(&text("config"));
        if let Err(e) = &config {
            tracing::warn!(secret = ?secret.metadata.name, "cluster Secret: {e}");
        }
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
            namespaces: parse_namespaces(&text("namespaces")),
            cluster_resources: text("clusterResources").trim() == "true",
            version: secret.metadata.resource_version.clone().unwrap_or_default(),
            id: secret.metadata.uid.clone().unwrap_or_default(),
            shard,
            project: Some(text("project")).filter(|p| !p.is_empty()),
        })
    }

    /// What part of the cluster is managed (Argo's `Cluster.Namespaces` and
    /// `Cluster.ClusterResources`): what the live cache watches and comparisons accept. A
    /// `namespaces` entry that cannot be a namespace's name (which goes into the API server's
    /// URL path) makes the cluster unusable, named by the field.
    pub fn cluster_scope(&self) -> Result<plumb_kube::ClusterScope> {
        if let Some(bad) = self.namespaces.iter().find(|n| !is_namespace_name(n)) {
            let shown: String = bad.chars().take(80).collect();
            return Err(Error::ClusterConfig {
                server: self.server.clone(),
                reason: format!(
                    "namespaces: {} is not a valid namespace name (a DNS label: at most 63 lower-case letters, digits and '-')",
                    plumb_kube::go_quote(&shown)
                ),
            });
        }
        Ok(plumb_kube::ClusterScope::namespaced(
            &self.namespaces,
            self.cluster_resources,
        ))
    }

    /// The cluster as its project's rules see it.
    pub fn scoped(&self) -> plumb_policy::project::scoped::ScopedCluster {
        plumb_policy::project::scoped::ScopedCluster {
            server: self.server.clone(),
            name: self.name.clone(),
            namespaces: self.namespaces.clone(),
        }
    }

    /// A kube client for the cluster: Argo's `config` (bearer token, basic auth, client
    /// certificate, CA, insecure, server name, proxy, exec plugin) mapped onto a kubeconfig.
    pub async fn client(&self) -> Result<kube::Client> {
        self.client_with(None).await
    }

    /// [`Self::client`] with the runner of `config.execProviderConfig` given (its limits and
    /// clock); `None`: the default one. Ignored when the cluster has no exec plugin.
    pub async fn client_with(&self, exec: Option<Arc<auth::ExecAuth>>) -> Result<kube::Client> {
        let c = self
            .config
            .as_ref()
            .map_err(|e| self.unusable(e.to_string()))?;
        let Some(plugin) = &c.exec else {
            return Ok(crate::k8s_requests::counted(
                self.plain_client(None).await?,
                &self.server,
            ));
        };
        let exec = exec.unwrap_or_else(|| {
            Arc::new(auth::ExecAuth::new(plugin.clone(), ExecLimits::default()))
        });
        // The first credential now, so a plugin that fails is reported when connecting. A
        // certificate pair goes into the TLS configuration (and a renewed one into a new
        // client); a token is added to each request (and renewed) by `auth::with_exec`.
        let first = exec
            .credential()
            .await
            .map_err(|e| self.unusable(e.to_string()))?;
        let plain = self
            .plain_client(Some(&first).filter(|c| c.client_certificate.is_some()))
            .await?;
        let this = self.clone();
        let build: auth::BuildClient = Arc::new(move |pair: Option<ExecCredential>| {
            let this = this.clone();
            Box::pin(async move { this.plain_client(pair.as_ref()).await })
        });
        let client = auth::with_exec(plain, &first, build, exec);
        Ok(crate::k8s_requests::counted(client, &self.server))
    }

    fn unusable(&self, reason: String) -> Error {
        Error::ClusterConfig {
            server: self.server.clone(),
            reason,
        }
    }

    /// The client of `config` without the exec plugin, presenting `exec_pair` if given.
    async fn plain_client(&self, exec_pair: Option<&ExecCredential>) -> Result<kube::Client> {
        let c = self
            .config
            .as_ref()
            .map_err(|e| self.unusable(e.to_string()))?;
        let kubeconfig: Kubeconfig =
            serde_json::from_value(kubeconfig_of(&self.name, &self.server, c, exec_pair))
                .map_err(|e| self.unusable(format!("unusable config: {}", e.classify_name())))?;
        let mut config =
            kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
                .await
                .map_err(|e| self.unusable(format!("unusable config: {e}")))?;
        if let Some(p) = &c.proxy_url {
            config.proxy_url = Some(
                p.parse()
                    .map_err(|_| self.unusable("config.proxyUrl: not a URL".into()))?,
            );
        }
        Ok(plumb_kube::client_from(config)?)
    }
}

trait ClassifyName {
    fn classify_name(&self) -> &'static str;
}

impl ClassifyName for serde_json::Error {
    /// The kind of a JSON error, never its text (which could quote a credential).
    fn classify_name(&self) -> &'static str {
        match self.classify() {
            serde_json::error::Category::Io => "I/O error",
            serde_json::error::Category::Syntax => "syntax error",
            serde_json::error::Category::Data => "a field has the wrong type",
            serde_json::error::Category::Eof => "truncated",
        }
    }
}

/// A Kubernetes namespace name: an RFC 1123 DNS label.
fn is_namespace_name(n: &str) -> bool {
    let ok = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    !n.is_empty()
        && n.len() <= 63
        && n.chars().all(|c| ok(c) || c == '-')
        && n.chars().next().is_some_and(ok)
        && n.chars().last().is_some_and(ok)
}

/// `namespaces`: comma-separated, as Argo stores it (order kept).
pub(crate) fn parse_namespaces(text: &str) -> Vec<String> {
    text.split(',')
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(str::to_string)
        .collect()
}

/// The kubeconfig a cluster's `config` means.
fn kubeconfig_of(
    name: &str,
    server: &str,
    c: &ClusterConfig,
    exec_pair: Option<&ExecCredential>,
) -> Value {
    let tls = &c.tls;
    let mut cluster = json!({"server": server});
    if let Some(ca) = &tls.ca_data {
        cluster["certificate-authority-data"] = json!(ca);
    }
    if tls.insecure {
        cluster["insecure-skip-tls-verify"] = json!(true);
    }
    if let Some(n) = &tls.server_name {
        cluster["tls-server-name"] = json!(n);
    }
    let mut user = json!({});
    for (value, to) in [
        (&c.bearer_token, "token"),
        (&c.username, "username"),
        (&c.password, "password"),
        (&tls.cert_data, "client-certificate-data"),
        (&tls.key_data, "client-key-data"),
    ] {
        if let Some(v) = value {
            user[to] = json!(v);
        }
    }
    if let Some(pair) = exec_pair {
        use base64::Engine as _;
        let b64 = |s: &Option<String>| {
            base64::engine::general_purpose::STANDARD.encode(s.as_deref().unwrap_or_default())
        };
        user["client-certificate-data"] = json!(b64(&pair.client_certificate));
        user["client-key-data"] = json!(b64(&pair.client_key));
    }
    json!({
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": name, "cluster": cluster}],
        "users": [{"name": name, "user": user}],
        "contexts": [{"name": name, "context": {"cluster": name, "user": name}}],
        "current-context": name,
    })
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
        let malformed =
            ClusterSecret::from_secret(&secret(&[("server", "https://a"), ("config", "{nope")]))
                .expect("kept, with the error");
        assert_eq!(malformed.config.unwrap_err().field, "");
        let unnamed =
            ClusterSecret::from_secret(&secret(&[("server", "https://a")])).expect("valid");
        assert_eq!(unnamed.name, "https://a");
    }

    /// Issue #27: `project` and `namespaces` read as Argo reads them; hostile values scope the
    /// cluster to a project no Application can name, never to every project.
    #[test]
    fn project_and_namespaces_keys() {
        let read = |pairs: &[(&str, &str)]| {
            let mut all = vec![("server", "https://a")];
            all.extend_from_slice(pairs);
            ClusterSecret::from_secret(&secret(&all)).expect("valid")
        };
        let c = read(&[("project", "team-a"), ("namespaces", " web, ,api ,")]);
        assert_eq!(c.project.as_deref(), Some("team-a"));
        assert_eq!(c.namespaces, ["web", "api"]);
        assert_eq!(c.scoped().namespaces, ["web", "api"]);
        let scope = c.cluster_scope().expect("valid names");
        assert_eq!(scope.namespaces(), ["web", "api"]);
        assert!(!scope.cluster_resources());
        let with = read(&[("namespaces", "web"), ("clusterResources", "true")]);
        assert!(with.cluster_scope().expect("valid").cluster_resources());
        // Only the exact text "true" (Argo's `string(...) == "true"`).
        let yes = read(&[("namespaces", "web"), ("clusterResources", "True")]);
        assert!(!yes.cluster_scope().expect("valid").cluster_resources());
        assert!(read(&[]).cluster_scope().expect("whole").is_whole_cluster());
        let long = "a".repeat(64);
        for hostile in [
            "../secrets",
            "a/b",
            "UPPER",
            "-a",
            "a-",
            "a.b",
            "a b",
            "\u{0}",
            long.as_str(),
        ] {
            let c = read(&[("namespaces", &format!("web,{hostile}"))]);
            let e = c.cluster_scope().expect_err(hostile).to_string();
            assert!(
                e.contains("namespaces: ") && e.contains("not a valid namespace name"),
                "{e}"
            );
            assert!(e.len() < 300, "bounded: {e}");
        }
        let huge = read(&[("namespaces", &"x".repeat(1 << 20))]);
        assert!(huge.cluster_scope().expect_err("huge").to_string().len() < 300);
        assert_eq!(read(&[("project", "")]).project, None);
        assert_eq!(read(&[]).project, None);
        for odd in ["no-such-project", "*", "a b", "../x", "\u{0}", " "] {
            assert_eq!(read(&[("project", odd)]).project.as_deref(), Some(odd));
        }
        let mut s = secret(&[("server", "https://a")]);
        if let Some(d) = s.data.as_mut() {
            d.insert("project".into(), ByteString(vec![0xff]));
        }
        // Not UTF-8: read as empty, as every other key of this Secret (the cluster is unscoped
        // but gains nothing: an unscoped cluster is permitted only by destinations).
        assert_eq!(ClusterSecret::from_secret(&s).expect("kept").project, None);
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
