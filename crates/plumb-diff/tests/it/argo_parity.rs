//! What Argo CD's normalizers make equal is equal here too (issue #13, parity defects): an empty
//! Secret value read back as null, an empty list read back as null, and aggregated roles' rules
//! with `resource.compareoptions` `ignoreAggregatedRoles: true`.

use plumb_diff::{Action, DiffConfig, DiffSettings, Strategy};
use plumb_model::Settings;
use serde_json::json;

use crate::fixtures::{pair_of, three_way};

#[test]
fn empty_secret_value_read_back_as_null_is_not_drift() {
    let r = three_way(
        "secret-empty-value-config.yaml",
        "secret-empty-value-live.yaml",
    );
    assert!(!r.modified, "{:#?}", r.changes);
    assert_eq!(r.action, Action::None);
}

#[test]
fn a_changed_secret_value_next_to_a_null_one_is_still_drift() {
    let mut pair = pair_of(
        "secret-empty-value-config.yaml",
        "secret-empty-value-live.yaml",
    );
    if let Some(d) = pair.desired.as_mut() {
        d["data"]["feature-x"] = json!("b24=");
    }
    let r = plumb_diff::diff(&pair, Strategy::ThreeWay, &DiffConfig::default()).unwrap();
    assert!(r.modified);
    let paths: Vec<String> = r.changes.iter().map(|c| c.path.to_string()).collect();
    assert_eq!(paths, ["data.feature-x"]);
}

#[test]
fn empty_list_read_back_as_null_is_not_drift() {
    let r = three_way(
        "clusterrole-empty-rules-config.yaml",
        "clusterrole-empty-rules-live.yaml",
    );
    assert!(!r.modified, "{:#?}", r.changes);
    // And the other way round: null in Git, [] live.
    let mut pair = pair_of(
        "clusterrole-empty-rules-config.yaml",
        "clusterrole-empty-rules-live.yaml",
    );
    if let (Some(d), Some(l)) = (pair.desired.as_mut(), pair.live.as_mut()) {
        d["rules"] = json!(null);
        l["rules"] = json!([]);
    }
    let r = plumb_diff::diff(&pair, Strategy::ThreeWay, &DiffConfig::default()).unwrap();
    assert!(!r.modified, "{:#?}", r.changes);
}

#[test]
fn empty_list_against_a_filled_one_is_drift() {
    let mut pair = pair_of(
        "clusterrole-empty-rules-config.yaml",
        "clusterrole-empty-rules-live.yaml",
    );
    if let Some(l) = pair.live.as_mut() {
        l["rules"] = json!([{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}]);
    }
    let r = plumb_diff::diff(&pair, Strategy::ThreeWay, &DiffConfig::default()).unwrap();
    assert!(r.modified);
    let paths: Vec<String> = r.changes.iter().map(|c| c.path.to_string()).collect();
    assert_eq!(paths, ["rules"]);
}

#[test]
fn a_custom_resource_keeps_its_empty_lists() {
    // Argo CD normalizes only kinds it has Go types for; a custom resource's `[]` and `null`
    // differ for it, and here too.
    let mut pair = pair_of(
        "clusterrole-empty-rules-config.yaml",
        "clusterrole-empty-rules-live.yaml",
    );
    for obj in [pair.desired.as_mut(), pair.live.as_mut()]
        .into_iter()
        .flatten()
    {
        obj["apiVersion"] = json!("example.com/v1");
        obj["kind"] = json!("Policy");
    }
    let r = plumb_diff::diff(&pair, Strategy::ThreeWay, &DiffConfig::default()).unwrap();
    assert!(r.modified);
}

fn with_compare_options(text: &str) -> DiffConfig {
    let cm = json!({"data": {"resource.compareoptions": text}});
    let s = DiffSettings::from_settings(&Settings::from_config_map(&cm)).unwrap();
    DiffConfig::default().normalize(s.normalize)
}

#[test]
fn aggregated_role_rules_are_drift_by_default() {
    let pair = pair_of(
        "clusterrole-aggregated-config.yaml",
        "clusterrole-aggregated-live.yaml",
    );
    for config in [
        DiffConfig::default(),
        with_compare_options("ignoreAggregatedRoles: false\n"),
    ] {
        let r = plumb_diff::diff(&pair, Strategy::ThreeWay, &config).unwrap();
        assert!(r.modified);
        let paths: Vec<String> = r.changes.iter().map(|c| c.path.to_string()).collect();
        assert_eq!(paths, ["rules"]);
    }
}

#[test]
fn ignore_aggregated_roles_hides_the_rules_of_aggregated_roles_only() {
    let config = with_compare_options("ignoreAggregatedRoles: true\n");
    let pair = pair_of(
        "clusterrole-aggregated-config.yaml",
        "clusterrole-aggregated-live.yaml",
    );
    let r = plumb_diff::diff(&pair, Strategy::ThreeWay, &config).unwrap();
    assert!(!r.modified, "{:#?}", r.changes);
    // A role without an aggregationRule still shows its rules.
    let mut pair = pair_of(
        "clusterrole-empty-rules-config.yaml",
        "clusterrole-empty-rules-live.yaml",
    );
    if let Some(l) = pair.live.as_mut() {
        l["rules"] = json!([{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}]);
    }
    let r = plumb_diff::diff(&pair, Strategy::ThreeWay, &config).unwrap();
    assert!(r.modified);
}

