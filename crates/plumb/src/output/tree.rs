//! `-o tree`: each resource of the Application followed by the live objects it owns
//! (ReplicaSets, Pods, Jobs, ...), drawn as Argo's `printTreeView` draws them:
//! `KIND/NAME STATUS HEALTH MESSAGE`, children prefixed with `├─` / `└─` and `│ ` guides.
//!
//! Argo's CLI draws the tree the server's `ResourceTree` returns; Plumb's draws the nodes of
//! `GET .../resource-tree` through `plumb server`, and in core mode the nodes the same function
//! (`plumb_server::tree::build`) makes of the live objects it lists ([`from_nodes`]). Children
//! show their own health and no sync status, as in Argo.

use std::collections::BTreeMap;

use serde_json::Value;

use super::rows::ResourceRow;
use super::tabwriter::Table;

/// One node of the tree.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TreeNode {
    /// `Kind/name`.
    pub label: String,
    /// Sync status (managed resources only).
    pub status: String,
    /// Health.
    pub health: String,
    /// Message.
    pub message: String,
    /// Owned objects, sorted by kind then name.
    pub children: Vec<TreeNode>,
}

fn str_at<'a>(v: &'a Value, path: &[&str]) -> &'a str {
    let mut cur = v;
    for p in path {
        cur = &cur[*p];
    }
    cur.as_str().unwrap_or_default()
}

/// Builds the tree from Argo's `ApplicationTree` nodes (`GET .../resource-tree`, or the same
/// function over the live objects in core mode): one root per row, its children the nodes whose
/// `parentRefs` name it, each with the health the tree gives it.
pub fn from_nodes(rows: &[ResourceRow], nodes: &[Value]) -> Vec<TreeNode> {
    let mut by_parent: BTreeMap<&str, Vec<&Value>> = BTreeMap::new();
    let mut uid_of: BTreeMap<String, &str> = BTreeMap::new();
    for node in nodes {
        let key = format!(
            "{}/{}/{}/{}",
            str_at(node, &["group"]),
            str_at(node, &["kind"]),
            str_at(node, &["namespace"]),
            str_at(node, &["name"])
        );
        uid_of.insert(key, str_at(node, &["uid"]));
        for parent in node["parentRefs"].as_array().into_iter().flatten() {
            if let Some(uid) = parent["uid"].as_str() {
                by_parent.entry(uid).or_default().push(node);
            }
        }
    }
    rows.iter()
        .map(|r| TreeNode {
            label: format!("{}/{}", r.kind, r.name),
            status: r.status.clone(),
            health: r.health.clone(),
            message: r.message.clone(),
            children: uid_of
                .get(&r.key())
                .filter(|uid| !uid.is_empty())
                .map(|uid| children(uid, &by_parent, 0))
                .unwrap_or_default(),
        })
        .collect()
}

fn children(uid: &str, by_parent: &BTreeMap<&str, Vec<&Value>>, depth: usize) -> Vec<TreeNode> {
    // Owner references cannot form cycles in a sane cluster; the depth bound makes sure a broken
    // one cannot recurse forever.
    if depth > 16 {
        return Vec::new();
    }
    let mut nodes: Vec<(&str, &str, &Value)> = by_parent
        .get(uid)
        .into_iter()
        .flatten()
        .map(|n| (str_at(n, &["kind"]), str_at(n, &["name"]), *n))
        .collect();
    nodes.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
    nodes
        .into_iter()
        .map(|(kind, name, node)| TreeNode {
            label: format!("{kind}/{name}"),
            status: String::new(),
            health: str_at(node, &["health", "status"]).to_string(),
            message: str_at(node, &["health", "message"]).to_string(),
            children: children(str_at(node, &["uid"]), by_parent, depth + 1),
        })
        .collect()
}

/// The tree table.
pub fn render(roots: &[TreeNode]) -> String {
    let mut t = Table::new();
    t.line("KIND/NAME\tSTATUS\tHEALTH\tMESSAGE");
    for root in roots {
        node_lines(&mut t, "", root);
    }
    t.render()
}

const NON_LAST: &str = "├─";
const LAST: &str = "└─";
const PIPE: &str = "│ ";

