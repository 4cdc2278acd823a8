//! Live objects for `-o tree`: the Application's resources themselves (for their uids) and the
//! ReplicaSets, Pods and Jobs of their namespaces, from which the tree follows owner references.
//! Only the local cluster (the kubeconfig's) is read; for other destinations the tree shows the
//! managed resources without children.

use std::collections::BTreeSet;
use std::sync::Arc;

use anyhow::Result;
use kube::api::{Api, DynamicObject, ListParams};
use kube::discovery::ApiResource;
use plumb_model::ResourceKey;
use plumb_model::application::Application;
use serde_json::Value;

use super::client::AppClient;
use crate::output::rows::{ResourceRow, resource_rows};
use crate::output::tree;

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

async fn fetch(client: &AppClient, rows: &[ResourceRow]) -> Result<Vec<Value>> {
    let kube = client.kube()?.clone();
    let discovery = Arc::new(plumb_kube::ApiDiscovery::new(kube.clone()).await?);
    let applier = plumb_kube::Applier::new(discovery);
    let mut live = Vec::new();
    for r in rows {
        let key = ResourceKey::new(&r.group, &r.kind, &r.namespace, &r.name);
        if let Some(obj) = applier.get(&key).await? {
            live.push(obj);
        }
    }
    let namespaces: BTreeSet<&str> = rows
        .iter()
        .map(|r| r.namespace.as_str())
        .filter(|n| !n.is_empty())
        .collect();
    let kinds = [
        ApiResource::erase::<k8s_openapi::api::apps::v1::ReplicaSet>(&()),
        ApiResource::erase::<k8s_openapi::api::core::v1::Pod>(&()),
        ApiResource::erase::<k8s_openapi::api::batch::v1::Job>(&()),
    ];
    for ns in namespaces {
        for ar in &kinds {
            live.extend(list_kind(&kube, ar, ns).await?);
        }
    }
    Ok(live)
}

/// The tree table of an Application.
pub async fn render(client: &AppClient, app: &Application) -> Result<String> {
    let rows = resource_rows(app);
    let live = if is_local(app) {
        match fetch(client, &rows).await {
            Ok(live) => live,
            Err(e) => {
                tracing::warn!("reading live objects for the tree: {e:#}");
                Vec::new()
            }
        }
    } else {
        Vec::new()
    };
    Ok(tree::render(&tree::build(&rows, &live)))
}
