//! Plain directories: YAML, JSON and Jsonnet files, read in-process.
//!
//! Argo CD's rules (`reposerver/repository/repository.go: findManifests`): files ending in `.yaml`,
//! `.yml`, `.json` or `.jsonnet`; subdirectories only with `recurse`; `include`/`exclude` globs
//! matched against the path relative to the source directory (`*` crosses `/`, `{a,b}` allowed).
//! Files are read in path order so the output is deterministic. Every file is opened beneath the
//! checkout root ([`RepoDir`]): a link that leads out through any chain of links is an error
//! naming it, never a read.

use std::path::{Path, PathBuf};

use globset::{Glob, GlobMatcher};
use plumb_model::application::DirectorySource;

use super::jsonnet;
use crate::beneath::{Kind, RepoDir};
use crate::error::{Error, Result};
use crate::limits::Limits;
use crate::manifest::{self, Manifest};
use crate::spec::{b, s};
use crate::worker::Worker;

/// Renders the directory `app` (relative to the root of `repo`); Jsonnet is evaluated inside
/// `view` (the render sandbox) when one is given.
pub(crate) fn render(
    repo: &RepoDir,
    app: &Path,
    opts: &DirectorySource,
    limits: &Limits,
    worker: &Worker,
    view: Option<&crate::worker::sandbox::View>,
) -> Result<Vec<Manifest>> {
    let include = glob(s(&opts.include), "spec.source.directory.include")?;
    let exclude = glob(s(&opts.exclude), "spec.source.directory.exclude")?;
    let mut files = Vec::new();
    collect(repo, app, Path::new(""), b(opts.recurse), &mut files)?;
    files.sort();

    let mut total = 0u64;
    let mut out = Vec::new();
    for rel in files {
        let rel_str = rel.to_string_lossy();
        if exclude
            .as_ref()
            .is_some_and(|g| g.is_match(rel_str.as_ref()))
        {
            continue;
        }
        if include
            .as_ref()
            .is_some_and(|g| !g.is_match(rel_str.as_ref()))
        {
            continue;
        }
        let repo_rel = app.join(&rel);
        let display = repo_rel.display().to_string();
        if rel.extension().is_some_and(|e| e == "jsonnet") {
            let jsonnet_opts = opts.jsonnet.clone().unwrap_or_default();
            let value =
                jsonnet::evaluate(repo.root(), &repo_rel, &jsonnet_opts, limits, worker, view)?;
            let items = match value {
                serde_json::Value::Array(items) => items,
                other => vec![other],
            };
            for (index, item) in items.into_iter().enumerate() {
                out.extend(flatten_json(item, &display, index)?);
            }
            continue;
        }
        let left = limits.max_render_bytes.saturating_sub(total);
        let bytes = repo
            .read(&repo_rel, left.min(limits.max_file_bytes))
            .map_err(|e| match e {
                Error::TooLarge { .. } if left < limits.max_file_bytes => Error::TooLarge {
                    what: "manifests of the directory",
                    limit: format!("{} bytes", limits.max_render_bytes),
                    context: format!("{} (reached at {display})", app.display()),
                },
                other => other,
            })?;
        total += bytes.len() as u64;
        let text = String::from_utf8(bytes).map_err(|_| Error::InvalidManifest {
            file: display.clone(),
            line: 1,
            detail: "file is not UTF-8".into(),
        })?;
        out.extend(manifest::from_stream(&text, &display, |_| None)?);
    }
    Ok(out)
}

/// A Jsonnet output item: an object, or a `List` whose items are flattened.
fn flatten_json(value: serde_json::Value, file: &str, index: usize) -> Result<Vec<Manifest>> {
    if value
        .get("kind")
        .and_then(|k| k.as_str())
        .is_some_and(|k| k.ends_with("List"))
        && let Some(items) = value.get("items").and_then(|i| i.as_array())
    {
        return items
            .iter()
            .map(|item| manifest::checked(item.clone(), file.to_owned(), index, 0))
            .collect();
    }
    Ok(vec![manifest::checked(value, file.to_owned(), index, 0)?])
}

fn glob(pattern: &str, field: &str) -> Result<Option<GlobMatcher>> {
    if pattern.is_empty() {
        return Ok(None);
    }
    Glob::new(pattern)
        .map(|g| Some(g.compile_matcher()))
        .map_err(|e| Error::UnsupportedSource {
            detail: format!("{field}: invalid glob {pattern:?}: {e}"),
        })
}

fn collect(
    repo: &RepoDir,
    app: &Path,
    rel: &Path,
    recurse: bool,
    out: &mut Vec<PathBuf>,
) -> Result<()> {
    for (name, kind) in repo.entries(&app.join(rel))? {
        let child = rel.join(&name);
        let manifest_file = matches!(
            Path::new(&name).extension().and_then(|e| e.to_str()),
            Some("yaml" | "yml" | "json" | "jsonnet")
        );
        match kind {
            Kind::Dir if recurse => collect(repo, app, &child, recurse, out)?,
            // A link to a directory is not descended into (as filepath.Walk does not); a link
            // is resolved beneath the root, so one that leads out or loops is an error here.
            Kind::Link if manifest_file => {
                let target = repo.resolve(&app.join(&child))?;
                if repo.is_file(&target) {
                    out.push(child);
                }
            }
            Kind::File if manifest_file => out.push(child),
            _ => {}
        }
    }
    Ok(())
}
