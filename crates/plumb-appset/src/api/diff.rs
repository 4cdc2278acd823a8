//! A preview compared with the cluster (`plumb appset diff`, beyond Argo): the Applications a
//! set would add, change (field by field) and delete. Only what the controller writes is
//! compared: name, namespace, labels, annotations, finalizers and spec, with the fields Argo's
//! controller leaves alone (its default preserved annotations, `preservedFields`, the
//! post-delete finalizers, `ignoreApplicationDifferences` JSON pointers) taken out of both.

use std::collections::BTreeMap;

use plumb_model::application::Application;
use plumb_model::applicationset::ApplicationSet;
use serde_json::{Map, Value, json};

/// Annotations Argo's controller keeps on generated Applications whatever the template says.
const PRESERVED_ANNOTATIONS: [&str; 3] = [
    "notified.notifications.argoproj.io",
    "argocd.argoproj.io/refresh",
    "argocd.argoproj.io/hydrate",
];

/// Finalizers Argo keeps on live Applications (post-delete hooks).
const PRESERVED_FINALIZER_PREFIX: &str = "post-delete-finalizer.argocd.argoproj.io";

/// One Application that exists and would change.
#[derive(Debug, Clone, PartialEq)]
pub struct Changed {
    /// Its name.
    pub name: String,
    /// The differing fields, as dotted paths (`spec.source.path`, `metadata.labels.team`).
    pub fields: Vec<String>,
    /// The compared part of the live Application.
    pub live: Value,
    /// The compared part of the generated one.
    pub desired: Value,
}

/// What applying a preview would do to the fleet.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FleetDiff {
    /// Generated Applications that do not exist yet (their compared part), by name.
    pub added: Vec<Value>,
    /// Existing Applications that would change, by name.
    pub changed: Vec<Changed>,
    /// Applications the set owns that it would no longer generate, by name.
    pub deleted: Vec<String>,
    /// How many are the same.
    pub unchanged: usize,
}

impl FleetDiff {
    /// Whether anything would change.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.changed.is_empty() && self.deleted.is_empty()
    }
}

/// Compares what `set` generates (`generated`) with the Applications it owns (`live`, as JSON).
pub fn fleet_diff(set: &ApplicationSet, generated: &[Application], live: &[Value]) -> FleetDiff {
    let mut live_by_name: BTreeMap<String, Value> = live
        .iter()
        .map(|v| {
            (
                super::objects::name_of(v).to_string(),
                compared(set, v, true),
            )
        })
        .collect();
    let mut desired: Vec<(String, Value)> = generated
        .iter()
        .map(|app| {
            let value = serde_json::to_value(app).unwrap_or(Value::Null);
            (
                super::objects::name_of(&value).to_string(),
                compared(set, &value, false),
            )
        })
        .collect();
    desired.sort_by(|a, b| a.0.cmp(&b.0));
    let mut diff = FleetDiff::default();
    for (name, want) in desired {
        match live_by_name.remove(&name) {
            None => diff.added.push(want),
            Some(have) if have == want => diff.unchanged += 1,
            Some(have) => {
                let mut fields = Vec::new();
                paths(&have, &want, "", &mut fields);
                diff.changed.push(Changed {
                    name,
                    fields,
                    live: have,
                    desired: want,
                });
            }
        }
    }
    diff.deleted = live_by_name.into_keys().collect();
    diff
}

