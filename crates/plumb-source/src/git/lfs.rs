//! Git LFS (`enableLfs: "true"` on a repository Secret). Argo CD runs `git lfs fetch` and `git
//! lfs checkout`, so LFS-tracked files hold their content; Plumb does the same through the Git
//! LFS batch API itself, on the checked-out tree: every pointer file is read, the objects are
//! asked for in one `POST {endpoint}/objects/batch` (operation `download`, transfer `basic`),
//! each is downloaded, its size and SHA-256 checked against the pointer, and written over the
//! pointer. Without `enableLfs` pointer files stay as they are, as in Argo CD
//! (`GIT_LFS_SKIP_SMUDGE=1`).
//!
//! The endpoint is git-lfs's: `lfs.url` of the repository's `.lfsconfig`, else the repository
//! URL with `.git/info/lfs`. The repository's credentials go only to its own origin (an
//! `.lfsconfig` naming another server gets none: whoever can push could otherwise send them
//! anywhere); headers the batch answer gives for a download are sent with it. Bounded: at most
//! [`MAX_OBJECTS`] pointers, each object at most
//! [`crate::limits::Limits::max_file_bytes`], all of them at most
//! [`crate::limits::Limits::max_download_bytes`], every request within
//! [`crate::limits::Limits::fetch_timeout`].

use std::io::Read;
use std::path::Path;

use reqwest::Url;

pub(crate) use super::lfs_batch::Fetch;
use super::lfs_batch::Pointer;

/// How every LFS pointer file begins (the Git LFS specification).
const POINTER: &[u8] = b"version https://git-lfs.github.com/spec/v1\n";
/// Pointer files are small: a larger file is not one.
const MAX_POINTER: u64 = 1024;
/// Pointer files in one checkout, at most.
pub(crate) const MAX_OBJECTS: usize = 10_000;

/// The pointer files under `dir`, sorted; refused past [`MAX_OBJECTS`] or when one names no
/// valid object.
pub(crate) fn pointers(dir: &Path) -> Result<Vec<Pointer>, String> {
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
            } else if kind.is_file()
                && let Some(text) = pointer_text(&path)
            {
                let rel = path.strip_prefix(dir).unwrap_or(&path).to_path_buf();
                let (oid, size) = parse_pointer(&text).ok_or_else(|| {
                    format!(
                        "{} is a Git LFS pointer without a valid oid and size",
                        rel.display()
                    )
                })?;
                found.push(Pointer {
                    path: rel,
                    oid,
                    size,
                });
                if found.len() > MAX_OBJECTS {
                    return Err(format!("more than {MAX_OBJECTS} Git LFS pointer files"));
                }
            }
        }
    }
    found.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(found)
}

/// The text of `path` when it is a pointer file.
fn pointer_text(path: &Path) -> Option<String> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.is_file() || meta.len() > MAX_POINTER || meta.len() < POINTER.len() as u64 {
        return None;
    }
    let mut text = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(MAX_POINTER)
        .read_to_end(&mut text)
        .ok()?;
    text.starts_with(POINTER)
        .then(|| String::from_utf8(text).ok())
        .flatten()
}

/// `oid sha256:<64 hex>` and `size <n>` of a pointer.
pub(crate) fn parse_pointer(text: &str) -> Option<(String, u64)> {
    let mut oid = None;
    let mut size = None;
    for line in text.lines() {
        if let Some(v) = line.strip_prefix("oid sha256:") {
            oid = Some(v.trim().to_owned());
        } else if let Some(v) = line.strip_prefix("size ") {
            size = v.trim().parse::<u64>().ok();
        }
    }
    let oid = oid.filter(|o| o.len() == 64 && o.bytes().all(|b| b.is_ascii_hexdigit()))?;
    Some((oid.to_ascii_lowercase(), size?))
}

/// Replaces every pointer file under `dir` by its object. `Err` says what failed, naming the
/// file; nothing is partly written (a failed object leaves its pointer, and the checkout fails).
pub(crate) fn smudge(dir: &Path, fetch: &Fetch<'_>) -> Result<(), String> {
    let found = pointers(dir)?;
    if found.is_empty() {
        return Ok(());
    }
    let mut total = 0u64;
    for p in &found {
        if p.size > fetch.limits.max_file_bytes {
            return Err(format!(
                "the Git LFS object of {} is {} bytes, over the {}-byte file limit",
                p.path.display(),
                p.size,
                fetch.limits.max_file_bytes
            ));
        }
        total = total.saturating_add(p.size);
    }
    if total > fetch.limits.max_download_bytes {
        return Err(format!(
            "the Git LFS objects of this commit are {total} bytes, over the {}-byte download limit",
            fetch.limits.max_download_bytes
        ));
    }
    let endpoint = endpoint(dir, fetch.repo_url)?;
    let repo = Url::parse(fetch.repo_url).ok();
    let own = |u: &Url| {
        repo.as_ref()
            .is_some_and(|r| crate::helm_repo::http::same_origin(u, r))
    };
    let actions = super::lfs_batch::batch(&endpoint, &found, fetch, own(&endpoint))?;
    for p in &found {
        let action = actions
            .get(&p.oid)
            .ok_or_else(|| format!("the LFS server gave no download for {}", p.path.display()))?;
        let body = super::lfs_batch::download(action, p, fetch, own(&action.href))?;
        write_over(&dir.join(&p.path), &body)
            .map_err(|e| format!("writing the Git LFS object of {}: {e}", p.path.display()))?;
    }
    Ok(())
}

