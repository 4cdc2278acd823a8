//! The web UI in a real browser: headless Debian Chromium driven by playwright-core
//! (`ui/e2e/run.mjs`, run with node) against this test's `plumb server` with authentication and
//! the controller, on the real control plane, with the payments-api example in a real Git
//! repository. The script asks for the Git change it needs (`STEP git-change` on its stdout);
//! this test makes it and answers `done`.
//!
//! Needs `scripts/ui-build` first (the bundle embedded in the server and ui/node_modules for
//! playwright-core) and Chromium (`apt-get install chromium`): scripts/test does both. With
//! `PLUMB_UI_SCREENSHOTS=<dir>` the script saves screenshots of the main pages there
//! (scripts/ui-screenshots).

#[allow(dead_code)]
#[path = "../it/support.rs"]
mod support;

mod appsets;
mod browser;
mod settings;
mod settings_clusters;
mod settings_repos;
mod sso;
mod views;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{ConfigMap, Pod, Secret};
use kube::api::{Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use plumb_app::appproject_resource;
use plumb_controller::ControllerConfig;
use plumb_testenv::git::GitRepo;
use plumb_testenv::pod_logs::{LogFile, LogLine, Stream};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use support::{DEADLINE, client_trusting, create_default_project, env, read, server_config};

/// The Application (its Git directory holds the payments-api Deployment, Service and
/// ConfigMap); a name no other test uses, as two tests with one Application name share a
/// tracking instance.
const APP: &str = "payments-ui";
const DEPLOYMENT: &str = "payments-api";
/// The Application the browser creates through the form (a name no other test uses).
const FORM_APP: &str = "ui-form-app";
const IMAGE: &str = "registry.acme.internal/payments-api";
/// An Application whose only object, a Service with a port out of range, the API server
/// refuses: its first sync fails, and the page must say why (issue #32, defect 3).
const BROKEN_APP: &str = "ui-broken-sync";
const BROKEN_SERVICE: &str = "payments-broken";
/// A project whose `namespaceResourceWhitelist` is an explicit empty list (no namespaced kind
/// permitted), beside the default project where it is unset (all permitted).
const LOCKED_PROJECT: &str = "ui-locked";

/// The PreSync hook Job v1.4.0 adds: a sync from the UI's panel must run it (defect: the panel
/// sent the `apply` strategy, which skips hooks). kwok completes Job Pods.
const HOOK: &str = "payments-presync";
/// A ConfigMap carrying the Application's tracking id that Git does not declare: the diff and
/// the sync panel must say a prune deletes it (issue #32, defect 4).
const STRAY: &str = "payments-api-stray";

fn files(version: &str) -> Vec<(&'static str, String)> {
    let mut files = vec![
        (
            "k8s/configmap.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: payments-api\ndata:\n  LOG_LEVEL: info\n".into(),
        ),
        (
            "k8s/service.yaml",
            "apiVersion: v1\nkind: Service\nmetadata:\n  name: payments-api\nspec:\n  selector:\n    app: payments-api\n  ports:\n  - name: http\n    port: 80\n    targetPort: 8080\n".into(),
        ),
        (
            "k8s/deployment.yaml",
            format!(
                "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: payments-api\nspec:\n  replicas: 2\n  selector:\n    matchLabels:\n      app: payments-api\n  template:\n    metadata:\n      labels:\n        app: payments-api\n    spec:\n      containers:\n      - name: payments-api\n        image: {IMAGE}:{version}\n        ports:\n        - containerPort: 8080\n"
            ),
        ),
    ];
    if version == "v1.4.0" {
        files.push((
            "k8s/presync.yaml",
            format!(
                "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: {HOOK}\n  annotations:\n    argocd.argoproj.io/hook: PreSync\nspec:\n  backoffLimit: 0\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n      - name: migrate\n        image: {IMAGE}-migrate:v1.4.0\n"
            ),
        ));
    }
    files
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// What the browser test needs from the machine, or why it cannot run.
fn prerequisites() -> Result<(PathBuf, PathBuf), String> {
    let root = repo_root();
    let ui = root.join("ui");
    if !ui.join("dist/index.html").is_file() {
        return Err("ui/dist is not built: run scripts/ui-build, then build the tests again (the server embeds the bundle at compile time)".into());
    }
    if !ui.join("node_modules/playwright-core").is_dir() {
        return Err("ui/node_modules has no playwright-core: run scripts/ui-build".into());
    }
    let chromium =
        PathBuf::from(std::env::var("PLUMB_CHROMIUM").unwrap_or("/usr/bin/chromium".into()));
    if !chromium.is_file() {
        return Err(format!(
            "{} is missing: apt-get install chromium (scripts/test does it), or set PLUMB_CHROMIUM",
            chromium.display()
        ));
    }
    Ok((ui, chromium))
}

async fn set_config_map(client: &kube::Client, ns: &str, name: &str, data: &[(&str, &str)]) {
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    if api.get_opt(name).await.expect("read ConfigMap").is_none() {
        let cm: ConfigMap =
            serde_json::from_value(json!({"metadata": {"name": name}})).expect("ConfigMap");
        api.create(&PostParams::default(), &cm)
            .await
            .expect("create ConfigMap");
    }
    let data: BTreeMap<&str, &str> = data.iter().copied().collect();
    api.patch(
        name,
        &PatchParams::default(),
        &Patch::Merge(&json!({"data": data})),
    )
    .await
    .expect("patch ConfigMap");
}

async fn secret_value(client: &kube::Client, ns: &str, name: &str, key: &str) -> String {
    let api: Api<Secret> = Api::namespaced(client.clone(), ns);
    let s = api.get(name).await.expect("Secret exists");
    let data = s.data.expect("Secret data");
    String::from_utf8(data[key].0.clone()).expect("utf-8")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn browser_login_tiles_tree_diff_sync_rollback_and_read_only() {
    let (ui, chromium) = match prerequisites() {
        Ok(p) => p,
        Err(why) => panic!("the web UI browser test cannot run: {why}"),
    };
    let env = env();
    let ns = env.namespace("ui");
    let dest = env.namespace("ui-payments");
    let client = env.client().await;
    create_default_project(&client, ns.name()).await;

    // The controller, in this process.
    let mut cc = ControllerConfig::new(tempfile::tempdir().expect("tempdir").keep());
    cc.control_namespace = ns.name().to_string();
    cc.metrics_addr = None;
    let c = client.clone();
    let controller = tokio::spawn(async move {
        if let Err(e) = plumb_controller::run(c, cc).await {
            eprintln!("CONTROLLER STOPPED: {}", plumb_app::chain(&e));
        }
    });

    // A read-only account besides admin (Argo's built-in role:readonly).
    let viewer_pw = "viewer-password-1";
    let hash = bcrypt::hash(viewer_pw, 4).expect("bcrypt");
    let mut config = server_config(ns.name());
    config.disable_auth = false;
    let server = plumb_server::serve(client.clone(), config)
        .await
        .expect("server starts");
    set_config_map(
        &client,
        ns.name(),
        "argocd-cm",
        &[("accounts.viewer", "login")],
    )
    .await;
    set_config_map(
        &client,
        ns.name(),
        "argocd-rbac-cm",
        &[("policy.csv", "g, viewer, role:readonly\n")],
    )
    .await;
    let secrets: Api<Secret> = Api::namespaced(client.clone(), ns.name());
    secrets
        .patch(
            "argocd-secret",
            &PatchParams::default(),
            &Patch::Merge(&json!({"stringData": {"accounts.viewer.password": hash}})),
        )
        .await
        .expect("viewer password");
    let admin_pw = secret_value(
        &client,
        ns.name(),
        "argocd-initial-admin-secret",
        "password",
    )
    .await;
    let http = client_trusting(server.certificate_pem.as_deref().expect("TLS"));
    let base = format!("https://localhost:{}", server.addr.port());

    // Without a bundle the page says how to build one; with it, `/` is the UI.
    let resp = http
        .get(format!("{base}/applications"))
        .send()
        .await
        .expect("GET page");
    assert_eq!(resp.status().as_u16(), 200);
    let page = resp.text().await.expect("page");
    assert!(page.contains("<div id=\"app\">"), "{page}");

    // payments-api at v1.3.2 on main, synced.
    let repo = GitRepo::new();
    let first = repo.commit(&files("v1.3.2"), "payments-api v1.3.2");
    let (code, login) = read(
        http.post(format!("{base}/api/v1/session"))
            .header("content-type", "application/json")
            .body(json!({"username": "admin", "password": admin_pw}).to_string())
            .send()
            .await
            .expect("login"),
    )
    .await;
    assert_eq!(code, 200, "{login}");
    let token = login["token"].as_str().expect("token").to_string();
    let call = |method: reqwest::Method, path: String, body: Option<Value>| {
        let mut req = http
            .request(method, format!("{base}{path}"))
            .bearer_auth(&token);
        if let Some(b) = body {
            req = req
                .header("content-type", "application/json")
                .body(b.to_string());
        }
        async move { read(req.send().await.expect("request")).await }
    };
    let (code, body) = call(reqwest::Method::GET, "/api/v1/nope".into(), None).await;
    assert_eq!(code, 404, "unknown API paths stay JSON 404s: {body}");
    let app = json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": APP, "labels": {"team": "payments"}},
        "spec": {"project": "default",
                 "source": {"repoURL": repo.url(), "path": "k8s", "targetRevision": "main"},
                 "destination": {"server": "https://kubernetes.default.svc", "namespace": dest.name()}}
    });
    let (code, body) = call(
        reqwest::Method::POST,
        "/api/v1/applications".into(),
        Some(app),
    )
    .await;
    assert_eq!(code, 200, "{body}");
    let (code, body) = call(
        reqwest::Method::POST,
        format!("/api/v1/applications/{APP}/sync"),
        Some(json!({"prune": true})),
    )
    .await;
    assert_eq!(code, 200, "{body}");
    let start = std::time::Instant::now();
    loop {
        let (_, a) = call(
            reqwest::Method::GET,
            format!("/api/v1/applications/{APP}"),
            None,
        )
        .await;
        if a["status"]["sync"]["status"] == "Synced"
            && a["status"]["health"]["status"] == "Healthy"
            && a["operation"].is_null()
        {
            break;
        }
        assert!(
            start.elapsed() < DEADLINE,
            "{APP} not Synced and Healthy: {}",
            a["status"]
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }

    // A second Application whose first sync fails: its Service's port is out of range.
    let broken_repo = GitRepo::new();
    broken_repo.commit(
        &[(
            "broken/service.yaml",
            format!("apiVersion: v1\nkind: Service\nmetadata:\n  name: {BROKEN_SERVICE}\nspec:\n  selector:\n    app: {BROKEN_SERVICE}\n  ports:\n  - name: http\n    port: 70000\n    targetPort: 8080\n"),
        )],
        "a Service the API server refuses",
    );
    let broken = json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": BROKEN_APP},
        "spec": {"project": "default",
                 "source": {"repoURL": broken_repo.url(), "path": "broken", "targetRevision": "main"},
                 "destination": {"server": "https://kubernetes.default.svc", "namespace": dest.name()}}
    });
    let (code, body) = call(
        reqwest::Method::POST,
        "/api/v1/applications".into(),
        Some(broken),
    )
    .await;
    assert_eq!(code, 200, "{body}");
    let (code, body) = call(
        reqwest::Method::POST,
        format!("/api/v1/applications/{BROKEN_APP}/sync"),
        Some(json!({})),
    )
    .await;
    assert_eq!(code, 200, "{body}");
    let start = std::time::Instant::now();
    loop {
        let (_, a) = call(
            reqwest::Method::GET,
            format!("/api/v1/applications/{BROKEN_APP}"),
            None,
        )
        .await;
        if a["status"]["operationState"]["phase"] == "Failed" && a["operation"].is_null() {
            break;
        }
        assert!(
            start.elapsed() < DEADLINE,
            "{BROKEN_APP}'s sync did not fail: {}",
            a["status"]
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let projects: Api<DynamicObject> =
        Api::namespaced_with(client.clone(), ns.name(), &appproject_resource());
    let locked: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "AppProject",
        "metadata": {"name": LOCKED_PROJECT},
        "spec": {"sourceRepos": ["*"], "destinations": [{"server": "*", "namespace": "*"}],
                 "namespaceResourceWhitelist": []}
    }))
    .expect("project");
    projects
        .create(&PostParams::default(), &locked)
        .await
        .expect("create the locked project");

    // The browser, through the script.
    let mut cmd = tokio::process::Command::new("node");
    cmd.arg("e2e/run.mjs")
        .current_dir(&ui)
        .env("PLUMB_UI_URL", &base)
        .env("PLUMB_ADMIN_PASSWORD", &admin_pw)
        .env("PLUMB_VIEWER_PASSWORD", viewer_pw)
        .env("PLUMB_APP", APP)
        .env("PLUMB_DEPLOYMENT", DEPLOYMENT)
        .env("PLUMB_FIRST_REVISION", &first)
        .env("PLUMB_REPO_URL", repo.url())
        .env("PLUMB_FORM_APP", FORM_APP)
        .env("PLUMB_BROKEN_APP", BROKEN_APP)
        .env("PLUMB_BROKEN_SERVICE", BROKEN_SERVICE)
        .env("PLUMB_LOCKED_PROJECT", LOCKED_PROJECT)
        .env("PLUMB_FORM_NAMESPACE", format!("{}-form", dest.name()))
        .env("PLUMB_CHROMIUM", &chromium)
        .env("PLUMB_FAILURE_DIR", std::env::temp_dir())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true);
    if let Some(dir) = std::env::var_os("PLUMB_UI_SCREENSHOTS") {
        cmd.env("PLUMB_SCREENSHOTS", dir);
    }
    let mut child = cmd.spawn().expect("node runs (Node 20 is required)");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut out = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut log = Vec::new();
    let log_dir = tempfile::tempdir().expect("tempdir for Pod logs");
    let script = async {
        while let Some(line) = out.next_line().await.expect("read the script's output") {
            println!("{line}");
            log.push(line.clone());
            if line == "STEP git-change" {
                repo.commit(&files("v1.4.0"), "payments-api v1.4.0");
                let (code, body) = call(
                    reqwest::Method::GET,
                    format!("/api/v1/applications/{APP}?refresh=normal"),
                    None,
                )
                .await;
                assert_eq!(code, 200, "refresh: {body}");
                stdin.write_all(b"done\n").await.expect("answer the script");
            }
            if line == "STEP hook-ran" {
                // The page may report the previous sync's success before this one ends: wait
                // for the hook (bounded), as the sync creates it first.
                let jobs: Api<Job> = Api::namespaced(client.clone(), dest.name());
                let start = std::time::Instant::now();
                while jobs.get_opt(HOOK).await.expect("read the hook").is_none() {
                    assert!(
                        start.elapsed() < DEADLINE,
                        "the UI's full sync did not run the PreSync hook {HOOK}"
                    );
                    tokio::time::sleep(Duration::from_millis(300)).await;
                }
                stdin.write_all(b"done\n").await.expect("answer the script");
            }
            if line == "STEP pod-logs" {
                serve_pod_logs(env, &client, dest.name(), log_dir.path()).await;
                stdin.write_all(b"done\n").await.expect("answer the script");
            }
            if line == "STEP max-pods-1" {
                let max = [("server.maxPodLogsToRender", "1")];
                set_config_map(&client, ns.name(), "argocd-cm", &max).await;
                stdin.write_all(b"done\n").await.expect("answer the script");
            }
            if line == "STEP stray" {
                create_stray(&client, dest.name()).await;
                stdin.write_all(b"done\n").await.expect("answer the script");
            }
            if line == "STEP delete-pod" {
                // A Pod replaced under the Application: only the live objects change (the
                // Application does not), so only the tree stream can tell the page.
                let pods: Api<Pod> = Api::namespaced(client.clone(), dest.name());
                let list = pods
                    .list(&ListParams::default().labels("app=payments-api"))
                    .await
                    .expect("list Pods");
                let pod = list.items.first().expect("a payments-api Pod");
                pods.delete(
                    pod.metadata.name.as_deref().expect("Pod name"),
                    &DeleteParams::default().grace_period(0),
                )
                .await
                .expect("delete the Pod");
                stdin.write_all(b"done\n").await.expect("answer the script");
            }
        }
        child.wait().await.expect("node exits")
    };
    // A generous bound for the whole browser session; no step is timed.
    let status = tokio::time::timeout(Duration::from_secs(900), script)
        .await
        .expect("the browser test ends within 15 minutes");
    controller.abort();
    server.shutdown().await;
    assert!(
        status.success() && log.last().is_some_and(|l| l == "PASS"),
        "the browser test failed (exit {status}); its output:\n{}",
        log.join("\n")
    );
    assert!(
        log.iter()
            .any(|l| l.starts_with("ok - a read-only user sees Sync disabled")),
        "the read-only step ran"
    );
}

