//! Git submodules, fetched as Argo CD's `git submodule update --init --recursive` does when
//! `reposerver.enable.git.submodule` is on (its default): each gitlink of a commit is filled
//! with the commit it names, from the URL `.gitmodules` gives for its path, through this same
//! cache (so with the same repository Secrets, host keys and certificates as any repository).
//!
//! A submodule URL is resolved as Git resolves it (`./` and `../` against the superproject's
//! URL) and must then be a remote URL (`https://`, `http://`, `ssh://` or `user@host:path`):
//! a local one (`file://`, an absolute or relative path on this machine, any other transport
//! such as `ext::`) is refused, so a repository cannot make Plumb read files of the machine
//! through a submodule. Nesting stops at [`MAX_DEPTH`].

use std::collections::BTreeMap;
use std::path::Path;

use super::GitCache;
use crate::error::{Error, Result};
use crate::redact::strip_url_credentials;

/// Submodules within submodules are followed this deep, no deeper.
pub(crate) const MAX_DEPTH: usize = 4;

thread_local! {
    static DEPTH: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

impl GitCache {
    /// Fills the submodule at `path` of the tree being written to `staging` with commit `id`.
    pub(super) fn fill_submodule(
        &self,
        repo: &gix::Repository,
        commit: gix::ObjectId,
        url: &str,
        staging: &Path,
        path: &Path,
        id: gix::ObjectId,
    ) -> Result<()> {
        if !self.submodules.load(std::sync::atomic::Ordering::Relaxed) {
            return Ok(());
        }
        let clean = strip_url_credentials(url);
        let refuse = |reason: String| Error::RepositoryRefused {
            url: clean.clone(),
            reason: format!("submodule {}: {reason}", path.display()),
        };
        let modules = gitmodules(repo, commit).map_err(&refuse)?;
        let Some(sub_url) = modules.get(&path.to_string_lossy().into_owned()) else {
            return Err(refuse("it has no url in .gitmodules".into()));
        };
        let resolved = resolve(&clean, sub_url).map_err(&refuse)?;
        let depth = DEPTH.with(|d| d.get());
        if depth >= MAX_DEPTH {
            return Err(refuse(format!("submodules nest deeper than {MAX_DEPTH}")));
        }
        DEPTH.with(|d| d.set(depth + 1));
        let sha = id.to_string();
        let checkout = self.checkout(&resolved, &sha, &sha);
        DEPTH.with(|d| d.set(depth));
        copy_tree(&checkout?.dir, &staging.join(path))
    }
}

/// `.gitmodules` of `commit`: submodule path → url.
fn gitmodules(
    repo: &gix::Repository,
    commit: gix::ObjectId,
) -> std::result::Result<BTreeMap<String, String>, String> {
    let chain = |e: &(dyn std::error::Error + 'static)| super::remote::chain(e);
    let tree = repo
        .find_object(commit)
        .map_err(|e| chain(&e))?
        .peel_to_commit()
        .map_err(|e| chain(&e))?
        .tree()
        .map_err(|e| chain(&e))?;
    let Some(entry) = tree
        .lookup_entry_by_path(".gitmodules")
        .map_err(|e| chain(&e))?
    else {
        return Err("the commit has a submodule but no .gitmodules".into());
    };
    let blob = entry.object().map_err(|e| chain(&e))?;
    let text = String::from_utf8_lossy(&blob.data).into_owned();
    Ok(parse_gitmodules(&text))
}

/// `path → url` of every `[submodule "..."]` section that has both.
fn parse_gitmodules(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let (mut path, mut url): (Option<String>, Option<String>) = (None, None);
    let mut flush = |path: &mut Option<String>, url: &mut Option<String>| {
        if let (Some(p), Some(u)) = (path.take(), url.take()) {
            out.insert(p.trim_end_matches('/').to_owned(), u);
        }
    };
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            flush(&mut path, &mut url);
        } else if let Some((key, value)) = line.split_once('=') {
            let value = value.trim().trim_matches('"').to_owned();
            match key.trim() {
                "path" => path = Some(value),
                "url" => url = Some(value),
                _ => {}
            }
        }
    }
    flush(&mut path, &mut url);
    out
}

