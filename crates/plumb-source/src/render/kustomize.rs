//! Kustomizations, rendered by the real `kustomize build`.
//!
//! Source options are applied as Argo CD applies them (`util/kustomize/kustomize.go: Build`): with
//! `kustomize edit set nameprefix|namesuffix|image|replicas|namespace`, `edit add
//! label|annotation|component`, and `patches` appended to the kustomization file. Argo edits its
//! checkout; Plumb's trees are read-only and shared, so the edits happen in a scratch copy made of
//! hard links, where only the edited kustomization file is a real copy.
//!
//! Before running kustomize, every local path a kustomization names (resources, components,
//! patches, generators' files, ...) is checked to stay inside the repository, following
//! kustomizations it reaches (kustomize's own load restrictor does not cover directories), and
//! every symlink of the checkout is resolved physically and refused if it leaves the root.
//! Remote bases are refused unless they are `https://` or `ssh://` (or `git@host:`) Git URLs that
//! the request's `sourceRepos` allow; `file://` and any other scheme are always refused.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use plumb_model::application::KustomizeSource;
use serde_json::Value;

use super::Context;
use super::tool;
use crate::beneath::RepoDir;
use crate::detect::KUSTOMIZATION_FILES;
use crate::error::{Error, Result};
use crate::git::normalize_within;
use crate::manifest::{self, Manifest};
use crate::spec::{b, s as text, v};

/// Renders the kustomization at `ctx.app`.
pub(crate) fn render(ctx: &Context<'_>, opts: Option<&KustomizeSource>) -> Result<Vec<Manifest>> {
    check_paths(ctx, ctx.app, &mut BTreeSet::new())?;
    ctx.repo.check_links(Path::new(""))?;
    let label = format!("kustomize build {}", ctx.app.display());
    let scratch;
    let dir = match opts.filter(|o| needs_edit(o)) {
        None => ctx.root.join(ctx.app),
        Some(opts) => {
            scratch = tempfile::Builder::new()
                .prefix("plumb-kustomize-")
                .tempdir()
                .map_err(Error::io(
                    "creating a temporary directory in",
                    std::env::temp_dir(),
                ))?;
            let copy = scratch.path().join("repo");
            link_tree(ctx.root, &copy)?;
            let dir = copy.join(ctx.app);
            let file = KUSTOMIZATION_FILES
                .iter()
                .map(|f| dir.join(f))
                .find(|p| p.is_file())
                .ok_or_else(|| Error::PathNotFound {
                    field: "spec.source.path".into(),
                    path: ctx.app.join("kustomization.yaml").display().to_string(),
                })?;
            // Break the hard link: the edits must not reach the shared tree.
            let text = std::fs::read(&file).map_err(Error::io("reading", &file))?;
            std::fs::remove_file(&file).map_err(Error::io("writing", &file))?;
            std::fs::write(&file, text).map_err(Error::io("writing", &file))?;
            apply_options(ctx, &dir, &file, opts)?;
            dir
        }
    };
    let mut cmd = Command::new(&ctx.tools.kustomize);
    cmd.arg("build").arg(&dir);
    let out = tool::run(
        "kustomize",
        &label,
        cmd,
        &ctx.tools.worker,
        ctx.limits,
        ctx.limits.max_render_bytes,
        ctx.redactor,
    )?;
    manifest::from_stream(&out.stdout, &label, |_| None)
}

fn needs_edit(o: &KustomizeSource) -> bool {
    !(text(&o.name_prefix).is_empty()
        && text(&o.name_suffix).is_empty()
        && v(&o.images).is_empty()
        && o.common_labels.as_ref().is_none_or(|m| m.is_empty())
        && o.common_annotations.as_ref().is_none_or(|m| m.is_empty())
        && text(&o.namespace).is_empty()
        && v(&o.replicas).is_empty()
        && v(&o.patches).is_empty()
        && v(&o.components).is_empty())
}

