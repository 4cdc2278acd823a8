//! The nodes of `-o tree` in core mode: the same `ApplicationTree` the server answers, made by
//! the server's function (`plumb_server::tree::build`) of the Application's live resources and
//! the objects of the server's child kinds (ReplicaSets, Pods, Jobs, ControllerRevisions,
//! EndpointSlices) in their namespaces, judged with the settings' health rules. Only the local
//! cluster (the kubeconfig's) is read; for other destinations the tree shows the managed
//! resources without children.

use std::collections::BTreeSet;
use std::sync::Arc;

use anyhow::{Context, Result};
use kube::api::{Api, DynamicObject, ListParams};
use kube::discovery::ApiResource;
use plumb_model::ResourceKey;
use plumb_model::application::Application;
use serde_json::Value;

use crate::cmd::app::client::AppClient;
use crate::cmd::app::output::tree_live::nodes_of;
use crate::output::rows::ResourceRow;

const IN_CLUSTER_SERVER: &str = "https://kubernetes.default.svc";
const IN_CLUSTER_NAME: &str = "in-cluster";

fn is_local(app: &Application) -> bool {
    let d = &app.spec.destination;
    d.server.as_deref() == Some(IN_CLUSTER_SERVER) || d.name.as_deref() == Some(IN_CLUSTER_NAME)
}

async fn list_kind(client: &kube::Client, ar: &ApiResource, namespace: &str) -> Result<Vec<Value>> {
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), namespace, ar);
    let list = api.list(&ListParams::default()).await?;
    // A list's items carry no apiVersion/kind; without them a child would print as `/name` and be
    // judged by the generic health rule instead of its kind's (a crash-looping Pod as Healthy).
    list.items
        .into_iter()
        .map(|mut o| {
            o.types = Some(kube::api::TypeMeta {
                api_version: ar.api_version.clone(),
                kind: ar.kind.clone(),
            });
            Ok(serde_json::to_value(o)?)
        })
        .collect()
}

/// Core mode: the tree's nodes from the live objects.
async fn core_nodes(
    client: &AppClient,
    kube: &kube::Client,
    rows: &[ResourceRow],
) -> Result<Vec<Value>> {
    let kube = kube.clone();
    let discovery = Arc::new(plumb_kube::ApiDiscovery::new(kube.clone()).await?);
    let applier = plumb_kube::Applier::new(discovery);
    let mut managed = Vec::new();
    for r in rows {
        let key = ResourceKey::new(&r.group, &r.kind, &r.namespace, &r.name);
        if let Some(obj) = applier.get(&key).await? {
            managed.push(obj);
        }
    }
    let namespaces: BTreeSet<&str> = rows
        .iter()
        .map(|r| r.namespace.as_str())
        .filter(|n| !n.is_empty())
        .collect();
    let mut candidates = Vec::new();
    for ns in namespaces {
        for ar in &plumb_server::tree::child_kinds() {
            candidates.extend(list_kind(&kube, ar, ns).await?);
        }
    }
    // Health as the server judges it: the settings' Lua rules and unknown-kind mode.
    let engines = plumb_app::Engines::new(client.settings().await?, client.namespace(), &[])
        .map_err(|e| anyhow::anyhow!("{}", plumb_app::chain(&e)))
        .context("reading the settings ConfigMap")?;
    let tree = plumb_server::tree::build(&managed, &candidates, &engines.assessor);
    Ok(nodes_of(tree))
}

/// The tree's nodes of `app`: from the live objects when it is deployed to the local cluster.
pub(crate) async fn nodes(
    client: &AppClient,
    kube: &kube::Client,
    app: &Application,
    rows: &[ResourceRow],
) -> Result<Vec<Value>> {
    if !is_local(app) {
        return Ok(Vec::new());
    }
    Ok(match core_nodes(client, kube, rows).await {
        Ok(nodes) => nodes,
        Err(e) => {
            tracing::warn!("reading live objects for the tree: {e:#}");
            Vec::new()
        }
    })
}
