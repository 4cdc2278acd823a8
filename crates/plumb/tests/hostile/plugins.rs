//! Attacks: config management plugins. The plugin program is the administrator's, but the
//! repository it reads and the Application's `plugin` block (name, env, parameters) are a
//! tenant's. A tenant tries to run a file outside the plugin directory through the plugin name,
//! to read the controller's environment or files outside the checkout through a plugin, to
//! flood or hang the controller through a plugin's output. `plumb render` runs the same renderer
//! as the controller, with small limits here.

use std::process::{Command, Output};

use plumb_testenv::git::GitRepo;

use crate::running::text;

/// Prints the ConfigMap `probe` with `$ARGOCD_ENV_FILE`'s content and the environment.
const READER: &str = r#"apiVersion: argoproj.io/v1alpha1
kind: ConfigManagementPlugin
metadata:
  name: reader
spec:
  generate:
    command: [sh, -c]
    args:
    - |
      echo "apiVersion: v1"
      echo "kind: ConfigMap"
      echo "metadata: {name: probe}"
      echo "data:"
      echo "  file: |"
      cat "$ARGOCD_ENV_FILE" 2>&1 | sed 's/^/    /'
      echo "  env: |"
      env | sort | sed 's/^/    /'
"#;

fn plugin_file(name: &str, generate: &str) -> String {
    format!(
        "apiVersion: argoproj.io/v1alpha1\nkind: ConfigManagementPlugin\nmetadata:\n  name: {name}\nspec:\n  generate:\n    command: [sh, -c, '{generate}']\n"
    )
}

/// `plumb render` of an Application file through the plugins of `plugins`, with 3 s / 1 MiB
/// limits and `extra_env` in the environment of `plumb` itself.
fn render(app: &str, plugins: &std::path::Path, extra_env: &[(&str, &str)]) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let app_file = dir.path().join("app.yaml");
    std::fs::write(&app_file, app).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_plumb"));
    cmd.current_dir(dir.path())
        .arg("render")
        .arg("--app")
        .arg(&app_file)
        .arg("--plugin-dir")
        .arg(plugins)
        .args(["--render-timeout", "3s"])
        .arg("--cache-dir")
        .arg(dir.path().join("cache"))
        .env_remove("PLUMB_LOG");
    for (k, v) in extra_env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

fn app(repo: &GitRepo, plugin: &str) -> String {
    format!(
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: tenant\nspec:\n  project: default\n  destination:\n    namespace: tenant\n  source:\n    repoURL: {}\n    path: app\n    plugin:\n{plugin}",
        repo.url()
    )
}

fn tenant_repo() -> GitRepo {
    let repo = GitRepo::new();
    repo.commit(&[("app/values.txt", "ok")], "app");
    repo
}

fn plugins(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, body) in files {
        std::fs::write(dir.path().join(name), body).unwrap();
    }
    dir
}

/// A plugin name is looked up among the loaded plugins, never joined to a path: `../x` finds
/// nothing, and the plugin file it points at never runs.
#[test]
fn a_plugin_name_cannot_reach_a_file_outside_the_plugin_directory() {
    let outer = tempfile::tempdir().unwrap();
    let marker = outer.path().join("ran");
    let evil = plugin_file("evil", &format!("touch {}", marker.display()));
    std::fs::write(outer.path().join("evil.yaml"), &evil).unwrap();
    std::fs::create_dir(outer.path().join("plugins")).unwrap();
    std::fs::write(
        outer.path().join("plugins/ok.yaml"),
        plugin_file("ok", "echo"),
    )
    .unwrap();
    let repo = tenant_repo();
    for name in ["../evil", "../evil.yaml", "evil/../../evil", "/etc/passwd"] {
        let out = render(
            &app(&repo, &format!("      name: {name:?}\n")),
            &outer.path().join("plugins"),
            &[],
        );
        assert_eq!(out.status.code(), Some(2), "{name}: {}", text(&out.stderr));
        assert!(
            text(&out.stderr).contains("couldn't find plugin with name"),
            "{name}: {}",
            text(&out.stderr)
        );
        assert!(
            !marker.exists(),
            "{name}: the plugin outside the directory ran"
        );
    }
}

