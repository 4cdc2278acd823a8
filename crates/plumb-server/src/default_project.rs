//! The `default` AppProject, created at the server's start when it is missing, as argocd-server's
//! `initializeDefaultProject` does. Never updated: an installation that narrowed its `default`
//! project keeps it narrowed (install.yaml ships no AppProject, so applying it over a running
//! Argo CD cannot widen one either).

use kube::api::{Api, DynamicObject, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::json;

use crate::error::{Error, Result};

/// Argo CD's default project: any source, any destination, any kind.
fn default_project(ns: &str) -> serde_json::Value {
    json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "AppProject",
        "metadata": {"name": "default", "namespace": ns},
        "spec": {
            "sourceRepos": ["*"],
            "destinations": [{"server": "*", "namespace": "*"}],
            "clusterResourceWhitelist": [{"group": "*", "kind": "*"}],
        },
    })
}

/// Creates `default` in `ns` unless an AppProject of that name exists (whatever it says).
pub(crate) async fn ensure(client: &kube::Client, ns: &str) -> Result<()> {
    let gvk = GroupVersionKind::gvk("argoproj.io", "v1alpha1", "AppProject");
    let api: Api<DynamicObject> =
        Api::namespaced_with(client.clone(), ns, &ApiResource::from_gvk(&gvk));
    let context = || format!("creating the default AppProject in namespace {ns}");
    if api
        .get_opt("default")
        .await
        .map_err(|e| Error::kube(context(), e))?
        .is_some()
    {
        return Ok(());
    }
    let project: DynamicObject = serde_json::from_value(default_project(ns))
        .map_err(|e| Error::Internal(format!("{}: {e}", context())))?;
    match api.create(&PostParams::default(), &project).await {
        Ok(_) => {
            tracing::info!(namespace = ns, "created the default AppProject");
            Ok(())
        }
        // Another replica (or Argo CD's server) created it first.
        Err(kube::Error::Api(s)) if s.code == 409 => Ok(()),
        Err(e) => Err(Error::kube(context(), e)),
    }
}
