//! Project-scoped repositories and clusters (issue #27), end to end: a repository or cluster
//! Secret with a `project` key belongs to that AppProject. Its cluster is a destination of that
//! project only (Argo's implicit destination), `permitOnlyProjectScopedClusters` refuses every
//! other cluster with Argo's message, its credentials serve that project's Applications only,
//! and a project asking for what Plumb does not enforce is refused or warned about.

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{Api, DynamicObject, PostParams};
use plumb_testenv::TestEnv;
use plumb_testenv::git::GitRepo;
use plumb_testenv::git_http::GitHttpServer;
use serde_json::{Value, json};

use crate::support::Controlled;

const LOCAL: &str = "https://kubernetes.default.svc";

fn config_map(name: &str) -> String {
    format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  value: one\n")
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

async fn create_secret(ctl: &Controlled, name: &str, kind: &str, data: Value) {
    let secrets: Api<Secret> = Api::namespaced(ctl.client.clone(), ctl.ns.name());
    let secret: Secret = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": name, "labels": {"argocd.argoproj.io/secret-type": kind}},
        "stringData": data
    }))
    .expect("secret");
    secrets
        .create(&PostParams::default(), &secret)
        .await
        .expect("create secret");
}

async fn create_app(ctl: &Controlled, name: &str, project: &str, repo: &str, dest: &str) {
    ctl.create_app(json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": name},
        "spec": {"project": project,
                 "source": {"repoURL": repo, "path": "app"},
                 "destination": {"server": LOCAL, "namespace": dest},
                 "syncPolicy": {"automated": {}}}
    }))
    .await;
}

fn has_condition(app: &Value, kind: &str, text: &str) -> bool {
    app["status"]["conditions"].as_array().is_some_and(|cs| {
        cs.iter()
            .any(|c| c["type"] == kind && c["message"].as_str().unwrap_or_default().contains(text))
    })
}

async fn config_map_in(ctl: &Controlled, ns: &str, name: &str) -> Option<ConfigMap> {
    let api: Api<ConfigMap> = Api::namespaced(ctl.client.clone(), ns);
    api.get_opt(name).await.expect("get")
}

/// The refusal a requested sync fails with, and nothing written.
async fn refused_and_nothing_written(ctl: &Controlled, app: &str, ns: &str, cm: &str, msg: &str) {
    let after = ctl.sync(app, json!({})).await;
    assert_eq!(after["status"]["operationState"]["phase"], "Error");
    assert_eq!(after["status"]["operationState"]["message"], msg);
    assert!(config_map_in(ctl, ns, cm).await.is_none(), "{cm} written");
}

fn refused_destination(ns: &str, project: &str, rule: &str) -> String {
    format!(
        "application destination server '{LOCAL}' and namespace '{ns}' do not match any of the allowed destinations in project '{project}' ({rule})"
    )
}

#[tokio::test]
async fn a_project_scoped_cluster_is_a_destination_of_its_own_project_only() {
    let env = TestEnv::shared();
    let ctl = Controlled::start(env, "ctl-scoped-cluster").await;
    let dest = env.namespace("dest-scoped-cluster");
    let repo = GitRepo::new();
    repo.commit(&[("app/cm.yaml", config_map("scoped"))], "one");
    // Neither project lists the cluster in `destinations`.
    for p in ["team-a", "team-b"] {
        create_project(&ctl, p, json!({"sourceRepos": ["*"], "destinations": [{"server": "https://elsewhere.example", "namespace": "*"}]})).await;
    }
    create_secret(
        &ctl,
        "cluster-team-a",
        "cluster",
        json!({"name": "in-cluster", "server": LOCAL, "project": "team-a"}),
    )
    .await;
    // Hostile `project` keys never make the cluster team-b's.
    for (i, odd) in [
        "",
        " ",
        "*",
        "team-*",
        "team-b ",
        "../team-b",
        "no-such-project",
    ]
    .iter()
    .enumerate()
    {
        create_secret(
            &ctl,
            &format!("cluster-odd-{i}"),
            "cluster",
            json!({"name": format!("odd-{i}"), "server": LOCAL, "project": odd}),
        )
        .await;
    }
    create_app(&ctl, "a", "team-a", &repo.url(), dest.name()).await;
    ctl.wait_app("a", "synced through its project's cluster", |a| {
        a["status"]["sync"]["status"] == "Synced"
    })
    .await;
    assert!(config_map_in(&ctl, dest.name(), "scoped").await.is_some());

    let other = env.namespace("dest-scoped-other");
    create_app(&ctl, "b", "team-b", &repo.url(), other.name()).await;
    let msg = refused_destination(other.name(), "team-b", "destinations");
    let app = ctl
        .wait_app("b", "refused", |a| {
            has_condition(a, "InvalidSpecError", &msg)
        })
        .await;
    assert_eq!(app["status"]["sync"]["status"], "Unknown");
    refused_and_nothing_written(&ctl, "b", other.name(), "scoped", &msg).await;
}

