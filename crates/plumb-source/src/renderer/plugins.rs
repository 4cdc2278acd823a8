//! Config management plugins for a source: which one renders it (named or discovered), how it
//! runs, and the parameters it announces.

use std::path::Path;

use plumb_model::application::ApplicationSource;

use super::request::{Refresh, RenderRequest};
use super::sources::app_path;
use super::state::Renderer;
use crate::beneath::RepoDir;
use crate::detect::{SourceType, detect_in, is_explicit};
use crate::error::{Error, Result};
use crate::limits::Limits;
use crate::plugin::{self, Plugin};
use crate::redact::{Redactor, strip_url_credentials};
use crate::spec::s as text;

impl Renderer {
    /// The plugin that renders `source`: the one `plugin:` asks for, or, for a source whose type
    /// no option decides, the first whose discovery rules match (Argo's `AppType` tries plugins
    /// before the kustomization and Chart.yaml files). Sets `kind` to `Plugin` when one is used.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn choose_plugin(
        &self,
        req: &RenderRequest,
        source: &ApplicationSource,
        commit: &str,
        root: &Path,
        repo: &RepoDir,
        app: &Path,
        limits: &Limits,
        redactor: &Redactor,
        kind: &mut SourceType,
    ) -> Result<Option<Plugin>> {
        let explicit = *kind == SourceType::Plugin;
        if !explicit && is_explicit(source) {
            return Ok(None);
        }
        let Some(dir) = self.plugins_dir() else {
            if explicit {
                return Err(Error::Plugin {
                    plugin: source
                        .plugin
                        .as_ref()
                        .and_then(|p| p.name.clone())
                        .unwrap_or_else(|| "(discovery)".into()),
                    detail: "no plugin directory is configured (--plugin-dir, or plumb.plugins.dir in the settings ConfigMap)".into(),
                });
            }
            return Ok(None);
        };
        let set = plugin::load(&dir)?;
        if !explicit && set.plugins.is_empty() {
            return Ok(None);
        }
        let run = self.plugin_run(req, source, commit, root, repo, app, limits, redactor);
        let chosen = match &source.plugin {
            Some(asked) => Some(plugin::select(&set, &run, asked, &dir)?.clone()),
            None => plugin::discover(&set, &run)?.cloned(),
        };
        if chosen.is_some() {
            *kind = SourceType::Plugin;
        }
        Ok(chosen)
    }

    /// How a plugin runs for `source`: Argo's environment, the tree read-only, credentials hidden.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn plugin_run<'a>(
        &'a self,
        req: &RenderRequest,
        source: &ApplicationSource,
        commit: &str,
        root: &Path,
        repo: &'a RepoDir,
        app: &'a Path,
        limits: &'a Limits,
        redactor: &'a Redactor,
    ) -> plugin::Run<'a> {
        let url = strip_url_credentials(&source.repo_url);
        let build = plugin::env::BuildEnv {
            app_name: &req.app_name,
            namespace: &req.namespace,
            project: &req.project,
            revision: commit,
            repo_url: &url,
            path: text(&source.path),
            target_revision: text(&source.target_revision),
            kube_version: &req.kube_version,
            api_versions: &req.api_versions,
        };
        // The plugin sees its own tree only: the cache (other tenants' checkouts) and the
        // credentials are hidden.
        let view = crate::worker::sandbox::View::hiding(&self.config.cache_dir).keeping(root);
        // A commit's discovery answer is kept; a working tree (no commit) is asked every time.
        let memo = (!commit.is_empty()).then(|| plugin::MemoScope {
            memo: &self.discovery,
            scope: format!("{url}\n{commit}\n{}", text(&source.path)),
            refresh: req.refresh == Refresh::Hard,
        });
        plugin::Run {
            repo,
            app,
            env: plugin::env::environ(&build, source.plugin.as_ref()),
            worker: &self.config.tools.worker,
            limits,
            redactor,
            view,
            memo,
        }
    }

    /// The parameters the plugin of the first source announces (Argo's
    /// `GetParametersAnnouncement`: a user interface shows them): the dynamic command's, then the
    /// static ones. Empty when the source does not use a plugin.
    pub fn plugin_parameters(&self, req: &RenderRequest) -> Result<Vec<serde_json::Value>> {
        let source = req
            .sources
            .first()
            .ok_or_else(|| Error::UnsupportedSource {
                detail: "the application has no source".into(),
            })?;
        let commit = self
            .git
            .resolve(&source.repo_url, source.target_revision_or_head())?;
        let root = self
            .git
            .checkout(&source.repo_url, source.target_revision_or_head(), &commit)?
            .dir;
        let repo = RepoDir::open(&root)?;
        let app = app_path(&repo, text(&source.path))?;
        let mut kind = detect_in(source, &repo, &app)?;
        let limits = self.limits();
        let redactor = self
            .redactor
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let Some(p) = self.choose_plugin(
            req, source, &commit, &root, &repo, &app, &limits, &redactor, &mut kind,
        )?
        else {
            return Ok(Vec::new());
        };
        let run = self.plugin_run(req, source, &commit, &root, &repo, &app, &limits, &redactor);
        plugin::announcements(&p, &run)
    }
}
