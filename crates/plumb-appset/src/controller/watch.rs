//! The watches that queue sets: ApplicationSets (a change of spec or metadata, not of the
//! status the controller writes), the Applications they own (any change of spec, metadata,
//! sync or health, or a deletion: the owner re-creates or reports it), and the cluster Secrets
//! (sets with a clusters generator anywhere in them).

use std::collections::{BTreeMap, HashMap};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{Arc, Mutex};

use futures::StreamExt;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DynamicObject};
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};
use serde_json::Value;

use plumb_model::applicationset::{ApplicationSet, ApplicationSetGenerator};

use super::desired::CLUSTER_SECRET_SELECTOR;
use super::{Runtime, application_resource, applicationset_resource};

/// The sets seen: key → (fingerprint of what triggers a reconcile, has a clusters generator).
#[derive(Default)]
pub(crate) struct Known {
    sets: Mutex<BTreeMap<String, (u64, bool)>>,
    apps: Mutex<HashMap<String, u64>>,
}

impl Known {
    fn sets(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, (u64, bool)>> {
        self.sets.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn apps(&self) -> std::sync::MutexGuard<'_, HashMap<String, u64>> {
        self.apps.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Starts the three watches.
pub(crate) fn spawn(rt: &Arc<Runtime>) {
    tokio::spawn(watch_sets(rt.clone()));
    tokio::spawn(watch_apps(rt.clone()));
    tokio::spawn(watch_clusters(rt.clone()));
}

fn key_of(v: &Value) -> Option<String> {
    let ns = v.pointer("/metadata/namespace")?.as_str()?;
    let name = v.pointer("/metadata/name")?.as_str()?;
    Some(format!("{ns}/{name}"))
}

fn fingerprint(v: &Value, pointers: &[&str]) -> u64 {
    let mut h = DefaultHasher::new();
    for p in pointers {
        v.pointer(p).map(Value::to_string).hash(&mut h);
    }
    h.finish()
}

/// Where both watches list: the control namespace alone, or all namespaces when other
/// namespaces are configured (patterns may match namespaces created later).
fn scoped(rt: &Runtime, resource: &kube::api::ApiResource) -> Api<DynamicObject> {
    if rt.config.namespaces.is_empty() {
        Api::namespaced_with(
            rt.ctx.client.clone(),
            &rt.config.control_namespace,
            resource,
        )
    } else {
        Api::all_with(rt.ctx.client.clone(), resource)
    }
}

async fn watch_sets(rt: Arc<Runtime>) {
    let api = scoped(&rt, &applicationset_resource());
    let mut stream = watcher::watcher(api, watcher::Config::default())
        .default_backoff()
        .boxed();
    while let Some(event) = stream.next().await {
        match event {
            Ok(Event::Apply(o) | Event::InitApply(o)) => set_changed(&rt, o),
            Ok(Event::Delete(o)) => {
                let v = serde_json::to_value(&o).unwrap_or_default();
                if let Some(key) = key_of(&v) {
                    rt.sets.sets().remove(&key);
                    rt.queue.forget(&key);
                    let (ns, name) = key.split_once('/').unwrap_or_default();
                    rt.metrics.forget(ns, name);
                }
            }
            Ok(Event::Init | Event::InitDone) => {}
            Err(e) => tracing::warn!("watching ApplicationSets: {e}"),
        }
    }
}

fn set_changed(rt: &Runtime, o: DynamicObject) {
    let v = serde_json::to_value(&o).unwrap_or_default();
    let Some(key) = key_of(&v) else { return };
    let ns = v
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if !rt.config.namespace_allowed(ns) {
        return;
    }
    // The spec (generation), metadata the controller reads, and deletion: not the status.
    let print = fingerprint(
        &v,
        &[
            "/metadata/generation",
            "/metadata/annotations",
            "/metadata/labels",
            "/metadata/finalizers",
            "/metadata/deletionTimestamp",
        ],
    );
    let clusters = serde_json::from_value::<ApplicationSet>(v)
        .map(|s| s.spec.generators.iter().any(has_clusters))
        .unwrap_or(false);
    let old = rt.sets.sets().insert(key.clone(), (print, clusters));
    if old.map(|(p, _)| p) != Some(print) {
        rt.queue.push(&key);
    }
}

fn has_clusters(g: &ApplicationSetGenerator) -> bool {
    g.clusters.is_some()
        || g.matrix
            .as_ref()
            .is_some_and(|m| m.generators.iter().flatten().any(has_clusters))
        || g.merge
            .as_ref()
            .is_some_and(|m| m.generators.iter().flatten().any(has_clusters))
}

async fn watch_apps(rt: Arc<Runtime>) {
    let api = scoped(&rt, &application_resource());
    let mut stream = watcher::watcher(api, watcher::Config::default())
        .default_backoff()
        .boxed();
    while let Some(event) = stream.next().await {
        match event {
            Ok(Event::Apply(o) | Event::InitApply(o)) => app_changed(&rt, &o, false),
            Ok(Event::Delete(o)) => app_changed(&rt, &o, true),
            Ok(Event::Init | Event::InitDone) => {}
            Err(e) => tracing::warn!("watching Applications: {e}"),
        }
    }
}

fn app_changed(rt: &Runtime, o: &DynamicObject, deleted: bool) {
    let v = serde_json::to_value(o).unwrap_or_default();
    let Some(key) = key_of(&v) else { return };
    let print = fingerprint(
        &v,
        &[
            "/spec",
            "/operation",
            "/metadata/annotations",
            "/metadata/labels",
            "/metadata/finalizers",
            "/metadata/ownerReferences",
            "/metadata/deletionTimestamp",
            "/status/sync/status",
            "/status/health/status",
        ],
    );
    let changed = if deleted {
        rt.sets.apps().remove(&key);
        true
    } else {
        rt.sets.apps().insert(key.clone(), print) != Some(print)
    };
    if !changed {
        return;
    }
    if let Some(set) = super::owner::owning_set(&v) {
        let ns = key.split_once('/').map_or("", |(ns, _)| ns);
        rt.queue.push(&format!("{ns}/{set}"));
    }
}

async fn watch_clusters(rt: Arc<Runtime>) {
    let api: Api<Secret> = Api::namespaced(rt.ctx.client.clone(), &rt.config.control_namespace);
    let config = watcher::Config::default().labels(CLUSTER_SECRET_SELECTOR);
    let mut stream = watcher::watcher(api, config).default_backoff().boxed();
    let mut listed = false;
    while let Some(event) = stream.next().await {
        match event {
            Ok(Event::InitDone) => listed = true,
            Ok(Event::Apply(_) | Event::Delete(_)) if listed => {
                let keys: Vec<String> = rt
                    .sets
                    .sets()
                    .iter()
                    .filter(|(_, (_, clusters))| *clusters)
                    .map(|(k, _)| k.clone())
                    .collect();
                for key in keys {
                    rt.queue.push(&key);
                }
            }
            Ok(_) => {}
            Err(e) => tracing::warn!("watching cluster Secrets: {e}"),
        }
    }
}
