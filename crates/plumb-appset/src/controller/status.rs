//! The set's `status`: conditions, `resources` (each owned Application's sync and health, as
//! Argo's `BuildResourceStatus`), `resourcesCount`, `health`, and `applicationStatus` when
//! progressive syncs give one; written to the status subresource only when it changed.

use std::collections::BTreeMap;

use kube::api::{Api, DynamicObject, Patch, PatchParams};
use serde_json::{Map, Value, json};

use plumb_model::applicationset::{
    ApplicationSet, ApplicationSetApplicationStatus, ApplicationSetCondition,
};

use super::conditions::{self, Cond};
use super::{Runtime, applicationset_resource};

/// Argo's annotation asking for a set to be reconciled now; removed once it was.
pub const REFRESH_ANNOTATION: &str = "argocd.argoproj.io/application-set-refresh";

/// What one reconcile records.
pub(crate) struct Record<'a> {
    pub(crate) conds: Vec<Cond>,
    pub(crate) parameters_generated: bool,
    /// The owned Applications now (for `status.resources`); `None` leaves them.
    pub(crate) owned: Option<&'a BTreeMap<String, Value>>,
    pub(crate) application_status: Option<Vec<ApplicationSetApplicationStatus>>,
}

/// `status.resources` entries for the owned Applications, sorted by name.
pub fn resources(owned: &BTreeMap<String, Value>) -> Vec<Value> {
    owned
        .iter()
        .map(|(name, app)| {
            let mut entry = Map::new();
            entry.insert("group".into(), json!("argoproj.io"));
            entry.insert("version".into(), json!("v1alpha1"));
            entry.insert("kind".into(), json!("Application"));
            if let Some(ns) = app.pointer("/metadata/namespace") {
                entry.insert("namespace".into(), ns.clone());
            }
            entry.insert("name".into(), json!(name));
            if let Some(s) = app
                .pointer("/status/sync/status")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
            {
                entry.insert("status".into(), json!(s));
            }
            let mut health = Map::new();
            if let Some(h) = app
                .pointer("/status/health/status")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
            {
                health.insert("status".into(), json!(h));
            }
            entry.insert("health".into(), Value::Object(health));
            Value::Object(entry)
        })
        .collect()
}

/// Writes what changed of the set's status; returns the conditions now recorded.
pub(crate) async fn write(
    rt: &Runtime,
    set: &ApplicationSet,
    record: Record<'_>,
) -> Result<Vec<ApplicationSetCondition>, kube::Error> {
    let old = set.status.clone().unwrap_or_default();
    let previous = old.conditions.clone().unwrap_or_default();
    let now = jiff::Timestamp::now()
        .round(jiff::Unit::Second)
        .unwrap_or_else(|_| jiff::Timestamp::now())
        .to_string();
    let rolling = rolling_sync(set) && rt.config.progressive_syncs;
    let conds = conditions::apply(
        &previous,
        &record.conds,
        record.parameters_generated,
        rolling,
        &now,
    );
    let mut patch = Map::new();
    if conditions::changed(&previous, &conds) {
        patch.insert(
            "conditions".into(),
            serde_json::to_value(&conds).unwrap_or_default(),
        );
        let health = conditions::health(&conds);
        patch.insert(
            "health".into(),
            serde_json::to_value(health).unwrap_or_default(),
        );
    }
    if let Some(owned) = record.owned {
        let mut list = resources(owned);
        let count = list.len();
        if rt.config.max_resources_status > 0 {
            list.truncate(rt.config.max_resources_status);
        }
        if old
            .resources
            .as_ref()
            .map_or(!list.is_empty(), |r| *r != list)
        {
            patch.insert("resources".into(), Value::Array(list));
        }
        let count = i64::try_from(count).unwrap_or(i64::MAX);
        if old.resources_count.unwrap_or(0) != count {
            patch.insert("resourcesCount".into(), json!(count));
        }
    }
    if let Some(app_status) = record.application_status
        && old.application_status.clone().unwrap_or_default() != app_status
    {
        patch.insert(
            "applicationStatus".into(),
            if app_status.is_empty() {
                Value::Null
            } else {
                serde_json::to_value(app_status).unwrap_or_default()
            },
        );
    }
    if !patch.is_empty() {
        let api: Api<DynamicObject> = Api::namespaced_with(
            rt.ctx.client.clone(),
            set.namespace(),
            &applicationset_resource(),
        );
        let body = json!({"status": patch});
        match api
            .patch_status(set.name(), &PatchParams::default(), &Patch::Merge(&body))
            .await
        {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.code == 404 => {}
            Err(e) => return Err(e),
        }
    }
    Ok(conds)
}

/// Whether the set uses `RollingSync`.
pub fn rolling_sync(set: &ApplicationSet) -> bool {
    set.spec.strategy.as_ref().and_then(|s| s.r#type.as_deref()) == Some("RollingSync")
}

/// Removes the refresh annotation once the set was reconciled.
pub(crate) async fn clear_annotations(
    rt: &Runtime,
    set: &ApplicationSet,
    keys: &[&str],
) -> Result<(), kube::Error> {
    let present: Vec<&str> = keys
        .iter()
        .copied()
        .filter(|k| set.metadata.annotation(k).is_some())
        .collect();
    if present.is_empty() {
        return Ok(());
    }
    let nulls: Map<String, Value> = present
        .iter()
        .map(|k| (k.to_string(), Value::Null))
        .collect();
    let api: Api<DynamicObject> = Api::namespaced_with(
        rt.ctx.client.clone(),
        set.namespace(),
        &applicationset_resource(),
    );
    let body = json!({"metadata": {"annotations": nulls}});
    api.patch(set.name(), &PatchParams::default(), &Patch::Merge(&body))
        .await
        .map(|_| ())
}
