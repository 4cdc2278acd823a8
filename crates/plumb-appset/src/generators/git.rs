//! `git`: directories and files of a repository (Argo's `GitGenerator` and the repo-server's
//! `GetGitDirectories`/`GetGitFiles`).
//!
//! The commit is resolved and checked out read-only through [`plumb_source::GitCache`]; every
//! read goes through [`plumb_source::RepoDir`], beneath the checkout's root (a `..` or a symlink
//! leading out is refused by the kernel), sized by [`crate::Limits`].

use std::path::Path;

use plumb_model::applicationset::GitGenerator;
use plumb_source::{EntryKind, RepoDir};
use serde_json::Value;

use super::glob::{doublestar_match, path_match, pathspec_match};
use super::values::{Mode, append_values, flatten, sanitize_name};
use crate::context::{Context, Limits};
use crate::error::GeneratorError;
use crate::params::Params;

/// The parameter sets of `spec` (directories take precedence over files, as in Argo).
pub async fn generate(
    spec: &GitGenerator,
    mode: Mode<'_>,
    ctx: &Context,
) -> Result<Vec<Params>, GeneratorError> {
    let dirs = spec.directories.as_deref().unwrap_or_default();
    let files = spec.files.as_deref().unwrap_or_default();
    if dirs.is_empty() && files.is_empty() {
        return Err(GeneratorError::Invalid(
            "ApplicationSet is empty".to_owned(),
        ));
    }
    let patterns: Vec<(String, bool)> = if dirs.is_empty() {
        files
            .iter()
            .map(|f| (pattern(f.path.as_deref()), f.exclude.unwrap_or(false)))
            .collect()
    } else {
        dirs.iter()
            .map(|d| (pattern(d.path.as_deref()), d.exclude.unwrap_or(false)))
            .collect()
    };
    for (p, _) in &patterns {
        check_pattern(p)?;
    }
    let url = spec.repo_url.clone().unwrap_or_default();
    if url.is_empty() {
        return Err(GeneratorError::Invalid(
            "git generator: repoURL is required".to_owned(),
        ));
    }
    let revision = spec
        .revision
        .clone()
        .filter(|r| !r.is_empty())
        .unwrap_or_else(|| "HEAD".to_owned());
    let (git, limits) = (ctx.git.clone(), ctx.limits.clone());
    let directories = !dirs.is_empty();
    let found = tokio::task::spawn_blocking(move || -> Result<Found, GeneratorError> {
        let source = |e: plumb_source::Error| {
            GeneratorError::Source(format!("error generating params from git: {url}: {e}"))
        };
        let git = git.git();
        let commit = git.resolve(&url, &revision).map_err(source)?;
        let checkout = git.checkout(&url, &revision, &commit).map_err(source)?;
        let root = RepoDir::open(&checkout.dir).map_err(source)?;
        if directories {
            Ok(Found::Dirs(filter_dirs(
                &patterns,
                list_dirs(&root, &limits)?,
            )))
        } else {
            read_files(&root, &patterns, &limits, &url).map(Found::Files)
        }
    })
    .await
    .map_err(|e| GeneratorError::Source(format!("git generator task failed: {e}")))??;
    let out = to_params(found, spec, mode)?;
    if out.len() > ctx.limits.max_params {
        return Err(GeneratorError::Limit(format!(
            "git generator: {} parameter sets, more than the limit of {}",
            out.len(),
            ctx.limits.max_params
        )));
    }
    Ok(out)
}

/// The parameter sets of what the checkout gave, `values` added.
fn to_params(
    found: Found,
    spec: &GitGenerator,
    mode: Mode<'_>,
) -> Result<Vec<Params>, GeneratorError> {
    let prefix = spec.path_param_prefix.as_deref().unwrap_or_default();
    let mut out = Vec::new();
    match found {
        Found::Dirs(paths) => {
            for p in paths {
                let mut params = path_params(&p, None, prefix, mode.go_template);
                append_values(spec.values.as_ref(), &mut params, mode)?;
                out.push(params);
            }
        }
        Found::Files(files) => {
            for (path, content) in files {
                for mut params in file_params(&path, &content, prefix, mode.go_template)? {
                    append_values(spec.values.as_ref(), &mut params, mode)?;
                    out.push(params);
                }
            }
        }
    }
    Ok(out)
}

