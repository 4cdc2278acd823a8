//! The CLI prints the same through `plumb server` as in core mode: `app get -o tree` (the
//! server's resource tree), `app diff --revision` in every `--diff-format`, `app sync
//! --preview-changes`; and `app wait` / `app sync` through the server follow the server's watch
//! stream (they open it; they still time out with Argo's message). A plain-directory
//! Application, so core mode needs no render tools either; the server-mode CLI has no
//! kubeconfig and an empty PATH.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use plumb_testenv::git::GitRepo;
use plumb_testenv::process::{initial_admin_password, output_with_stdin};
use serde_json::json;

use crate::app::{app_json, control_namespace, env, kubectl_apply, text};
use crate::server_cli::{Killed, all, login_admin, remote, start_server_with};

const APP: &str = "srv-parity-web";

fn files(color: &str, image: &str) -> Vec<(&'static str, String)> {
    vec![
        (
            "app/cm.yaml",
            format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: parity-settings\ndata:\n  color: {color}\n"
            ),
        ),
        (
            "app/deploy.yaml",
            format!(
                "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: parity-api\nspec:\n  replicas: 1\n  selector:\n    matchLabels:\n      app: parity-api\n  template:\n    metadata:\n      labels:\n        app: parity-api\n    spec:\n      containers:\n      - name: api\n        image: {image}\n"
            ),
        ),
    ]
}

/// `plumb ARGS --core` with the kubeconfig, the same HOME (its context is ignored) and the
/// test's PATH (git); `input` on stdin.
fn core(home: &Path, ns: &str, args: &[&str], input: &str) -> Output {
    output_with_stdin(
        Command::new(env!("CARGO_BIN_EXE_plumb"))
            .args(args)
            .args(["--core", "-N", ns])
            .arg("--kubeconfig")
            .arg(env().kubeconfig())
            .env("HOME", home)
            .env("TZ", "UTC")
            .env("PLUMB_CACHE_DIR", home.join("core-cache")),
        input,
    )
}

/// [`remote`] with `input` on stdin.
fn remote_with_stdin(home: &Path, args: &[&str], input: &str) -> Output {
    output_with_stdin(
        Command::new(env!("CARGO_BIN_EXE_plumb"))
            .args(args)
            .env_clear()
            .env("HOME", home)
            .env("PATH", home.join("empty-bin"))
            .env("TZ", "UTC"),
        input,
    )
}

/// `plumb controller` over the control namespace `ns`, killed when dropped.
fn controller(ns: &str, cache: &Path) -> Killed {
    Killed(
        Command::new(env!("CARGO_BIN_EXE_plumb"))
            .args(["controller", "-n", ns, "--metrics-addr", "off"])
            .arg("--kubeconfig")
            .arg(env().kubeconfig())
            .arg("--cache-dir")
            .arg(cache)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    )
}

/// `data.color` of the ConfigMap `parity-settings` in `ns` (empty when there is none).
fn color_in(ns: &str) -> String {
    let out = env()
        .kubectl()
        .args([
            "-n",
            ns,
            "get",
            "configmap",
            "parity-settings",
            "-o",
            "jsonpath={.data.color}",
        ])
        .output()
        .unwrap();
    text(&out.stdout)
}

/// How many watch streams of Applications the server opened (its own metrics).
fn watches_opened(metrics: &str) -> u64 {
    let mut conn = std::net::TcpStream::connect(metrics).unwrap();
    conn.write_all(b"GET /metrics HTTP/1.0\r\nHost: localhost\r\n\r\n")
        .unwrap();
    let mut text = String::new();
    std::io::Read::read_to_string(&mut conn, &mut text).unwrap();
    text.lines()
        .filter(|l| {
            l.starts_with("grpc_server_started_total{")
                && l.contains("grpc_method=\"Watch\"")
                && l.contains("application.ApplicationService")
        })
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .map(|v| v as u64)
        .sum()
}

/// The text from the tree's heading on (the header above differs only by `URL:`, which a
/// server context always prints).
fn tree_part(out: &Output) -> String {
    let t = text(&out.stdout);
    match t.find("KIND/NAME") {
        Some(i) => t[i..].to_string(),
        None => panic!("no tree in:\n{t}"),
    }
}

