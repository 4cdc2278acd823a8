//! The live cache's data: one entry per object, full bodies only for tracked objects, and the
//! indexes (by Application, by owner uid, by namespace) that keep lookups from scanning.
//!
//! Only the stream returned by [`live_cache`](super::live_cache) writes; readers share it through
//! [`LiveCacheReader`](super::LiveCacheReader).

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use kube::api::{DynamicObject, TypeMeta};
use plumb_model::{GroupKind, ResourceKey};

use super::object::{AppChange, LiveObject, OwnerRef};
use super::tracking::{TrackedBy, Tracking};
use crate::discovery::ApiKind;

/// How far up owner references a change is attributed (Pod → ReplicaSet → Deployment is 2).
const OWNER_DEPTH: usize = 5;

/// The cache's data and indexes (public only for benches, through `plumb_kube::bench_support`).
#[derive(Debug, Default)]
pub struct Store {
    objects: HashMap<Key, Arc<LiveObject>>,
    by_app: HashMap<String, BTreeSet<Key>>,
    by_uid: HashMap<String, Key>,
    children: HashMap<String, BTreeSet<Key>>,
    by_namespace: HashMap<String, BTreeSet<Key>>,
    by_kind: HashMap<GroupKind, HashSet<Key>>,
}

/// One allocation per object key, shared by every index (a copy per index cost about a third
/// of an untracked object's memory).
type Key = Arc<ResourceKey>;

impl Store {
    pub fn get(&self, key: &ResourceKey) -> Option<Arc<LiveObject>> {
        self.objects.get(key).cloned()
    }

    pub fn len(&self) -> usize {
        self.objects.len()
    }

    pub fn is_empty(&self) -> bool {
        self.objects.is_empty()
    }

    fn lookup(&self, keys: Option<&BTreeSet<Key>>) -> Vec<Arc<LiveObject>> {
        keys.into_iter()
            .flatten()
            .filter_map(|k| self.objects.get(k.as_ref()).cloned())
            .collect()
    }

    pub fn app_objects(&self, app: &str) -> Vec<Arc<LiveObject>> {
        self.lookup(self.by_app.get(app))
    }

    pub fn children(&self, uid: &str) -> Vec<Arc<LiveObject>> {
        self.lookup(self.children.get(uid))
    }

    pub fn namespace_objects(&self, namespace: &str) -> Vec<Arc<LiveObject>> {
        self.lookup(self.by_namespace.get(namespace))
    }

    pub fn kind_keys(&self, gk: &GroupKind) -> Vec<ResourceKey> {
        self.by_kind
            .get(gk)
            .map(|s| s.iter().map(|k| ResourceKey::clone(k)).collect())
            .unwrap_or_default()
    }

    /// Stores an object; returns the apps to notify, or `None` when nothing changed.
    pub fn upsert(
        &mut self,
        kind: &ApiKind,
        obj: DynamicObject,
        tracking: &Tracking,
    ) -> Option<AppChange> {
        let entry = Arc::new(entry(kind, obj, tracking));
        if let Some(old) = self.objects.get(&entry.key)
            && old.resource_version == entry.resource_version
            && old.uid == entry.uid
        {
            return None;
        }
        let old = self.remove_entry(&entry.key);
        self.insert_entry(entry.clone());
        Some(self.change(&entry, old.as_deref()))
    }

    /// Forgets an object; returns the apps to notify.
    pub fn remove(&mut self, key: &ResourceKey) -> Option<AppChange> {
        let old = self.remove_entry(key)?;
        Some(self.change(&old, None))
    }