enum Found {
    Dirs(Vec<String>),
    Files(Vec<(String, Vec<u8>)>),
}

fn pattern(p: Option<&str>) -> String {
    p.unwrap_or_default().to_owned()
}

/// Patterns are relative to the repository root: an absolute path or a `..` component is refused
/// (Argo passes them to `git ls-files`, which refuses paths outside the repository too).
fn check_pattern(p: &str) -> Result<(), GeneratorError> {
    if p.starts_with('/') || p.split('/').any(|c| c == "..") {
        return Err(GeneratorError::Invalid(format!(
            "git generator: path {p:?} leads outside the repository"
        )));
    }
    Ok(())
}

/// Every directory of the tree in `filepath.WalkDir` order (pre-order, names sorted), hidden
/// directories and links skipped, the root left out: the repo-server's `walkDirectoryTree`.
fn list_dirs(root: &RepoDir, limits: &Limits) -> Result<Vec<String>, GeneratorError> {
    let mut out = Vec::new();
    let mut seen = 0usize;
    walk(root, "", limits, &mut seen, &mut |rel, kind| {
        if kind == EntryKind::Dir {
            out.push(rel.to_owned());
        }
    })?;
    Ok(out)
}

/// Visits the tree beneath `dir` in pre-order, names sorted; directories whose name starts with
/// `.` are not entered nor reported. At most `limits.max_tree_entries` entries.
fn walk(
    root: &RepoDir,
    dir: &str,
    limits: &Limits,
    seen: &mut usize,
    visit: &mut dyn FnMut(&str, EntryKind),
) -> Result<(), GeneratorError> {
    let entries = root
        .entries(Path::new(dir))
        .map_err(|e| GeneratorError::Source(format!("unable to walk directory tree: {e}")))?;
    for (name, kind) in entries {
        *seen += 1;
        if *seen > limits.max_tree_entries {
            return Err(GeneratorError::Limit(format!(
                "git generator: the repository has more than {} files and directories",
                limits.max_tree_entries
            )));
        }
        let name = name.to_string_lossy();
        let rel = if dir.is_empty() {
            name.to_string()
        } else {
            format!("{dir}/{name}")
        };
        if kind == EntryKind::Dir && name.starts_with('.') {
            continue;
        }
        visit(&rel, kind);
        if kind == EntryKind::Dir {
            walk(root, &rel, limits, seen, visit)?;
        }
    }
    Ok(())
}

/// Argo's `filterPaths`: included by some non-exclude pattern and by no exclude pattern; a
/// malformed pattern matches nothing.
fn filter_dirs(patterns: &[(String, bool)], paths: Vec<String>) -> Vec<String> {
    paths
        .into_iter()
        .filter(|p| {
            let hit = |exclude: bool| {
                patterns
                    .iter()
                    .any(|(pat, ex)| *ex == exclude && path_match(pat, p) == Ok(true))
            };
            hit(false) && !hit(true)
        })
        .collect()
}

/// Files matched by any include and no exclude pattern, sorted by path, read beneath the root.
fn read_files(
    root: &RepoDir,
    patterns: &[(String, bool)],
    limits: &Limits,
    url: &str,
) -> Result<Vec<(String, Vec<u8>)>, GeneratorError> {
    let mut candidates = Vec::new();
    let mut seen = 0usize;
    // Hidden directories are files' homes too for `git ls-files`.
    walk_all(root, "", limits, &mut seen, &mut candidates)?;
    let matches = |pat: &str, file: &str| {
        if limits.new_git_file_globbing {
            doublestar_match(pat, file)
        } else {
            pathspec_match(pat, file)
        }
        .map_err(|_| GeneratorError::Invalid(format!("git generator: bad file pattern {pat:?}")))
    };
    let mut selected = Vec::new();
    for file in candidates {
        let mut include = false;
        let mut exclude = false;
        for (pat, ex) in patterns {
            if matches(pat, &file)? {
                if *ex { exclude = true } else { include = true }
            }
        }
        if include && !exclude {
            selected.push(file);
        }
    }
    selected.sort();
    if selected.len() > limits.max_params {
        return Err(GeneratorError::Limit(format!(
            "git generator: {} files match, more than the limit of {}",
            selected.len(),
            limits.max_params
        )));
    }
    let mut total = 0u64;
    let mut out = Vec::with_capacity(selected.len());
    for file in selected {
        let content = root
            .read(Path::new(&file), limits.max_file_bytes)
            .map_err(|e| {
                GeneratorError::Source(format!(
                    "unable to process file '{file}' from repository '{url}': {e}"
                ))
            })?;
        total += content.len() as u64;
        if total > limits.max_total_bytes {
            return Err(GeneratorError::Limit(format!(
                "git generator: the matched files of '{url}' exceed {} bytes together",
                limits.max_total_bytes
            )));
        }
        out.push((file, content));
    }
    Ok(out)
}

