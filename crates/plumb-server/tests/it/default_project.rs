//! The `default` AppProject: created at start where none exists, as argocd-server does, and an
//! existing one never changed (install.yaml ships none, so applying it over a running Argo CD
//! cannot widen a narrowed `default`).

use kube::api::{Api, DynamicObject, PostParams};
use plumb_app::appproject_resource;
use serde_json::json;

use crate::support::{env, server_config};

async fn default_spec(projects: &Api<DynamicObject>) -> serde_json::Value {
    let project = projects
        .get("default")
        .await
        .expect("the default AppProject");
    project.data["spec"].clone()
}

#[tokio::test]
async fn a_missing_default_project_is_created_with_argo_cds_spec() {
    let env = env();
    let ns = env.namespace("default-project-created");
    let client = env.client().await;
    let projects: Api<DynamicObject> =
        Api::namespaced_with(client.clone(), ns.name(), &appproject_resource());
    assert!(projects.get_opt("default").await.expect("get").is_none());
    let _server = plumb_server::serve(client, server_config(ns.name()))
        .await
        .expect("server starts");
    assert_eq!(
        default_spec(&projects).await,
        json!({"sourceRepos": ["*"], "destinations": [{"server": "*", "namespace": "*"}],
               "clusterResourceWhitelist": [{"group": "*", "kind": "*"}]})
    );
}

#[tokio::test]
async fn a_narrowed_default_project_is_left_as_it_is() {
    let env = env();
    let ns = env.namespace("default-project-kept");
    let client = env.client().await;
    let projects: Api<DynamicObject> =
        Api::namespaced_with(client.clone(), ns.name(), &appproject_resource());
    let narrowed = json!({"sourceRepos": ["https://git.example/platform/*"],
                          "destinations": [{"server": "https://kubernetes.default.svc", "namespace": "team-a"}]});
    let project: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "AppProject",
        "metadata": {"name": "default"}, "spec": narrowed,
    }))
    .expect("project");
    projects
        .create(&PostParams::default(), &project)
        .await
        .expect("create");
    let _server = plumb_server::serve(client, server_config(ns.name()))
        .await
        .expect("server starts");
    assert_eq!(default_spec(&projects).await, narrowed);
}
