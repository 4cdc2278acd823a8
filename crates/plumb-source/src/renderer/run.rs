//! The render itself, once the cache has missed: the plugin chosen, or the per-tool renderer of
//! [`crate::render`] on the tree; and the tool versions that are part of cache keys.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use plumb_model::application::ApplicationSource;

use super::request::{Refresh, RenderRequest};
use super::state::Renderer;
use crate::beneath::RepoDir;
use crate::detect::SourceType;
use crate::error::Result;
use crate::limits::Limits;
use crate::manifest::Manifest;
use crate::plugin::{self, Plugin};
use crate::redact::Redactor;
use crate::render::{self, Context};

/// One render to run: the request, the source and its tree, and how it renders (its type, and
/// the plugin chosen for it).
pub(super) struct Job<'a> {
    pub(super) req: &'a RenderRequest,
    pub(super) source: &'a ApplicationSource,
    pub(super) commit: &'a str,
    pub(super) root: &'a Path,
    pub(super) repo: &'a RepoDir,
    pub(super) app: &'a Path,
    pub(super) refs: &'a BTreeMap<String, PathBuf>,
    pub(super) limits: &'a Limits,
    pub(super) redactor: &'a Redactor,
    pub(super) kind: SourceType,
    pub(super) plugin: Option<&'a Plugin>,
}

impl Renderer {
    /// Renders `job` now (counted as a render): its plugin, or the renderer of its type.
    pub(super) fn render_now(&self, job: &Job<'_>) -> Result<Vec<Manifest>> {
        self.renders.fetch_add(1, Ordering::Relaxed);
        match job.plugin {
            Some(p) => {
                let run = self.plugin_run(
                    job.req,
                    job.source,
                    job.commit,
                    job.root,
                    job.repo,
                    job.app,
                    job.limits,
                    job.redactor,
                );
                plugin::generate(p, &run)
            }
            None => self.render_tree(
                job.req,
                job.source,
                job.root,
                job.repo,
                job.app,
                job.refs,
                job.limits,
                job.redactor,
                job.kind,
            ),
        }
    }

    /// Runs the renderer of `kind` (not a plugin) on the tree.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn render_tree(
        &self,
        req: &RenderRequest,
        source: &ApplicationSource,
        root: &Path,
        repo: &RepoDir,
        app: &Path,
        refs: &BTreeMap<String, PathBuf>,
        limits: &Limits,
        redactor: &Redactor,
        kind: SourceType,
    ) -> Result<Vec<Manifest>> {
        let build_options = self.kustomize_build_options();
        let ctx = Context {
            root,
            repo,
            app,
            app_name: &req.app_name,
            namespace: &req.namespace,
            kube_version: &req.kube_version,
            api_versions: &req.api_versions,
            refs,
            source_repos: req.source_repos.as_deref(),
            tools: &self.config.tools,
            limits,
            redactor,
            helm_repos: &self.helm,
            oci: &self.oci,
            hard_refresh: req.refresh == Refresh::Hard,
            git: &self.git,
            cache_dir: &self.config.cache_dir,
            kustomize_build_options: &build_options,
        };
        render::render(&ctx, source, kind)
    }

    /// The version of `kind`'s tool as the configured binary prints it (what render cache keys
    /// hold; asked once, then remembered). [`crate::Error::ToolMissing`] when it is not there.
    pub fn installed_tool_version(&self, kind: SourceType) -> Result<String> {
        self.tool_version(kind, &self.limits())
    }

    pub(super) fn tool_version(&self, kind: SourceType, limits: &Limits) -> Result<String> {
        if let Ok(map) = self.tool_versions.lock()
            && let Some(v) = map.get(&kind)
        {
            return Ok(v.clone());
        }
        let v = render::tool_version(&self.config.tools, limits, kind)?;
        if let Ok(mut map) = self.tool_versions.lock() {
            map.insert(kind, v.clone());
        }
        Ok(v)
    }
}
