//! The per-installation salt that makes cache directory names unguessable, and the one-time
//! removal of entries an older Plumb wrote under guessable names.

use std::io::Write;
use std::path::Path;

use crate::error::{Error, Result};
use crate::permissions::make_removable;

/// File under a cache root holding the salt.
pub(crate) const SALT_FILE: &str = "salt";

/// The salt of the cache at `root` (hex), and whether it was made just now (the cache was empty
/// or written by an older Plumb).
pub(crate) fn load_or_create(root: &Path) -> Result<(String, bool)> {
    let path = root.join(SALT_FILE);
    if let Some(salt) = read(&path)? {
        return Ok((salt, false));
    }
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| Error::Io {
        action: "drawing random bytes for",
        path: path.clone(),
        source: std::io::Error::other(e.to_string()),
    })?;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    // Written whole to a temporary file, then linked into place: a concurrent starter either
    // wins or reads the winner's complete salt, never half of one.
    let mut tmp = tempfile::NamedTempFile::new_in(root)
        .map_err(Error::io("creating a temporary file in", root))?;
    tmp.write_all(format!("{hex}\n").as_bytes())
        .map_err(Error::io("writing", tmp.path().to_path_buf()))?;
    match std::fs::hard_link(tmp.path(), &path) {
        Ok(()) => Ok((hex, true)),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            let salt = read(&path)?.ok_or_else(|| Error::Io {
                action: "reading",
                path: path.clone(),
                source: std::io::Error::other("salt file is empty"),
            })?;
            Ok((salt, false))
        }
        Err(e) => Err(Error::io("writing", &path)(e)),
    }
}

fn read(path: &Path) -> Result<Option<String>> {
    match std::fs::read_to_string(path) {
        Ok(text) if !text.trim().is_empty() => Ok(Some(text.trim().to_owned())),
        Ok(_) => Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io("reading", path)(e)),
    }
}

/// Removes the named subdirectories of `root` (entries of an older layout). Trees are read-only,
/// so write permission is given back first. Failures are logged: a leftover costs disk, not
/// correctness, since nothing reaches it under the new names.
pub(crate) fn remove_legacy(root: &Path, subdirs: &[&str]) {
    for sub in subdirs {
        let dir = root.join(sub);
        if !dir.exists() {
            continue;
        }
        make_removable(&dir);
        match std::fs::remove_dir_all(&dir) {
            Ok(()) => {
                tracing::info!(dir = %dir.display(), "removed a cache directory of an older layout")
            }
            Err(e) => {
                tracing::warn!(dir = %dir.display(), error = %e, "could not remove a cache directory of an older layout")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_salt_is_made_once_and_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let (a, fresh) = load_or_create(tmp.path()).unwrap();
        assert!(fresh);
        assert_eq!(a.len(), 64);
        let (b, fresh) = load_or_create(tmp.path()).unwrap();
        assert!(!fresh);
        assert_eq!(a, b);
        let other = tempfile::tempdir().unwrap();
        assert_ne!(load_or_create(other.path()).unwrap().0, a);
    }
}
