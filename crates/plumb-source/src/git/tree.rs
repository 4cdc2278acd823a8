//! Writing one commit's tree into a read-only directory, with the repository's safety rules.
//!
//! The tree is walked straight from the object database (no index, no worktree). Before anything
//! is written the walk checks the limits (entries, bytes per file, bytes in total), so a "git bomb"
//! whose trees expand to millions of files stops with a clear error instead of filling the disk.
//! Symlinks pointing outside the repository refuse the whole commit (Argo CD CVE-2022-24348):
//! each link's target is checked lexically during the walk, then, once the tree is written and
//! before it is renamed into place, every link is resolved physically beneath the root, so a
//! chain of links that each look inside (a directory link that climbs back to the root, and a
//! file link that climbs through it) refuses the commit too.

use std::path::{Component, Path, PathBuf};

use gix::ObjectId;

use crate::error::{Error, Result};
use crate::limits::Limits;

/// One entry to write.
enum Entry {
    Dir(PathBuf),
    File {
        path: PathBuf,
        id: ObjectId,
        executable: bool,
    },
    Link {
        path: PathBuf,
        target: String,
    },
}

/// Plans and writes the tree of `commit` into `dest` (which must not exist yet); every directory
/// beneath `dest` ends read-only, `dest` itself stays writable for the caller to move and seal.
/// Gitlinks (submodules) are handed to `fill` with their path and commit once the tree's own
/// files are written, while their directory can still be written to.
pub(crate) fn materialize(
    repo: &gix::Repository,
    commit: ObjectId,
    dest: &Path,
    limits: &Limits,
    url: &str,
    fill: &mut dyn FnMut(&Path, ObjectId) -> Result<()>,
) -> Result<()> {
    let tree_id = tree_of(repo, commit, url)?;

    let mut plan = Vec::new();
    let mut budget = Budget {
        files: 0,
        bytes: 0,
        limits,
        url,
        commit: commit.to_string(),
    };
    let mut gitlinks = Vec::new();
    walk(
        repo,
        tree_id,
        PathBuf::new(),
        &mut plan,
        &mut budget,
        &mut gitlinks,
    )?;

    std::fs::create_dir_all(dest).map_err(Error::io("creating", dest))?;
    for entry in &plan {
        write_entry(repo, entry, dest, url)?;
    }
    check_written_links(dest, url, commit)?;
    for (path, id) in gitlinks {
        fill(&path, id)?;
    }
    // Directories last, deepest first, so they are still writable while being filled. `dest`
    // itself stays writable: the caller moves it into place, then seals it
    // (crate::permissions::read_only_below says why).
    for entry in plan.iter().rev() {
        if let Entry::Dir(rel) = entry {
            set_mode(&dest.join(rel), 0o555)?;
        }
    }
    Ok(())
}

/// An error of the Git cache of `url`.
fn cache_err(url: &str, detail: String) -> Error {
    Error::GitCache {
        url: url.to_owned(),
        detail,
    }
}

/// The root tree of `commit`.
fn tree_of(repo: &gix::Repository, commit: ObjectId, url: &str) -> Result<ObjectId> {
    let commit_obj = repo
        .find_object(commit)
        .map_err(|e| cache_err(url, super::remote::chain(&e)))?
        .peel_to_commit()
        .map_err(|e| {
            cache_err(
                url,
                format!("{commit} is not a commit: {}", super::remote::chain(&e)),
            )
        })?;
    Ok(commit_obj
        .tree_id()
        .map_err(|e| cache_err(url, super::remote::chain(&e)))?
        .detach())
}

/// Writes one planned entry beneath `dest`: a directory, a read-only file, a link.
fn write_entry(repo: &gix::Repository, entry: &Entry, dest: &Path, url: &str) -> Result<()> {
    match entry {
        Entry::Dir(rel) => {
            let p = dest.join(rel);
            std::fs::create_dir_all(&p).map_err(Error::io("creating", p))?;
        }
        Entry::File {
            path,
            id,
            executable,
        } => {
            let data = repo
                .find_object(*id)
                .map_err(|e| cache_err(url, super::remote::chain(&e)))?
                .detach()
                .data;
            let p = dest.join(path);
            std::fs::write(&p, &data).map_err(Error::io("writing", &p))?;
            set_mode(&p, if *executable { 0o555 } else { 0o444 })?;
        }
        Entry::Link { path, target } => {
            let p = dest.join(path);
            std::os::unix::fs::symlink(target, &p).map_err(Error::io("writing", p))?;
        }
    }
    Ok(())
}

/// Resolves every link of the written tree physically beneath its root; one that leads outside
/// refuses the commit.
fn check_written_links(dest: &Path, url: &str, commit: ObjectId) -> Result<()> {
    let written = crate::beneath::RepoDir::open(dest)?;
    written.check_links(Path::new("")).map_err(|e| match e {
        Error::UnsafeSymlink {
            link,
            target,
            problem: crate::beneath::LEADS_OUTSIDE,
            ..
        } => Error::SymlinkOutOfBounds {
            url: url.to_owned(),
            commit: commit.to_string(),
            path: link,
            target,
        },
        other => other,
    })
}