/// The plugin sees Argo's variables and nothing of the controller's environment (which holds
/// cloud credentials, tokens, the kubeconfig path); `$VAR` in `plugin.env` expands only Argo's
/// build variables.
#[test]
fn a_plugin_gets_no_variable_of_the_controllers_environment() {
    let dir = plugins(&[("reader.yaml", READER)]);
    let repo = tenant_repo();
    let out = render(
        &app(
            &repo,
            "      name: reader\n      env:\n      - {name: FILE, value: values.txt}\n      - {name: STEAL, value: \"$AWS_SECRET_ACCESS_KEY${PLUMB_TEST_TOKEN}\"}\n",
        ),
        dir.path(),
        &[
            ("AWS_SECRET_ACCESS_KEY", "aws-secret-do-not-leak"),
            ("PLUMB_TEST_TOKEN", "token-do-not-leak"),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let shown = text(&out.stdout);
    assert!(shown.contains("ARGOCD_APP_NAME=tenant"), "{shown}");
    assert!(shown.contains("ARGOCD_ENV_STEAL=\n"), "{shown}");
    assert!(!shown.contains("do-not-leak"), "{shown}");
    assert!(!shown.contains("AWS_SECRET_ACCESS_KEY"), "{shown}");
}

/// A tenant points a plugin at files outside the checkout: a link in the repository is refused
/// before the plugin runs; a parameter naming a credential file of the cache finds it hidden, and
/// the checkout cannot be written.
#[test]
fn a_plugin_cannot_be_made_to_read_credentials_or_write_the_checkout() {
    assert!(
        plumb_source::plugin_sandbox_available(),
        "unshare cannot create namespaces here: plugins would run unconfined"
    );
    let dir = plugins(&[("reader.yaml", READER)]);
    let repo = tenant_repo();
    repo.commit_symlink("app/passwd", "/etc/passwd", "link out");
    let out = render(
        &app(
            &repo,
            "      name: reader\n      env:\n      - {name: FILE, value: passwd}\n",
        ),
        dir.path(),
        &[],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("app/passwd"),
        "{}",
        text(&out.stderr)
    );
    assert!(
        !text(&out.stdout).contains("root:"),
        "{}",
        text(&out.stdout)
    );

    // The repository's SSH keys live in the cache: hidden from plugins.
    let repo = tenant_repo();
    let work = tempfile::tempdir().unwrap();
    let cache = work.path().join("cache");
    let keys = cache.join("git/keys");
    std::fs::create_dir_all(&keys).unwrap();
    std::fs::write(keys.join("other-tenant.key"), "PRIVATE-KEY-do-not-leak").unwrap();
    let writer = plugin_file(
        "writer",
        "cat \"$ARGOCD_ENV_FILE\" >&2; touch owned; exit 1",
    );
    let dir = plugins(&[("writer.yaml", &writer)]);
    let app_file = work.path().join("app.yaml");
    std::fs::write(
        &app_file,
        app(
            &repo,
            &format!(
                "      name: writer\n      env:\n      - {{name: FILE, value: {}}}\n",
                keys.join("other-tenant.key").display()
            ),
        ),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_plumb"))
        .arg("render")
        .arg("--app")
        .arg(&app_file)
        .arg("--plugin-dir")
        .arg(dir.path())
        .arg("--cache-dir")
        .arg(&cache)
        .env_remove("PLUMB_LOG")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(err.contains("config management plugin writer"), "{err}");
    // The error carries the command's standard error: the key was not there to read, and the
    // checkout refused the write.
    assert!(!err.contains("PRIVATE-KEY"), "{err}");
    assert!(
        err.contains("other-tenant.key: No such file or directory"),
        "{err}"
    );
    assert!(err.contains("Read-only file system"), "{err}");
}

/// A plugin that floods its output or never ends is stopped at the render limits, and the error
/// names the plugin.
#[test]
fn a_flooding_or_hanging_plugin_is_stopped_at_the_render_limits() {
    let repo = tenant_repo();
    let flood = plugins(&[("flood.yaml", &plugin_file("flood", "yes kind: ConfigMap"))]);
    let out = render(&app(&repo, "      name: flood\n"), flood.path(), &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("plugin flood generate"),
        "{}",
        text(&out.stderr)
    );
    assert!(out.stdout.is_empty());

    let hang = plugins(&[("hang.yaml", &plugin_file("hang", "sleep 600"))]);
    let out = render(&app(&repo, "      name: hang\n"), hang.path(), &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("plugin hang generate"),
        "{}",
        text(&out.stderr)
    );
}

/// End to end: a real controller renders an Application with a plugin from `--plugin-dir`
/// (`PLUMB_PLUGIN_DIR`), syncs it, and reports a failing plugin as a `ComparisonError` naming the
/// plugin and its standard error, without syncing anything for it.
#[test]
fn the_controller_syncs_a_plugin_application_and_reports_a_failing_plugin() {
    use crate::running::{Running, condition, get_json};
    use serde_json::json;

    let dir = plugins(&[
        (
            "properties.yaml",
            r#"apiVersion: argoproj.io/v1alpha1
kind: ConfigManagementPlugin
metadata:
  name: properties
spec:
  version: v1.0
  generate:
    command: [sh, -c]
    args:
    - |
      echo "apiVersion: v1"
      echo "kind: ConfigMap"
      echo "metadata: {name: ${ARGOCD_APP_NAME}-${PARAM_SUFFIX}}"
      echo "data: {color: '$(cat color.properties)', revision: '${ARGOCD_APP_REVISION_SHORT}'}"
  discover:
    fileName: "*.properties"
"#,
        ),
        (
            "broken.yaml",
            &plugin_file("broken", "echo vault is unreachable >&2; exit 3"),
        ),
    ]);
    let ctl = Running::start(
        "hostile-plugins",
        &[("PLUMB_PLUGIN_DIR", dir.path().to_str().unwrap())],
    );
    let dest = crate::running::env().namespace("hostile-plugins-dest");
    let repo = GitRepo::new();
    let head = repo.commit(&[("app/color.properties", "blue")], "app");
    let spec = |plugin: serde_json::Value| {
        json!({
            "project": "default",
            "source": {"repoURL": repo.url(), "path": "app", "plugin": plugin},
            "destination": {"server": "https://kubernetes.default.svc", "namespace": dest.name()},
            "syncPolicy": {"automated": {}}
        })
    };
    ctl.create_app(
        "colors",
        spec(json!({"parameters": [{"name": "suffix", "string": "config"}]})),
    );
    ctl.create_app("broken", spec(json!({"name": "broken"})));
    let app = ctl.wait_app("colors", "Synced", |a| {
        a["status"]["sync"]["status"] == "Synced"
    });
    assert!(
        condition(&app, "ComparisonError").is_none(),
        "{:#}",
        app["status"]
    );
    assert_eq!(app["status"]["sourceType"], "Plugin", "{:#}", app["status"]);
    let cm = get_json(dest.name(), "configmap", "colors-config").expect("synced ConfigMap");
    assert_eq!(cm["data"]["color"], "blue");
    assert_eq!(cm["data"]["revision"], head[..7]);

    let app = ctl.wait_app("broken", "a ComparisonError", |a| {
        condition(a, "ComparisonError").is_some()
    });
    let message = condition(&app, "ComparisonError").unwrap()["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        message.contains("config management plugin broken: generate"),
        "{message}"
    );
    assert!(message.contains("vault is unreachable"), "{message}");
    assert_eq!(app["status"]["sync"]["status"], "Unknown");
}