/// Every file and link of the tree (what `git ls-files` lists), hidden directories included.
fn walk_all(
    root: &RepoDir,
    dir: &str,
    limits: &Limits,
    seen: &mut usize,
    out: &mut Vec<String>,
) -> Result<(), GeneratorError> {
    let entries = root
        .entries(Path::new(dir))
        .map_err(|e| GeneratorError::Source(format!("unable to list files: {e}")))?;
    for (name, kind) in entries {
        *seen += 1;
        if *seen > limits.max_tree_entries {
            return Err(GeneratorError::Limit(format!(
                "git generator: the repository has more than {} files and directories",
                limits.max_tree_entries
            )));
        }
        let name = name.to_string_lossy();
        let rel = if dir.is_empty() {
            name.to_string()
        } else {
            format!("{dir}/{name}")
        };
        match kind {
            EntryKind::Dir => walk_all(root, &rel, limits, seen, out)?,
            EntryKind::File | EntryKind::Link => out.push(rel),
            EntryKind::Other => {}
        }
    }
    Ok(())
}

/// Go's `path.Dir` and `path.Base` of a clean relative path.
fn dir_and_base(p: &str) -> (&str, &str) {
    match p.rsplit_once('/') {
        Some((d, b)) => (d, b),
        None => (".", p),
    }
}

/// Argo's `buildPathParameters` (directories; `file` set for the files generator).
fn path_params(path: &str, file: Option<&str>, prefix: &str, go: bool) -> Params {
    let basename = dir_and_base(path).1.to_owned();
    let mut params = Params::new();
    if go {
        let mut p = Params::new();
        p.insert("path".into(), path.into());
        p.insert("basename".into(), basename.clone().into());
        p.insert("basenameNormalized".into(), sanitize_name(&basename).into());
        if let Some(f) = file {
            p.insert("filename".into(), f.into());
            p.insert("filenameNormalized".into(), sanitize_name(f).into());
        }
        let segments = path
            .split('/')
            .map(|s| Value::String(s.to_owned()))
            .collect();
        p.insert("segments".into(), Value::Array(segments));
        if prefix.is_empty() {
            params.insert("path".into(), Value::Object(p));
        } else {
            let inner = [("path".to_owned(), Value::Object(p))]
                .into_iter()
                .collect();
            params.insert(prefix.to_owned(), Value::Object(inner));
        }
        return params;
    }
    let name = if prefix.is_empty() {
        "path".to_owned()
    } else {
        format!("{prefix}.path")
    };
    params.insert(name.clone(), path.into());
    params.insert(format!("{name}.basename"), basename.clone().into());
    params.insert(
        format!("{name}.basenameNormalized"),
        sanitize_name(&basename).into(),
    );
    if let Some(f) = file {
        params.insert(format!("{name}.filename"), f.into());
        params.insert(
            format!("{name}.filenameNormalized"),
            sanitize_name(f).into(),
        );
    }
    for (k, seg) in path.split('/').enumerate() {
        if !seg.is_empty() {
            params.insert(format!("{name}[{k}]"), seg.into());
        }
    }
    params
}

