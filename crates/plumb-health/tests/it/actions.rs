//! Resource actions: discovery, Plumb's built-ins, settings entries (split keys, the legacy map,
//! merging with built-ins), both result forms and the empty-map repair.

use std::collections::BTreeMap;

use plumb_health::actions::{ActionError, Actions, Operation, ResourceAction};
use plumb_model::Settings;
use serde_json::{Value, json};

fn deployment() -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "api", "namespace": "shop", "labels": {"app": "api"}},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "api"}},
            "strategy": {},
            "template": {"metadata": {"labels": {"app": "api"}},
                "spec": {"containers": [{"name": "api", "image": "api:1", "resources": {}, "ports": []}]}}},
        "status": {"replicas": 2}
    })
}

fn cronjob(suspend: bool) -> Value {
    json!({
        "apiVersion": "batch/v1", "kind": "CronJob",
        "metadata": {"name": "report", "namespace": "shop"},
        "spec": {"schedule": "0 3 * * *", "suspend": suspend,
            "jobTemplate": {"spec": {"template": {"spec": {"containers": [{"name": "r", "image": "r:1"}], "restartPolicy": "OnFailure"}}}}}
    })
}

fn settings(pairs: &[(&str, &str)]) -> Settings {
    Settings::from_data(
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    )
}

fn names(actions: &[ResourceAction]) -> Vec<(&str, bool)> {
    actions
        .iter()
        .map(|a| (a.name.as_str(), a.disabled))
        .collect()
}

#[test]
fn builtin_restart_stamps_the_pod_template_and_keeps_empty_maps() {
    let actions = Actions::default();
    let obj = deployment();
    assert_eq!(
        names(&actions.discover(&obj).unwrap()),
        [("restart", false)]
    );
    let out = actions.run(&obj, "restart", &BTreeMap::new()).unwrap();
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].operation, Operation::Patch);
    let new = &out[0].resource;
    let stamp = new
        .pointer("/spec/template/metadata/annotations/kubectl.kubernetes.io~1restartedAt")
        .and_then(Value::as_str)
        .expect("restartedAt set");
    assert!(
        stamp.ends_with('Z')
            && jiff::civil::DateTime::strptime("%Y-%m-%dT%H:%M:%S", &stamp[..stamp.len() - 1])
                .is_ok(),
        "{stamp}"
    );
    // Everything else is as it was: `{}` did not turn into `[]`, `[]` stayed a list.
    let mut expected = obj.clone();
    expected["spec"]["template"]["metadata"]["annotations"] =
        json!({"kubectl.kubernetes.io/restartedAt": stamp});
    assert_eq!(new, &expected);
    let patch = plumb_health::actions::merge_patch(&obj, new).unwrap();
    assert_eq!(
        patch,
        json!({"spec": {"template": {"metadata": {"annotations": {"kubectl.kubernetes.io/restartedAt": stamp}}}}})
    );
}

#[test]
fn builtin_restart_for_statefulsets_and_daemonsets() {
    for kind in ["StatefulSet", "DaemonSet"] {
        let mut obj = deployment();
        obj["kind"] = json!(kind);
        let out = Actions::default()
            .run(&obj, "restart", &BTreeMap::new())
            .unwrap();
        assert!(
            out[0]
                .resource
                .pointer("/spec/template/metadata/annotations/kubectl.kubernetes.io~1restartedAt")
                .is_some(),
            "{kind}"
        );
    }
}

#[test]
fn cronjob_suspend_and_resume_follow_spec_suspend() {
    let actions = Actions::default();
    let running = cronjob(false);
    assert_eq!(
        names(&actions.discover(&running).unwrap()),
        [("resume", true), ("suspend", false)]
    );
    let out = actions.run(&running, "suspend", &BTreeMap::new()).unwrap();
    assert_eq!(out[0].resource["spec"]["suspend"], json!(true));
    let err = actions
        .run(&running, "resume", &BTreeMap::new())
        .unwrap_err();
    assert!(matches!(err, ActionError::Disabled { .. }), "{err}");
    assert_eq!(
        err.to_string(),
        "action 'resume' is disabled for batch/CronJob shop/report"
    );
    let out = actions
        .run(&cronjob(true), "resume", &BTreeMap::new())
        .unwrap();
    assert_eq!(out[0].resource["spec"]["suspend"], json!(false));
}

