//! Chart dependencies that are declared but not vendored: `helm dependency build` semantics, with
//! Plumb's own chart repository client.
//!
//! Argo CD runs `helm dependency build`, which fetches from any repository the chart names with
//! helm's own client. Plumb resolves each missing dependency itself, so the project's
//! `sourceRepos` decide which repositories a chart may pull from, the repository Secrets'
//! credentials apply, archives are digest-checked, unpacked under limits and cached for good, and
//! an error names the dependency. Dependencies (`Chart.yaml` `dependencies`, or `requirements.yaml`
//! for `apiVersion: v1` charts) whose `charts/` entry exists (a directory `charts/<name>` or an
//! archive `charts/<name>-*.tgz`) are left as they are. The others are fetched:
//!
//! - `https://…` / `http://…`: that repository, if `sourceRepos` permits it;
//! - `@name` or `alias:name`: the repository whose Secret has that `name`;
//! - `file://path`: a chart directory of the same repository (resolved beneath its root);
//! - `oci://registry/path`: the chart `path/<name>` of that OCI registry (as `helm dependency
//!   build` reads it), if `sourceRepos` permits it, with the registry's Secret credentials; the
//!   version may be a constraint over its tags.
//!
//! The chart is then rendered from a scratch copy of its directory (files hard-linked or copied,
//! every symlink replaced by what it resolves to beneath the repository root, so nothing in the
//! copy can lead anywhere else) with the fetched archives added to `charts/`.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::context::Context;
use super::source_repos::repo_permitted;
use crate::beneath::{Kind, RepoDir};
use crate::error::{Error, Result};
use crate::git::normalize_within;

/// One dependency as declared.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Dependency {
    name: String,
    version: String,
    repository: String,
}

/// If the chart at `ctx.app` declares dependencies missing from `charts/`, builds a scratch copy
/// of it under `scratch` with them added and returns its directory; `None` when nothing is
/// missing (helm then reads the chart where it is).
pub(crate) fn prepare(ctx: &Context<'_>, scratch: &Path) -> Result<Option<PathBuf>> {
    let (file, deps) = declared(ctx)?;
    let vendored = vendored_names(ctx.repo, &ctx.app.join("charts"))?;
    let missing: Vec<Dependency> = deps
        .into_iter()
        .filter(|d| !is_vendored(&vendored, &d.name))
        .collect();
    if missing.is_empty() {
        return Ok(None);
    }
    let chart_dir = scratch.join("chart");
    let mut budget = ctx.limits.max_repo_files;
    copy_resolved(ctx.repo, ctx.app, &chart_dir, &mut budget)?;
    let charts = chart_dir.join("charts");
    std::fs::create_dir_all(&charts).map_err(Error::io("creating", &charts))?;
    for dep in &missing {
        fetch(ctx, &file, dep, &charts, &mut budget)?;
    }
    Ok(Some(chart_dir))
}

/// The dependency list and the file it came from.
fn declared(ctx: &Context<'_>) -> Result<(String, Vec<Dependency>)> {
    let read = |name: &str| -> Result<Option<(String, Value)>> {
        let rel = ctx.app.join(name);
        if !ctx.repo.is_file(&rel) {
            return Ok(None);
        }
        let shown = rel.display().to_string();
        let text = ctx.repo.read_to_string(&rel, ctx.limits.max_file_bytes)?;
        let doc = plumb_yaml::read_documents(&text, &shown)
            .map_err(|source| Error::Yaml {
                file: shown.clone(),
                source,
            })?
            .into_iter()
            .next()
            .map(|d| d.value)
            .unwrap_or(Value::Null);
        Ok(Some((shown, doc)))
    };
    let Some((chart_file, chart)) = read("Chart.yaml")? else {
        return Ok((String::new(), Vec::new()));
    };
    let (file, list) = if chart.get("apiVersion").and_then(Value::as_str) == Some("v1") {
        match read("requirements.yaml")? {
            Some((f, v)) => (f, v.get("dependencies").cloned()),
            None => (chart_file, None),
        }
    } else {
        (chart_file, chart.get("dependencies").cloned())
    };
    let Some(list) = list.filter(|l| !l.is_null()) else {
        return Ok((file, Vec::new()));
    };
    let items = list.as_array().ok_or_else(|| Error::InvalidManifest {
        file: file.clone(),
        line: 1,
        detail: "dependencies is not a list".into(),
    })?;
    let text = |v: &Value, key: &str| match v.get(key) {
        Some(Value::String(s)) => s.trim().to_owned(),
        Some(Value::Number(n)) => n.to_string(),
        _ => String::new(),
    };
    let mut deps = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let name = text(item, "name");
        if name.is_empty() || name.contains(['/', '\\']) || name.starts_with('.') {
            return Err(Error::InvalidManifest {
                file: file.clone(),
                line: 1,
                detail: format!("dependencies[{i}] has no usable name ({name:?})"),
            });
        }
        deps.push(Dependency {
            version: text(item, "version"),
            repository: text(item, "repository"),
            name,
        });
    }
    Ok((file, deps))
}

