//! `argocd-gpg-keys-cm` as Argo CD's `GPGKeyService` keeps it (key ID → ASCII-armored key, one
//! key per entry): listed and checked as Argo's `ListConfiguredGPGPublicKeys` does, keys added
//! (those already there skipped) and removed. The API server's `/api/v1/gpgkeys` and the CLI's
//! `plumb gpg` in core mode both go through here. Keys are read by the real `gpg` in a
//! throwaway home, off the runtime.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, PostParams};
use plumb_source::KeyInfo;
use serde_json::{Value, json};

use crate::signatures::GPG_KEYS_CM;

/// Why a key operation failed, by kind (the API maps each to its gRPC code).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KeyError {
    /// The submitted key data or key ID is invalid.
    #[error("{0}")]
    Invalid(String),
    /// No such key is configured.
    #[error("{0}")]
    NotFound(String),
    /// The ConfigMap holds an entry that is not a valid key (named in the message).
    #[error("{0}")]
    Broken(String),
    /// The Kubernetes API failed.
    #[error("{context}: {source}")]
    Kube {
        /// What was being done.
        context: &'static str,
        /// The API error.
        #[source]
        source: kube::Error,
    },
}

/// Argo's `GnuPGPublicKey` JSON; `keyData` only `with_data` (Argo leaves it out of lists).
pub fn key_json(k: &KeyInfo, with_data: bool) -> Value {
    let mut v = json!({"keyID": k.key_id});
    for (field, value) in [
        ("fingerprint", &k.fingerprint),
        ("owner", &k.owner),
        ("trust", &k.trust),
        ("subType", &k.sub_type),
    ] {
        if !value.is_empty() {
            v[field] = json!(value);
        }
    }
    if with_data && !k.key_data.is_empty() {
        v["keyData"] = json!(k.key_data);
    }
    v
}

/// The ConfigMap (absent: none yet) and its entries.
async fn read(
    api: &Api<ConfigMap>,
) -> Result<(Option<ConfigMap>, BTreeMap<String, String>), KeyError> {
    let cm = api
        .get_opt(GPG_KEYS_CM)
        .await
        .map_err(|source| KeyError::Kube {
            context: "error getting GPG keys configmap",
            source,
        })?;
    let data = cm.as_ref().and_then(|c| c.data.clone()).unwrap_or_default();
    Ok((cm, data))
}

/// Reads the keys of `data` with gpg off the runtime.
pub async fn inspect(data: String) -> Result<Vec<KeyInfo>, KeyError> {
    tokio::task::spawn_blocking(move || plumb_source::inspect_keys(&data))
        .await
        .map_err(|e| KeyError::Invalid(format!("reading the key: {e}")))?
        .map_err(|e| KeyError::Invalid(format!("error validating PGP keys from input: {e}")))
}

/// Every configured key, each entry checked: a valid key ID, exactly one key, that key.
pub async fn configured(
    client: &kube::Client,
    namespace: &str,
) -> Result<BTreeMap<String, KeyInfo>, KeyError> {
    let (_, data) = read(&Api::namespaced(client.clone(), namespace)).await?;
    let mut out = BTreeMap::new();
    for (name, armored) in data {
        let printable: String = name.escape_debug().take(80).collect();
        let expected = plumb_source::key_id(&name).map_err(|_| {
            KeyError::Broken(format!(
                "error validating key ID \"{printable}\" in GPG keys configmap: not a valid GnuPG key ID"
            ))
        })?;
        let broken = |e: String| {
            KeyError::Broken(format!(
                "error parsing GPG key for entry \"{expected}\": {e}"
            ))
        };
        let mut keys = inspect(armored.clone())
            .await
            .map_err(|e| broken(e.to_string()))?;
        if keys.len() != 1 {
            return Err(broken("more than one key found in input data".into()));
        }
        let mut key = keys.remove(0);
        if key.key_id != expected {
            return Err(KeyError::Broken(format!(
                "key parsed for entry with key ID '{expected}' had different key ID '{}'",
                key.key_id
            )));
        }
        key.key_data = armored;
        out.insert(key.key_id.clone(), key);
    }
    Ok(out)
}

/// Adds the keys of `armored`: (created, skipped key IDs), keys already configured skipped.
pub async fn add(
    client: &kube::Client,
    namespace: &str,
    armored: String,
) -> Result<(Vec<KeyInfo>, Vec<String>), KeyError> {
    if armored.trim().is_empty() {
        return Err(KeyError::Invalid("submitted key data is empty".into()));
    }
    let keys = inspect(armored).await?;
    let api = Api::namespaced(client.clone(), namespace);
    let (cm, mut data) = read(&api).await?;
    let (mut created, mut skipped) = (Vec::new(), Vec::new());
    for k in keys {
        if data.contains_key(&k.key_id) {
            skipped.push(k.key_id.clone());
        } else {
            data.insert(k.key_id.clone(), k.key_data.clone());
            created.push(k);
        }
    }
    if !created.is_empty() {
        save(&api, cm, data).await?;
    }
    Ok((created, skipped))
}

/// Removes the entry `key_id`.
pub async fn remove(client: &kube::Client, namespace: &str, key_id: &str) -> Result<(), KeyError> {
    let api = Api::namespaced(client.clone(), namespace);
    let (cm, mut data) = read(&api).await?;
    if data.remove(key_id).is_none() {
        let shown: String = key_id.escape_debug().take(80).collect();
        return Err(KeyError::NotFound(format!(
            "no such key configured: {shown}"
        )));
    }
    save(&api, cm, data).await
}

/// Writes the entries: a new ConfigMap, or the one read replaced (its resourceVersion guards
/// against a concurrent change, which is refused rather than lost).
async fn save(
    api: &Api<ConfigMap>,
    cm: Option<ConfigMap>,
    data: BTreeMap<String, String>,
) -> Result<(), KeyError> {
    let result = match cm {
        Some(mut cm) => {
            cm.data = Some(data);
            api.replace(GPG_KEYS_CM, &PostParams::default(), &cm).await
        }
        None => {
            let mut cm: ConfigMap = serde_json::from_value(json!({
                "metadata": {"name": GPG_KEYS_CM,
                    "labels": {"app.kubernetes.io/name": GPG_KEYS_CM,
                               "app.kubernetes.io/part-of": "argocd"}},
            }))
            .unwrap_or_default();
            cm.data = Some(data);
            api.create(&PostParams::default(), &cm).await
        }
    };
    result.map(|_| ()).map_err(|source| KeyError::Kube {
        context: "error saving GPG public key data",
        source,
    })
}
