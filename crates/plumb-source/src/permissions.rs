//! Permissions of the trees Plumb stages and keeps: read-only once verified, writable again only
//! to be removed.

use std::path::Path;

use crate::error::{Error, Result};

/// Files 0444, directories 0555, deepest first.
pub(crate) fn read_only(dir: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::symlink_metadata(dir).map_err(Error::io("reading", dir))?;
    if meta.is_dir() {
        for e in std::fs::read_dir(dir).map_err(Error::io("reading", dir))? {
            read_only(&e.map_err(Error::io("reading", dir))?.path())?;
        }
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o555))
            .map_err(Error::io("setting permissions of", dir))
    } else {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o444))
            .map_err(Error::io("setting permissions of", dir))
    }
}

/// Gives write permission back to a staging tree so it can be deleted (it was made read-only).
pub(crate) fn make_removable(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let Ok(meta) = std::fs::symlink_metadata(dir) else {
        return;
    };
    if meta.is_dir() {
        let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755));
        if let Ok(entries) = std::fs::read_dir(dir) {
            for e in entries.flatten() {
                make_removable(&e.path());
            }
        }
    }
}
