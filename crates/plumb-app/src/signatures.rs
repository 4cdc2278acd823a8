//! GnuPG signature verification for an AppProject's `sourceIntegrity` Git policies and legacy
//! `signatureKeys`, as Argo CD does it: on
//! unless the process runs with `ARGOCD_GPG_ENABLED` set to `false` or `no` (Argo's switch,
//! read as Argo reads it), against the public keys of the `argocd-gpg-keys-cm` ConfigMap of the
//! control namespace, which is read at start and watched ([`load`], [`watch`]) and handed to
//! the renderer. The render verifies the revisions it renders (`plumb_source`), the comparison
//! reports a failure as a ComparisonError, and a sync refuses to run on it.

use std::collections::BTreeMap;
use std::time::Duration;

use futures::TryStreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::Api;
use kube::runtime::watcher;
use plumb_model::application::{AppProject, ApplicationSource, SourceIntegrity};
use plumb_source::Renderer;

/// Argo CD's ConfigMap of GnuPG public keys (key ID → ASCII-armored key).
pub const GPG_KEYS_CM: &str = "argocd-gpg-keys-cm";

/// Argo CD's environment switch for GnuPG verification.
pub const GPG_ENABLED_ENV: &str = "ARGOCD_GPG_ENABLED";

/// Whether signatures are verified: Argo's `IsGPGEnabled` (off only for `false` or `no`, any
/// case).
pub fn enabled() -> bool {
    enabled_by(std::env::var(GPG_ENABLED_ENV).ok().as_deref())
}

fn enabled_by(value: Option<&str>) -> bool {
    !value.is_some_and(|v| v.eq_ignore_ascii_case("false") || v.eq_ignore_ascii_case("no"))
}

/// The source integrity the Git revisions of `project`'s Applications must satisfy (Argo's
/// `EffectiveSourceIntegrity`: `sourceIntegrity`, the legacy `signatureKeys` folded in), when
/// the project has one and verification is on.
pub fn required_integrity(project: &AppProject) -> Option<SourceIntegrity> {
    project.effective_source_integrity().filter(|_| enabled())
}

/// Argo's refusal of an operation's local manifests while source integrity applies to the
/// Application (they were never signed by anyone).
pub const LOCAL_MANIFESTS_REFUSED: &str =
    "Cannot use local manifests when source integrity is enforced";

/// Whether `integrity` verifies any of `sources` (Argo's `HasCriteria`: Git sources only, not
/// charts of Helm repositories nor OCI artifacts).
pub fn has_criteria(integrity: Option<&SourceIntegrity>, sources: &[ApplicationSource]) -> bool {
    let git = sources.iter().filter(|s| {
        !s.repo_url.is_empty()
            && !s.repo_url.starts_with("oci://")
            && s.chart.as_deref().unwrap_or_default().is_empty()
    });
    plumb_policy::source_integrity::has_criteria(integrity, git.map(|s| s.repo_url.as_str()))
}

fn data_of(cm: &ConfigMap) -> BTreeMap<String, String> {
    cm.data.clone().unwrap_or_default()
}

/// Reads the keys once (at start, before the first reconcile) and gives them to `renderer`.
/// A failure is logged: verifications then fail (closed) until the watcher gets the keys.
pub async fn load(client: &kube::Client, namespace: &str, renderer: &Renderer) {
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), namespace);
    match cms.get_opt(GPG_KEYS_CM).await {
        Ok(cm) => renderer.set_gpg_keys(cm.as_ref().map(data_of).unwrap_or_default()),
        Err(e) => tracing::warn!("reading ConfigMap {GPG_KEYS_CM}: {e}"),
    }
    if !enabled() {
        tracing::warn!(
            "{GPG_ENABLED_ENV} is false: AppProject sourceIntegrity and signatureKeys are not \
             verified (as in Argo CD)"
        );
    }
}

/// Watches the ConfigMap and calls `changed` after handing new keys to `renderer`.
pub async fn watch(
    client: kube::Client,
    namespace: String,
    renderer: std::sync::Arc<Renderer>,
    changed: impl Fn() + Send + 'static,
) {
    let cms: Api<ConfigMap> = Api::namespaced(client, &namespace);
    let mut events = std::pin::pin!(watcher::watcher(
        cms,
        watcher::Config::default().fields(&format!("metadata.name={GPG_KEYS_CM}"))
    ));
    let mut current: Option<BTreeMap<String, String>> = None;
    loop {
        let next = match events.try_next().await {
            Ok(Some(watcher::Event::Apply(cm) | watcher::Event::InitApply(cm))) => data_of(&cm),
            Ok(Some(watcher::Event::Delete(_))) => BTreeMap::new(),
            Ok(Some(_)) => continue,
            Ok(None) => return,
            Err(e) => {
                tracing::warn!("watching {GPG_KEYS_CM}: {e}");
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
        };
        if current.as_ref() != Some(&next) {
            tracing::info!(keys = next.len(), "GnuPG public keys reloaded");
            renderer.set_gpg_keys(next.clone());
            current = Some(next);
            changed();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_false_or_no_turns_verification_off_as_in_argo() {
        assert!(enabled_by(None));
        assert!(enabled_by(Some("")));
        assert!(enabled_by(Some("true")));
        assert!(enabled_by(Some("0")));
        assert!(!enabled_by(Some("false")));
        assert!(!enabled_by(Some("FALSE")));
        assert!(!enabled_by(Some("No")));
    }

    #[test]
    fn only_git_sources_a_policy_selects_have_criteria() {
        let si: SourceIntegrity = serde_json::from_value(serde_json::json!({"git": {"policies": [
            {"repos": [{"url": "https://git.example/*"}], "gpg": {"mode": "head", "keys": []}}
        ]}}))
        .unwrap();
        let source = |url: &str, chart: Option<&str>| -> ApplicationSource {
            serde_json::from_value(serde_json::json!({"repoURL": url, "chart": chart})).unwrap()
        };
        assert!(has_criteria(
            Some(&si),
            &[source("https://git.example/a", None)]
        ));
        // A chart of a Helm repository or an OCI artifact is not Git (Argo's HasCriteria).
        assert!(!has_criteria(
            Some(&si),
            &[source("https://git.example/charts", Some("c"))]
        ));
        assert!(!has_criteria(
            Some(&si),
            &[source("oci://git.example/a", None)]
        ));
        assert!(!has_criteria(Some(&si), &[source("https://other/a", None)]));
        assert!(!has_criteria(
            None,
            &[source("https://git.example/a", None)]
        ));
    }
}
