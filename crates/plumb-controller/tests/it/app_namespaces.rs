//! Applications in any namespace: a controller permitted to reconcile a tenant namespace
//! (`--application-namespaces`, or `application.namespaces` of `argocd-cmd-params-cm`) syncs an
//! Application living there when its project's `sourceNamespaces` lists the namespace, writes
//! its status and events there, tracks its objects as `<namespace>_<name>`, refuses one whose
//! project does not list the namespace, and never touches one in a namespace it is not permitted.

use std::time::{Duration, Instant};

use kube::api::{Api, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use plumb_testenv::TestEnv;
use plumb_testenv::git::GitRepo;
use serde_json::{Value, json};

use crate::support::{Controlled, DEADLINE};

const TRACKING_ID: &str = "argocd.argoproj.io/tracking-id";

fn config_map(name: &str) -> String {
    format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  value: one\n")
}

fn repo_with(cm: &str) -> GitRepo {
    let repo = GitRepo::new();
    repo.commit(&[("app/cm.yaml", config_map(cm))], "one object");
    repo
}

async fn create_project(ctl: &Controlled, name: &str, spec: Value) {
    let api: Api<DynamicObject> = Api::namespaced_with(
        ctl.client.clone(),
        ctl.ns.name(),
        &plumb_app::appproject_resource(),
    );
    let obj: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "AppProject",
        "metadata": {"name": name}, "spec": spec
    }))
    .expect("project");
    api.create(&PostParams::default(), &obj)
        .await
        .expect("create project");
}

fn apps_in(ctl: &Controlled, ns: &str) -> Api<DynamicObject> {
    Api::namespaced_with(ctl.client.clone(), ns, &plumb_app::application_resource())
}

/// Creates an Application of `repo`'s `app` directory in namespace `ns`.
async fn create_app_in(
    ctl: &Controlled,
    ns: &str,
    name: &str,
    project: &str,
    repo: &GitRepo,
    dest: &str,
    extra: Value,
) {
    let mut obj = json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"project": project, "source": {"repoURL": repo.url(), "path": "app"},
                 "destination": {"server": "https://kubernetes.default.svc", "namespace": dest}}
    });
    if let (Some(o), Some(e)) = (obj.as_object_mut(), extra.as_object()) {
        for (k, v) in e {
            o.insert(k.clone(), v.clone());
        }
    }
    let obj: DynamicObject = serde_json::from_value(obj).expect("application");
    apps_in(ctl, ns)
        .create(&PostParams::default(), &obj)
        .await
        .expect("create application");
}

