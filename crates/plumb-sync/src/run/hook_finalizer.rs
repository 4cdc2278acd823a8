//! The hook finalizer: added to a hook before it is created, removed once its result is recorded,
//! so that a finished hook is not deleted before Plumb has read it.

use plumb_kube::Applier;
use plumb_model::ResourceKey;
use plumb_model::annotations::HOOK_FINALIZER;
use serde_json::{Value, json};

use crate::write::error_text;

pub(super) fn add_hook_finalizer(obj: &mut Value) {
    if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        let list = meta.entry("finalizers").or_insert_with(|| json!([]));
        if let Some(list) = list.as_array_mut()
            && !list.iter().any(|f| f == HOOK_FINALIZER)
        {
            list.push(Value::String(HOOK_FINALIZER.into()));
        }
    }
}

pub(super) async fn remove_hook_finalizer(
    applier: &Applier,
    key: &ResourceKey,
) -> Result<(), String> {
    let Some(live) = applier.get(key).await.map_err(|e| error_text(&e))? else {
        return Ok(());
    };
    let finalizers: Vec<Value> = live
        .pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if !finalizers.iter().any(|f| f == HOOK_FINALIZER) {
        return Ok(());
    }
    let kept: Vec<Value> = finalizers
        .into_iter()
        .filter(|f| f != HOOK_FINALIZER)
        .collect();
    // The resourceVersion makes this a compare-and-swap: a finalizer another controller added
    // in between is never dropped.
    let patch = json!({"metadata": {"finalizers": kept, "resourceVersion": live.pointer("/metadata/resourceVersion")}});
    applier
        .merge_patch(key, &patch)
        .await
        .map(|_| ())
        .map_err(|e| error_text(&e))
}
