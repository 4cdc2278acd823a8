//! The scratch copy kustomize reads: the tree mirrored with hard links, and remote bases fetched
//! by Plumb and localised into it.
//!
//! kustomize would clone a remote base itself, with `git` and the controller's network and file
//! system: a remote base's own kustomization was never seen by Plumb, and could name
//! `file:///<cache>/git/repos/<hash>.git`, another tenant's repository. Plumb instead fetches
//! every remote base through its own Git layer ([`crate::GitCache`]: the same client, checks and
//! credentials as an Application's source) after checking it against the project's
//! `sourceRepos`, checks the fetched base's kustomization like the Application's (and fetches
//! its remote bases the same way), and hands kustomize a scratch copy in which each remote entry
//! is replaced by the local path of what was fetched. kustomize itself runs without network, so
//! a remote form Plumb does not recognise cannot be fetched behind its back: it fails.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use serde_json::Value;

use super::context::Context;
use super::kustomize_paths::{Found, check_paths, first_document};
use crate::beneath::RepoDir;
use crate::error::{Error, Result};
use crate::git::normalize_within;
use crate::redact::strip_url_credentials;

/// How deep remote bases may name remote bases.
const MAX_DEPTH: usize = 5;
/// How many remote bases one render may fetch.
const MAX_REMOTE_BASES: usize = 32;

/// Remote bases fetched for one render so far, and the roots their copies were given (for
/// error redaction).
#[derive(Default)]
pub(crate) struct Fetched {
    count: usize,
    /// (copy in the scratch directory, repository URL it came from).
    pub roots: Vec<(PathBuf, String)>,
}

/// Replaces every remote entry of `found` (entries of kustomizations under `copy`, a scratch
/// copy of their tree) by the relative path of a fetched copy of the base, under `scratch`.
pub(crate) fn localise(
    ctx: &Context<'_>,
    found: &[Found],
    copy: &Path,
    scratch: &Path,
    depth: usize,
    fetched: &mut Fetched,
) -> Result<()> {
    let mut by_file: BTreeMap<&Path, Vec<&Found>> = BTreeMap::new();
    for f in found {
        by_file.entry(f.file.as_path()).or_default().push(f);
    }
    for (file, entries) in by_file {
        let path = copy.join(file);
        let text = std::fs::read_to_string(&path).map_err(Error::io("reading", &path))?;
        let mut doc = first_document(&text, &file.display().to_string())?;
        let from = path.parent().unwrap_or(copy);
        for f in entries {
            let local = fetch(ctx, f, scratch, depth, fetched)?;
            let rel = relative(from, &local).display().to_string();
            replace_entry(&mut doc, &f.list, &f.entry, &rel);
        }
        // A new file, not a write through the hard link into the shared tree. JSON is YAML.
        std::fs::remove_file(&path).map_err(Error::io("writing", &path))?;
        std::fs::write(&path, doc.to_string()).map_err(Error::io("writing", &path))?;
    }
    Ok(())
}

/// Fetches one remote base through the Git cache, checks its kustomization, copies it into
/// `scratch` with its own remote bases localised, and returns the base directory in the copy.
fn fetch(
    ctx: &Context<'_>,
    f: &Found,
    scratch: &Path,
    depth: usize,
    fetched: &mut Fetched,
) -> Result<PathBuf> {
    let shown = strip_url_credentials(&f.base.repo);
    let too_many = |reason: String| Error::RemoteBaseRefused {
        field: f.field.clone(),
        url: strip_url_credentials(&f.entry),
        reason,
    };
    if depth >= MAX_DEPTH {
        return Err(too_many(format!(
            "remote bases nest deeper than {MAX_DEPTH} levels"
        )));
    }
    fetched.count += 1;
    if fetched.count > MAX_REMOTE_BASES {
        return Err(too_many(format!(
            "the render names more than {MAX_REMOTE_BASES} remote bases"
        )));
    }
    let revision = f.base.reference.as_deref().unwrap_or("HEAD");
    let commit = ctx.git.resolve(&f.base.repo, revision)?;
    let tree = ctx.git.checkout(&f.base.repo, revision, &commit)?.dir;
    let repo = RepoDir::open(&tree)?;
    repo.check_links(Path::new(""))?;
    let dir =
        normalize_within(Path::new(&f.base.dir)).ok_or_else(|| Error::PathOutsideRepository {
            field: f.field.clone(),
            path: f.entry.clone(),
        })?;
    repo.resolve(&dir)?;
    if !repo.is_dir(&dir) {
        return Err(Error::PathNotFound {
            field: f.field.clone(),
            path: format!("{shown}//{}", f.base.dir),
        });
    }
    // The base's own kustomization is held to the Application's rules: its local paths stay
    // in its repository, its remote bases are checked and fetched the same way.
    let mut nested = Vec::new();
    let origin = format!("{shown}@{revision}: ");
    check_paths(
        ctx,
        &repo,
        &origin,
        &dir,
        &mut Default::default(),
        &mut nested,
    )?;
    let copy = scratch.join("remote").join(fetched.count.to_string());
    link_tree(&tree, &copy)?;
    fetched.roots.push((copy.clone(), shown));
    localise(ctx, &nested, &copy, scratch, depth + 1, fetched)?;
    Ok(copy.join(dir))
}

/// Replaces the string `entry` in the list `field` of `doc` by `local`.
fn replace_entry(doc: &mut Value, field: &str, entry: &str, local: &str) {
    if let Some(Value::Array(items)) = doc.get_mut(field) {
        for item in items {
            if item.as_str() == Some(entry) {
                *item = Value::String(local.to_owned());
            }
        }
    }
}

/// `to` relative to the directory `from` (both absolute, without `..`).
fn relative(from: &Path, to: &Path) -> PathBuf {
    let from: Vec<Component<'_>> = from.components().collect();
    let to: Vec<Component<'_>> = to.components().collect();
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut out = PathBuf::new();
    for _ in common..from.len() {
        out.push("..");
    }
    for c in &to[common..] {
        out.push(c);
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

/// Mirrors `src` into `dest` with hard links (copies when linking is impossible).
pub(crate) fn link_tree(src: &Path, dest: &Path) -> Result<()> {
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
    fn relative_paths_climb_to_the_common_directory() {
        assert_eq!(
            relative(Path::new("/s/repo/k/prod"), Path::new("/s/remote/1/app")),
            PathBuf::from("../../../remote/1/app")
        );
        assert_eq!(
            relative(Path::new("/s/a"), Path::new("/s/a")),
            PathBuf::from(".")
        );
    }
}
