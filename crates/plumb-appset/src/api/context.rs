//! The generators' [`Context`] for a preview (`plumb appset generate`/`diff` in core mode, the
//! server's generate and dry-run routes): a Git cache of its own under `cache_dir`.

use std::path::Path;
use std::sync::Arc;

use crate::{Context, Limits};

use super::ApiError;

/// A context reading through `client` with settings and cluster Secrets of
/// `control_namespace`. Git is read without the repository Secrets' credentials: a preview of
/// a set whose generators read a private repository needs the controller (or a later change
/// feeding the credentials in).
pub async fn preview_context(
    client: kube::Client,
    control_namespace: &str,
    cache_dir: &Path,
) -> Result<Context, ApiError> {
    let scm = scm_settings(&client, control_namespace).await?;
    let git = plumb_source::GitCache::new(cache_dir.join("git"), plumb_source::Limits::default())
        .map_err(|e| {
        ApiError::Invalid(format!(
            "preparing the Git cache in {}: {e}",
            cache_dir.display()
        ))
    })?;
    let limits = Limits::default();
    let http = reqwest::Client::builder()
        .timeout(limits.http_timeout)
        .build()
        .map_err(|e| ApiError::Invalid(format!("building the HTTP client: {e}")))?;
    Ok(Context {
        client,
        control_namespace: control_namespace.to_string(),
        git: Arc::new(git),
        http,
        limits,
        scm,
    })
}

/// The forges previews may call: the same `applicationsetcontroller.*` keys of
/// `argocd-cmd-params-cm` the controller honours, so a preview never calls a forge the
/// controller may not (fail closed: an unreadable ConfigMap or value is an error).
async fn scm_settings(
    client: &kube::Client,
    control_namespace: &str,
) -> Result<crate::ScmSettings, ApiError> {
    let api: kube::Api<k8s_openapi::api::core::v1::ConfigMap> =
        kube::Api::namespaced(client.clone(), control_namespace);
    let data = match api.get_opt("argocd-cmd-params-cm").await {
        Ok(cm) => cm.and_then(|cm| cm.data).unwrap_or_default(),
        Err(source) => {
            return Err(ApiError::Kube {
                context: format!("reading argocd-cmd-params-cm in {control_namespace}"),
                source,
            });
        }
    };
    crate::controller::Config::from_cmd_params(control_namespace, &data)
        .map(|c| c.scm)
        .map_err(ApiError::Invalid)
}
