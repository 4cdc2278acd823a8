//! `plumb app ...` end to end against the real control plane, without a controller: what the
//! CLI writes and how it reads what is there. Each test gets its own namespace, used as the
//! control namespace (`-N`), with its own `default` AppProject.

use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use plumb_testenv::{TestEnv, TestNamespace};
use serde_json::{Value, json};

/// The shared control plane with the Application CRDs installed (once per process).
pub(crate) fn env() -> &'static TestEnv {
    static CRDS: OnceLock<()> = OnceLock::new();
    let env = TestEnv::shared();
    CRDS.get_or_init(|| env.install_plumb_crds());
    env
}

/// A namespace with the `default` AppProject in it.
pub(crate) fn control_namespace(prefix: &str) -> TestNamespace {
    let ns = env().namespace(prefix);
    kubectl_apply(&json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "AppProject",
        "metadata": {"name": "default", "namespace": ns.name()},
        "spec": {"sourceRepos": ["*"], "destinations": [{"namespace": "*", "server": "*"}],
                 "clusterResourceWhitelist": [{"group": "*", "kind": "*"}]}
    }));
    ns
}

pub(crate) fn kubectl_apply(obj: &Value) {
    plumb_testenv::process::kubectl_apply(env(), obj);
}

pub(crate) fn kubectl(args: &[&str]) -> Output {
    env().kubectl().args(args).output().unwrap()
}

