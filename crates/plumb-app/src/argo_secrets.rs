//! What Argo CD's Secrets of the control namespace (clusters, repositories, credential
//! templates) have in common: the `secret-type` label that makes them one, the `managed-by`
//! annotation that says Argo CD (or Plumb) wrote them, and Argo's `deleteSecret`, which deletes
//! only those and leaves a Secret written by hand in place without its label.

use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DeleteParams, PostParams};

/// The label key of an Argo CD Secret's role (`cluster`, `repository`, `repo-creds`).
pub use plumb_source::SECRET_TYPE_LABEL;
/// The annotation marking the Secrets Argo CD (and Plumb) created, and may delete.
pub const MANAGED_BY: &str = "managed-by";
/// Its value.
pub const MANAGED_BY_ARGOCD: &str = "argocd.argoproj.io";

/// Whether Argo CD (or Plumb) created `secret` (Argo's `canDelete`).
pub fn is_managed(secret: &Secret) -> bool {
    secret
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(MANAGED_BY))
        .is_some_and(|v| v == MANAGED_BY_ARGOCD)
}

/// Argo's `deleteSecret`: the Secret deleted when [`is_managed`], otherwise only its
/// `secret-type` label removed, so a Secret written by hand is not lost.
pub async fn delete_or_unlabel(api: &Api<Secret>, secret: &Secret) -> Result<(), kube::Error> {
    let name = secret.metadata.name.clone().unwrap_or_default();
    if is_managed(secret) {
        api.delete(&name, &DeleteParams::default()).await?;
        return Ok(());
    }
    let mut unlabelled = secret.clone();
    if let Some(labels) = unlabelled.metadata.labels.as_mut() {
        labels.remove(SECRET_TYPE_LABEL);
    }
    api.replace(&name, &PostParams::default(), &unlabelled)
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_argos_annotation_value_is_managed() {
        let with = |v: Option<&str>| {
            let mut s = Secret::default();
            if let Some(v) = v {
                s.metadata.annotations = Some([(MANAGED_BY.to_string(), v.to_string())].into());
            }
            is_managed(&s)
        };
        assert!(with(Some("argocd.argoproj.io")));
        for other in [None, Some(""), Some("helm"), Some("argocd.argoproj.io ")] {
            assert!(!with(other), "{other:?}");
        }
    }
}
