//! What a render is asked ([`RenderRequest`], [`Refresh`], [`LocalSource`]) and what it answers
//! ([`Rendered`], one [`SourceOutcome`] per source).

use std::path::PathBuf;

use plumb_model::application::ApplicationSource;
use serde::{Deserialize, Serialize};

use crate::detect::SourceType;
use crate::manifest::Manifest;

/// Whether cached manifests may be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Refresh {
    /// Use the manifest cache when the commit and parameters are unchanged; a ref may be
    /// resolved from a listing of the repository shared within the ref cache TTL (a poll).
    #[default]
    Normal,
    /// [`Refresh::Normal`], but refs are resolved from a listing started after the request: a
    /// refresh someone asked for (Argo's normal refresh, a webhook), a sync, the comparison
    /// that records a sync's result. A push moments ago is seen.
    Latest,
    /// Render again even if the cache has an entry (Argo's hard refresh); refs as
    /// [`Refresh::Latest`].
    Hard,
}

impl Refresh {
    /// Whether a rendered result cached for the same commit and parameters may be served.
    pub fn uses_manifest_cache(self) -> bool {
        self != Refresh::Hard
    }

    /// Whether refs must come from a listing started after the request.
    pub fn needs_fresh_refs(self) -> bool {
        self != Refresh::Normal
    }
}

/// What to render: an Application's sources and the context they render in.
#[derive(Debug, Clone, Default)]
pub struct RenderRequest {
    /// `spec.sources`, or `[spec.source]`.
    pub sources: Vec<ApplicationSource>,
    /// Application name (Helm's default release name).
    pub app_name: String,
    /// Destination namespace (Helm's default namespace).
    pub namespace: String,
    /// The Application's project (a plugin's `ARGOCD_APP_PROJECT_NAME`).
    pub project: String,
    /// Cluster version for Helm's `.Capabilities.KubeVersion` (empty: helm's default).
    pub kube_version: String,
    /// Cluster API versions for Helm's `.Capabilities.APIVersions`.
    pub api_versions: Vec<String>,
    /// Cache use.
    pub refresh: Refresh,
    /// With a refresh that needs fresh refs: when it was asked for. A ref listing started at or
    /// after it answers (one listing serves every request asked before it began); `None`: a
    /// listing started after the render itself.
    pub refs_asked_at: Option<std::time::Instant>,
    /// The project's `spec.sourceRepos`: a kustomize remote base or resource must be an
    /// https/ssh Git URL one of them permits. `None` when no project applies (`plumb render
    /// --repo`): any https/ssh Git URL. `file://` and paths outside the checkout are always refused.
    pub source_repos: Option<Vec<String>>,
    /// The Application's `argocd.argoproj.io/manifest-generate-paths` annotation: the paths
    /// whose changes make a new commit render again (else Plumb's own reading of the source).
    pub generate_paths: Option<String>,
    /// Who asks (`namespace/name` of the Application): the manifests it was last given stay in
    /// memory while it points at them and leave memory when nobody does any more.
    pub owner: Option<String>,
    /// The project's effective source integrity (`sourceIntegrity`, legacy `signatureKeys`
    /// folded in) when signatures are verified: every Git source's revision must satisfy the
    /// policy selecting its repository ([`Rendered::integrity`]). `None`: not verified.
    pub source_integrity: Option<plumb_model::application::SourceIntegrity>,
}

/// The outcome of one source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceOutcome {
    /// Repository URL, without credentials.
    pub url: String,
    /// The revision as requested.
    pub revision: String,
    /// The commit it resolved to; for a chart from a Helm repository, the chart version (what
    /// Argo CD records as the revision).
    pub commit: String,
    /// How it was rendered; `None` for a source that only serves as a `ref`.
    pub source_type: Option<SourceType>,
    /// True when the manifests came from the cache.
    pub cache_hit: bool,
    /// True when they came from the cache although the commit is new: the commit did not change
    /// what the source's render reads.
    #[serde(default)]
    pub unchanged_inputs: bool,
}

/// The desired objects of an Application, in source order, and how each source resolved.
#[derive(Debug, Clone)]
pub struct Rendered {
    /// The objects.
    pub manifests: Vec<Manifest>,
    /// One entry per source, in `spec.sources` order.
    pub sources: Vec<SourceOutcome>,
    /// Why revisions fail the project's source integrity, one message per failing source, as
    /// Argo CD's ComparisonError reads (`GIT/GPG: Failed verifying revision ...`, one line per
    /// problem). Not empty: nothing may be synced from this render.
    pub integrity: Vec<String>,
}

/// A directory on this machine rendered in place of an Application's repository (`plumb app
/// diff --local DIR --local-repo-root ROOT`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalSource {
    /// The directory rendered (stands in for the source's `path`).
    pub dir: PathBuf,
    /// The repository root it belongs to (value files with a leading `/`, kustomize bases above
    /// `dir` resolve beneath it); `None`: `dir` itself. Nothing outside it is read.
    pub repo_root: Option<PathBuf>,
}
