//! Renders run in a worker process under time, memory and stack limits, and leave nothing running
//! (issue #12: "Jsonnet has no memory bound and no real cancellation"). Limits are small here so
//! the attacks stay cheap: 256 MiB of memory, a few seconds.

use std::path::Path;
use std::time::Duration;

use plumb_source::{Config, Error, Limits, Renderer, Tools, Worker};
use plumb_testenv::git::GitRepo;

use crate::support::*;

fn small() -> Limits {
    Limits::default()
        .render_memory_bytes(256 << 20)
        .render_timeout(Duration::from_secs(3))
}

/// A renderer whose worker runs as `argv[0] = marker` (so it can be found in the process table)
/// and whose helm is `helm` (the real one unless a test gives a script).
fn marked_renderer(marker: &str, helm: &Path, limits: Limits) -> (Renderer, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let real = worker();
    let tools = Tools {
        helm: helm.to_path_buf(),
        kustomize: plumb_testenv::tools::kustomize(),
        worker: Worker {
            program: "bash".into(),
            args: vec![
                "-c".into(),
                format!("exec -a {marker} {} \"$@\"", real.program.display()).into(),
                "worker".into(),
            ],
        },
    };
    let r = Renderer::new(Config::new(dir.path()).tools(tools).limits(limits)).unwrap();
    (r, dir)
}

/// Processes (not zombies) whose command line or working directory mentions `marker`.
fn running(marker: &str) -> Vec<String> {
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

fn unique(name: &str) -> String {
    format!("plumb-limit-test-{name}-{}", std::process::id())
}

fn jsonnet_repo(file: &str, text: &str) -> GitRepo {
    let repo = GitRepo::new();
    repo.commit(&[(file, text)], "attack");
    repo
}

#[test]
fn a_jsonnet_comprehension_that_grows_without_bound_hits_the_memory_limit() {
    // About 1 GiB unbounded; the limit is 256 MiB.
    let repo = jsonnet_repo(
        "app/bomb.jsonnet",
        "local big = [{ name: 'cm-%d' % i, data: std.repeat('x', 64) } for i in std.range(1, 5000000)];\n\
         { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'bomb' },\n  data: { n: std.toString(std.length([x for x in big if x.name != ''])) } }\n",
    );
    let marker = unique("bomb");
    let (r, _d) = marked_renderer(
        &marker,
        &plumb_testenv::tools::helm(),
        small().render_timeout(Duration::from_secs(60)),
    );
    let err = r
        .render(&request(vec![source(&repo.url(), "app", "main")]))
        .unwrap_err();
    assert!(matches!(err, Error::RenderLimit { .. }), "{err}");
    assert_eq!(
        err.to_string(),
        "jsonnet app/bomb.jsonnet was stopped: it exceeded the memory limit of 256 MiB (plumb.render.memoryLimit)"
    );
    assert_eq!(running(&marker), Vec::<String>::new());
}

#[test]
fn jsonnet_recursion_without_end_stops_at_the_stack_bound() {
    let repo = jsonnet_repo(
        "app/rec.jsonnet",
        "local f(n) = f(n + 1) + 1;\n{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'r' }, data: { n: std.toString(f(0)) } }\n",
    );
    let (r, _d) = renderer_with(small());
    let err = r
        .render(&request(vec![source(&repo.url(), "app", "main")]))
        .unwrap_err();
    assert!(matches!(err, Error::Jsonnet { .. }), "{err}");
    assert_eq!(
        err.to_string(),
        "jsonnet app/rec.jsonnet: app/rec.jsonnet:2: the call stack exceeded 500 frames (infinite recursion?)"
    );
}

#[test]
fn a_jsonnet_loop_is_killed_at_the_deadline_and_leaves_no_process() {
    let repo = jsonnet_repo(
        "app/spin.jsonnet",
        "local inner(i) = std.foldl(function(acc, j) acc + j, std.range(1, 100000), i);\n\
         { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'spin' },\n  data: { n: std.toString(std.foldl(function(acc, i) inner(acc), std.range(1, 100000), 0)) } }\n",
    );
    let marker = unique("spin");
    let (r, _d) = marked_renderer(&marker, &plumb_testenv::tools::helm(), small());
    let err = r
        .render(&request(vec![source(&repo.url(), "app", "main")]))
        .unwrap_err();
    assert!(matches!(err, Error::RenderTimeout { .. }), "{err}");
    assert_eq!(
        err.to_string(),
        "jsonnet app/spin.jsonnet did not finish within 3s and was stopped (limit: plumb.render.timeout)"
    );
    assert_eq!(running(&marker), Vec::<String>::new());
}

fn chart_repo(template: &str) -> GitRepo {
    let repo = GitRepo::new();
    repo.commit(
        &[
            (
                "chart/Chart.yaml",
                "apiVersion: v2\nname: attack\nversion: 0.1.0\n",
            ),
            ("chart/templates/cm.yaml", template),
        ],
        "chart",
    );
    repo
}

#[test]
fn a_helm_template_that_loops_forever_is_killed_with_its_process_group() {
    let repo = chart_repo(
        "{{- range until 100000 }}{{- range until 100000 }}{{- end }}{{- end }}\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: spin\n",
    );
    let (r, cache) = renderer_with_tools_and(small());
    let err = r
        .render(&request(vec![source(&repo.url(), "chart", "main")]))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "helm template chart did not finish within 3s and was stopped (limit: plumb.render.timeout)"
    );
    // helm ran in the chart's checkout under the cache directory.
    assert_eq!(
        running(&cache.path().display().to_string()),
        Vec::<String>::new()
    );
}

