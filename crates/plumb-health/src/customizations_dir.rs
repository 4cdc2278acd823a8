//! Reading a `resource_customizations`-style directory (`--customizations DIR`) without leaving it.
//!
//! The directory is opened once as a `cap_std` handle and every script is opened beneath it (on
//! Linux `openat2(RESOLVE_BENEATH)`), as plumb-source reads repository checkouts: a symlink or a
//! `..` that would lead outside the directory is refused, whatever chain of links leads there.
//! Links that stay inside are followed, so a ConfigMap volume (`health.lua -> ..data/health.lua`)
//! works; names starting with `.` (the volume's `..data` and timestamped directories) are not
//! indexed. A script larger than [`MAX_SCRIPT_BYTES`] is refused.

use std::io::Read;
use std::path::{Path, PathBuf};

use cap_std::ambient_authority;
use cap_std::fs::Dir;

/// The largest script read from a directory (Argo's own are a few KiB).
pub const MAX_SCRIPT_BYTES: u64 = 1024 * 1024;

/// Why a directory or a script in it could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DirError {
    /// The directory, an entry or a script could not be read.
    #[error("reading {path}: {source}")]
    Io {
        /// The path (directory root joined with the entry).
        path: PathBuf,
        /// The I/O error (a path leading outside the directory shows here).
        #[source]
        source: std::io::Error,
    },
    /// A script is larger than [`MAX_SCRIPT_BYTES`].
    #[error("{path}: script larger than {max} bytes")]
    TooLarge {
        /// The script.
        path: PathBuf,
        /// The limit.
        max: u64,
    },
    /// A script is not UTF-8.
    #[error("{path}: not UTF-8 text")]
    NotText {
        /// The script.
        path: PathBuf,
    },
}

/// One customizations directory, opened for reading beneath its root.
pub(crate) struct CustomizationsDir {
    dir: Dir,
    root: PathBuf,
}

impl CustomizationsDir {
    /// Opens the directory (the only use of ambient authority on it).
    pub(crate) fn open(root: &Path) -> Result<Self, DirError> {
        let dir =
            Dir::open_ambient_dir(root, ambient_authority()).map_err(|source| DirError::Io {
                path: root.to_path_buf(),
                source,
            })?;
        Ok(Self {
            dir,
            root: root.to_path_buf(),
        })
    }

    /// The path on disk of `rel` (for error messages and script origins).
    pub(crate) fn path(&self, rel: &Path) -> PathBuf {
        self.root.join(rel)
    }

    fn io(&self, rel: &Path) -> impl FnOnce(std::io::Error) -> DirError + '_ {
        let path = self.path(rel);
        move |source| DirError::Io { path, source }
    }

    /// The names of the directories in `rel` (links followed beneath the root), sorted, without
    /// the ones starting with `.`. An entry whose link leads outside is an error.
    pub(crate) fn subdirs(&self, rel: &Path) -> Result<Vec<String>, DirError> {
        let entries = if rel.as_os_str().is_empty() {
            self.dir.entries()
        } else {
            self.dir.read_dir(rel)
        }
        .map_err(self.io(rel))?;
        let mut out = Vec::new();
        for entry in entries {
            let entry = entry.map_err(self.io(rel))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            let child = rel.join(&name);
            let meta = self.dir.metadata(&child).map_err(self.io(&child))?;
            if meta.is_dir() {
                out.push(name);
            }
        }
        out.sort();
        Ok(out)
    }

    /// Whether `rel` is a directory beneath the root (a link leading outside is an error).
    pub(crate) fn is_dir(&self, rel: &Path) -> Result<bool, DirError> {
        match self.dir.metadata(rel) {
            Ok(m) => Ok(m.is_dir()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(self.io(rel)(e)),
        }
    }

    /// The script at `rel`, or `None` when there is no such file.
    pub(crate) fn read_script(&self, rel: &Path) -> Result<Option<String>, DirError> {
        let file = match self.dir.open(rel) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(self.io(rel)(e)),
        };
        let meta = file.metadata().map_err(self.io(rel))?;
        if !meta.is_file() {
            return Ok(None);
        }
        let mut buf = Vec::new();
        file.take(MAX_SCRIPT_BYTES + 1)
            .read_to_end(&mut buf)
            .map_err(self.io(rel))?;
        if buf.len() as u64 > MAX_SCRIPT_BYTES {
            return Err(DirError::TooLarge {
                path: self.path(rel),
                max: MAX_SCRIPT_BYTES,
            });
        }
        String::from_utf8(buf)
            .map(Some)
            .map_err(|_| DirError::NotText {
                path: self.path(rel),
            })
    }
}
