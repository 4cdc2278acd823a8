//! The live objects an Application manages, for the commands that act on them (`actions`,
//! `patch-resource`, `delete-resource`): the resources of `status.resources` (hooks left out, as
//! Argo's `ManagedResources`) read from the destination cluster, and Argo's resource filter
//! (`cmd/util/app.go: FilterResources`) with its errors.

use std::sync::Arc;

use anyhow::{Context, Result, bail};
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DynamicObject, ListParams};
use plumb_app::{CLUSTER_SECRET_LABEL, ClusterSecret, IN_CLUSTER_NAME, IN_CLUSTER_SERVER};
use plumb_kube::{ApiDiscovery, ApiKind};
use plumb_model::application::Application;
use plumb_model::{GroupKind, ResourceKey};
use serde_json::Value;

use crate::cmd::app::client::AppClient;

/// `--group`, `--kind`, `--namespace`, `--resource-name` of the resource commands.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ResourceFilterArgs {
    /// Name of resource.
    #[arg(long = "resource-name", value_name = "NAME")]
    pub resource_name: Option<String>,
    /// Kind.
    #[arg(long, value_name = "KIND")]
    pub kind: Option<String>,
    /// Group (given, even empty, it must match: `--group ''` is the core group).
    #[arg(long, value_name = "GROUP")]
    pub group: Option<String>,
    /// Namespace.
    #[arg(long, value_name = "NAMESPACE")]
    pub namespace: Option<String>,
}

/// One managed object as it is live.
#[derive(Debug, Clone)]
pub struct LiveResource {
    /// Group, kind, namespace, name.
    pub key: ResourceKey,
    /// The live object.
    pub live: Value,
}

/// The destination cluster of an Application, with discovery.
pub struct Destination {
    /// Server URL.
    pub server: String,
    /// Cluster name.
    pub name: String,
    /// What the cluster serves.
    pub discovery: Arc<ApiDiscovery>,
}

impl Destination {
    /// The dynamic API of an object's kind (resolved through discovery), scoped to its
    /// namespace when the kind is namespaced.
    pub async fn api(
        &self,
        key: &ResourceKey,
        version: Option<&str>,
    ) -> Result<(ApiKind, Api<DynamicObject>)> {
        let kind = self
            .discovery
            .resolve(
                &GroupKind::new(key.group.clone(), key.kind.clone()),
                version,
            )
            .await
            .with_context(|| format!("looking up kind {} on {}", key.group_kind(), self.server))?;
        let client = self.discovery.client().clone();
        let api = if kind.namespaced {
            Api::namespaced_with(client, &key.namespace, &kind.resource)
        } else {
            Api::all_with(client, &kind.resource)
        };
        Ok((kind, api))
    }
}

/// Connects to the Application's destination: the kubeconfig's cluster for `in-cluster`, else
/// the Argo CD cluster Secret of the control namespace that names it.
pub async fn destination(client: &AppClient, app: &Application) -> Result<Destination> {
    let (server, name) =
        crate::cmd::app::cluster::destination::resolve(client, &app.spec.destination).await?;
    let kube = if server == IN_CLUSTER_SERVER || name == IN_CLUSTER_NAME {
        client.kube()?.clone()
    } else {
        let secrets: Api<Secret> = Api::namespaced(client.kube()?.clone(), client.namespace());
        let list = secrets
            .list(&ListParams::default().labels(CLUSTER_SECRET_LABEL))
            .await
            .with_context(|| {
                format!(
                    "listing cluster Secrets in namespace '{}'",
                    client.namespace()
                )
            })?;
        let cluster = list
            .items
            .iter()
            .filter_map(ClusterSecret::from_secret)
            .find(|c| c.server == server)
            .with_context(|| format!("no cluster Secret describes destination server {server}"))?;
        cluster
            .client()
            .await
            .with_context(|| format!("connecting to cluster {server}"))?
    };
    let discovery = Arc::new(
        ApiDiscovery::new(kube)
            .await
            .with_context(|| format!("discovering the APIs of {server}"))?,
    );
    Ok(Destination {
        server,
        name,
        discovery,
    })
}

