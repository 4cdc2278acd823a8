use plumb_testenv::TestEnv;
use plumb_testenv::git::GitRepo;
use serde_json::json;

use crate::support::{Controlled, resource};

fn manifests(image: &str) -> Vec<(&'static str, String)> {
    vec![
        ("app/service.yaml", "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  selector:\n    app: web\n  ports:\n  - port: 80\n    targetPort: 8080\n".to_string()),
        ("app/configmap.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata:\n  mode: fast\n".to_string()),
        ("app/deployment.yaml", format!("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 2\n  selector:\n    matchLabels:\n      app: web\n  template:\n    metadata:\n      labels:\n        app: web\n    spec:\n      containers:\n      - name: web\n        image: {image}\n        securityContext:\n          runAsNonRoot: true\n")),
    ]
}

#[tokio::test]
async fn application_is_compared_synced_pruned_and_reports_comparison_errors() {
    let env = TestEnv::shared();
    let ctl = Controlled::start(env, "ctl-reconcile").await;
    let dest = env.namespace("dest-reconcile");
    // Unique per process: an earlier run's objects, still being garbage-collected, carry the
    // tracking id of its Application and would otherwise be taken for this one's.
    let app_name = format!("web-{}", std::process::id());
    let repo = GitRepo::new();
    repo.commit(&manifests("registry.example/web:v1"), "v1");
    repo.tag("v1");
    ctl.create_app(json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": app_name},
        "spec": {"project": "default",
                 "source": {"repoURL": repo.url(), "path": "app", "targetRevision": "v1"},
                 "destination": {"server": "https://kubernetes.default.svc", "namespace": dest.name()}}
    }))
    .await;

    // Nothing deployed yet: OutOfSync, every resource Missing, app health Missing.
    let app = ctl
        .wait_app(&app_name, "OutOfSync", |a| {
            a["status"]["sync"]["status"] == "OutOfSync"
        })
        .await;
    assert_eq!(app["status"]["sync"]["revision"], repo.head());
    assert_eq!(
        app["status"]["health"]["status"], "Missing",
        "{:#}",
        app["status"]
    );
    assert_eq!(resource(&app, "Deployment")["health"]["status"], "Missing");
    assert_eq!(app["status"]["sourceType"], "Directory");

    // Sync: everything applied with the tracking annotation, Synced, and eventually Healthy.
    let app = ctl.sync(&app_name, json!({"prune": false})).await;
    let st = &app["status"]["operationState"];
    assert_eq!(st["phase"], "Succeeded", "{st:#}");
    assert_eq!(st["message"], "successfully synced (all tasks run)");
    let results = st["syncResult"]["resources"].as_array().expect("results");
    let messages: Vec<&str> = results
        .iter()
        .map(|r| r["message"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(
        messages,
        [
            "configmap/web created",
            "service/web created",
            "deployment.apps/web created"
        ]
    );
    assert_eq!(app["status"]["history"][0]["id"], 0);
    assert_eq!(app["status"]["history"][0]["revision"], repo.head());
    let app = ctl
        .wait_app(&app_name, "Synced and Healthy", |a| {
            a["status"]["sync"]["status"] == "Synced"
                && a["status"]["health"]["status"] == "Healthy"
        })
        .await;
    assert!(
        resource(&app, "ConfigMap")["health"].is_null(),
        "a ConfigMap has no health"
    );
    assert_eq!(resource(&app, "Deployment")["status"], "Synced");
    assert_eq!(
        app["status"]["summary"]["images"],
        json!(["registry.example/web:v1"])
    );
    let out = env
        .kubectl()
        .args([
            "-n",
            dest.name(),
            "get",
            "deployment",
            "web",
            "-o",
            "jsonpath={.metadata.annotations.argocd\\.argoproj\\.io/tracking-id}",
        ])
        .output()
        .expect("kubectl");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("{app_name}:apps/Deployment:{}/web", dest.name())
    );

    // Tamper with a tracked object: the live cache notices and the status turns OutOfSync.
    let out = env
        .kubectl()
        .args(["-n", dest.name(), "patch", "deployment", "web", "--type=json", "-p",
               r#"[{"op":"remove","path":"/spec/template/spec/containers/0/securityContext/runAsNonRoot"}]"#])
        .output()
        .expect("kubectl");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let app = ctl
        .wait_app(&app_name, "OutOfSync after tamper", |a| {
            a["status"]["sync"]["status"] == "OutOfSync"
        })
        .await;
    assert_eq!(resource(&app, "Deployment")["status"], "OutOfSync");
    assert_eq!(resource(&app, "Service")["status"], "Synced");

    // Git drops the ConfigMap: it requires pruning, and is only deleted by a sync with prune.
    repo.remove(&["app/configmap.yaml"], "drop configmap");
    repo.tag("v2");
    ctl.patch_app(
        &app_name,
        json!({"spec": {"source": {"targetRevision": "v2"}}}),
    )
    .await;
    let app = ctl
        .wait_app(&app_name, "ConfigMap requires pruning", |a| {
            resource(a, "ConfigMap")["requiresPruning"] == true
        })
        .await;
    assert_eq!(resource(&app, "ConfigMap")["status"], "OutOfSync");
    let app = ctl.sync(&app_name, json!({})).await;
    let results = app["status"]["operationState"]["syncResult"]["resources"]
        .as_array()
        .expect("results")
        .clone();
    let cm = results
        .iter()
        .find(|r| r["kind"] == "ConfigMap")
        .expect("configmap result");
    assert_eq!(cm["status"], "PruneSkipped");
    assert_eq!(cm["message"], "ignored (requires pruning)");
    let dep = results
        .iter()
        .find(|r| r["kind"] == "Deployment")
        .expect("deployment result");
    assert_eq!(
        dep["message"], "deployment.apps/web configured",
        "the tamper is reverted"
    );
    let app = ctl.sync(&app_name, json!({"prune": true})).await;
    let results = app["status"]["operationState"]["syncResult"]["resources"]
        .as_array()
        .expect("results")
        .clone();
    assert!(
        results
            .iter()
            .any(|r| r["kind"] == "ConfigMap" && r["status"] == "Pruned"),
        "{results:#?}"
    );
    ctl.wait_app(&app_name, "Synced without the ConfigMap", |a| {
        a["status"]["sync"]["status"] == "Synced" && resource(a, "ConfigMap").is_null()
    })
    .await;
    assert_eq!(app["status"]["history"].as_array().map(Vec::len), Some(3));

    // A revision that does not exist: sync Unknown with a ComparisonError, nothing pruned.
    ctl.patch_app(
        &app_name,
        json!({"spec": {"source": {"targetRevision": "no-such-tag"}}}),
    )
    .await;
    let app = ctl
        .wait_app(&app_name, "Unknown", |a| {
            a["status"]["sync"]["status"] == "Unknown"
        })
        .await;
    let cond = &app["status"]["conditions"][0];
    assert_eq!(cond["type"], "ComparisonError");
    assert!(
        cond["message"]
            .as_str()
            .unwrap_or_default()
            .contains("no-such-tag"),
        "{cond}"
    );
    // Health is not claimed either: Unknown, with the reason (Argo CD writes Healthy here).
    let health = &app["status"]["health"];
    assert_eq!(health["status"], "Unknown", "{health}");
    assert_eq!(health["message"], cond["message"], "{health}");
    let out = env
        .kubectl()
        .args(["-n", dest.name(), "get", "deployment,service", "-o", "name"])
        .output()
        .expect("kubectl");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).lines().count(),
        2,
        "nothing pruned after a failed comparison"
    );
}