/// The URL Git would fetch `sub` from for the superproject at `parent`, refused when it is local.
fn resolve(parent: &str, sub: &str) -> std::result::Result<String, String> {
    let sub = sub.trim();
    let url = if sub.starts_with("./") || sub.starts_with("../") {
        let mut base = parent.trim_end_matches('/').to_owned();
        if let Some(stripped) = base.strip_suffix(".git") {
            base = stripped.to_owned();
        }
        let mut rest = sub;
        loop {
            if let Some(r) = rest.strip_prefix("./") {
                rest = r;
            } else if let Some(r) = rest.strip_prefix("../") {
                let cut = base
                    .rfind('/')
                    .ok_or("its relative url climbs above the host")?;
                base.truncate(cut);
                if base.ends_with('/') || base.ends_with(':') {
                    return Err("its relative url climbs above the host".into());
                }
                rest = r;
            } else {
                break;
            }
        }
        format!("{base}/{rest}")
    } else {
        sub.to_owned()
    };
    let lower = url.to_ascii_lowercase();
    let remote = ["https://", "http://", "ssh://"]
        .iter()
        .any(|s| lower.starts_with(s))
        || is_scp_like(&url);
    if remote {
        Ok(url)
    } else {
        Err(format!(
            "its url {:?} is not a remote repository (https, http or ssh): a local path or \
             another transport is never followed",
            strip_url_credentials(&url)
        ))
    }
}

/// `user@host:path` (Git's scp-like syntax), not a path or a `transport::` address.
fn is_scp_like(url: &str) -> bool {
    match url.split_once(':') {
        Some((head, rest)) => {
            head.contains('@')
                && !head.contains('/')
                && !rest.starts_with(':')
                && !head.starts_with('-')
        }
        None => false,
    }
}

/// Copies a written tree into `dest` (an existing empty directory): files hard-linked when the
/// file system allows it, links re-created, directories made.
fn copy_tree(from: &Path, dest: &Path) -> Result<()> {
    for entry in std::fs::read_dir(from).map_err(Error::io("reading", from))? {
        let entry = entry.map_err(Error::io("reading", from))?;
        let (src, dst) = (entry.path(), dest.join(entry.file_name()));
        let kind = entry.file_type().map_err(Error::io("reading", &src))?;
        if kind.is_symlink() {
            let target = std::fs::read_link(&src).map_err(Error::io("reading", &src))?;
            std::os::unix::fs::symlink(target, &dst).map_err(Error::io("writing", &dst))?;
        } else if kind.is_dir() {
            std::fs::create_dir(&dst).map_err(Error::io("creating", &dst))?;
            copy_tree(&src, &dst)?;
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&dst, std::fs::Permissions::from_mode(0o555))
                .map_err(Error::io("setting permissions of", &dst))?;
        } else if std::fs::hard_link(&src, &dst).is_err() {
            std::fs::copy(&src, &dst).map_err(Error::io("writing", &dst))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_resolve_as_git_resolves_them_and_local_ones_are_refused() {
        let p = "https://git.example.com/team/app.git";
        assert_eq!(
            resolve(p, "../lib.git").unwrap(),
            "https://git.example.com/team/lib.git"
        );
        assert_eq!(
            resolve(p, "./sub").unwrap(),
            "https://git.example.com/team/app/sub"
        );
        assert_eq!(
            resolve(p, "git@github.com:o/r.git").unwrap(),
            "git@github.com:o/r.git"
        );
        assert!(resolve(p, "../../../x").is_err());
        for bad in ["file:///etc", "/etc", "ext::sh -c id", "C:/x", "../lib"] {
            let parent = if bad == "../lib" {
                "file:///srv/app"
            } else {
                p
            };
            assert!(resolve(parent, bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn gitmodules_sections() {
        let m = parse_gitmodules(
            "[submodule \"lib\"]\n\tpath = vendor/lib\n\turl = https://h/lib.git\n[submodule \"x\"]\n\turl = ../x\n",
        );
        assert_eq!(m.len(), 1);
        assert_eq!(m["vendor/lib"], "https://h/lib.git");
    }
}