/// The Application's managed resources as they are live, sorted by group, kind, namespace and
/// name; resources that do not exist live are left out.
pub async fn live_resources(dest: &Destination, app: &Application) -> Result<Vec<LiveResource>> {
    let mut keys: Vec<(ResourceKey, Option<String>)> = app
        .status
        .iter()
        .flat_map(|s| s.resources.iter().flatten())
        .filter(|r| r.hook != Some(true))
        .map(|r| {
            (
                ResourceKey::new(
                    r.group.clone().unwrap_or_default(),
                    r.kind.clone().unwrap_or_default(),
                    r.namespace.clone().unwrap_or_default(),
                    r.name.clone().unwrap_or_default(),
                ),
                r.version.clone(),
            )
        })
        .collect();
    keys.sort_by(|a, b| a.0.cmp(&b.0));
    keys.dedup_by(|a, b| a.0 == b.0);
    let mut out = Vec::new();
    for (key, version) in keys {
        let (kind, api) = match dest.api(&key, version.as_deref()).await {
            Ok(found) => found,
            Err(e) => {
                tracing::debug!("{e:#}");
                continue;
            }
        };
        let Some(obj) = api
            .get_opt(&key.name)
            .await
            .with_context(|| format!("reading {key}"))?
        else {
            continue;
        };
        let mut live = serde_json::to_value(obj)?;
        live["apiVersion"] = Value::from(kind.resource.api_version.clone());
        live["kind"] = Value::from(kind.resource.kind.clone());
        out.push(LiveResource { key, live });
    }
    Ok(out)
}

/// Argo's `FilterResources`: the resources matching every given filter; none is `No matching
/// resource found`, several without `all` is Argo's `--all` hint.
pub fn filter(
    resources: Vec<LiveResource>,
    f: &ResourceFilterArgs,
    all: bool,
) -> Result<Vec<LiveResource>> {
    let found: Vec<LiveResource> = resources
        .into_iter()
        .filter(|r| f.group.as_deref().is_none_or(|g| g == r.key.group))
        .filter(|r| given(&f.namespace).is_none_or(|n| n == r.key.namespace))
        .filter(|r| given(&f.resource_name).is_none_or(|n| n == r.key.name))
        .filter(|r| given(&f.kind).is_none_or(|k| k == r.key.kind))
        .collect();
    if found.is_empty() {
        bail!("No matching resource found");
    }
    if found.len() > 1 && !all {
        bail!("Multiple resources match inputs. Use the --all flag to patch multiple resources");
    }
    Ok(found)
}

fn given(o: &Option<String>) -> Option<&str> {
    o.as_deref().filter(|s| !s.is_empty())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn res(group: &str, kind: &str, ns: &str, name: &str) -> LiveResource {
        LiveResource {
            key: ResourceKey::new(group, kind, ns, name),
            live: json!({}),
        }
    }

    fn sample() -> Vec<LiveResource> {
        vec![
            res("", "Service", "shop", "api"),
            res("apps", "Deployment", "shop", "api"),
            res("apps", "Deployment", "shop", "worker"),
            res("extensions.example.io", "Deployment", "shop", "api"),
        ]
    }

    fn names(found: &[LiveResource]) -> Vec<String> {
        found.iter().map(|r| r.key.to_string()).collect()
    }

    #[test]
    fn filters_as_argo() {
        let f = ResourceFilterArgs {
            kind: Some("Deployment".into()),
            resource_name: Some("worker".into()),
            ..Default::default()
        };
        assert_eq!(filter(sample(), &f, false).unwrap().len(), 1);
        let f = ResourceFilterArgs {
            kind: Some("Deployment".into()),
            resource_name: Some("api".into()),
            ..Default::default()
        };
        let err = filter(sample(), &f, false).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Multiple resources match inputs. Use the --all flag to patch multiple resources"
        );
        assert_eq!(filter(sample(), &f, true).unwrap().len(), 2);
        let f = ResourceFilterArgs {
            kind: Some("Deployment".into()),
            resource_name: Some("api".into()),
            group: Some("apps".into()),
            ..Default::default()
        };
        assert_eq!(names(&filter(sample(), &f, false).unwrap()).len(), 1);
        let f = ResourceFilterArgs {
            group: Some(String::new()),
            ..Default::default()
        };
        assert_eq!(filter(sample(), &f, true).unwrap()[0].key.kind, "Service");
        let f = ResourceFilterArgs {
            kind: Some("Secret".into()),
            ..Default::default()
        };
        assert_eq!(
            filter(sample(), &f, true).unwrap_err().to_string(),
            "No matching resource found"
        );
    }
}
