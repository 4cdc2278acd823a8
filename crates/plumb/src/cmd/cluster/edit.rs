//! `plumb cluster set NAME` and `plumb cluster rotate-auth SERVER/NAME`: Argo's `Update` (with
//! `updatedFields`) and `RotateAuth`, through `plumb server` or on the cluster Secrets (core
//! mode, where the rotation talks to the target cluster with the Secret's own credentials, as
//! Argo's headless mode does).

use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::Args;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, PostParams};
use plumb_app::ClusterSecret;
use plumb_app::clusters::{record, rotate};
use serde_json::{Value, json};

use super::client::ClusterClient;
use super::spec;
use crate::exit::Outcome;

/// How long the connection check of an updated cluster may take (core mode).
const TRY_TIMEOUT: Duration = Duration::from_secs(15);

/// `plumb cluster set NAME`.
#[derive(Debug, Args)]
pub struct SetArgs {
    /// The name of the cluster to change.
    cluster: String,
    /// Overwrite the cluster name
    #[arg(long)]
    name: Option<String>,
    /// List of namespaces which are allowed to manage. Specify '*' to manage all namespaces
    #[arg(long = "namespace")]
    namespaces: Option<Vec<String>>,
    /// Set metadata labels (e.g. --label key=value)
    #[arg(long = "label")]
    labels: Option<Vec<String>>,
    /// Set metadata annotations (e.g. --annotation key=value)
    #[arg(long = "annotation")]
    annotations: Option<Vec<String>>,
}

/// `plumb cluster rotate-auth SERVER/NAME`.
#[derive(Debug, Args)]
pub struct RotateArgs {
    /// The cluster's server URL or name.
    selector: String,
}

impl ClusterClient {
    /// Argo's `Update` with `updatedFields`: only those fields of `cluster` change, on the
    /// cluster named `name`; the result is tried (server version) before it is stored.
    pub async fn update(&self, name: &str, cluster: &Value, fields: &[&str]) -> Result<Value> {
        let (client, namespace) = match self {
            Self::Server(s) => {
                let mut path = format!(
                    "/api/v1/clusters/{}?id.type=name",
                    crate::cmd::remote::enc(name)
                );
                for f in fields {
                    path.push_str(&format!("&updatedFields={f}"));
                }
                return s.put(&path, cluster).await;
            }
            Self::Kube { client, namespace } => (client, namespace),
        };
        let Some(old) = self.find_secret(name).await? else {
            bail!("permission denied: cluster {name:?} not found");
        };
        let fields: Vec<String> = fields.iter().map(|f| f.to_string()).collect();
        let current = record::unsanitized(&old);
        let mut merged = record::merge_update(&current, cluster, &fields);
        merged["server"] = current["server"].clone();
        let secret_name = old.metadata.name.clone().unwrap_or_default();
        let updated = record::to_secret(&merged, old).map_err(|e| anyhow::anyhow!(e.0))?;
        let parsed = ClusterSecret::from_secret(&updated).context("the cluster has no server")?;
        let probe = async {
            let c = parsed
                .client()
                .await
                .map_err(|e| anyhow::anyhow!(plumb_app::chain(&e)))?;
            c.apiserver_version()
                .await
                .context("failed to get server version")
        };
        tokio::time::timeout(TRY_TIMEOUT, probe)
            .await
            .map_err(|_| {
                anyhow::anyhow!("failed to get server version: the cluster did not answer in time")
            })??;
        let api: Api<Secret> = Api::namespaced(client.clone(), namespace);
        let stored = api
            .replace(&secret_name, &PostParams::default(), &updated)
            .await
            .with_context(|| format!("updating cluster Secret {namespace}/{secret_name}"))?;
        Ok(record::sanitized(&stored))
    }

    /// Argo's `RotateAuth`.
    pub async fn rotate_auth(&self, selector: &str) -> Result<()> {
        let (client, namespace) = match self {
            Self::Server(s) => {
                s.post(&Self::path_of(selector, "/rotate-auth"), &json!({}))
                    .await?;
                return Ok(());
            }
            Self::Kube { client, namespace } => (client, namespace),
        };
        let Some(secret) = self.find_secret(selector).await? else {
            bail!("permission denied: cluster {selector:?} not found");
        };
        let api: Api<Secret> = Api::namespaced(client.clone(), namespace);
        rotate::rotate(&api, &secret, rotate::TOKEN_TIMEOUT)
            .await
            .map_err(|e| anyhow::anyhow!(plumb_app::chain(&e)))?;
        Ok(())
    }
}

/// Argo's `checkFieldsToUpdate` and the Cluster the flags describe.
fn set_request(args: &SetArgs) -> Result<(Vec<&'static str>, Value)> {
    let mut fields = Vec::new();
    let mut cluster = json!({});
    if let Some(n) = args.name.as_ref().filter(|n| !n.is_empty()) {
        fields.push("name");
        cluster["name"] = json!(n);
    }
    if let Some(ns) = &args.namespaces {
        fields.push("namespaces");
        // Argo: a single '*' means every namespace (no `namespaces`).
        let all = matches!(ns.as_slice(), [one] if one.eq_ignore_ascii_case("*"));
        let list: Vec<&String> = ns.iter().filter(|n| !all && !n.is_empty()).collect();
        cluster["namespaces"] = json!(list);
    }
    if let Some(l) = &args.labels {
        fields.push("labels");
        cluster["labels"] = json!(spec::key_values(l)?);
    }
    if let Some(a) = &args.annotations {
        fields.push("annotations");
        cluster["annotations"] = json!(spec::key_values(a)?);
    }
    Ok((fields, cluster))
}

/// Runs `plumb cluster set`.
pub async fn set(client: &ClusterClient, args: SetArgs) -> Result<Outcome> {
    let (fields, cluster) = set_request(&args)?;
    if fields.is_empty() {
        println!("Specify the cluster field to be updated.");
        return Ok(Outcome::Success);
    }
    if let Err(e) = client.update(&args.cluster, &cluster, &fields).await {
        if format!("{e:#}").contains("permission denied") {
            eprintln!(
                "Ensure that the cluster is present and you have the necessary permissions to update the cluster"
            );
        }
        return Err(e);
    }
    println!("Cluster '{}' updated.", args.cluster);
    Ok(Outcome::Success)
}

/// Runs `plumb cluster rotate-auth`.
pub async fn rotate_auth(client: &ClusterClient, args: RotateArgs) -> Result<Outcome> {
    client.rotate_auth(&args.selector).await?;
    println!("Cluster '{}' rotated auth", args.selector);
    Ok(Outcome::Success)
}
