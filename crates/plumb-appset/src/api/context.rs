//! The generators' [`Context`] for a preview (`plumb appset generate`/`diff` in core mode, the
//! server's generate and dry-run routes): a Git cache of its own under `cache_dir`.

use std::path::Path;
use std::sync::Arc;

use crate::{Context, Limits};

use super::ApiError;

/// A context reading through `client` with settings and cluster Secrets of
/// `control_namespace`. Call [`load_repositories`] before each preview so Git is read with the
/// repository Secrets' credentials as they are now.
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

/// The label selector of Argo's repository Secrets and credential templates.
const REPOSITORY_SECRETS: &str = "argocd.argoproj.io/secret-type in (repository,repo-creds)";

/// Argo's ConfigMap of repository CA certificates.
const TLS_CERTS_CM: &str = "argocd-tls-certs-cm";

/// Hands the repository Secrets (and `repo-creds` templates) and CA certificates of the control
/// namespace to the context's Git cache, as the controller's renderer has them, so a preview
/// reads a private repository as the controller would (Argo's server generates with its
/// repo-server, credentials included). A Secret not in Argo's format is kept as unusable: a
/// fetch of its URL fails naming the field, never going without credentials. When the caller
/// may not list Secrets (a kubeconfig without the right), previews read public repositories
/// only: a fetch of a private one fails naming it.
pub async fn load_repositories(ctx: &Context) -> Result<(), ApiError> {
    use k8s_openapi::api::core::v1::Secret;
    let ns = &ctx.control_namespace;
    let secrets: kube::Api<Secret> = kube::Api::namespaced(ctx.client.clone(), ns);
    let listed = secrets
        .list(&kube::api::ListParams::default().labels(REPOSITORY_SECRETS))
        .await;
    let mut credentials = Vec::new();
    match listed {
        Ok(list) => {
            for secret in &list.items {
                let Ok(value) = serde_json::to_value(secret) else {
                    continue;
                };
                match plumb_source::RepoCredentials::from_secret(&value) {
                    Ok(c) => credentials.push(c),
                    Err(e) => {
                        credentials.extend(plumb_source::RepoCredentials::unusable(&value, &e))
                    }
                }
            }
        }
        Err(kube::Error::Api(ae)) if ae.code == 403 => {
            tracing::debug!(
                "repository Secrets of {ns} not readable: previews without credentials"
            );
        }
        Err(source) => {
            return Err(ApiError::Kube {
                context: format!("listing repository Secrets in {ns}"),
                source,
            });
        }
    }
    let certs = config_map(ctx, TLS_CERTS_CM)
        .await?
        .map(|v| plumb_source::TlsCerts::from_config_map(&v))
        .unwrap_or_default();
    let known_hosts = config_map(ctx, plumb_source::KNOWN_HOSTS_CM)
        .await?
        .map(|v| plumb_source::KnownHosts::from_config_map(&v))
        .unwrap_or_default();
    let git = ctx.git.git();
    git.set_tls_certs(certs);
    git.set_known_hosts(known_hosts);
    git.set_credentials(credentials);
    Ok(())
}

/// The ConfigMap `name` of the control namespace as JSON (none when missing or not readable).
async fn config_map(ctx: &Context, name: &str) -> Result<Option<serde_json::Value>, ApiError> {
    let cms: kube::Api<k8s_openapi::api::core::v1::ConfigMap> =
        kube::Api::namespaced(ctx.client.clone(), &ctx.control_namespace);
    match cms.get_opt(name).await {
        Ok(cm) => Ok(cm.and_then(|cm| serde_json::to_value(cm).ok())),
        Err(kube::Error::Api(ae)) if ae.code == 403 => Ok(None),
        Err(source) => Err(ApiError::Kube {
            context: format!("reading {name} in {}", ctx.control_namespace),
            source,
        }),
    }
}