#[tokio::test]
async fn new_commits_are_picked_up_by_the_poll() {
    let env = TestEnv::shared();
    crate::support::install_crds(env);
    let ctl_ns = env.namespace("ctl-poll");
    let dest = env.namespace("dest-poll");
    // Poll every 2 s without jitter. The settings exist before the controller starts, so no
    // reload re-queues the Application later: only the poll can notice the new commit.
    let client = env.client().await;
    let cms: kube::Api<k8s_openapi::api::core::v1::ConfigMap> =
        kube::Api::namespaced(client, ctl_ns.name());
    let cm = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "argocd-cm"},
        "data": {"timeout.reconciliation": "2s", "timeout.reconciliation.jitter": "0s"}
    }))
    .expect("configmap");
    cms.create(&Default::default(), &cm)
        .await
        .expect("create settings");
    let ctl = Controlled::start_in(env, ctl_ns).await;
    let repo = GitRepo::new();
    repo.commit(&manifests("registry.example/web:v1"), "v1");
    let first = repo.head();
    let name = format!("poll-{}", std::process::id());
    ctl.create_dir_app(&name, &repo, dest.name()).await;
    ctl.wait_app(&name, "first commit compared", |a| {
        a["status"]["sync"]["revision"] == first.as_str()
    })
    .await;
    // Nothing tells the controller about a new commit but its poll.
    repo.commit(&manifests("registry.example/web:v2"), "v2");
    let second = repo.head();
    let app = ctl
        .wait_app(&name, "new commit compared", |a| {
            a["status"]["sync"]["revision"] == second.as_str()
        })
        .await;
    assert_eq!(
        app["status"]["summary"],
        json!({}),
        "nothing deployed, no images"
    );
}