fn apply_options(ctx: &Context<'_>, dir: &Path, file: &Path, o: &KustomizeSource) -> Result<()> {
    let edit = |args: Vec<String>| -> Result<()> {
        let mut cmd = Command::new(&ctx.tools.kustomize);
        cmd.current_dir(dir).arg("edit").args(&args);
        let label = format!(
            "kustomize edit {}",
            args.iter().take(2).cloned().collect::<Vec<_>>().join(" ")
        );
        tool::run(
            "kustomize",
            &label,
            cmd,
            &ctx.tools.worker,
            ctx.limits,
            1 << 20,
            ctx.redactor,
        )
        .map(|_| ())
    };
    let s = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    if !text(&o.name_prefix).is_empty() {
        edit(s(&["set", "nameprefix", "--", text(&o.name_prefix)]))?;
    }
    if !text(&o.name_suffix).is_empty() {
        edit(s(&["set", "namesuffix", "--", text(&o.name_suffix)]))?;
    }
    if !v(&o.images).is_empty() {
        let mut args = s(&["set", "image"]);
        args.extend(v(&o.images).iter().cloned());
        edit(args)?;
    }
    for r in v(&o.replicas) {
        let count = match &r.count {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        edit(s(&["set", "replicas", &format!("{}={count}", r.name)]))?;
    }
    for (what, map, force) in [
        ("label", &o.common_labels, b(o.force_common_labels)),
        (
            "annotation",
            &o.common_annotations,
            b(o.force_common_annotations),
        ),
    ] {
        let Some(map) = map.as_ref().filter(|m| !m.is_empty()) else {
            continue;
        };
        let mut args = s(&["add", what]);
        if force {
            args.push("--force".into());
        }
        if what == "label" && b(o.label_without_selector) {
            args.push("--without-selector".into());
        }
        args.push(
            map.iter()
                .map(|(k, v)| format!("{k}:{v}"))
                .collect::<Vec<_>>()
                .join(","),
        );
        edit(args)?;
    }
    if !text(&o.namespace).is_empty() {
        edit(s(&["set", "namespace", "--", text(&o.namespace)]))?;
    }
    if !v(&o.components).is_empty() {
        let mut args = s(&["add", "component"]);
        for c in v(&o.components) {
            let rel =
                normalize_within(&ctx.app.join(c)).ok_or_else(|| Error::PathOutsideRepository {
                    field: "spec.source.kustomize.components".into(),
                    path: c.clone(),
                })?;
            if !ctx.repo.exists(&rel) {
                if b(o.ignore_missing_components) {
                    continue;
                }
                return Err(Error::PathNotFound {
                    field: "spec.source.kustomize.components".into(),
                    path: c.clone(),
                });
            }
            check_paths(ctx, &rel, &mut BTreeSet::new())?;
            args.push(c.clone());
        }
        if args.len() > 2 {
            edit(args)?;
        }
    }
    if !v(&o.patches).is_empty() {
        let contents = std::fs::read_to_string(file).map_err(Error::io("reading", file))?;
        let display = file.display().to_string();
        let mut doc = first_document(&contents, &display)?;
        let patches = doc.as_object_mut().map(|m| {
            m.entry("patches")
                .or_insert_with(|| Value::Array(Vec::new()))
        });
        if let Some(Value::Array(list)) = patches {
            for p in v(&o.patches) {
                if !text(&p.path).is_empty() {
                    normalize_within(&ctx.app.join(text(&p.path))).ok_or_else(|| {
                        Error::PathOutsideRepository {
                            field: "spec.source.kustomize.patches".into(),
                            path: text(&p.path).to_owned(),
                        }
                    })?;
                }
                list.push(serde_json::to_value(p).unwrap_or(Value::Null));
            }
        }
        // JSON is YAML, and kustomize reads it as such.
        std::fs::write(file, doc.to_string()).map_err(Error::io("writing", file))?;
    }
    Ok(())
}

pub(crate) fn first_document(text: &str, file: &str) -> Result<Value> {
    let docs = plumb_yaml::read_documents(text, file).map_err(|source| Error::Yaml {
        file: file.to_owned(),
        source,
    })?;
    Ok(docs
        .into_iter()
        .next()
        .map(|d| d.value)
        .unwrap_or_else(|| Value::Object(Default::default())))
}

/// Fields of a kustomization that name local files or directories.
const PATH_FIELDS: [&str; 12] = [
    "resources",
    "bases",
    "components",
    "crds",
    "configurations",
    "generators",
    "transformers",
    "validators",
    "patchesStrategicMerge",
    "patches",
    "patchesJson6902",
    "replacements",
];

/// Refuses any local path named by the kustomization in `dir` (and the ones it reaches) that
/// leaves the repository root, and any remote base the request does not allow.
fn check_paths(ctx: &Context<'_>, dir: &Path, seen: &mut BTreeSet<PathBuf>) -> Result<()> {
    let repo: &RepoDir = ctx.repo;
    if !seen.insert(dir.to_path_buf()) {
        return Ok(());
    }
    let Some(file) = KUSTOMIZATION_FILES
        .iter()
        .map(|f| dir.join(f))
        .find(|p| repo.is_file(p))
    else {
        return Ok(());
    };
    let display = file.display().to_string();
    let text = repo.read_to_string(&file, ctx.limits.max_file_bytes)?;
    let doc = first_document(&text, &display)?;
    let refs = references(&doc);
    for (field, path) in refs {
        let field = format!("{display}: {field}");
        match target(&path) {
            Target::Local => {}
            Target::Remote(url) => {
                check_remote(ctx, &field, &path, &url)?;
                continue;
            }
            Target::Refused(why) => {
                return Err(Error::RemoteBaseRefused {
                    field,
                    url: crate::redact::strip_url_credentials(&path),
                    reason: why.to_owned(),
                });
            }
        }
        let outside = || Error::PathOutsideRepository {
            field: field.clone(),
            path: path.clone(),
        };
        if Path::new(&path).is_absolute() {
            return Err(outside());
        }
        let rel = normalize_within(&dir.join(&path)).ok_or_else(outside)?;
        repo.resolve(&rel)?;
        if repo.is_dir(&rel) {
            check_paths(ctx, &rel, seen)?;
        }
    }
    Ok(())
}

/// The local paths and remote targets a kustomization names, as (field, entry).
pub(crate) fn references(doc: &Value) -> Vec<(String, String)> {
    let mut refs: Vec<(String, String)> = Vec::new();
    for field in PATH_FIELDS {
        for item in doc
            .get(field)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            match item {
                Value::String(s) if !s.contains('\n') => refs.push((field.to_owned(), s.clone())),
                Value::Object(m) => {
                    if let Some(p) = m.get("path").and_then(Value::as_str) {
                        refs.push((format!("{field}[].path"), p.to_owned()));
                    }
                }
                _ => {}
            }
        }
    }
    for gen_field in ["configMapGenerator", "secretGenerator"] {
        for gen_item in doc
            .get(gen_field)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            for key in ["files", "envs"] {
                for f in gen_item
                    .get(key)
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                {
                    let path = f.split_once('=').map_or(f, |(_, p)| p);
                    refs.push((format!("{gen_field}[].{key}"), path.to_owned()));
                }
            }
            if let Some(env) = gen_item.get("env").and_then(Value::as_str) {
                refs.push((format!("{gen_field}[].env"), env.to_owned()));
            }
        }
    }
    for chart in doc
        .get("helmCharts")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(p) = chart.get("valuesFile").and_then(Value::as_str) {
            refs.push(("helmCharts[].valuesFile".into(), p.to_owned()));
        }
        for p in chart
            .get("additionalValuesFiles")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            refs.push(("helmCharts[].additionalValuesFiles".into(), p.to_owned()));
        }
    }
    if let Some(p) = doc.pointer("/openapi/path").and_then(Value::as_str) {
        refs.push(("openapi.path".into(), p.to_owned()));
    }
    if let Some(p) = doc
        .pointer("/helmGlobals/chartHome")
        .and_then(Value::as_str)
    {
        refs.push(("helmGlobals.chartHome".into(), p.to_owned()));
    }
    if let Some(p) = doc
        .pointer("/helmGlobals/configHome")
        .and_then(Value::as_str)
    {
        refs.push(("helmGlobals.configHome".into(), p.to_owned()));
    }
    refs
}

