//! A destination resolved to both its server URL and its cluster name, which project checks
//! need (an AppProject may list either): the local cluster under its two aliases, other clusters
//! from Argo CD cluster Secrets in the control namespace.

use anyhow::{Context, Result, bail};
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, ListParams};
use plumb_app::{CLUSTER_SECRET_LABEL, ClusterSecret, IN_CLUSTER_NAME, IN_CLUSTER_SERVER};
use plumb_model::application::ApplicationDestination;

use super::client::AppClient;

/// `(server, name)` of the destination. A name no cluster has is Argo's error; a server no
/// cluster Secret describes keeps an empty name.
pub async fn resolve(
    client: &AppClient,
    dest: &ApplicationDestination,
) -> Result<(String, String)> {
    let server = dest.server.as_deref().unwrap_or_default();
    let name = dest.name.as_deref().unwrap_or_default();
    if let Some(pair) = local(server, name) {
        return Ok(pair);
    }
    if server.is_empty() && name.is_empty() {
        return Ok((String::new(), String::new()));
    }
    if client.server().is_some() {
        // Through plumb server there are no cluster Secrets to read: the destination as given
        // (the server and the controller check it against the project).
        return Ok((server.to_string(), name.to_string()));
    }
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

fn local(server: &str, name: &str) -> Option<(String, String)> {
    let is_local = (server == IN_CLUSTER_SERVER && (name.is_empty() || name == IN_CLUSTER_NAME))
        || (server.is_empty() && name == IN_CLUSTER_NAME);
    is_local.then(|| (IN_CLUSTER_SERVER.to_string(), IN_CLUSTER_NAME.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_local_cluster_has_both_aliases() {
        let pair = Some((IN_CLUSTER_SERVER.to_string(), IN_CLUSTER_NAME.to_string()));
        assert_eq!(local("https://kubernetes.default.svc", ""), pair);
        assert_eq!(local("", "in-cluster"), pair);
        assert_eq!(local("https://kubernetes.default.svc", "in-cluster"), pair);
        assert_eq!(local("", "prod-eu"), None);
        assert_eq!(local("https://prod-eu.k8s.acme.internal:6443", ""), None);
    }
}