#[tokio::test]
async fn orphaned_resources_are_reported_when_the_project_asks() {
    let env = TestEnv::shared();
    let ctl = Controlled::start(env, "ctl-orphans").await;
    let dest = env.namespace("dest-orphans");
    let projects: kube::Api<kube::api::DynamicObject> = kube::Api::namespaced_with(
        ctl.client.clone(),
        ctl.ns.name(),
        &plumb_app::appproject_resource(),
    );
    let patch = json!({"spec": {"orphanedResources": {"warn": true, "ignore": [{"kind": "Secret", "name": "ignored-*"}]}}});
    projects
        .patch(
            "default",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(&patch),
        )
        .await
        .expect("patch project");
    let repo = GitRepo::new();
    repo.commit(&manifests("registry.example/web:v1")[..1], "service only");
    // Not in Git, not owned: an orphan. The ignored Secret and Kubernetes' own objects are not.
    for args in [
        vec!["create", "configmap", "left-behind", "--from-literal=a=b"],
        vec![
            "create",
            "secret",
            "generic",
            "ignored-token",
            "--from-literal=t=x",
        ],
    ] {
        let out = env
            .kubectl()
            .args(["-n", dest.name()])
            .args(&args)
            .output()
            .expect("kubectl");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let name = format!("orphans-{}", std::process::id());
    ctl.create_dir_app(&name, &repo, dest.name()).await;
    let app = ctl
        .wait_app(&name, "orphan warning", |a| {
            a["status"]["conditions"]
                .as_array()
                .is_some_and(|c| c.iter().any(|c| c["type"] == "OrphanedResourceWarning"))
        })
        .await;
    let cond = app["status"]["conditions"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["type"] == "OrphanedResourceWarning"))
        .expect("condition")
        .clone();
    assert_eq!(cond["message"], "Application has 1 orphaned resources");
}

#[tokio::test]
async fn settings_changes_are_reloaded_without_a_restart() {
    let env = TestEnv::shared();
    let ctl = Controlled::start(env, "ctl-reload").await;
    let dest = env.namespace("dest-reload");
    let repo = GitRepo::new();
    repo.commit(
        &manifests("registry.example/web:v1")[1..2],
        "configmap only",
    );
    let name = format!("reload-{}", std::process::id());
    ctl.create_dir_app(&name, &repo, dest.name()).await;
    ctl.sync(&name, json!({})).await;
    let app = ctl
        .wait_app(&name, "synced", |a| {
            a["status"]["sync"]["status"] == "Synced"
        })
        .await;
    assert!(
        resource(&app, "ConfigMap")["health"].is_null(),
        "no health for a ConfigMap by default"
    );

    // A Lua health script for ConfigMaps arrives in the settings: it applies at once.
    let cms: kube::Api<k8s_openapi::api::core::v1::ConfigMap> =
        kube::Api::namespaced(ctl.client.clone(), ctl.ns.name());
    let script = "hs = {}\nhs.status = \"Degraded\"\nhs.message = \"judged by the settings script\"\nreturn hs\n";
    let cm = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "argocd-cm"},
        "data": {"resource.customizations.health.ConfigMap": script}
    }))
    .expect("configmap");
    cms.create(&Default::default(), &cm)
        .await
        .expect("create settings");
    let app = ctl
        .wait_app(&name, "health from the new settings", |a| {
            resource(a, "ConfigMap")["health"]["status"] == "Degraded"
        })
        .await;
    assert_eq!(
        resource(&app, "ConfigMap")["health"]["message"],
        "judged by the settings script"
    );
    assert_eq!(app["status"]["health"]["status"], "Degraded");
}