/// What a kustomization entry names.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Target {
    /// A path inside the checkout (checked by the caller).
    Local,
    /// A Git repository kustomize would fetch itself, as the URL to match against sourceRepos.
    Remote(String),
    /// A remote form that is never allowed, and why.
    Refused(&'static str),
}

/// Classifies a resource/base entry the way kustomize would read it: a URL with a scheme, an
/// scp-like `git@host:path`, a `github.com/…` shorthand, or a local path.
pub(crate) fn target(entry: &str) -> Target {
    let entry = entry.strip_prefix("git::").unwrap_or(entry);
    if let Some((scheme, _)) = entry.split_once("://") {
        return match scheme.to_ascii_lowercase().as_str() {
            "https" | "ssh" => Target::Remote(repo_url_of(entry)),
            "file" => Target::Refused("file:// URLs read the controller's disk"),
            "http" => Target::Refused("plain http:// is not allowed (use https://)"),
            _ => Target::Refused("only https:// and ssh:// Git URLs are allowed"),
        };
    }
    if entry.starts_with("file:") {
        return Target::Refused("file: URLs read the controller's disk");
    }
    if let Some(rest) = entry.strip_prefix("git@")
        && rest.contains(':')
    {
        return Target::Remote(repo_url_of(entry));
    }
    if entry.starts_with("github.com/") || entry.starts_with("gitlab.com/") {
        return Target::Remote(repo_url_of(&format!("https://{entry}")));
    }
    Target::Local
}