#[test]
fn ignore_aggregated_roles_must_be_a_boolean() {
    let cm = json!({"data": {"resource.compareoptions": "ignoreAggregatedRoles: sometimes\n"}});
    let err = DiffSettings::from_settings(&Settings::from_config_map(&cm)).unwrap_err();
    assert!(err.to_string().contains("ignoreAggregatedRoles"), "{err}");
}

#[test]
fn live_only_object_is_the_removal_of_the_whole_object_with_values_masked() {
    let opts = plumb_diff::PairOptions {
        default_namespace: "payments".into(),
        ..Default::default()
    };
    let pairs = plumb_diff::pair(
        Vec::new(),
        vec![crate::fixtures::load("secret-live.yaml")],
        &opts,
    )
    .unwrap();
    let r = plumb_diff::diff(&pairs[0], Strategy::ThreeWay, &DiffConfig::default()).unwrap();
    assert_eq!((r.action, r.modified), (Action::Extra, false));
    assert_eq!(r.changes.len(), 1);
    assert_eq!(r.changes[0].path.to_string(), "");
    assert_eq!(r.changes[0].op, plumb_diff::ChangeOp::Removed);
    assert!(r.changes[0].predicted.is_none());
    let masked = plumb_diff::mask(&r);
    let json = plumb_diff::render_json(&[masked]);
    assert!(!json.contains("czNjcjN0LXYx"), "{json}");
    assert!(json.contains("\"op\": \"removed\""), "{json}");
    assert!(json.contains("\"action\": \"extra\""), "{json}");
}

#[test]
fn field_inside_an_atomic_list_of_a_custom_resource_is_attributed_to_the_lists_manager() {
    // A custom resource whose CRD declares no list keys: managedFields records only
    // `f:containers: {}` (an atomic list), not the elements or their fields.
    let live = json!({
        "apiVersion": "batch.example.com/v1", "kind": "Pipeline",
        "metadata": {"name": "nightly", "namespace": "payments", "uid": "5e6f", "resourceVersion": "88",
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration":
                "{\"apiVersion\":\"batch.example.com/v1\",\"kind\":\"Pipeline\",\"metadata\":{\"annotations\":{},\"name\":\"nightly\",\"namespace\":\"payments\"},\"spec\":{\"containers\":[{\"image\":\"registry.example.com/etl:2.0\",\"name\":\"etl\"}]}}\n"},
            "managedFields": [
                {"manager": "kubectl-client-side-apply", "operation": "Update", "apiVersion": "batch.example.com/v1",
                 "time": "2026-07-20T10:00:00Z", "fieldsType": "FieldsV1",
                 "fieldsV1": {"f:metadata": {"f:annotations": {".": {}, "f:kubectl.kubernetes.io/last-applied-configuration": {}}},
                              "f:spec": {".": {}, "f:containers": {}}}},
                {"manager": "kubectl-edit", "operation": "Update", "apiVersion": "batch.example.com/v1",
                 "time": "2026-07-20T11:30:00Z", "fieldsType": "FieldsV1",
                 "fieldsV1": {"f:spec": {"f:containers": {}}}}]},
        "spec": {"containers": [{"image": "registry.example.com/etl:2.1-debug", "name": "etl"}]}
    });
    let desired = json!({
        "apiVersion": "batch.example.com/v1", "kind": "Pipeline",
        "metadata": {"name": "nightly", "namespace": "payments"},
        "spec": {"containers": [{"image": "registry.example.com/etl:2.0", "name": "etl"}]}
    });
    let opts = plumb_diff::PairOptions {
        default_namespace: "payments".into(),
        ..Default::default()
    };
    let pairs = plumb_diff::pair(
        vec![plumb_diff::SourcedObject {
            value: desired,
            source: "pipeline.yaml".into(),
        }],
        vec![live],
        &opts,
    )
    .unwrap();
    let r = plumb_diff::diff(&pairs[0], Strategy::ThreeWay, &DiffConfig::default()).unwrap();
    assert_eq!(r.changes.len(), 1, "{:#?}", r.changes);
    let c = &r.changes[0];
    assert_eq!(c.path.to_string(), "spec.containers[0].image");
    let a = c.attribution.as_ref().unwrap();
    assert_eq!(
        (a.manager.as_str(), a.time.as_str(), a.exact),
        ("kubectl-edit", "2026-07-20T11:30:00Z", true)
    );
    let mut out = Vec::new();
    plumb_diff::render(
        &[plumb_diff::mask(&r)],
        &plumb_diff::RenderOptions {
            attribution: true,
            ..Default::default()
        },
        &mut out,
    )
    .unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.ends_with("# spec.containers[0].image: last written by kubectl-edit (Update) at 2026-07-20T11:30:00Z\n"),
        "{text}"
    );
}