/// The part of an Application the controller writes, with what it leaves alone taken out.
fn compared(set: &ApplicationSet, app: &Value, is_live: bool) -> Value {
    let meta = app.get("metadata").cloned().unwrap_or_default();
    let namespace = meta
        .get("namespace")
        .and_then(Value::as_str)
        .filter(|ns| !ns.is_empty())
        .unwrap_or(set.namespace());
    let mut out_meta = Map::new();
    out_meta.insert("name".into(), meta.get("name").cloned().unwrap_or_default());
    out_meta.insert("namespace".into(), namespace.into());
    let preserved = set.spec.preserved_fields.as_ref();
    let keep = |field: &str, key: &str| {
        let listed = match field {
            "annotations" => preserved.and_then(|p| p.annotations.as_ref()),
            _ => preserved.and_then(|p| p.labels.as_ref()),
        };
        (field == "annotations" && PRESERVED_ANNOTATIONS.contains(&key))
            || listed.is_some_and(|l| l.iter().any(|k| k == key))
    };
    for field in ["labels", "annotations"] {
        let map: Map<String, Value> = meta
            .get(field)
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .filter(|(k, _)| !keep(field, k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if !map.is_empty() {
            out_meta.insert(field.into(), Value::Object(map));
        }
    }
    let finalizers: Vec<Value> = meta
        .get("finalizers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|f| {
            !(is_live
                && f.as_str()
                    .is_some_and(|f| f.starts_with(PRESERVED_FINALIZER_PREFIX)))
        })
        .cloned()
        .collect();
    if !finalizers.is_empty() {
        out_meta.insert("finalizers".into(), finalizers.into());
    }
    let mut out =
        json!({"metadata": out_meta, "spec": app.get("spec").cloned().unwrap_or_default()});
    ignore_pointers(set, &mut out);
    out
}

/// `ignoreApplicationDifferences` JSON pointers (jq paths are not applied here).
fn ignore_pointers(set: &ApplicationSet, app: &mut Value) {
    let name = super::objects::name_of(app).to_string();
    let rules = set.spec.ignore_application_differences.iter().flatten();
    for rule in rules.filter(|r| r.name.as_deref().is_none_or(|n| n.is_empty() || n == name)) {
        for pointer in rule.json_pointers.iter().flatten() {
            remove_pointer(app, pointer);
        }
    }
}

fn remove_pointer(doc: &mut Value, pointer: &str) {
    let Some((parent, last)) = pointer.rsplit_once('/') else {
        return;
    };
    let last = last.replace("~1", "/").replace("~0", "~");
    match doc.pointer_mut(parent) {
        Some(Value::Object(map)) => {
            map.remove(&last);
        }
        Some(Value::Array(items)) => {
            if let Ok(i) = last.parse::<usize>()
                && i < items.len()
            {
                items.remove(i);
            }
        }
        _ => {}
    }
}

/// The dotted paths where `a` and `b` differ, leaves first found first.
fn paths(a: &Value, b: &Value, prefix: &str, out: &mut Vec<String>) {
    let join = |k: &str| {
        if prefix.is_empty() {
            k.to_string()
        } else {
            format!("{prefix}.{k}")
        }
    };
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for k in keys {
                let (va, vb) = (
                    x.get(k).unwrap_or(&Value::Null),
                    y.get(k).unwrap_or(&Value::Null),
                );
                paths(va, vb, &join(k), out);
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (va, vb)) in x.iter().zip(y).enumerate() {
                paths(va, vb, &format!("{prefix}[{i}]"), out);
            }
        }
        _ if a != b => out.push(prefix.to_string()),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn app(name: &str, path: &str, extra_annotation: bool) -> Value {
        let mut annotations = json!({"team": "a"});
        if extra_annotation {
            annotations["argocd.argoproj.io/refresh"] = "normal".into();
        }
        json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
               "metadata": {"name": name, "namespace": "argocd", "annotations": annotations,
                            "uid": "x", "resourceVersion": "7"},
               "spec": {"project": "default", "source": {"repoURL": "r", "path": path},
                        "destination": {"server": "https://kubernetes.default.svc"}},
               "status": {"sync": {"status": "Synced"}}})
    }

    #[test]
    fn added_changed_deleted_and_preserved_fields() {
        let set: ApplicationSet = serde_json::from_value(json!({
            "metadata": {"name": "s", "namespace": "argocd"}, "spec": {}}))
        .unwrap();
        let generated: Vec<Application> = [
            app("a", "a", false),
            app("b", "b2", false),
            app("c", "c", false),
        ]
        .into_iter()
        .map(|v| serde_json::from_value(v).unwrap())
        .collect();
        let live = [
            app("b", "b", true),
            app("c", "c", true),
            app("z", "z", false),
        ];
        let d = fleet_diff(&set, &generated, &live);
        assert_eq!(d.added.len(), 1);
        assert_eq!(d.added[0]["metadata"]["name"], "a");
        assert_eq!(d.changed.len(), 1);
        assert_eq!(d.changed[0].name, "b");
        assert_eq!(d.changed[0].fields, ["spec.source.path"]);
        assert_eq!(d.deleted, ["z"]);
        assert_eq!(d.unchanged, 1, "the refresh annotation is not a difference");
        assert!(!d.is_empty());
    }

    #[test]
    fn ignored_pointers_are_not_differences() {
        let set: ApplicationSet = serde_json::from_value(json!({
            "metadata": {"name": "s", "namespace": "argocd"},
            "spec": {"ignoreApplicationDifferences": [{"jsonPointers": ["/spec/source/path"]}]}
        }))
        .unwrap();
        let generated: Vec<Application> =
            vec![serde_json::from_value(app("b", "new", false)).unwrap()];
        let d = fleet_diff(&set, &generated, &[app("b", "old", false)]);
        assert!(d.is_empty(), "{d:?}");
    }
}