/// Gives each payments-api Pod a log (kwok serves the file as its container's): a line naming
/// the Pod, and one holding markup the page must show as text.
async fn serve_pod_logs(env: &plumb_testenv::TestEnv, client: &kube::Client, ns: &str, dir: &Path) {
    let pods: Api<Pod> = Api::namespaced(client.clone(), ns);
    let list = pods
        .list(&ListParams::default().labels("app=payments-api"))
        .await
        .expect("list Pods");
    for pod in &list.items {
        let name = pod.metadata.name.clone().expect("Pod name");
        let file = LogFile::create(
            dir,
            &format!("{name}.log"),
            &[
                LogLine {
                    time: "2026-12-01T10:00:00.000000000Z",
                    stream: Stream::Stdout,
                    text: &format!("{name} listening on :8080"),
                },
                LogLine {
                    time: "2026-12-01T10:00:01.000000000Z",
                    stream: Stream::Stderr,
                    text: "<b>not bold</b>",
                },
            ],
        );
        tokio::task::block_in_place(|| env.set_pod_logs(ns, &name, &[(&[], &file)]));
    }
}

/// A ConfigMap with the Application's tracking id that Git does not declare: a prune deletes it.
async fn create_stray(client: &kube::Client, ns: &str) {
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    let stray: ConfigMap = serde_json::from_value(json!({
        "metadata": {"name": STRAY, "annotations": {
            "argocd.argoproj.io/tracking-id": format!("{APP}:/ConfigMap:{ns}/{STRAY}")}},
        "data": {"left": "behind"}
    }))
    .expect("ConfigMap");
    cms.create(&PostParams::default(), &stray)
        .await
        .expect("create the stray ConfigMap");
}

