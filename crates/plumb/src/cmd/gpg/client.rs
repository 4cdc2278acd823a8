//! Where `plumb gpg` reads and writes keys: `argocd-gpg-keys-cm` of the control namespace with
//! the user's kubeconfig (`plumb_app::gpg_keys`, the server's own code), or `plumb server`'s
//! `/api/v1/gpgkeys`. Both answer with Argo's `GnuPGPublicKey` JSON.

use anyhow::{Context, Result, anyhow};
use plumb_app::gpg_keys::{self, key_json};
use serde_json::{Value, json};

use crate::cmd::app::ConnArgs;
use crate::cmd::remote::{ServerClient, enc};

/// The keys' backend.
pub enum GpgClient {
    /// Core mode: the ConfigMap of the control namespace.
    Kube {
        /// The user's client.
        client: kube::Client,
        /// The control namespace (`-N`).
        namespace: String,
    },
    /// Through `plumb server`.
    Server(ServerClient),
}

impl GpgClient {
    /// Connects with the kubeconfig flags.
    pub async fn connect(args: &ConnArgs) -> Result<Self> {
        let source = plumb_kube::KubeconfigSource::from_option(args.kubeconfig.as_deref());
        let client = plumb_kube::connect(&source)
            .await
            .context("connecting to the cluster")?;
        Ok(Self::Kube {
            client,
            namespace: args.control_namespace().to_string(),
        })
    }

    /// Every key, without its data.
    pub async fn list(&self) -> Result<Vec<Value>> {
        match self {
            Self::Kube { client, namespace } => Ok(gpg_keys::configured(client, namespace)
                .await?
                .values()
                .map(|k| key_json(k, false))
                .collect()),
            Self::Server(s) => {
                let v = s.get("/api/v1/gpgkeys").await?;
                Ok(v["items"].as_array().cloned().unwrap_or_default())
            }
        }
    }

    /// One key, with its data.
    pub async fn get(&self, key_id: &str) -> Result<Value> {
        match self {
            Self::Kube { client, namespace } => {
                let id = plumb_source::key_id(key_id).map_err(|e| anyhow!(e))?;
                gpg_keys::configured(client, namespace)
                    .await?
                    .get(&id)
                    .map(|k| key_json(k, true))
                    .ok_or_else(|| anyhow!("no such key: {id}"))
            }
            Self::Server(s) => s.get(&format!("/api/v1/gpgkeys/{}", enc(key_id))).await,
        }
    }

    /// Adds the keys of `armored`: (created, skipped).
    pub async fn add(&self, armored: String) -> Result<(usize, usize)> {
        match self {
            Self::Kube { client, namespace } => {
                let (created, skipped) = gpg_keys::add(client, namespace, armored).await?;
                Ok((created.len(), skipped.len()))
            }
            Self::Server(s) => {
                let v = s
                    .post("/api/v1/gpgkeys", &json!({"keyData": armored}))
                    .await?;
                let created = v["created"]["items"].as_array().map_or(0, Vec::len);
                let skipped = v["skipped"].as_array().map_or(0, Vec::len);
                Ok((created, skipped))
            }
        }
    }

    /// Removes the key `key_id`.
    pub async fn remove(&self, key_id: &str) -> Result<()> {
        match self {
            Self::Kube { client, namespace } => {
                Ok(gpg_keys::remove(client, namespace, key_id).await?)
            }
            Self::Server(s) => s
                .delete(&format!("/api/v1/gpgkeys?keyID={}", enc(key_id)))
                .await
                .map(|_| ()),
        }
    }
}
