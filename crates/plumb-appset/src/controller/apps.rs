//! The writes to generated Applications: create, patch (JSON merge patch, only what differs),
//! delete; Argo's `createOrUpdateInCluster`, `createInCluster` and `deleteInCluster`.

use std::collections::BTreeMap;

use futures::{StreamExt, stream};
use kube::api::{Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

use plumb_model::application::Application;
use plumb_model::applicationset::ApplicationSet;

use super::desired::Clusters;
use super::runtime::{Runtime, application_resource};
use super::update::{self, Plan, RESOURCES_FINALIZER, Rules};

/// Applications written at once (Argo's `ConcurrentApplicationUpdates`, 1 by default: one at
/// a time made a thousand-Application set take minutes to create).
const CONCURRENT_WRITES: usize = 8;

/// The Applications API in `namespace`.
fn api(rt: &Runtime, namespace: &str) -> Api<DynamicObject> {
    Api::namespaced_with(rt.ctx.client.clone(), namespace, &application_resource())
}

/// The Applications the set controls (its `.metadata.controller` index in Argo), by name.
pub(crate) async fn owned(
    rt: &Runtime,
    set: &ApplicationSet,
) -> Result<BTreeMap<String, Value>, kube::Error> {
    let list = api(rt, set.namespace())
        .list(&ListParams::default())
        .await?;
    Ok(list
        .items
        .into_iter()
        .filter_map(|o| serde_json::to_value(o).ok())
        .filter(|v| super::owner::owned_by(v, set.name()))
        .filter_map(|v| {
            let name = v.pointer("/metadata/name")?.as_str()?.to_string();
            Some((name, v))
        })
        .collect())
}

/// What one create/update pass did.
#[derive(Debug, Default)]
pub(crate) struct Written {
    /// Names created, then names patched.
    pub(crate) created: Vec<String>,
    pub(crate) updated: Vec<String>,
    /// The first failure by Application name, with Argo's message.
    pub(crate) first_error: Option<String>,
}

/// Creates or patches `apps` (sorted by name); `current`: the owned ones. Every Application is
/// tried; the first error by name is returned, as Argo does.
pub(crate) async fn create_or_update(
    rt: &Runtime,
    set: &ApplicationSet,
    apps: &[Application],
    current: &BTreeMap<String, Value>,
    rules: &Rules,
) -> Written {
    // Futures built in a loop, not by a closure: a closure returning a borrowing future is
    // not general enough for a spawned task.
    let mut writes = Vec::with_capacity(apps.len());
    for app in apps {
        let name = app.metadata.name.clone().unwrap_or_default();
        let live = current.get(&name);
        writes.push(async move {
            let r = write_one(rt, set, app, live, rules).await;
            (name, r)
        });
    }
    let results: Vec<(String, Result<Option<bool>, String>)> = stream::iter(writes)
        .buffer_unordered(CONCURRENT_WRITES)
        .collect()
        .await;
    let mut written = Written::default();
    let mut errors = BTreeMap::new();
    for (name, r) in results {
        match r {
            Ok(Some(true)) => written.created.push(name),
            Ok(Some(false)) => written.updated.push(name),
            Ok(None) => {}
            Err(e) => {
                tracing::warn!(set = %set.name(), application = %name, "{e}");
                errors.insert(name, e);
            }
        }
    }
    written.created.sort();
    written.updated.sort();
    written.first_error = errors.into_values().next();
    for name in &written.created {
        rt.events
            .normal(set, "created", format!("created Application {name:?}"))
            .await;
    }
    for name in &written.updated {
        rt.events
            .normal(set, "updated", format!("updated Application {name:?}"))
            .await;
    }
    written
}

/// One Application: `Some(true)` created, `Some(false)` patched, `None` unchanged.
///
/// An Application the set does not own yet is created straight away; only when the API
/// server answers that the name exists (another set's, or left by someone) is it read and
/// planned again: one request per new Application instead of a read and a create.
async fn write_one(
    rt: &Runtime,
    set: &ApplicationSet,
    app: &Application,
    live: Option<&Value>,
    rules: &Rules,
) -> Result<Option<bool>, String> {
    let name = app.metadata.name.clone().unwrap_or_default();
    let api = api(rt, set.namespace());
    if live.is_none() {
        if let Plan::Create(obj) = update::plan(set, app, None, rules)? {
            let obj: DynamicObject = serde_json::from_value(obj).map_err(|e| e.to_string())?;
            match api.create(&PostParams::default(), &obj).await {
                Ok(_) => return Ok(Some(true)),
                Err(kube::Error::Api(e)) if e.code == 409 => {}
                Err(e) => return Err(e.to_string()),
            }
        }
        let fetched = api
            .get_opt(&name)
            .await
            .map_err(|e| e.to_string())?
            .and_then(|o| serde_json::to_value(o).ok());
        return write_planned(&api, set, app, fetched.as_ref(), rules).await;
    }
    write_planned(&api, set, app, live, rules).await
}

/// Writes what `update::plan` decides for `app` against `live`.
async fn write_planned(
    api: &Api<DynamicObject>,
    set: &ApplicationSet,
    app: &Application,
    live: Option<&Value>,
    rules: &Rules,
) -> Result<Option<bool>, String> {
    let name = app.metadata.name.clone().unwrap_or_default();
    match update::plan(set, app, live, rules)? {
        Plan::Unchanged => Ok(None),
        Plan::Create(obj) => {
            let obj: DynamicObject = serde_json::from_value(obj).map_err(|e| e.to_string())?;
            api.create(&PostParams::default(), &obj)
                .await
                .map_err(|e| e.to_string())?;
            Ok(Some(true))
        }
        Plan::Patch(patch) => {
            api.patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
                .await
                .map_err(|e| e.to_string())?;
            Ok(Some(false))
        }
    }
}

/// Deletes `names` of `current`. With `preserve` (the set's `preserveResourcesOnDeletion`) or
/// a destination that is no longer a known cluster, the resources finalizer is removed first,
/// so the Application goes and its resources stay (Argo's `removeFinalizerOnInvalidDestination`).
pub(crate) async fn delete(
    rt: &Runtime,
    set: &ApplicationSet,
    names: &[String],
    current: &BTreeMap<String, Value>,
    preserve: bool,
    clusters: &Clusters,
) -> Result<Vec<String>, String> {
    let api = api(rt, set.namespace());
    let mut deleted = Vec::new();
    let mut first_error = None;
    for name in names {
        let Some(live) = current.get(name) else {
            continue;
        };
        let r = delete_one(&api, name, live, preserve, clusters).await;
        match r {
            Ok(()) => {
                rt.events
                    .normal(set, "Deleted", format!("Deleted Application {name:?}"))
                    .await;
                deleted.push(name.clone());
            }
            Err(e) => {
                tracing::warn!(set = %set.name(), application = %name, "deleting: {e}");
                first_error.get_or_insert(e);
            }
        }
    }
    match first_error {
        Some(e) => Err(e),
        None => Ok(deleted),
    }
}

async fn delete_one(
    api: &Api<DynamicObject>,
    name: &str,
    live: &Value,
    preserve: bool,
    clusters: &Clusters,
) -> Result<(), String> {
    let finalizers: Vec<&str> = live
        .pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .map(|f| f.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let server = live
        .pointer("/spec/destination/server")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let dest_name = live
        .pointer("/spec/destination/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let drop_finalizer = preserve || !clusters.knows(server, dest_name);
    let kept: Vec<&str> = finalizers
        .iter()
        .copied()
        .filter(|f| {
            !(*f == RESOURCES_FINALIZER || f.starts_with("resources-finalizer.argocd.argoproj.io/"))
        })
        .collect();
    if drop_finalizer && kept.len() != finalizers.len() {
        // Guarded by the resourceVersion read: a concurrent change makes this fail, not lose it.
        let patch = json!({"metadata": {
            "finalizers": kept,
            "resourceVersion": live.pointer("/metadata/resourceVersion").cloned().unwrap_or(Value::Null),
        }});
        api.patch(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .map_err(|e| format!("error updating finalizers: {e}"))?;
    }
    match api.delete(name, &DeleteParams::default()).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
        Err(e) => Err(e.to_string()),
    }
}

/// Removes the owner references of every owned Application (a set deleted under a policy that
/// does not delete: its Applications stay, as Argo's `removeOwnerReferencesOnDeleteAppSet`).
pub(crate) async fn orphan(
    rt: &Runtime,
    set: &ApplicationSet,
    current: &BTreeMap<String, Value>,
) -> Result<(), String> {
    let api = api(rt, set.namespace());
    for name in current.keys() {
        let patch = json!({"metadata": {"ownerReferences": null}});
        api.patch(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .map_err(|e| format!("error updating application: {e}"))?;
    }
    Ok(())
}
