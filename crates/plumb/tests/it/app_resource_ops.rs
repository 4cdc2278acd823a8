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
         apps   Deployment  web     restart  false\n\
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

/// The Pod names of a Deployment (through its ReplicaSets), once the controllers made them.
fn deployment_pods(ns: &str, app_label: &str) -> Vec<String> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    loop {
        let out = kubectl(&[
            "-n",
            ns,
            "get",
            "pods",
            "-l",
            &format!("app={app_label}"),
            "-o",
            "name",
        ]);
        let names: Vec<String> = text(&out.stdout)
            .lines()
            .map(|l| l.trim_start_matches("pod/").to_string())
            .collect();
        if !names.is_empty() {
            return names;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no Pods for {app_label} in {ns}"
        );
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
}

#[test]
fn logs_reach_the_pods_of_the_named_resource_only() {
    let ns = control_namespace("logs");
    let ns = ns.name();
    setup(ns);
    let web = deployment_pods(ns, "web");
    let outsider = deployment_pods(ns, "outsider");
    // The test control plane's nodes are kwok's: Pods have no kubelet to serve their logs, so
    // the API server's pods/log fails. What is checked here is which Pod the command asked for:
    // the Deployment's own (through its ReplicaSet), never the unmanaged Deployment's.
    let out = plumb(
        ns,
        &[
            "logs",
            "shop",
            "--kind",
            "Deployment",
            "--name",
            "web",
            "--tail",
            "5",
        ],
    );
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        web.iter()
            .any(|p| err.contains(&format!("reading the logs of Pod {ns}/{p}"))),
        "{err}"
    );
    assert!(!outsider.iter().any(|p| err.contains(p.as_str())), "{err}");
    // A managed resource without Pods.
    let out = plumb(ns, &["logs", "shop", "--kind", "ConfigMap"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stderr), "no Pods found for application 'shop'\n");
    // An unmanaged resource is not found at all.
    let out = plumb(
        ns,
        &["logs", "shop", "--kind", "Deployment", "--name", "outsider"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(text(&out.stderr), "plumb: No matching resource found\n");
}
