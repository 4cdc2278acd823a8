//! Destinations other than the local cluster, found in the Argo CD cluster Secrets of the
//! control namespace.

use anyhow::{Context, Result, bail};
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, ListParams};
use plumb_app::{CLUSTER_SECRET_LABEL, ClusterSecret};

/// `(server, name)` of the cluster Secret that names `server` (or, without one, `name`). A name
/// no cluster has is Argo's error; a server no cluster Secret describes keeps an empty name.
pub(crate) async fn find_cluster(
    kube: &kube::Client,
    namespace: &str,
    server: &str,
    name: &str,
) -> Result<(String, String)> {
    let secrets: Api<Secret> = Api::namespaced(kube.clone(), namespace);
    let list = secrets
        .list(&ListParams::default().labels(CLUSTER_SECRET_LABEL))
        .await
        .with_context(|| format!("listing cluster Secrets in namespace '{namespace}'"))?;
    let clusters: Vec<ClusterSecret> = list
        .items
        .iter()
        .filter_map(ClusterSecret::from_secret)
        .collect();
    let found = clusters.iter().find(|c| {
        if server.is_empty() {
            c.name == name
        } else {
            c.server == server
        }
    });
    match found {
        Some(c) => Ok((c.server.clone(), c.name.clone())),
        None if server.is_empty() => {
            bail!("unable to find destination server: there are no clusters with this name: {name}")
        }
        None => Ok((server.to_string(), String::new())),
    }
}
