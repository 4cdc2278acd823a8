//! Plumb's generic rule for custom resources whose controller never wrote a status, on the real
//! control plane: the controller learns from discovery which kinds have a status subresource.

use std::time::{Duration, Instant};

use plumb_testenv::TestEnv;
use plumb_testenv::git::GitRepo;
use serde_json::{Value, json};

use crate::support::{Controlled, resource};

pub(crate) fn kubectl(env: &TestEnv, args: &[&str]) -> String {
    let out = env.kubectl().args(args).output().expect("kubectl");
    assert!(
        out.status.success(),
        "kubectl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub(crate) fn kubectl_apply(env: &TestEnv, ns: &str, obj: &Value) {
    let file = tempfile::NamedTempFile::new().expect("tempfile");
    std::fs::write(file.path(), obj.to_string()).expect("write manifest");
    let path = file.path().to_string_lossy().into_owned();
    kubectl(env, &["-n", ns, "apply", "-f", &path]);
}

/// A namespaced CRD in `group`, with or without a status subresource.
pub(crate) fn install_kind(env: &TestEnv, group: &str, kind: &str, plural: &str, status: bool) {
    let mut version = json!({"name": "v1", "served": true, "storage": true,
        "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}});
    if status {
        version["subresources"] = json!({"status": {}});
    }
    kubectl_apply(
        env,
        "default",
        &json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": format!("{plural}.{group}")},
            "spec": {"group": group, "scope": "Namespaced",
                     "names": {"kind": kind, "plural": plural, "singular": kind.to_ascii_lowercase(), "listKind": format!("{kind}List")},
                     "versions": [version]}
        }),
    );
    kubectl(
        env,
        &[
            "wait",
            "--for=condition=Established",
            "--timeout=60s",
            &format!("crd/{plural}.{group}"),
        ],
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    while !kubectl(env, &["api-resources", "--api-group", group, "-o", "name"]).contains(plural) {
        assert!(Instant::now() < deadline, "{plural}.{group} not served");
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn custom(group: &str, kind: &str, name: &str) -> String {
    json!({"apiVersion": format!("{group}/v1"), "kind": kind,
           "metadata": {"name": name}, "spec": {"size": 1}})
    .to_string()
}

#[tokio::test]
async fn a_custom_resource_never_given_a_status_reads_progressing_after_the_grace_period() {
    let env = TestEnv::shared();
    let group = format!("nostatus.p{}.plumb.test", std::process::id());
    install_kind(env, &group, "Widget", "widgets", true);
    install_kind(env, &group, "Gadget", "gadgets", false);

    crate::support::install_crds(env);
    let ns = env.namespace("ctl-nostatus");
    kubectl_apply(
        env,
        ns.name(),
        &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "argocd-cm"},
                "data": {"plumb.health.missingStatusGracePeriod": "3s",
                         "timeout.reconciliation": "2s", "timeout.reconciliation.jitter": "0s"}}),
    );
    let ctl = Controlled::start_in(env, ns).await;
    let dest = env.namespace("dest-nostatus");
    let repo = GitRepo::new();
    repo.commit(
        &[
            ("app/widget.yaml", custom(&group, "Widget", "w")),
            ("app/gadget.yaml", custom(&group, "Gadget", "g")),
        ],
        "two custom resources no controller serves",
    );
    let name = format!("nostatus-{}", std::process::id());
    ctl.create_app(json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": name},
        "spec": {"project": "default",
                 "source": {"repoURL": repo.url(), "path": "app"},
                 "destination": {"server": "https://kubernetes.default.svc", "namespace": dest.name()},
                 "syncPolicy": {"automated": {}}}
    }))
    .await;

    let expected = "generic: waiting for Widget controller to report status";
    let app = ctl
        .wait_app(&name, "the Widget reads Progressing", |a| {
            resource(a, "Widget")["health"]["message"] == expected
        })
        .await;
    assert_eq!(resource(&app, "Widget")["health"]["status"], "Progressing");
    // The Gadget's CRD has no status subresource: its controller may never write one, so the
    // rule does not apply and it has no health, as in Argo CD.
    assert!(
        resource(&app, "Gadget")["health"].is_null(),
        "{:#}",
        resource(&app, "Gadget")
    );
    assert_eq!(app["status"]["health"]["status"], "Progressing");
    let widget: Value = serde_json::from_str(&kubectl(
        env,
        &[
            "-n",
            dest.name(),
            "get",
            &format!("widgets.{group}"),
            "w",
            "-o",
            "json",
        ],
    ))
    .expect("widget json");
    assert!(widget.get("status").is_none(), "{widget:#}");

    // Once a controller reports, its conditions decide.
    kubectl(
        env,
        &[
            "-n",
            dest.name(),
            "patch",
            &format!("widgets.{group}"),
            "w",
            "--subresource=status",
            "--type=merge",
            "-p",
            r#"{"status":{"conditions":[{"type":"Ready","status":"True","reason":"Ok","message":"serving"}]}}"#,
        ],
    );
    let app = ctl
        .wait_app(&name, "the Widget reads Healthy", |a| {
            resource(a, "Widget")["health"]["status"] == "Healthy"
        })
        .await;
    assert_eq!(
        resource(&app, "Widget")["health"]["message"],
        "generic: condition Ready=True: serving"
    );
    assert_eq!(app["status"]["health"]["status"], "Healthy");

    for plural in ["widgets", "gadgets"] {
        let _ = env
            .kubectl()
            .args([
                "delete",
                "crd",
                &format!("{plural}.{group}"),
                "--wait=false",
                "--ignore-not-found",
            ])
            .output();
    }
}

