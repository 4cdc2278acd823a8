//! `plumb server` evaluates an Application's project as the controller does (issue #27): the
//! repositories scoped to a project (a `project` key in the repository Secret) join its
//! `sourceRepos` and lend their credentials to its Applications only, through every route that
//! reads the repository (revision metadata, manifests); and argocd-cm's `kustomize.buildOptions`
//! shape the server's renders as they shape the controller's.

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{Api, PostParams};
use plumb_server::Running;
use plumb_testenv::git::GitRepo;
use plumb_testenv::git_http::GitHttpServer;
use reqwest::Method;
use serde_json::{Value, json};

use crate::support::{Stack, client_trusting, create_default_project, env, read, server_config};

const LOCAL: &str = "https://kubernetes.default.svc";

fn config_map(name: &str) -> String {
    format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  value: one\n")
}

/// A server alone (no controller) over `ns`, authentication off.
pub async fn server_only(ns: &str) -> (Running, reqwest::Client) {
    let server = plumb_server::serve(env().client().await, server_config(ns))
        .await
        .expect("server starts");
    let http = client_trusting(server.certificate_pem.as_deref().expect("TLS"));
    (server, http)
}

pub async fn call(
    http: &reqwest::Client,
    server: &Running,
    method: Method,
    path: &str,
    body: Option<&Value>,
) -> (u16, Value) {
    let mut req = http.request(
        method,
        format!("https://localhost:{}{path}", server.addr.port()),
    );
    if let Some(b) = body {
        req = req
            .header("content-type", "application/json")
            .body(b.to_string());
    }
    read(req.send().await.expect("request")).await
}

pub async fn create_project(client: &kube::Client, ns: &str, name: &str, spec: Value) {
    let api: Api<kube::api::DynamicObject> =
        Api::namespaced_with(client.clone(), ns, &plumb_app::appproject_resource());
    let obj = serde_json::from_value(json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "AppProject",
        "metadata": {"name": name}, "spec": spec
    }))
    .expect("project");
    api.create(&PostParams::default(), &obj)
        .await
        .expect("create project");
}

fn app(name: &str, project: &str, repo: &str, dest: &str) -> Value {
    json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": name},
        "spec": {"project": project,
                 "source": {"repoURL": repo, "path": "app", "targetRevision": "HEAD"},
                 "destination": {"server": LOCAL, "namespace": dest}}
    })
}

/// A private repository whose Secret is scoped to `scoped-a`: an Application of `scoped-a` may
/// name it although the project's own `sourceRepos` is empty, and the server reads its commits
/// and renders it with the Secret's credentials; `scoped-b`'s Application (whose `sourceRepos`
/// permits every URL) gets neither the credentials nor the content, and no answer carries the
/// password.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scoped_repository_serves_its_projects_applications_only_through_the_server() {
    const PASSWORD: &str = "s3cr3t-srv-scoped";
    let env = env();
    let ns = env.namespace("srv-scoped");
    let dest = env.namespace("srv-scoped-dest");
    let client = env.client().await;
    create_default_project(&client, ns.name()).await;
    let repo = GitRepo::named("srv-scoped-private");
    repo.commit(
        &[("app/cm.yaml", config_map("private"))],
        "the scoped release",
    );
    let git = GitHttpServer::serve(&repo, Some(("bot", PASSWORD)));
    let any = json!([{"server": "*", "namespace": "*"}]);
    create_project(
        &client,
        ns.name(),
        "scoped-a",
        json!({"sourceRepos": [], "destinations": any}),
    )
    .await;
    create_project(
        &client,
        ns.name(),
        "scoped-b",
        json!({"sourceRepos": ["*"], "destinations": any}),
    )
    .await;
    let secrets: Api<Secret> = Api::namespaced(client.clone(), ns.name());
    let secret = serde_json::from_value(json!({
        "metadata": {"name": "repo-scoped", "labels": {"argocd.argoproj.io/secret-type": "repository"}},
        "stringData": {"url": git.url(), "username": "bot", "password": PASSWORD, "project": "scoped-a"}
    }))
    .expect("secret");
    secrets
        .create(&PostParams::default(), &secret)
        .await
        .expect("create secret");
    let (server, http) = server_only(ns.name()).await;
    let mut seen = Vec::new();

    // Created through the API: the scoped repository is in scoped-a's sourceRepos.
    let (code, body) = call(
        &http,
        &server,
        Method::POST,
        "/api/v1/applications?validate=false",
        Some(&app("a", "scoped-a", &git.url(), dest.name())),
    )
    .await;
    assert_eq!(code, 200, "{body}");
    let (code, body) = call(
        &http,
        &server,
        Method::POST,
        "/api/v1/applications?validate=false",
        Some(&app("b", "scoped-b", &git.url(), dest.name())),
    )
    .await;
    assert_eq!(code, 200, "{body}");
    // A third project with neither the scope nor a wildcard: refused as Argo refuses it.
    create_project(
        &client,
        ns.name(),
        "scoped-c",
        json!({"sourceRepos": [], "destinations": any}),
    )
    .await;
    let (code, body) = call(
        &http,
        &server,
        Method::POST,
        "/api/v1/applications?validate=false",
        Some(&app("c", "scoped-c", &git.url(), dest.name())),
    )
    .await;
    assert_eq!(code, 400, "{body}");
    assert!(
        body["error"]
            .as_str()
            .unwrap_or_default()
            .contains("not permitted in project 'scoped-c'"),
        "{body}"
    );
    seen.push(body);

    let (code, meta) = call(
        &http,
        &server,
        Method::GET,
        "/api/v1/applications/a/revisions/HEAD/metadata",
        None,
    )
    .await;
    assert_eq!(code, 200, "{meta}");
    assert_eq!(meta["message"], "the scoped release");
    let (code, manifests) = call(
        &http,
        &server,
        Method::GET,
        "/api/v1/applications/a/manifests",
        None,
    )
    .await;
    assert_eq!(code, 200, "{manifests}");
    assert!(
        manifests["manifests"].to_string().contains("private"),
        "{manifests}"
    );

    let rejected = git.rejected();
    let (code, body) = call(
        &http,
        &server,
        Method::GET,
        "/api/v1/applications/b/revisions/HEAD/metadata",
        None,
    )
    .await;
    assert!(
        code >= 400,
        "another project's Application read the scoped repository: {body}"
    );
    seen.push(body);
    let (code, body) = call(
        &http,
        &server,
        Method::GET,
        "/api/v1/applications/b/manifests",
        None,
    )
    .await;
    assert!(
        code >= 400,
        "another project's Application rendered the scoped repository: {body}"
    );
    seen.push(body);
    assert!(
        git.rejected() > rejected,
        "b's reads went without credentials"
    );
    for body in seen.iter().chain([&meta, &manifests]) {
        assert!(!body.to_string().contains(PASSWORD), "{body}");
    }
    server.shutdown().await;
}

