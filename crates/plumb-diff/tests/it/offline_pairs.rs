//! Realistic pairs (objects as a server returns them after `kubectl apply`) through the offline
//! three-way strategy: server defaults never show, real drift always does.

use plumb_diff::{
    Action, ChangeOp, DiffConfig, IgnoreOptions, IgnoreRule, IgnoreRules, RenderOptions, Strategy,
    mask, render,
};
use serde_json::json;

use crate::fixtures::{load, pair_of, three_way};

#[test]
fn applied_objects_show_no_diff() {
    for kind in [
        "deployment",
        "service",
        "configmap",
        "secret",
        "statefulset",
    ] {
        let r = three_way(&format!("{kind}-config.yaml"), &format!("{kind}-live.yaml"));
        assert!(!r.modified, "{kind}: {:#?}", r.changes);
        assert_eq!(r.action, Action::None);
        assert_eq!(r.strategy.fallback_reason, None);
    }
}

#[test]
fn tampered_deployment_shows_removed_and_changed_fields_with_managers() {
    let r = three_way("deployment-config.yaml", "deployment-tampered-live.yaml");
    assert!(r.modified);
    let lines: Vec<String> = r
        .changes
        .iter()
        .map(|c| {
            let a = c.attribution.as_ref().unwrap();
            format!(
                "{} {} {} {} {}",
                c.op.as_str(),
                c.path,
                a.manager,
                a.time,
                a.exact
            )
        })
        .collect();
    assert_eq!(
        lines,
        [
            "changed spec.template.spec.containers[name=payments-api].securityContext.allowPrivilegeEscalation kubectl-patch 2026-07-20T10:12:03Z true",
            "added spec.template.spec.containers[name=payments-api].securityContext.runAsNonRoot kubectl-patch 2026-07-20T10:12:03Z false",
        ]
    );
}

#[test]
fn image_bump_shows_one_change() {
    let r = three_way("deployment-image-bump-config.yaml", "deployment-live.yaml");
    assert_eq!(r.changes.len(), 1, "{:#?}", r.changes);
    let c = &r.changes[0];
    assert_eq!(
        c.path.to_string(),
        "spec.template.spec.containers[name=payments-api].image"
    );
    assert_eq!(c.op, ChangeOp::Changed);
    assert_eq!(
        c.live,
        Some(json!("registry.example.com/payments-api:1.4.2"))
    );
    assert_eq!(
        c.predicted,
        Some(json!("registry.example.com/payments-api:1.5.0"))
    );
    assert_eq!(
        c.attribution.as_ref().unwrap().manager,
        "kubectl-client-side-apply"
    );
}

#[test]
fn kubectl_edit_on_configmap_is_attributed() {
    let r = three_way("configmap-config.yaml", "configmap-edited-live.yaml");
    assert_eq!(r.changes.len(), 1);
    assert_eq!(r.changes[0].path.to_string(), "data.retries");
    let a = r.changes[0].attribution.as_ref().unwrap();
    assert_eq!(
        (a.manager.as_str(), a.operation.as_str(), a.exact),
        ("kubectl-edit", "Update", true)
    );
}

#[test]
fn field_removed_from_git_shows_as_removal() {
    let mut pair = pair_of("deployment-config.yaml", "deployment-live.yaml");
    let desired = pair.desired.as_mut().unwrap();
    desired["spec"]["template"]["spec"]["containers"][0]["env"]
        .as_array_mut()
        .unwrap()
        .remove(1);
    let r = plumb_diff::diff(&pair, Strategy::ThreeWay, &DiffConfig::default()).unwrap();
    let printed: Vec<String> = r
        .changes
        .iter()
        .map(|c| format!("{} {}", c.op.as_str(), c.path))
        .collect();
    assert_eq!(
        printed,
        ["removed spec.template.spec.containers[name=payments-api].env[name=DB_HOST]"]
    );
}

#[test]
fn field_added_only_in_live_by_someone_else_is_not_drift_without_base_but_removal_from_git_is() {
    // Without last-applied, Argo falls back to a two-way diff: live-only fields are kept.
    let mut pair = pair_of("configmap-config.yaml", "configmap-live.yaml");
    let live = pair.live.as_mut().unwrap();
    live["metadata"]["annotations"]
        .as_object_mut()
        .unwrap()
        .clear();
    live["data"]["extra"] = json!("x");
    let r = plumb_diff::diff(&pair, Strategy::ThreeWay, &DiffConfig::default()).unwrap();
    assert!(!r.modified, "{:#?}", r.changes);
    assert!(
        r.strategy
            .fallback_reason
            .as_deref()
            .unwrap()
            .contains("two-way")
    );
}

