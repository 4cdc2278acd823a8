//! Repository access for renders: Argo CD repository Secrets (`argocd.argoproj.io/secret-type:
//! repository` and `repo-creds`, Git and Helm alike), the `argocd-tls-certs-cm` ConfigMap of CA
//! certificates and the `argocd-ssh-known-hosts-cm` ConfigMap of SSH host keys, read from the
//! control namespace and handed to the renderer whenever they change.
//!
//! A Secret that is not in Argo's format is logged with a warning naming it (never its values)
//! and kept as unusable: a fetch of its URL fails with that reason, naming the field, instead of
//! going without credentials. The others still apply.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use futures::TryStreamExt;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{Api, ListParams};
use kube::runtime::watcher;
use plumb_source::{KNOWN_HOSTS_CM, KnownHosts, Renderer, RepoCredentials, TlsCerts};

/// Label selector of the Secrets that describe repositories.
pub const REPOSITORY_SECRETS: &str = "argocd.argoproj.io/secret-type in (repository,repo-creds)";

/// Argo CD's ConfigMap of repository CA certificates (one key per host name).
pub const TLS_CERTS_CM: &str = "argocd-tls-certs-cm";

/// The repository Secrets and certificates as last seen.
#[derive(Default)]
pub struct Repositories {
    secrets: BTreeMap<String, RepoCredentials>,
    certs: TlsCerts,
    known_hosts: KnownHosts,
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
                    // Kept as unusable: a fetch it would serve fails naming the field.
                    tracing::warn!(secret = %name, "repository Secret cannot be used: {e}");
                    RepoCredentials::unusable(&v, &e)
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
        renderer.set_known_hosts(self.known_hosts.clone());
    }

    /// Takes in one of the two ConfigMaps (`None`: deleted); true when it changed.
    fn apply_config_map(&mut self, name: &str, cm: Option<&ConfigMap>) -> bool {
        let value = cm.and_then(|cm| serde_json::to_value(cm).ok());
        if name == KNOWN_HOSTS_CM {
            let hosts = value
                .map(|v| KnownHosts::from_config_map(&v))
                .unwrap_or_default();
            let differs = hosts != self.known_hosts;
            self.known_hosts = hosts;
            differs
        } else {
            let certs = value
                .map(|v| TlsCerts::from_config_map(&v))
                .unwrap_or_default();
            let differs = certs != self.certs;
            self.certs = certs;
            differs
        }
    }
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
    for name in [TLS_CERTS_CM, KNOWN_HOSTS_CM] {
        match cms.get_opt(name).await {
            Ok(cm) => {
                repos.apply_config_map(name, cm.as_ref());
            }
            Err(e) => tracing::warn!("reading ConfigMap {name}: {e}"),
        }
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
    let cms_client = client.clone();
    let cms: Api<ConfigMap> = Api::namespaced(client, &namespace);
    let mut secret_events = std::pin::pin!(watcher::watcher(
        secrets,
        watcher::Config::default().labels(REPOSITORY_SECRETS)
    ));
    let mut cm_events = std::pin::pin!(watcher::watcher(
        cms,
        watcher::Config::default().fields(&format!("metadata.name={TLS_CERTS_CM}"))
    ));
    let mut hosts_events = std::pin::pin!(watcher::watcher(
        Api::<ConfigMap>::namespaced(cms_client, &namespace),
        watcher::Config::default().fields(&format!("metadata.name={KNOWN_HOSTS_CM}"))
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
            ev = cm_events.try_next() => config_map_event(&mut repos, TLS_CERTS_CM, ev).await,
            ev = hosts_events.try_next() => config_map_event(&mut repos, KNOWN_HOSTS_CM, ev).await,
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

/// One watch event of the ConfigMap `name`: true when what renders use changed.
async fn config_map_event(
    repos: &mut Repositories,
    name: &str,
    ev: Result<Option<watcher::Event<ConfigMap>>, watcher::Error>,
) -> bool {
    match ev {
        Ok(Some(watcher::Event::Apply(cm) | watcher::Event::InitApply(cm))) => {
            repos.apply_config_map(name, Some(&cm))
        }
        Ok(Some(watcher::Event::Delete(_))) => repos.apply_config_map(name, None),
        Ok(_) => false,
        Err(e) => {
            tracing::warn!("watching {name}: {e}");
            tokio::time::sleep(Duration::from_secs(1)).await;
            false
        }
    }
}
