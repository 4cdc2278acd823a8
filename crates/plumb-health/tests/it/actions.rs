//! Resource actions: discovery, Plumb's built-ins, settings entries (split keys, the legacy map,
//! merging with built-ins), both result forms and the empty-map repair.

use std::collections::BTreeMap;
use std::path::Path;

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
        [
            ("pause", false),
            ("restart", false),
            ("resume", true),
            ("scale", false)
        ]
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
        [
            ("pause", false),
            ("restart", false),
            ("resume", true),
            ("scale", false),
            ("scale-to-zero", false)
        ]
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

fn params(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn builtin_scale_takes_the_replicas_parameter_and_pause_resume_follow_spec_paused() {
    let actions = Actions::default();
    let found = actions.discover(&deployment()).unwrap();
    let scale = found.iter().find(|a| a.name == "scale").unwrap();
    assert_eq!(scale.params, [json!({"name": "replicas"})]);
    let out = actions
        .run(&deployment(), "scale", &params(&[("replicas", "6")]))
        .unwrap();
    assert_eq!(out[0].resource["spec"]["replicas"], json!(6));
    assert_eq!(
        out[0].resource["spec"]["template"],
        deployment()["spec"]["template"]
    );
    for (given, message) in [
        ("not_a_number", "invalid number of replicas: not_a_number"),
        ("-1", "invalid number of replicas: -1"),
        ("1.5", "invalid number of replicas: 1.5"),
    ] {
        let err = actions
            .run(&deployment(), "scale", &params(&[("replicas", given)]))
            .unwrap_err();
        assert!(err.to_string().ends_with(message), "{err}");
    }
    let err = actions
        .run(&deployment(), "scale", &BTreeMap::new())
        .unwrap_err();
    assert!(
        err.to_string()
            .ends_with("the scale action needs the parameter replicas"),
        "{err}"
    );
    let statefulset = json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"name": "db", "namespace": "shop"},
        "spec": {"replicas": 1, "template": {"spec": {"containers": [{"name": "db", "image": "db:1"}]}}}});
    assert_eq!(
        names(&actions.discover(&statefulset).unwrap()),
        [("restart", false), ("scale", false)]
    );
    let out = actions
        .run(&statefulset, "scale", &params(&[("replicas", "3")]))
        .unwrap();
    assert_eq!(out[0].resource["spec"]["replicas"], json!(3));

    // pause, then the paused Deployment offers resume, which removes spec.paused.
    let out = actions
        .run(&deployment(), "pause", &BTreeMap::new())
        .unwrap();
    let paused = out[0].resource.clone();
    assert_eq!(paused["spec"]["paused"], json!(true));
    assert_eq!(
        names(&actions.discover(&paused).unwrap()),
        [
            ("pause", true),
            ("restart", false),
            ("resume", false),
            ("scale", false)
        ]
    );
    assert!(matches!(
        actions.run(&paused, "pause", &BTreeMap::new()),
        Err(ActionError::Disabled { .. })
    ));
    let out = actions.run(&paused, "resume", &BTreeMap::new()).unwrap();
    assert_eq!(out[0].resource["spec"].get("paused"), None);
}

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A directory in Argo's `resource_customizations` layout, with scripts as Argo's are written
/// (a Deployment's discovery with a parameterised action, a core kind, a CRD group).
fn argo_layout(root: &Path) {
    write(
        root,
        "apps/Deployment/actions/discovery.lua",
        r#"local actions = {}
actions["restart"] = {["iconClass"] = "fa fa-fw fa-redo"}
local paused = false
if obj.spec.paused ~= nil then
    paused = obj.spec.paused
end
actions["pause"] = {["disabled"] = paused, ["iconClass"] = "fa fa-fw fa-pause-circle"}
actions["resume"] = {["disabled"] = not(paused), ["iconClass"] = "fa fa-fw fa-play-circle"}
actions["scale"] = {["iconClass"] = "fa fa-fw fa-plus-circle", ["params"] = {{["name"] = "replicas"}}}
return actions
"#,
    );
    write(
        root,
        "apps/Deployment/actions/restart/action.lua",
        r#"local os = require("os")
if obj.spec.template.metadata == nil then
    obj.spec.template.metadata = {}
end
if obj.spec.template.metadata.annotations == nil then
    obj.spec.template.metadata.annotations = {}
end
obj.spec.template.metadata.annotations["kubectl.kubernetes.io/restartedAt"] = os.date("!%Y-%m-%dT%XZ")
return obj
"#,
    );
    write(
        root,
        "apps/Deployment/actions/pause/action.lua",
        "obj.spec.paused = true\nreturn obj\n",
    );
    write(
        root,
        "apps/Deployment/actions/resume/action.lua",
        "obj.spec.paused = nil\nreturn obj\n",
    );
    write(
        root,
        "apps/Deployment/actions/scale/action.lua",
        r#"local replicas = tonumber(actionParams["replicas"])
if not replicas then
    error("invalid number: " .. actionParams["replicas"], 0)
end
obj.spec.replicas = replicas
return obj
"#,
    );
    // Test data beside the scripts, as in Argo's tree: not an action.
    write(
        root,
        "apps/Deployment/actions/testdata/deployment.yaml",
        "kind: Deployment\n",
    );
    write(
        root,
        "apps/Deployment/health.lua",
        "return {status = \"Healthy\"}\n",
    );
    write(
        root,
        "ConfigMap/actions/discovery.lua",
        "return {touch = {}}\n",
    );
    write(
        root,
        "ConfigMap/actions/touch/action.lua",
        "obj.data = obj.data or {}\nobj.data.touched = \"yes\"\nreturn obj\n",
    );
    write(
        root,
        "argoproj.io/Rollout/actions/discovery.lua",
        "return {abort = {[\"disabled\"] = obj.status == nil}}\n",
    );
    write(
        root,
        "argoproj.io/Rollout/actions/abort/action.lua",
        "obj.status.abort = true\nreturn obj\n",
    );
}