fn vendored_names(repo: &RepoDir, charts: &Path) -> Result<Vec<String>> {
    if !repo.is_dir(charts) {
        return Ok(Vec::new());
    }
    Ok(repo
        .entries(charts)?
        .into_iter()
        .map(|(n, _)| n.to_string_lossy().into_owned())
        .collect())
}

fn is_vendored(entries: &[String], name: &str) -> bool {
    entries.iter().any(|e| {
        e == name
            || e.strip_prefix(name)
                .and_then(|rest| rest.strip_prefix('-'))
                .is_some_and(|rest| rest.ends_with(".tgz"))
    })
}

fn fetch(
    ctx: &Context<'_>,
    file: &str,
    dep: &Dependency,
    charts: &Path,
    budget: &mut u64,
) -> Result<()> {
    let failed = |detail: String| Error::ChartDependency {
        file: file.to_owned(),
        name: dep.name.clone(),
        detail,
    };
    let repo = dep.repository.as_str();
    if repo.is_empty() {
        return Err(failed(
            "it is not in charts/ and names no repository to fetch it from".into(),
        ));
    }
    if let Some(path) = repo.strip_prefix("file://") {
        let rel =
            normalize_within(&ctx.app.join(path)).ok_or_else(|| Error::PathOutsideRepository {
                field: format!("{file}: dependencies {} repository", dep.name),
                path: repo.to_owned(),
            })?;
        let real = ctx.repo.resolve(&rel)?;
        if !ctx.repo.is_file(&real.join("Chart.yaml")) {
            return Err(failed(format!("{repo} holds no Chart.yaml")));
        }
        return copy_resolved(ctx.repo, &real, &charts.join(&dep.name), budget);
    }
    let url = if let Some(name) = repo
        .strip_prefix('@')
        .or_else(|| repo.strip_prefix("alias:"))
    {
        ctx.helm_repos.url_of_named(name).ok_or_else(|| {
            failed(format!(
                "repository {repo} is not the name of any repository Secret"
            ))
        })?
    } else if repo.starts_with("oci://") {
        repo.trim_end_matches('/').to_owned()
    } else if repo.starts_with("https://") || repo.starts_with("http://") {
        repo.to_owned()
    } else {
        return Err(failed(format!(
            "repository {repo:?} is not http(s), file://, @name or alias:name"
        )));
    };
    if let Some(patterns) = ctx.source_repos
        && !repo_permitted(patterns, &url)
    {
        return Err(failed(format!(
            "repository {} is not permitted by the project's sourceRepos",
            crate::redact::strip_url_credentials(&url)
        )));
    }
    let chart = if url.starts_with("oci://") {
        ctx.oci
            .chart(&url, &dep.name, &dep.version, ctx.hard_refresh)
    } else {
        ctx.helm_repos
            .chart(&url, &dep.name, &dep.version, ctx.hard_refresh)
    }
    .map_err(|e| failed(e.to_string()))?;
    let dest = charts.join(format!("{}-{}.tgz", dep.name, chart.version));
    std::fs::copy(&chart.archive, &dest).map_err(Error::io("copying", &chart.archive))?;
    Ok(())
}

/// Copies the directory `rel` of `repo` to `dest` (a new directory), hard-linking or copying
/// files and replacing every symlink by what it resolves to beneath the root; at most `budget`
/// entries (a link to an ancestor directory would otherwise copy forever).
fn copy_resolved(repo: &RepoDir, rel: &Path, dest: &Path, budget: &mut u64) -> Result<()> {
    std::fs::create_dir_all(dest).map_err(Error::io("creating", dest))?;
    for (name, kind) in repo.entries(rel)? {
        *budget = budget.checked_sub(1).ok_or_else(|| Error::TooLarge {
            what: "chart copied for its dependencies",
            limit: "max_repo_files entries".into(),
            context: rel.display().to_string(),
        })?;
        let child = rel.join(&name);
        let to = dest.join(&name);
        let (real, kind) = match kind {
            Kind::Link => {
                let real = repo.resolve(&child)?;
                let kind = if repo.is_dir(&real) {
                    Kind::Dir
                } else if repo.is_file(&real) {
                    Kind::File
                } else {
                    // A dangling link: nothing to copy (helm would not read it either).
                    continue;
                };
                (real, kind)
            }
            other => (child, other),
        };
        match kind {
            Kind::Dir => copy_resolved(repo, &real, &to, budget)?,
            Kind::File => {
                let from = repo.root().join(&real);
                if std::fs::hard_link(&from, &to).is_err() {
                    std::fs::copy(&from, &to).map_err(Error::io("copying", &from))?;
                }
            }
            Kind::Link | Kind::Other => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vendored_means_a_directory_or_an_archive_of_that_name() {
        let entries = vec!["redis".to_owned(), "common-1.2.3.tgz".to_owned()];
        assert!(is_vendored(&entries, "redis"));
        assert!(is_vendored(&entries, "common"));
        assert!(!is_vendored(&entries, "comm"));
        assert!(!is_vendored(&entries, "postgres"));
    }
}
