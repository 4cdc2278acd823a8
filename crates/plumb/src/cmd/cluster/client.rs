//! The two back ends of `plumb cluster`: the cluster Secrets of the control namespace with the
//! user's kubeconfig (core mode; the connection state measured by the CLI itself), or
//! `plumb server`'s ClusterService (`/api/v1/clusters`). Both answer Argo's sanitized
//! `Cluster` JSON.

use std::time::Duration;

use anyhow::{Context, Result, bail};
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, ListParams, PostParams};
use plumb_app::clusters::record;
use plumb_app::{ClusterSecret, IN_CLUSTER_NAME, IN_CLUSTER_SERVER};
use serde_json::{Value, json};

use crate::cmd::app::ConnArgs;
use crate::cmd::remote::{ServerClient, enc};

/// How long a connection check may take per cluster.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Clusters of one control namespace.
pub enum ClusterClient {
    /// Core mode.
    Kube {
        /// The control plane's client.
        client: kube::Client,
        /// The control namespace.
        namespace: String,
    },
    /// Through `plumb server`.
    Server(ServerClient),
}

/// Argo's `getQueryBySelector`: a URL is a server, anything else a name.
pub fn is_server(selector: &str) -> bool {
    selector.starts_with("https://") || selector.starts_with("http://")
}

fn in_cluster() -> Value {
    json!({"server": IN_CLUSTER_SERVER, "name": IN_CLUSTER_NAME,
           "config": {"tlsClientConfig": {"insecure": false}}})
}

impl ClusterClient {
    /// Core mode with the kubeconfig flags.
    pub async fn connect(args: &ConnArgs, namespace: &str) -> Result<Self> {
        let source = plumb_kube::KubeconfigSource::from_option(args.kubeconfig.as_deref());
        let client = plumb_kube::connect(&source)
            .await
            .context("connecting to the cluster")?;
        Ok(Self::Kube {
            client,
            namespace: namespace.to_string(),
        })
    }

    /// Through `plumb server`.
    pub fn through_server(server: ServerClient) -> Self {
        Self::Server(server)
    }

    pub(super) async fn secrets(&self) -> Result<Vec<Secret>> {
        let Self::Kube { client, namespace } = self else {
            return Ok(Vec::new());
        };
        let api: Api<Secret> = Api::namespaced(client.clone(), namespace);
        Ok(api
            .list(&ListParams::default().labels(plumb_app::CLUSTER_SECRET_LABEL))
            .await
            .with_context(|| format!("listing cluster Secrets in namespace {namespace}"))?
            .items)
    }

    /// The cluster Secret a selector (server URL or name) names, in core mode.
    pub(super) async fn find_secret(&self, selector: &str) -> Result<Option<Secret>> {
        let key = if is_server(selector) {
            "server"
        } else {
            "name"
        };
        Ok(self
            .secrets()
            .await?
            .into_iter()
            .find(|s| record::sanitized(s)[key].as_str() == Some(selector.trim_end_matches('/'))))
    }

    /// The API path of a selector: the server URL, or the name with `id.type=name`.
    pub(super) fn path_of(selector: &str, suffix: &str) -> String {
        if is_server(selector) {
            format!("/api/v1/clusters/{}{suffix}", enc(selector))
        } else {
            format!("/api/v1/clusters/{}{suffix}?id.type=name", enc(selector))
        }
    }

    /// Every cluster, in-cluster first, then by server URL, with its connection state.
    pub async fn list(&self) -> Result<Vec<Value>> {
        if let Self::Server(s) = self {
            let list = s.get("/api/v1/clusters").await?;
            return Ok(list["items"].as_array().cloned().unwrap_or_default());
        }
        let secrets = self.secrets().await?;
        let mut views: Vec<(Option<&Secret>, Value)> = secrets
            .iter()
            .map(|s| (Some(s), record::sanitized(s)))
            .collect();
        views.sort_by(|a, b| a.1["server"].as_str().cmp(&b.1["server"].as_str()));
        if !views.iter().any(|(_, v)| v["server"] == IN_CLUSTER_SERVER) {
            views.insert(0, (None, in_cluster()));
        }
        let checks = views.into_iter().map(|(s, v)| self.with_connection(s, v));
        Ok(futures::future::join_all(checks).await)
    }

