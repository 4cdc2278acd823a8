//! `plumb app actions`, `patch-resource` and `delete-resource` end to end on the real control
//! plane: an Application whose `status.resources` lists live objects of its namespace (as the
//! controller records them), and objects next to them it does not manage, which must stay out
//! of reach.

use serde_json::{Value, json};

use crate::app::{control_namespace, kubectl, kubectl_apply, patch_status, plumb, text};

fn deployment(ns: &str, name: &str) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "web", "image": "nginx:1.27", "resources": {}}]}}}})
}

fn live(ns: &str, kind: &str, name: &str) -> Option<Value> {
    let out = kubectl(&[
        "-n",
        ns,
        "get",
        kind,
        name,
        "-o",
        "json",
        "--ignore-not-found",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let t = text(&out.stdout);
    (!t.trim().is_empty()).then(|| serde_json::from_str(&t).unwrap())
}

/// An Application `shop` managing Deployment `web`, CronJob `report` and ConfigMap `settings`
/// of namespace `ns`; Deployment `outsider` lives there too, unmanaged.
fn setup(ns: &str) {
    kubectl_apply(&deployment(ns, "web"));
    kubectl_apply(&deployment(ns, "outsider"));
    kubectl_apply(&json!({"apiVersion": "batch/v1", "kind": "CronJob",
        "metadata": {"name": "report", "namespace": ns},
        "spec": {"schedule": "0 3 * * *", "suspend": false,
            "jobTemplate": {"spec": {"template": {"spec": {"restartPolicy": "OnFailure",
                "containers": [{"name": "r", "image": "busybox:1.36"}]}}}}}}));
    kubectl_apply(&json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "settings", "namespace": ns}, "data": {"mode": "fast"}}));
    let out = plumb(
        ns,
        &[
            "create",
            "shop",
            "--repo",
            "https://git.acme.internal/apps/shop.git",
            "--path",
            "deploy",
            "--dest-server",
            "https://kubernetes.default.svc",
            "--dest-namespace",
            ns,
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    patch_status(
        ns,
        "shop",
        &json!({"status": {"resources": [
            {"group": "apps", "version": "v1", "kind": "Deployment", "namespace": ns, "name": "web", "status": "Synced"},
            {"group": "batch", "version": "v1", "kind": "CronJob", "namespace": ns, "name": "report", "status": "Synced"},
            {"version": "v1", "kind": "ConfigMap", "namespace": ns, "name": "settings", "status": "Synced"}
        ]}}),
    );
}

#[test]
fn actions_list_and_run_builtins() {
    let ns = control_namespace("actions");
    let ns = ns.name();
    setup(ns);

    let out = plumb(ns, &["actions", "list", "shop"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "GROUP  KIND        NAME    ACTION   DISABLED\n\
         apps   Deployment  web     pause    false\n\
         apps   Deployment  web     restart  false\n\
         apps   Deployment  web     resume   true\n\
         apps   Deployment  web     scale    false\n\
         batch  CronJob     report  resume   true\n\
         batch  CronJob     report  suspend  false\n"
    );
    let out = plumb(
        ns,
        &["actions", "list", "shop", "--kind", "CronJob", "-o", "json"],
    );
    let rows: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(rows.as_array().unwrap().len(), 2);

    // restart: the Pod template gets kubectl's restartedAt annotation; nothing else changes.
    let before = live(ns, "deployment", "web").unwrap();
    let out = plumb(
        ns,
        &["actions", "run", "shop", "restart", "--kind", "Deployment"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "");
    let after = live(ns, "deployment", "web").unwrap();
    assert!(
        after
            .pointer("/spec/template/metadata/annotations/kubectl.kubernetes.io~1restartedAt")
            .and_then(Value::as_str)
            .is_some_and(|s| s.ends_with('Z')),
        "{after}"
    );
    assert_eq!(
        after["spec"]["template"]["spec"]["containers"],
        before["spec"]["template"]["spec"]["containers"]
    );
    assert_eq!(after["metadata"]["generation"], json!(2));

    // An unmanaged Deployment of the same namespace is out of reach.
    let out = plumb(
        ns,
        &[
            "actions",
            "run",
            "shop",
            "restart",
            "--kind",
            "Deployment",
            "--resource-name",
            "outsider",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(text(&out.stderr), "plumb: No matching resource found\n");
    assert!(
        live(ns, "deployment", "outsider").unwrap()["spec"]["template"]["metadata"]
            .get("annotations")
            .is_none()
    );

    // resume is disabled while the CronJob runs; suspend then resume.
    let out = plumb(
        ns,
        &["actions", "run", "shop", "resume", "--kind", "CronJob"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains(&format!(
            "action 'resume' is disabled for batch/CronJob {ns}/report"
        )),
        "{}",
        text(&out.stderr)
    );
    let out = plumb(
        ns,
        &["actions", "run", "shop", "suspend", "--kind", "CronJob"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        live(ns, "cronjob", "report").unwrap()["spec"]["suspend"],
        json!(true)
    );
    let out = plumb(
        ns,
        &["actions", "run", "shop", "resume", "--kind", "CronJob"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        live(ns, "cronjob", "report").unwrap()["spec"]["suspend"],
        json!(false)
    );

    // scale takes its replicas from --param (the script's actionParams).
    let scale = |args: &[&str]| {
        let mut all = vec![
            "actions",
            "run",
            "shop",
            "scale",
            "--kind",
            "Deployment",
            "--resource-name",
            "web",
        ];
        all.extend_from_slice(args);
        plumb(ns, &all)
    };
    let out = scale(&["--param", "replicas=3"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        live(ns, "deployment", "web").unwrap()["spec"]["replicas"],
        json!(3)
    );
    let out = scale(&["--param", "replicas=lots"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("invalid number of replicas: lots"),
        "{}",
        text(&out.stderr)
    );
    let out = scale(&["--param", "replicas"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        "plumb: Invalid parameter format: replicas\n"
    );
    let out = scale(&[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("the scale action needs the parameter replicas"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(
        live(ns, "deployment", "web").unwrap()["spec"]["replicas"],
        json!(3)
    );
    // pause, then resume (offered only while paused).
    let out = plumb(
        ns,
        &["actions", "run", "shop", "pause", "--kind", "Deployment"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        live(ns, "deployment", "web").unwrap()["spec"]["paused"],
        json!(true)
    );
    let out = plumb(
        ns,
        &["actions", "run", "shop", "resume", "--kind", "Deployment"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        live(ns, "deployment", "web").unwrap()["spec"].get("paused"),
        None
    );

    // --kind is required, as in Argo; an unknown action is an error.
    let out = plumb(ns, &["actions", "run", "shop", "restart"]);
    assert_eq!(out.status.code(), Some(2));
    let out = plumb(
        ns,
        &["actions", "run", "shop", "explode", "--kind", "ConfigMap"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains(&format!(
        "action 'explode' is not available for ConfigMap {ns}/settings"
    )));
}

#[test]
fn settings_actions_create_only_where_allowed() {
    let ns = control_namespace("actions-cm");
    let ns = ns.name();
    setup(ns);
    // A settings action on ConfigMaps: `copy` creates a sibling ConfigMap (allowed), `escape`
    // creates one in kube-system (refused: outside the object's namespace).
    let entry = r#"discovery.lua: |
  return {copy = {}, escape = {}}
definitions:
- name: copy
  action.lua: |
    local copy = {apiVersion = "v1", kind = "ConfigMap", metadata = {name = obj.metadata.name .. "-copy", namespace = obj.metadata.namespace}, data = obj.data}
    obj.metadata.labels = {copied = "yes"}
    return {{operation = "create", resource = copy}, {operation = "patch", resource = obj}}
- name: escape
  action.lua: |
    local copy = {apiVersion = "v1", kind = "ConfigMap", metadata = {name = "stolen", namespace = "kube-system"}, data = obj.data}
    return {{operation = "create", resource = copy}}
"#;
    kubectl_apply(&json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "argocd-cm", "namespace": ns},
        "data": {"resource.customizations.actions.ConfigMap": entry}}));
    let out = plumb(
        ns,
        &["actions", "run", "shop", "copy", "--kind", "ConfigMap"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        live(ns, "configmap", "settings-copy").unwrap()["data"],
        json!({"mode": "fast"})
    );
    assert_eq!(
        live(ns, "configmap", "settings").unwrap()["metadata"]["labels"],
        json!({"copied": "yes"})
    );

    let out = plumb(
        ns,
        &["actions", "run", "shop", "escape", "--kind", "ConfigMap"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains(&format!(
            "outside the namespace '{ns}' of the object it ran on; refused"
        )),
        "{}",
        text(&out.stderr)
    );
    assert!(live("kube-system", "configmap", "stolen").is_none());
}

#[test]
fn patch_and_delete_resource() {
    let ns = control_namespace("patchres");
    let ns = ns.name();
    setup(ns);
    let out = plumb(
        ns,
        &[
            "patch-resource",
            "shop",
            "--kind",
            "Deployment",
            "--resource-name",
            "web",
            "--patch",
            r#"{"spec": {"replicas": 3}}"#,
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stderr), "Resource 'web' patched\n");
    assert_eq!(
        live(ns, "deployment", "web").unwrap()["spec"]["replicas"],
        json!(3)
    );
    let out = plumb(
        ns,
        &[
            "patch-resource",
            "shop",
            "--kind",
            "Deployment",
            "--patch-type",
            "application/json-patch+json",
            "--patch",
            r#"[{"op": "replace", "path": "/spec/replicas", "value": 2}]"#,
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        live(ns, "deployment", "web").unwrap()["spec"]["replicas"],
        json!(2)
    );
    // Unmanaged objects are out of reach; several matches need --all.
    let out = plumb(
        ns,
        &[
            "patch-resource",
            "shop",
            "--kind",
            "Deployment",
            "--resource-name",
            "outsider",
            "--patch",
            "{}",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(text(&out.stderr), "plumb: No matching resource found\n");
    let out = plumb(
        ns,
        &[
            "patch-resource",
            "shop",
            "--kind",
            "ConfigMap",
            "--patch",
            "{}",
            "--group",
            "apps",
        ],
    );
    assert_eq!(out.status.code(), Some(2));

    let out = plumb(
        ns,
        &[
            "delete-resource",
            "shop",
            "--kind",
            "ConfigMap",
            "--resource-name",
            "settings",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stderr), "Resource 'settings' deleted\n");
    // Foreground deletion (the default): the garbage collector removes the object after its
    // dependents, moments later on a busy control plane.
    let gone = kubectl(&[
        "-n",
        ns,
        "wait",
        "--for=delete",
        "configmap/settings",
        "--timeout=60s",
    ]);
    assert!(gone.status.success(), "{}", text(&gone.stderr));
    assert!(live(ns, "configmap", "settings").is_none());
    let out = plumb(
        ns,
        &[
            "delete-resource",
            "shop",
            "--kind",
            "Deployment",
            "--resource-name",
            "outsider",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(live(ns, "deployment", "outsider").is_some());
}

fn write(root: &std::path::Path, rel: &str, body: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, body).unwrap();
}

#[test]
fn actions_from_a_customizations_directory_after_argocd_cm() {
    let ns = control_namespace("actions-dir");
    let ns = ns.name();
    setup(ns);
    // Argo's layout: a Deployment discovery with a parameterised action, and a core kind.
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "apps/Deployment/actions/discovery.lua",
        r#"local actions = {}
actions["set-image-tag"] = {["iconClass"] = "fa fa-fw fa-tag", ["params"] = {{["name"] = "tag"}}}
return actions
"#,
    );
    write(
        dir.path(),
        "apps/Deployment/actions/set-image-tag/action.lua",
        r#"local tag = actionParams["tag"]
if tag == nil or tag == "" then
    error("tag parameter is required", 0)
end
for _, c in ipairs(obj.spec.template.spec.containers) do
    c.image = string.gsub(c.image, ":[^:/]*$", "") .. ":" .. tag
end
return obj
"#,
    );
    write(
        dir.path(),
        "ConfigMap/actions/discovery.lua",
        "return {stamp = {}}\n",
    );
    write(
        dir.path(),
        "ConfigMap/actions/stamp/action.lua",
        "obj.data.stamped = \"by-dir\"\nreturn obj\n",
    );
    let dir_arg = dir.path().display().to_string();

    let out = plumb(
        ns,
        &["actions", "list", "shop", "--customizations", &dir_arg],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "GROUP  KIND        NAME      ACTION         DISABLED\n\
         \x20      ConfigMap   settings  stamp          false\n\
         apps   Deployment  web       set-image-tag  false\n\
         batch  CronJob     report    resume         true\n\
         batch  CronJob     report    suspend        false\n"
    );
    let out = plumb(
        ns,
        &[
            "actions",
            "run",
            "shop",
            "set-image-tag",
            "--kind",
            "Deployment",
            "--param",
            "tag=1.28",
            "--customizations",
            &dir_arg,
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        live(ns, "deployment", "web").unwrap()["spec"]["template"]["spec"]["containers"][0]["image"],
        json!("nginx:1.28")
    );
    // Without the directory, Plumb's own actions again.
    let out = plumb(ns, &["actions", "list", "shop", "--kind", "Deployment"]);
    assert!(
        text(&out.stdout).contains(" restart "),
        "{}",
        text(&out.stdout)
    );

    // argocd-cm comes before the directory.
    kubectl_apply(&json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "argocd-cm", "namespace": ns},
        "data": {"resource.customizations.actions.ConfigMap":
            "discovery.lua: |\n  return {stamp = {}}\ndefinitions:\n- name: stamp\n  action.lua: |\n    obj.data.stamped = \"by-cm\"\n    return obj\n"}}));
    let out = plumb(
        ns,
        &[
            "actions",
            "run",
            "shop",
            "stamp",
            "--kind",
            "ConfigMap",
            "--customizations",
            &dir_arg,
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        live(ns, "configmap", "settings").unwrap()["data"]["stamped"],
        json!("by-cm")
    );

    // A directory that cannot be read is an error naming it.
    let out = plumb(
        ns,
        &[
            "actions",
            "list",
            "shop",
            "--customizations",
            "/nonexistent/resource_customizations",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("/nonexistent/resource_customizations"),
        "{}",
        text(&out.stderr)
    );
}
