use serde_json::json;

use super::*;

fn set(extra: Value) -> ApplicationSet {
    let mut v = json!({
        "metadata": {"name": "fleet", "namespace": "argocd", "uid": "set-uid"},
        "spec": {"generators": [], "template": {"metadata": {}, "spec": {}}}
    });
    if let (Some(spec), Some(extra)) = (v["spec"].as_object_mut(), extra.as_object()) {
        spec.extend(extra.clone());
    }
    serde_json::from_value(v).unwrap()
}

fn generated(name: &str, rev: &str) -> Application {
    serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": "argocd",
                     "labels": {"team": "a"},
                     "finalizers": ["resources-finalizer.argocd.argoproj.io"]},
        "spec": {"project": "default",
                 "source": {"repoURL": "https://example.com/r.git", "path": name, "targetRevision": rev},
                 "destination": {"server": "https://kubernetes.default.svc", "namespace": name}}
    }))
    .unwrap()
}

fn rules(set: &ApplicationSet) -> Rules {
    Rules::of(set, &[], &[]).unwrap()
}

/// The live object the API server would hold after creating the plan's object.
fn created(plan: Plan) -> Value {
    let Plan::Create(mut v) = plan else {
        panic!("expected a create, got {plan:?}")
    };
    let meta = v["metadata"].as_object_mut().unwrap();
    meta.insert("uid".into(), json!("app-uid"));
    meta.insert("resourceVersion".into(), json!("7"));
    meta.insert("managedFields".into(), json!([]));
    v["status"] = json!({"sync": {"status": "Synced"}});
    v
}

#[test]
fn create_then_nothing_to_do() {
    let s = set(json!({}));
    let app = generated("a", "main");
    let live = created(plan(&s, &app, None, &rules(&s)).unwrap());
    assert_eq!(live["metadata"]["ownerReferences"][0]["uid"], "set-uid");
    assert_eq!(
        plan(&s, &app, Some(&live), &rules(&s)).unwrap(),
        Plan::Unchanged
    );
}

#[test]
fn changed_spec_is_a_patch_of_the_change_only() {
    let s = set(json!({}));
    let live = created(plan(&s, &generated("a", "main"), None, &rules(&s)).unwrap());
    let p = plan(&s, &generated("a", "v2"), Some(&live), &rules(&s)).unwrap();
    assert_eq!(
        p,
        Plan::Patch(json!({"spec": {"source": {"targetRevision": "v2"}}}))
    );
}

#[test]
fn preserved_and_default_annotations_survive_others_go() {
    let s = set(json!({"preservedFields": {"labels": ["keep"]}}));
    let mut live = created(plan(&s, &generated("a", "main"), None, &rules(&s)).unwrap());
    live["metadata"]["annotations"] = json!({"argocd.argoproj.io/refresh": "hard", "stray": "x"});
    live["metadata"]["labels"]["keep"] = json!("yes");
    live["metadata"]["labels"]["drop"] = json!("no");
    live["metadata"]["finalizers"] = json!([
        "resources-finalizer.argocd.argoproj.io",
        "pre-delete-finalizer.argocd.argoproj.io/cleanup"
    ]);
    let Plan::Patch(p) = plan(&s, &generated("a", "main"), Some(&live), &rules(&s)).unwrap() else {
        panic!("expected a patch")
    };
    assert_eq!(
        p,
        json!({"metadata": {"annotations": {"stray": null}, "labels": {"drop": null}, "finalizers": [
            "resources-finalizer.argocd.argoproj.io",
            "pre-delete-finalizer.argocd.argoproj.io/cleanup"
        ]}})
    );
}

#[test]
fn ignored_differences_keep_the_live_value() {
    let s = set(json!({"ignoreApplicationDifferences": [
        {"jsonPointers": ["/spec/source/targetRevision"]},
        {"name": "other", "jqPathExpressions": [".spec.destination.namespace"]}
    ]}));
    let live = created(plan(&s, &generated("a", "main"), None, &rules(&s)).unwrap());
    assert_eq!(
        plan(&s, &generated("a", "v2"), Some(&live), &rules(&s)).unwrap(),
        Plan::Unchanged
    );
}

#[test]
fn bad_ignore_rule_is_named() {
    let s = set(json!({"ignoreApplicationDifferences": [{"jsonPointers": ["spec"]}]}));
    let err = Rules::of(&s, &[], &[]).err().unwrap();
    assert!(
        err.contains("spec.ignoreApplicationDifferences[0]"),
        "{err}"
    );
}

#[test]
fn other_sets_application_is_not_taken() {
    let s = set(json!({}));
    let mut live = created(plan(&s, &generated("a", "main"), None, &rules(&s)).unwrap());
    live["metadata"]["ownerReferences"][0]["name"] = json!("other");
    let err = plan(&s, &generated("a", "main"), Some(&live), &rules(&s)).unwrap_err();
    assert_eq!(
        err,
        "error while wrapping using MutateFn: Object argocd/a is already owned by another ApplicationSet controller other"
    );
}

#[test]
fn merge_patch_removes_with_null_and_replaces_lists() {
    assert_eq!(merge_patch(&json!({"a": 1}), &json!({"a": 1})), None);
    assert_eq!(
        merge_patch(&json!({"a": 1, "b": [1]}), &json!({"b": [2]})),
        Some(json!({"a": null, "b": [2]}))
    );
}