#[test]
fn new_object_is_a_create() {
    let opts = plumb_diff::PairOptions {
        default_namespace: "payments".into(),
        ..Default::default()
    };
    let desired = plumb_diff::SourcedObject {
        value: load("service-config.yaml"),
        source: "svc.yaml".into(),
    };
    let pairs = plumb_diff::pair(vec![desired], vec![], &opts).unwrap();
    let r = plumb_diff::diff(&pairs[0], Strategy::ThreeWay, &DiffConfig::default()).unwrap();
    assert_eq!((r.action, r.modified), (Action::Create, true));
    let mut out = Vec::new();
    render(&[mask(&r)], &RenderOptions::default(), &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.starts_with(
            "\n===== /Service payments/payments-api ======\n0a1,14\n> apiVersion: v1\n"
        ),
        "{text}"
    );
}

#[test]
fn ignore_rules_hide_replicas_and_managed_fields() {
    let mut pair = pair_of("deployment-config.yaml", "deployment-live.yaml");
    pair.live.as_mut().unwrap()["spec"]["replicas"] = json!(7);
    let r = plumb_diff::diff(&pair, Strategy::ThreeWay, &DiffConfig::default()).unwrap();
    assert!(r.modified);
    let rule: IgnoreRule = serde_json::from_value(
        json!({"group": "apps", "kind": "Deployment", "jsonPointers": ["/spec/replicas"]}),
    )
    .unwrap();
    let config = DiffConfig::default()
        .ignore(IgnoreRules::compile(vec![rule], IgnoreOptions::default()).unwrap());
    let r = plumb_diff::diff(&pair, Strategy::ThreeWay, &config).unwrap();
    assert!(!r.modified, "{:#?}", r.changes);
}

#[test]
fn managed_fields_managers_hide_an_hpa() {
    let mut pair = pair_of("deployment-config.yaml", "deployment-live.yaml");
    let live = pair.live.as_mut().unwrap();
    live["spec"]["replicas"] = json!(6);
    live["metadata"]["managedFields"].as_array_mut().unwrap().push(json!({
        "apiVersion": "apps/v1", "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:replicas": {}}},
        "manager": "horizontal-pod-autoscaler", "operation": "Update", "subresource": "scale", "time": "2026-07-20T10:30:00Z"}));
    let r = plumb_diff::diff(&pair, Strategy::ThreeWay, &DiffConfig::default()).unwrap();
    assert_eq!(
        r.changes[0].attribution.as_ref().unwrap().manager,
        "horizontal-pod-autoscaler"
    );
    let rule: IgnoreRule = serde_json::from_value(json!({"group": "apps", "kind": "Deployment", "managedFieldsManagers": ["horizontal-pod-autoscaler"]})).unwrap();
    let config = DiffConfig::default()
        .ignore(IgnoreRules::compile(vec![rule], IgnoreOptions::default()).unwrap());
    let r = plumb_diff::diff(&pair, Strategy::ThreeWay, &config).unwrap();
    assert!(!r.modified, "{:#?}", r.changes);
}

#[test]
fn rotated_secret_is_masked_everywhere() {
    let r = three_way("secret-rotated-config.yaml", "secret-live.yaml");
    assert!(r.modified);
    let mut out = Vec::new();
    render(
        &[mask(&r)],
        &RenderOptions {
            attribution: true,
            ..Default::default()
        },
        &mut out,
    )
    .unwrap();
    let text = String::from_utf8(out).unwrap();
    for secret in ["s3cr3t", "czNjcjN0", "cGF5bWVudHM=", "payments\""] {
        assert!(!text.contains(secret), "{secret} leaked:\n{text}");
    }
    let json = plumb_diff::render_json(&[mask(&r)]);
    for secret in ["s3cr3t", "czNjcjN0", "cGF5bWVudHM="] {
        assert!(!json.contains(secret), "{secret} leaked:\n{json}");
    }
    assert!(
        text.contains("<   password: ++++++++++++\n---\n>   password: ++++++++\n"),
        "{text}"
    );
    // The unchanged username has the same mask on both sides, so it is not in the diff.
    assert!(!text.contains("username"), "{text}");
}