/// First load of the Applications page with 1,000 Applications (each with a realistic status:
/// five resources, health, sync, an operation, history) in Chromium, measured by
/// `ui/e2e/perf.mjs` and printed; docs/performance.md records the numbers. A measurement, not a
/// check of speed: run with `--ignored --nocapture`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement for docs/performance.md; run with --ignored --nocapture"]
async fn first_load_of_1000_applications() {
    use futures::StreamExt;
    let (ui, chromium) = match prerequisites() {
        Ok(p) => p,
        Err(why) => panic!("the web UI browser test cannot run: {why}"),
    };
    let count = 1000;
    let env = env();
    let ns = env.namespace("ui-perf");
    let client = env.client().await;
    create_default_project(&client, ns.name()).await;
    let apps: Api<kube::api::DynamicObject> = Api::namespaced_with(
        client.clone(),
        ns.name(),
        &plumb_app::application_resource(),
    );
    let health = ["Healthy", "Healthy", "Healthy", "Progressing", "Degraded"];
    futures::stream::iter(0..count)
        .map(|i| {
            let apps = apps.clone();
            async move {
                let name = format!("app-{i:04}");
                let obj: kube::api::DynamicObject = serde_json::from_value(json!({
                    "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
                    "metadata": {"name": name, "labels": {"team": format!("team-{}", i % 17)}},
                    "spec": {"project": "default",
                             "source": {"repoURL": "https://git.acme.internal/platform/apps.git", "path": format!("apps/{name}"), "targetRevision": "main"},
                             "destination": {"server": "https://kubernetes.default.svc", "namespace": format!("ns-{}", i % 40)}}
                }))
                .expect("Application");
                apps.create(&PostParams::default(), &obj)
                    .await
                    .expect("create Application");
                let resources: Vec<Value> = ["ConfigMap", "Service", "Deployment", "ServiceAccount", "Secret"]
                    .iter()
                    .map(|k| json!({"version": "v1", "kind": k, "namespace": format!("ns-{}", i % 40), "name": name, "status": if i % 9 == 0 { "OutOfSync" } else { "Synced" }, "health": {"status": "Healthy"}}))
                    .collect();
                let status = json!({"status": {
                    "sync": {"status": if i % 9 == 0 { "OutOfSync" } else { "Synced" }, "revision": "0123456789abcdef0123456789abcdef01234567"},
                    "health": {"status": health[i % health.len()]},
                    "resources": resources,
                    "operationState": {"phase": "Succeeded", "message": "successfully synced (all tasks run)", "startedAt": "2026-12-01T10:00:00Z", "finishedAt": "2026-12-01T10:00:05Z", "operation": {"sync": {"revision": "main"}}},
                    "history": [{"id": 0, "revision": "0123456789abcdef0123456789abcdef01234567", "deployedAt": "2026-12-01T10:00:05Z"}]
                }});
                apps.patch_status(&name, &PatchParams::default(), &Patch::Merge(&status))
                    .await
                    .expect("status");
            }
        })
        .buffer_unordered(16)
        .collect::<Vec<()>>()
        .await;
    let mut config = server_config(ns.name());
    config.disable_auth = true;
    let server = plumb_server::serve(client.clone(), config)
        .await
        .expect("server starts");
    let base = format!("https://localhost:{}", server.addr.port());
    // Where the list's time goes: the API server's list of the Applications alone, then the
    // server's route (that list, RBAC per item, JSON out) with and without `fields`.
    let http = client_trusting(server.certificate_pem.as_deref().expect("TLS"));
    for _ in 0..3 {
        let t = std::time::Instant::now();
        let listed = apps
            .list(&kube::api::ListParams::default())
            .await
            .expect("list");
        let kube_ms = t.elapsed().as_millis();
        let mut line = format!(
            "API server list of {} Applications: {kube_ms} ms",
            listed.items.len()
        );
        for query in [
            "",
            "?fields=items.metadata.name,items.spec,items.status.sync.status",
        ] {
            let t = std::time::Instant::now();
            let body = http
                .get(format!("{base}/api/v1/applications{query}"))
                .send()
                .await
                .expect("GET list")
                .bytes()
                .await
                .expect("list body");
            line += &format!(
                "; GET /api/v1/applications{}: {} ms, {} KiB",
                if query.is_empty() { "" } else { "?fields=..." },
                t.elapsed().as_millis(),
                body.len() / 1024
            );
        }
        println!("{line}");
    }
    let out = tokio::process::Command::new("node")
        .arg("e2e/perf.mjs")
        .current_dir(&ui)
        .env("PLUMB_UI_URL", &base)
        .env("PLUMB_APPS", count.to_string())
        .env("PLUMB_CHROMIUM", &chromium)
        .output()
        .await
        .expect("node runs");
    let text = String::from_utf8_lossy(&out.stdout);
    println!("{text}{}", String::from_utf8_lossy(&out.stderr));
    server.shutdown().await;
    assert!(out.status.success() && text.contains("PASS"), "{text}");
}
