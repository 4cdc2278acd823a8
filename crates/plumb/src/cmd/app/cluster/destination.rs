//! A destination resolved to both its server URL and its cluster name, which project checks
//! need (an AppProject may list either): the local cluster under its two aliases, other clusters
//! as the backend finds them (core mode: Argo CD cluster Secrets in the control namespace;
//! through plumb server: as given, the server checks them).

use anyhow::Result;
use plumb_app::{IN_CLUSTER_NAME, IN_CLUSTER_SERVER};
use plumb_model::application::ApplicationDestination;

use crate::cmd::app::client::AppClient;

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
    client.find_cluster(server, name).await
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
