//! The CLI through `plumb server`: `plumb login`, contexts in the config file, and `plumb app
//! list/get/sync/diff/manifests` over the REST API on a Kustomize Application, with no
//! kustomize, no helm and no kubeconfig for the CLI: the server and the controller render.

use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use plumb_testenv::git::GitRepo;
use plumb_testenv::process::{initial_admin_password, listening_addr};
use serde_json::json;

use crate::app::{control_namespace, env, kubectl_apply, text};

pub(crate) struct Killed(pub(crate) Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_server(ns: &str, cache: &Path, plugins: &Path) -> (Killed, SocketAddr) {
    start_server_with(ns, cache, plugins, &["--metrics-addr", "off"])
}

/// `plumb server` over the control namespace `ns` with `extra` flags.
pub(crate) fn start_server_with(
    ns: &str,
    cache: &Path,
    plugins: &Path,
    extra: &[&str],
) -> (Killed, SocketAddr) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_plumb"))
        .args(["server", "--listen", "127.0.0.1:0", "-n", ns])
        .args(extra)
        .arg("--kubeconfig")
        .arg(env().kubeconfig())
        .arg("--cache-dir")
        .arg(cache)
        .env("PLUMB_HELM", plumb_testenv::tools::helm())
        .env("PLUMB_KUSTOMIZE", plumb_testenv::tools::kustomize())
        .env("PLUMB_PLUGIN_DIR", plugins)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (addr, _log) = listening_addr(&mut child);
    (Killed(child), addr)
}

/// `plumb login SERVER` as admin with `password` (`--insecure`: the generated certificate).
pub(crate) fn login_admin(home: &Path, server: &str, password: &str) -> Output {
    remote(
        home,
        &[
            "login",
            server,
            "--username",
            "admin",
            "--password",
            password,
            "--insecure",
        ],
    )
}