async fn wait_in(
    ctl: &Controlled,
    ns: &str,
    name: &str,
    what: &str,
    cond: impl Fn(&Value) -> bool,
) -> Value {
    let api = apps_in(ctl, ns);
    let start = Instant::now();
    let mut last = Value::Null;
    while start.elapsed() < DEADLINE {
        if let Ok(obj) = api.get(name).await {
            last = serde_json::to_value(&obj).expect("json");
            if cond(&last) {
                return last;
            }
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    panic!(
        "Application {ns}/{name}: {what} not reached within {DEADLINE:?}; last seen:\n{}",
        serde_json::to_string_pretty(&last["status"]).unwrap_or_default()
    );
}

/// Requests a sync of `ns/name` and waits for its end; returns the Application.
async fn sync_in(ctl: &Controlled, ns: &str, name: &str, sync: Value) -> Value {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let who = format!(
        "ns-test-{}",
        N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    );
    let patch = json!({"operation": {"sync": sync, "initiatedBy": {"username": who}}});
    apps_in(ctl, ns)
        .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("request the sync");
    wait_in(ctl, ns, name, "operation finished", |a| {
        let st = &a["status"]["operationState"];
        a["operation"].is_null()
            && st["operation"]["initiatedBy"]["username"] == who
            && matches!(st["phase"].as_str(), Some("Succeeded" | "Failed" | "Error"))
    })
    .await
}

async fn config_map_in(ctl: &Controlled, ns: &str, name: &str) -> Option<Value> {
    let api: Api<k8s_openapi::api::core::v1::ConfigMap> = Api::namespaced(ctl.client.clone(), ns);
    api.get_opt(name)
        .await
        .expect("get ConfigMap")
        .map(|o| serde_json::to_value(o).expect("json"))
}

fn tracking_id(obj: &Value) -> String {
    obj["metadata"]["annotations"][TRACKING_ID]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// A controller over its own control namespace that may also reconcile `tenants`.
async fn controller_for(env: &'static TestEnv, prefix: &str, tenants: &[&str]) -> Controlled {
    let tenants: Vec<String> = tenants.iter().map(|s| s.to_string()).collect();
    Controlled::start_with(env, prefix, move |c| {
        c.application_namespaces = Some(tenants);
    })
    .await
}

#[tokio::test]
async fn an_application_in_a_permitted_namespace_syncs_with_status_and_events_in_its_namespace() {
    let env = TestEnv::shared();
    let tenant = env.namespace("tenant-ok");
    let dest = env.namespace("dest-tenant-ok");
    let ctl = controller_for(env, "ctl-anyns", &[tenant.name()]).await;
    create_project(
        &ctl,
        "team",
        json!({"sourceRepos": ["*"], "destinations": [{"server": "*", "namespace": "*"}],
               "sourceNamespaces": [tenant.name()]}),
    )
    .await;
    let repo = repo_with("tenant-settings");
    create_app_in(
        &ctl,
        tenant.name(),
        "web",
        "team",
        &repo,
        dest.name(),
        json!({}),
    )
    .await;
    wait_in(&ctl, tenant.name(), "web", "compared", |a| {
        a["status"]["sync"]["status"] == "OutOfSync"
    })
    .await;
    let app = sync_in(&ctl, tenant.name(), "web", json!({})).await;
    assert_eq!(
        app["status"]["operationState"]["phase"], "Succeeded",
        "{:#}",
        app["status"]
    );
    let app = wait_in(&ctl, tenant.name(), "web", "Synced and Healthy", |a| {
        a["status"]["sync"]["status"] == "Synced" && a["status"]["health"]["status"] == "Healthy"
    })
    .await;
    assert!(app["status"]["conditions"].is_null(), "{:#}", app["status"]);
    let live = config_map_in(&ctl, dest.name(), "tenant-settings")
        .await
        .expect("the ConfigMap was applied");
    assert_eq!(
        tracking_id(&live),
        format!(
            "{}_web:/ConfigMap:{}/tenant-settings",
            tenant.name(),
            dest.name()
        )
    );
    // Events are published next to the Application, in the tenant namespace.
    let events: Api<k8s_openapi::api::events::v1::Event> =
        Api::namespaced(ctl.client.clone(), tenant.name());
    let start = Instant::now();
    loop {
        let list = events.list(&ListParams::default()).await.expect("events");
        let started = list.items.iter().any(|e| {
            e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some("web")
                && e.reason.as_deref() == Some("OperationStarted")
                // Argo CD's API server's words for a requested sync.
                && e.note.as_deref().is_some_and(|n| n.starts_with("initiated sync to "))
        });
        if started {
            break;
        }
        assert!(
            start.elapsed() < DEADLINE,
            "no OperationStarted event \"initiated sync to ...\" in {}",
            tenant.name()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test]
async fn the_same_name_in_two_namespaces_tracks_apart_and_neither_prunes_the_other() {
    let env = TestEnv::shared();
    let tenant = env.namespace("tenant-twin");
    let dest = env.namespace("dest-twin");
    let ctl = controller_for(env, "ctl-twin", &[tenant.name()]).await;
    create_project(
        &ctl,
        "team",
        json!({"sourceRepos": ["*"], "destinations": [{"server": "*", "namespace": "*"}],
               "sourceNamespaces": [tenant.name()]}),
    )
    .await;
    let control_repo = repo_with("from-control");
    let tenant_repo = repo_with("from-tenant");
    // Both named `web`, both deploying into the same namespace.
    create_app_in(
        &ctl,
        ctl.ns.name(),
        "web",
        "default",
        &control_repo,
        dest.name(),
        json!({}),
    )
    .await;
    create_app_in(
        &ctl,
        tenant.name(),
        "web",
        "team",
        &tenant_repo,
        dest.name(),
        json!({}),
    )
    .await;
    for ns in [ctl.ns.name(), tenant.name()] {
        let app = sync_in(&ctl, ns, "web", json!({"prune": true})).await;
        assert_eq!(
            app["status"]["operationState"]["phase"], "Succeeded",
            "{ns}: {:#}",
            app["status"]
        );
    }
    let a = config_map_in(&ctl, dest.name(), "from-control")
        .await
        .expect("the control namespace's object");
    let b = config_map_in(&ctl, dest.name(), "from-tenant")
        .await
        .expect("the tenant's object");
    assert_eq!(
        tracking_id(&a),
        format!("web:/ConfigMap:{}/from-control", dest.name())
    );
    assert_eq!(
        tracking_id(&b),
        format!(
            "{}_web:/ConfigMap:{}/from-tenant",
            tenant.name(),
            dest.name()
        )
    );
    // Each sees only its own object; a pruning sync of either leaves the other's alone.
    for ns in [ctl.ns.name(), tenant.name()] {
        let app = wait_in(&ctl, ns, "web", "Synced", |a| {
            a["status"]["sync"]["status"] == "Synced"
        })
        .await;
        let names: Vec<&str> = app["status"]["resources"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| r["name"].as_str())
            .collect();
        let own = if ns == tenant.name() {
            "from-tenant"
        } else {
            "from-control"
        };
        assert_eq!(names, vec![own], "{ns}: {:#}", app["status"]["resources"]);
        let app = sync_in(&ctl, ns, "web", json!({"prune": true})).await;
        assert_eq!(
            app["status"]["operationState"]["phase"], "Succeeded",
            "{:#}",
            app["status"]
        );
    }
    assert!(
        config_map_in(&ctl, dest.name(), "from-control")
            .await
            .is_some()
    );
    assert!(
        config_map_in(&ctl, dest.name(), "from-tenant")
            .await
            .is_some()
    );
}

#[tokio::test]
async fn an_application_whose_project_does_not_list_its_namespace_is_refused_and_applies_nothing() {
    let env = TestEnv::shared();
    let tenant = env.namespace("tenant-refused");
    let dest = env.namespace("dest-refused");
    let ctl = controller_for(env, "ctl-refused", &[tenant.name()]).await;
    let repo = repo_with("not-for-you");
    // `default` has no `sourceNamespaces`: only Applications of the control namespace may use it.
    create_app_in(
        &ctl,
        tenant.name(),
        "intruder",
        "default",
        &repo,
        dest.name(),
        json!({"spec": {"project": "default", "source": {"repoURL": repo.url(), "path": "app"},
                        "destination": {"server": "https://kubernetes.default.svc", "namespace": dest.name()},
                        "syncPolicy": {"automated": {"prune": true}}}}),
    )
    .await;
    let expected = format!(
        "application 'intruder' in namespace '{}' is not permitted to use project 'default' (sourceNamespaces)",
        tenant.name()
    );
    let app = wait_in(&ctl, tenant.name(), "intruder", "refused", |a| {
        a["status"]["conditions"].as_array().is_some_and(|cs| {
            cs.iter()
                .any(|c| c["type"] == "UnknownError" && c["message"] == expected.as_str())
        })
    })
    .await;
    assert_eq!(
        app["status"]["sync"]["status"], "Unknown",
        "{:#}",
        app["status"]
    );
    // A requested sync fails with the same message; nothing is applied.
    let app = sync_in(&ctl, tenant.name(), "intruder", json!({})).await;
    assert_eq!(app["status"]["operationState"]["phase"], "Error");
    assert_eq!(
        app["status"]["operationState"]["message"],
        expected.as_str()
    );
    assert!(
        config_map_in(&ctl, dest.name(), "not-for-you")
            .await
            .is_none()
    );
    assert!(app["status"]["resources"].is_null(), "{:#}", app["status"]);
}

#[tokio::test]
async fn an_application_in_a_namespace_the_controller_does_not_permit_is_untouched() {
    let env = TestEnv::shared();
    let tenant = env.namespace("tenant-on");
    let other = env.namespace("tenant-off");
    let dest = env.namespace("dest-off");
    let ctl = controller_for(env, "ctl-off", &[tenant.name()]).await;
    create_project(
        &ctl,
        "team",
        json!({"sourceRepos": ["*"], "destinations": [{"server": "*", "namespace": "*"}],
               "sourceNamespaces": [tenant.name(), other.name()]}),
    )
    .await;
    let repo = repo_with("off-limits");
    create_app_in(
        &ctl,
        other.name(),
        "web",
        "team",
        &repo,
        dest.name(),
        json!({"operation": {"sync": {}}}),
    )
    .await;
    let before = serde_json::to_value(apps_in(&ctl, other.name()).get("web").await.expect("get"))
        .expect("json");
    // A witness in the permitted namespace, created after it, proves the controller has been
    // working (and has listed every namespace) meanwhile.
    create_app_in(
        &ctl,
        tenant.name(),
        "witness",
        "team",
        &repo,
        dest.name(),
        json!({}),
    )
    .await;
    wait_in(&ctl, tenant.name(), "witness", "compared", |a| {
        a["status"]["sync"]["status"] == "OutOfSync"
    })
    .await;
    let after = serde_json::to_value(apps_in(&ctl, other.name()).get("web").await.expect("get"))
        .expect("json");
    assert_eq!(
        after["metadata"]["resourceVersion"], before["metadata"]["resourceVersion"],
        "the Application in a namespace the controller does not permit was written: {after:#}"
    );
    assert!(after["status"].is_null());
    assert!(!after["operation"].is_null());
    assert!(
        config_map_in(&ctl, dest.name(), "off-limits")
            .await
            .is_none()
    );
}

#[tokio::test]
async fn argocd_cmd_params_cm_permits_namespaces_by_pattern() {
    let env = TestEnv::shared();
    let tenant = env.namespace("tenant-cm");
    let dest = env.namespace("dest-cm");
    install_cmd_params_then_start(env, tenant.name(), dest.name()).await;
}

/// The namespace list comes from `argocd-cmd-params-cm` (no flag), written as a regular
/// expression: the tenant's Application is reconciled.
async fn install_cmd_params_then_start(env: &'static TestEnv, tenant: &str, dest: &str) {
    let control = env.namespace("ctl-cmdparams");
    let cms: Api<k8s_openapi::api::core::v1::ConfigMap> =
        Api::namespaced(env.client().await, control.name());
    let cm: k8s_openapi::api::core::v1::ConfigMap = serde_json::from_value(json!({
        "metadata": {"name": "argocd-cmd-params-cm"},
        "data": {"application.namespaces": format!("does-not-exist, /^{tenant}$/")}
    }))
    .expect("configmap");
    cms.create(&PostParams::default(), &cm)
        .await
        .expect("create argocd-cmd-params-cm");
    let ctl = Controlled::start_in(env, control).await;
    create_project(
        &ctl,
        "team",
        json!({"sourceRepos": ["*"], "destinations": [{"server": "*", "namespace": "*"}],
               "sourceNamespaces": ["tenant-cm-*", tenant]}),
    )
    .await;
    let repo = repo_with("from-cmd-params");
    create_app_in(&ctl, tenant, "web", "team", &repo, dest, json!({})).await;
    let app = wait_in(&ctl, tenant, "web", "compared", |a| {
        a["status"]["sync"]["status"] == "OutOfSync"
    })
    .await;
    assert!(app["status"]["conditions"].is_null(), "{:#}", app["status"]);
}
