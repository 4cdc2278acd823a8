//! Helm charts in Git, rendered by the real `helm template`.
//!
//! Arguments follow Argo CD (`util/helm/cmd.go: template`, `reposerver/repository: helmTemplate`):
//! release name (default: the Application name), `--namespace`, `--kube-version`,
//! `--api-versions`, value files in order, then inline values (`valuesObject` over `values`), then
//! `--set`/`--set-string`/`--set-file`, and `--include-crds` unless `skipCrds`. Value files are
//! relative to the chart; a leading `/` means the repository root; `$ref/…` means another source's
//! repository. Any of them that leaves its repository is refused (Argo CD CVE-2022-24348 and
//! GHSA-h6h5-6fmq-rh28): lexically (`..`, absolute paths) and physically (each is resolved beneath
//! its repository root, links included, and helm is handed the resolved path). http(s) URLs are
//! fetched by Plumb, only from repositories the project's `sourceRepos` permit, bounded in size
//! and time, and handed to helm as local files: helm runs in the render sandbox, with no network
//! and no view of the cache beyond its inputs. Before helm runs, every symlink of the checkout is
//! resolved and the render refused if one leads outside it (helm follows links when it loads a
//! chart).
//!
//! Dependencies that are not vendored in `charts/` are fetched first (`helm_deps`) and helm reads
//! a scratch copy of the chart with them added.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use plumb_model::application::HelmSource;

use super::context::Context;
use super::source_repos::repo_permitted;
use super::tool;
use crate::beneath::RepoDir;
use crate::error::{Error, Result};
use crate::git::normalize_within;
use crate::manifest::{self, Manifest};
use crate::spec::{b, s, v};