    fn insert_entry(&mut self, entry: Arc<LiveObject>) {
        let key: Key = Arc::new(entry.key.clone());
        if let Some(by) = &entry.tracked_by {
            self.by_app
                .entry(by.app.clone())
                .or_default()
                .insert(key.clone());
        }
        if !entry.uid.is_empty() {
            self.by_uid.insert(entry.uid.clone(), key.clone());
        }
        for owner in &entry.owners {
            self.children
                .entry(owner.uid.clone())
                .or_default()
                .insert(key.clone());
        }
        self.by_namespace
            .entry(key.namespace.clone())
            .or_default()
            .insert(key.clone());
        self.by_kind
            .entry(key.group_kind())
            .or_default()
            .insert(key.clone());
        self.objects.insert(key, entry);
    }

    fn remove_entry(&mut self, key: &ResourceKey) -> Option<Arc<LiveObject>> {
        let old = self.objects.remove(key)?;
        if let Some(by) = &old.tracked_by {
            remove_from(&mut self.by_app, &by.app, key);
        }
        if self.by_uid.get(&old.uid).map(Arc::as_ref) == Some(key) {
            self.by_uid.remove(&old.uid);
        }
        for owner in &old.owners {
            remove_from(&mut self.children, &owner.uid, key);
        }
        remove_from(&mut self.by_namespace, &key.namespace, key);
        if let Some(set) = self.by_kind.get_mut(&key.group_kind()) {
            set.remove(key);
        }
        Some(old)
    }

    /// Apps tracking the object (now or before) and apps tracking one of its owners.
    fn change(&self, new: &LiveObject, old: Option<&LiveObject>) -> AppChange {
        let managed: BTreeSet<String> = [Some(new), old]
            .into_iter()
            .flatten()
            .filter_map(|o| o.tracked_by.as_ref())
            .map(|t| t.app.clone())
            .collect();
        let mut tree = BTreeSet::new();
        let mut frontier: Vec<&str> = new.owners.iter().map(|o| o.uid.as_str()).collect();
        let mut seen = HashSet::new();
        for _ in 0..OWNER_DEPTH {
            let mut next = Vec::new();
            for uid in frontier {
                if !seen.insert(uid) {
                    continue;
                }
                let Some(owner) = self.by_uid.get(uid).and_then(|k| self.objects.get(k)) else {
                    continue;
                };
                match &owner.tracked_by {
                    Some(by) => {
                        tree.insert(by.app.clone());
                    }
                    None => next.extend(owner.owners.iter().map(|o| o.uid.as_str())),
                }
            }
            if next.is_empty() {
                break;
            }
            frontier = next;
        }
        AppChange {
            key: new.key.clone(),
            managed,
            tree,
        }
    }
}

fn remove_from(index: &mut HashMap<String, BTreeSet<Key>>, bucket: &str, key: &ResourceKey) {
    if let Some(set) = index.get_mut(bucket) {
        set.remove(key);
        if set.is_empty() {
            index.remove(bucket);
        }
    }
}

/// The cache entry of an object: minimal metadata always, the full body only when tracked.
pub(crate) fn entry(kind: &ApiKind, obj: DynamicObject, tracking: &Tracking) -> LiveObject {
    let meta = &obj.metadata;
    let key = ResourceKey::new(
        kind.resource.group.clone(),
        kind.resource.kind.clone(),
        meta.namespace.clone().unwrap_or_default(),
        meta.name.clone().unwrap_or_default(),
    );
    // A tracking id naming another object was copied onto this one (the Deployment controller
    // copies annotations to its ReplicaSets): Argo treats such objects as untracked.
    let tracked_by: Option<TrackedBy> = tracking
        .tracked_by(&key, meta.annotations.as_ref(), meta.labels.as_ref())
        .filter(|t| t.self_referencing);
    let owners = meta
        .owner_references
        .iter()
        .flatten()
        .map(|o| OwnerRef {
            api_version: o.api_version.clone(),
            kind: o.kind.clone(),
            name: o.name.clone(),
            uid: o.uid.clone(),
            controller: o.controller.unwrap_or(false),
        })
        .collect();
    let uid = meta.uid.clone().unwrap_or_default();
    let resource_version = meta.resource_version.clone().unwrap_or_default();
    let body = tracked_by.is_some().then(|| full_object(kind, obj));
    LiveObject {
        key,
        api_version: kind.resource.api_version.clone(),
        uid,
        resource_version,
        owners,
        tracked_by,
        body,
    }
}