    /// The cluster a selector (server URL or name) names.
    pub async fn get(&self, selector: &str) -> Result<Value> {
        if let Self::Server(s) = self {
            let path = if is_server(selector) {
                format!("/api/v1/clusters/{}", enc(selector))
            } else {
                format!("/api/v1/clusters/{}?id.type=name", enc(selector))
            };
            return s.get(&path).await;
        }
        let key = if is_server(selector) {
            "server"
        } else {
            "name"
        };
        let secrets = self.secrets().await?;
        let found = secrets
            .iter()
            .map(|s| (Some(s), record::sanitized(s)))
            .find(|(_, v)| v[key].as_str() == Some(selector.trim_end_matches('/')));
        let (secret, view) = match found {
            Some(f) => f,
            None if in_cluster()[key] == selector => (None, in_cluster()),
            None => bail!("cluster {selector:?} not found"),
        };
        Ok(self.with_connection(secret, view).await)
    }

    /// `connectionState`, `serverVersion` and `info` of one cluster, measured now.
    async fn with_connection(&self, secret: Option<&Secret>, mut view: Value) -> Value {
        let Self::Kube { client, .. } = self else {
            return view;
        };
        let probe = async {
            let c = match secret {
                None => client.clone(),
                Some(s) => {
                    let parsed = ClusterSecret::from_secret(s)
                        .ok_or_else(|| anyhow::anyhow!("the cluster Secret has no server"))?;
                    parsed
                        .client()
                        .await
                        .map_err(|e| anyhow::anyhow!(plumb_app::chain(&e)))?
                }
            };
            let v = c.apiserver_version().await?;
            anyhow::Ok(format!("{}.{}", v.major, v.minor.trim_end_matches('+')))
        };
        let state = match tokio::time::timeout(CONNECT_TIMEOUT, probe).await {
            Ok(Ok(v)) => {
                view["serverVersion"] = json!(v);
                json!({"status": "Successful"})
            }
            Ok(Err(e)) => json!({"status": "Failed", "message": format!("{e:#}")}),
            Err(_) => json!({"status": "Failed", "message": "the cluster did not answer in time"}),
        };
        view["connectionState"] = state.clone();
        view["info"] = json!({"connectionState": state, "serverVersion": view["serverVersion"]});
        view
    }

    /// Argo's `ClusterService.Create`: the cluster stored (the same spec again is fine; another
    /// spec for the same server needs `upsert`).
    pub async fn create(&self, cluster: &Value, upsert: bool) -> Result<Value> {
        let namespace = match self {
            Self::Server(s) => {
                let q = if upsert { "?upsert=true" } else { "" };
                return s.post(&format!("/api/v1/clusters{q}"), cluster).await;
            }
            Self::Kube { namespace, .. } => namespace.clone(),
        };
        let Self::Kube { client, .. } = self else {
            bail!("unreachable")
        };
        let server = cluster["server"].as_str().unwrap_or_default();
        let name = record::secret_name(server).map_err(|e| anyhow::anyhow!(e.0))?;
        let mut fresh = Secret::default();
        fresh.metadata.name = Some(name.clone());
        let secret = record::to_secret(cluster, fresh).map_err(|e| anyhow::anyhow!(e.0))?;
        let existing = self
            .secrets()
            .await?
            .into_iter()
            .find(|s| record::sanitized(s)["server"] == server.trim_end_matches('/'));
        let api: Api<Secret> = Api::namespaced(client.clone(), &namespace);
        let stored = match existing {
            None => api
                .create(&PostParams::default(), &secret)
                .await
                .with_context(|| format!("creating cluster Secret {namespace}/{name}"))?,
            Some(old) if record::unsanitized(&old) == record::unsanitized(&secret) => old,
            Some(old) if upsert => {
                let old_name = old.metadata.name.clone().unwrap_or_default();
                let updated = record::to_secret(cluster, old).map_err(|e| anyhow::anyhow!(e.0))?;
                api.replace(&old_name, &PostParams::default(), &updated)
                    .await
                    .with_context(|| format!("updating cluster Secret {namespace}/{old_name}"))?
            }
            Some(_) => bail!("existing cluster spec is different; use upsert flag to force update"),
        };
        Ok(record::sanitized(&stored))
    }

    /// Argo's `DeleteCluster`: the Secret deleted when Argo (or Plumb) made it, else only
    /// unlabelled.
    pub async fn delete(&self, selector: &str) -> Result<()> {
        let (client, namespace) = match self {
            Self::Server(s) => {
                s.delete(&Self::path_of(selector, "")).await?;
                return Ok(());
            }
            Self::Kube { client, namespace } => (client, namespace),
        };
        let Some(secret) = self.find_secret(selector).await? else {
            bail!("cluster {selector:?} not found");
        };
        let name = secret.metadata.name.clone().unwrap_or_default();
        let api: Api<Secret> = Api::namespaced(client.clone(), namespace);
        plumb_app::argo_secrets::delete_or_unlabel(&api, &secret)
            .await
            .with_context(|| format!("deleting cluster Secret {namespace}/{name}"))?;
        Ok(())
    }
}
