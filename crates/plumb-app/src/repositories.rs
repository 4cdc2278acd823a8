//! Repository access for renders: Argo CD repository Secrets (`argocd.argoproj.io/secret-type:
//! repository` and `repo-creds`, Git and Helm alike) and the `argocd-tls-certs-cm` ConfigMap of CA
//! certificates, read from the control namespace and handed to the renderer whenever they change.
//!
//! A Secret that is not in Argo's format is skipped with a warning naming it (never its values);
//! the others still apply.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use futures::TryStreamExt;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{Api, ListParams};
use kube::runtime::watcher;
use plumb_source::{Renderer, RepoCredentials, TlsCerts};

/// Label selector of the Secrets that describe repositories.
pub const REPOSITORY_SECRETS: &str = "argocd.argoproj.io/secret-type in (repository,repo-creds)";

/// Argo CD's ConfigMap of repository CA certificates (one key per host name).
pub const TLS_CERTS_CM: &str = "argocd-tls-certs-cm";

/// The repository Secrets and certificates as last seen.
#[derive(Default)]
pub struct Repositories {
    secrets: BTreeMap<String, RepoCredentials>,
    certs: TlsCerts,
}

impl Repositories {
    /// Takes in a Secret (added or changed); true when what renders use changed.
    fn apply_secret(&mut self, s: &Secret) -> bool {
        let name = s.metadata.name.clone().unwrap_or_default();
        let parsed = serde_json::to_value(s)
            .ok()
            .and_then(|v| match RepoCredentials::from_secret(&v) {
                Ok(c) => Some(c),
                Err(e) => {
                    tracing::warn!(secret = %name, "repository Secret skipped: {e}");
                    None
                }
            });
        match parsed {
            Some(c) if self.secrets.get(&name) != Some(&c) => {
                self.secrets.insert(name, c);
                true
            }
            Some(_) => false,
            None => self.secrets.remove(&name).is_some(),
        }
    }

    fn push(&self, renderer: &Renderer) {
        renderer.set_repositories(self.secrets.values().cloned().collect(), self.certs.clone());
    }
}

fn certs_of(cm: &ConfigMap) -> TlsCerts {
    serde_json::to_value(cm)
        .map(|v| TlsCerts::from_config_map(&v))
        .unwrap_or_default()
}

/// Reads the Secrets and certificates once (at start, before the first reconcile) and gives
/// them to `renderer`. Failures are logged: renders then go without credentials until the
/// watcher gets them.
pub async fn load(client: &kube::Client, namespace: &str, renderer: &Renderer) {
    let mut repos = Repositories::default();
    let secrets: Api<Secret> = Api::namespaced(client.clone(), namespace);
    match secrets
        .list(&ListParams::default().labels(REPOSITORY_SECRETS))
        .await
    {
        Ok(list) => {
            for s in &list.items {
                repos.apply_secret(s);
            }
        }
        Err(e) => tracing::warn!("listing repository Secrets: {e}"),
    }
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), namespace);
    match cms.get_opt(TLS_CERTS_CM).await {
        Ok(Some(cm)) => repos.certs = certs_of(&cm),
        Ok(None) => {}
        Err(e) => tracing::warn!("reading ConfigMap {TLS_CERTS_CM}: {e}"),
    }
    repos.push(renderer);
}

/// Watches both and calls `changed` after handing the new set to `renderer`.
pub async fn watch(
    client: kube::Client,
    namespace: String,
    renderer: Arc<Renderer>,
    changed: impl Fn() + Send + 'static,
) {
    let secrets: Api<Secret> = Api::namespaced(client.clone(), &namespace);
    let cms: Api<ConfigMap> = Api::namespaced(client, &namespace);
    let mut secret_events = std::pin::pin!(watcher::watcher(
        secrets,
        watcher::Config::default().labels(REPOSITORY_SECRETS)
    ));
    let mut cm_events = std::pin::pin!(watcher::watcher(
        cms,
        watcher::Config::default().fields(&format!("metadata.name={TLS_CERTS_CM}"))
    ));
    let mut repos = Repositories::default();
    loop {
        let updated = tokio::select! {
            ev = secret_events.try_next() => match ev {
                Ok(Some(watcher::Event::Apply(s) | watcher::Event::InitApply(s))) => repos.apply_secret(&s),
                Ok(Some(watcher::Event::Delete(s))) => repos
                    .secrets
                    .remove(&s.metadata.name.clone().unwrap_or_default())
                    .is_some(),
                Ok(Some(_)) => false,
                Ok(None) => return,
                Err(e) => {
                    tracing::warn!("watching repository Secrets: {e}");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    false
                }
            },
            ev = cm_events.try_next() => match ev {
                Ok(Some(watcher::Event::Apply(cm) | watcher::Event::InitApply(cm))) => {
                    let certs = certs_of(&cm);
                    let differs = certs != repos.certs;
                    repos.certs = certs;
                    differs
                }
                Ok(Some(watcher::Event::Delete(_))) => {
                    let differs = repos.certs != TlsCerts::default();
                    repos.certs = TlsCerts::default();
                    differs
                }
                Ok(Some(_)) => false,
                Ok(None) => return,
                Err(e) => {
                    tracing::warn!("watching {TLS_CERTS_CM}: {e}");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    false
                }
            },
        };
        if updated {
            repos.push(&renderer);
            tracing::info!(
                repositories = repos.secrets.len(),
                "repository credentials reloaded"
            );
            changed();
        }
    }
}
