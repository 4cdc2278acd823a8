//! Reading what the cluster holds for a comparison: the desired objects wherever they are, and
//! the objects the Application tracks. From the live cache when there is one (the controller),
//! from the API server otherwise (the CLI, or right after a sync with `fresh_reads`).

use std::collections::{BTreeMap, BTreeSet};

use plumb_model::ResourceKey;
use plumb_model::application::Application;
use serde_json::Value;

use crate::context::{Cluster, Engines};
use crate::error::{Error, Result};
use crate::written::{Written, at_least};

/// Where a comparison reads live objects from.
#[derive(Clone, Copy)]
pub(super) enum Reads<'a> {
    /// The live cache (the API server for what it cannot tell).
    Cache,
    /// The API server, every object.
    Fresh,
    /// Right after a sync: what it applied from its answers unless the cache has caught up,
    /// what it touched otherwise from the API server, the rest from the cache.
    AfterSync(&'a Written),
}

/// The live objects of the desired keys, then those tracked by this Application (`instance`)
/// that Git no longer declares. Fails when one of them belongs to an API group version that
/// cannot be served.
pub(super) async fn read(
    app: &Application,
    cluster: &Cluster,
    engines: &Engines,
    instance: &str,
    desired_keys: &BTreeSet<ResourceKey>,
    reads: Reads<'_>,
) -> Result<Vec<Value>> {
    // What lies outside a namespaced cluster's scope is neither read nor, so, pruned (a
    // status written before the scope narrowed may still list it).
    let tracked: Vec<ResourceKey> = tracked_keys(app, cluster, instance)
        .into_iter()
        .filter(|k| cluster.scope.manages(&k.namespace))
        .collect();
    check_available(cluster, desired_keys.iter().chain(&tracked)).await?;
    let mut live = Vec::new();
    for key in desired_keys {
        if let Some(obj) = read_one(cluster, key, reads).await? {
            live.push(obj);
        }
    }
    for key in tracked {
        if desired_keys.contains(&key) {
            continue;
        }
        if let Some(obj) = read_one(cluster, &key, reads).await? {
            let tracked = tracked_by(engines, &key, &obj);
            if tracked
                .as_ref()
                .is_some_and(|t| t.app == instance && t.self_referencing)
            {
                live.push(obj);
            }
        }
    }
    Ok(live)
}

async fn read_one(cluster: &Cluster, key: &ResourceKey, reads: Reads<'_>) -> Result<Option<Value>> {
    let fresh = match reads {
        Reads::Cache => false,
        Reads::Fresh => true,
        Reads::AfterSync(w) => {
            if let Some(obj) = after_apply(cluster, key, w) {
                return Ok(Some(obj));
            }
            w.touched_only(key) || w.stored(key).is_some()
        }
    };
    if let Some(reader) = cluster.live.as_ref().filter(|_| !fresh) {
        match reader.get(key) {
            Some(obj) => {
                if let Some(full) = obj.object() {
                    return Ok(Some(full));
                }
            }
            // The cache watches every listable kind: absence there means absence in the cluster
            // once the kind's list is complete; not for a kind new since the cache started (a
            // CRD just applied) or one whose list has not succeeded (yet): ask the API server.
            None => {
                if cluster
                    .discovery
                    .catalog()
                    .resolve(&key.group_kind(), None)
                    .is_some()
                    && reader.is_synced(&key.group_kind())
                {
                    return Ok(None);
                }
            }
        }
    }
    match cluster.applier.get(key).await {
        Ok(v) => Ok(v),
        // A kind the cluster does not serve (yet): the object is missing.
        Err(plumb_kube::Error::UnknownKind { .. }) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// An object the sync applied: the live cache's copy once it is at least as new as the apply's
/// answer, else the answer itself. `None` (read it from the API server) when the answer is in
/// another version than the kind's preferred one, which the cache and reads use.
fn after_apply(cluster: &Cluster, key: &ResourceKey, w: &Written) -> Option<Value> {
    let stored = w.stored(key)?;
    let catalog = cluster.discovery.catalog();
    let preferred = catalog.resolve(&key.group_kind(), None)?;
    if stored.get("apiVersion").and_then(Value::as_str)
        != Some(preferred.resource.api_version.as_str())
    {
        return None;
    }
    let stored_rv = stored
        .pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let stored_uid = stored.pointer("/metadata/uid").and_then(Value::as_str);
    let cached = cluster
        .live
        .as_ref()
        .and_then(|r| r.get(key))
        .filter(|o| Some(o.uid.as_str()) == stored_uid && at_least(&o.resource_version, stored_rv))
        .and_then(|o| o.object());
    Some(cached.unwrap_or_else(|| stored.clone()))
}

/// Fails when an object's kind belongs to an API group version the server lists but cannot serve
/// (an aggregated API whose backend is down): such an object can be neither read nor written, and
/// taking it for missing would have automation apply and prune on a false picture.
async fn check_available<'a>(
    cluster: &Cluster,
    keys: impl Iterator<Item = &'a ResourceKey>,
) -> Result<()> {
    let catalog = cluster.discovery.catalog();
    let unknown: Vec<&ResourceKey> = keys
        .filter(|k| catalog.resolve(&k.group_kind(), None).is_none())
        .collect();
    if unknown.is_empty() {
        return Ok(());
    }
    // Unknown to the catalog: new since the last discovery (a CRD just applied), gone, or in a
    // group version that stopped answering. Discovery again tells which.
    let catalog = cluster.discovery.refresh().await?;
    let mut group_versions = BTreeSet::new();
    let mut objects = BTreeSet::new();
    for key in unknown {
        if catalog.resolve(&key.group_kind(), None).is_some() {
            continue;
        }
        let gvs = catalog.unavailable_in(&key.group);
        if !gvs.is_empty() {
            group_versions.extend(gvs.into_iter().map(str::to_string));
            objects.insert(key.to_string());
        }
    }
    if objects.is_empty() {
        return Ok(());
    }
    Err(Error::Unavailable {
        group_versions: group_versions.into_iter().collect::<Vec<_>>().join(", "),
        objects: objects.into_iter().collect::<Vec<_>>().join(", "),
    })
}

/// Keys of live objects that may belong to this Application: from the live cache's index, or
/// (without a cache) from the resources the last status listed.
fn tracked_keys(app: &Application, cluster: &Cluster, instance: &str) -> Vec<ResourceKey> {
    if let Some(reader) = &cluster.live {
        return reader
            .app_objects(instance)
            .iter()
            .map(|o| o.key.clone())
            .collect();
    }
    app.status
        .as_ref()
        .and_then(|s| s.resources.as_ref())
        .map(|rs| {
            rs.iter()
                .map(|r| {
                    ResourceKey::new(
                        r.group.clone().unwrap_or_default(),
                        r.kind.clone().unwrap_or_default(),
                        r.namespace.clone().unwrap_or_default(),
                        r.name.clone().unwrap_or_default(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Which Application the live object's tracking names.
pub(super) fn tracked_by(
    engines: &Engines,
    key: &ResourceKey,
    obj: &Value,
) -> Option<plumb_kube::TrackedBy> {
    let map = |field: &str| -> Option<BTreeMap<String, String>> {
        obj.pointer(&format!("/metadata/{field}"))
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_string())))
                    .collect()
            })
    };
    engines
        .tracking
        .tracked_by(key, map("annotations").as_ref(), map("labels").as_ref())
}