/// Argo's `parseFileParams`: the file's first YAML/JSON document, an object or a list of
/// objects, each one parameter set with the path parameters added.
fn file_params(
    path: &str,
    content: &[u8],
    prefix: &str,
    go: bool,
) -> Result<Vec<Params>, GeneratorError> {
    let bad = |detail: String| {
        GeneratorError::Invalid(format!(
            "unable to process file '{path}': unable to parse file: {detail}"
        ))
    };
    let text = std::str::from_utf8(content).map_err(|_| bad("not UTF-8 text".to_owned()))?;
    let docs = plumb_yaml::read_documents(text, path).map_err(|e| bad(e.to_string()))?;
    let objects: Vec<Params> = match docs.into_iter().next().map(|d| d.value) {
        None | Some(Value::Null) => vec![Params::new()],
        Some(Value::Object(map)) => vec![map],
        Some(Value::Array(items)) => items
            .into_iter()
            .map(|v| match v {
                Value::Object(map) => Ok(map),
                Value::Null => Ok(Params::new()),
                _ => Err(bad("a list item is not an object".to_owned())),
            })
            .collect::<Result<_, _>>()?,
        Some(_) => return Err(bad("not an object or a list of objects".to_owned())),
    };
    let (dir, filename) = dir_and_base(path);
    Ok(objects
        .into_iter()
        .map(|object| {
            let mut params = if go {
                object
            } else {
                flatten(&object)
                    .into_iter()
                    .map(|(k, v)| (k, Value::String(v)))
                    .collect()
            };
            params.extend(path_params(dir, Some(filename), prefix, go));
            params
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn directory_params_flat_and_nested() {
        let p = path_params("cluster-addons/Argo_Workflows", None, "", false);
        assert_eq!(p["path"], "cluster-addons/Argo_Workflows");
        assert_eq!(p["path.basename"], "Argo_Workflows");
        assert_eq!(p["path.basenameNormalized"], "argo-workflows");
        assert_eq!(p["path[0]"], "cluster-addons");
        assert_eq!(p["path[1]"], "Argo_Workflows");
        let g = path_params("cluster-addons/argo-workflows", None, "myRepo", true);
        assert_eq!(
            g["myRepo"]["path"]["segments"],
            json!(["cluster-addons", "argo-workflows"])
        );
        assert_eq!(g["myRepo"]["path"]["basename"], "argo-workflows");
        let f = path_params("a", None, "pre", false);
        assert_eq!(f["pre.path[0]"], "a");
    }

    #[test]
    fn file_params_as_argo_docs() {
        let content = br#"{"aws_account": "123456", "asset_id": 11223344, "cluster": {"owner": "cluster-admin@company.com", "name": "engineering-dev", "address": "https://1.2.3.4"}}"#;
        let p = file_params(
            "cluster-config/engineering/dev/config.json",
            content,
            "",
            false,
        )
        .unwrap();
        assert_eq!(p.len(), 1);
        assert_eq!(p[0]["cluster.name"], "engineering-dev");
        assert_eq!(p[0]["asset_id"], "1.1223344e+07");
        assert_eq!(p[0]["path"], "cluster-config/engineering/dev");
        assert_eq!(p[0]["path.basename"], "dev");
        assert_eq!(p[0]["path.filename"], "config.json");
        assert_eq!(p[0]["path.filenameNormalized"], "config.json");
        assert_eq!(p[0]["path[2]"], "dev");
        let g = file_params("config.yaml", b"- a: 1\n- a: 2\n", "", true).unwrap();
        assert_eq!(g.len(), 2);
        assert_eq!(g[1]["a"], 2);
        assert_eq!(g[1]["path"]["path"], ".");
        assert_eq!(g[1]["path"]["segments"], json!(["."]));
        assert!(file_params("x.yaml", b"just text", "", false).is_err());
    }

    #[test]
    fn patterns_outside_the_repo_are_refused() {
        assert!(check_pattern("../other/*").is_err());
        assert!(check_pattern("apps/../../x").is_err());
        assert!(check_pattern("/etc/*").is_err());
        assert!(check_pattern("apps/..foo/*").is_ok());
    }

    #[test]
    fn dir_filter_with_excludes() {
        let pats = vec![
            ("cluster-addons/*".to_owned(), false),
            ("cluster-addons/exclude-me".to_owned(), true),
        ];
        let paths = [
            "cluster-addons",
            "cluster-addons/a",
            "cluster-addons/exclude-me",
            "cluster-addons/a/b",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(filter_dirs(&pats, paths), ["cluster-addons/a"]);
    }
}
