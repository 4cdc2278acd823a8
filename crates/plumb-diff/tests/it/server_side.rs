//! The server-side strategy with a dry-run result as the API server returns it, and its cache.

use plumb_diff::{CacheKey, DiffConfig, ServerSideCache, Strategy};
use serde_json::json;

use crate::fixtures::{load, pair_of};

/// What `kubectl apply --server-side --dry-run=server --field-manager plumb-controller` would
/// return for the tampered deployment: the fields Plumb applies restored, plus a webhook
/// annotation Plumb does not own.
fn dry_run() -> serde_json::Value {
    let mut predicted = load("deployment-tampered-live.yaml");
    let sc = &mut predicted["spec"]["template"]["spec"]["containers"][0]["securityContext"];
    sc["allowPrivilegeEscalation"] = json!(false);
    sc["runAsNonRoot"] = json!(true);
    predicted["metadata"]["annotations"]["sidecar.example.com/injected"] = json!("true");
    predicted["metadata"]["managedFields"].as_array_mut().unwrap().push(json!({
        "apiVersion": "apps/v1", "fieldsType": "FieldsV1", "manager": "plumb-controller", "operation": "Apply",
        "time": "2026-07-20T10:15:00Z",
        "fieldsV1": {"f:spec": {"f:template": {"f:spec": {"f:containers": {"k:{\"name\":\"payments-api\"}": {
            ".": {}, "f:name": {}, "f:securityContext": {"f:allowPrivilegeEscalation": {}, "f:runAsNonRoot": {}}}}}}}}}));
    predicted
}

#[test]
fn dry_run_result_against_live_with_webhook_changes_reverted() {
    let pair = pair_of("deployment-config.yaml", "deployment-tampered-live.yaml");
    let predicted = dry_run();
    let r = plumb_diff::diff(
        &pair,
        Strategy::ServerSide {
            predicted_live: &predicted,
        },
        &DiffConfig::default(),
    )
    .unwrap();
    assert_eq!(r.strategy.strategy, plumb_diff::DiffStrategy::ServerSide);
    let printed: Vec<String> = r
        .changes
        .iter()
        .map(|c| format!("{} {}", c.op.as_str(), c.path))
        .collect();
    assert_eq!(
        printed,
        [
            "changed spec.template.spec.containers[name=payments-api].securityContext.allowPrivilegeEscalation",
            "added spec.template.spec.containers[name=payments-api].securityContext.runAsNonRoot",
        ]
    );
    // No last-applied annotation on either side in server-side mode.
    let live = r.normalized_live.as_ref().unwrap();
    assert!(
        live["metadata"]["annotations"]
            .get("kubectl.kubernetes.io/last-applied-configuration")
            .is_none()
    );
}

#[test]
fn cache_is_keyed_by_desired_hash_and_live_resource_version() {
    let pair = pair_of("deployment-config.yaml", "deployment-tampered-live.yaml");
    let key = CacheKey::for_pair(&pair).unwrap();
    assert_eq!(key.live_resource_version, "5230");
    let mut cache = ServerSideCache::new();
    let predicted = dry_run();
    let r = plumb_diff::diff(
        &pair,
        Strategy::ServerSide {
            predicted_live: &predicted,
        },
        &DiffConfig::default(),
    )
    .unwrap();
    cache.insert(key.clone(), r.clone());
    assert_eq!(cache.get(&key), Some(&r));
    let mut bumped = pair.clone();
    bumped.live.as_mut().unwrap()["metadata"]["resourceVersion"] = json!("5231");
    assert!(cache.get(&CacheKey::for_pair(&bumped).unwrap()).is_none());
    let mut edited = pair;
    edited.desired.as_mut().unwrap()["spec"]["replicas"] = json!(4);
    assert_ne!(
        CacheKey::for_pair(&edited).unwrap().desired_hash,
        key.desired_hash
    );
}