#[tokio::test]
async fn a_custom_resource_without_a_status_holds_the_next_wave_until_its_controller_reports() {
    let env = TestEnv::shared();
    let group = format!("nostatusgate.p{}.plumb.test", std::process::id());
    install_kind(env, &group, "Widget", "widgets", true);
    // The default settings: a 2 m grace period for the health shown, which the wave gate does
    // not wait for.
    let ctl = Controlled::start(env, "ctl-nostatus-gate").await;
    let dest = env.namespace("dest-nostatus-gate");
    let repo = GitRepo::new();
    let widget = json!({"apiVersion": format!("{group}/v1"), "kind": "Widget",
        "metadata": {"name": "w", "annotations": {"argocd.argoproj.io/sync-wave": "0"}},
        "spec": {"size": 1}});
    let after = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "after", "annotations": {"argocd.argoproj.io/sync-wave": "1"}},
        "data": {"k": "v"}});
    repo.commit(
        &[
            ("app/widget.yaml", widget.to_string()),
            ("app/after.yaml", after.to_string()),
        ],
        "a custom resource in wave 0, a ConfigMap in wave 1",
    );
    let name = format!("nostatusgate-{}", std::process::id());
    ctl.create_app(json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": name},
        "spec": {"project": "default",
                 "source": {"repoURL": repo.url(), "path": "app"},
                 "destination": {"server": "https://kubernetes.default.svc", "namespace": dest.name()}}
    }))
    .await;
    ctl.wait_app(&name, "compared", |a| {
        !a["status"]["sync"]["status"].is_null()
    })
    .await;

    let who = ctl.request_op(&name, json!({"sync": {}})).await;
    let waiting = format!("waiting for healthy state of {group}/Widget/w");
    ctl.wait_app(&name, "the sync waits for the Widget", |a| {
        a["status"]["operationState"]["message"] == waiting.as_str()
    })
    .await;
    // Held: polls and wave pauses later, still Running and wave 1 not applied.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let app = ctl
        .wait_app(&name, "the operation state", |a| {
            !a["status"]["operationState"].is_null()
        })
        .await;
    let st = &app["status"]["operationState"];
    assert_eq!(st["phase"], "Running", "{st:#}");
    assert_eq!(st["message"], waiting.as_str(), "{st:#}");
    let cm = env
        .kubectl()
        .args(["-n", dest.name(), "get", "configmap", "after"])
        .output()
        .expect("kubectl");
    assert!(!cm.status.success(), "wave 1 was not applied");

    // Its controller reports Ready: the next wave goes and the sync succeeds.
    kubectl(
        env,
        &[
            "-n",
            dest.name(),
            "patch",
            &format!("widgets.{group}"),
            "w",
            "--subresource=status",
            "--type=merge",
            "-p",
            r#"{"status":{"conditions":[{"type":"Ready","status":"True","reason":"Ok","message":"serving"}]}}"#,
        ],
    );
    let app = ctl.wait_op(&name, &who).await;
    let st = &app["status"]["operationState"];
    assert_eq!(st["phase"], "Succeeded", "{st:#}");
    kubectl(env, &["-n", dest.name(), "get", "configmap", "after"]);

    let _ = env
        .kubectl()
        .args([
            "delete",
            "crd",
            &format!("widgets.{group}"),
            "--wait=false",
            "--ignore-not-found",
        ])
        .output();
}
