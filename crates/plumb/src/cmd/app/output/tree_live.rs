//! The nodes of `-o tree`: through `plumb server` its `GET .../resource-tree`; in core mode the
//! same `ApplicationTree`, made by the server's function (`plumb_server::tree::build`) of the
//! Application's live resources and the objects of the server's child kinds (ReplicaSets, Pods,
//! Jobs, ControllerRevisions, EndpointSlices) in their namespaces, judged with the settings'
//! health rules. So the tree reads the same with and without the server. Only the local cluster
//! (the kubeconfig's) is read; for other destinations the tree shows the managed resources
//! without children.

use anyhow::Result;
use plumb_model::application::Application;
use serde_json::Value;

use crate::cmd::app::client::AppClient;
use crate::output::rows::resource_rows;
use crate::output::tree;

/// The `nodes` of an `ApplicationTree`.
pub(crate) fn nodes_of(mut tree: Value) -> Vec<Value> {
    match tree.get_mut("nodes").map(Value::take) {
        Some(Value::Array(nodes)) => nodes,
        _ => Vec::new(),
    }
}

/// The tree table of an Application.
pub async fn render(client: &AppClient, app: &Application) -> Result<String> {
    let rows = resource_rows(app);
    let nodes = client.tree_nodes(app, &rows).await?;
    Ok(tree::render(&tree::from_nodes(&rows, &nodes)))
}
