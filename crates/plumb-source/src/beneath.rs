//! Reading a checkout without ever leaving it.
//!
//! Every file Plumb itself reads from a repository tree (directory manifests, Jsonnet imports,
//! kustomization files, Helm value files) is opened through a [`RepoDir`]: a `cap_std` directory
//! handle on the tree's root. cap-std resolves each path beneath that handle (on Linux with
//! `openat2(RESOLVE_BENEATH)`, so the kernel refuses any `..` or symlink that would climb above
//! the root, whatever chain of links leads there); Plumb never joins and opens path strings.
//! Ambient authority is used exactly once, to open the root.
//!
//! External tools (helm, kustomize) open files themselves, so before one runs
//! [`RepoDir::check_links`] resolves every symlink of the tree it reads, one component at a
//! time as the kernel does, and refuses the render when one leads outside or loops.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::io::Read;
use std::path::{Component, Path, PathBuf};

use cap_std::ambient_authority;
use cap_std::fs::Dir;

use crate::error::{Error, Result};

/// [`Error::UnsafeSymlink`]'s problem for a link that leads out of the root.
pub(crate) const LEADS_OUTSIDE: &str = "leads outside the repository root";

/// Links followed in one resolution before giving up (Linux's `MAXSYMLINKS`).
pub(crate) const MAX_SYMLINK_HOPS: usize = 40;

/// What kind of entry a directory listing holds (links not followed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link (not followed).
    Link,
    /// Anything else (socket, device, fifo).
    Other,
}

/// A repository tree opened for reading beneath its root.
pub struct RepoDir {
    dir: Dir,
    root: PathBuf,
}

/// Why a path cannot be resolved inside the tree.
enum Unsafe {
    /// A link (relative to the root) whose target leaves the root.
    Escapes { link: PathBuf, target: PathBuf },
    /// A `..` in the path itself climbs above the root.
    Climbs,
    /// More than [`MAX_SYMLINK_HOPS`] links: a loop or an absurd chain.
    Loop { link: PathBuf, target: PathBuf },
}

impl RepoDir {
    /// Opens the tree at `root` (the only use of ambient authority on a checkout).
    pub fn open(root: &Path) -> Result<Self> {
        let dir =
            Dir::open_ambient_dir(root, ambient_authority()).map_err(Error::io("opening", root))?;
        Ok(Self {
            dir,
            root: root.to_path_buf(),
        })
    }

    /// The root on disk (for handing to external tools and for error messages).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Reads the file at `rel`, refusing it when it is larger than `max_bytes` or resolves
    /// outside the tree.
    pub fn read(&self, rel: &Path, max_bytes: u64) -> Result<Vec<u8>> {
        let file = self.dir.open(rel).map_err(|e| self.explain(rel, e))?;
        let mut buf = Vec::new();
        file.take(max_bytes.saturating_add(1))
            .read_to_end(&mut buf)
            .map_err(Error::io("reading", self.root.join(rel)))?;
        if buf.len() as u64 > max_bytes {
            return Err(Error::TooLarge {
                what: "file",
                limit: format!("{max_bytes} bytes"),
                context: rel.display().to_string(),
            });
        }
        Ok(buf)
    }

    /// Reads the UTF-8 text file at `rel` (see [`RepoDir::read`]).
    pub fn read_to_string(&self, rel: &Path, max_bytes: u64) -> Result<String> {
        String::from_utf8(self.read(rel, max_bytes)?).map_err(|_| Error::InvalidManifest {
            file: rel.display().to_string(),
            line: 1,
            detail: "file is not UTF-8".into(),
        })
    }

    /// True when `rel` resolves, beneath the root, to a regular file.
    pub fn is_file(&self, rel: &Path) -> bool {
        self.dir.metadata(rel).is_ok_and(|m| m.is_file())
    }

    /// True when `rel` resolves, beneath the root, to a directory.
    pub fn is_dir(&self, rel: &Path) -> bool {
        if rel.as_os_str().is_empty() {
            return true;
        }
        self.dir.metadata(rel).is_ok_and(|m| m.is_dir())
    }

    /// True when `rel` exists beneath the root (links followed, beneath only).
    pub fn exists(&self, rel: &Path) -> bool {
        rel.as_os_str().is_empty() || self.dir.metadata(rel).is_ok()
    }

