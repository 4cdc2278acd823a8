//! Attacks: repository reads. Whoever can push to a repository tries to make Plumb read (and
//! print, or apply) files outside the checkout: chained symlinks, `..` and absolute paths in
//! sources and Helm value files (Argo CD CVE-2022-24348, GHSA-h6h5-6fmq-rh28, CVE-2022-24730),
//! symlinked value files, kustomize `file://` and outside bases. Each test runs the real `plumb`
//! binary on a real Git repository and checks the refusal names the culprit and nothing outside
//! leaks into the output.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use plumb_testenv::git::GitRepo;

/// What a `plumb` run printed.
pub(crate) struct Run {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// Everything printed, for "nothing leaked" checks.
    pub fn all(&self) -> String {
        format!("{}\n{}", self.stdout, self.stderr)
    }
}

/// Runs the real `plumb` binary; a run that has not ended after a generous deadline is killed
/// and fails the test (the attacks here must end with an error, never hang).
pub(crate) fn plumb(args: &[&str]) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_plumb"))
        .args(args)
        .env("PLUMB_HELM", plumb_testenv::tools::helm())
        .env("PLUMB_KUSTOMIZE", plumb_testenv::tools::kustomize())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(180);
    let out_pipe = child.stdout.take().unwrap();
    let err_pipe = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || std::io::read_to_string(out_pipe).unwrap_or_default());
    let err = std::thread::spawn(move || std::io::read_to_string(err_pipe).unwrap_or_default());
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("plumb {args:?} did not end within 180 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    Run {
        code: status.code(),
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

/// `plumb render --repo <repo> --path <path>` with its own cache directory, plus `extra`.
fn render(repo: &GitRepo, path: &str, extra: &[&str]) -> Run {
    let cache = tempfile::tempdir().unwrap();
    let url = repo.url();
    let cache_dir = cache.path().display().to_string();
    let mut args = vec![
        "render",
        "--repo",
        &url,
        "--path",
        path,
        "--cache-dir",
        &cache_dir,
    ];
    args.extend_from_slice(extra);
    plumb(&args)
}

fn configmap(name: &str, value: &str) -> String {
    format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  k: {value}\n")
}

/// Commits the chained-symlink escape of issue #12 at `link`, aimed at the absolute `outside`:
/// `d0/…/d39/up -> ../…` climbs back exactly to the root (inside, on paper), and `link` walks
/// through it and climbs once more than the path is deep (inside, on paper); on disk it leaves.
fn commit_chained_escape(repo: &GitRepo, link: &str, outside: &Path) {
    let depth = 40;
    let dirs: Vec<String> = (0..depth).map(|i| format!("d{i}")).collect();
    let up_dir = dirs.join("/");
    repo.commit_symlink(&format!("{up_dir}/up"), &"../".repeat(depth), "up");
    let link_depth = Path::new(link).components().count() - 1;
    let target = format!(
        "{}{up_dir}/up/{}{}",
        "../".repeat(link_depth),
        "../".repeat(depth + 1),
        outside.display().to_string().trim_start_matches('/')
    );
    repo.commit_symlink(link, &target, "chained escape");
}

fn refused(run: &Run) {
    assert_ne!(run.code, Some(0), "plumb succeeded:\n{}", run.all());
}

#[test]
fn chained_symlinks_do_not_leak_a_file_through_the_directory_renderer() {
    let outside = tempfile::tempdir().unwrap();
    let stolen = outside.path().join("stolen.yaml");
    std::fs::write(&stolen, configmap("stolen", "controller-disk-secret")).unwrap();
    let repo = GitRepo::new();
    repo.commit(&[("deploy/cm.yaml", configmap("a", "v"))], "ok");
    commit_chained_escape(&repo, "deploy/evil.yaml", &stolen);
    let run = render(&repo, "deploy", &[]);
    refused(&run);
    assert!(
        !run.all().contains("controller-disk-secret"),
        "{}",
        run.all()
    );
    assert!(
        run.stderr.contains("deploy/evil.yaml -> "),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("out-of-bounds symlink"),
        "{}",
        run.stderr
    );
}

#[test]
fn chained_symlinks_do_not_print_etc_passwd_through_jsonnet_importstr() {
    let repo = GitRepo::new();
    repo.commit(
        &[(
            "app/main.jsonnet",
            "{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' }, data: { p: importstr 'passwd.txt' } }\n",
        )],
        "jsonnet",
    );
    commit_chained_escape(&repo, "app/passwd.txt", Path::new("/etc/passwd"));
    let run = render(&repo, "app", &[]);
    refused(&run);
    assert!(!run.all().contains("root:"), "{}", run.all());
    assert!(run.stderr.contains("app/passwd.txt -> "), "{}", run.stderr);
}

#[test]
fn jsonnet_imports_that_climb_out_are_refused() {
    let repo = GitRepo::new();
    repo.commit(
        &[(
            "app/main.jsonnet",
            "{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' }, data: { p: importstr '../../../../../../../../etc/passwd' } }\n",
        )],
        "climb",
    );
    let run = render(&repo, "app", &[]);
    refused(&run);
    assert!(!run.all().contains("root:"), "{}", run.all());
    assert!(
        run.stderr.contains("resolves outside the repository root"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_source_path_with_dot_dot_or_through_a_link_is_refused() {
    let repo = GitRepo::new();
    repo.commit(&[("deploy/cm.yaml", configmap("a", "v"))], "ok");
    let run = render(&repo, "../../../../etc", &[]);
    refused(&run);
    assert!(
        run.stderr
            .contains("spec.source.path: ../../../../etc resolves outside the repository root"),
        "{}",
        run.stderr
    );
    let run = render(&repo, "/etc", &[]);
    refused(&run);
    assert!(run.stderr.contains("spec.source.path"), "{}", run.stderr);
}

/// A chart whose templates print every value, so a value file read from outside would show.
fn commit_chart(repo: &GitRepo) {
    repo.commit(
        &[
            ("chart/Chart.yaml", "apiVersion: v2\nname: c\nversion: 0.1.0\n"),
            (
                "chart/templates/cm.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: values\ndata:\n  all: {{ toJson .Values | quote }}\n",
            ),
            ("chart/values.yaml", "a: 1\n"),
        ],
        "chart",
    );
}

#[test]
fn helm_value_files_that_climb_out_are_refused() {
    let repo = GitRepo::new();
    commit_chart(&repo);
    let run = render(
        &repo,
        "chart",
        &["--values", "../../../../../../etc/passwd"],
    );
    refused(&run);
    assert!(!run.all().contains("root:"), "{}", run.all());
    assert!(
        run.stderr.contains(
            "spec.source.helm.valueFiles: ../../../../../../etc/passwd resolves outside the repository root"
        ),
        "{}",
        run.stderr
    );
}

#[test]
fn an_absolute_helm_value_file_means_the_repository_root_not_the_disk() {
    let repo = GitRepo::new();
    commit_chart(&repo);
    let run = render(&repo, "chart", &["--values", "/etc/passwd"]);
    refused(&run);
    assert!(!run.all().contains("root:"), "{}", run.all());
    assert!(
        run.stderr
            .contains("spec.source.helm.valueFiles: /etc/passwd does not exist in the repository"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_symlinked_helm_value_file_that_leads_out_is_refused() {
    let outside = tempfile::tempdir().unwrap();
    let stolen = outside.path().join("values.yaml");
    std::fs::write(&stolen, "stolen: controller-disk-secret\n").unwrap();
    // A plain link out is refused when the commit is checked out…
    let repo = GitRepo::new();
    commit_chart(&repo);
    repo.commit_symlink("chart/prod.yaml", &stolen.display().to_string(), "abs");
    let run = render(&repo, "chart", &["--values", "prod.yaml"]);
    refused(&run);
    assert!(
        !run.all().contains("controller-disk-secret"),
        "{}",
        run.all()
    );
    assert!(run.stderr.contains("chart/prod.yaml -> "), "{}", run.stderr);
    // …and so is a chained one that looks inside link by link.
    let repo = GitRepo::new();
    commit_chart(&repo);
    commit_chained_escape(&repo, "chart/prod.yaml", &stolen);
    let run = render(&repo, "chart", &["--values", "prod.yaml"]);
    refused(&run);
    assert!(
        !run.all().contains("controller-disk-secret"),
        "{}",
        run.all()
    );
    assert!(run.stderr.contains("chart/prod.yaml -> "), "{}", run.stderr);
}

#[test]
fn a_symlinked_value_file_inside_the_repository_still_works() {
    let repo = GitRepo::new();
    commit_chart(&repo);
    repo.commit(&[("env/prod.yaml", "a: 42\n")], "values");
    repo.commit_symlink("chart/prod.yaml", "../env/prod.yaml", "link");
    let run = render(&repo, "chart", &["--values", "prod.yaml"]);
    assert_eq!(run.code, Some(0), "{}", run.all());
    assert!(run.stdout.contains(r#"all: '{"a":42}'"#), "{}", run.stdout);
}

fn commit_kustomization(repo: &GitRepo, resources: &str) {
    repo.commit(
        &[
            ("k/kustomization.yaml", format!("resources:\n{resources}")),
            ("k/cm.yaml", configmap("a", "v")),
        ],
        "kustomize",
    );
}

#[test]
fn kustomize_file_urls_are_refused() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(
        outside.path().join("kustomization.yaml"),
        "resources:\n- cm.yaml\n",
    )
    .unwrap();
    std::fs::write(
        outside.path().join("cm.yaml"),
        configmap("stolen", "controller-disk-secret"),
    )
    .unwrap();
    for target in [
        format!("file://{}", outside.path().display()),
        format!("git::file://{}", outside.path().display()),
    ] {
        let repo = GitRepo::new();
        commit_kustomization(&repo, &format!("- cm.yaml\n- {target}\n"));
        let run = render(&repo, "k", &[]);
        refused(&run);
        assert!(
            !run.all().contains("controller-disk-secret"),
            "{}",
            run.all()
        );
        let expected = format!(
            "k/kustomization.yaml: resources: remote target {target} is refused: file:// URLs read the controller's disk"
        );
        assert!(run.stderr.contains(&expected), "{}", run.stderr);
    }
}

#[test]
fn kustomize_bases_outside_the_checkout_are_refused() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("kustomization.yaml"), "resources: []\n").unwrap();
    let abs = outside.path().display().to_string();
    for target in ["../../../../../../../../tmp", abs.as_str()] {
        let repo = GitRepo::new();
        commit_kustomization(&repo, &format!("- cm.yaml\n- {target}\n"));
        let run = render(&repo, "k", &[]);
        refused(&run);
        assert!(
            run.stderr.contains(&format!(
                "k/kustomization.yaml: resources: {target} resolves outside the repository root"
            )),
            "{}",
            run.stderr
        );
    }
}

/// `replacements[].path`, a Helm chart's values files and Helm's config home (registry logins) are
/// read by kustomize itself (from anywhere with `--load-restrictor LoadRestrictionsNone` in
/// `kustomize.buildOptions`): each is checked like a base, before kustomize runs.
#[test]
fn kustomize_replacement_and_helm_values_files_outside_the_checkout_are_refused() {
    let outside = tempfile::tempdir().unwrap();
    let stolen = outside.path().join("values.yaml");
    std::fs::write(&stolen, "secret: controller-disk-secret\n").unwrap();
    let abs = stolen.display().to_string();
    for (field, kustomization) in [
        (
            "replacements[].path",
            format!("resources:\n- cm.yaml\nreplacements:\n- path: {abs}\n"),
        ),
        (
            "helmCharts[].valuesFile",
            format!(
                "resources:\n- cm.yaml\nhelmCharts:\n- name: x\n  valuesFile: ../../../../../../../..{abs}\n"
            ),
        ),
        (
            "helmGlobals.configHome",
            format!(
                "resources:\n- cm.yaml\nhelmGlobals:\n  configHome: {}\n",
                outside.path().display()
            ),
        ),
        (
            "helmCharts[].additionalValuesFiles",
            format!(
                "resources:\n- cm.yaml\nhelmCharts:\n- name: x\n  additionalValuesFiles:\n  - {abs}\n"
            ),
        ),
    ] {
        let repo = GitRepo::new();
        repo.commit(
            &[
                ("k/kustomization.yaml", kustomization),
                ("k/cm.yaml", configmap("a", "v")),
            ],
            "kustomize",
        );
        let run = render(&repo, "k", &[]);
        refused(&run);
        assert!(
            !run.all().contains("controller-disk-secret"),
            "{}",
            run.all()
        );
        assert!(
            run.stderr
                .contains(&format!("k/kustomization.yaml: {field}: "))
                && run.stderr.contains("resolves outside the repository root"),
            "{field}: {}",
            run.stderr
        );
    }
}

#[test]
fn kustomize_remote_bases_must_be_allowed_by_the_project() {
    let repo = GitRepo::new();
    commit_kustomization(
        &repo,
        "- cm.yaml\n- https://git.evil.example/attacker/base//deploy?ref=main\n",
    );
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project.yaml");
    std::fs::write(
        &project,
        "apiVersion: argoproj.io/v1alpha1\nkind: AppProject\nmetadata:\n  name: payments\nspec:\n  sourceRepos:\n  - https://git.acme.example/*\n",
    )
    .unwrap();
    let project = project.display().to_string();
    let run = render(&repo, "k", &["--project", &project]);
    refused(&run);
    assert!(
        run.stderr.contains(
            "remote target https://git.evil.example/attacker/base//deploy?ref=main is refused: repository https://git.evil.example/attacker/base is not permitted by the project's sourceRepos"
        ),
        "{}",
        run.stderr
    );
    // Plain http and other schemes are refused with or without a project.
    let repo = GitRepo::new();
    commit_kustomization(&repo, "- http://git.acme.example/team/base\n");
    let run = render(&repo, "k", &[]);
    refused(&run);
    assert!(
        run.stderr.contains("plain http:// is not allowed"),
        "{}",
        run.stderr
    );
}

/// An AppProject manifest permitting `patterns`, written in `dir`; returns its path.
fn project_file(dir: &Path, patterns: &[&str]) -> String {
    let path = dir.join("project.yaml");
    let list: String = patterns.iter().map(|p| format!("  - '{p}'\n")).collect();
    std::fs::write(
        &path,
        format!(
            "apiVersion: argoproj.io/v1alpha1\nkind: AppProject\nmetadata:\n  name: payments\nspec:\n  sourceRepos:\n{list}"
        ),
    )
    .unwrap();
    path.display().to_string()
}

/// Issue #26 item 2: kustomize 5.8 fetches `GITHUB.COM/org/repo`, `github.com:org/repo` and
/// `Git@host:path`, which Plumb read as local paths, so they escaped `sourceRepos`. Each is now
/// a remote base, checked against the project (and fetched by Plumb, never by kustomize).
#[test]
fn kustomize_remote_base_spellings_kustomize_fetches_are_checked_against_the_project() {
    let dir = tempfile::tempdir().unwrap();
    let project = project_file(dir.path(), &["https://git.acme.example/*"]);
    for (entry, repo) in [
        (
            "GITHUB.COM/attacker/base/app",
            "https://github.com/attacker/base",
        ),
        (
            "github.com:attacker/base//app",
            "https://github.com/attacker/base",
        ),
        (
            "Git@git.evil.example:attacker/base.git//app",
            "Git@git.evil.example:attacker/base.git",
        ),
        (
            "HTTPS://GIT.EVIL.EXAMPLE/attacker/base//app",
            "https://git.evil.example/attacker/base",
        ),
    ] {
        let repo_under_test = GitRepo::new();
        commit_kustomization(&repo_under_test, &format!("- cm.yaml\n- {entry}\n"));
        let run = render(&repo_under_test, "k", &["--project", &project]);
        refused(&run);
        let expected = format!(
            "k/kustomization.yaml: resources: remote target {entry} is refused: repository {repo} is not permitted by the project's sourceRepos"
        );
        assert!(run.stderr.contains(&expected), "{entry}: {}", run.stderr);
    }
    // A `file:` URL in any case is refused outright.
    let repo = GitRepo::new();
    commit_kustomization(
        &repo,
        "- cm.yaml\n- GIT::FILE:///var/cache/plumb/git/repos/x.git//app\n",
    );
    let run = render(&repo, "k", &[]);
    refused(&run);
    assert!(
        run.stderr
            .contains("is refused: file:// URLs read the controller's disk"),
        "{}",
        run.stderr
    );
}

/// Issue #35 item 5 (the class of GHSA-9v9p-x54c-58gc): kustomize handed a remote base's `?ref=`
/// to `git fetch` as a bare argument. A ref that git could read as an option (or that is no ref
/// name) is refused before anything runs, naming the kustomization file and the entry, even for
/// a repository the project permits.
#[test]
fn kustomize_remote_refs_that_git_would_read_as_options_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let project = project_file(dir.path(), &["https://git.acme.example/team/*"]);
    for (entry, why) in [
        (
            "https://git.acme.example/team/base//app?ref=--upload-pack=touch%20/tmp/pwned",
            "its ref starts with '-', which git would read as an option",
        ),
        (
            "https://git.acme.example/team/base//app?version=%2D%2Dupload-pack",
            "its ref starts with '-', which git would read as an option",
        ),
        (
            "https://git.acme.example/team/base//app?sha=main%0A--exec",
            "its ref holds whitespace or control characters",
        ),
        (
            "https://git.acme.example/team/base//app?ref=../../refs/heads/x",
            "its ref holds '..' or '@{'",
        ),
    ] {
        let repo = GitRepo::new();
        commit_kustomization(&repo, &format!("- cm.yaml\n- {entry}\n"));
        let run = render(&repo, "k", &["--project", &project]);
        refused(&run);
        let expected =
            format!("k/kustomization.yaml: resources: remote target {entry} is refused: {why}");
        assert!(run.stderr.contains(&expected), "{entry}: {}", run.stderr);
    }
}

/// Issue #26 item 2: kustomize's and helm's errors named absolute paths in the cache
/// (`<cache>/git/trees/<hash>/…`), and the hash located other tenants' checkouts. Paths inside
/// the checkout are shown relative to it; any other absolute path as `<path>`.
#[test]
fn kustomize_and_helm_errors_show_no_cache_paths() {
    let cache = tempfile::tempdir().unwrap();
    let cache_dir = cache.path().display().to_string();
    let repo = GitRepo::new();
    repo.commit(
        &[
            (
                "k/kustomization.yaml",
                "resources:\n- cm.yaml\n- missing/\n".to_owned(),
            ),
            ("k/cm.yaml", configmap("a", "v")),
            (
                "chart/Chart.yaml",
                "apiVersion: v2\nname: c\nversion: 1.0.0\n".to_owned(),
            ),
            ("chart/templates/cm.yaml", configmap("c", "v")),
            // helm names a value file it cannot parse by its absolute path.
            ("chart/bad.yaml", "a: [\n".to_owned()),
        ],
        "errors",
    );
    let url = repo.url();
    for (path, extra) in [("k", None), ("chart", Some("bad.yaml"))] {
        let mut args = vec![
            "render",
            "--repo",
            &url,
            "--path",
            path,
            "--cache-dir",
            &cache_dir,
        ];
        if let Some(values) = extra {
            args.extend(["--values", values]);
        }
        let run = plumb(&args);
        refused(&run);
        assert!(
            !run.stderr.contains(&cache_dir) && !run.stderr.contains("/git/trees/"),
            "{path}: {}",
            run.stderr
        );
    }
    let run = plumb(&[
        "render",
        "--repo",
        &url,
        "--path",
        "chart",
        "--values",
        "bad.yaml",
        "--cache-dir",
        &cache_dir,
    ]);
    assert!(run.stderr.contains("chart/bad.yaml"), "{}", run.stderr);
}

/// Issue #26 item 8: helm fetched `valueFiles` URLs itself, from any address (a cloud metadata
/// endpoint included), and the result could be read through the manifests. Plumb fetches value
/// files only from repositories the project permits, and helm gets no network at all.
#[test]
fn helm_value_file_urls_must_come_from_repositories_the_project_permits() {
    use std::io::{Read as _, Write as _};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut stream = stream;
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf);
            let body = "greeting: from-a-permitted-url\n";
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    let repo = GitRepo::new();
    repo.commit(
        &[
            (
                "chart/Chart.yaml",
                "apiVersion: v2\nname: c\nversion: 1.0.0\n",
            ),
            (
                "chart/templates/cm.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  g: {{ .Values.greeting | quote }}\n",
            ),
        ],
        "chart",
    );
    let dir = tempfile::tempdir().unwrap();
    let permitted = format!("http://127.0.0.1:{port}/team/*");
    let project = project_file(dir.path(), &["https://git.acme.example/*", &permitted]);
    for url in [
        "http://169.254.169.254/latest/meta-data/iam/security-credentials/".to_owned(),
        format!("http://127.0.0.1:{port}/other/values.yaml"),
        format!("http://127.0.0.1:{port}/team/../other/values.yaml"),
        format!("http://git.acme.example@127.0.0.1:{port}/x/values.yaml"),
    ] {
        let run = render(&repo, "chart", &["--project", &project, "--values", &url]);
        refused(&run);
        assert!(
            run.stderr.contains(
                "value files are fetched only from repositories the project's sourceRepos permit"
            ),
            "{url}: {}",
            run.stderr
        );
    }
    let url = format!("http://127.0.0.1:{port}/team/app/values.yaml");
    let run = render(&repo, "chart", &["--project", &project, "--values", &url]);
    assert_eq!(run.code, Some(0), "{}", run.all());
    assert!(
        run.stdout.contains("from-a-permitted-url"),
        "{}",
        run.stdout
    );
}

/// `plumb app diff/manifests/sync --local DIR` read a working tree on the user's machine, which
/// may come from an untrusted pull request: a link out of it is refused before anything renders
/// (nothing of the target is printed, nor sent to the controller), and `--local` must lie
/// inside `--local-repo-root`. Moved here from `it::previews`, assertions unchanged.
#[test]
fn local_trees_cannot_reach_outside_themselves() {
    use crate::running::{env, kubectl_apply};
    use serde_json::json;

    let ns = env().namespace("hostile-local");
    let ns = ns.name();
    let dest = env().namespace("hostile-local-dest");
    kubectl_apply(&json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "AppProject",
        "metadata": {"name": "default", "namespace": ns},
        "spec": {"sourceRepos": ["*"], "destinations": [{"namespace": "*", "server": "*"}]}
    }));
    let repo = GitRepo::new();
    repo.commit(&[("k8s/cm.yaml", configmap("settings", "git"))], "main");
    let name = "hostile-local-preview";
    kubectl_apply(&json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"project": "default", "source": {"repoURL": repo.url(), "path": "k8s"},
                 "destination": {"server": "https://kubernetes.default.svc", "namespace": dest.name()}}
    }));
    let kubeconfig = env().kubeconfig().display().to_string();
    let cache = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        let mut all = vec!["app"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["--kubeconfig", &kubeconfig, "-N", ns]);
        with_cache(cache.path(), &all)
    };

    let local = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(local.path().join("k8s")).unwrap();
    std::fs::write(
        local.path().join("k8s/cm.yaml"),
        configmap("settings", "local"),
    )
    .unwrap();
    let dir = local.path().join("k8s");
    let dir = dir.to_str().unwrap();
    let root = local.path().to_str().unwrap();
    std::os::unix::fs::symlink("/etc/passwd", local.path().join("k8s/passwd.yaml")).unwrap();
    for verb in ["diff", "manifests", "sync"] {
        let out = run(&[verb, name, "--local", dir]);
        assert_eq!(out.code, Some(2), "{verb}: {}", out.stderr);
        assert!(out.stderr.contains("passwd.yaml"), "{verb}: {}", out.stderr);
        assert!(!out.stdout.contains("root:"), "{verb}: {}", out.stdout);
    }
    // Nothing was requested of the controller.
    let app = crate::running::get_json(ns, "applications.argoproj.io", name).unwrap();
    assert!(app["operation"].is_null(), "{app:#}");

    let elsewhere = tempfile::tempdir().unwrap();
    let out = run(&[
        "diff",
        name,
        "--local",
        elsewhere.path().to_str().unwrap(),
        "--local-repo-root",
        root,
    ]);
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(
        out.stderr.contains("outside --local-repo-root"),
        "{}",
        out.stderr
    );
}