/// git-lfs's endpoint: `lfs.url` of `.lfsconfig`, else `<repo>.git/info/lfs`.
fn endpoint(dir: &Path, repo_url: &str) -> Result<Url, String> {
    let configured = lfsconfig_url(&dir.join(".lfsconfig"));
    let raw = match configured {
        Some(u) => u,
        None => {
            let base = repo_url.trim_end_matches('/');
            if base.ends_with(".git") {
                format!("{base}/info/lfs")
            } else {
                format!("{base}.git/info/lfs")
            }
        }
    };
    let url = Url::parse(&raw).map_err(|_| format!("the Git LFS endpoint {raw:?} is not a URL"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!(
            "the Git LFS endpoint of {repo_url} is not http(s): Plumb fetches LFS objects over \
             HTTP(S) only (set lfs.url in .lfsconfig)"
        ));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err("the Git LFS endpoint in .lfsconfig holds credentials".into());
    }
    Ok(url)
}

/// `url` of the `[lfs]` section of a `.lfsconfig` (a regular file of at most 64 KiB).
fn lfsconfig_url(path: &Path) -> Option<String> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.is_file() || meta.len() > 64 * 1024 {
        return None;
    }
    let text = std::fs::read_to_string(path).ok()?;
    let mut in_lfs = false;
    let mut url = None;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_lfs = line
                .trim_matches(['[', ']'])
                .trim()
                .eq_ignore_ascii_case("lfs");
        } else if in_lfs
            && let Some((k, v)) = line.split_once('=')
            && k.trim().eq_ignore_ascii_case("url")
        {
            url = Some(v.trim().trim_matches('"').to_owned());
        }
    }
    url
}

/// Writes `body` over the read-only pointer file `path` (a regular file, never a link).
fn write_over(path: &Path, body: &[u8]) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::symlink_metadata(path)?;
    if !meta.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let mode = meta.permissions().mode();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o644))?;
    let written = std::fs::write(path, body);
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode & 0o555))?;
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointers_are_read_by_the_specification() {
        let text = "version https://git-lfs.github.com/spec/v1\noid sha256:4D7A214614AB2935C943F9E0FF69D22EADBB8F32B1258DAAA5E2CA24D17E2393\nsize 12345\n";
        assert_eq!(
            parse_pointer(text),
            Some((
                "4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393".into(),
                12345
            ))
        );
        for bad in [
            "version https://git-lfs.github.com/spec/v1\noid sha256:xyz\nsize 1\n",
            "version https://git-lfs.github.com/spec/v1\noid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize -1\n",
        ] {
            assert_eq!(parse_pointer(bad), None, "{bad}");
        }
    }

    #[test]
    fn endpoints_are_git_lfs_ones() {
        let dir = tempfile::tempdir().unwrap();
        let e = endpoint(dir.path(), "https://git.example.com/team/app").unwrap();
        assert_eq!(e.as_str(), "https://git.example.com/team/app.git/info/lfs");
        let e = endpoint(dir.path(), "https://git.example.com/team/app.git/").unwrap();
        assert_eq!(e.as_str(), "https://git.example.com/team/app.git/info/lfs");
        assert!(endpoint(dir.path(), "ssh://git@host/team/app").is_err());
        std::fs::write(
            dir.path().join(".lfsconfig"),
            "[core]\n\turl = nope\n[lfs]\n\turl = \"http://127.0.0.1:9/team/app\"\n",
        )
        .unwrap();
        let e = endpoint(dir.path(), "ssh://git@host/team/app").unwrap();
        assert_eq!(e.as_str(), "http://127.0.0.1:9/team/app");
        std::fs::write(
            dir.path().join(".lfsconfig"),
            "[lfs]\nurl = https://u:hunter2@lfs.example.com/\n",
        )
        .unwrap();
        let err = endpoint(dir.path(), "https://x/y/z").unwrap_err();
        assert!(!err.contains("hunter2"), "{err}");
    }
}
