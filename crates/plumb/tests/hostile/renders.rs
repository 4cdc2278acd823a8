//! Attacks: renders. A repository author writes Jsonnet, a Helm chart or a kustomization that
//! eats memory, recurses or loops forever; Plumb stops it at the render limits
//! (`plumb.render.timeout`, `plumb.render.memoryLimit`, Jsonnet's 500-frame stack), reports it for
//! that source only, and leaves no process running. Limits are small here (3 s, 256 MiB) so the
//! attacks stay cheap.

use std::process::{Command, Output};

use plumb_testenv::git::GitRepo;
use serde_json::json;

use crate::running::{DEADLINE, Running, condition, kubectl_apply, text};

/// Processes (not zombies) whose command line or working directory mentions `marker`.
fn running_under(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let pid = entry.file_name().to_string_lossy().into_owned();
        if !pid.chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        if stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'))
        {
            continue;
        }
        let cmdline = std::fs::read(entry.path().join("cmdline"))
            .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
            .unwrap_or_default();
        let cwd = std::fs::read_link(entry.path().join("cwd"))
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        if cmdline.contains(marker) || cwd.contains(marker) {
            found.push(format!("{pid}: {cmdline} (in {cwd})"));
        }
    }
    found
}

/// `plumb render` of `path` in `repo` with small render limits, run in a fresh directory (which
/// every process it starts inherits as working directory, or names in its command line); checks
/// that nothing is left running there and returns the output.
fn render(repo: &GitRepo, path: &str) -> Output {
    render_within(repo, path, "3s")
}

/// [`render`] with another time limit: an attack aimed at another limit must not run into this
/// one first on a slow machine.
fn render_within(repo: &GitRepo, path: &str, timeout: &str) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_plumb"))
        .current_dir(dir.path())
        .args(["render", "--repo", &repo.url(), "--path", path])
        .args([
            "--render-timeout",
            timeout,
            "--render-memory-limit",
            "256Mi",
        ])
        .arg("--cache-dir")
        .arg(dir.path().join("cache"))
        .arg("--helm")
        .arg(plumb_testenv::tools::helm())
        .arg("--kustomize")
        .arg(plumb_testenv::tools::kustomize())
        .env_remove("PLUMB_LOG")
        .output()
        .unwrap();
    assert_eq!(
        running_under(&dir.path().display().to_string()),
        Vec::<String>::new(),
        "left running after: {}",
        text(&out.stderr)
    );
    out
}

fn refused(out: &Output, expected: &str) {
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains(expected),
        "expected {expected:?} in: {}",
        text(&out.stderr)
    );
    assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
}

fn repo(files: &[(&str, &str)]) -> GitRepo {
    let repo = GitRepo::new();
    repo.commit(files, "attack");
    repo
}

const JSONNET_BOMB: &str = "local big = [{ name: 'cm-%d' % i, data: std.repeat('x', 64) } for i in std.range(1, 5000000)];\n\
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'bomb' }, data: { n: std.toString(std.length([x for x in big if x.name != ''])) } }\n";

const JSONNET_SPIN: &str = "local inner(i) = std.foldl(function(acc, j) acc + j, std.range(1, 100000), i);\n\
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'spin' }, data: { n: std.toString(std.foldl(function(acc, i) inner(acc), std.range(1, 100000), 0)) } }\n";

#[test]
fn a_jsonnet_memory_bomb_stops_at_the_memory_limit() {
    // A comprehension that would take about 1 GiB (the issue's grew to 22 GiB). A debug build on
    // a loaded machine can take longer than 3 s to allocate 256 MiB.
    let out = render_within(&repo(&[("app/bomb.jsonnet", JSONNET_BOMB)]), "app", "120s");
    refused(
        &out,
        "jsonnet app/bomb.jsonnet was stopped: it exceeded the memory limit of 256 MiB (plumb.render.memoryLimit)",
    );
}

#[test]
fn jsonnet_infinite_recursion_stops_at_the_stack_bound() {
    let out = render(
        &repo(&[(
            "app/rec.jsonnet",
            "local f(n) = f(n + 1) + 1;\n{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'r' }, data: { n: std.toString(f(0)) } }\n",
        )]),
        "app",
    );
    refused(
        &out,
        "the call stack exceeded 500 frames (infinite recursion?)",
    );
}

#[test]
fn a_jsonnet_loop_is_killed_at_the_time_limit() {
    let out = render(&repo(&[("app/spin.jsonnet", JSONNET_SPIN)]), "app");
    refused(
        &out,
        "jsonnet app/spin.jsonnet did not finish within 3s and was stopped (limit: plumb.render.timeout)",
    );
}