#[test]
fn the_cli_reads_the_same_through_the_server_and_waits_on_its_stream() {
    let ctl = control_namespace("srv-parity");
    let dest = env().namespace("srv-parity-dest");
    let repo = GitRepo::named("srv-parity");
    repo.commit(&files("blue", "registry.example/api:v1"), "parity v1");
    repo.tag("v1");
    repo.commit(&files("teal", "registry.example/api:v2"), "parity v2");
    repo.tag("v2");
    let cache = tempfile::tempdir().unwrap();
    let _controller = controller(ctl.name(), &cache.path().join("controller"));
    let metrics = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().to_string()
    };
    let plugins = tempfile::tempdir().unwrap();
    let (_server, addr) = start_server_with(
        ctl.name(),
        &cache.path().join("server"),
        plugins.path(),
        &["--metrics-addr", &metrics],
    );
    kubectl_apply(&json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": APP, "namespace": ctl.name()},
        "spec": {"project": "default",
                 "source": {"repoURL": repo.url(), "path": "app", "targetRevision": "v1"},
                 "destination": {"server": "https://kubernetes.default.svc", "namespace": dest.name()}}
    }));
    let home = tempfile::tempdir().unwrap();
    let server = addr.to_string();
    let password = initial_admin_password(env(), ctl.name());
    let out = login_admin(home.path(), &server, &password);
    assert!(out.status.success(), "{}", all(&out));
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

    // Sync and wait through the server: both follow its watch stream.
    let before = watches_opened(&metrics);
    let synced = ok(&["app", "sync", APP, "--timeout", "120"]);
    assert!(synced.contains("Sync Status:        Synced"), "{synced}");
    ok(&["app", "wait", APP, "--health", "--sync", "--timeout", "120"]);
    let after = watches_opened(&metrics);
    assert!(
        after >= before + 2,
        "sync and wait opened the watch stream ({before} before, {after} after)"
    );

    // -o tree: the same tree through the server as in core mode, with the owned objects.
    let through = remote(home.path(), &["app", "get", APP, "-o", "tree"]);
    assert!(through.status.success(), "{}", all(&through));
    let core_tree = core(
        home.path(),
        ctl.name(),
        &["app", "get", APP, "-o", "tree"],
        "",
    );
    assert!(core_tree.status.success(), "{}", all(&core_tree));
    let tree = tree_part(&through);
    assert_eq!(tree, tree_part(&core_tree));
    assert!(
        tree.contains("Deployment/parity-api")
            && tree.contains("└─ReplicaSet/parity-api-")
            && tree.contains("─Pod/parity-api-"),
        "{tree}"
    );

    // diff --revision in every format, with and without attribution: byte for byte the same.
    for extra in [
        &[][..],
        &["--diff-format", "unified"][..],
        &["--diff-format", "json"][..],
        &["--attribution=false"][..],
        &["--diff-format", "json", "--attribution=false"][..],
    ] {
        let mut args = vec!["app", "diff", APP, "--revision", "v2"];
        args.extend_from_slice(extra);
        let through = remote(home.path(), &args);
        let local = core(home.path(), ctl.name(), &args, "");
        assert_eq!(
            through.status.code(),
            Some(1),
            "{extra:?}: {}",
            all(&through)
        );
        assert_eq!(local.status.code(), Some(1), "{extra:?}: {}", all(&local));
        assert_eq!(text(&through.stdout), text(&local.stdout), "{extra:?}");
        assert!(
            text(&through.stdout).contains("parity-settings")
                && text(&through.stdout).contains("teal"),
            "{extra:?}: {}",
            all(&through)
        );
    }
    // Against the target (v1, synced): nothing.
    let through = remote(home.path(), &["app", "diff", APP]);
    assert_eq!(through.status.code(), Some(0), "{}", all(&through));
    assert_eq!(text(&through.stdout), "");

    // --preview-changes: the same heading, diff and question; "n" requests nothing.
    let args = ["app", "sync", APP, "--preview-changes", "--revision", "v2"];
    let through = remote_with_stdin(home.path(), &args, "n\n");
    let local = core(home.path(), ctl.name(), &args, "n\n");
    assert_eq!(through.status.code(), Some(0), "{}", all(&through));
    assert_eq!(local.status.code(), Some(0), "{}", all(&local));
    assert_eq!(text(&through.stdout), text(&local.stdout));
    assert!(
        text(&through.stdout).starts_with(
            "====== Previewing differences between live and desired state of application "
        ) && text(&through.stdout).contains("Do you want to continue the sync process? (y/n): "),
        "{}",
        all(&through)
    );
    assert!(app_json(ctl.name(), APP).unwrap()["operation"].is_null());
    // "y": the sync to v2 runs, followed to the end through the server.
    let through = remote_with_stdin(
        home.path(),
        &[
            "app",
            "sync",
            APP,
            "--preview-changes",
            "--revision",
            "v2",
            "--timeout",
            "120",
        ],
        "y\n",
    );
    assert!(through.status.success(), "{}", all(&through));
    assert_eq!(color_in(dest.name()), "teal");

    // wait still times out with Argo's message and exit code.
    let out = remote(
        home.path(),
        &["app", "wait", APP, "--suspended", "--timeout", "3"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", all(&out));
    assert!(
        text(&out.stdout).contains("The command timed out waiting for the conditions to be met."),
        "{}",
        all(&out)
    );
    assert!(
        text(&out.stderr).contains(&format!(
            "timed out (3s) waiting for app \"{APP}\" match desired state"
        )),
        "{}",
        all(&out)
    );
}

/// `--local` through the server, as Argo's CLI does it through argocd-server: the directory is
/// rendered on this machine (no kubeconfig; a plain directory, so no render tool either) with
/// the server's settings and the destination's API versions; `app diff --local` and `app
/// manifests --local` print exactly what `--core` prints; `app sync --local` sends the
/// manifests in the sync request, the controller applies them and records the sync in the
/// history. An automated Application is refused (Argo's message), and `--prune` past the brake
/// on mass deletion is refused without a terminal, as in core mode.
#[test]
fn local_manifests_sync_diff_and_render_through_the_server() {
    const LOCAL_APP: &str = "srv-local-web";
    let ctl = control_namespace("srv-local");
    let dest = env().namespace("srv-local-dest");
    let repo = GitRepo::named("srv-local");
    repo.commit(&files("blue", "registry.example/api:v1"), "local v1");
    let work = tempfile::tempdir().unwrap();
    let mut local_files = files("green", "registry.example/api:v1");
    for extra in ["local-extra-a", "local-extra-b"] {
        local_files.push((
            if extra.ends_with('a') {
                "app/extra-a.yaml"
            } else {
                "app/extra-b.yaml"
            },
            format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {extra}\ndata:\n  k: v\n"),
        ));
    }
    for (path, body) in &local_files {
        let p = work.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, body).unwrap();
    }
    let local_dir = work.path().join("app");
    let local_dir = local_dir.to_str().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let _controller = controller(ctl.name(), &cache.path().join("controller"));
    let plugins = tempfile::tempdir().unwrap();
    let (_server, addr) = start_server_with(
        ctl.name(),
        &cache.path().join("server"),
        plugins.path(),
        &["--metrics-addr", "off"],
    );
    kubectl_apply(&json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": LOCAL_APP, "namespace": ctl.name()},
        "spec": {"project": "default",
                 "source": {"repoURL": repo.url(), "path": "app", "targetRevision": "HEAD"},
                 "destination": {"server": "https://kubernetes.default.svc", "namespace": dest.name()},
                 "syncPolicy": {"syncOptions": ["PruneMaxDeletions=1", "PruneMaxFraction=0.1"]}}
    }));
    let home = tempfile::tempdir().unwrap();
    let password = initial_admin_password(env(), ctl.name());
    let out = login_admin(home.path(), &addr.to_string(), &password);
    assert!(out.status.success(), "{}", all(&out));

    // diff --local and manifests --local: byte for byte what --core prints.
    for args in [
        &["app", "diff", LOCAL_APP, "--local", local_dir][..],
        &[
            "app",
            "diff",
            LOCAL_APP,
            "--local",
            local_dir,
            "--diff-format",
            "json",
        ][..],
        &["app", "manifests", LOCAL_APP, "--local", local_dir][..],
    ] {
        let through = remote(home.path(), args);
        let core_out = core(home.path(), ctl.name(), args, "");
        assert_eq!(
            through.status.code(),
            core_out.status.code(),
            "{args:?}: {}\n--- core:\n{}",
            all(&through),
            all(&core_out)
        );
        assert_eq!(text(&through.stdout), text(&core_out.stdout), "{args:?}");
        assert!(
            text(&through.stdout).contains("green")
                && text(&through.stdout).contains("local-extra-b"),
            "{args:?}: {}",
            all(&through)
        );
    }

    // sync --local --dry-run: the operation runs, nothing is created.
    let out = remote(
        home.path(),
        &[
            "app",
            "sync",
            LOCAL_APP,
            "--local",
            local_dir,
            "--dry-run",
            "--timeout",
            "120",
        ],
    );
    assert!(out.status.success(), "{}", all(&out));
    let none = env()
        .kubectl()
        .args(["-n", dest.name(), "get", "configmap", "parity-settings"])
        .output()
        .unwrap();
    assert!(!none.status.success(), "a dry run created nothing");

    // sync --local: the local objects are applied, the sync is in the history (no revision,
    // as Argo records local manifests).
    let out = remote(
        home.path(),
        &[
            "app",
            "sync",
            LOCAL_APP,
            "--local",
            local_dir,
            "--timeout",
            "120",
        ],
    );
    assert!(out.status.success(), "{}", all(&out));
    assert!(
        text(&out.stdout).contains("Phase:              Succeeded"),
        "{}",
        all(&out)
    );
    assert_eq!(color_in(dest.name()), "green");
    let app = app_json(ctl.name(), LOCAL_APP).unwrap();
    let history = app["status"]["history"].as_array().unwrap();
    assert_eq!(history.len(), 1, "{app}");
    assert!(
        history[0]["revision"]
            .as_str()
            .unwrap_or_default()
            .is_empty(),
        "{app}"
    );
    let sent = &app["status"]["operationState"]["operation"]["sync"]["manifests"];
    assert_eq!(sent.as_array().map(Vec::len), Some(4), "{app}");
    // The live objects now match the directory: no difference either way.
    let args = ["app", "diff", LOCAL_APP, "--local", local_dir];
    let through = remote(home.path(), &args);
    let core_out = core(home.path(), ctl.name(), &args, "");
    assert_eq!(through.status.code(), Some(0), "{}", all(&through));
    assert_eq!(core_out.status.code(), Some(0), "{}", all(&core_out));
    assert_eq!(text(&through.stdout), text(&core_out.stdout));

    // --prune against Git now deletes the two extra ConfigMaps: past the Application's brake
    // (1 object, 10%), refused without a terminal, through the server as in core mode, and
    // nothing is requested.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    loop {
        let app = app_json(ctl.name(), LOCAL_APP).unwrap();
        let prunable = app["status"]["resources"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|r| r["requiresPruning"] == true)
            .count();
        if prunable == 2 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the extra objects never required pruning: {app}"
        );
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
    let args = ["app", "sync", LOCAL_APP, "--prune", "--timeout", "120"];
    let through = remote(home.path(), &args);
    let core_out = core(home.path(), ctl.name(), &args, "");
    for out in [&through, &core_out] {
        assert_eq!(out.status.code(), Some(2), "{}", all(out));
        assert!(
            text(&out.stderr).contains("refusing to sync application")
                && text(&out.stderr).contains("the mass-deletion brake"),
            "{}",
            all(out)
        );
    }
    assert!(app_json(ctl.name(), LOCAL_APP).unwrap()["operation"].is_null());

    // A user who may sync but not override: the local sync is refused with Argo's
    // PermissionDenied, and nothing is requested.
    kubectl_apply(&json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "argocd-cm", "namespace": ctl.name()},
        "data": {"accounts.srv-local-syncer": "login"}}));
    kubectl_apply(&json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "argocd-rbac-cm", "namespace": ctl.name()},
        "data": {"policy.csv": "p, srv-local-syncer, applications, get, default/*, allow\np, srv-local-syncer, applications, sync, default/*, allow\np, srv-local-syncer, projects, get, default, allow\np, srv-local-syncer, clusters, get, *, allow\n"}}));
    let out = remote(
        home.path(),
        &[
            "account",
            "update-password",
            "--account",
            "srv-local-syncer",
            "--current-password",
            &password,
            "--new-password",
            "syncer-pw-1234",
        ],
    );
    assert!(out.status.success(), "{}", all(&out));
    let syncer_home = tempfile::tempdir().unwrap();
    let out = remote(
        syncer_home.path(),
        &[
            "login",
            &addr.to_string(),
            "--username",
            "srv-local-syncer",
            "--password",
            "syncer-pw-1234",
            "--insecure",
        ],
    );
    assert!(out.status.success(), "{}", all(&out));
    let out = remote(
        syncer_home.path(),
        &["app", "sync", LOCAL_APP, "--local", local_dir],
    );
    assert_eq!(out.status.code(), Some(2), "{}", all(&out));
    assert!(
        all(&out).contains(&format!(
            "permission denied: applications, override, default/{LOCAL_APP}, sub: srv-local-syncer"
        )),
        "{}",
        all(&out)
    );
    assert!(app_json(ctl.name(), LOCAL_APP).unwrap()["operation"].is_null());

    // Automated: local manifests refused with Argo's message (only a dry run may use them).
    let patched = env()
        .kubectl()
        .args([
            "-n",
            ctl.name(),
            "patch",
            "application",
            LOCAL_APP,
            "--type",
            "merge",
            "-p",
            r#"{"spec":{"syncPolicy":{"automated":{}}}}"#,
        ])
        .output()
        .unwrap();
    assert!(patched.status.success(), "{}", all(&patched));
    let out = remote(
        home.path(),
        &["app", "sync", LOCAL_APP, "--local", local_dir],
    );
    assert_eq!(out.status.code(), Some(2), "{}", all(&out));
    assert!(
        all(&out).contains(
            "Cannot use local sync when Automatic Sync Policy is enabled except with --dry-run"
        ),
        "{}",
        all(&out)
    );
}