#[tokio::test]
async fn permit_only_project_scoped_clusters_refuses_an_unscoped_cluster_with_argos_message() {
    let env = TestEnv::shared();
    let ctl = Controlled::start(env, "ctl-permit-only").await;
    let dest = env.namespace("dest-permit-only");
    let repo = GitRepo::new();
    repo.commit(&[("app/cm.yaml", config_map("only"))], "one");
    create_project(
        &ctl,
        "only-scoped",
        json!({
            "sourceRepos": ["*"], "destinations": [{"server": "*", "namespace": "*"}],
            "permitOnlyProjectScopedClusters": true
        }),
    )
    .await;
    create_app(&ctl, "only", "only-scoped", &repo.url(), dest.name()).await;
    let msg = refused_destination(
        dest.name(),
        "only-scoped",
        "permitOnlyProjectScopedClusters",
    );
    ctl.wait_app("only", "refused", |a| {
        has_condition(a, "InvalidSpecError", &msg)
    })
    .await;
    refused_and_nothing_written(&ctl, "only", dest.name(), "only", &msg).await;
    // The cluster scoped to the project: permitted.
    create_secret(
        &ctl,
        "cluster-only",
        "cluster",
        json!({"name": "in-cluster", "server": LOCAL, "project": "only-scoped"}),
    )
    .await;
    ctl.wait_app("only", "synced once the cluster is the project's", |a| {
        a["status"]["sync"]["status"] == "Synced" && !has_condition(a, "InvalidSpecError", "")
    })
    .await;
    assert!(config_map_in(&ctl, dest.name(), "only").await.is_some());
}

#[tokio::test]
async fn a_project_scoped_repository_lends_its_credentials_to_its_project_only() {
    let env = TestEnv::shared();
    let ctl = Controlled::start(env, "ctl-scoped-repo").await;
    let repo = GitRepo::named("private-scoped");
    repo.commit(&[("app/cm.yaml", config_map("private"))], "one");
    let server = GitHttpServer::serve(&repo, Some(("bot", "s3cr3t-scoped")));
    for p in ["repo-a", "repo-b"] {
        create_project(
            &ctl,
            p,
            json!({"sourceRepos": ["*"], "destinations": [{"server": "*", "namespace": "*"}]}),
        )
        .await;
    }
    create_secret(
        &ctl,
        "repo-private",
        "repository",
        json!({
            "url": server.url(), "username": "bot", "password": "s3cr3t-scoped", "project": "repo-a"
        }),
    )
    .await;
    let (dest_a, dest_b) = (env.namespace("dest-repo-a"), env.namespace("dest-repo-b"));
    create_app(&ctl, "a", "repo-a", &server.url(), dest_a.name()).await;
    ctl.wait_app("a", "synced with its project's credentials", |a| {
        a["status"]["sync"]["status"] == "Synced"
    })
    .await;
    assert!(
        config_map_in(&ctl, dest_a.name(), "private")
            .await
            .is_some()
    );
    let rejected_before = server.rejected();

    create_app(&ctl, "b", "repo-b", &server.url(), dest_b.name()).await;
    let app = ctl
        .wait_app("b", "ComparisonError", |a| {
            has_condition(a, "ComparisonError", "")
        })
        .await;
    let shown = app.to_string();
    assert!(!shown.contains("s3cr3t-scoped"), "{shown}");
    assert!(
        server.rejected() > rejected_before,
        "b's fetch went without credentials"
    );
    assert!(
        config_map_in(&ctl, dest_b.name(), "private")
            .await
            .is_none()
    );
}

/// The project-level findings (unknown fields warned) are unit-tested in
/// `plumb_app::unenforced`: Plumb's own CRD prunes such fields before the controller could see
/// them (they reach it only under Argo CD's CRD).
#[tokio::test]
async fn an_unenforced_setting_is_a_warning_condition_on_the_application() {
    let env = TestEnv::shared();
    let ctl = Controlled::start(env, "ctl-unenforced").await;
    let dest = env.namespace("dest-unenforced");
    let cms: Api<ConfigMap> = Api::namespaced(ctl.client.clone(), ctl.ns.name());
    let cm: ConfigMap = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "argocd-cm"},
        "data": {"resource.customizations.ignoreResourceUpdates.all": "jsonPointers:\n- /status\n"}
    }))
    .expect("cm");
    cms.create(&PostParams::default(), &cm)
        .await
        .expect("argocd-cm");
    let repo = GitRepo::new();
    repo.commit(&[("app/cm.yaml", config_map("warned"))], "one");
    create_app(&ctl, "warned", "default", &repo.url(), dest.name()).await;
    ctl.wait_app("warned", "the warning", |a| {
        a["status"]["sync"]["status"] == "Synced"
            && has_condition(
                a,
                "UnenforcedSettingWarning",
                "argocd-cm resource.customizations.ignoreResourceUpdates.all is not enforced by Plumb: ",
            )
    })
    .await;
    assert!(config_map_in(&ctl, dest.name(), "warned").await.is_some());
}