#[test]
fn a_helm_template_that_loops_forever_is_killed_at_the_time_limit() {
    let out = render(
        &repo(&[
            (
                "chart/Chart.yaml",
                "apiVersion: v2\nname: spin\nversion: 0.1.0\n",
            ),
            (
                "chart/templates/cm.yaml",
                "{{- range until 100000 }}{{- range until 100000 }}{{- end }}{{- end }}\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: spin\n",
            ),
        ]),
        "chart",
    );
    refused(
        &out,
        "helm template chart did not finish within 3s and was stopped (limit: plumb.render.timeout)",
    );
}

#[test]
fn a_helm_template_with_recursive_include_is_an_error() {
    // helm's own bound on include depth answers this one; the render fails, nothing hangs.
    let out = render(
        &repo(&[
            (
                "chart/Chart.yaml",
                "apiVersion: v2\nname: rec\nversion: 0.1.0\n",
            ),
            (
                "chart/templates/cm.yaml",
                "{{- define \"rec\" }}{{ include \"rec\" . }}{{- end }}\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ include \"rec\" . }}\n",
            ),
        ]),
        "chart",
    );
    refused(&out, "helm template chart failed");
}

#[test]
fn a_kustomize_build_that_never_ends_is_killed() {
    // Layer n includes layer n-1 twice under two name suffixes: 2^30 kustomization loads.
    let mut files = vec![
        (
            "l0/cm.yaml".to_owned(),
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n".to_owned(),
        ),
        (
            "l0/kustomization.yaml".to_owned(),
            "resources:\n- cm.yaml\n".to_owned(),
        ),
    ];
    for i in 1..=30 {
        for half in ["a", "b"] {
            files.push((
                format!("l{i}/{half}/kustomization.yaml"),
                format!("resources:\n- ../../l{}\nnameSuffix: -{half}\n", i - 1),
            ));
        }
        files.push((
            format!("l{i}/kustomization.yaml"),
            "resources:\n- a\n- b\n".to_owned(),
        ));
    }
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let out = render(&repo(&refs), "l30");
    refused(&out, "kustomize build l30 ");
    let err = text(&out.stderr);
    assert!(
        err.contains("(limit: plumb.render.timeout)") || err.contains("(plumb.render.memoryLimit)"),
        "{err}"
    );
}

/// A stand-in for helm and kustomize that does what a tool fooled by a hostile chart or
/// kustomization could do: list the cache's repositories, read another tenant's checkout, read
/// a repository key, connect to a port on the machine. It prints what it could as a ConfigMap.
const PROBE_TOOL: &str = r#"#!/bin/bash
case "$1" in version) echo v0.0.0-probe; exit 0;; esac
repos=$(ls "$PROBE_CACHE/git/repos" 2>/dev/null | wc -l)
stolen=$(cat "$PROBE_CACHE"/git/trees/*/*/victim/secret.yaml 2>/dev/null | grep -c victim-secret-value)
key=$(cat "$PROBE_CACHE/git/keys/other.key" 2>/dev/null | wc -c)
(exec 3<>/dev/tcp/127.0.0.1/$PROBE_PORT) 2>/dev/null && net=yes || net=no
echo "apiVersion: v1"
echo "kind: ConfigMap"
echo "metadata: {name: probe}"
echo "data: {repos: '$repos', stolen: '$stolen', key: '$key', net: '$net'}"
"#;