pub(crate) fn app_json(ns: &str, name: &str) -> Option<Value> {
    let out = kubectl(&[
        "-n",
        ns,
        "get",
        "applications.argoproj.io",
        name,
        "-o",
        "json",
        "--ignore-not-found",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    if text.trim().is_empty() {
        None
    } else {
        Some(serde_json::from_str(&text).unwrap())
    }
}

pub(crate) fn patch_status(ns: &str, name: &str, patch: &Value) {
    let out = kubectl(&[
        "-n",
        ns,
        "patch",
        "applications.argoproj.io",
        name,
        "--subresource=status",
        "--type=merge",
        "-p",
        &patch.to_string(),
    ]);
    assert!(
        out.status.success(),
        "patching status: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

pub(crate) fn plumb(ns: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_plumb"))
        .arg("app")
        .args(args)
        .arg("--kubeconfig")
        .arg(env().kubeconfig())
        .args(["-N", ns])
        .env("TZ", "UTC")
        .env_remove("PLUMB_NAMESPACE")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

pub(crate) fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

pub(crate) fn create_payments(ns: &str) {
    let out = plumb(
        ns,
        &[
            "create",
            "payments-api",
            "--repo",
            "https://git.acme.internal/apps/payments.git",
            "--path",
            "k8s/overlays/prod",
            "--revision",
            "v1.4.0",
            "--dest-server",
            "https://kubernetes.default.svc",
            "--dest-namespace",
            "payments",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "application 'payments-api' created\n");
}

fn synced_healthy_status() -> Value {
    json!({"status": {
        "sync": {"status": "Synced", "revision": "9f3c1adf5c2b7e1a0d4c9b8e6f3a2d1c0b9a8f7e"},
        "health": {"status": "Healthy"},
        "reconciledAt": "2026-07-20T10:16:00Z",
        "resources": [
            {"version": "v1", "kind": "Service", "namespace": "payments", "name": "payments-api", "status": "Synced", "health": {"status": "Healthy"}},
            {"group": "apps", "version": "v1", "kind": "Deployment", "namespace": "payments", "name": "payments-api", "status": "Synced", "health": {"status": "Healthy"}}
        ]
    }})
}

#[test]
fn create_list_get_delete() {
    let ns = control_namespace("app-crud");
    let ns = ns.name();
    create_payments(ns);
    // Same spec again: unchanged; a different spec needs --upsert.
    let again = plumb(
        ns,
        &[
            "create",
            "payments-api",
            "--repo",
            "https://git.acme.internal/apps/payments.git",
            "--path",
            "k8s/overlays/prod",
            "--revision",
            "v1.4.0",
            "--dest-server",
            "https://kubernetes.default.svc",
            "--dest-namespace",
            "payments",
        ],
    );
    assert_eq!(
        text(&again.stdout),
        "application 'payments-api' unchanged\n",
        "{}",
        text(&again.stderr)
    );
    let changed = plumb(
        ns,
        &[
            "create",
            "payments-api",
            "--repo",
            "https://git.acme.internal/apps/payments.git",
            "--path",
            "k8s/overlays/prod",
            "--revision",
            "v1.5.0",
            "--dest-server",
            "https://kubernetes.default.svc",
            "--dest-namespace",
            "payments",
        ],
    );
    assert_eq!(changed.status.code(), Some(2));
    assert!(
        text(&changed.stderr)
            .contains("existing application spec is different, use upsert flag to force update")
    );
    let missing_project = plumb(
        ns,
        &[
            "create",
            "other",
            "--repo",
            "https://g/r.git",
            "--dest-name",
            "in-cluster",
            "--project",
            "nope",
        ],
    );
    assert_eq!(missing_project.status.code(), Some(2));
    assert!(
        text(&missing_project.stderr)
            .contains("Application referencing project nope which does not exist")
    );

    let list = plumb(ns, &["list"]);
    assert_eq!(list.status.code(), Some(0), "{}", text(&list.stderr));
    let expected = format!(
        "NAME                       CLUSTER                         NAMESPACE  PROJECT  STATUS  HEALTH  SYNCPOLICY  CONDITIONS  REPO                                          PATH               TARGET\n\
         {ns}/payments-api  https://kubernetes.default.svc  payments   default                  <none>      <none>      https://git.acme.internal/apps/payments.git  k8s/overlays/prod  v1.4.0\n"
    );
    // Column widths depend on the namespace name's length: compare cell by cell instead.
    let rows: Vec<Vec<String>> = text(&list.stdout)
        .lines()
        .map(|l| l.split_whitespace().map(String::from).collect())
        .collect();
    let want: Vec<Vec<String>> = expected
        .lines()
        .map(|l| l.split_whitespace().map(String::from).collect())
        .collect();
    assert_eq!(rows, want);
    let names = plumb(ns, &["list", "-o", "name"]);
    assert_eq!(text(&names.stdout), format!("{ns}/payments-api\n"));
    let none = plumb(ns, &["list", "-p", "other", "-o", "name"]);
    assert_eq!(text(&none.stdout), "");

    let get = plumb(ns, &["get", "payments-api"]);
    assert_eq!(get.status.code(), Some(0), "{}", text(&get.stderr));
    assert_eq!(
        text(&get.stdout),
        format!(
            "Name:               {ns}/payments-api\n\
             Project:            default\n\
             Server:             https://kubernetes.default.svc\n\
             Namespace:          payments\n\
             Source:\n\
             - Repo:             https://git.acme.internal/apps/payments.git\n\
             \x20 Target:           v1.4.0\n\
             \x20 Path:             k8s/overlays/prod\n\
             SyncWindow:         Sync Allowed\n\
             Sync Policy:        <none>\n\
             Sync Status:        \n\
             Health Status:      \n"
        )
    );
    let json_out = plumb(ns, &["get", "payments-api", "-o", "json"]);
    let v: Value = serde_json::from_slice(&json_out.stdout).unwrap();
    assert_eq!(v["spec"]["source"]["targetRevision"], "v1.4.0");

    // With status written as the controller would, the resource table appears.
    patch_status(ns, "payments-api", &synced_healthy_status());
    let get = plumb(ns, &["get", "payments-api"]);
    let out = text(&get.stdout);
    assert!(
        out.contains("Sync Status:        Synced to v1.4.0 (9f3c1ad)\n"),
        "{out}"
    );
    assert!(
        out.ends_with(
            "\nGROUP  KIND        NAMESPACE  NAME          STATUS  HEALTH   HOOK  MESSAGE\n\
         \x20      Service     payments   payments-api  Synced  Healthy        \n\
         apps   Deployment  payments   payments-api  Synced  Healthy        \n"
        ),
        "{out}"
    );
    let res = plumb(ns, &["resources", "payments-api"]);
    assert_eq!(
        text(&res.stdout),
        "GROUP  KIND        NAMESPACE  NAME          ORPHANED\n\
         \x20      Service     payments   payments-api  No\n\
         apps   Deployment  payments   payments-api  No\n"
    );

    let missing = plumb(ns, &["get", "nope"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(
        text(&missing.stderr).contains("application 'nope' not found"),
        "{}",
        text(&missing.stderr)
    );

    // Cascading delete: the finalizer is added and, with no controller to honour it, the
    // Application stays, marked for deletion.
    let del = plumb(ns, &["delete", "payments-api", "-y"]);
    assert_eq!(del.status.code(), Some(0), "{}", text(&del.stderr));
    assert_eq!(text(&del.stdout), "application 'payments-api' deleted\n");
    let left = app_json(ns, "payments-api").expect("held by the finalizer");
    assert_eq!(
        left["metadata"]["finalizers"],
        json!(["resources-finalizer.argocd.argoproj.io"])
    );
    assert!(left["metadata"]["deletionTimestamp"].is_string());
    // Non-cascading: the finalizer goes and so does the Application.
    let del = plumb(ns, &["delete", "payments-api", "--cascade=false", "-y"]);
    assert_eq!(del.status.code(), Some(0), "{}", text(&del.stderr));
    let gone = kubectl(&[
        "-n",
        ns,
        "wait",
        "--for=delete",
        "applications.argoproj.io/payments-api",
        "--timeout=30s",
    ]);
    assert!(
        gone.status.success() || app_json(ns, "payments-api").is_none(),
        "{}",
        text(&gone.stderr)
    );
    let refused = plumb(ns, &["delete", "payments-api"]);
    assert_eq!(refused.status.code(), Some(2));
}

#[test]
fn wait_times_out_without_a_controller() {
    let ns = control_namespace("app-wait-timeout");
    let ns = ns.name();
    create_payments(ns);
    let started = Instant::now();
    let out = plumb(ns, &["wait", "payments-api", "--timeout", "2"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(started.elapsed() >= Duration::from_secs(2));
    let stdout = text(&out.stdout);
    // The progress header comes with the first look that did not satisfy the conditions.
    assert!(stdout.starts_with("TIMESTAMP  "), "{stdout}");
    assert!(
        stdout.contains("\n\nThis is the state of the app after wait timed out:\n\nName:"),
        "{stdout}"
    );
    assert!(
        stdout.ends_with("\nThe command timed out waiting for the conditions to be met.\n"),
        "{stdout}"
    );
    assert_eq!(
        text(&out.stderr),
        "timed out (2s) waiting for app \"payments-api\" match desired state\n"
    );
    let missing = plumb(ns, &["wait", "nope", "--timeout", "2"]);
    assert_eq!(missing.status.code(), Some(2));
}

#[test]
fn wait_returns_at_once_when_already_satisfied() {
    let ns = control_namespace("app-wait-done");
    let ns = ns.name();
    create_payments(ns);
    patch_status(ns, "payments-api", &synced_healthy_status());
    let out = plumb(ns, &["wait", "payments-api", "--timeout", "60"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    // No progress header: Argo prints none when the conditions hold at the first look.
    assert!(
        stdout.starts_with(&format!("\nName:               {ns}/payments-api\n")),
        "{stdout}"
    );
    assert!(
        stdout.contains("Health Status:      Healthy\n\n\nGROUP  KIND"),
        "{stdout}"
    );
    // --sync alone on a Synced app, --suspended on a Healthy one (times out).
    assert_eq!(
        plumb(ns, &["wait", "payments-api", "--sync", "--timeout", "60"])
            .status
            .code(),
        Some(0)
    );
    assert_eq!(
        plumb(
            ns,
            &["wait", "payments-api", "--suspended", "--timeout", "1"]
        )
        .status
        .code(),
        Some(1)
    );
}

#[test]
fn wait_health_fails_fast_on_degraded() {
    let ns = control_namespace("app-wait-degraded");
    let ns = ns.name();
    create_payments(ns);
    let mut status = synced_healthy_status();
    status["status"]["health"]["status"] = json!("Progressing");
    status["status"]["resources"][1]["health"] = json!({"status": "Progressing", "message": "Waiting for rollout to finish: 0 of 3 updated replicas are available..."});
    patch_status(ns, "payments-api", &status);
    let mut child = Command::new(env!("CARGO_BIN_EXE_plumb"))
        .args([
            "app",
            "wait",
            "payments-api",
            "--health",
            "--timeout",
            "60",
            "-N",
            ns,
            "--kubeconfig",
        ])
        .arg(env().kubeconfig())
        .env("TZ", "UTC")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The first progress rows prove the watch saw the Progressing state; then it degrades.
    use std::io::{BufRead, Read};
    let mut reader = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut stdout = String::new();
    while !stdout.contains("Deployment") {
        let mut line = String::new();
        assert!(
            reader.read_line(&mut line).unwrap() > 0,
            "plumb exited before printing rows: {stdout}"
        );
        stdout.push_str(&line);
    }
    status["status"]["health"]["status"] = json!("Degraded");
    status["status"]["resources"][1]["health"] = json!({"status": "Degraded", "message": "Deployment \"payments-api\" exceeded its progress deadline"});
    patch_status(ns, "payments-api", &status);
    reader.read_to_string(&mut stdout).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stderr),
        "application 'payments-api' health state has transitioned from Progressing to Degraded\n"
    );
    assert!(stdout.starts_with("TIMESTAMP"), "{stdout}");
    assert!(
        stdout.contains("Waiting for rollout to finish: 0 of 3 updated replicas are available..."),
        "{stdout}"
    );
}

#[test]
fn sync_async_writes_the_operation_and_terminate_op_marks_it() {
    let ns = control_namespace("app-sync");
    let ns = ns.name();
    create_payments(ns);
    patch_status(ns, "payments-api", &synced_healthy_status());
    let out = plumb(
        ns,
        &[
            "sync",
            "payments-api",
            "--async",
            "--prune",
            "--revision",
            "v1.4.0",
            "--resource",
            "apps:Deployment:payments/payments-api",
            "--server-side",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "");
    let app = app_json(ns, "payments-api").unwrap();
    let username = app["operation"]["initiatedBy"]["username"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(!username.is_empty());
    assert_eq!(
        app["operation"],
        json!({"sync": {"revision": "v1.4.0", "prune": true, "dryRun": false, "syncStrategy": {"hook": {}},
                        "resources": [{"group": "apps", "kind": "Deployment", "name": "payments-api", "namespace": "payments"}],
                        "syncOptions": ["ServerSideApply=true"]},
               "initiatedBy": {"username": username}})
    );
    let busy = plumb(ns, &["sync", "payments-api", "--async"]);
    assert_eq!(busy.status.code(), Some(2));
    assert!(
        text(&busy.stderr).contains("another operation is already in progress"),
        "{}",
        text(&busy.stderr)
    );

    // No operation state yet: nothing to terminate.
    let early = plumb(ns, &["terminate-op", "payments-api"]);
    assert_eq!(early.status.code(), Some(2));
    assert!(text(&early.stderr).contains("No operation is in progress"));
    patch_status(
        ns,
        "payments-api",
        &json!({"status": {"operationState": {
        "operation": app["operation"].clone(), "phase": "Running", "startedAt": "2026-07-20T10:15:32Z",
        "message": "one or more tasks are running"}}}),
    );
    let term = plumb(ns, &["terminate-op", "payments-api"]);
    assert_eq!(term.status.code(), Some(0), "{}", text(&term.stderr));
    assert_eq!(
        text(&term.stdout),
        "Application 'payments-api' operation terminating\n"
    );
    let app = app_json(ns, "payments-api").unwrap();
    assert_eq!(app["status"]["operationState"]["phase"], "Terminating");
    assert_eq!(
        app["status"]["operationState"]["message"],
        "one or more tasks are running"
    );

    // A sync that waits (no --async) on an Application with an operation pending times out.
    let timed = plumb(ns, &["sync", "payments-api", "--timeout", "1"]);
    assert_eq!(
        timed.status.code(),
        Some(2),
        "the pending operation is refused before waiting"
    );
}

/// `plumb app ...` with `input` on stdin and a cache of its own (the comparison renders Git).
fn plumb_with_stdin(ns: &str, cache: &std::path::Path, args: &[&str], input: &str) -> Output {
    plumb_testenv::process::output_with_stdin(
        Command::new(env!("CARGO_BIN_EXE_plumb"))
            .arg("app")
            .args(args)
            .arg("--kubeconfig")
            .arg(env().kubeconfig())
            .args(["-N", ns])
            .env("TZ", "UTC")
            .env("PLUMB_CACHE_DIR", cache)
            .env_remove("PLUMB_NAMESPACE")
            .env_remove("KUBECTL_EXTERNAL_DIFF"),
        input,
    )
}

/// `--preview-changes` prints exactly what `app diff` prints, between Argo's heading and
/// question, and requests nothing unless the answer is yes (no controller runs here: the
/// comparison is the CLI's own).
#[test]
fn sync_preview_changes_asks_before_requesting() {
    let ns = control_namespace("app-preview");
    let ns = ns.name();
    let dest = env().namespace("app-preview-dest");
    let cache = tempfile::tempdir().unwrap();
    let repo = plumb_testenv::git::GitRepo::named("payments");
    repo.commit(
        &[
            (
                "k8s/configmap.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: payments-api\ndata:\n  LOG_LEVEL: info\n  CURRENCY: EUR\n",
            ),
            (
                "k8s/service.yaml",
                "apiVersion: v1\nkind: Service\nmetadata:\n  name: payments-api\nspec:\n  selector:\n    app: payments-api\n  ports:\n  - name: http\n    port: 80\n    targetPort: 8080\n",
            ),
        ],
        "payments-api",
    );
    let run = |args: &[&str], input: &str| plumb_with_stdin(ns, cache.path(), args, input);
    let out = run(
        &[
            "create",
            "payments-api",
            "--repo",
            &repo.url(),
            "--path",
            "k8s",
            "--dest-server",
            "https://kubernetes.default.svc",
            "--dest-namespace",
            dest.name(),
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));

    let diff = run(&["diff", "payments-api"], "");
    assert_eq!(diff.status.code(), Some(1), "{}", text(&diff.stderr));
    let diff = text(&diff.stdout);
    assert!(
        diff.contains(&format!(
            "\n===== /ConfigMap {}/payments-api ======\n",
            dest.name()
        )) && diff.contains(&format!(
            "\n===== /Service {}/payments-api ======\n",
            dest.name()
        )),
        "{diff}"
    );
    let heading = format!(
        "====== Previewing differences between live and desired state of application {ns}/payments-api ======\n"
    );
    let question = format!(
        "Please review changes to application {ns}/payments-api shown above. Do you want to continue the sync process? (y/n): "
    );

    // No: exit 0, nothing requested.
    let out = run(&["sync", "payments-api", "--preview-changes"], "n\n");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), format!("{heading}{diff}{question}"));
    assert_eq!(text(&out.stderr), "");
    assert!(app_json(ns, "payments-api").unwrap()["operation"].is_null());

    // No answer at all is an error, not a yes.
    let out = run(&["sync", "payments-api", "--preview-changes"], "");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("no answer to the question (end of input)"),
        "{}",
        text(&out.stderr)
    );
    assert!(app_json(ns, "payments-api").unwrap()["operation"].is_null());

    // Anything but yes or no asks again; yes requests the sync.
    let out = run(
        &[
            "sync",
            "payments-api",
            "--preview-changes",
            "--async",
            "--prune",
        ],
        "maybe\nYes\n",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        format!("{heading}{diff}{question}{question}")
    );
    let app = app_json(ns, "payments-api").unwrap();
    assert_eq!(
        app["operation"]["sync"]["prune"], true,
        "{:#}",
        app["operation"]
    );

    // --assumeYes does not ask.
    let out = kubectl(&[
        "-n",
        ns,
        "patch",
        "applications.argoproj.io",
        "payments-api",
        "--type=json",
        "-p",
        r#"[{"op": "remove", "path": "/operation"}]"#,
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = run(
        &[
            "sync",
            "payments-api",
            "--preview-changes",
            "--assumeYes",
            "--async",
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), format!("{heading}{diff}"));
    assert!(!app_json(ns, "payments-api").unwrap()["operation"].is_null());
}
