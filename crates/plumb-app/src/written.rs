//! What a sync just wrote, for the comparison that records its result: each applied object as
//! the API server stored it is the live object right after the write, and (desired unchanged)
//! also what a server-side dry run of it would predict, so that comparison asks the API server
//! neither for the object nor for a dry run. Objects the sync touched otherwise (pruned, hooks,
//! failed writes) are read fresh.

use std::collections::{BTreeSet, HashMap};

use plumb_model::ResourceKey;
use serde_json::Value;

/// The writes of one sync.
#[derive(Debug, Default, Clone)]
pub struct Written {
    /// key → (hash of the desired object written, the object as stored).
    applied: HashMap<ResourceKey, (String, Value)>,
    /// Every object the sync touched.
    touched: BTreeSet<ResourceKey>,
}

impl Written {
    /// Records an apply: `desired` was written and the API server answered `stored`.
    pub fn applied(&mut self, key: &ResourceKey, desired: &Value, stored: &Value) {
        self.touched.insert(key.clone());
        self.applied.insert(
            key.clone(),
            (plumb_diff::hash_value(desired), stored.clone()),
        );
    }

    /// Records an object the sync touched without an applied answer (pruned, hook, failed).
    pub fn touched(&mut self, key: ResourceKey) {
        self.touched.insert(key);
    }

    /// The stored answer of the apply of `key`.
    pub(super) fn stored(&self, key: &ResourceKey) -> Option<&Value> {
        self.applied.get(key).map(|(_, v)| v)
    }

    /// Whether the sync touched `key` without an applied answer.
    pub(super) fn touched_only(&self, key: &ResourceKey) -> bool {
        self.touched.contains(key) && !self.applied.contains_key(key)
    }

    /// The predicted live object of `desired` against `live`, when `live` is exactly what the
    /// apply of the same desired object stored: a server-side apply is idempotent, so a dry run
    /// of it again would answer the stored object unchanged.
    pub(super) fn prediction(
        &self,
        key: &ResourceKey,
        desired: &Value,
        live: &Value,
    ) -> Option<&Value> {
        let (hash, stored) = self.applied.get(key)?;
        predicts(hash, stored, desired, live).then_some(stored)
    }
}

/// Whether the answer `stored` of applying the desired object hashed `hash` serves as a dry
/// run's answer of `desired` against `live`: the same desired object and the same object, and
/// `live` is that very version or differs from it only where the diff takes live's values
/// anyway ([`plumb_diff::answer_basis`]: the Deployment controller's revision annotation,
/// written moments after the apply, say).
pub(crate) fn predicts(hash: &str, stored: &Value, desired: &Value, live: &Value) -> bool {
    let same = |p: &str| stored.pointer(p).is_some() && stored.pointer(p) == live.pointer(p);
    same("/metadata/uid")
        && hash == plumb_diff::hash_value(desired)
        && (same("/metadata/resourceVersion")
            || plumb_diff::answer_basis(stored, desired) == plumb_diff::answer_basis(live, desired))
}

/// Whether `cached` (a resourceVersion from the live cache) is at least `stored`. Kubernetes
/// says resourceVersions are opaque; every API server this runs against hands out etcd revisions
/// (decimal integers), and when either is not one the cache is not trusted.
pub(crate) fn at_least(cached: &str, stored: &str) -> bool {
    match (cached.parse::<u64>(), stored.parse::<u64>()) {
        (Ok(c), Ok(s)) => c >= s,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cm(rv: &str, data: &str) -> Value {
        json!({"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": "a", "namespace": "web", "uid": "u1", "resourceVersion": rv},
               "data": {"k": data}})
    }

    #[test]
    fn the_stored_answer_predicts_only_the_same_desired_against_the_same_version() {
        let key = ResourceKey::new("", "ConfigMap", "web", "a");
        let desired = json!({"apiVersion": "v1", "kind": "ConfigMap",
                             "metadata": {"name": "a", "namespace": "web"}, "data": {"k": "x"}});
        let mut w = Written::default();
        w.applied(&key, &desired, &cm("10", "x"));
        assert_eq!(
            w.prediction(&key, &desired, &cm("10", "x")),
            Some(&cm("10", "x"))
        );
        assert!(
            w.prediction(&key, &desired, &cm("11", "edited")).is_none(),
            "live moved on"
        );
        assert_eq!(
            w.prediction(&key, &desired, &cm("11", "x")),
            Some(&cm("10", "x")),
            "a new version with the same content"
        );
        let mut other = desired.clone();
        other["data"]["k"] = json!("y");
        assert!(
            w.prediction(&key, &other, &cm("10", "x")).is_none(),
            "Git moved on"
        );
        let mut recreated = cm("10", "x");
        recreated["metadata"]["uid"] = json!("u2");
        assert!(
            w.prediction(&key, &desired, &recreated).is_none(),
            "another object"
        );
        // Another manager's label, its entry and a status moments later: the same answer.
        let mut owned = cm("10", "x");
        owned["metadata"]["managedFields"] = json!([{"manager": "plumb-controller",
            "operation": "Apply", "fieldsType": "FieldsV1",
            "fieldsV1": {"f:data": {"f:k": {}}}}]);
        w.applied(&key, &desired, &owned);
        let mut labelled = owned.clone();
        labelled["metadata"]["resourceVersion"] = json!("12");
        labelled["metadata"]["labels"] = json!({"policy.example.com/scanned": "true"});
        labelled["metadata"]["managedFields"]
            .as_array_mut()
            .expect("entries")
            .push(json!({"manager": "scanner", "operation": "Update", "fieldsType": "FieldsV1",
                         "fieldsV1": {"f:metadata": {"f:labels": {"f:policy.example.com/scanned": {}}}}}));
        assert_eq!(w.prediction(&key, &desired, &labelled), Some(&owned));
        let mut edited = labelled.clone();
        edited["data"]["k"] = json!("edited");
        assert!(
            w.prediction(&key, &desired, &edited).is_none(),
            "a field Plumb owns moved on"
        );
        let other_key = ResourceKey::new("", "ConfigMap", "web", "b");
        assert!(w.prediction(&other_key, &desired, &cm("10", "x")).is_none());
        w.touched(other_key.clone());
        assert!(w.touched_only(&other_key));
        assert!(!w.touched_only(&key));
    }

    #[test]
    fn only_decimal_versions_are_ordered() {
        assert!(at_least("12", "12"));
        assert!(at_least("13", "12"));
        assert!(!at_least("9", "12"));
        assert!(!at_least("abc", "12"));
        assert!(!at_least("12", ""));
    }
}
