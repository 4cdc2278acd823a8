//! Config management plugins: real `ConfigManagementPlugin` files whose commands are shell
//! scripts, run through the renderer in its render worker.

use std::path::Path;
use std::time::Duration;

use plumb_model::application::{EnvEntry, PluginParameter, PluginSource};
use plumb_source::{Config, Error, Limits, Renderer, SourceType};
use plumb_testenv::git::GitRepo;

use crate::support::*;

/// A plugin that turns the `*.properties` files of the source directory and a parameter into a
/// ConfigMap, found by discovery through those files.
pub const CM_GEN: &str = r#"apiVersion: argoproj.io/v1alpha1
kind: ConfigManagementPlugin
metadata:
  name: cm-gen
spec:
  version: v1.0
  init:
    command: [sh, -c, 'test -n "$ARGOCD_APP_NAME"']
  generate:
    command: [sh, -c]
    args:
    - |
      set -e
      echo "apiVersion: v1"
      echo "kind: ConfigMap"
      echo "metadata:"
      echo "  name: ${ARGOCD_APP_NAME}-config"
      echo "data:"
      echo "  greeting: \"${PARAM_GREETING}\""
      echo "  team: \"${ARGOCD_ENV_TEAM}\""
      echo "  revision: \"${ARGOCD_APP_REVISION_SHORT}\""
      echo "  path: \"${ARGOCD_APP_SOURCE_PATH}\""
      for f in *.properties; do printf '  %s: "%s"\n' "$f" "$(cat "$f")"; done
  discover:
    fileName: "*.properties"
  parameters:
    static:
    - name: greeting
      title: Greeting
      string: hello
    dynamic:
      command: [sh, -c, 'echo "[{\"name\": \"files\", \"string\": \"$(ls | wc -l | tr -d " ")\"}]"']
"#;

pub fn plugins_dir(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        let p = dir.path().join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    dir
}

fn renderer_for(plugins: &Path, limits: Limits) -> (Renderer, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let r = Renderer::new(
        Config::new(dir.path())
            .tools(tools())
            .limits(limits)
            .plugins_dir(Some(plugins.to_path_buf())),
    )
    .unwrap();
    (r, dir)
}

fn plugin(name: Option<&str>) -> PluginSource {
    PluginSource {
        name: name.map(str::to_owned),
        env: Some(vec![EnvEntry {
            name: "TEAM".into(),
            value: "payments-$ARGOCD_APP_NAME".into(),
        }]),
        parameters: Some(vec![PluginParameter {
            name: Some("greeting".into()),
            string: Some("hi there".into()),
            ..Default::default()
        }]),
    }
}

fn props_repo() -> (GitRepo, String) {
    let repo = GitRepo::new();
    let head = repo.commit(
        &[
            ("config/app.properties", "color=blue"),
            ("config/db.properties", "host=db.internal"),
            ("plain/cm.yaml", &configmap("plain", "k: v")),
        ],
        "properties",
    );
    (repo, head)
}

#[test]
fn a_named_plugin_renders_files_and_parameters_with_argos_environment() {
    let (repo, head) = props_repo();
    let plugins = plugins_dir(&[("cm-gen.yaml", CM_GEN)]);
    let (r, _d) = renderer_for(plugins.path(), Limits::default());
    let mut src = source(&repo.url(), "config", "HEAD");
    src.plugin = Some(plugin(Some("cm-gen-v1.0")));
    let out = r.render(&request(vec![src.clone()])).unwrap();
    assert_eq!(keys(&out), ["/ConfigMap//payments-config"]);
    assert_eq!(out.sources[0].source_type, Some(SourceType::Plugin));
    let data = &out.manifests[0].object["data"];
    assert_eq!(data["greeting"], "hi there");
    assert_eq!(data["team"], "payments-payments");
    assert_eq!(data["revision"], head[..7]);
    assert_eq!(data["path"], "config");
    assert_eq!(data["app.properties"], "color=blue");
    assert_eq!(data["db.properties"], "host=db.internal");
    assert_eq!(out.manifests[0].file, "plugin cm-gen-v1.0 generate");

    // Cached like any render: the same commit and parameters render nothing again.
    let again = r.render(&request(vec![src.clone()])).unwrap();
    assert!(again.sources[0].cache_hit);
    assert_eq!(r.render_count(), 1);
    // A changed parameter is a new render.
    src.plugin.as_mut().unwrap().parameters.as_mut().unwrap()[0].string = Some("bye".into());
    let changed = r.render(&request(vec![src.clone()])).unwrap();
    assert_eq!(changed.manifests[0].object["data"]["greeting"], "bye");

    // Announcements: the dynamic command's first, then the static ones.
    let params = r.plugin_parameters(&request(vec![src])).unwrap();
    assert_eq!(
        params,
        [
            serde_json::json!({"name": "files", "string": "2"}),
            serde_json::json!({"name": "greeting", "title": "Greeting", "string": "hello"}),
        ]
    );
}