/// The object as compact JSON with `apiVersion`/`kind` set (list responses leave them out of
/// items).
fn full_object(kind: &ApiKind, mut obj: DynamicObject) -> Arc<str> {
    obj.types = Some(TypeMeta {
        api_version: kind.resource.api_version.clone(),
        kind: kind.resource.kind.clone(),
    });
    // Serializing a decoded object cannot fail (string keys only).
    serde_json::to_string(&obj).unwrap_or_default().into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::discovery::ApiResource;
    use serde_json::json;

    fn kind(group: &str, version: &str, kind: &str, plural: &str) -> ApiKind {
        let api_version = if group.is_empty() {
            version.to_string()
        } else {
            format!("{group}/{version}")
        };
        ApiKind {
            resource: ApiResource {
                group: group.into(),
                version: version.into(),
                api_version,
                kind: kind.into(),
                plural: plural.into(),
            },
            namespaced: true,
            verbs: vec!["list".into(), "watch".into()],
            status_subresource: false,
        }
    }

    fn deployment(rv: &str) -> DynamicObject {
        // As a list response returns it: no apiVersion/kind on the item.
        serde_json::from_value(json!({
            "metadata": {
                "name": "payments-api", "namespace": "payments", "uid": "d-1", "resourceVersion": rv,
                "generation": 2, "creationTimestamp": "2026-11-29T10:02:21Z",
                "annotations": {"argocd.argoproj.io/tracking-id": "payments-api:apps/Deployment:payments/payments-api",
                                "deployment.kubernetes.io/revision": "2"},
                "managedFields": [{"manager": "plumb-controller", "operation": "Apply", "apiVersion": "apps/v1",
                                   "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:replicas": {}}}}]
            },
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "payments-api"}}},
            "status": {"replicas": 3, "updatedReplicas": 3, "availableReplicas": 3, "observedGeneration": 2}
        }))
        .unwrap()
    }

    fn replica_set() -> DynamicObject {
        serde_json::from_value(json!({
            "metadata": {
                "name": "payments-api-7d9f8b6c5", "namespace": "payments", "uid": "rs-1", "resourceVersion": "51",
                "labels": {"app": "payments-api", "pod-template-hash": "7d9f8b6c5"},
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "payments-api",
                                     "uid": "d-1", "controller": true, "blockOwnerDeletion": true}]
            },
            "spec": {"replicas": 3},
            "status": {"replicas": 3}
        }))
        .unwrap()
    }

    fn pod(rv: &str) -> DynamicObject {
        serde_json::from_value(json!({
            "metadata": {
                "name": "payments-api-7d9f8b6c5-x2x9q", "namespace": "payments", "uid": "p-1", "resourceVersion": rv,
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "payments-api-7d9f8b6c5",
                                     "uid": "rs-1", "controller": true, "blockOwnerDeletion": true}]
            },
            "spec": {"containers": [{"name": "api", "image": "registry.example.com/payments-api:v1.4.0"}]},
            "status": {"phase": "Running"}
        }))
        .unwrap()
    }

    #[test]
    fn tracked_objects_keep_bodies_and_are_indexed_by_app() {
        let mut store = Store::default();
        let tracking = Tracking::default();
        let deploy_kind = kind("apps", "v1", "Deployment", "deployments");
        let change = store
            .upsert(&deploy_kind, deployment("50"), &tracking)
            .unwrap();
        assert_eq!(change.managed, BTreeSet::from(["payments-api".to_string()]));
        store.upsert(
            &kind("apps", "v1", "ReplicaSet", "replicasets"),
            replica_set(),
            &tracking,
        );
        store.upsert(&kind("", "v1", "Pod", "pods"), pod("60"), &tracking);

        let objects = store.app_objects("payments-api");
        assert_eq!(objects.len(), 1);
        let body = objects[0].object().unwrap();
        assert_eq!(body["apiVersion"], "apps/v1");
        assert_eq!(body["kind"], "Deployment");
        assert!(
            body["metadata"]["managedFields"].is_array(),
            "drift attribution needs managedFields"
        );

        let rs = store
            .get(&ResourceKey::new(
                "apps",
                "ReplicaSet",
                "payments",
                "payments-api-7d9f8b6c5",
            ))
            .unwrap();
        assert!(!rs.has_object(), "untracked objects keep metadata only");
        assert_eq!(rs.owners[0].uid, "d-1");
        assert!(rs.owners[0].controller);
        assert_eq!(store.children("d-1").len(), 1);
        assert_eq!(store.namespace_objects("payments").len(), 3);
    }

    #[test]
    fn a_pod_change_reaches_the_app_owning_its_deployment() {
        let mut store = Store::default();
        let tracking = Tracking::default();
        store.upsert(
            &kind("apps", "v1", "Deployment", "deployments"),
            deployment("50"),
            &tracking,
        );
        store.upsert(
            &kind("apps", "v1", "ReplicaSet", "replicasets"),
            replica_set(),
            &tracking,
        );
        let pods = kind("", "v1", "Pod", "pods");
        store.upsert(&pods, pod("60"), &tracking);
        let change = store.upsert(&pods, pod("61"), &tracking).unwrap();
        assert!(change.managed.is_empty());
        assert_eq!(change.tree, BTreeSet::from(["payments-api".to_string()]));
        assert_eq!(
            store.upsert(&pods, pod("61"), &tracking),
            None,
            "same resourceVersion is no change"
        );
    }

    #[test]
    fn a_copied_tracking_id_does_not_track() {
        let mut store = Store::default();
        let mut rs = replica_set();
        // kube-controller-manager copies the Deployment's annotations onto its ReplicaSets.
        rs.metadata.annotations = Some(
            [(
                plumb_model::annotations::TRACKING_ID.to_string(),
                "payments-api:apps/Deployment:payments/payments-api".to_string(),
            )]
            .into(),
        );
        store.upsert(
            &kind("apps", "v1", "ReplicaSet", "replicasets"),
            rs,
            &Tracking::default(),
        );
        assert!(store.app_objects("payments-api").is_empty());
        let key = ResourceKey::new("apps", "ReplicaSet", "payments", "payments-api-7d9f8b6c5");
        let entry = store.get(&key).unwrap();
        assert!(!entry.has_object() && entry.tracked_by.is_none());
    }

    #[test]
    fn removing_a_tracked_object_clears_every_index() {
        let mut store = Store::default();
        let tracking = Tracking::default();
        let deploy_kind = kind("apps", "v1", "Deployment", "deployments");
        store.upsert(&deploy_kind, deployment("50"), &tracking);
        let key = ResourceKey::new("apps", "Deployment", "payments", "payments-api");
        let change = store.remove(&key).unwrap();
        assert_eq!(change.managed.len(), 1);
        assert!(store.app_objects("payments-api").is_empty());
        assert!(store.namespace_objects("payments").is_empty());
        assert!(store.kind_keys(&key.group_kind()).is_empty());
        assert_eq!(store.len(), 0);
        assert_eq!(store.remove(&key), None);
    }

    #[test]
    fn untracking_an_object_notifies_its_former_app() {
        let mut store = Store::default();
        let tracking = Tracking::default();
        let deploy_kind = kind("apps", "v1", "Deployment", "deployments");
        store.upsert(&deploy_kind, deployment("50"), &tracking);
        let mut untracked = deployment("51");
        untracked.metadata.annotations = None;
        let change = store.upsert(&deploy_kind, untracked, &tracking).unwrap();
        assert_eq!(change.managed, BTreeSet::from(["payments-api".to_string()]));
        assert!(store.app_objects("payments-api").is_empty());
    }
}
