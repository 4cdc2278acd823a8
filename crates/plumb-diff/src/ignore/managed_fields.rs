//! `managedFieldsManagers`: fields the live object's managedFields say the listed managers own
//! are removed from both sides (Argo `util/argo/managedfields`), so a controller that owns a
//! field (an HPA owning `spec.replicas`) never shows as drift. What a manager owns is only known
//! per object, so the guard rails run here: an owned field that is sensitive stays compared,
//! with a note, unless sensitive ignores are allowed.

use plumb_model::ResourceKey;
use serde_json::Value;

use super::guard;
use super::json_pointer::{Step, remove_path};
use super::rule::IgnoreRule;
use crate::managed_fields::ManagedEntry;
use crate::path::key_value_text;

pub(super) fn remove_owned(
    rule: &IgnoreRule,
    managed: &[ManagedEntry],
    objects: &mut [&mut Value],
    key: &ResourceKey,
    allow_sensitive: bool,
) -> Vec<String> {
    let mut notes = Vec::new();
    for entry in managed
        .iter()
        .filter(|e| rule.managed_fields_managers.contains(&e.manager))
    {
        for leaf in entry.leaves() {
            let tokens: Vec<String> = leaf
                .iter()
                .map(|k| {
                    k.strip_prefix("f:")
                        .map_or_else(|| "*".to_string(), str::to_string)
                })
                .collect();
            if !allow_sensitive && let Some(hit) = guard::check_path(&key.group, &key.kind, &tokens)
            {
                notes.push(format!(
                    "{}: managedFieldsManagers {} owns {} on {key}, a sensitive field ({}); it is still compared",
                    rule.origin,
                    entry.manager,
                    tokens.join("."),
                    hit.field
                ));
                continue;
            }
            for obj in objects.iter_mut() {
                if let Some(steps) = resolve(obj, &leaf) {
                    remove_path(obj, &steps);
                }
            }
        }
    }
    notes
}

/// Turns trie keys into concrete steps for one object (list elements found by key or value).
fn resolve(obj: &Value, leaf: &[String]) -> Option<Vec<Step>> {
    let mut steps = Vec::with_capacity(leaf.len());
    let mut cur = obj;
    for k in leaf {
        if let Some(field) = k.strip_prefix("f:") {
            cur = cur.get(field)?;
            steps.push(Step::Token(field.to_string()));
        } else if let Some(i) = k.strip_prefix("i:") {
            let i: usize = i.parse().ok()?;
            cur = cur.get(i)?;
            steps.push(Step::Index(i64::try_from(i).ok()?));
        } else if let Some(json) = k.strip_prefix("k:") {
            let want: Value = serde_json::from_str(json).ok()?;
            let want = want.as_object()?;
            let items = cur.as_array()?;
            let i = items
                .iter()
                // Key values are compared as printed: the trie keeps them as text.
                .position(|item| {
                    want.iter()
                        .all(|(f, v)| item.get(f).map(key_value_text) == Some(key_value_text(v)))
                })?;
            cur = &items[i];
            steps.push(Step::Index(i64::try_from(i).ok()?));
        } else if let Some(json) = k.strip_prefix("v:") {
            let want: Value = serde_json::from_str(json).ok()?;
            let items = cur.as_array()?;
            let i = items.iter().position(|item| *item == want)?;
            cur = &items[i];
            steps.push(Step::Index(i64::try_from(i).ok()?));
        } else {
            return None;
        }
    }
    Some(steps)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::managed_fields::managed_entries;
    use serde_json::json;

    #[test]
    fn fields_owned_by_listed_manager_are_removed_from_both_sides() {
        let mut live = json!({"metadata": {"managedFields": [
            {"manager": "hpa-controller", "operation": "Update", "time": "2026-07-20T10:05:00Z",
             "fieldsV1": {"f:spec": {"f:replicas": {}}}},
            {"manager": "sidecar-injector", "operation": "Update", "time": "2026-07-20T10:05:00Z",
             "fieldsV1": {"f:spec": {"f:template": {"f:spec": {"f:containers": {"k:{\"name\":\"proxy\"}": {".": {}, "f:name": {}, "f:image": {}}}}}}}}
        ]}, "spec": {"replicas": 7, "template": {"spec": {"containers": [{"name": "app", "image": "a"}, {"name": "proxy", "image": "p"}]}}}});
        let managed = managed_entries(&live);
        let mut desired = json!({"spec": {"replicas": 3, "template": {"spec": {"containers": [{"name": "app", "image": "a"}]}}}});
        let rule = IgnoreRule {
            managed_fields_managers: vec!["hpa-controller".into()],
            origin: "r".into(),
            ..Default::default()
        };
        let key = ResourceKey::new("apps", "Deployment", "ns", "d");
        let notes = remove_owned(&rule, &managed, &mut [&mut desired, &mut live], &key, false);
        assert!(notes.is_empty());
        assert!(desired["spec"].get("replicas").is_none());
        assert!(live["spec"].get("replicas").is_none());

        // The injector owns a container image: sensitive, so it stays unless allowed.
        let (mut desired2, mut live2) = (desired.clone(), live.clone());
        let rule = IgnoreRule {
            managed_fields_managers: vec!["sidecar-injector".into()],
            origin: "r2".into(),
            ..Default::default()
        };
        let notes = remove_owned(&rule, &managed, &mut [&mut desired, &mut live], &key, false);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].contains("containers.*.image"), "{notes:?}");
        assert_eq!(
            live["spec"]["template"]["spec"]["containers"][1]["image"],
            "p"
        );
        let notes = remove_owned(
            &rule,
            &managed,
            &mut [&mut desired2, &mut live2],
            &key,
            true,
        );
        assert!(notes.is_empty());
        assert_eq!(
            live2["spec"]["template"]["spec"]["containers"]
                .as_array()
                .unwrap()
                .len(),
            1
        );
    }
}