#[test]
fn discovery_picks_the_plugin_whose_rules_match() {
    let by_glob = r#"apiVersion: argoproj.io/v1alpha1
kind: ConfigManagementPlugin
metadata:
  name: b-glob
spec:
  generate:
    command: [sh, -c, 'printf "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: by-glob\n"']
  discover:
    find:
      glob: "**/*.cue"
"#;
    let by_command = r#"apiVersion: argoproj.io/v1alpha1
kind: ConfigManagementPlugin
metadata:
  name: c-command
spec:
  generate:
    command: [sh, -c, 'printf "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: by-command\n"']
  discover:
    find:
      command: [sh, -c, 'test -f marker && echo yes || true']
"#;
    let by_name_only = r#"apiVersion: argoproj.io/v1alpha1
kind: ConfigManagementPlugin
metadata:
  name: a-named-only
spec:
  generate:
    command: [sh, -c, 'printf "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: by-name\n"']
"#;
    let repo = GitRepo::new();
    repo.commit(
        &[
            ("props/app.properties", "color=blue".to_owned()),
            ("cue/deep/er/x.cue", "a: 1".to_owned()),
            ("marked/marker", String::new()),
            ("plain/cm.yaml", configmap("plain", "k: v")),
        ],
        "apps",
    );
    let plugins = plugins_dir(&[
        ("cm-gen.yaml", CM_GEN),
        ("b/plugin.yaml", by_glob),
        ("c-command.yml", by_command),
        ("a.yaml", by_name_only),
        // A mounted ConfigMap's bookkeeping entries are skipped.
        ("..data/ignored.yaml", "not: a plugin"),
        ("README.md", "not a plugin"),
    ]);
    let (r, _d) = renderer_for(plugins.path(), Limits::default());
    let set = r.plugins().unwrap();
    let names: Vec<&str> = set.plugins.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        ["a-named-only", "b-glob", "c-command", "cm-gen-v1.0"]
    );
    assert!(set.invalid.is_empty(), "{:?}", set.invalid);

    let render = |path: &str, plugin: Option<PluginSource>| {
        let mut src = source(&repo.url(), path, "HEAD");
        src.plugin = plugin;
        r.render(&request(vec![src]))
    };
    // No `plugin:` at all: discovery runs before the file-based detection, as Argo's AppType.
    let out = render("props", None).unwrap();
    assert_eq!(keys(&out), ["/ConfigMap//payments-config"]);
    assert_eq!(out.sources[0].source_type, Some(SourceType::Plugin));
    assert_eq!(
        keys(&render("cue", Some(PluginSource::default())).unwrap()),
        ["/ConfigMap//by-glob"]
    );
    assert_eq!(
        keys(&render("marked", None).unwrap()),
        ["/ConfigMap//by-command"]
    );
    // Nothing matches: a plain directory stays a directory.
    let plain = render("plain", None).unwrap();
    assert_eq!(plain.sources[0].source_type, Some(SourceType::Directory));
    // A plugin without discovery rules is used by name only.
    assert_eq!(
        keys(&render("plain", Some(plugin(Some("a-named-only")))).unwrap()),
        ["/ConfigMap//by-name"]
    );
    // `plugin: {}` where nothing matches, a named plugin whose rules do not match, an unknown name.
    let err = render("plain", Some(PluginSource::default())).unwrap_err();
    assert!(
        err.to_string()
            .contains("could not find plugin supporting the given repository"),
        "{err}"
    );
    let err = render("plain", Some(plugin(Some("cm-gen-v1.0")))).unwrap_err();
    assert!(
        err.to_string().contains("its discover rules do not match"),
        "{err}"
    );
    let err = render("props", Some(plugin(Some("cm-gen")))).unwrap_err();
    assert!(
        matches!(&err, Error::Plugin { plugin, .. } if plugin == "cm-gen"),
        "{err}"
    );
    assert!(
        err.to_string().contains("cm-gen-v1.0"),
        "lists the plugins: {err}"
    );
    // Explicit options win over discovery.
    let mut dir_src = source(&repo.url(), "props", "HEAD");
    dir_src.directory = Some(Default::default());
    let out = r.render(&request(vec![dir_src])).unwrap();
    assert_eq!(out.sources[0].source_type, Some(SourceType::Directory));
}