#[test]
fn actions_from_a_directory_in_argo_layout_replace_plumbs_own_for_their_kinds() {
    let dir = tempfile::tempdir().unwrap();
    argo_layout(dir.path());
    let actions = Actions::default()
        .with_directories(&[dir.path().to_path_buf()])
        .unwrap();
    let found = actions.discover(&deployment()).unwrap();
    assert_eq!(
        names(&found),
        [
            ("pause", false),
            ("restart", false),
            ("resume", true),
            ("scale", false)
        ]
    );
    assert_eq!(
        found[1].icon_class.as_deref(),
        Some("fa fa-fw fa-redo"),
        "the directory's discovery, not Plumb's"
    );
    let out = actions
        .run(&deployment(), "scale", &params(&[("replicas", "4")]))
        .unwrap();
    assert_eq!(out[0].resource["spec"]["replicas"], json!(4));
    let err = actions
        .run(&deployment(), "scale", &params(&[("replicas", "many")]))
        .unwrap_err();
    let origin = dir.path().join("apps/Deployment/actions/scale/action.lua");
    assert_eq!(
        err.to_string(),
        format!("{}: invalid number: many", origin.display())
    );
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "shop"}});
    let out = actions.run(&cm, "touch", &BTreeMap::new()).unwrap();
    assert_eq!(out[0].resource["data"], json!({"touched": "yes"}));
    let rollout = json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout",
        "metadata": {"name": "r", "namespace": "shop"}, "spec": {}, "status": {"phase": "Progressing"}});
    let out = actions.run(&rollout, "abort", &BTreeMap::new()).unwrap();
    assert_eq!(out[0].resource["status"]["abort"], json!(true));
    // A kind the directory has nothing for keeps Plumb's own.
    assert_eq!(
        names(&actions.discover(&cronjob(false)).unwrap()),
        [("resume", true), ("suspend", false)]
    );

    // argocd-cm comes first; with mergeBuiltinActions the directory's join it.
    let merged = format!("{SCALE_ACTIONS}mergeBuiltinActions: true\n");
    for (entry, expected) in [
        (SCALE_ACTIONS.to_string(), vec![("scale-to-zero", false)]),
        (
            merged,
            vec![
                ("pause", false),
                ("restart", false),
                ("resume", true),
                ("scale", false),
                ("scale-to-zero", false),
            ],
        ),
    ] {
        let actions = Actions::from_settings(&settings(&[(
            "resource.customizations.actions.apps_Deployment",
            &entry,
        )]))
        .unwrap()
        .with_directories(&[dir.path().to_path_buf()])
        .unwrap();
        assert_eq!(names(&actions.discover(&deployment()).unwrap()), expected);
    }

    // Of two directories, the first that has the kind wins.
    let other = tempfile::tempdir().unwrap();
    write(
        other.path(),
        "apps/Deployment/actions/discovery.lua",
        "return {[\"only-here\"] = {}}\n",
    );
    let first = Actions::default()
        .with_directories(&[other.path().to_path_buf(), dir.path().to_path_buf()])
        .unwrap();
    assert_eq!(
        names(&first.discover(&deployment()).unwrap()),
        [("only-here", false)]
    );
}
