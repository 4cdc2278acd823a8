//! What a source's manifest cache key is made of: its parameters, the request's context, the
//! tool version, and what the render reads ([`crate::inputs`]) in place of the commit.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use plumb_model::application::ApplicationSource;
use sha2::{Digest, Sha256};

use super::request::RenderRequest;
use super::state::Renderer;
use crate::beneath::RepoDir;
use crate::credentials::normalize_url;
use crate::detect::SourceType;
use crate::error::Result;
use crate::limits::Limits;

/// Version of the cache key layout and renderer behaviour; bump to invalidate old disk entries.
/// 2: keys salted per installation, reads beneath the checkout root.
/// 3: keyed by the content the render read (Git object ids), not the commit.
const CACHE_FORMAT: u32 = 3;

/// How many (commit, source) → content key results are remembered; past it they are forgotten
/// all at once (each is cheap to compute again).
const MAX_CONTENT_MEMO: usize = 16_384;

impl Renderer {
    /// What the render of `source` at `commit` reads, as a key part: the Git object ids of its
    /// input paths, the root tree's id, or the commit ([`crate::inputs`]). Remembered per
    /// (repository, commit, source, annotation): a commit never changes.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn content_of(
        &self,
        req: &RenderRequest,
        source: &ApplicationSource,
        url: &str,
        commit: &str,
        repo: &RepoDir,
        app: &Path,
        kind: SourceType,
        limits: &Limits,
    ) -> Result<String> {
        let memo_key = {
            let mut h = Sha256::new();
            for part in [
                normalize_url(url).as_str(),
                commit,
                &app.display().to_string(),
                &kind.to_string(),
                &serde_json::to_string(source).unwrap_or_default(),
                req.generate_paths.as_deref().unwrap_or("\u{0}"),
            ] {
                h.update(part.as_bytes());
                h.update(b"\n");
            }
            h.finalize()
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect::<String>()
        };
        if let Ok(memo) = self.content_memo.lock()
            && let Some(c) = memo.get(&memo_key)
        {
            return Ok(c.clone());
        }
        let inputs = crate::inputs::inputs(
            kind,
            source,
            repo,
            app,
            req.generate_paths.as_deref(),
            limits,
        )?;
        let content = match inputs {
            crate::inputs::Inputs::Commit => format!("commit {commit}"),
            crate::inputs::Inputs::Tree => {
                let ids = self.git.object_ids(url, commit, &[PathBuf::new()])?;
                format!("tree {}", ids[0].as_deref().unwrap_or("-"))
            }
            crate::inputs::Inputs::Paths(paths) => {
                let paths: Vec<PathBuf> = paths.into_iter().collect();
                let ids = self.git.object_ids(url, commit, &paths)?;
                let mut out = String::from("paths");
                for (p, id) in paths.iter().zip(ids) {
                    out.push_str(&format!(
                        " {}={}",
                        p.display(),
                        id.as_deref().unwrap_or("-")
                    ));
                }
                out
            }
        };
        if let Ok(mut memo) = self.content_memo.lock() {
            if memo.len() >= MAX_CONTENT_MEMO {
                memo.clear();
            }
            memo.insert(memo_key, content.clone());
        }
        Ok(content)
    }
}

#[allow(clippy::too_many_arguments)]
pub(super) fn cache_key(
    salt: &str,
    req: &RenderRequest,
    source: &ApplicationSource,
    content: &str,
    app: &Path,
    kind: SourceType,
    tool_version: &str,
    ref_commits: &BTreeMap<String, String>,
) -> String {
    // The revision name does not matter once resolved: `main` and its SHA share an entry.
    let params = ApplicationSource {
        repo_url: String::new(),
        target_revision: None,
        ..source.clone()
    };
    let key = serde_json::json!({
        "format": CACHE_FORMAT,
        // Salted so a file name in the manifest cache cannot be computed from the source alone.
        "salt": salt,
        "repo": normalize_url(&source.repo_url),
        // What the render read (object ids of its paths, the tree, or the commit): a commit
        // that changes none of it shares the entry of the commit before.
        "content": content,
        "path": app.display().to_string(),
        "params": params,
        "app": req.app_name,
        "namespace": req.namespace,
        "project": req.project,
        "kubeVersion": req.kube_version,
        "apiVersions": req.api_versions,
        "refs": ref_commits,
        "type": kind,
        "tool": tool_version,
        "sourceRepos": req.source_repos,
    });
    let digest = Sha256::digest(key.to_string().as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}