/// `kustomize.buildOptions: --load-restrictor LoadRestrictionsNone` lets a kustomization read a
/// file above its directory: the controller syncs it, and the server's manifests and
/// managed-resources render the same objects (without the option both refuse the render).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_servers_renders_apply_kustomize_build_options_as_the_controller_does() {
    // Kustomize runs in a render worker process, as in `plumb`: this crate's worker binary.
    let stack = Stack::start_with("srv-kopts", |controller, server| {
        let worker =
            plumb_source::Worker::program(env!("CARGO_BIN_EXE_plumb-server-render-worker"));
        controller.source.tools.worker = worker.clone();
        server.source.tools.worker = worker;
    })
    .await;
    let dest = env().namespace("srv-kopts-dest");
    let cms: Api<ConfigMap> = Api::namespaced(env().client().await, stack.ns.name());
    let cm = serde_json::from_value(json!({
        "metadata": {"name": "argocd-cm"},
        "data": {"kustomize.buildOptions": "--load-restrictor LoadRestrictionsNone"}
    }))
    .expect("argocd-cm");
    cms.create(&PostParams::default(), &cm)
        .await
        .expect("create argocd-cm");
    let repo = GitRepo::new();
    repo.commit(
        &[
            ("shared/cm.yaml", config_map("above")),
            (
                "app/kustomization.yaml",
                "resources:\n- ../shared/cm.yaml\n".to_owned(),
            ),
        ],
        "a file above the kustomization",
    );
    let mut body = app("kopts", "default", &repo.url(), dest.name());
    body["spec"]["syncPolicy"] = json!({"automated": {}});
    let (code, created) = stack
        .send(
            Method::POST,
            "/api/v1/applications?validate=false",
            Some(&body),
        )
        .await;
    assert_eq!(code, 200, "{created}");
    let synced = stack
        .wait_app("kopts", "synced by the controller", |a| {
            a["status"]["sync"]["status"] == "Synced"
        })
        .await;
    let by_controller: Vec<String> = synced["status"]["resources"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            format!(
                "{}/{}",
                r["kind"].as_str().unwrap_or(""),
                r["name"].as_str().unwrap_or("")
            )
        })
        .collect();
    assert_eq!(by_controller, ["ConfigMap/above"]);
    let (code, manifests) = stack.get("/api/v1/applications/kopts/manifests").await;
    assert_eq!(code, 200, "{manifests}");
    let rendered: Vec<Value> = manifests["manifests"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|m| serde_json::from_str(m.as_str().unwrap_or("null")).expect("manifest JSON"))
        .collect();
    let dest_cms: Api<ConfigMap> = Api::namespaced(env().client().await, dest.name());
    let applied = dest_cms
        .get("above")
        .await
        .expect("the controller applied it");
    assert_eq!(rendered.len(), 1, "{manifests}");
    assert_eq!(rendered[0]["metadata"]["name"], "above");
    assert_eq!(
        rendered[0]["data"],
        serde_json::to_value(&applied.data).expect("data"),
        "the server renders what the controller applied"
    );
    let (code, managed) = stack
        .get("/api/v1/applications/kopts/managed-resources")
        .await;
    assert_eq!(code, 200, "{managed}");
    let items = managed["items"].as_array().expect("items");
    assert_eq!(items.len(), 1, "{managed}");
    assert_eq!(items[0]["name"], "above");
    assert!(
        items[0].get("modified").is_none(),
        "in sync with the controller's apply: {managed}"
    );
}
