//! Automation and guard rails end to end: automated sync on new commits, self-heal with the
//! field manager named in an Event, allowEmpty, sync windows, rollback, project rules.

use std::time::{Duration, Instant};

use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use plumb_testenv::TestEnv;
use plumb_testenv::git::GitRepo;
use serde_json::{Value, json};

use crate::support::{Controlled, DEADLINE, resource};

fn config_map(name: &str, value: &str) -> String {
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  value: \"{value}\"\n"
    )
}

fn deployment(name: &str, image: &str) -> String {
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\nspec:\n  replicas: 1\n  selector:\n    matchLabels:\n      app: {name}\n  template:\n    metadata:\n      labels:\n        app: {name}\n    spec:\n      securityContext:\n        runAsNonRoot: true\n      containers:\n      - name: app\n        image: {image}\n"
    )
}

fn unique(prefix: &str) -> String {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    format!(
        "{prefix}-{}-{}",
        std::process::id(),
        N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    )
}

async fn app_spec(ctl: &Controlled, name: &str, repo: &GitRepo, dest: &str, policy: Value) {
    ctl.create_app(json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": name},
        "spec": {"project": "default",
                 "source": {"repoURL": repo.url(), "path": "app"},
                 "destination": {"server": "https://kubernetes.default.svc", "namespace": dest},
                 "syncPolicy": policy}
    }))
    .await;
}

