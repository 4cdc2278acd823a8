//! The writes progressive syncs need beyond creating and updating Applications: the set's
//! resources finalizer for `deletionOrder: Reverse`, refresh requests on Applications, the
//! ordered deletion of a set's Applications, and the progressive step of a reconcile.

use std::collections::BTreeMap;
use std::time::Duration;

use kube::api::{Api, DynamicObject, Patch, PatchParams};
use serde_json::{Value, json};

use plumb_model::annotations::REFRESH;
use plumb_model::application::Application;
use plumb_model::applicationset::ApplicationSet;

use super::conditions::Cond;
use super::desired::Clusters;
use super::hooks::{self, ProgressiveInput, ProgressiveOutcome};
use super::update::{RESOURCES_FINALIZER, Rules};
use super::{Runtime, application_resource, applicationset_resource, apps};
use crate::progressive::{self, ReverseDeletion};

/// Adds the resources finalizer to a set with `deletionOrder: Reverse` (Argo does so only
/// while progressive syncs are on), so that deleting the set waits for the ordered deletion.
pub(crate) async fn ensure_finalizer(
    rt: &Runtime,
    set: &ApplicationSet,
) -> Result<(), kube::Error> {
    if !progressive::needs_finalizer(set, &rt.config.progressive()) {
        return Ok(());
    }
    let mut finalizers = set.metadata.finalizers.clone().unwrap_or_default();
    if finalizers.iter().any(|f| f == RESOURCES_FINALIZER) {
        return Ok(());
    }
    finalizers.push(RESOURCES_FINALIZER.to_string());
    // Guarded by the resourceVersion read: a concurrent change makes this fail, not lose it.
    let body = json!({"metadata": {
        "finalizers": finalizers,
        "resourceVersion": set.metadata.other.get("resourceVersion").cloned().unwrap_or(Value::Null),
    }});
    sets(rt, set)
        .patch(set.name(), &PatchParams::default(), &Patch::Merge(&body))
        .await
        .map(|_| ())
}

fn sets(rt: &Runtime, set: &ApplicationSet) -> Api<DynamicObject> {
    Api::namespaced_with(
        rt.ctx.client.clone(),
        set.namespace(),
        &applicationset_resource(),
    )
}

/// The progressive step of a reconcile; `Err` with the condition that stops the reconcile.
/// Refresh requests are written here (a failure only delays the rollout, so it is logged).
pub(crate) async fn progressive_step(
    rt: &Runtime,
    set: &ApplicationSet,
    current: &BTreeMap<String, Value>,
    generated: Vec<Application>,
    rules: &Rules,
) -> Result<ProgressiveOutcome, Cond> {
    let current_values: Vec<Value> = current.values().cloned().collect();
    let outcome = hooks::progressive(ProgressiveInput {
        set,
        settings: rt.config.progressive(),
        current: &current_values,
        generated,
        rules,
        now: jiff::Timestamp::now(),
    });
    if let Some(stop) = outcome.stop {
        return Err(stop);
    }
    let api: Api<DynamicObject> = Api::namespaced_with(
        rt.ctx.client.clone(),
        set.namespace(),
        &application_resource(),
    );
    let body = json!({"metadata": {"annotations": {REFRESH: "normal"}}});
    for name in &outcome.refresh {
        if let Err(e) = api
            .patch(name, &PatchParams::default(), &Patch::Merge(&body))
            .await
        {
            tracing::warn!(set = %set.name(), application = %name, "requesting a refresh: {e}");
        }
    }
    if !outcome.synced.is_empty() {
        tracing::info!(set = %set.name(), applications = ?outcome.synced, "RollingSync triggers a sync");
    }
    Ok(outcome)
}

/// One round of a set's deletion with `deletionOrder: Reverse`: deletes the next Application
/// (last step first) or waits for it to go. `Some`: look again after that long; `None`: done,
/// the finalizer may go.
pub(crate) async fn reverse_deletion(
    rt: &Runtime,
    set: &ApplicationSet,
) -> Result<Option<Duration>, kube::Error> {
    if !progressive::deletion_order_reversed(set) {
        return Ok(None);
    }
    let current = apps::owned(rt, set).await?;
    let live: Vec<Application> = current
        .values()
        .filter_map(|v| serde_json::from_value(v.clone()).ok())
        .collect();
    match progressive::reverse_deletion_next(set, &live) {
        ReverseDeletion::Done => Ok(None),
        ReverseDeletion::Wait(name) => {
            tracing::info!(set = %set.name(), application = %name, "waiting for the Application to be deleted");
            Ok(Some(progressive::REVERSE_DELETION_REQUEUE))
        }
        ReverseDeletion::Delete(name) => {
            let preserve = set
                .spec
                .sync_policy
                .as_ref()
                .and_then(|p| p.preserve_resources_on_deletion)
                .unwrap_or(false);
            let clusters = Clusters::list(&rt.ctx).await?;
            if let Err(e) = apps::delete(rt, set, &[name], &current, preserve, &clusters).await {
                tracing::warn!(set = %set.name(), "reverse deletion: {e}");
            }
            Ok(Some(progressive::REVERSE_DELETION_REQUEUE))
        }
    }
}
