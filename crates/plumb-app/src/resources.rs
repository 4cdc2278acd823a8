//! Where Applications and AppProjects live: their API resources, and the namespaces
//! Applications may be created in (`application.namespaces` of `argocd-cmd-params-cm`).

use kube::api::{Api, ApiResource};

use crate::error::{Error, Result};

/// The `argoproj.io/v1alpha1` applications resource.
pub fn application_resource() -> ApiResource {
    ApiResource {
        group: "argoproj.io".into(),
        version: "v1alpha1".into(),
        api_version: "argoproj.io/v1alpha1".into(),
        kind: "Application".into(),
        plural: "applications".into(),
    }
}

/// The `argoproj.io/v1alpha1` appprojects resource.
pub fn appproject_resource() -> ApiResource {
    ApiResource {
        group: "argoproj.io".into(),
        version: "v1alpha1".into(),
        api_version: "argoproj.io/v1alpha1".into(),
        kind: "AppProject".into(),
        plural: "appprojects".into(),
    }
}

/// The name of Argo CD's ConfigMap of command-line parameters.
pub const CMD_PARAMS_CONFIGMAP: &str = "argocd-cmd-params-cm";
/// Its key listing the namespaces Applications may live in.
pub const APPLICATION_NAMESPACES_KEY: &str = "application.namespaces";

/// Splits a comma-separated namespace list (`--application-namespaces`,
/// `application.namespaces`): entries trimmed, empty ones dropped.
pub fn parse_namespace_list(text: &str) -> Vec<String> {
    text.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// `application.namespaces` of `argocd-cmd-params-cm` in `control_namespace` (absent ConfigMap
/// or key: none). The controller and `plumb server` read it at start.
pub async fn application_namespaces(
    client: &kube::Client,
    control_namespace: &str,
) -> Result<Vec<String>> {
    let api: Api<k8s_openapi::api::core::v1::ConfigMap> =
        Api::namespaced(client.clone(), control_namespace);
    let cm = api
        .get_opt(CMD_PARAMS_CONFIGMAP)
        .await
        .map_err(|source| Error::Api {
            what: format!("reading ConfigMap {CMD_PARAMS_CONFIGMAP}"),
            source: Box::new(source),
        })?;
    Ok(cm
        .and_then(|cm| cm.data)
        .and_then(|d| d.get(APPLICATION_NAMESPACES_KEY).cloned())
        .map(|v| parse_namespace_list(&v))
        .unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespace_lists_as_argo_writes_them() {
        assert_eq!(
            parse_namespace_list("app-team-one, app-team-two"),
            vec!["app-team-one", "app-team-two"]
        );
        assert_eq!(
            parse_namespace_list(" , team-*,,/^t-[0-9]+$/ "),
            vec!["team-*", "/^t-[0-9]+$/"]
        );
        assert!(parse_namespace_list("").is_empty());
    }
}
