//! Create, update and patch apply the project's rules before writing, as Argo CD's API server
//! does (`ValidatePermissions`): source repositories, destinations (a cluster named by a cluster
//! Secret, the local cluster under both aliases), with Argo's InvalidArgument text. No controller
//! runs: what is refused must never reach the cluster.

use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DynamicObject, PostParams};
use plumb_app::appproject_resource;
use reqwest::Method;
use serde_json::{Value, json};

use crate::support::{client_trusting, create_default_project, env, read, server_config};

const IN_CLUSTER: &str = "https://kubernetes.default.svc";
const PROD_EU: &str = "https://prod-eu.k8s.acme.internal:6443";

fn app(name: &str, repo: &str, dest: Value) -> Value {
    json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": name},
        "spec": {
            "project": "rules-team",
            "source": {"repoURL": repo, "path": "web", "targetRevision": "HEAD"},
            "destination": dest,
        }
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_obey_the_projects_source_and_destination_rules() {
    let env = env();
    let ns = env.namespace("srv-rules");
    let client = env.client().await;
    create_default_project(&client, ns.name()).await;
    let projects: Api<DynamicObject> =
        Api::namespaced_with(client.clone(), ns.name(), &appproject_resource());
    let project: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "AppProject",
        "metadata": {"name": "rules-team"},
        "spec": {
            "sourceRepos": ["https://git.acme.internal/team/*"],
            "destinations": [
                {"server": IN_CLUSTER, "namespace": "team-*"},
                {"name": "prod-eu", "namespace": "team-*"}
            ]
        }
    }))
    .expect("project");
    projects
        .create(&PostParams::default(), &project)
        .await
        .expect("create project");
    // A cluster Secret: `prod-eu` is the name of that server.
    let secrets: Api<Secret> = Api::namespaced(client.clone(), ns.name());
    let cluster: Secret = serde_json::from_value(json!({
        "metadata": {"name": "cluster-prod-eu",
                     "labels": {"argocd.argoproj.io/secret-type": "cluster"}},
        "stringData": {"name": "prod-eu", "server": PROD_EU, "config": "{}"}
    }))
    .expect("secret");
    secrets
        .create(&PostParams::default(), &cluster)
        .await
        .expect("create cluster Secret");
    let server = plumb_server::serve(client.clone(), server_config(ns.name()))
        .await
        .expect("server starts");
    let http = client_trusting(server.certificate_pem.as_deref().expect("TLS"));
    let base = format!("https://localhost:{}", server.addr.port());
    let call = |method: Method, path: &str, body: Value| {
        let req = http
            .request(method, format!("{base}{path}"))
            .header("content-type", "application/json")
            .body(body.to_string());
        async move { read(req.send().await.expect("request")).await }
    };
    let good_repo = "https://git.acme.internal/team/web.git";
    let team_ns = json!({"server": IN_CLUSTER, "namespace": "team-web"});

    // Permitted: the local cluster by URL or by its name, another cluster by the server its
    // Secret names (the project lists it by name).
    for (name, dest) in [
        ("rules-ok-url", team_ns.clone()),
        (
            "rules-ok-alias",
            json!({"name": "in-cluster", "namespace": "team-web"}),
        ),
        (
            "rules-ok-prod",
            json!({"server": PROD_EU, "namespace": "team-web"}),
        ),
    ] {
        let (code, body) = call(
            Method::POST,
            "/api/v1/applications?validate=false",
            app(name, good_repo, dest),
        )
        .await;
        assert_eq!(code, 200, "{name}: {body}");
    }

    // Refused with Argo's InvalidArgument text, every violation listed, each followed by the
    // project field that refused (as the controller's conditions and the CLI say it).
    let cases = [
        (
            "rules-bad-repo",
            "https://evil.example/web.git",
            team_ns.clone(),
            "application spec for rules-bad-repo is invalid: InvalidSpecError: application repo https://evil.example/web.git is not permitted in project 'rules-team' (sourceRepos)".to_string(),
        ),
        (
            "rules-bad-dest",
            good_repo,
            json!({"server": IN_CLUSTER, "namespace": "kube-system"}),
            format!("application spec for rules-bad-dest is invalid: InvalidSpecError: application destination server '{IN_CLUSTER}' and namespace 'kube-system' do not match any of the allowed destinations in project 'rules-team' (destinations)"),
        ),
        (
            "rules-no-cluster",
            good_repo,
            json!({"name": "nowhere", "namespace": "team-web"}),
            "application spec for rules-no-cluster is invalid: InvalidSpecError: unable to find destination server: there are no clusters with this name: nowhere".to_string(),
        ),
        (
            "rules-both-bad",
            "https://evil.example/web.git",
            json!({"server": "https://other.example:6443", "namespace": "team-web"}),
            "application spec for rules-both-bad is invalid: InvalidSpecError: application repo https://evil.example/web.git is not permitted in project 'rules-team' (sourceRepos);InvalidSpecError: application destination server 'https://other.example:6443' and namespace 'team-web' do not match any of the allowed destinations in project 'rules-team' (destinations)".to_string(),
        ),
    ];
    for (name, repo, dest, message) in cases {
        let (code, body) = call(
            Method::POST,
            "/api/v1/applications?validate=false",
            app(name, repo, dest),
        )
        .await;
        assert_eq!(code, 400, "{name}: {body}");
        assert_eq!(body["code"], 3, "{name}: {body}");
        assert_eq!(body["message"], message.as_str(), "{name}");
        let (code, _) = call(
            Method::GET,
            &format!("/api/v1/applications/{name}"),
            json!({}),
        )
        .await;
        assert_eq!(code, 404, "{name} was not written");
    }

    // Update and patch: the same rules on the result; nothing is written.
    let (_, stored) = call(Method::GET, "/api/v1/applications/rules-ok-url", json!({})).await;
    let mut moved = stored.clone();
    moved["spec"]["source"]["repoURL"] = json!("https://evil.example/web.git");
    let (code, body) = call(Method::PUT, "/api/v1/applications/rules-ok-url", moved).await;
    assert_eq!(code, 400, "{body}");
    assert_eq!(
        body["message"],
        "application spec for rules-ok-url is invalid: InvalidSpecError: application repo https://evil.example/web.git is not permitted in project 'rules-team' (sourceRepos)"
    );
    let patch = json!({"spec": {"destination": {"namespace": "kube-system"}}});
    let (code, body) = call(
        Method::PATCH,
        "/api/v1/applications/rules-ok-url",
        json!({"patch": patch.to_string(), "patchType": "merge"}),
    )
    .await;
    assert_eq!(code, 400, "{body}");
    assert!(
        body["message"]
            .as_str()
            .is_some_and(|m| m
                .contains("namespace 'kube-system' do not match any of the allowed destinations")),
        "{body}"
    );
    let (_, after) = call(Method::GET, "/api/v1/applications/rules-ok-url", json!({})).await;
    assert_eq!(after["spec"], stored["spec"], "nothing written");
    // A permitted change still goes through.
    let patch = json!({"spec": {"destination": {"namespace": "team-shop"}}});
    let (code, body) = call(
        Method::PATCH,
        "/api/v1/applications/rules-ok-url",
        json!({"patch": patch.to_string(), "patchType": "merge"}),
    )
    .await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["spec"]["destination"]["namespace"], "team-shop");
    server.shutdown().await;
}
