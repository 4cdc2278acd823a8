//! Argo CD's `ApplicationTree` from live objects: the Application's managed objects, and every
//! object owned by one of them, transitively, with `parentRefs` from owner references and each
//! node's health. A pure function of the objects, so it is tested without a cluster.

use std::collections::{BTreeMap, BTreeSet};

use kube::discovery::ApiResource;
use plumb_health::Assessor;
use serde_json::{Map, Value, json};

fn s<'a>(obj: &'a Value, ptr: &str) -> &'a str {
    obj.pointer(ptr).and_then(Value::as_str).unwrap_or_default()
}

fn group_version(api_version: &str) -> (&str, &str) {
    match api_version.split_once('/') {
        Some((g, v)) => (g, v),
        None => ("", api_version),
    }
}

/// Kinds whose objects are owned by managed objects and make up the tree below them (listed
/// in the namespaces of the managed objects).
pub fn child_kinds() -> [ApiResource; 5] {
    [
        ApiResource::erase::<k8s_openapi::api::apps::v1::ReplicaSet>(&()),
        ApiResource::erase::<k8s_openapi::api::core::v1::Pod>(&()),
        ApiResource::erase::<k8s_openapi::api::batch::v1::Job>(&()),
        ApiResource::erase::<k8s_openapi::api::apps::v1::ControllerRevision>(&()),
        ApiResource::erase::<k8s_openapi::api::discovery::v1::EndpointSlice>(&()),
    ]
}

/// The tree of `managed` (live objects the Application tracks) and the descendants among
/// `candidates` (live objects of the same namespaces that may be owned by them, of
/// [`child_kinds`]). `plumb app get -o tree` in core mode builds it with this function too, so
/// the CLI draws the same tree with and without the server.
pub fn build(managed: &[Value], candidates: &[Value], assessor: &Assessor) -> Value {
    let mut in_tree: BTreeSet<String> = BTreeSet::new();
    let mut nodes: Vec<&Value> = Vec::new();
    for obj in managed {
        let uid = s(obj, "/metadata/uid");
        if !uid.is_empty() && in_tree.insert(uid.to_string()) {
            nodes.push(obj);
        }
    }
    // Owners first: repeat until no candidate joins (a Pod of a ReplicaSet of a Deployment).
    loop {
        let mut added = false;
        for obj in candidates {
            let uid = s(obj, "/metadata/uid");
            if uid.is_empty() || in_tree.contains(uid) {
                continue;
            }
            let owned = owner_refs(obj)
                .iter()
                .any(|r| in_tree.contains(s(r, "/uid")));
            if owned {
                in_tree.insert(uid.to_string());
                nodes.push(obj);
                added = true;
            }
        }
        if !added {
            break;
        }
    }
    let mut by_key: BTreeMap<(String, String, String, String), Value> = BTreeMap::new();
    for obj in nodes {
        let node = node(obj, &in_tree, assessor);
        let key = (
            s(&node, "/group").to_string(),
            s(&node, "/kind").to_string(),
            s(&node, "/namespace").to_string(),
            s(&node, "/name").to_string(),
        );
        by_key.insert(key, node);
    }
    json!({"nodes": by_key.into_values().collect::<Vec<_>>()})
}