#[test]
fn kinds_without_actions_offer_none() {
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "shop"}});
    let actions = Actions::default();
    assert!(actions.discover(&cm).unwrap().is_empty());
    let err = actions.run(&cm, "restart", &BTreeMap::new()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "action 'restart' is not available for ConfigMap shop/c"
    );
}

const SCALE_ACTIONS: &str = r#"
discovery.lua: |
  local actions = {}
  actions["scale-to-zero"] = {["disabled"] = obj.spec.replicas == 0, ["displayName"] = "Scale to zero"}
  return actions
definitions:
- name: scale-to-zero
  action.lua: |
    obj.spec.replicas = 0
    return obj
"#;

#[test]
fn settings_entry_replaces_builtins_unless_merged() {
    let actions = Actions::from_settings(&settings(&[(
        "resource.customizations.actions.apps_Deployment",
        SCALE_ACTIONS,
    )]))
    .unwrap();
    let found = actions.discover(&deployment()).unwrap();
    assert_eq!(names(&found), [("scale-to-zero", false)]);
    assert_eq!(found[0].display_name.as_deref(), Some("Scale to zero"));
    let out = actions
        .run(&deployment(), "scale-to-zero", &BTreeMap::new())
        .unwrap();
    assert_eq!(out[0].resource["spec"]["replicas"], json!(0));
    assert!(matches!(
        actions.run(&deployment(), "restart", &BTreeMap::new()),
        Err(ActionError::NotAvailable { .. })
    ));

    let merged = format!("{SCALE_ACTIONS}mergeBuiltinActions: true\n");
    let actions = Actions::from_settings(&settings(&[(
        "resource.customizations.actions.apps_Deployment",
        &merged,
    )]))
    .unwrap();
    assert_eq!(
        names(&actions.discover(&deployment()).unwrap()),
        [("restart", false), ("scale-to-zero", false)]
    );
}

#[test]
fn legacy_map_entries_and_core_kinds() {
    let legacy = r#"
ConfigMap:
  actions: |
    discovery.lua: |
      return {touch = {}}
    definitions:
    - name: touch
      action.lua: |
        local os = require("os")
        obj.data = obj.data or {}
        obj.data.touched = "yes"
        return obj
"#;
    let actions =
        Actions::from_settings(&settings(&[("resource.customizations", legacy)])).unwrap();
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "shop"}});
    assert_eq!(names(&actions.discover(&cm).unwrap()), [("touch", false)]);
    let out = actions.run(&cm, "touch", &BTreeMap::new()).unwrap();
    assert_eq!(out[0].resource["data"], json!({"touched": "yes"}));
}

#[test]
fn list_form_creates_and_patches_with_params() {
    let entry = r#"
discovery.lua: |
  return {["create-job"] = {}}
definitions:
- name: create-job
  action.lua: |
    local job = {}
    job.apiVersion = "batch/v1"
    job.kind = "Job"
    job.metadata = {name = obj.metadata.name .. "-" .. actionParams["suffix"], namespace = obj.metadata.namespace}
    job.spec = obj.spec.jobTemplate.spec
    obj.metadata.annotations = {last = actionParams["suffix"]}
    return {{operation = "create", resource = job}, {operation = "patch", resource = obj}}
"#;
    let actions = Actions::from_settings(&settings(&[(
        "resource.customizations.actions.batch_CronJob",
        entry,
    )]))
    .unwrap();
    let params = BTreeMap::from([("suffix".to_string(), "manual".to_string())]);
    let out = actions.run(&cronjob(false), "create-job", &params).unwrap();
    assert_eq!(out.len(), 2);
    assert_eq!(out[0].operation, Operation::Create);
    assert_eq!(out[0].resource["metadata"]["name"], json!("report-manual"));
    assert_eq!(out[0].resource["kind"], json!("Job"));
    assert_eq!(out[1].operation, Operation::Patch);
    assert_eq!(
        out[1].resource["metadata"]["annotations"]["last"],
        json!("manual")
    );
}

#[test]
fn bad_settings_name_the_key() {
    let err = Actions::from_settings(&settings(&[(
        "resource.customizations.actions.apps_Deployment",
        "definitions: 3",
    )]))
    .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("settings key argocd-cm resource.customizations.actions.apps_Deployment: not Argo's actions YAML"),
        "{err}"
    );
}
