//! The installed Plumb runs: the image `scripts/image` builds (`PLUMB_TEST_IMAGE`), its own files
//! run under runc as `deploy/`'s Deployments describe the controller and the server (user,
//! read-only root, no privilege escalation, no capabilities, a `RuntimeDefault`-like seccomp
//! profile, emptyDir volumes), against the test control plane with the ServiceAccount
//! tokens of `deploy/`'s RBAC from the TokenRequest API and the in-cluster configuration a Pod
//! gets, never the admin kubeconfig. They sync Applications rendered by Helm and Kustomize from Git
//! over SSH (key in a repository Secret, host key in `argocd-ssh-known-hosts-cm`), one by
//! automated sync in the controller, one by `plumb app sync` through the server. A rule missing
//! from `deploy/`'s RBAC, a tool missing from the image or a file the container cannot write
//! fails this test with the error the container logged.
//!
//! Needs root (runc), umoci and runc (Debian packages), and `PLUMB_TEST_IMAGE`: `scripts/test`
//! builds the image and sets it. See docs/testing.md, "The image under runc".

// Test helpers outside #[test] functions panic on bad fixtures, which is what a test wants.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod container;
mod deploy;
mod image;
mod seccomp;

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use plumb_testenv::TestEnv;
use plumb_testenv::git::GitRepo;
use plumb_testenv::git_ssh::GitSshServer;
use plumb_testenv::process::{initial_admin_password, kubectl_apply};
use serde_json::{Value, json};

use container::{Container, Credentials};

/// How long a container may take to answer its probes, and an Application to become Synced and
/// Healthy. Deadlines, not timing assertions: a healthy run takes a fraction of them.
const DEADLINE: Duration = Duration::from_secs(180);

const CHART: &[(&str, &str)] = &[
    (
        "helm/Chart.yaml",
        "apiVersion: v2\nname: greeting\nversion: 0.1.0\n",
    ),
    ("helm/values.yaml", "greeting: hello\n"),
    (
        "helm/templates/cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-greeting\n\
         data:\n  greeting: {{ .Values.greeting | quote }}\n",
    ),
    (
        "kustomize/kustomization.yaml",
        "resources:\n- cm.yaml\nnamePrefix: kust-\ncommonLabels:\n  tier: web\n",
    ),
    (
        "kustomize/cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  color: blue\n",
    ),
];

#[test]
fn the_image_runs_controller_and_server_under_runc_with_deploys_rbac() {
    let image = image::Image::from_env();
    let env = TestEnv::shared();
    let ns = env.namespace("runc-install");
    let dest = env.namespace("runc-dest");
    let install = deploy::Install::apply(env, ns.name());
    let repo = GitRepo::named("runc-install");
    repo.commit(CHART, "a chart and a kustomization");
    let ssh = GitSshServer::serve(&repo);
    repository_over_ssh(ns.name(), &ssh);

    let (server_url, ca) = env.api_server();
    let api_port = server_url
        .rsplit(':')
        .next()
        .and_then(|p| p.trim_end_matches('/').parse::<u16>().ok())
        .unwrap_or_else(|| panic!("no port in the API server URL {server_url}"));
    let start = |name: &str| {
        let workload = install.workload(name);
        let account = workload["spec"]["template"]["spec"]["serviceAccountName"]
            .as_str()
            .unwrap_or_else(|| panic!("{name}: no serviceAccountName"));
        let creds = Credentials {
            namespace: ns.name(),
            api_port,
            ca_pem: &ca,
            token: install.token(ns.name(), account),
        };
        Container::start(&image, workload, creds)
    };
    let controller = start("plumb-controller");
    let server = start("plumb-server");
    controller.wait_probes(DEADLINE);
    server.wait_probes(DEADLINE);
    let https = server.flag_port("--listen");
    for path in ["/healthz", "/readyz"] {
        let url = format!("https://127.0.0.1:{https}{path}");
        server.wait_http(&url, DEADLINE, &url);
    }

    create_app(
        ns.name(),
        "runc-helm",
        &ssh.url(),
        "helm",
        dest.name(),
        true,
    );
    create_app(
        ns.name(),
        "runc-kustomize",
        &ssh.url(),
        "kustomize",
        dest.name(),
        false,
    );
    let apps = [&controller, &server];
    wait_app(env, ns.name(), "runc-helm", &apps);
    let cm = configmap(env, dest.name(), "runc-helm-greeting");
    assert_eq!(cm["data"]["greeting"], "from-the-app", "{cm}");

    through_the_server(env, ns.name(), &format!("127.0.0.1:{https}"), &apps);
    let cm = configmap(env, dest.name(), "kust-settings");
    assert_eq!(cm["metadata"]["labels"]["tier"], "web", "{cm}");
    wait_app(env, ns.name(), "runc-kustomize", &apps);

    controller.assert_running();
    server.assert_running();
    // A denial the flow above survived (a retried watch, an Event not recorded) is still a
    // rule missing from deploy/: the API server's words are in the log.
    for c in apps {
        let denied: Vec<String> = c
            .log()
            .lines()
            .filter(|l| l.contains(" is forbidden: "))
            .map(str::to_owned)
            .collect();
        assert!(
            denied.is_empty(),
            "{} was refused by the API server under deploy/'s RBAC:\n{}",
            c.name,
            denied.join("\n")
        );
    }
    // The kubelet stops a Pod with SIGTERM and kills it after the grace period.
    controller.stop_gracefully();
    server.stop_gracefully();
}