fn owner_refs(obj: &Value) -> &[Value] {
    obj.pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// Argo's `resource.GetRevision`: the `deployment.kubernetes.io/revision` (or Argo Rollouts')
/// annotation of a Deployment or ReplicaSet, else a top-level `revision` (a
/// ControllerRevision); shown as `Rev:N` in the tree, which tells ReplicaSets apart.
fn revision(obj: &Value) -> Option<i64> {
    let annotations = obj.pointer("/metadata/annotations");
    for key in [
        "deployment.kubernetes.io/revision",
        "rollout.argoproj.io/revision",
    ] {
        if let Some(text) = annotations.and_then(|a| a.get(key)).and_then(Value::as_str) {
            // Argo ignores a parse error and answers 0, which it does not show.
            return text.parse::<i64>().ok().filter(|r| *r > 0);
        }
    }
    obj.get("revision")
        .and_then(Value::as_i64)
        .filter(|r| *r > 0)
}

/// One `ResourceNode`.
fn node(obj: &Value, in_tree: &BTreeSet<String>, assessor: &Assessor) -> Value {
    let (group, version) = group_version(s(obj, "/apiVersion"));
    let namespace = s(obj, "/metadata/namespace");
    let mut n = Map::new();
    for (k, v) in [
        ("group", group),
        ("version", version),
        ("kind", s(obj, "/kind")),
        ("namespace", namespace),
        ("name", s(obj, "/metadata/name")),
        ("uid", s(obj, "/metadata/uid")),
        ("resourceVersion", s(obj, "/metadata/resourceVersion")),
        ("createdAt", s(obj, "/metadata/creationTimestamp")),
    ] {
        if !v.is_empty() {
            n.insert(k.into(), json!(v));
        }
    }
    let parents: Vec<Value> = owner_refs(obj)
        .iter()
        .filter(|r| in_tree.contains(s(r, "/uid")))
        .map(|r| {
            let (g, _) = group_version(s(r, "/apiVersion"));
            json!({"group": g, "kind": s(r, "/kind"), "namespace": namespace,
                   "name": s(r, "/name"), "uid": s(r, "/uid")})
        })
        .collect();
    if !parents.is_empty() {
        n.insert("parentRefs".into(), Value::Array(parents));
    }
    if let Some(h) = assessor.assess(obj) {
        let mut health = Map::new();
        health.insert("status".into(), json!(h.code.as_str()));
        if !h.message.is_empty() {
            health.insert("message".into(), json!(h.message));
        }
        n.insert("health".into(), Value::Object(health));
    }
    if let Some(rev) = revision(obj) {
        n.insert(
            "info".into(),
            json!([{"name": "Revision", "value": format!("Rev:{rev}")}]),
        );
    }
    if s(obj, "/kind") == "Pod" {
        let images: Vec<Value> = ["/spec/initContainers", "/spec/containers"]
            .iter()
            .filter_map(|p| obj.pointer(p).and_then(Value::as_array))
            .flatten()
            .filter_map(|c| c.get("image").cloned())
            .collect();
        if !images.is_empty() {
            n.insert("images".into(), Value::Array(images));
        }
    }
    Value::Object(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revision_of_replica_sets_as_argo_shows_it() {
        let assessor = Assessor::new(plumb_health::Config::default()).unwrap();
        let mut rs = obj("apps/v1", "ReplicaSet", "payments-api-5d9", "r1", None);
        rs["metadata"]["annotations"] = json!({"deployment.kubernetes.io/revision": "3"});
        let mut bad = obj("apps/v1", "ReplicaSet", "payments-api-6e1", "r2", None);
        bad["metadata"]["annotations"] = json!({"deployment.kubernetes.io/revision": "x"});
        let mut cr = obj("apps/v1", "ControllerRevision", "db-7f", "c1", None);
        cr["revision"] = json!(2);
        let pod = obj("v1", "Pod", "payments-api-5d9-x", "p1", None);
        let tree = build(&[rs, bad, cr, pod], &[], &assessor);
        let info: Vec<(&str, Value)> = tree["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| (s(n, "/name"), n["info"].clone()))
            .collect();
        assert_eq!(
            info,
            [
                ("payments-api-5d9-x", Value::Null),
                ("db-7f", json!([{"name": "Revision", "value": "Rev:2"}])),
                (
                    "payments-api-5d9",
                    json!([{"name": "Revision", "value": "Rev:3"}])
                ),
                ("payments-api-6e1", Value::Null),
            ]
        );
    }

    fn obj(
        api: &str,
        kind: &str,
        name: &str,
        uid: &str,
        owner: Option<(&str, &str, &str, &str)>,
    ) -> Value {
        let mut o = json!({"apiVersion": api, "kind": kind,
            "metadata": {"name": name, "namespace": "payments", "uid": uid, "resourceVersion": "7"}});
        if let Some((a, k, n, u)) = owner {
            o["metadata"]["ownerReferences"] =
                json!([{"apiVersion": a, "kind": k, "name": n, "uid": u, "controller": true}]);
        }
        o
    }

    #[test]
    fn descendants_follow_owner_references_and_strangers_stay_out() {
        let assessor = Assessor::new(plumb_health::Config::default()).unwrap();
        let deploy = obj("apps/v1", "Deployment", "payments-api", "d1", None);
        let svc = obj("v1", "Service", "payments-api", "s1", None);
        let rs = obj(
            "apps/v1",
            "ReplicaSet",
            "payments-api-5d9",
            "r1",
            Some(("apps/v1", "Deployment", "payments-api", "d1")),
        );
        let mut pod = obj(
            "v1",
            "Pod",
            "payments-api-5d9-x",
            "p1",
            Some(("apps/v1", "ReplicaSet", "payments-api-5d9", "r1")),
        );
        pod["spec"] = json!({"containers": [{"name": "a", "image": "registry.acme.internal/payments-api:v1.3.2"}]});
        let stranger = obj(
            "v1",
            "Pod",
            "other",
            "p2",
            Some(("apps/v1", "ReplicaSet", "other", "r9")),
        );
        // The Pod comes before its ReplicaSet: order of the candidates does not matter.
        let tree = build(&[deploy, svc], &[pod, stranger, rs], &assessor);
        let nodes = tree["nodes"].as_array().unwrap();
        let names: Vec<(&str, &str)> = nodes
            .iter()
            .map(|n| (s(n, "/kind"), s(n, "/name")))
            .collect();
        assert_eq!(
            names,
            [
                ("Pod", "payments-api-5d9-x"),
                ("Service", "payments-api"),
                ("Deployment", "payments-api"),
                ("ReplicaSet", "payments-api-5d9")
            ]
        );
        let pod = &nodes[0];
        assert_eq!(
            pod["parentRefs"],
            json!([{"group": "apps", "kind": "ReplicaSet", "namespace": "payments", "name": "payments-api-5d9", "uid": "r1"}])
        );
        assert_eq!(
            pod["images"],
            json!(["registry.acme.internal/payments-api:v1.3.2"])
        );
        assert_eq!(pod["version"], "v1");
        assert_eq!(pod["group"], Value::Null);
        assert!(nodes[2].get("parentRefs").is_none());
        assert_eq!(nodes[1]["health"]["status"], "Healthy");
    }
}