/// [`plumb`] with `PLUMB_CACHE_DIR` set (the CLI's source cache for `--local` renders).
fn with_cache(cache: &Path, args: &[&str]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_plumb"))
        .args(args)
        .env("PLUMB_CACHE_DIR", cache)
        .env("PLUMB_HELM", plumb_testenv::tools::helm())
        .env("PLUMB_KUSTOMIZE", plumb_testenv::tools::kustomize())
        .env_remove("PLUMB_NAMESPACE")
        .env_remove("KUBECTL_EXTERNAL_DIFF")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// An Application whose project permits every URL (`sourceRepos: ["*"]`, the default project)
/// names as its source a `file://` path into Plumb's cache: another tenant's mirror, whose salted
/// name an error text or a guess revealed. Refused, naming the rule; the victim's content never
/// printed.
#[test]
fn a_file_source_cannot_read_another_tenants_mirror_in_the_cache() {
    let victim = GitRepo::new();
    victim.commit(
        &[("app/cm.yaml", configmap("victim", "tenant-b-private-7731"))],
        "private",
    );
    let cache = tempfile::tempdir().unwrap();
    let cache_dir = cache.path().display().to_string();
    let url = victim.url();
    let first = plumb(&[
        "render",
        "--repo",
        &url,
        "--path",
        "app",
        "--cache-dir",
        &cache_dir,
    ]);
    assert_eq!(
        first.code,
        Some(0),
        "the victim's own render: {}",
        first.all()
    );
    let mirror = std::fs::read_dir(cache.path().join("git/repos"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "git"))
        .expect("the victim's mirror");
    let attack = format!("file://{}", mirror.display());
    let run = plumb(&[
        "render",
        "--repo",
        &attack,
        "--path",
        "app",
        "--cache-dir",
        &cache_dir,
    ]);
    refused(&run);
    assert!(
        run.stderr.contains("lies in Plumb's cache directory"),
        "{}",
        run.all()
    );
    assert!(
        !run.all().contains("tenant-b-private-7731"),
        "{}",
        run.all()
    );
}

/// Jsonnet code passed in the Application rather than the repository — a top-level argument or
/// an external variable with `code: true` — is evaluated with the same importer: `importstr` and
/// `importbin` of a path outside the checkout are refused, and nothing of the file is printed
/// (the class of Argo CD's 2026 Jsonnet advisories, e.g. GHSA-m3vr-7329-44ww).
#[test]
fn jsonnet_code_in_the_application_cannot_import_outside_the_checkout() {
    let repo = GitRepo::new();
    repo.commit(
        &[(
            "app/main.jsonnet",
            "function(p) { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' }, data: { p: std.toString(p), e: std.toString(std.extVar('e')) } }\n",
        )],
        "code arguments",
    );
    let dir = tempfile::tempdir().unwrap();
    // The first pair is harmless: it renders, so the refusals below are the importer's.
    for (tla, ext) in [
        ("'ok'", "'fine'"),
        ("importstr '/etc/passwd'", "'ok'"),
        ("'ok'", "importstr '../../../../../../../../etc/passwd'"),
        ("importbin '/etc/passwd'", "'ok'"),
    ] {
        let app = dir.path().join("app.yaml");
        let manifest = serde_json::json!({
            "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
            "metadata": {"name": "jsonnet-code"},
            "spec": {"project": "default",
                     "source": {"repoURL": repo.url(), "path": "app", "targetRevision": "HEAD",
                                "directory": {"jsonnet": {
                                    "tlas": [{"name": "p", "value": tla, "code": true}],
                                    "extVars": [{"name": "e", "value": ext, "code": true}]}}},
                     "destination": {"server": "https://kubernetes.default.svc", "namespace": "default"}}
        });
        std::fs::write(&app, manifest.to_string()).unwrap();
        let cache = dir.path().join("cache").display().to_string();
        let app_arg = app.display().to_string();
        let run = plumb(&["render", "--app", &app_arg, "--cache-dir", &cache]);
        if ext == "'fine'" {
            assert_eq!(run.code, Some(0), "{}", run.all());
            assert!(run.stdout.contains("e: fine"), "{}", run.stdout);
            continue;
        }
        refused(&run);
        assert!(!run.all().contains("root:"), "{tla} / {ext}: {}", run.all());
    }
}
