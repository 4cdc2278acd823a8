//! Git LFS (`enableLfs: "true"` on a repository Secret). Argo CD runs `git lfs fetch` and
//! `git lfs checkout` so that LFS-tracked files hold their content; Plumb has no LFS client, so
//! a commit of such a repository that has LFS pointer files is refused with a clear error rather
//! than rendered from the pointers. Without `enableLfs` pointer files stay as they are, as in Argo
//! CD (`GIT_LFS_SKIP_SMUDGE=1`).

use std::io::Read;
use std::path::{Path, PathBuf};

/// How every LFS pointer file begins (the Git LFS specification).
const POINTER: &[u8] = b"version https://git-lfs.github.com/spec/v1\n";
/// Pointer files are small: a larger file is not one.
const MAX_POINTER: u64 = 1024;

/// The first LFS pointer file under `dir` (relative), if any.
pub(crate) fn first_pointer(dir: &Path) -> Option<PathBuf> {
    let mut stack = vec![dir.to_path_buf()];
    let mut found = Vec::new();
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let path = entry.path();
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file() && is_pointer(&path) {
                found.push(path.strip_prefix(dir).unwrap_or(&path).to_path_buf());
            }
        }
    }
    found.sort();
    found.into_iter().next()
}

fn is_pointer(path: &Path) -> bool {
    let Ok(meta) = std::fs::metadata(path) else {
        return false;
    };
    if meta.len() > MAX_POINTER || meta.len() < POINTER.len() as u64 {
        return false;
    }
    let mut head = vec![0; POINTER.len()];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|()| head == POINTER)
}

/// The message for a commit with LFS objects Plumb cannot fetch.
pub(crate) fn refusal(pointer: &Path) -> String {
    format!(
        "enableLfs is set and {} is a Git LFS pointer: Plumb does not fetch Git LFS objects \
         (no git-lfs client), so it refuses to render the pointers in their place",
        pointer.display()
    )
}