/// The repository part of a kustomize remote target: the query (`?ref=`) dropped, and the
/// `//subdir`, the path after `.git`, or (for github.com and gitlab.com, whose repositories are
/// `owner/name`) the path after the second segment cut off.
fn repo_url_of(url: &str) -> String {
    let url = url.split('?').next().unwrap_or(url);
    let (scheme, rest) = match url.split_once("://") {
        Some((scheme, rest)) => (format!("{scheme}://"), rest),
        None => (String::new(), url),
    };
    let rest = if let Some(i) = rest.find("//") {
        &rest[..i]
    } else if let Some(i) = rest.find(".git/") {
        &rest[..i + 4]
    } else if rest.starts_with("github.com/") || rest.starts_with("gitlab.com/") {
        let end = rest
            .match_indices('/')
            .nth(2)
            .map_or(rest.len(), |(i, _)| i);
        &rest[..end]
    } else {
        rest
    };
    format!("{scheme}{rest}")
}

/// Refuses a remote base the request's sourceRepos do not allow (Argo's `sourceRepos` rules).
fn check_remote(ctx: &Context<'_>, field: &str, entry: &str, url: &str) -> Result<()> {
    let Some(patterns) = ctx.source_repos else {
        return Ok(());
    };
    let project = plumb_model::application::AppProject {
        api_version: None,
        kind: None,
        metadata: Default::default(),
        spec: plumb_model::application::AppProjectSpec {
            source_repos: Some(patterns.to_vec()),
            ..Default::default()
        },
        status: None,
    };
    if plumb_policy::project::source_permitted(&project, url) {
        return Ok(());
    }
    Err(Error::RemoteBaseRefused {
        field: field.to_owned(),
        url: crate::redact::strip_url_credentials(entry),
        reason: format!(
            "repository {} is not permitted by the project's sourceRepos",
            crate::redact::strip_url_credentials(url)
        ),
    })
}

/// Mirrors `src` into `dest` with hard links (copies when linking is impossible).
fn link_tree(src: &Path, dest: &Path) -> Result<()> {
    std::fs::create_dir_all(dest).map_err(Error::io("creating", dest))?;
    for entry in std::fs::read_dir(src).map_err(Error::io("reading", src))? {
        let entry = entry.map_err(Error::io("reading", src))?;
        let from = entry.path();
        let to = dest.join(entry.file_name());
        let ty = entry.file_type().map_err(Error::io("reading", &from))?;
        if ty.is_dir() {
            link_tree(&from, &to)?;
        } else if ty.is_symlink() {
            let target = std::fs::read_link(&from).map_err(Error::io("reading", &from))?;
            std::os::unix::fs::symlink(target, &to).map_err(Error::io("writing", &to))?;
        } else if std::fs::hard_link(&from, &to).is_err() {
            std::fs::copy(&from, &to).map_err(Error::io("copying", &from))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remote_targets_are_classified_and_cut_to_their_repository() {
        let remote = |s: &str| Target::Remote(s.to_owned());
        assert_eq!(
            target("https://github.com/acme/base//deploy/prod?ref=v1"),
            remote("https://github.com/acme/base")
        );
        assert_eq!(
            target("git::https://git.acme.io/team/base.git/overlays?ref=main"),
            remote("https://git.acme.io/team/base.git")
        );
        assert_eq!(
            target("ssh://git@git.acme.io/team/base.git//x"),
            remote("ssh://git@git.acme.io/team/base.git")
        );
        assert_eq!(
            target("git@github.com:acme/base.git/deploy"),
            remote("git@github.com:acme/base.git")
        );
        assert_eq!(
            target("github.com/acme/base/deploy?ref=v2"),
            remote("https://github.com/acme/base")
        );
        assert!(matches!(target("file:///etc"), Target::Refused(_)));
        assert!(matches!(target("FILE:///etc"), Target::Refused(_)));
        assert!(matches!(target("file:../x"), Target::Refused(_)));
        assert!(matches!(
            target("git::file:///srv/repo"),
            Target::Refused(_)
        ));
        assert!(matches!(target("http://git.acme.io/x"), Target::Refused(_)));
        assert!(matches!(target("s3://bucket/x"), Target::Refused(_)));
        assert_eq!(target("../base"), Target::Local);
        assert_eq!(target("deployment.yaml"), Target::Local);
    }
}