struct Budget<'a> {
    files: u64,
    bytes: u64,
    limits: &'a Limits,
    url: &'a str,
    commit: String,
}

impl Budget<'_> {
    fn too_large(&self, what: &'static str, limit: String) -> Error {
        Error::TooLarge {
            what,
            limit,
            context: format!("repository {} at {}", self.url, self.commit),
        }
    }

    /// Counts one more entry against the entry limit.
    fn count_entry(&mut self) -> Result<()> {
        self.files += 1;
        if self.files > self.limits.max_repo_files {
            return Err(self.too_large(
                "repository tree",
                format!("{} entries", self.limits.max_repo_files),
            ));
        }
        Ok(())
    }

    /// Counts a blob of `size` bytes at `path` against the file and total size limits.
    fn count_bytes(&mut self, path: &Path, size: u64) -> Result<()> {
        if size > self.limits.max_file_bytes {
            return Err(Error::TooLarge {
                what: "file",
                limit: format!("{} bytes", self.limits.max_file_bytes),
                context: format!("{} ({size} bytes)", path.display()),
            });
        }
        self.bytes += size;
        if self.bytes > self.limits.max_repo_bytes {
            return Err(self.too_large(
                "repository tree",
                format!("{} bytes", self.limits.max_repo_bytes),
            ));
        }
        Ok(())
    }
}

fn walk(
    repo: &gix::Repository,
    tree: ObjectId,
    rel: PathBuf,
    plan: &mut Vec<Entry>,
    budget: &mut Budget<'_>,
    gitlinks: &mut Vec<(PathBuf, ObjectId)>,
) -> Result<()> {
    let url = budget.url;
    let tree = repo
        .find_tree(tree)
        .map_err(|e| cache_err(url, super::remote::chain(&e)))?;
    let decoded = tree
        .decode()
        .map_err(|e| cache_err(url, super::remote::chain(&e)))?;
    let entries: Vec<(gix::objs::tree::EntryMode, String, ObjectId)> = decoded
        .entries
        .iter()
        .map(|e| (e.mode, e.filename.to_string(), e.oid.to_owned()))
        .collect();
    for (mode, name, id) in entries {
        if name.is_empty() || name == "." || name == ".." || name.contains('/') || name == ".git" {
            return Err(cache_err(
                url,
                format!(
                    "tree entry {:?} in {} is not a safe file name",
                    name,
                    rel.display()
                ),
            ));
        }
        budget.count_entry()?;
        let path = rel.join(&name);
        if mode.is_tree() {
            plan.push(Entry::Dir(path.clone()));
            walk(repo, id, path, plan, budget, gitlinks)?;
        } else if mode.is_commit() {
            // A submodule: an empty directory, filled afterwards if submodules are enabled.
            plan.push(Entry::Dir(path.clone()));
            gitlinks.push((path, id));
        } else {
            plan.push(plan_blob(repo, mode, id, &rel, path, budget)?);
        }
    }
    Ok(())
}

/// The entry to write for a blob (a file or a link) at `path` in directory `rel`, counted
/// against the size limits; a link whose target leaves the root refuses the commit.
fn plan_blob(
    repo: &gix::Repository,
    mode: gix::objs::tree::EntryMode,
    id: ObjectId,
    rel: &Path,
    path: PathBuf,
    budget: &mut Budget<'_>,
) -> Result<Entry> {
    let url = budget.url;
    let header = repo
        .find_header(id)
        .map_err(|e| cache_err(url, super::remote::chain(&e)))?;
    budget.count_bytes(&path, header.size())?;
    if !mode.is_link() {
        return Ok(Entry::File {
            path,
            id,
            executable: mode.is_executable(),
        });
    }
    let target = repo
        .find_object(id)
        .map_err(|e| cache_err(url, super::remote::chain(&e)))?
        .detach()
        .data;
    let target = String::from_utf8_lossy(&target).into_owned();
    if !link_stays_inside(rel, &target) {
        return Err(Error::SymlinkOutOfBounds {
            url: budget.url.to_owned(),
            commit: budget.commit.clone(),
            path: path.display().to_string(),
            target,
        });
    }
    Ok(Entry::Link { path, target })
}

/// True when a link in directory `dir` (relative to the root) with `target` resolves inside the root.
pub(crate) fn link_stays_inside(dir: &Path, target: &str) -> bool {
    let target = Path::new(target);
    if target.is_absolute() {
        return false;
    }
    normalize_within(&dir.join(target)).is_some()
}

/// Lexically normalises a relative path; `None` when it climbs above its root.
pub(crate) fn normalize_within(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::Normal(p) => out.push(p),
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(out)
}

fn set_mode(path: &Path, mode: u32) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .map_err(Error::io("setting permissions on", path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_are_judged_from_their_own_directory() {
        assert!(link_stays_inside(Path::new("a/b"), "../c.yaml"));
        assert!(link_stays_inside(Path::new("a/b"), "../../c.yaml"));
        assert!(!link_stays_inside(Path::new("a/b"), "../../../etc/passwd"));
        assert!(!link_stays_inside(Path::new(""), "/etc/passwd"));
        assert!(!link_stays_inside(Path::new(""), "x/../../y"));
        assert!(link_stays_inside(Path::new(""), "./x/../y"));
    }
}