    /// The entries of the directory `rel`, sorted by name, links not followed.
    pub fn entries(&self, rel: &Path) -> Result<Vec<(OsString, Kind)>> {
        let listing = if rel.as_os_str().is_empty() {
            self.dir.entries()
        } else {
            self.dir.read_dir(rel)
        }
        .map_err(|e| self.explain(rel, e))?;
        let mut out = Vec::new();
        for entry in listing {
            let entry = entry.map_err(Error::io("reading", self.root.join(rel)))?;
            let ty = entry
                .file_type()
                .map_err(Error::io("reading", self.root.join(rel)))?;
            let kind = if ty.is_symlink() {
                Kind::Link
            } else if ty.is_dir() {
                Kind::Dir
            } else if ty.is_file() {
                Kind::File
            } else {
                Kind::Other
            };
            out.push((entry.file_name(), kind));
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(out)
    }

    /// Where `rel` physically leads inside the tree (every link resolved), or the error naming
    /// the link that leaves it or loops. A path that does not exist resolves lexically from the
    /// first missing component on.
    pub(crate) fn resolve(&self, rel: &Path) -> Result<PathBuf> {
        self.walk(rel).map_err(|u| self.unsafe_error(rel, u))
    }

    /// Resolves every symlink under the directory `rel` (recursively, links to directories not
    /// descended into: they are resolved themselves) and refuses the first that leaves the tree
    /// or loops. Run before an external tool reads the tree.
    pub(crate) fn check_links(&self, rel: &Path) -> Result<()> {
        let mut pending = vec![rel.to_path_buf()];
        while let Some(dir) = pending.pop() {
            for (name, kind) in self.entries(&dir)? {
                let child = dir.join(&name);
                match kind {
                    Kind::Dir => pending.push(child),
                    Kind::Link => {
                        self.resolve(&child)?;
                    }
                    Kind::File | Kind::Other => {}
                }
            }
        }
        Ok(())
    }

    /// Turns an open failure into the error that says why: a link that leaves the tree or loops
    /// is named with its target; anything else stays an I/O error on the path.
    fn explain(&self, rel: &Path, err: std::io::Error) -> Error {
        // cap-std reports an escape as PermissionDenied; Linux's ELOOP (40) and EXDEV (18) are
        // what openat2 says for a loop or a crossing it refuses.
        let refused = err.kind() == std::io::ErrorKind::PermissionDenied
            || matches!(err.raw_os_error(), Some(40 | 18));
        if refused && let Err(u) = self.walk(rel) {
            return self.unsafe_error(rel, u);
        }
        Error::io("reading", self.root.join(rel))(err)
    }

    fn unsafe_error(&self, rel: &Path, u: Unsafe) -> Error {
        let path = rel.display().to_string();
        match u {
            Unsafe::Climbs => Error::PathOutsideRepository {
                field: "repository path".into(),
                path,
            },
            Unsafe::Escapes { link, target } => Error::UnsafeSymlink {
                path,
                link: link.display().to_string(),
                target: target.display().to_string(),
                problem: LEADS_OUTSIDE,
            },
            Unsafe::Loop { link, target } => Error::UnsafeSymlink {
                path,
                link: link.display().to_string(),
                target: target.display().to_string(),
                problem: "is part of a loop or of a chain of more than 40 links",
            },
        }
    }

    /// Resolves `rel` component by component as the kernel does, never above the root.
    fn walk(&self, rel: &Path) -> std::result::Result<PathBuf, Unsafe> {
        if rel.is_absolute() {
            return Err(Unsafe::Climbs);
        }
        // Links followed so far, as (link, target); each pending component remembers which
        // link's target it came from, so a climb above the root names the link that made it.
        let mut links: Vec<(PathBuf, PathBuf)> = Vec::new();
        let mut pending: VecDeque<(Step, Option<usize>)> =
            steps(rel).into_iter().map(|s| (s, None)).collect();
        let mut resolved = PathBuf::new();
        let mut missing = false;
        while let Some((step, origin)) = pending.pop_front() {
            let name = match step {
                Step::Up => {
                    if !resolved.pop() {
                        return Err(match origin.and_then(|i| links.get(i)) {
                            Some((link, target)) => Unsafe::Escapes {
                                link: link.clone(),
                                target: target.clone(),
                            },
                            None => Unsafe::Climbs,
                        });
                    }
                    continue;
                }
                Step::Name(name) => name,
            };
            let candidate = resolved.join(&name);
            if missing {
                resolved = candidate;
                continue;
            }
            match self.dir.symlink_metadata(&candidate) {
                Ok(m) if m.is_symlink() => {}
                Ok(_) => {
                    resolved = candidate;
                    continue;
                }
                Err(_) => {
                    missing = true;
                    resolved = candidate;
                    continue;
                }
            }
            let target = read_link_raw(&self.root, &candidate);
            if links.len() >= MAX_SYMLINK_HOPS {
                return Err(Unsafe::Loop {
                    link: candidate,
                    target,
                });
            }
            if target.is_absolute() {
                return Err(Unsafe::Escapes {
                    link: candidate,
                    target,
                });
            }
            let index = links.len();
            for step in steps(&target).into_iter().rev() {
                pending.push_front((step, Some(index)));
            }
            links.push((candidate, target));
        }
        Ok(resolved)
    }
}

/// One component of a path being resolved.
enum Step {
    Up,
    Name(OsString),
}

/// The components of a relative path (`.` dropped).
fn steps(path: &Path) -> Vec<Step> {
    path.components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(Step::Name(n.to_os_string())),
            Component::ParentDir => Some(Step::Up),
            _ => None,
        })
        .collect()
}