/// The Git repository's SSH key in a repository Secret and the server's host key in
/// `argocd-ssh-known-hosts-cm`, as a user declares them for Argo CD.
fn repository_over_ssh(ns: &str, ssh: &GitSshServer) {
    kubectl_apply(
        TestEnv::shared(),
        &json!({
            "apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "repo-runc-install", "namespace": ns,
                         "labels": {"argocd.argoproj.io/secret-type": "repository"}},
            "stringData": {"type": "git", "url": ssh.url(), "sshPrivateKey": ssh.private_key()}
        }),
    );
    kubectl_apply(
        TestEnv::shared(),
        &json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "argocd-ssh-known-hosts-cm", "namespace": ns},
            "data": {"ssh_known_hosts": ssh.known_hosts_line()}
        }),
    );
}

fn create_app(ns: &str, name: &str, repo_url: &str, path: &str, dest: &str, automated: bool) {
    let mut source = json!({"repoURL": repo_url, "path": path, "targetRevision": "HEAD"});
    if path == "helm" {
        source["helm"] = json!({"parameters": [{"name": "greeting", "value": "from-the-app"}]});
    }
    let policy = if automated {
        json!({"automated": {"prune": true, "selfHeal": true}})
    } else {
        json!({})
    };
    kubectl_apply(
        TestEnv::shared(),
        &json!({
            "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"project": "default", "source": source,
                     "destination": {"server": "https://kubernetes.default.svc", "namespace": dest},
                     "syncPolicy": policy}
        }),
    );
}

/// Logs in as admin (the password the server in the container generated), reads the
/// Applications, renders one with the server's helm, and syncs the Kustomize one, all through
/// the server's API.
fn through_the_server(env: &TestEnv, ns: &str, server: &str, apps: &[&Container]) {
    let home = tempfile::tempdir().unwrap();
    let password = initial_admin_password(env, ns);
    let cli = |args: &[&str]| -> String {
        let out = remote(home.path(), args);
        assert!(
            out.status.success(),
            "plumb {}: {}{}\n{}",
            args.join(" "),
            text(&out.stdout),
            text(&out.stderr),
            logs(apps)
        );
        text(&out.stdout)
    };
    cli(&[
        "login",
        server,
        "--username",
        "admin",
        "--password",
        &password,
        "--insecure",
    ]);
    let listed = cli(&["app", "list", "-o", "name"]);
    assert_eq!(
        listed.lines().collect::<Vec<_>>(),
        [format!("{ns}/runc-helm"), format!("{ns}/runc-kustomize")],
        "{listed}"
    );
    let manifests = cli(&["app", "manifests", "runc-helm"]);
    assert!(
        manifests.contains("name: runc-helm-greeting") && manifests.contains("from-the-app"),
        "{manifests}"
    );
    cli(&["app", "sync", "runc-kustomize", "--timeout", "180"]);
}

/// `plumb ARGS` as a user with only the server: HOME is a fresh directory, no PATH, no
/// KUBECONFIG.
fn remote(home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_plumb"))
        .args(args)
        .env_clear()
        .env("HOME", home)
        .env("PATH", home.join("empty-bin"))
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn logs(apps: &[&Container]) -> String {
    apps.iter()
        .map(|c| format!("---- {} ({}) ----\n{}\n", c.name, c.status(), c.log_tail()))
        .collect()
}

/// Waits until the Application is Synced and Healthy (read with the admin client: the test's
/// view, not the containers').
fn wait_app(env: &TestEnv, ns: &str, name: &str, apps: &[&Container]) {
    let end = Instant::now() + DEADLINE;
    let mut last = Value::Null;
    loop {
        let out = env
            .kubectl()
            .args([
                "-n",
                ns,
                "get",
                "applications.argoproj.io",
                name,
                "-o",
                "json",
            ])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        if out.status.success() {
            last = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
            let status = &last["status"];
            if status["sync"]["status"] == "Synced" && status["health"]["status"] == "Healthy" {
                return;
            }
        }
        for c in apps {
            c.assert_running();
        }
        assert!(
            Instant::now() < end,
            "{name}: not Synced and Healthy within {DEADLINE:?}\nstatus: {}\n{}",
            serde_json::to_string_pretty(&last["status"]).unwrap_or_default(),
            logs(apps)
        );
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// A ConfigMap the Applications created, which must exist.
fn configmap(env: &TestEnv, ns: &str, name: &str) -> Value {
    let out = env
        .kubectl()
        .args(["-n", ns, "get", "configmap", name, "-o", "json"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "ConfigMap {ns}/{name}: {}",
        text(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}