fn node_lines(t: &mut Table, prefix: &str, node: &TreeNode) {
    let label = format!("{}{}", display_prefix(prefix), node.label);
    t.row(&[&label, &node.status, &node.health, &node.message]);
    let n = node.children.len();
    for (i, child) in node.children.iter().enumerate() {
        let p = format!("{prefix}{}", if i + 1 == n { LAST } else { NON_LAST });
        node_lines(t, &p, child);
    }
}

// Argo's `printPrefix`: only the last connector is drawn; earlier `├─` become `│ ` and earlier
// `└─` become blanks.
fn display_prefix(prefix: &str) -> String {
    let units: Vec<&str> = prefix
        .as_bytes()
        .chunks(NON_LAST.len())
        .filter_map(|c| std::str::from_utf8(c).ok())
        .collect();
    let n = units.len();
    units
        .iter()
        .enumerate()
        .map(|(i, u)| {
            if i + 1 == n {
                (*u).to_string()
            } else if *u == NON_LAST {
                PIPE.to_string()
            } else {
                "  ".to_string()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn owners_become_nested_children_with_argo_guides() {
        let rows = vec![
            ResourceRow {
                group: "apps".into(),
                kind: "Deployment".into(),
                namespace: "payments".into(),
                name: "api".into(),
                status: "Synced".into(),
                health: "Healthy".into(),
                ..Default::default()
            },
            ResourceRow {
                kind: "Service".into(),
                namespace: "payments".into(),
                name: "api".into(),
                status: "Synced".into(),
                health: "Healthy".into(),
                ..Default::default()
            },
        ];
        let owner =
            |uid: &str| json!([{"apiVersion": "apps/v1", "kind": "X", "name": "x", "uid": uid}]);
        let live = [
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "api", "namespace": "payments", "uid": "d1"}}),
            json!({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "api-7d9", "namespace": "payments", "uid": "r1", "ownerReferences": owner("d1")},
                   "spec": {"replicas": 2}, "status": {"replicas": 2, "availableReplicas": 2, "readyReplicas": 2}}),
            json!({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "api-5c1", "namespace": "payments", "uid": "r0", "ownerReferences": owner("d1")},
                   "spec": {"replicas": 0}, "status": {"replicas": 0}}),
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "api-7d9-a", "namespace": "payments", "uid": "p1", "ownerReferences": owner("r1")},
                   "spec": {"restartPolicy": "Always"}, "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}),
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "api-7d9-b", "namespace": "payments", "uid": "p2", "ownerReferences": owner("r1")},
                   "spec": {"restartPolicy": "Always"}, "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}),
        ];
        // The nodes `GET .../resource-tree` answers with, made by the server's own function.
        let assessor = plumb_health::Assessor::new(plumb_health::Config::default()).unwrap();
        let nodes = plumb_server::tree::build(&live[..1], &live[1..], &assessor);
        let tree = from_nodes(&rows, nodes["nodes"].as_array().unwrap());
        assert_eq!(tree[0].children.len(), 2);
        assert_eq!(tree[0].children[1].children.len(), 2);
        assert_eq!(tree[0].children[1].health, "Healthy");
        assert_eq!(tree[0].children[1].children[0].health, "Healthy");
        assert!(tree[1].children.is_empty());
        let text = render(&tree);
        let labels: Vec<String> = text
            .lines()
            .map(|l| {
                let body = l.trim_start();
                let indent = l.len() - body.len();
                format!("{}{}", " ".repeat(indent), body.split("  ").next().unwrap())
            })
            .collect();
        assert_eq!(
            labels,
            [
                "KIND/NAME",
                "Deployment/api",
                "├─ReplicaSet/api-5c1",
                "└─ReplicaSet/api-7d9",
                "  ├─Pod/api-7d9-a",
                "  └─Pod/api-7d9-b",
                "Service/api"
            ]
        );
    }

    #[test]
    fn inner_non_last_connectors_become_pipes() {
        assert_eq!(display_prefix("├─├─"), "│ ├─");
        assert_eq!(display_prefix("└─├─"), "  ├─");
        assert_eq!(display_prefix(""), "");
    }
}