/// Events (events.k8s.io/v1) about an Application: (reason, note).
async fn events(ctl: &Controlled, app: &str) -> Vec<(String, String)> {
    let api: Api<DynamicObject> = Api::namespaced_with(
        ctl.client.clone(),
        ctl.ns.name(),
        &kube::api::ApiResource {
            group: "events.k8s.io".into(),
            version: "v1".into(),
            api_version: "events.k8s.io/v1".into(),
            kind: "Event".into(),
            plural: "events".into(),
        },
    );
    let list = api.list(&Default::default()).await.expect("events");
    let mut out: Vec<(String, String)> = list
        .items
        .into_iter()
        .map(|e| serde_json::to_value(e).expect("json"))
        .filter(|e| e["regarding"]["name"] == app)
        .map(|e| {
            (
                e["reason"].as_str().unwrap_or_default().to_string(),
                e["note"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    out.sort();
    out
}

async fn wait_event(ctl: &Controlled, app: &str, reason: &str) -> String {
    let start = Instant::now();
    loop {
        let evs = events(ctl, app).await;
        if let Some((_, note)) = evs.iter().find(|(r, _)| r == reason) {
            return note.clone();
        }
        assert!(
            start.elapsed() < DEADLINE,
            "no {reason} event for {app}; events: {evs:#?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn wait_note(ctl: &Controlled, app: &str, reason: &str, note: &str) {
    let start = Instant::now();
    loop {
        let evs = events(ctl, app).await;
        if evs.iter().any(|(r, n)| r == reason && n == note) {
            return;
        }
        assert!(
            start.elapsed() < DEADLINE,
            "no {reason} event {note:?} for {app}; events: {evs:#?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn get(
    ctl: &Controlled,
    kind_api: (&str, &str, &str),
    ns: &str,
    name: &str,
) -> Option<Value> {
    let (group, version, plural) = kind_api;
    let api_version = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    let api: Api<DynamicObject> = Api::namespaced_with(
        ctl.client.clone(),
        ns,
        &kube::api::ApiResource {
            group: group.into(),
            version: version.into(),
            api_version,
            kind: String::new(),
            plural: plural.into(),
        },
    );
    api.get_opt(name)
        .await
        .expect("get")
        .map(|o| serde_json::to_value(o).expect("json"))
}

const CM: (&str, &str, &str) = ("", "v1", "configmaps");
const DEPLOY: (&str, &str, &str) = ("apps", "v1", "deployments");

#[tokio::test]
async fn automated_sync_follows_new_commits() {
    let env = TestEnv::shared();
    let ctl = Controlled::start(env, "ctl-auto").await;
    let dest = env.namespace("dest-auto");
    let name = unique("auto");
    let repo = GitRepo::new();
    let first = repo.commit(&[("app/cm.yaml", config_map("settings", "one"))], "one");
    app_spec(&ctl, &name, &repo, dest.name(), json!({"automated": {}})).await;

    let app = ctl
        .wait_app(&name, "auto-synced to the first commit", |a| {
            a["status"]["sync"]["status"] == "Synced"
                && a["status"]["operationState"]["phase"] == "Succeeded"
        })
        .await;
    let st = &app["status"]["operationState"];
    assert_eq!(st["operation"]["initiatedBy"]["automated"], true, "{st:#}");
    assert_eq!(st["operation"]["sync"]["revision"], first.as_str());
    assert_eq!(
        st["operation"]["retry"]["limit"], 5,
        "Argo's default retry for auto-sync"
    );
    assert_eq!(app["status"]["history"][0]["revision"], first.as_str());
    // Each event keeps its own message: the request (the operation's start posts no second
    // one, as in Argo CD), and every transition of sync and health status (several for the same
    // version of the Application).
    for (reason, note) in [
        (
            "OperationStarted",
            format!("Initiated automated sync to '{first}'"),
        ),
        (
            "OperationCompleted",
            format!("Sync operation to {first} succeeded"),
        ),
        (
            "ResourceUpdated",
            "Updated sync status:  -> OutOfSync".into(),
        ),
        (
            "ResourceUpdated",
            "Updated health status:  -> Missing".into(),
        ),
        (
            "ResourceUpdated",
            "Updated sync status: OutOfSync -> Synced".into(),
        ),
        (
            "ResourceUpdated",
            "Updated health status: Missing -> Healthy".into(),
        ),
    ] {
        wait_note(&ctl, &name, reason, &note).await;
    }
    let started: Vec<_> = events(&ctl, &name)
        .await
        .into_iter()
        .filter(|(r, _)| r == "OperationStarted")
        .collect();
    assert_eq!(
        started.len(),
        1,
        "one OperationStarted event for an automated sync: {started:#?}"
    );

    let second = repo.commit(&[("app/cm.yaml", config_map("settings", "two"))], "two");
    ctl.patch_app(
        &name,
        json!({"metadata": {"annotations": {"argocd.argoproj.io/refresh": "normal"}}}),
    )
    .await;
    let app = ctl
        .wait_app(&name, "auto-synced to the second commit", |a| {
            a["status"]["sync"]["status"] == "Synced"
                && a["status"]["operationState"]["syncResult"]["revision"] == second.as_str()
                && a["status"]["operationState"]["phase"] == "Succeeded"
        })
        .await;
    let cm = get(&ctl, CM, dest.name(), "settings")
        .await
        .expect("configmap");
    assert_eq!(cm["data"]["value"], "two");
    let ids: Vec<i64> = app["status"]["history"]
        .as_array()
        .expect("history")
        .iter()
        .map(|h| h["id"].as_i64().unwrap_or(-1))
        .collect();
    assert_eq!(ids, [0, 1]);
    assert_eq!(app["status"]["history"][1]["revision"], second.as_str());
}

#[tokio::test]
async fn self_heal_reverts_drift_and_names_who_caused_it() {
    let env = TestEnv::shared();
    let ctl = Controlled::start(env, "ctl-heal").await;
    let dest = env.namespace("dest-heal");
    let name = unique("heal");
    let repo = GitRepo::new();
    repo.commit(
        &[
            ("app/cm.yaml", config_map("settings", "git")),
            (
                "app/deploy.yaml",
                deployment("payments-api", "registry.example/payments:1.4.0"),
            ),
        ],
        "v1",
    );
    app_spec(
        &ctl,
        &name,
        &repo,
        dest.name(),
        json!({"automated": {"selfHeal": true}}),
    )
    .await;
    ctl.wait_app(&name, "auto-synced", |a| {
        a["status"]["sync"]["status"] == "Synced"
            && a["status"]["operationState"]["phase"] == "Succeeded"
    })
    .await;

    // Tamper as kubectl would: a field changed by another manager, a field removed.
    let cms: Api<DynamicObject> = Api::namespaced_with(
        ctl.client.clone(),
        dest.name(),
        &kube::api::ApiResource::erase::<k8s_openapi::api::core::v1::ConfigMap>(&()),
    );
    cms.patch(
        "settings",
        &PatchParams {
            field_manager: Some("kubectl-edit".into()),
            ..PatchParams::default()
        },
        &Patch::Merge(json!({"data": {"value": "tampered"}})),
    )
    .await
    .expect("tamper configmap");
    let deploys: Api<DynamicObject> = Api::namespaced_with(
        ctl.client.clone(),
        dest.name(),
        &kube::api::ApiResource::erase::<k8s_openapi::api::apps::v1::Deployment>(&()),
    );
    deploys
        .patch(
            "payments-api",
            &PatchParams {
                field_manager: Some("kubectl-patch".into()),
                ..PatchParams::default()
            },
            &Patch::Json::<()>(
                serde_json::from_value(json!([{"op": "remove", "path": "/spec/template/spec/securityContext/runAsNonRoot"}]))
                    .expect("json patch"),
            ),
        )
        .await
        .expect("tamper deployment");
    let tampered = Instant::now();

    // Reverted within seconds, without a new commit.
    let start = Instant::now();
    loop {
        let cm = get(&ctl, CM, dest.name(), "settings").await.expect("cm");
        let d = get(&ctl, DEPLOY, dest.name(), "payments-api")
            .await
            .expect("deploy");
        if cm["data"]["value"] == "git"
            && d["spec"]["template"]["spec"]["securityContext"]["runAsNonRoot"] == true
        {
            break;
        }
        assert!(start.elapsed() < DEADLINE, "not reverted: {cm:#} {d:#}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let took = tampered.elapsed();
    assert!(took < Duration::from_secs(30), "self-heal took {took:?}");

    wait_event(&ctl, &name, "SelfHeal").await;
    // One event per healing sync; the two tampers may be healed together or one after another.
    let start = Instant::now();
    let notes = loop {
        let notes: Vec<String> = events(&ctl, &name)
            .await
            .into_iter()
            .filter(|(r, _)| r == "SelfHeal")
            .map(|(_, n)| n)
            .collect();
        let all = notes.join("\n");
        if all.contains("ConfigMap") && all.contains("Deployment") {
            break all;
        }
        assert!(start.elapsed() < DEADLINE, "{notes:#?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    eprintln!("{notes}");
    assert!(notes.starts_with("Self-healing drift from "), "{notes}");
    assert!(
        notes.contains(&format!(
            "ConfigMap {}/settings (data.value changed by kubectl-edit (Update) at ",
            dest.name()
        )),
        "{notes}"
    );
    // The API server records no manager for a removal (docs/diff.md): the Event says so.
    assert!(
        notes.contains(&format!(
            "apps/Deployment {}/payments-api (spec.template.spec.securityContext.runAsNonRoot removed from the cluster, not recorded by any field manager; parent last written by plumb-controller (Apply) at ",
            dest.name()
        )),
        "{notes}"
    );
    let app = ctl
        .wait_app(&name, "synced after healing", |a| {
            a["status"]["sync"]["status"] == "Synced"
                && a["status"]["operationState"]["phase"] == "Succeeded"
                && a["status"]["operationState"]["operation"]["sync"]["autoHealAttemptsCount"]
                    .as_i64()
                    >= Some(1)
        })
        .await;
    // Only the drifted objects were re-applied.
    let healed: Vec<&str> = app["status"]["operationState"]["operation"]["sync"]["resources"]
        .as_array()
        .expect("selective")
        .iter()
        .map(|r| r["kind"].as_str().unwrap_or_default())
        .collect();
    assert!(
        !healed.is_empty()
            && healed
                .iter()
                .all(|k| ["ConfigMap", "Deployment"].contains(k)),
        "{healed:?}"
    );
}

#[tokio::test]
async fn automated_prune_never_wipes_everything_unless_allow_empty() {
    let env = TestEnv::shared();
    let ctl = Controlled::start(env, "ctl-empty").await;
    let dest = env.namespace("dest-empty");
    let name = unique("empty");
    let repo = GitRepo::new();
    repo.commit(
        &[
            ("app/a.yaml", config_map("a", "1")),
            ("app/b.yaml", config_map("b", "1")),
            ("app/README.md", "kept so the directory stays\n".to_string()),
        ],
        "two objects",
    );
    app_spec(
        &ctl,
        &name,
        &repo,
        dest.name(),
        json!({"automated": {"prune": true}}),
    )
    .await;
    ctl.wait_app(&name, "auto-synced", |a| {
        a["status"]["sync"]["status"] == "Synced"
            && a["status"]["operationState"]["phase"] == "Succeeded"
    })
    .await;

    repo.remove(&["app/a.yaml", "app/b.yaml"], "everything gone");
    ctl.patch_app(
        &name,
        json!({"metadata": {"annotations": {"argocd.argoproj.io/refresh": "normal"}}}),
    )
    .await;
    let app = ctl
        .wait_app(&name, "SyncError about wiping out", |a| {
            a["status"]["conditions"]
                .as_array()
                .is_some_and(|cs| cs.iter().any(|c| c["type"] == "SyncError"))
        })
        .await;
    let cond = app["status"]["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == "SyncError"))
        .expect("condition");
    assert_eq!(
        cond["message"],
        format!(
            "Skipping sync attempt to {}: auto-sync will wipe out all resources",
            repo.head()
        )
    );
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(
        get(&ctl, CM, dest.name(), "a").await.is_some(),
        "nothing pruned"
    );
    assert!(
        get(&ctl, CM, dest.name(), "b").await.is_some(),
        "nothing pruned"
    );

    ctl.patch_app(
        &name,
        json!({"spec": {"syncPolicy": {"automated": {"prune": true, "allowEmpty": true}}}}),
    )
    .await;
    let start = Instant::now();
    while get(&ctl, CM, dest.name(), "a")
        .await
        .is_some_and(|o| o["metadata"]["deletionTimestamp"].is_null())
    {
        assert!(start.elapsed() < DEADLINE, "allowEmpty did not prune");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let app = ctl
        .wait_app(&name, "condition cleared", |a| {
            a["status"]["operationState"]["phase"] == "Succeeded"
                && !a["status"]["conditions"]
                    .as_array()
                    .is_some_and(|cs| cs.iter().any(|c| c["type"] == "SyncError"))
        })
        .await;
    let results = app["status"]["operationState"]["syncResult"]["resources"]
        .as_array()
        .expect("results");
    assert!(
        results.iter().all(|r| r["status"] == "Pruned"),
        "{results:#?}"
    );
}

async fn create_project(ctl: &Controlled, spec: Value) {
    let api: Api<DynamicObject> = Api::namespaced_with(
        ctl.client.clone(),
        ctl.ns.name(),
        &plumb_app::appproject_resource(),
    );
    let name = spec["name"].as_str().expect("name").to_string();
    let obj: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "AppProject",
        "metadata": {"name": name}, "spec": spec["spec"]
    }))
    .expect("project");
    api.create(&PostParams::default(), &obj)
        .await
        .expect("create project");
}

#[tokio::test]
async fn a_deny_window_blocks_automated_and_manual_syncs_unless_manual_sync_is_allowed() {
    let env = TestEnv::shared();
    let ctl = Controlled::start(env, "ctl-windows").await;
    let dest = env.namespace("dest-windows");
    create_project(
        &ctl,
        json!({"name": "frozen", "spec": {
            "sourceRepos": ["*"], "destinations": [{"server": "*", "namespace": "*"}],
            "syncWindows": [{"kind": "deny", "schedule": "* * * * *", "duration": "1h", "applications": ["*"]}]}}),
    )
    .await;
    let repo = GitRepo::new();
    repo.commit(&[("app/cm.yaml", config_map("settings", "one"))], "one");
    let auto = unique("frozen-auto");
    let manual = unique("frozen-manual");
    for (name, policy) in [(&auto, json!({"automated": {}})), (&manual, json!({}))] {
        ctl.create_app(json!({
            "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
            "metadata": {"name": name},
            "spec": {"project": "frozen",
                     "source": {"repoURL": repo.url(), "path": "app"},
                     "destination": {"server": "https://kubernetes.default.svc", "namespace": dest.name()},
                     "syncPolicy": policy}
        }))
        .await;
    }
    let note = wait_event(&ctl, &auto, "AutoSyncSkipped").await;
    assert!(note.contains("blocked by sync window"), "{note}");
    let app = ctl
        .wait_app(&auto, "compared", |a| {
            a["status"]["sync"]["status"] == "OutOfSync"
        })
        .await;
    assert!(
        app["status"]["operationState"].is_null(),
        "no automated sync ran"
    );

    let app = ctl.sync(&manual, json!({})).await;
    let st = &app["status"]["operationState"];
    assert_eq!(st["phase"], "Failed");
    let msg = st["message"].as_str().unwrap_or_default();
    assert!(
        msg.starts_with(
            "Sync operation blocked by sync window: Blocked by sync window deny:* * * * *:1h"
        ),
        "{msg}"
    );
    assert!(get(&ctl, CM, dest.name(), "settings").await.is_none());

    // manualSync lets the manual sync through; automated stays blocked.
    let api: Api<DynamicObject> = Api::namespaced_with(
        ctl.client.clone(),
        ctl.ns.name(),
        &plumb_app::appproject_resource(),
    );
    api.patch(
        "frozen",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"syncWindows": [{"kind": "deny", "schedule": "* * * * *", "duration": "1h", "applications": ["*"], "manualSync": true}]}})),
    )
    .await
    .expect("patch project");
    // The project watcher re-queues its Applications; the next sync sees the new window.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let app = ctl.sync(&manual, json!({})).await;
    assert_eq!(
        app["status"]["operationState"]["phase"], "Succeeded",
        "{:#}",
        app["status"]["operationState"]
    );
    assert!(get(&ctl, CM, dest.name(), "settings").await.is_some());
    let app = ctl
        .wait_app(&auto, "still compared", |a| {
            a["status"]["sync"]["status"].is_string()
        })
        .await;
    assert!(
        app["status"]["operationState"].is_null(),
        "automated stays blocked"
    );
}

#[tokio::test]
async fn rollback_to_a_previous_history_id() {
    let env = TestEnv::shared();
    let ctl = Controlled::start(env, "ctl-rollback").await;
    let dest = env.namespace("dest-rollback");
    let name = unique("rollback");
    let repo = GitRepo::new();
    let first = repo.commit(&[("app/cm.yaml", config_map("settings", "one"))], "one");
    app_spec(&ctl, &name, &repo, dest.name(), json!({})).await;
    let app = ctl.sync(&name, json!({})).await;
    assert_eq!(app["status"]["operationState"]["phase"], "Succeeded");
    let second = repo.commit(&[("app/cm.yaml", config_map("settings", "two"))], "two");
    let app = ctl.sync(&name, json!({"revision": second})).await;
    assert_eq!(app["status"]["operationState"]["phase"], "Succeeded");
    let history = app["status"]["history"]
        .as_array()
        .expect("history")
        .clone();
    assert_eq!(history.len(), 2);
    assert_eq!(history[0]["revision"], first.as_str());

    // What `plumb app rollback NAME 0` writes.
    let app = ctl
        .sync(
            &name,
            json!({"revision": history[0]["revision"], "source": history[0]["source"], "syncStrategy": {"apply": {}}}),
        )
        .await;
    let st = &app["status"]["operationState"];
    assert_eq!(st["phase"], "Succeeded", "{st:#}");
    assert_eq!(st["syncResult"]["revision"], first.as_str());
    let cm = get(&ctl, CM, dest.name(), "settings").await.expect("cm");
    assert_eq!(cm["data"]["value"], "one");
    let history = app["status"]["history"].as_array().expect("history");
    assert_eq!(history.len(), 3);
    assert_eq!(history[2]["id"], 2);
    assert_eq!(history[2]["revision"], first.as_str());
    // The target is still the branch head: after the rollback the Application is OutOfSync.
    let app = ctl
        .wait_app(&name, "OutOfSync against HEAD", |a| {
            a["status"]["sync"]["status"] == "OutOfSync"
        })
        .await;
    assert_eq!(app["status"]["sync"]["revision"], second.as_str());
}

#[tokio::test]
async fn rollback_of_a_multi_source_application_renders_the_recorded_sources() {
    let env = TestEnv::shared();
    let ctl = Controlled::start(env, "ctl-rollback-multi").await;
    let dest = env.namespace("dest-rollback-multi");
    let name = unique("rollback-multi");
    let app_repo = GitRepo::new();
    let first = app_repo.commit(&[("app/cm.yaml", config_map("settings", "one"))], "one");
    let extra = GitRepo::new();
    extra.commit(&[("app/cm.yaml", config_map("extra", "one"))], "extra");
    ctl.create_app(json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": name},
        "spec": {"project": "default",
                 "sources": [{"repoURL": app_repo.url(), "path": "app", "targetRevision": "HEAD"},
                             {"repoURL": extra.url(), "path": "app", "targetRevision": "HEAD"}],
                 "destination": {"server": "https://kubernetes.default.svc", "namespace": dest.name()}}
    }))
    .await;
    let app = ctl.sync(&name, json!({})).await;
    assert_eq!(app["status"]["operationState"]["phase"], "Succeeded");
    app_repo.commit(&[("app/cm.yaml", config_map("settings", "two"))], "two");
    let app = ctl.sync(&name, json!({})).await;
    assert_eq!(app["status"]["operationState"]["phase"], "Succeeded");
    let cm = get(&ctl, CM, dest.name(), "settings").await.expect("cm");
    assert_eq!(cm["data"]["value"], "two");
    let entry = app["status"]["history"][0].clone();
    assert_eq!(entry["revisions"][0], first.as_str(), "{entry:#}");

    // What `plumb app rollback NAME 0` writes for a multi-source entry.
    let app = ctl
        .sync(
            &name,
            json!({"sources": entry["sources"], "revisions": entry["revisions"], "syncStrategy": {"apply": {}}}),
        )
        .await;
    let st = &app["status"]["operationState"];
    assert_eq!(st["phase"], "Succeeded", "{st:#}");
    assert_eq!(st["syncResult"]["revisions"][0], first.as_str());
    let cm = get(&ctl, CM, dest.name(), "settings").await.expect("cm");
    assert_eq!(cm["data"]["value"], "one", "the recorded commit was synced");
}

#[tokio::test]
async fn a_project_forbids_a_namespace_and_a_cluster_scoped_kind() {
    let env = TestEnv::shared();
    let ctl = Controlled::start(env, "ctl-guard").await;
    let allowed = env.namespace("team-guard");
    let other = env.namespace("other-guard");
    create_project(
        &ctl,
        json!({"name": "teams", "spec": {
            "sourceRepos": ["*"],
            "destinations": [{"server": "https://kubernetes.default.svc", "namespace": "team-*"}]}}),
    )
    .await;
    let repo = GitRepo::new();
    let role = unique("reader");
    repo.commit(
        &[
            ("app/cm.yaml", config_map("settings", "one")),
            (
                "app/role.yaml",
                format!("apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: {role}\nrules:\n- apiGroups: [\"\"]\n  resources: [\"pods\"]\n  verbs: [\"get\"]\n"),
            ),
        ],
        "cm and cluster role",
    );
    let outside = unique("outside");
    let inside = unique("inside");
    for (name, ns) in [(&outside, other.name()), (&inside, allowed.name())] {
        ctl.create_app(json!({
            "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
            "metadata": {"name": name},
            "spec": {"project": "teams",
                     "source": {"repoURL": repo.url(), "path": "app"},
                     "destination": {"server": "https://kubernetes.default.svc", "namespace": ns}}
        }))
        .await;
    }

    // A destination outside the project: InvalidSpecError, and a sync fails instead of running.
    let app = ctl
        .wait_app(&outside, "InvalidSpecError", |a| {
            a["status"]["conditions"]
                .as_array()
                .is_some_and(|cs| cs.iter().any(|c| c["type"] == "InvalidSpecError"))
        })
        .await;
    let cond = &app["status"]["conditions"][0];
    assert_eq!(
        cond["message"],
        format!(
            "application destination server 'https://kubernetes.default.svc' and namespace '{}' do not match any of the allowed destinations in project 'teams' (destinations)",
            other.name()
        )
    );
    assert_eq!(app["status"]["sync"]["status"], "Unknown");
    let app = ctl.sync(&outside, json!({})).await;
    assert_eq!(app["status"]["operationState"]["phase"], "Error");
    assert!(get(&ctl, CM, other.name(), "settings").await.is_none());

    // Inside: the ClusterRole is not permitted (no clusterResourceWhitelist): Unknown with the
    // rule, and a sync fails before anything is applied.
    let app = ctl
        .wait_app(&inside, "compared", |a| {
            resource(a, "ClusterRole")["status"] == "Unknown"
        })
        .await;
    let cr = resource(&app, "ClusterRole");
    assert_eq!(
        cr["health"]["message"],
        "resource rbac.authorization.k8s.io:ClusterRole is not permitted in project teams (clusterResourceWhitelist)"
    );
    assert!(
        app["status"]["conditions"]
            .as_array()
            .is_some_and(|cs| cs.iter().any(|c| c["type"] == "InvalidSpecError"
                && c["message"]
                    .as_str()
                    .unwrap_or_default()
                    .contains("(clusterResourceWhitelist)"))),
        "{:#}",
        app["status"]["conditions"]
    );
    let app = ctl.sync(&inside, json!({})).await;
    let st = &app["status"]["operationState"];
    assert_eq!(st["phase"], "Failed", "{st:#}");
    assert_eq!(
        st["message"],
        "one or more synchronization tasks are not valid: resource rbac.authorization.k8s.io:ClusterRole is not permitted in project teams (clusterResourceWhitelist)"
    );
    assert!(
        get(&ctl, CM, allowed.name(), "settings").await.is_none(),
        "nothing applied"
    );
    let roles: Api<DynamicObject> = Api::all_with(
        ctl.client.clone(),
        &kube::api::ApiResource::erase::<k8s_openapi::api::rbac::v1::ClusterRole>(&()),
    );
    assert!(roles.get_opt(&role).await.expect("get").is_none());
}
