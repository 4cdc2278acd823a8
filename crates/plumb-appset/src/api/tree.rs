//! The shapes Argo's `ResourceTree` and dry-run `Create` answer with: the generated
//! Applications as resource nodes under the set, and as `status.resources` entries.

use plumb_model::application::{Application, GROUP, VERSION};
use plumb_model::applicationset::{ApplicationSet, KIND};
use serde_json::{Map, Value, json};

/// Inserts `value` under `key` unless it is empty (Go's `omitempty` on strings).
fn put(map: &mut Map<String, Value>, key: &str, value: &str) {
    if !value.is_empty() {
        map.insert(key.into(), value.into());
    }
}

/// Argo's `ApplicationSetTree`: one node per entry of `status.resources`, each with the set as
/// its parent, sorted by group, kind, namespace and name (`Normalize`).
pub fn resource_tree(set: &ApplicationSet) -> Value {
    let mut parent = Map::new();
    put(&mut parent, "group", GROUP);
    put(&mut parent, "version", VERSION);
    put(&mut parent, "kind", KIND);
    put(&mut parent, "namespace", set.namespace());
    put(&mut parent, "name", set.name());
    let uid = set.metadata.other.get("uid").and_then(Value::as_str);
    put(&mut parent, "uid", uid.unwrap_or_default());
    let text = |r: &Value, k: &str| {
        r.get(k)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let mut nodes: Vec<(String, Value)> = Vec::new();
    let resources = set.status.as_ref().and_then(|s| s.resources.as_ref());
    for r in resources.into_iter().flatten() {
        let mut node = Map::new();
        for key in ["group", "version", "kind"] {
            put(&mut node, key, &text(r, key));
        }
        put(&mut node, "namespace", set.namespace());
        put(&mut node, "name", &text(r, "name"));
        node.insert("parentRefs".into(), json!([parent.clone()]));
        if let Some(h) = r.get("health").filter(|h| !h.is_null()) {
            node.insert("health".into(), h.clone());
        }
        let full = [
            text(r, "group"),
            text(r, "kind"),
            set.namespace().to_string(),
            text(r, "name"),
        ]
        .join("/");
        nodes.push((full, Value::Object(node)));
    }
    nodes.sort_by(|a, b| a.0.cmp(&b.0));
    if nodes.is_empty() {
        return json!({});
    }
    json!({"nodes": nodes.into_iter().map(|(_, n)| n).collect::<Vec<_>>()})
}

/// `status.resources` of a dry-run create (Argo's `BuildResourceStatus` over the generated
/// Applications), sorted by name.
pub fn dry_run_resources(apps: &[Application]) -> Vec<Value> {
    let mut out: Vec<Value> = apps
        .iter()
        .map(|app| {
            let mut r = Map::new();
            put(&mut r, "group", GROUP);
            put(&mut r, "version", VERSION);
            put(&mut r, "kind", "Application");
            put(
                &mut r,
                "namespace",
                app.metadata.namespace.as_deref().unwrap_or_default(),
            );
            put(
                &mut r,
                "name",
                app.metadata.name.as_deref().unwrap_or_default(),
            );
            r.insert("health".into(), json!({}));
            Value::Object(r)
        })
        .collect();
    out.sort_by(|a, b| {
        let n = |v: &Value| {
            v.get("name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        n(a).cmp(&n(b))
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tree_nodes_sorted_under_the_set() {
        let set: ApplicationSet = serde_json::from_value(json!({
            "metadata": {"name": "fleet", "namespace": "argocd", "uid": "u1"}, "spec": {},
            "status": {"resources": [
                {"group": "argoproj.io", "version": "v1alpha1", "kind": "Application",
                 "name": "b", "status": "Synced", "health": {"status": "Healthy"}},
                {"group": "argoproj.io", "version": "v1alpha1", "kind": "Application",
                 "name": "a", "status": "OutOfSync"}]}
        }))
        .unwrap();
        let tree = resource_tree(&set);
        let names: Vec<_> = tree["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(tree["nodes"][1]["health"]["status"], "Healthy");
        assert_eq!(tree["nodes"][0]["parentRefs"][0]["uid"], "u1");
        assert_eq!(tree["nodes"][0]["parentRefs"][0]["kind"], "ApplicationSet");
        let empty: ApplicationSet =
            serde_json::from_value(json!({"metadata": {"name": "e"}, "spec": {}})).unwrap();
        assert_eq!(resource_tree(&empty), json!({}));
    }
}
