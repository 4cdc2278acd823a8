//! One render of an Application: each source resolved (a commit, a chart version, an OCI
//! digest), the trees of its `ref` sources, and every source rendered in order.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use plumb_model::application::ApplicationSource;

use super::cache::{Cached, One, Served};
use super::request::{Refresh, RenderRequest, Rendered, SourceOutcome};
use super::state::Renderer;
use crate::beneath::RepoDir;
use crate::error::{Error, Result};
use crate::git::normalize_within;
use crate::helm_repo::ChartCheckout;
use crate::redact::strip_url_credentials;
use crate::spec::s as text;

impl Renderer {
    /// Renders every source of the request. Any failure fails the whole render: a partial or
    /// empty desired set is never returned in place of an error. Repository credentials are
    /// those the request's project may use ([`crate::scope`]).
    pub fn render(&self, req: &RenderRequest) -> Result<Rendered> {
        if req.project.is_empty() {
            return self.render_in_scope(req);
        }
        crate::scope::in_project(&req.project, || self.render_in_scope(req))
    }

    fn render_in_scope(&self, req: &RenderRequest) -> Result<Rendered> {
        if req.sources.is_empty() {
            return Err(Error::UnsupportedSource {
                detail: "the application has no source".into(),
            });
        }
        if let Some(local) = &self.local {
            return self.render_local(req, local);
        }
        let mut commits = Vec::with_capacity(req.sources.len());
        let mut charts: Vec<Option<Fetched>> = Vec::with_capacity(req.sources.len());
        for s in &req.sources {
            let (commit, chart) = self.resolve(req, s)?;
            commits.push(commit);
            charts.push(chart);
        }
        let integrity = self.verify_signatures(req, &commits, &charts)?;
        let (refs, ref_commits) = self.ref_trees(req, &commits, &charts)?;
        let mut manifests = Vec::new();
        let mut outcomes = Vec::new();
        let mut keys = Vec::new();
        for ((s, commit), chart) in req.sources.iter().zip(&commits).zip(&charts) {
            let mut outcome = SourceOutcome {
                url: strip_url_credentials(&s.repo_url),
                revision: s.target_revision_or_head().to_owned(),
                commit: commit.clone(),
                source_type: None,
                cache_hit: false,
                unchanged_inputs: false,
            };
            if !text(&s.reference).is_empty() && text(&s.path).is_empty() && !s.is_helm_chart() {
                outcomes.push(outcome);
                continue;
            }
            let one = self.render_one(req, s, commit, chart.as_ref(), &refs, &ref_commits)?;
            outcome.source_type = Some(one.kind);
            outcome.cache_hit = one.hit != Served::Rendered;
            outcome.unchanged_inputs = one.hit == Served::Skipped;
            manifests.extend(one.manifests.iter().cloned());
            keys.push(one.key);
            outcomes.push(outcome);
        }
        if let Some(owner) = &req.owner {
            self.pin(owner, keys);
        }
        Ok(Rendered {
            integrity,
            manifests,
            sources: outcomes,
        })
    }

    /// What source `s` resolves to: a chart version (the chart fetched), an OCI artifact's
    /// digest (the artifact fetched), or a commit.
    fn resolve(
        &self,
        req: &RenderRequest,
        s: &ApplicationSource,
    ) -> Result<(String, Option<Fetched>)> {
        let hard = req.refresh == Refresh::Hard;
        if s.is_helm_chart() {
            let chart = if self.oci.is_oci_chart_repo(&s.repo_url) {
                self.oci
                    .chart(&s.repo_url, text(&s.chart), text(&s.target_revision), hard)?
            } else {
                self.helm
                    .chart(&s.repo_url, text(&s.chart), text(&s.target_revision), hard)?
            };
            Ok((chart.version.clone(), Some(Fetched::Chart(chart))))
        } else if s.repo_url.trim().starts_with("oci://") {
            // Argo CD 3.1's OCI artifact: a tree like a commit's, `path` inside it.
            let artifact = self
                .oci
                .artifact(&s.repo_url, text(&s.target_revision), hard)?;
            Ok((
                artifact.digest.clone(),
                Some(Fetched::Artifact(artifact.dir)),
            ))
        } else if req.refresh.needs_fresh_refs() {
            let asked = req.refs_asked_at.unwrap_or_else(std::time::Instant::now);
            let commit = self
                .git
                .resolve_since(&s.repo_url, s.target_revision_or_head(), asked)?;
            Ok((commit, None))
        } else {
            let commit = self.git.resolve(&s.repo_url, s.target_revision_or_head())?;
            Ok((commit, None))
        }
    }

    /// The trees and commits of the request's `ref` sources, by ref name.
    #[allow(clippy::type_complexity)]
    fn ref_trees(
        &self,
        req: &RenderRequest,
        commits: &[String],
        charts: &[Option<Fetched>],
    ) -> Result<(BTreeMap<String, PathBuf>, BTreeMap<String, String>)> {
        let mut refs = BTreeMap::new();
        let mut ref_commits = BTreeMap::new();
        for ((s, commit), chart) in req.sources.iter().zip(commits).zip(charts) {
            let name = text(&s.reference);
            if !name.is_empty() {
                let dir = match chart {
                    Some(c) => c.dir().to_path_buf(),
                    None => {
                        self.git
                            .checkout(&s.repo_url, s.target_revision_or_head(), commit)?
                            .dir
                    }
                };
                refs.insert(name.to_owned(), dir);
                ref_commits.insert(name.to_owned(), commit.clone());
            }
        }
        Ok((refs, ref_commits))
    }

    fn render_one(
        &self,
        req: &RenderRequest,
        source: &ApplicationSource,
        commit: &str,
        chart: Option<&Fetched>,
        refs: &BTreeMap<String, PathBuf>,
        ref_commits: &BTreeMap<String, String>,
    ) -> Result<One> {
        // A chart from a Helm repository is its own tree; `path` does not apply (as in Argo CD).
        let root = match chart {
            Some(c) => c.dir().to_path_buf(),
            None => {
                self.git
                    .checkout(&source.repo_url, source.target_revision_or_head(), commit)?
                    .dir
            }
        };
        let repo = RepoDir::open(&root)?;
        let app = match chart {
            Some(Fetched::Chart(_)) => PathBuf::new(),
            Some(Fetched::Artifact(_)) | None => app_path(&repo, text(&source.path))?,
        };
        let git_url = chart.is_none().then_some(source.repo_url.as_str());
        self.render_in(
            req,
            source,
            commit,
            &root,
            &repo,
            &app,
            refs,
            ref_commits,
            Some(Cached { git_url }),
        )
    }
}

/// A source that is not a Git commit: a chart (Helm repository or OCI registry) or an OCI
/// artifact, already verified and unpacked.
pub(super) enum Fetched {
    Chart(ChartCheckout),
    Artifact(PathBuf),
}

impl Fetched {
    fn dir(&self) -> &Path {
        match self {
            Fetched::Chart(c) => &c.dir,
            Fetched::Artifact(dir) => dir,
        }
    }
}

/// The source path, relative to the tree, refused when it leaves the repository (lexically, or
/// physically through links) or is missing.
pub(super) fn app_path(repo: &RepoDir, path: &str) -> Result<PathBuf> {
    let rel = normalize_within(Path::new(path)).ok_or_else(|| Error::PathOutsideRepository {
        field: "spec.source.path".into(),
        path: path.to_owned(),
    })?;
    repo.resolve(&rel)?;
    if !repo.is_dir(&rel) {
        return Err(Error::PathNotFound {
            field: "spec.source.path".into(),
            path: path.to_owned(),
        });
    }
    Ok(rel)
}
