//! A directory on this machine rendered in place of an Application's repository
//! ([`Renderer::with_local`]): checked like a checkout, never cached.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::request::{LocalSource, RenderRequest, Rendered, SourceOutcome};
use super::state::Renderer;
use crate::beneath::RepoDir;
use crate::error::{Error, Result};
use crate::limits::Limits;

impl Renderer {
    /// Renders the request's one source from [`Renderer::with_local`]'s directory instead of its
    /// repository: the directory is untrusted input like a checkout (links checked physically,
    /// sizes bounded) and is never cached.
    pub(super) fn render_local(
        &self,
        req: &RenderRequest,
        local: &LocalSource,
    ) -> Result<Rendered> {
        let [source] = req.sources.as_slice() else {
            return Err(Error::UnsupportedSource {
                detail:
                    "--local renders one source: it is not supported for multi-source applications"
                        .into(),
            });
        };
        let canonical = |p: &Path, field: &str| {
            std::fs::canonicalize(p).map_err(|_| Error::PathNotFound {
                field: field.to_owned(),
                path: p.display().to_string(),
            })
        };
        let dir = canonical(&local.dir, "--local")?;
        let root = match &local.repo_root {
            Some(r) => canonical(r, "--local-repo-root")?,
            None => dir.clone(),
        };
        let app = dir
            .strip_prefix(&root)
            .map_err(|_| Error::PathOutsideRepository {
                field: "--local (outside --local-repo-root)".into(),
                path: local.dir.display().to_string(),
            })?
            .to_path_buf();
        let repo = RepoDir::open(&root)?;
        check_local_tree(&repo, &self.limits())?;
        let mut source = source.clone();
        // The directory stands in for the repository at `path`; a chart name does not apply.
        source.chart = None;
        source.path = Some(app.display().to_string());
        let one = self.render_in(
            req,
            &source,
            "",
            &root,
            &repo,
            &app,
            &BTreeMap::new(),
            &BTreeMap::new(),
            None,
        )?;
        Ok(Rendered {
            integrity: Vec::new(),
            manifests: one.manifests.iter().cloned().collect(),
            sources: vec![SourceOutcome {
                url: local.dir.display().to_string(),
                revision: String::new(),
                commit: String::new(),
                source_type: Some(one.kind),
                cache_hit: false,
                unchanged_inputs: false,
            }],
        })
    }
}

/// A local directory is checked as a checkout is: every link resolved physically and kept
/// inside the root, every file, the total size and the entry count bounded.
fn check_local_tree(repo: &RepoDir, limits: &Limits) -> Result<()> {
    repo.check_links(Path::new(""))?;
    let (mut files, mut bytes) = (0u64, 0u64);
    let too_large = |what: &'static str, limit: String| Error::TooLarge {
        what,
        limit,
        context: format!("local directory {}", repo.root().display()),
    };
    let mut pending = vec![PathBuf::new()];
    while let Some(dir) = pending.pop() {
        for (name, kind) in repo.entries(&dir)? {
            files += 1;
            if files > limits.max_repo_files {
                return Err(too_large(
                    "repository tree",
                    format!("{} entries", limits.max_repo_files),
                ));
            }
            let rel = dir.join(&name);
            match kind {
                crate::beneath::Kind::Dir => pending.push(rel),
                crate::beneath::Kind::File => {
                    let size = std::fs::symlink_metadata(repo.root().join(&rel))
                        .map(|m| m.len())
                        .map_err(Error::io("reading", repo.root().join(&rel)))?;
                    if size > limits.max_file_bytes {
                        return Err(Error::TooLarge {
                            what: "file",
                            limit: format!("{} bytes", limits.max_file_bytes),
                            context: rel.display().to_string(),
                        });
                    }
                    bytes += size;
                    if bytes > limits.max_repo_bytes {
                        return Err(too_large(
                            "repository tree",
                            format!("{} bytes", limits.max_repo_bytes),
                        ));
                    }
                }
                _ => {}
            }
        }
    }
    Ok(())
}