fn failing(generate: &str) -> String {
    format!(
        "apiVersion: argoproj.io/v1alpha1\nkind: ConfigManagementPlugin\nmetadata:\n  name: bad\nspec:\n  generate:\n    command: [sh, -c, '{generate}']\n"
    )
}

#[test]
fn failing_slow_and_verbose_plugins_give_clear_errors() {
    let repo = GitRepo::new();
    repo.commit(&[("app/x.txt", "x")], "app");
    let render = |generate: &str, limits: Limits| {
        let plugins = plugins_dir(&[("bad.yaml", &failing(generate))]);
        let (r, _d) = renderer_for(plugins.path(), limits);
        let mut src = source(&repo.url(), "app", "HEAD");
        src.plugin = Some(PluginSource {
            name: Some("bad".into()),
            ..Default::default()
        });
        r.render(&request(vec![src])).unwrap_err()
    };
    let err = render("echo cannot reach the vault >&2; exit 3", Limits::default());
    assert!(matches!(err, Error::Plugin { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(
        msg.starts_with("config management plugin bad: generate"),
        "{msg}"
    );
    assert!(msg.contains("exit status: 3"), "{msg}");
    assert!(msg.contains("cannot reach the vault"), "{msg}");

    let err = render(
        "sleep 600",
        Limits::default().render_timeout(Duration::from_secs(2)),
    );
    assert!(matches!(err, Error::RenderTimeout { .. }), "{err:?}");
    assert!(err.to_string().contains("plugin bad generate"), "{err}");

    let err = render(
        "yes apiVersion",
        Limits::default().max_render_bytes(1 << 20),
    );
    assert!(matches!(err, Error::TooLarge { .. }), "{err:?}");
    assert!(err.to_string().contains("plugin bad generate"), "{err}");

    let err = render("echo not yaml: [", Limits::default());
    assert!(err.to_string().contains("plugin bad generate"), "{err}");

    let err = render("exec /nonexistent/tool", Limits::default());
    assert!(err.to_string().contains("plugin bad"), "{err}");
}

#[test]
fn invalid_plugin_files_are_named_and_a_missing_directory_is_explained() {
    let repo = GitRepo::new();
    repo.commit(&[("app/x.txt", "x")], "app");
    let plugins = plugins_dir(&[
        (
            "bad.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bad\n",
        ),
        (
            "traversal.yaml",
            "apiVersion: argoproj.io/v1alpha1\nkind: ConfigManagementPlugin\nmetadata:\n  name: ../evil\nspec:\n  generate:\n    command: [true]\n",
        ),
    ]);
    let (r, _d) = renderer_for(plugins.path(), Limits::default());
    let set = r.plugins().unwrap();
    assert!(set.plugins.is_empty());
    assert_eq!(set.invalid.len(), 2, "{:?}", set.invalid);
    let mut src = source(&repo.url(), "app", "HEAD");
    src.plugin = Some(PluginSource {
        name: Some("bad".into()),
        ..Default::default()
    });
    let err = r
        .render(&request(vec![src.clone()]))
        .unwrap_err()
        .to_string();
    assert!(err.contains("bad.yaml ignored: apiVersion/kind"), "{err}");

    let (plain, _d2) = renderer();
    let err = plain.render(&request(vec![src])).unwrap_err().to_string();
    assert!(err.contains("no plugin directory is configured"), "{err}");
}

#[test]
fn a_plugin_has_no_network_no_writable_checkout_no_credentials_and_only_argos_environment() {
    assert!(
        plumb_source::plugin_sandbox_available(),
        "this machine cannot create network and mount namespaces with unshare: plugins would run unconfined"
    );
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let probe = |network: bool| {
        format!(
            r#"apiVersion: argoproj.io/v1alpha1
kind: ConfigManagementPlugin
metadata:
  name: probe
  annotations:
    plumb.dev/network: "{network}"
spec:
  generate:
    command: [bash, -c]
    args:
    - |
      touch written 2>/dev/null && w=yes || w=no
      touch "$HOME/scratch" 2>/dev/null && h=yes || h=no
      cat "$ARGOCD_ENV_KEYS/repo.key" >/dev/null 2>&1 && k=yes || k=no
      (exec 3<>/dev/tcp/127.0.0.1/$ARGOCD_ENV_PORT) 2>/dev/null && n=yes || n=no
      leaked=$(env | cut -d= -f1 | grep -E '^(CARGO|RUST)' | tr '\n' ' ')
      echo "apiVersion: v1"
      echo "kind: ConfigMap"
      echo "metadata: {{name: probe}}"
      echo "data: {{written: '$w', home: '$h', key: '$k', net: '$n', leaked: '$leaked'}}"
"#
        )
    };
    let repo = GitRepo::new();
    repo.commit(&[("app/x.txt", "x")], "app");
    for network in [false, true] {
        let plugins = plugins_dir(&[("probe.yaml", &probe(network))]);
        let (r, cache) = renderer_for(plugins.path(), Limits::default());
        // What an SSH repository Secret leaves in the cache.
        let keys = cache.path().join("git/keys");
        std::fs::create_dir_all(&keys).unwrap();
        std::fs::write(keys.join("repo.key"), "-----BEGIN OPENSSH PRIVATE KEY-----").unwrap();
        let mut src = source(&repo.url(), "app", "HEAD");
        src.plugin = Some(PluginSource {
            name: Some("probe".into()),
            env: Some(vec![
                EnvEntry {
                    name: "KEYS".into(),
                    value: keys.display().to_string(),
                },
                EnvEntry {
                    name: "PORT".into(),
                    value: port.to_string(),
                },
            ]),
            parameters: None,
        });
        let out = r.render(&request(vec![src])).unwrap();
        let data = &out.manifests[0].object["data"];
        assert_eq!(data["written"], "no", "the checkout is read-only");
        assert_eq!(data["home"], "yes", "HOME is a writable scratch directory");
        assert_eq!(data["key"], "no", "repository keys are hidden");
        assert_eq!(data["leaked"], "", "the caller's environment is not passed");
        let expected = if network { "yes" } else { "no" };
        assert_eq!(data["net"], expected, "network: {network}");
    }
}

/// `discover.find.command` runs once per plugin, commit and path, not at every render: the
/// command appends a line to a counter file each time it runs. A new commit or a hard refresh
/// asks again; a second Application on the same commit and path uses the kept answer.
#[test]
fn discovery_commands_run_once_per_commit_and_path() {
    let counter_dir = tempfile::tempdir().unwrap();
    let counter = counter_dir.path().join("runs");
    let plugin_file = format!(
        r#"apiVersion: argoproj.io/v1alpha1
kind: ConfigManagementPlugin
metadata:
  name: counted
spec:
  generate:
    command: [sh, -c]
    args:
    - |
      printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: counted\ndata:\n  v: "%s"\n' "$(cat app.cue)"
  discover:
    find:
      command: [sh, -c, 'echo run >> {counter}; ls *.cue 2>/dev/null || true']
"#,
        counter = counter.display()
    );
    let plugins = plugins_dir(&[("counted.yaml", &plugin_file)]);
    let (r, _d) = renderer_for(plugins.path(), Limits::default());
    let repo = GitRepo::new();
    repo.commit(&[("app/app.cue", "one")], "one");
    let runs = || {
        std::fs::read_to_string(&counter)
            .unwrap_or_default()
            .lines()
            .count()
    };
    let src = source(&repo.url(), "app", "HEAD");
    let mut other_app = request(vec![src.clone()]);
    other_app.app_name = "billing".into();

    for _ in 0..3 {
        let out = r.render(&request(vec![src.clone()])).unwrap();
        assert_eq!(out.sources[0].source_type, Some(SourceType::Plugin));
        assert_eq!(out.manifests[0].object["data"]["v"], "one");
    }
    assert_eq!(runs(), 1, "the discovery command ran at every render");
    let out = r.render(&other_app).unwrap();
    assert_eq!(out.sources[0].source_type, Some(SourceType::Plugin));
    assert_eq!(runs(), 1);

    // A new commit: asked again, once.
    repo.commit(&[("app/app.cue", "two")], "two");
    for _ in 0..2 {
        let out = r.render(&request(vec![src.clone()])).unwrap();
        assert_eq!(out.manifests[0].object["data"]["v"], "two");
    }
    assert_eq!(runs(), 2);

    // A hard refresh asks again.
    let mut hard = request(vec![src.clone()]);
    hard.refresh = plumb_source::Refresh::Hard;
    r.render(&hard).unwrap();
    assert_eq!(runs(), 3);
    r.render(&request(vec![src])).unwrap();
    assert_eq!(runs(), 3);
}