/// Helm evaluates `--name-template` as a Go template with every sprig function, `env` among
/// them, so a release name such as `{{ env "AWS_SECRET_ACCESS_KEY" | lower }}` would put the
/// controller's environment into `.Release.Name` and the rendered manifests. Only names helm
/// itself accepts as release names (its `ValidateReleaseName`: DNS-style, at most 53 characters)
/// are passed, and they hold no template syntax.
fn check_release_name(name: &str) -> Result<()> {
    let label_ok = |l: &str| {
        !l.is_empty()
            && l.bytes()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    if name.len() <= 53 && name.split('.').all(label_ok) {
        return Ok(());
    }
    Err(Error::InvalidParameter {
        field: "spec.source.helm.releaseName",
        detail: format!(
            "{name:?} is not a valid Helm release name (lower-case letters, digits, '-' and '.', \
             starting and ending with a letter or digit, at most 53 characters)"
        ),
    })
}

/// Renders the chart at `ctx.app` with `opts`.
pub(crate) fn render(ctx: &Context<'_>, opts: &HelmSource) -> Result<Vec<Manifest>> {
    ctx.repo.check_links(Path::new(""))?;
    let scratch = ctx.scratch("helm-")?;
    let chart_dir = match super::helm_deps::prepare(ctx, scratch.path())? {
        Some(copy) => copy,
        None => ctx.root.join(ctx.app),
    };
    let mut cmd = Command::new(&ctx.tools.helm);
    release_and_cluster_args(ctx, opts, &chart_dir, &mut cmd)?;
    value_file_args(ctx, opts, scratch.path(), &mut cmd)?;
    inline_values_arg(opts, scratch.path(), &mut cmd)?;
    parameter_args(ctx, opts, &mut cmd)?;
    option_flags(opts, &mut cmd);
    let home = helm_home(scratch.path(), &mut cmd)?;
    run_template(ctx, cmd, scratch.path(), &home)
}

/// `template .` in the chart directory with the release name, namespace, kube version and API
/// versions (the source's, else the Application's).
fn release_and_cluster_args(
    ctx: &Context<'_>,
    opts: &HelmSource,
    chart_dir: &Path,
    cmd: &mut Command,
) -> Result<()> {
    let release = if s(&opts.release_name).is_empty() {
        ctx.app_name
    } else {
        s(&opts.release_name)
    };
    check_release_name(release)?;
    cmd.current_dir(chart_dir)
        .arg("template")
        .arg(".")
        .arg("--name-template")
        .arg(release);
    let namespace = if s(&opts.namespace).is_empty() {
        ctx.namespace
    } else {
        s(&opts.namespace)
    };
    if !namespace.is_empty() {
        cmd.arg("--namespace").arg(namespace);
    }
    let kube_version = if s(&opts.kube_version).is_empty() {
        ctx.kube_version
    } else {
        s(&opts.kube_version)
    };
    if !kube_version.is_empty() {
        cmd.arg("--kube-version").arg(kube_version);
    }
    let api_versions = if v(&opts.api_versions).is_empty() {
        ctx.api_versions
    } else {
        v(&opts.api_versions)
    };
    for v in api_versions {
        cmd.arg("--api-versions").arg(v);
    }
    Ok(())
}

/// `--values` for each value file: a URL fetched into the scratch directory, a path resolved
/// beneath its repository; a missing one skipped only when the source says so.
fn value_file_args(
    ctx: &Context<'_>,
    opts: &HelmSource,
    scratch: &Path,
    cmd: &mut Command,
) -> Result<()> {
    for (i, file) in v(&opts.value_files).iter().enumerate() {
        match resolve_file(ctx, file, "spec.source.helm.valueFiles")? {
            Resolved::Url(url) => {
                let local = scratch.join(format!("url-values-{i}.yaml"));
                let body = fetch_value_url(ctx, &url)?;
                std::fs::write(&local, body).map_err(Error::io("writing", &local))?;
                cmd.arg("--values").arg(local);
            }
            Resolved::Path(p) if p.is_file() => {
                cmd.arg("--values").arg(p);
            }
            Resolved::Path(p) if p.exists() => {
                return Err(Error::UnsupportedSource {
                    detail: format!("spec.source.helm.valueFiles: {file} is not a regular file"),
                });
            }
            Resolved::Path(_) if b(opts.ignore_missing_value_files) => {
                tracing::debug!(file, "skipping missing value file");
            }
            Resolved::Path(_) => {
                return Err(Error::PathNotFound {
                    field: "spec.source.helm.valueFiles".into(),
                    path: file.clone(),
                });
            }
        }
    }
    Ok(())
}

/// `--values` for the inline values (`valuesObject` over `values`), written to the scratch
/// directory.
fn inline_values_arg(opts: &HelmSource, scratch: &Path, cmd: &mut Command) -> Result<()> {
    let inline = match &opts.values_object {
        Some(obj) if !obj.is_null() => Some(obj.to_string()),
        _ if !s(&opts.values).trim().is_empty() => Some(s(&opts.values).to_owned()),
        _ => None,
    };
    if let Some(text) = inline {
        let p = scratch.join("inline-values.yaml");
        std::fs::write(&p, text).map_err(Error::io("writing", &p))?;
        cmd.arg("--values").arg(p);
    }
    Ok(())
}

/// `--set`/`--set-string` for each parameter, then `--set-file` for each file parameter.
fn parameter_args(ctx: &Context<'_>, opts: &HelmSource, cmd: &mut Command) -> Result<()> {
    for p in v(&opts.parameters) {
        let flag = if b(p.force_string) {
            "--set-string"
        } else {
            "--set"
        };
        cmd.arg(flag)
            .arg(format!("{}={}", s(&p.name), escape_commas(s(&p.value))));
    }
    for p in v(&opts.file_parameters) {
        match resolve_file(ctx, s(&p.path), "spec.source.helm.fileParameters")? {
            Resolved::Path(path) if path.is_file() => {
                cmd.arg("--set-file")
                    .arg(format!("{}={}", s(&p.name), path.display()));
            }
            _ => {
                return Err(Error::PathNotFound {
                    field: "spec.source.helm.fileParameters".into(),
                    path: s(&p.path).to_owned(),
                });
            }
        }
    }
    Ok(())
}

/// `--include-crds` unless `skipCrds`, `--skip-tests`, `--skip-schema-validation`.
fn option_flags(opts: &HelmSource, cmd: &mut Command) {
    if !b(opts.skip_crds) {
        cmd.arg("--include-crds");
    }
    if b(opts.skip_tests) {
        cmd.arg("--skip-tests");
    }
    if b(opts.skip_schema_validation) {
        cmd.arg("--skip-schema-validation");
    }
}

/// Helm's home in the scratch directory, set in its environment.
fn helm_home(scratch: &Path, cmd: &mut Command) -> Result<PathBuf> {
    // Helm writes caches and registry config under these: per render, the only writable place.
    let home = scratch.join("home");
    for (var, sub) in [
        ("HELM_CACHE_HOME", "cache"),
        ("HELM_CONFIG_HOME", "config"),
        ("HELM_DATA_HOME", "data"),
    ] {
        let dir = home.join(sub);
        std::fs::create_dir_all(&dir).map_err(Error::io("creating", &dir))?;
        cmd.env(var, dir);
    }
    cmd.env("HOME", &home);
    Ok(home)
}

/// Runs `helm template` in the render sandbox and reads its output, each object named by its
/// template's path in the repository.
fn run_template(
    ctx: &Context<'_>,
    cmd: Command,
    scratch: &Path,
    home: &Path,
) -> Result<Vec<Manifest>> {
    let label = format!("helm template {}", ctx.app.display());
    let view = ctx.view().keeping(scratch).keeping_rw(home);
    let redactor = ctx.path_redactor(vec![(scratch.join("chart"), String::new())]);
    let place = tool::Place {
        worker: &ctx.tools.worker,
        limits: ctx.limits,
        redactor: &redactor,
        view: Some(&view),
    };
    let out = tool::run("helm", &label, cmd, &place, ctx.limits.max_render_bytes)?;
    let sources = source_comments(&out.stdout);
    let app = ctx.app.to_path_buf();
    manifest::from_stream(&out.stdout, &label, |line| {
        let (_, src) = sources.range(..line).next_back()?;
        // `# Source: <chart name>/templates/x.yaml`: replace the chart name by its path in Git.
        let rest = src.split_once('/').map_or(src.as_str(), |(_, r)| r);
        Some(app.join(rest).display().to_string())
    })
}

/// Downloads a value file named by URL, if the project's `sourceRepos` permit it (the URL, or
/// the repository it lies in: the URL cut after one of its path segments), at most
/// `max_file_bytes`. The URL is parsed first (dot segments resolved, host lower-cased), so what
/// is checked is what is fetched.
fn fetch_value_url(ctx: &Context<'_>, url: &str) -> Result<Vec<u8>> {
    let field = "spec.source.helm.valueFiles";
    let refused = |reason: String| Error::RemoteBaseRefused {
        field: field.into(),
        url: crate::redact::strip_url_credentials(url),
        reason,
    };
    let parsed = reqwest::Url::parse(url).map_err(|e| refused(format!("not a URL: {e}")))?;
    if let Some(patterns) = ctx.source_repos
        && !value_url_permitted(patterns, &parsed)
    {
        return Err(refused(
            "value files are fetched only from repositories the project's sourceRepos permit"
                .into(),
        ));
    }
    ctx.helm_repos
        .value_file(parsed.as_str(), ctx.limits.max_file_bytes)
}

/// Whether `patterns` permit `url` or a repository it lies in.
fn value_url_permitted(patterns: &[String], url: &reqwest::Url) -> bool {
    let Some(host) = url.host_str() else {
        return false;
    };
    let origin = match url.port() {
        Some(port) => format!("{}://{host}:{port}", url.scheme()),
        None => format!("{}://{host}", url.scheme()),
    };
    let segments: Vec<&str> = url.path().split('/').filter(|s| !s.is_empty()).collect();
    (0..=segments.len()).any(|n| {
        let candidate = format!("{origin}/{}", segments[..n].join("/"));
        repo_permitted(patterns, candidate.trim_end_matches('/'))
    })
}

/// Line number → `# Source:` path, for naming the template each document came from.
fn source_comments(text: &str) -> BTreeMap<usize, String> {
    text.lines()
        .enumerate()
        .filter_map(|(i, l)| {
            l.strip_prefix("# Source: ")
                .map(|s| (i + 1, s.trim().to_owned()))
        })
        .collect()
}

fn escape_commas(value: &str) -> String {
    // helm splits --set on unescaped commas; Argo passes parameter values whole.
    let mut out = String::with_capacity(value.len());
    let mut prev = '\0';
    for c in value.chars() {
        if c == ',' && prev != '\\' {
            out.push('\\');
        }
        out.push(c);
        prev = c;
    }
    out
}

/// A file named by a source: a URL handed to the tool, or a path inside a repository tree.
enum Resolved {
    Url(String),
    Path(PathBuf),
}

/// Resolves a value file or file parameter to a URL or a path inside its repository: lexically
/// first (no `..` above the root, no absolute path), then physically beneath the root, so the
/// path handed to helm holds no link and cannot lead out.
fn resolve_file(ctx: &Context<'_>, file: &str, field: &str) -> Result<Resolved> {
    if file.starts_with("http://") || file.starts_with("https://") {
        return Ok(Resolved::Url(file.to_owned()));
    }
    let outside = || Error::PathOutsideRepository {
        field: field.to_owned(),
        path: file.to_owned(),
    };
    if file.contains("://") {
        return Err(Error::UnsupportedSource {
            detail: format!("{field}: {file}: only http(s) URLs and repository paths are allowed"),
        });
    }
    let ref_repo;
    let (repo, rel): (&RepoDir, PathBuf) = if let Some(rest) = file.strip_prefix('$') {
        let (name, path) = rest.split_once('/').unwrap_or((rest, ""));
        let root = ctx.refs.get(name).ok_or_else(|| Error::UnsupportedSource {
            detail: format!("{field}: {file} names source ref {name:?}, which no source of the application defines"),
        })?;
        ref_repo = RepoDir::open(root)?;
        (&ref_repo, PathBuf::from(path))
    } else if let Some(abs) = file.strip_prefix('/') {
        (ctx.repo, PathBuf::from(abs))
    } else {
        (ctx.repo, ctx.app.join(file))
    };
    let rel = normalize_within(&rel).ok_or_else(outside)?;
    let real = repo.resolve(&rel).map_err(|e| match e {
        Error::UnsafeSymlink {
            link,
            target,
            problem,
            ..
        } => Error::UnsafeSymlink {
            path: format!("{field} {file}"),
            link,
            target,
            problem,
        },
        Error::PathOutsideRepository { .. } => outside(),
        other => other,
    })?;
    Ok(Resolved::Path(repo.root().join(real)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn release_names_are_helms_and_carry_no_template() {
        for ok in ["payments-api", "a", "web.v2", &"x".repeat(53)] {
            assert!(check_release_name(ok).is_ok(), "{ok}");
        }
        for bad in [
            "{{ env \"HOME\" }}",
            "{{env \"AWS_SECRET_ACCESS_KEY\"|lower}}",
            "Payments",
            "-lead",
            "trail-",
            "a..b",
            "",
            &"x".repeat(54),
        ] {
            let e = check_release_name(bad).expect_err(bad).to_string();
            assert!(e.starts_with("spec.source.helm.releaseName: "), "{e}");
        }
    }

    #[test]
    fn value_urls_are_permitted_by_their_repository_only() {
        let patterns = vec!["https://git.corp/team/*".to_owned()];
        let ok = |u: &str| value_url_permitted(&patterns, &reqwest::Url::parse(u).unwrap());
        assert!(ok("https://git.corp/team/app/raw/main/values.yaml"));
        assert!(ok("https://GIT.CORP/team/app/values.yaml?x=1"));
        assert!(!ok("https://git.corp.evil.com/team/app/values.yaml"));
        assert!(!ok("https://git.corp@evil.com/team/app/values.yaml"));
        assert!(!ok("https://git.corp/team/app/../../other/app/values.yaml"));
        assert!(!ok("http://169.254.169.254/latest/meta-data/iam"));
        assert!(!ok("https://git.corp:8443/team/app/values.yaml"));
    }

    #[test]
    fn commas_are_escaped_once() {
        assert_eq!(escape_commas("a,b\\,c"), "a\\,b\\,c");
    }

    #[test]
    fn source_comments_are_indexed_by_line() {
        let m = source_comments("---\n# Source: api/templates/cm.yaml\napiVersion: v1\n");
        assert_eq!(m.get(&2).map(String::as_str), Some("api/templates/cm.yaml"));
    }
}