/// Issue #26 item 2 and the sandbox of docs/security.md: helm and kustomize run with no network
/// and see nothing of the cache but their own checkout. Another tenant's checkout (rendered
/// first into the same cache), the repository keys and a listening port are out of reach even
/// for a tool that tries (a stand-in that reads them directly, as a fooled tool would).
#[test]
fn helm_and_kustomize_see_only_their_own_checkout_and_no_network() {
    let work = tempfile::tempdir().unwrap();
    let cache = work.path().join("cache");
    let probe = work.path().join("probe-tool");
    std::fs::write(&probe, PROBE_TOOL).unwrap();
    std::fs::set_permissions(&probe, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    let plumb = |repo: &GitRepo, path: &str| {
        Command::new(env!("CARGO_BIN_EXE_plumb"))
            .current_dir(work.path())
            .args(["render", "--repo", &repo.url(), "--path", path])
            .arg("--cache-dir")
            .arg(&cache)
            .arg("--helm")
            .arg(&probe)
            .arg("--kustomize")
            .arg(&probe)
            .env("PROBE_CACHE", &cache)
            .env("PROBE_PORT", &port)
            .env_remove("PLUMB_LOG")
            .output()
            .unwrap()
    };
    let victim = repo(&[(
        "victim/secret.yaml",
        "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData: {v: victim-secret-value}\n",
    )]);
    let out = plumb(&victim, "victim");
    assert!(out.status.success(), "{}", text(&out.stderr));
    std::fs::create_dir_all(cache.join("git/keys")).unwrap();
    std::fs::write(cache.join("git/keys/other.key"), "PRIVATE KEY").unwrap();
    let attacker = repo(&[
        ("k/kustomization.yaml", "resources: []\n"),
        (
            "chart/Chart.yaml",
            "apiVersion: v2\nname: c\nversion: 1.0.0\n",
        ),
    ]);
    for path in ["k", "chart"] {
        let out = plumb(&attacker, path);
        assert!(out.status.success(), "{path}: {}", text(&out.stderr));
        let shown = text(&out.stdout);
        for (what, expected) in [
            ("repos", "\"0\""),
            ("stolen", "\"0\""),
            ("key", "\"0\""),
            ("net", "\"no\""),
        ] {
            assert!(
                shown.contains(&format!("{what}: {expected}")),
                "{path}: {what}: {shown}"
            );
        }
    }
}

#[test]
fn a_runaway_jsonnet_app_gets_a_comparison_error_while_another_app_syncs() {
    let ctl = Running::start("hostile-renders", &[("PLUMB_LOG", "info")]);
    kubectl_apply(&json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "argocd-cm", "namespace": ctl.ns.name()},
        // The timeout is long enough that on a loaded machine the bomb still reaches its memory
        // limit first (with 3 s it was once stopped by the timeout instead, at load average 18).
        "data": {"plumb.render.timeout": "20s", "plumb.render.memoryLimit": "256Mi"}
    }));
    let start = std::time::Instant::now();
    while !ctl.log().contains("settings reloaded") {
        assert!(
            start.elapsed() < DEADLINE,
            "settings never reloaded:\n{}",
            ctl.log()
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let dest = crate::running::env().namespace("hostile-renders-dest");
    let bad = repo(&[
        ("spin/spin.jsonnet", JSONNET_SPIN),
        ("bomb/bomb.jsonnet", JSONNET_BOMB),
    ]);
    let good = repo(&[(
        "app/cm.jsonnet",
        "{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'fine' }, data: { ok: 'yes' } }\n",
    )]);
    let spec = |repo: &GitRepo, path: &str, auto: bool| {
        let mut s = json!({
            "project": "default",
            "source": {"repoURL": repo.url(), "path": path},
            "destination": {"server": "https://kubernetes.default.svc", "namespace": dest.name()}
        });
        if auto {
            s["syncPolicy"] = json!({"automated": {}});
        }
        s
    };
    ctl.create_app("spin", spec(&bad, "spin", false));
    ctl.create_app("bomb", spec(&bad, "bomb", false));
    ctl.create_app("fine", spec(&good, "app", true));
    for (name, expected) in [
        (
            "spin",
            "jsonnet spin/spin.jsonnet did not finish within 20s and was stopped (limit: plumb.render.timeout)",
        ),
        (
            "bomb",
            "jsonnet bomb/bomb.jsonnet was stopped: it exceeded the memory limit of 256 MiB (plumb.render.memoryLimit)",
        ),
    ] {
        let app = ctl.wait_app(name, "a ComparisonError", |a| {
            condition(a, "ComparisonError").is_some()
        });
        let message = condition(&app, "ComparisonError").unwrap()["message"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert!(message.contains(expected), "{name}: {message}");
        assert_eq!(app["status"]["sync"]["status"], "Unknown", "{name}");
    }
    let app = ctl.wait_app("fine", "Synced", |a| {
        a["status"]["sync"]["status"] == "Synced"
    });
    assert!(condition(&app, "ComparisonError").is_none());
    assert!(crate::running::get_json(dest.name(), "configmap", "fine").is_some());
    // The controller is still alive and answering after both attacks.
    assert!(!ctl.log().contains("CONTROLLER STOPPED"));
}

/// The manifest cache is read back after a restart, so whoever can write to the cache volume (or
/// a disk that corrupts it) could try to make Plumb apply objects that no repository declares.
/// Each file carries its length and a SHA-256 of the installation's salt (unreadable to that
/// attacker) and the body: a rewritten body with a fixed-up length, a truncated file and a file
/// replaced by a link to `/etc/passwd` are each detected, removed and rendered again from Git.
#[test]
fn a_tampered_or_corrupt_manifest_cache_file_is_rendered_again_not_trusted() {
    use crate::repo_reads::plumb;
    let repo = GitRepo::new();
    repo.commit(
        &[(
            "app/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: honest\ndata:\n  image: registry.example.com/app:1\n",
        )],
        "one",
    );
    let cache = tempfile::tempdir().unwrap();
    let url = repo.url();
    let dir = cache.path().to_str().unwrap();
    let args = [
        "render",
        "--repo",
        &url,
        "--path",
        "app",
        "--cache-dir",
        dir,
        "-o",
        "json",
    ];
    let first = plumb(&args);
    assert_eq!(first.code, Some(0), "{}", first.all());
    assert!(first.stdout.contains("registry.example.com/app:1"));
    let manifests = cache.path().join("manifests");
    let files: Vec<_> = std::fs::read_dir(&manifests)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let file = &files[0];
    let original = std::fs::read_to_string(file).unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!((mode(&manifests), mode(file)), (0o700, 0o600));
    }

    let (header, body) = original.split_once('\n').unwrap();
    let evil_body = body.replace(
        "registry.example.com/app:1",
        "evil.example.com/miner:latest",
    );
    let parts: Vec<&str> = header.split(' ').collect();
    let mut forged = parts.clone();
    let len = evil_body.len().to_string();
    forged[1] = &len;
    let tampered = format!("{}\n{evil_body}", forged.join(" "));
    let truncated = original[..original.len() / 2].to_string();

    for (what, plant) in [
        ("a rewritten body", Some(tampered)),
        ("a truncated file", Some(truncated)),
        ("a link to /etc/passwd", None),
    ] {
        std::fs::remove_file(file).ok();
        match plant {
            Some(text) => std::fs::write(file, text).unwrap(),
            None => std::os::unix::fs::symlink("/etc/passwd", file).unwrap(),
        }
        let run = plumb(&args);
        assert_eq!(run.code, Some(0), "{what}: {}", run.all());
        assert!(
            run.stdout.contains("registry.example.com/app:1")
                && !run.all().contains("evil.example.com")
                && !run.all().contains("root:x:0:0"),
            "{what}: {}",
            run.all()
        );
        // Rendered again and written back as a regular file that passes its checks.
        assert!(
            std::fs::symlink_metadata(file)
                .unwrap()
                .file_type()
                .is_file(),
            "{what}"
        );
        assert_eq!(std::fs::read_to_string(file).unwrap(), original, "{what}");
    }
}

/// Helm evaluates `--name-template` as a Go template with every sprig function, `env` among them:
/// an Application author who writes `releaseName: '{{ env "SECRET" }}'` would read the
/// controller's environment back through `.Release.Name` in the rendered manifests. A release
/// name that is not one helm accepts (DNS-style, at most 53 characters) is refused before helm
/// runs, naming the field; the value never appears.
#[test]
fn a_helm_release_name_cannot_template_the_controllers_environment() {
    const CANARY: &str = "hostilecanary7731";
    let repo = repo(&[
        (
            "chart/Chart.yaml",
            "apiVersion: v2\nname: leak\nversion: 0.1.0\n",
        ),
        (
            "chart/templates/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: leak\ndata:\n  release: {{ .Release.Name | quote }}\n",
        ),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let app = dir.path().join("app.yaml");
    std::fs::write(
        &app,
        format!(
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: leak\nspec:\n  project: default\n  source:\n    repoURL: {}\n    path: chart\n    targetRevision: HEAD\n    helm:\n      releaseName: '{{{{ env \"PLUMB_HOSTILE_CANARY\" }}}}'\n  destination:\n    server: https://kubernetes.default.svc\n    namespace: default\n",
            repo.url()
        ),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_plumb"))
        .current_dir(dir.path())
        .arg("render")
        .arg("--app")
        .arg(&app)
        .arg("--cache-dir")
        .arg(dir.path().join("cache"))
        .arg("--helm")
        .arg(plumb_testenv::tools::helm())
        .env("PLUMB_HOSTILE_CANARY", CANARY)
        .env_remove("PLUMB_LOG")
        .output()
        .unwrap();
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(!all.contains(CANARY), "the environment leaked: {all}");
    refused(&out, "spec.source.helm.releaseName");
}