#[tokio::test]
async fn a_change_that_changes_no_status_writes_nothing() {
    let env = TestEnv::shared();
    let ctl = Controlled::start(env, "ctl-nowrite").await;
    let dest = env.namespace("dest-nowrite");
    let repo = GitRepo::new();
    repo.commit(
        &manifests("registry.example/web:v1")[1..2],
        "configmap only",
    );
    let name = format!("nowrite-{}", std::process::id());
    ctl.create_dir_app(&name, &repo, dest.name()).await;
    ctl.sync(&name, json!({})).await;
    let before = ctl
        .wait_app(&name, "synced", |a| {
            a["status"]["sync"]["status"] == "Synced"
        })
        .await;
    // An annotation Git does not declare is not drift (Plumb does not own it), yet the change of a
    // tracked object makes the controller compare again. The result is the same: no write.
    let out = env
        .kubectl()
        .args([
            "-n",
            dest.name(),
            "annotate",
            "configmap",
            "web",
            "team=payments",
        ])
        .output()
        .expect("kubectl");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A negative check needs a bounded wait: the live cache reacts within milliseconds.
    tokio::time::sleep(std::time::Duration::from_secs(3)).await;
    let after = ctl.apps().get(&name).await.expect("get");
    assert_eq!(
        after.metadata.resource_version,
        before["metadata"]["resourceVersion"]
            .as_str()
            .map(str::to_string)
    );
    assert_eq!(
        serde_json::to_value(&after).expect("json")["status"]["sync"]["status"],
        "Synced"
    );
}

/// Argo CD writes a cluster-scoped object's tracking id with its Application's destination
/// namespace (`app:rbac.authorization.k8s.io/ClusterRole:<dest>/name`). An object Argo CD synced
/// reads Synced to Plumb as it is, and one Plumb creates carries the same id Argo CD would write.
#[tokio::test]
async fn cluster_scoped_objects_carry_the_destination_namespace_as_argo_cd_writes_it() {
    let env = TestEnv::shared();
    let ctl = Controlled::start(env, "ctl-cluster-scoped").await;
    let dest = env.namespace("dest-cluster-scoped");
    let app_name = format!("cs-{}", std::process::id());
    let (adopted, created) = (format!("{app_name}-adopted"), format!("{app_name}-created"));
    let role = |name: &str| {
        format!(
            "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: {name}\nrules:\n- apiGroups: [\"\"]\n  resources: [\"configmaps\"]\n  verbs: [\"get\"]\n"
        )
    };
    let id = |name: &str| {
        format!(
            "{app_name}:rbac.authorization.k8s.io/ClusterRole:{}/{name}",
            dest.name()
        )
    };
    // As Argo CD v3.6.1 leaves it: its tracking id, applied client-side (kubectl's
    // last-applied-configuration, Argo's default apply), by a field manager that is not Plumb.
    plumb_testenv::process::kubectl_apply(
        env,
        &json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                "metadata": {"name": adopted,
                             "annotations": {"argocd.argoproj.io/tracking-id": id(&adopted)}},
                "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]}),
    );
    let repo = GitRepo::new();
    repo.commit(
        &[
            ("app/adopted.yaml", role(&adopted)),
            ("app/created.yaml", role(&created)),
        ],
        "both",
    );
    ctl.create_app(json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": app_name},
        "spec": {"project": "default",
                 "source": {"repoURL": repo.url(), "path": "app", "targetRevision": "HEAD"},
                 "destination": {"server": "https://kubernetes.default.svc", "namespace": dest.name()}}
    }))
    .await;
    let app = ctl
        .wait_app(&app_name, "compared", |a| {
            a["status"]["sync"]["status"] == "OutOfSync"
        })
        .await;
    let status = |name: &str| {
        app["status"]["resources"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|r| r["name"] == name)
            .map(|r| r["status"].clone())
    };
    // Argo CD's object is Plumb's as it is; only the one nobody created yet is out of sync.
    assert_eq!(
        status(&adopted),
        Some(json!("Synced")),
        "{:#}",
        app["status"]
    );
    assert_eq!(
        status(&created),
        Some(json!("OutOfSync")),
        "{:#}",
        app["status"]
    );
    let app = ctl.sync(&app_name, json!({"prune": false})).await;
    assert_eq!(app["status"]["operationState"]["phase"], "Succeeded");
    let annotation = |name: &str| {
        let out = env
            .kubectl()
            .args([
                "get",
                "clusterrole",
                name,
                "-o",
                "jsonpath={.metadata.annotations.argocd\\.argoproj\\.io/tracking-id}",
            ])
            .output()
            .expect("kubectl");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert_eq!(annotation(&created), id(&created));
    assert_eq!(annotation(&adopted), id(&adopted));
    for name in [&adopted, &created] {
        let _ = env
            .kubectl()
            .args(["delete", "clusterrole", name, "--wait=false"])
            .output();
    }
}
