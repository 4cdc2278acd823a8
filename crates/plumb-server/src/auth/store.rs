//! Reading and writing `argocd-cm`, `argocd-secret` and `argocd-initial-admin-secret`: the
//! settings authentication depends on are read on every use, so a revoked token or a disabled
//! account stops working at once, as in Argo CD (which watches the same objects).

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::Api;
use kube::api::{ObjectMeta, PostParams};

use crate::error::{Error, Result};

/// The Secret holding the signing key, password hashes and token records.
pub(crate) const SECRET: &str = "argocd-secret";
/// The Secret holding the generated admin password.
pub(crate) const INITIAL_ADMIN_SECRET: &str = "argocd-initial-admin-secret";
/// The Secret holding revoked session ids (`<jti>: <exp>`, Unix seconds, 0 for never). Argo
/// keeps this list in Redis; Plumb has no Redis, and the list must outlive a restart of the
/// server and be shared by its replicas, so it lives in the control namespace. A Secret, not a
/// ConfigMap: the ids are not credentials, but they tell who logged in when, and Secrets are
/// what operators already restrict.
pub(crate) const REVOKED_SECRET: &str = "plumb-revoked-sessions";

/// The data of a ConfigMap; empty when it does not exist.
pub(crate) async fn config_map(
    client: &kube::Client,
    ns: &str,
    name: &str,
) -> Result<BTreeMap<String, String>> {
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    match api.get_opt(name).await {
        Ok(cm) => Ok(cm.and_then(|c| c.data).unwrap_or_default()),
        Err(e) => Err(Error::kube(format!("reading ConfigMap {ns}/{name}"), e)),
    }
}

/// The Secret; `None` when it does not exist.
pub(crate) async fn secret(client: &kube::Client, ns: &str, name: &str) -> Result<Option<Secret>> {
    let api: Api<Secret> = Api::namespaced(client.clone(), ns);
    api.get_opt(name)
        .await
        .map_err(|e| Error::kube(format!("reading Secret {ns}/{name}"), e))
}

/// The data of a Secret as bytes; empty when it does not exist.
pub(crate) fn secret_data(secret: Option<&Secret>) -> BTreeMap<String, Vec<u8>> {
    secret
        .and_then(|s| s.data.as_ref())
        .map(|d| d.iter().map(|(k, v)| (k.clone(), v.0.clone())).collect())
        .unwrap_or_default()
}

/// Changes `argocd-secret`'s data with `edit` (creating the Secret when absent), guarded by
/// resourceVersion and retried on conflicts, so concurrent writers (two server replicas, a
/// token created while another is revoked) do not lose each other's change. `edit` returns
/// whether it changed anything.
pub(crate) async fn update_secret<T>(
    client: &kube::Client,
    ns: &str,
    edit: impl FnMut(&mut BTreeMap<String, ByteString>) -> Result<(bool, T)>,
) -> Result<T> {
    update_named_secret(client, ns, SECRET, edit).await
}

/// [`update_secret`] for the Secret `name`.
pub(crate) async fn update_named_secret<T>(
    client: &kube::Client,
    ns: &str,
    name: &str,
    mut edit: impl FnMut(&mut BTreeMap<String, ByteString>) -> Result<(bool, T)>,
) -> Result<T> {
    let api: Api<Secret> = Api::namespaced(client.clone(), ns);
    for _ in 0..10 {
        let current = api
            .get_opt(name)
            .await
            .map_err(|e| Error::kube(format!("reading Secret {ns}/{name}"), e))?;
        let exists = current.is_some();
        let mut secret = current.unwrap_or_else(|| Secret {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some(ns.into()),
                labels: Some(BTreeMap::from([(
                    "app.kubernetes.io/part-of".to_string(),
                    "argocd".to_string(),
                )])),
                ..ObjectMeta::default()
            },
            ..Secret::default()
        });
        let mut data = secret.data.take().unwrap_or_default();
        // stringData is write-only; nothing to merge.
        let (changed, out) = edit(&mut data)?;
        if !changed {
            return Ok(out);
        }
        secret.data = Some(data);
        let written = if exists {
            api.replace(name, &PostParams::default(), &secret).await
        } else {
            api.create(&PostParams::default(), &secret).await
        };
        match written {
            Ok(_) => return Ok(out),
            Err(kube::Error::Api(s)) if s.code == 409 => {
                tracing::debug!("Secret {ns}/{name} changed while writing it; retrying");
            }
            Err(e) => return Err(Error::kube(format!("writing Secret {ns}/{name}"), e)),
        }
    }
    Err(Error::Internal(format!(
        "writing Secret {ns}/{name}: it keeps changing"
    )))
}

/// Creates `argocd-initial-admin-secret` with `password` unless it exists.
pub(crate) async fn create_initial_admin_secret(
    client: &kube::Client,
    ns: &str,
    password: &str,
) -> Result<()> {
    let api: Api<Secret> = Api::namespaced(client.clone(), ns);
    let secret = Secret {
        metadata: ObjectMeta {
            name: Some(INITIAL_ADMIN_SECRET.into()),
            namespace: Some(ns.into()),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([(
            "password".to_string(),
            ByteString(password.as_bytes().to_vec()),
        )])),
        ..Secret::default()
    };
    match api.create(&PostParams::default(), &secret).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.code == 409 => Ok(()),
        Err(e) => Err(Error::kube(
            format!("creating Secret {ns}/{INITIAL_ADMIN_SECRET}"),
            e,
        )),
    }
}