#[test]
fn a_helm_template_that_doubles_a_string_hits_the_memory_limit() {
    let repo = chart_repo(
        "{{- $x := \"aaaaaaaa\" }}{{- range until 60 }}{{- $x = print $x $x }}{{- end }}\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  n: {{ len $x | quote }}\n",
    );
    let (r, _d) = renderer_with_tools_and(small().render_timeout(Duration::from_secs(60)));
    let err = r
        .render(&request(vec![source(&repo.url(), "chart", "main")]))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "helm template chart was stopped: it exceeded the memory limit of 256 MiB (plumb.render.memoryLimit)"
    );
}

#[test]
fn a_kustomization_that_doubles_at_every_layer_is_stopped() {
    // Layer n includes layer n-1 twice (under two name suffixes): 2^30 loads.
    let repo = GitRepo::new();
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
    repo.commit(&refs, "exponential");
    let (r, cache) = renderer_with_tools_and(small());
    let err = r
        .render(&request(vec![source(&repo.url(), "l30", "main")]))
        .unwrap_err();
    assert!(
        matches!(err, Error::RenderTimeout { .. } | Error::RenderLimit { .. }),
        "{err}"
    );
    assert!(err.to_string().starts_with("kustomize build l30 "), "{err}");
    assert_eq!(
        running(&cache.path().display().to_string()),
        Vec::<String>::new()
    );
}

/// A stand-in for helm: a script that leaves a child behind, then `then` (e.g. loops forever).
fn script(dir: &Path, then: &str) -> std::path::PathBuf {
    let path = dir.join("helm");
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\nif [ \"$1\" = version ]; then echo v3.0.0+fake; exit 0; fi\nsleep 300 &\nsh -c 'sleep 301' &\n{then}\n"
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

#[test]
fn children_a_tool_starts_die_with_it_on_timeout_and_on_success() {
    let repo = chart_repo("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n");
    let bin = tempfile::tempdir().unwrap();
    let marker = unique("children");
    for (then, timeout) in [
        ("while :; do :; done", true),
        (
            "printf 'apiVersion: v1\\nkind: ConfigMap\\nmetadata:\\n  name: x\\n'",
            false,
        ),
    ] {
        let helm = script(bin.path(), then);
        let (r, cache) = marked_renderer(&marker, &helm, small());
        let out = r.render(&request(vec![source(&repo.url(), "chart", "main")]));
        match out {
            Err(Error::RenderTimeout { .. }) if timeout => {}
            Ok(rendered) if !timeout => assert_eq!(keys(&rendered), ["/ConfigMap//x"]),
            other => panic!("{then}: {other:?}"),
        }
        // The sleeps ran in the chart directory, under the cache directory.
        assert_eq!(
            running(&cache.path().display().to_string()),
            Vec::<String>::new(),
            "{then}"
        );
    }
}

#[test]
fn a_tool_that_crashes_is_an_error_naming_the_signal() {
    let repo = chart_repo("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n");
    let bin = tempfile::tempdir().unwrap();
    let helm = script(bin.path(), "echo 'panic: nil map' >&2; kill -SEGV $$");
    let (r, _d) = marked_renderer(&unique("crash"), &helm, small());
    let err = r
        .render(&request(vec![source(&repo.url(), "chart", "main")]))
        .unwrap_err();
    assert!(matches!(err, Error::RenderCrashed { .. }), "{err}");
    assert_eq!(
        err.to_string(),
        "helm template chart crashed: killed by signal 11: panic: nil map"
    );
}

#[test]
fn a_program_that_is_not_the_render_worker_is_refused() {
    let repo = jsonnet_repo(
        "app/a.jsonnet",
        "{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' } }\n",
    );
    let dir = tempfile::tempdir().unwrap();
    let tools = Tools {
        worker: Worker::program("/bin/echo"),
        ..Tools::default()
    };
    let r = Renderer::new(Config::new(dir.path()).tools(tools)).unwrap();
    let err = r
        .render(&request(vec![source(&repo.url(), "app", "main")]))
        .unwrap_err();
    assert!(matches!(err, Error::RenderWorker { .. }), "{err}");
    assert!(
        err.to_string().starts_with(
            "render worker /bin/echo cannot run renders: it is not Plumb's render worker"
        ),
        "{err}"
    );
}