/// `plumb ARGS` as a user without cluster credentials or render tools: HOME is a fresh
/// directory, PATH holds nothing, no KUBECONFIG.
pub(crate) fn remote(home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_plumb"))
        .args(args)
        .env_clear()
        .env("HOME", home)
        .env("PATH", home.join("empty-bin"))
        .env("TZ", "UTC")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// [`remote`] with `$EDITOR` set.
fn remote_editing(home: &Path, editor: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_plumb"))
        .args(args)
        .env_clear()
        .env("HOME", home)
        .env("PATH", home.join("empty-bin"))
        .env("TZ", "UTC")
        .env("EDITOR", editor)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// The live object as JSON, through kubectl (the test's view, not the CLI's).
fn live(ns: &str, kind: &str, name: &str) -> Option<serde_json::Value> {
    let out = env()
        .kubectl()
        .args(["-n", ns, "get", kind, name, "-o", "json"])
        .output()
        .unwrap();
    out.status
        .success()
        .then(|| serde_json::from_slice(&out.stdout).unwrap())
}

pub(crate) fn all(o: &Output) -> String {
    format!("{}{}", text(&o.stdout), text(&o.stderr))
}

/// `GET /api/version` (Argo's `VersionMessage`) answers a logged-in caller what `plumb version`
/// prints: one build stamp for both, and the helm and kustomize the server was started with. An
/// anonymous caller gets the version, platform and compiler only.
fn server_version_is_the_binarys(server: &str, token: &str) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let get = |token: Option<&str>| {
        rt.block_on(async {
            let http = reqwest::Client::builder()
                .danger_accept_invalid_certs(true)
                .build()
                .unwrap();
            let mut req = http.get(format!("https://{server}/api/version"));
            if let Some(t) = token {
                req = req.bearer_auth(t);
            }
            let res = req.send().await.unwrap();
            assert_eq!(res.status(), 200);
            let body = res.text().await.unwrap();
            serde_json::from_str::<serde_json::Value>(&body).unwrap()
        })
    };
    let anonymous = get(None);
    let mut keys: Vec<&String> = anonymous.as_object().unwrap().keys().collect();
    keys.sort();
    assert_eq!(keys, ["Compiler", "Platform", "Version"], "{anonymous}");
    let served = get(Some(token));
    let out = Command::new(env!("CARGO_BIN_EXE_plumb"))
        .args(["version", "--client", "-o", "json"])
        .env("PLUMB_HELM", plumb_testenv::tools::helm())
        .env("PLUMB_KUSTOMIZE", plumb_testenv::tools::kustomize())
        .output()
        .unwrap();
    let client: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for (argo, ours) in [
        ("Version", "version"),
        ("BuildDate", "buildDate"),
        ("GitCommit", "gitCommit"),
        ("GitTreeState", "gitTreeState"),
        ("Compiler", "compiler"),
        ("Platform", "platform"),
        ("HelmVersion", "helmVersion"),
        ("KustomizeVersion", "kustomizeVersion"),
    ] {
        assert_eq!(served[argo], client[0][ours], "{argo}: {served} {client}");
    }
    assert!(
        served["HelmVersion"].as_str().unwrap().starts_with('v'),
        "{served}"
    );
}

#[test]
fn app_commands_through_the_server_need_no_local_kustomize() {
    let ctl = control_namespace("server-cli");
    let dest = env().namespace("server-cli-dest");
    let repo = GitRepo::named("server-cli");
    repo.commit(
        &[
            (
                "kust/kustomization.yaml",
                "resources:\n- cm.yaml\n- deploy.yaml\nnamePrefix: prod-\ncommonLabels:\n  tier: web\n",
            ),
            (
                "kust/deploy.yaml",
                "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: api\nspec:\n  replicas: 1\n  selector:\n    matchLabels:\n      app: api\n  template:\n    metadata:\n      labels:\n        app: api\n    spec:\n      containers:\n      - name: api\n        image: registry.example/api:v1\n",
            ),
            (
                "kust/cm.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  color: blue\n",
            ),
        ],
        "kustomize app",
    );
    repo.commit(&[("plugin/color.properties", "teal")], "plugin app");
    let cache = tempfile::tempdir().unwrap();
    let metrics_port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let _controller = Killed(
        Command::new(env!("CARGO_BIN_EXE_plumb"))
            .args(["controller", "-n", ctl.name()])
            .args(["--metrics-addr", &format!("127.0.0.1:{metrics_port}")])
            .arg("--kubeconfig")
            .arg(env().kubeconfig())
            .arg("--cache-dir")
            .arg(cache.path().join("controller"))
            .env("PLUMB_HELM", plumb_testenv::tools::helm())
            .env("PLUMB_KUSTOMIZE", plumb_testenv::tools::kustomize())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    // A config management plugin for the server (PLUMB_PLUGIN_DIR, as the controller's).
    let plugins = tempfile::tempdir().unwrap();
    std::fs::write(
        plugins.path().join("cm-gen.yaml"),
        "apiVersion: argoproj.io/v1alpha1\nkind: ConfigManagementPlugin\nmetadata:\n  name: cm-gen\nspec:\n  version: v1.0\n  generate:\n    command: [sh, -c]\n    args:\n    - |\n      echo \"apiVersion: v1\"\n      echo \"kind: ConfigMap\"\n      echo \"metadata: {name: ${ARGOCD_APP_NAME}-generated}\"\n      echo \"data: {color: '$(cat color.properties)'}\"\n  discover:\n    fileName: \"*.properties\"\n",
    )
    .unwrap();
    let (_server, addr) = start_server(ctl.name(), &cache.path().join("server"), plugins.path());
    kubectl_apply(&json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": "server-cli-web", "namespace": ctl.name()},
        "spec": {"project": "default",
                 "source": {"repoURL": repo.url(), "path": "kust", "targetRevision": "HEAD"},
                 "destination": {"server": "https://kubernetes.default.svc", "namespace": dest.name()}}
    }));
    let home = tempfile::tempdir().unwrap();
    let server = addr.to_string();

    // Without a context and without a kubeconfig the CLI has nothing to talk to.
    let out = remote(home.path(), &["app", "list"]);
    assert!(!out.status.success(), "{}", all(&out));

    // The admin password from argocd-initial-admin-secret, as with Argo CD.
    let password = initial_admin_password(env(), ctl.name());
    let out = remote(
        home.path(),
        &[
            "login",
            &server,
            "--username",
            "admin",
            "--password",
            "wrong",
            "--insecure",
        ],
    );
    assert!(!out.status.success());
    assert!(
        all(&out).contains("Invalid username or password"),
        "{}",
        all(&out)
    );
    let out = login_admin(home.path(), &server, &password);
    assert!(out.status.success(), "{}", all(&out));
    assert_eq!(
        text(&out.stdout),
        format!("'admin' logged in successfully\nContext '{server}' updated\n")
    );
    let config = std::fs::read_to_string(home.path().join(".config/plumb/config")).unwrap();
    assert!(
        config.contains(&format!("current-context: {server}")),
        "{config}"
    );
    assert!(config.contains("auth-token: "), "{config}");
    let token = config
        .split_once("auth-token: ")
        .and_then(|(_, rest)| rest.lines().next())
        .expect("auth-token in the config")
        .trim();
    server_version_is_the_binarys(&server, token.trim_matches('"'));
    let out = remote(home.path(), &["context"]);
    assert!(
        text(&out.stdout).contains(&format!("*         {server}")),
        "{}",
        all(&out)
    );

    // list and get through the server; get prints URL: as Argo CD does with a server.
    let out = remote(home.path(), &["app", "list", "-o", "name"]);
    assert!(out.status.success(), "{}", all(&out));
    assert_eq!(
        text(&out.stdout).trim(),
        format!("{}/server-cli-web", ctl.name())
    );
    let out = remote(home.path(), &["app", "get", "server-cli-web"]);
    assert!(out.status.success(), "{}", all(&out));
    assert!(
        text(&out.stdout).contains(&format!(
            "URL:                https://{server}/applications/server-cli-web"
        )),
        "{}",
        all(&out)
    );

    // manifests and diff: rendered by the server with its kustomize.
    let out = remote(home.path(), &["app", "manifests", "server-cli-web"]);
    assert!(out.status.success(), "{}", all(&out));
    let manifests = text(&out.stdout);
    assert!(
        manifests.contains("name: prod-settings") && manifests.contains("tier: web"),
        "{manifests}"
    );
    let out = remote(home.path(), &["app", "diff", "server-cli-web"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "a difference before the sync: {}",
        all(&out)
    );
    assert!(
        text(&out.stdout).contains("===== /ConfigMap "),
        "{}",
        all(&out)
    );
    assert!(
        text(&out.stdout).contains("> data:") || text(&out.stdout).contains(">   color: blue"),
        "{}",
        all(&out)
    );

    // sync through the server, followed to the end.
    let out = remote(
        home.path(),
        &["app", "sync", "server-cli-web", "--timeout", "120"],
    );
    assert!(out.status.success(), "{}", all(&out));
    assert!(
        text(&out.stdout).contains("Sync Status:        Synced"),
        "{}",
        all(&out)
    );
    let out = remote(home.path(), &["app", "diff", "server-cli-web"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "no difference after the sync: {}",
        all(&out)
    );

    // Core mode needs the tools the server has: the same command without the server (git on
    // PATH, no kustomize) fails for want of kustomize, so the above really used the server's.
    let git_dir = Path::new(
        &String::from_utf8(
            Command::new("sh")
                .args(["-c", "command -v git"])
                .output()
                .unwrap()
                .stdout,
        )
        .unwrap()
        .trim()
        .to_string(),
    )
    .parent()
    .unwrap()
    .to_path_buf();
    let out = Command::new(env!("CARGO_BIN_EXE_plumb"))
        .args([
            "app",
            "manifests",
            "server-cli-web",
            "--core",
            "-N",
            ctl.name(),
        ])
        .arg("--kubeconfig")
        .arg(env().kubeconfig())
        .env("HOME", home.path())
        .env("PATH", &git_dir)
        .env_remove("PLUMB_KUSTOMIZE")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(all(&out).contains("kustomize"), "{}", all(&out));

    // proj verbs and sync flags through the server, still without a kubeconfig.
    let dest_flag = format!("https://kubernetes.default.svc,{}", dest.name());
    let ok = |args: &[&str]| {
        let out = remote(home.path(), args);
        assert!(
            out.status.success(),
            "plumb {}: {}",
            args.join(" "),
            all(&out)
        );
        text(&out.stdout)
    };
    ok(&["proj", "create", "team", "--dest", &dest_flag, "--src", "*"]);
    assert!(ok(&["proj", "list"]).contains("team"));
    assert!(ok(&["proj", "get", "team"]).contains(dest.name()));
    // `proj edit` through the server: the spec in $EDITOR, written back by the server.
    let proj_editor = home.path().join("proj-editor.sh");
    std::fs::write(
        &proj_editor,
        "#!/bin/sh\nprintf 'description: edited through the server\\n' >> \"$1\"\n",
    )
    .unwrap();
    std::fs::set_permissions(
        &proj_editor,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let out = remote_editing(home.path(), &proj_editor, &["proj", "edit", "team"]);
    assert!(out.status.success(), "{}", all(&out));
    let team = live(ctl.name(), "appprojects.argoproj.io", "team").expect("team");
    assert_eq!(team["spec"]["description"], "edited through the server");
    assert_eq!(team["spec"]["sourceRepos"], json!(["*"]), "{team}");
    let synced = ok(&[
        "app",
        "sync",
        "server-cli-web",
        "--resource",
        ":ConfigMap:prod-settings",
        "--server-side",
        "--timeout",
        "120",
    ]);
    assert!(synced.contains("prod-settings"), "{synced}");
    // A new password: the context's session is renewed with it.
    let changed = ok(&[
        "account",
        "update-password",
        "--current-password",
        &password,
        "--new-password",
        "a-new-admin-pw",
    ]);
    assert!(changed.contains("Password updated"), "{changed}");
    ok(&["app", "list"]);

    // A plugin Application renders through the server with the server's --plugin-dir.
    kubectl_apply(&json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": "server-cli-plugin", "namespace": ctl.name()},
        "spec": {"project": "default",
                 "source": {"repoURL": repo.url(), "path": "plugin", "targetRevision": "HEAD",
                            "plugin": {"name": "cm-gen-v1.0"}},
                 "destination": {"server": "https://kubernetes.default.svc", "namespace": dest.name()}}
    }));
    let rendered = ok(&["app", "manifests", "server-cli-plugin"]);
    assert!(
        rendered.contains("name: server-cli-plugin-generated") && rendered.contains("color: teal"),
        "{rendered}"
    );

    // Every other app verb through the server, still without a kubeconfig or local tools.
    let fails = |args: &[&str]| {
        let out = remote(home.path(), args);
        assert!(
            !out.status.success(),
            "plumb {} should fail: {}",
            args.join(" "),
            all(&out)
        );
        all(&out)
    };
    let created = ok(&[
        "app",
        "create",
        "server-cli-created",
        "--repo",
        &repo.url(),
        "--path",
        "kust",
        "--dest-server",
        "https://kubernetes.default.svc",
        "--dest-namespace",
        dest.name(),
        "--nameprefix",
        "created-",
    ]);
    assert_eq!(created, "application 'server-cli-created' created\n");
    // An unreachable repository is refused at create (Argo's ValidateRepo), unless
    // `--validate=false`.
    let unreachable = [
        "app",
        "create",
        "server-cli-unreachable",
        "--repo",
        "https://127.0.0.1:9/nowhere.git",
        "--path",
        ".",
        "--dest-server",
        "https://kubernetes.default.svc",
        "--dest-namespace",
        dest.name(),
    ];
    let refused = fails(&unreachable);
    assert!(
        refused.contains(
            "application spec for server-cli-unreachable is invalid: InvalidSpecError: repository not accessible"
        ),
        "{refused}"
    );
    let skipped = ok(&[&unreachable[..], &["--validate=false"]].concat());
    assert_eq!(skipped, "application 'server-cli-unreachable' created\n");
    ok(&[
        "app",
        "delete",
        "server-cli-unreachable",
        "--cascade=false",
        "-y",
    ]);
    let again = remote(
        home.path(),
        &[
            "app",
            "create",
            "server-cli-created",
            "--repo",
            &repo.url(),
            "--path",
            "kust",
            "--dest-server",
            "https://kubernetes.default.svc",
            "--dest-namespace",
            dest.name(),
        ],
    );
    assert!(
        !again.status.success(),
        "a different spec without --upsert: {}",
        all(&again)
    );
    let app_of = |name: &str| {
        serde_json::from_str::<serde_json::Value>(&ok(&["app", "get", name, "-o", "json"])).unwrap()
    };
    ok(&[
        "app",
        "set",
        "server-cli-created",
        "--revision",
        "main",
        "--sync-option",
        "CreateNamespace=true",
    ]);
    let got = app_of("server-cli-created");
    assert_eq!(got["spec"]["source"]["targetRevision"], "main");
    assert_eq!(
        got["spec"]["syncPolicy"]["syncOptions"],
        json!(["CreateNamespace=true"])
    );
    ok(&["app", "unset", "server-cli-created", "--nameprefix"]);
    assert!(app_of("server-cli-created")["spec"]["source"]["kustomize"]["namePrefix"].is_null());
    ok(&[
        "app",
        "patch",
        "server-cli-created",
        "--patch",
        r#"{"spec": {"revisionHistoryLimit": 3}}"#,
        "--type",
        "merge",
    ]);
    assert_eq!(
        app_of("server-cli-created")["spec"]["revisionHistoryLimit"],
        3
    );
    let editor = home.path().join("editor.sh");
    std::fs::write(
        &editor,
        "#!/bin/sh\nexec /bin/sed -i 's/revisionHistoryLimit: 3/revisionHistoryLimit: 4/' \"$1\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&editor, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let out = remote_editing(home.path(), &editor, &["app", "edit", "server-cli-created"]);
    assert!(out.status.success(), "{}", all(&out));
    assert_eq!(
        app_of("server-cli-created")["spec"]["revisionHistoryLimit"],
        4
    );
    // A project that does not exist is refused by the server, with Argo's text.
    let refused = fails(&["app", "set", "server-cli-created", "--project", "nope"]);
    assert!(refused.contains("nope"), "{refused}");
    let deleted = ok(&["app", "delete", "server-cli-created", "-y"]);
    assert_eq!(deleted, "application 'server-cli-created' deleted\n");
    ok(&[
        "app",
        "wait",
        "server-cli-created",
        "--delete",
        "--timeout",
        "120",
    ]);

    let history = ok(&["app", "history", "server-cli-web"]);
    assert!(
        history.starts_with(&format!("SOURCE  {}\n", repo.url())),
        "{history}"
    );
    let resources = ok(&["app", "resources", "server-cli-web"]);
    assert!(
        resources.contains("prod-settings") && resources.contains("prod-api"),
        "{resources}"
    );
    ok(&[
        "app",
        "wait",
        "server-cli-web",
        "--sync",
        "--timeout",
        "120",
    ]);
    let refused = fails(&["app", "terminate-op", "server-cli-web"]);
    assert!(refused.contains("No operation is in progress"), "{refused}");
    let rolled = ok(&["app", "rollback", "server-cli-web", "0", "--timeout", "120"]);
    assert!(rolled.contains("Operation:          Sync"), "{rolled}");

    // Live resources through the server's resource routes.
    let listed = ok(&[
        "app",
        "actions",
        "list",
        "server-cli-web",
        "--kind",
        "Deployment",
    ]);
    assert!(
        listed.contains("apps   Deployment  prod-api  restart") && listed.contains("scale"),
        "{listed}"
    );
    ok(&[
        "app",
        "actions",
        "run",
        "server-cli-web",
        "scale",
        "--kind",
        "Deployment",
        "--param",
        "replicas=2",
    ]);
    let d = live(dest.name(), "deployment", "prod-api").expect("Deployment");
    assert_eq!(d["spec"]["replicas"], 2);
    let patched = remote(
        home.path(),
        &[
            "app",
            "patch-resource",
            "server-cli-web",
            "--kind",
            "ConfigMap",
            "--patch",
            r#"{"data": {"color": "green"}}"#,
        ],
    );
    assert!(patched.status.success(), "{}", all(&patched));
    assert_eq!(text(&patched.stderr), "Resource 'prod-settings' patched\n");
    let cm = live(dest.name(), "configmap", "prod-settings").expect("ConfigMap");
    assert_eq!(cm["data"]["color"], "green");
    // Pod logs of the Deployment's Pods, through the server.
    let deadline = Instant::now() + Duration::from_secs(120);
    let pod = loop {
        let out = env()
            .kubectl()
            .args([
                "-n",
                dest.name(),
                "get",
                "pods",
                "-l",
                "app=api",
                "-o",
                "jsonpath={.items[0].metadata.name}",
            ])
            .output()
            .unwrap();
        let name = text(&out.stdout).trim().to_string();
        if !name.is_empty() {
            break name;
        }
        assert!(Instant::now() < deadline, "no Pod of prod-api");
        std::thread::sleep(Duration::from_millis(300));
    };
    let logs_dir = tempfile::tempdir().unwrap();
    let file = plumb_testenv::pod_logs::LogFile::create(
        logs_dir.path(),
        "api.log",
        &[plumb_testenv::pod_logs::LogLine {
            time: "2026-12-01T10:00:00.000000000Z",
            stream: plumb_testenv::pod_logs::Stream::Stdout,
            text: "api listening on :8080",
        }],
    );
    env().set_pod_logs(dest.name(), &pod, &[(&[], &file)]);
    let logs = ok(&[
        "app",
        "logs",
        "server-cli-web",
        "--kind",
        "Deployment",
        "--name",
        "prod-api",
    ]);
    assert!(logs.contains("api listening on :8080"), "{logs}");
    let deleted = remote(
        home.path(),
        &[
            "app",
            "delete-resource",
            "server-cli-web",
            "--kind",
            "ConfigMap",
            "--resource-name",
            "prod-settings",
        ],
    );
    assert!(deleted.status.success(), "{}", all(&deleted));
    assert_eq!(text(&deleted.stderr), "Resource 'prod-settings' deleted\n");
    let deadline = Instant::now() + Duration::from_secs(60);
    while live(dest.name(), "configmap", "prod-settings").is_some() {
        assert!(Instant::now() < deadline, "ConfigMap deleted");
        std::thread::sleep(Duration::from_millis(200));
    }

    // logout forgets (and revokes) the token: the next call is refused.
    let out = remote(home.path(), &["logout"]);
    assert!(out.status.success(), "{}", all(&out));
    let out = remote(home.path(), &["app", "list"]);
    assert!(!out.status.success());
    assert!(all(&out).contains("401"), "{}", all(&out));
}
