//! The paths a kustomization names, checked: every local one stays inside its repository (the
//! kustomizations it reaches included), every remote base is one the project permits.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::context::Context;
use super::kustomize_remote::{RemoteBase, Target, target};
use super::source_repos::repo_permitted;
use crate::beneath::RepoDir;
use crate::detect::KUSTOMIZATION_FILES;
use crate::error::{Error, Result};
use crate::git::normalize_within;

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

/// A remote base named by a kustomization, to be fetched by Plumb.
#[derive(Debug, Clone)]
pub(crate) struct Found {
    /// The kustomization file, relative to its tree.
    pub file: PathBuf,
    /// The file and field, for messages (`k/kustomization.yaml: resources`).
    pub field: String,
    /// The list it is in (`resources`, `bases`, `components`).
    pub list: String,
    /// The entry as written.
    pub entry: String,
    /// What it names.
    pub base: RemoteBase,
}

/// Lists kustomize clones bases from; a remote target anywhere else is a file kustomize would
/// download itself, which it cannot (no network).
const REMOTE_LISTS: [&str; 3] = ["resources", "bases", "components"];

/// Refuses any local path named by the kustomization in `dir` of `repo` (and the ones it
/// reaches) that leaves the repository root, and any remote base the request does not allow;
/// collects the allowed remote bases in `remotes`. `origin` prefixes file names in messages
/// (empty for the Application's own repository).
pub(crate) fn check_paths(
    ctx: &Context<'_>,
    repo: &RepoDir,
    origin: &str,
    dir: &Path,
    seen: &mut BTreeSet<PathBuf>,
    remotes: &mut Vec<Found>,
) -> Result<()> {
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
    let display = format!("{origin}{}", file.display());
    let text = repo.read_to_string(&file, ctx.limits.max_file_bytes)?;
    let doc = first_document(&text, &display)?;
    for (list, path) in references(&doc) {
        let field = format!("{display}: {list}");
        let refused = |reason: String| Error::RemoteBaseRefused {
            field: field.clone(),
            url: crate::redact::strip_url_credentials(&path),
            reason,
        };
        match target(&path) {
            Target::Local => {}
            Target::Remote(_) if !REMOTE_LISTS.contains(&list.as_str()) => {
                return Err(refused(
                    "kustomize runs without network: only remote bases in resources, bases \
                     and components are fetched (by Plumb)"
                        .into(),
                ));
            }
            Target::Remote(base) => {
                check_remote(ctx, &field, &path, &base.repo)?;
                remotes.push(Found {
                    file: file.clone(),
                    field,
                    list,
                    entry: path,
                    base,
                });
                continue;
            }
            Target::Refused(why) => return Err(refused(why.to_owned())),
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
            check_paths(ctx, repo, origin, &rel, seen, remotes)?;
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

/// Refuses a remote base the request's sourceRepos do not allow (Argo's `sourceRepos` rules).
fn check_remote(ctx: &Context<'_>, field: &str, entry: &str, url: &str) -> Result<()> {
    match ctx.source_repos {
        None => return Ok(()),
        Some(patterns) if repo_permitted(patterns, url) => return Ok(()),
        Some(_) => {}
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