/// The raw target of the link at `rel` (cap-std's `read_link` refuses absolute targets, which
/// are exactly the ones worth naming in an error). The parent of `rel` is already resolved and
/// free of links, so this reads the link itself, not something it points to.
fn read_link_raw(root: &Path, rel: &Path) -> PathBuf {
    std::fs::read_link(root.join(rel)).unwrap_or_else(|_| PathBuf::from("?"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// A tree with the chained escape of issue #12 and a file outside it.
    fn hostile_tree() -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("repo");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(tmp.path().join("secret.txt"), "outside").unwrap();
        std::fs::write(root.join("ok.yaml"), "inside").unwrap();
        let deep: PathBuf = (0..40).map(|i| format!("d{i}")).collect();
        std::fs::create_dir_all(root.join(&deep)).unwrap();
        symlink("../".repeat(40), root.join(&deep).join("up")).unwrap();
        let evil = format!(
            "{}/up/{}{}/secret.txt",
            deep.display(),
            "../".repeat(41),
            tmp.path().display().to_string().trim_start_matches('/')
        );
        symlink(&evil, root.join("evil.txt")).unwrap();
        symlink("ok.yaml", root.join("alias.yaml")).unwrap();
        symlink("/etc/passwd", root.join("abs.txt")).unwrap();
        symlink("loop-b", root.join("loop-a")).unwrap();
        symlink("loop-a", root.join("loop-b")).unwrap();
        (tmp, root)
    }

    #[test]
    fn chained_links_cannot_be_read_and_are_named() {
        let (_tmp, root) = hostile_tree();
        // The attack is real: following the links on disk reads the file outside.
        assert_eq!(
            std::fs::read_to_string(root.join("evil.txt")).unwrap(),
            "outside"
        );
        let repo = RepoDir::open(&root).unwrap();
        let err = repo.read(Path::new("evil.txt"), 1 << 20).unwrap_err();
        let msg = err.to_string();
        assert!(matches!(err, Error::UnsafeSymlink { .. }), "{msg}");
        assert!(msg.contains("evil.txt: symlink "), "{msg}");
        assert!(msg.contains("leads outside the repository root"), "{msg}");
        assert!(!repo.is_file(Path::new("evil.txt")));
        // The kernel refuses it even where Plumb does not look first.
        assert!(repo.dir.open("evil.txt").is_err());
    }

    #[test]
    fn links_inside_are_followed_and_absolute_or_looping_ones_refused() {
        let (_tmp, root) = hostile_tree();
        let repo = RepoDir::open(&root).unwrap();
        assert_eq!(repo.read(Path::new("alias.yaml"), 100).unwrap(), b"inside");
        assert_eq!(
            repo.resolve(Path::new("d0/d1/../d1/d2")).unwrap(),
            PathBuf::from("d0/d1/d2")
        );
        let abs = repo
            .read(Path::new("abs.txt"), 100)
            .unwrap_err()
            .to_string();
        assert_eq!(
            abs,
            "abs.txt: symlink abs.txt -> /etc/passwd leads outside the repository root"
        );
        let looped = repo.read(Path::new("loop-a"), 100).unwrap_err().to_string();
        assert!(looped.contains("loop"), "{looped}");
        assert!(matches!(
            repo.read(Path::new("../repo/ok.yaml"), 100).unwrap_err(),
            Error::PathOutsideRepository { .. }
        ));
    }

    #[test]
    fn check_links_names_the_first_bad_link_and_passes_a_clean_tree() {
        let (_tmp, root) = hostile_tree();
        let repo = RepoDir::open(&root).unwrap();
        let err = repo.check_links(Path::new("")).unwrap_err().to_string();
        assert!(err.contains("symlink"), "{err}");
        let clean = tempfile::tempdir().unwrap();
        std::fs::create_dir(clean.path().join("a")).unwrap();
        symlink("../b.yaml", clean.path().join("a/link.yaml")).unwrap();
        symlink("a", clean.path().join("dirlink")).unwrap();
        RepoDir::open(clean.path())
            .unwrap()
            .check_links(Path::new(""))
            .unwrap();
    }

    #[test]
    fn a_file_over_the_size_cap_is_refused() {
        let (_tmp, root) = hostile_tree();
        let repo = RepoDir::open(&root).unwrap();
        let err = repo.read(Path::new("ok.yaml"), 3).unwrap_err();
        assert!(matches!(err, Error::TooLarge { what: "file", .. }), "{err}");
        assert_eq!(repo.read(Path::new("ok.yaml"), 6).unwrap(), b"inside");
    }
}
