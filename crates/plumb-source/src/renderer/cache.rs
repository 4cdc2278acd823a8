//! One source through the manifest cache: its key, a lookup, and one render per key at a time
//! (the others wait and take its result).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use plumb_model::application::ApplicationSource;

use super::key::cache_key;
use super::request::RenderRequest;
use super::run::Job;
use super::state::Renderer;
use crate::beneath::RepoDir;
use crate::detect::{SourceType, detect_in};
use crate::error::Result;
use crate::manifest::Manifest;

impl Renderer {
    /// Renders `source` from the tree at `root` (its directory `app`), through the manifest
    /// cache when `cached` says so (keyed by what the render reads when the tree is a commit of
    /// `git_url`); one render per key at a time, the others waiting for its result.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn render_in(
        &self,
        req: &RenderRequest,
        source: &ApplicationSource,
        commit: &str,
        root: &Path,
        repo: &RepoDir,
        app: &Path,
        refs: &BTreeMap<String, PathBuf>,
        ref_commits: &BTreeMap<String, String>,
        cached: Option<Cached<'_>>,
    ) -> Result<One> {
        let (root, repo, app) = (root.to_path_buf(), repo, app.to_path_buf());
        let mut kind = detect_in(source, repo, &app)?;
        let limits = self.limits();
        let redactor = self
            .redactor
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let plugin = self.choose_plugin(
            req, source, commit, &root, repo, &app, &limits, &redactor, &mut kind,
        )?;
        let job = Job {
            req,
            source,
            commit,
            root: &root,
            repo,
            app: &app,
            refs,
            limits: &limits,
            redactor: &redactor,
            kind,
            plugin: plugin.as_ref(),
        };
        let key = self.key_of(&job, cached.as_ref(), ref_commits)?;
        if cached.is_none() {
            let manifests = self.render_now(&job)?;
            return Ok(One {
                manifests: Arc::new(manifests),
                kind,
                hit: Served::Rendered,
                key,
            });
        }
        self.through_cache(&job, key)
    }

    /// The manifest cache key of `job`: the tool (or plugin) version, and what the render reads
    /// when the tree is a commit of a Git repository (else the commit).
    fn key_of(
        &self,
        job: &Job<'_>,
        cached: Option<&Cached<'_>>,
        ref_commits: &BTreeMap<String, String>,
    ) -> Result<String> {
        let tool_version = match job.plugin {
            Some(p) => format!("{} {}", p.name, p.digest),
            None => self.tool_version(job.kind, job.limits)?,
        };
        // The build options change what kustomize prints: part of the key.
        let tool_version = match job.kind {
            SourceType::Kustomize => {
                format!("{tool_version} {}", self.kustomize_build_options())
            }
            _ => tool_version,
        };
        let content = match cached {
            Some(Cached { git_url: Some(url) }) => self.content_of(
                job.req, job.source, url, job.commit, job.repo, job.app, job.kind, job.limits,
            )?,
            _ => format!("commit {}", job.commit),
        };
        Ok(cache_key(
            self.git.salt(),
            job.req,
            job.source,
            &content,
            job.app,
            job.kind,
            &tool_version,
            ref_commits,
        ))
    }

    /// Serves `job` from the manifest cache, else renders it once per key (the others waiting
    /// for its result) and caches what it rendered.
    fn through_cache(&self, job: &Job<'_>, key: String) -> Result<One> {
        let req = job.req;
        if req.refresh.uses_manifest_cache()
            && let Some(one) = self.lookup(&key, job.commit, job.kind)
        {
            return Ok(one);
        }
        self.render_gates.with(&key, || {
            // Someone else may have rendered it while this one waited.
            if req.refresh.uses_manifest_cache()
                && let Some(one) = self.lookup(&key, job.commit, job.kind)
            {
                return Ok(one);
            }
            let manifests = self.render_now(job)?;
            self.cache.put(&key, &manifests, job.commit);
            Ok(One {
                manifests: Arc::new(manifests),
                kind: job.kind,
                hit: Served::Rendered,
                key: key.clone(),
            })
        })
    }

    /// The cached manifests of `key`, counted as served at this commit or skipped (rendered at
    /// another commit with the same inputs).
    fn lookup(&self, key: &str, commit: &str, kind: SourceType) -> Option<One> {
        let hit = self.cache.get(key)?;
        let served = if hit.rendered_at == commit {
            self.cached.fetch_add(1, Ordering::Relaxed);
            Served::Cached
        } else {
            self.skipped.fetch_add(1, Ordering::Relaxed);
            Served::Skipped
        };
        Some(One {
            manifests: hit.manifests,
            kind,
            hit: served,
            key: key.to_owned(),
        })
    }
}

/// How a source's manifests were served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Served {
    /// Rendered now.
    Rendered,
    /// From the cache, rendered at this commit.
    Cached,
    /// From the cache, rendered at another commit whose inputs were the same.
    Skipped,
}

/// One source rendered or served from the cache, with its cache key.
pub(super) struct One {
    pub(super) manifests: Arc<Vec<Manifest>>,
    pub(super) kind: SourceType,
    pub(super) hit: Served,
    pub(super) key: String,
}

/// A render through the manifest cache; `git_url` when the tree is a commit of that repository
/// (the key then holds what the render read instead of the commit).
pub(super) struct Cached<'a> {
    pub(super) git_url: Option<&'a str>,
}
