//! The front door: an Application's sources in, desired objects out, through the Git cache, the
//! renderers and the manifest cache.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use plumb_model::application::ApplicationSource;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::beneath::RepoDir;
use crate::cache::ManifestCache;
use crate::credentials::{RepoCredentials, TlsCerts, normalize_url};
use crate::detect::{SourceType, detect_in};
use crate::error::{Error, Result};
use crate::git::{GitCache, normalize_within};
use crate::helm_repo::{ChartCheckout, HelmRepos};
use crate::limits::Limits;
use crate::manifest::Manifest;
use crate::redact::{Redactor, strip_url_credentials};
use crate::render::{self, Context, Tools};
use crate::spec::s as text;

/// Version of the cache key layout and renderer behaviour; bump to invalidate old disk entries.
/// 2: keys salted per installation, reads beneath the checkout root.
const CACHE_FORMAT: u32 = 2;

/// How the [`Renderer`] is set up.
#[derive(Debug, Clone)]
pub struct Config {
    /// Root of the Git cache, the commit trees and the manifest cache.
    pub cache_dir: PathBuf,
    /// Size and time limits.
    pub limits: Limits,
    /// The helm and kustomize binaries.
    pub tools: Tools,
    /// Memory the in-memory manifest cache may hold (default 256 MiB of serialized manifests).
    pub memory_cache_bytes: usize,
    /// Keep rendered manifests on disk too (default true), so a restart renders nothing again.
    pub disk_cache: bool,
    /// How long a Helm repository's `index.yaml` is used before it is fetched again (default
    /// 3 minutes, Argo CD's reconciliation period); a hard refresh fetches it at once.
    pub helm_index_ttl: Duration,
}

impl Config {
    /// Defaults, with everything cached under `cache_dir`.
    pub fn new(cache_dir: impl Into<PathBuf>) -> Self {
        Self {
            cache_dir: cache_dir.into(),
            limits: Limits::default(),
            tools: Tools::default(),
            memory_cache_bytes: 256 << 20,
            disk_cache: true,
            helm_index_ttl: Duration::from_secs(180),
        }
    }
    /// Sets the limits.
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }
    /// Sets the tool paths.
    pub fn tools(mut self, tools: Tools) -> Self {
        self.tools = tools;
        self
    }
    /// Sets the memory bound of the manifest cache.
    pub fn memory_cache_bytes(mut self, n: usize) -> Self {
        self.memory_cache_bytes = n;
        self
    }
    /// Turns the on-disk manifest cache on or off.
    pub fn disk_cache(mut self, on: bool) -> Self {
        self.disk_cache = on;
        self
    }
    /// Sets how long a Helm repository index is used before it is fetched again.
    pub fn helm_index_ttl(mut self, ttl: Duration) -> Self {
        self.helm_index_ttl = ttl;
        self
    }
}

/// Whether cached manifests may be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Refresh {
    /// Use the manifest cache when the commit and parameters are unchanged.
    #[default]
    Normal,
    /// Render again even if the cache has an entry (Argo's hard refresh).
    Hard,
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
    /// Cluster version for Helm's `.Capabilities.KubeVersion` (empty: helm's default).
    pub kube_version: String,
    /// Cluster API versions for Helm's `.Capabilities.APIVersions`.
    pub api_versions: Vec<String>,
    /// Cache use.
    pub refresh: Refresh,
    /// The project's `spec.sourceRepos`: a kustomize remote base or resource must be an
    /// https/ssh Git URL one of them permits. `None` when no project applies (`plumb render
    /// --repo`): any https/ssh Git URL. `file://` and paths outside the checkout are always refused.
    pub source_repos: Option<Vec<String>>,
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
}

/// The desired objects of an Application, in source order, and how each source resolved.
#[derive(Debug, Clone)]
pub struct Rendered {
    /// The objects.
    pub manifests: Vec<Manifest>,
    /// One entry per source, in `spec.sources` order.
    pub sources: Vec<SourceOutcome>,
}

/// Fetches, renders and caches Application sources.
///
/// Safe to share between threads: the Git cache takes per-repository locks, the manifest cache
/// its own lock, and renders run without holding either.
pub struct Renderer {
    config: Config,
    git: GitCache,
    helm: HelmRepos,
    cache: ManifestCache,
    renders: AtomicU64,
    tool_versions: Mutex<HashMap<SourceType, String>>,
    redactor: RwLock<Redactor>,
    /// The limits renders use; [`Renderer::set_limits`] changes them while running.
    limits: RwLock<Limits>,
}

impl std::fmt::Debug for Renderer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Renderer")
            .field("config", &self.config)
            .field("renders", &self.render_count())
            .finish()
    }
}

impl Renderer {
    /// A renderer with its caches under `config.cache_dir`.
    pub fn new(config: Config) -> Result<Self> {
        let git_dir = config.cache_dir.join("git");
        let fresh = !git_dir.join(crate::git::salt::SALT_FILE).exists();
        let git = GitCache::new(git_dir, config.limits.clone())?;
        if fresh {
            // Entries of an older layout were keyed without the salt: unreachable now.
            crate::git::salt::remove_legacy(&config.cache_dir, &["manifests"]);
        }
        let dir = config
            .disk_cache
            .then(|| config.cache_dir.join("manifests"));
        let cache = ManifestCache::new(dir, config.memory_cache_bytes);
        let helm = HelmRepos::new(
            config.cache_dir.join("helm"),
            git.salt(),
            config.limits.clone(),
            config.helm_index_ttl,
        )?;
        Ok(Self {
            limits: RwLock::new(config.limits.clone()),
            config,
            git,
            helm,
            cache,
            renders: AtomicU64::new(0),
            tool_versions: Mutex::new(HashMap::new()),
            redactor: RwLock::new(Redactor::default()),
        })
    }

    /// Uses these repository credentials (see [`RepoCredentials::from_secret`]).
    pub fn with_credentials(self, credentials: Vec<RepoCredentials>) -> Self {
        self.set_repositories(credentials, TlsCerts::default());
        self
    }

    /// Uses these repository credentials and CA certificates (`argocd-tls-certs-cm`) from now
    /// on, for Git and Helm repositories alike (the controller calls this when the repository
    /// Secrets or the certificates change).
    pub fn set_repositories(&self, credentials: Vec<RepoCredentials>, certs: TlsCerts) {
        *self.redactor.write().unwrap_or_else(|p| p.into_inner()) =
            Redactor::new(credentials.iter().flat_map(RepoCredentials::secrets));
        self.helm.set_access(credentials.clone(), certs);
        self.git.set_credentials(credentials);
    }

    /// The Git cache, for ref checks ([`GitCache::ls_remote`]) and counters.
    pub fn git(&self) -> &GitCache {
        &self.git
    }

    /// The Helm chart repository cache, for its counters.
    pub fn helm_repos(&self) -> &HelmRepos {
        &self.helm
    }

    /// Uses `limits` for renders from now on (the controller calls this when the settings
    /// ConfigMap changes). The Git cache keeps the fetch and tree limits it was created with.
    pub fn set_limits(&self, limits: Limits) {
        *self.limits.write().unwrap_or_else(|p| p.into_inner()) = limits;
    }

    /// The limits renders use now.
    pub fn limits(&self) -> Limits {
        self.limits
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// How many sources were actually rendered (cache misses) since creation.
    pub fn render_count(&self) -> u64 {
        self.renders.load(Ordering::Relaxed)
    }

    /// Renders every source of the request. Any failure fails the whole render: a partial or
    /// empty desired set is never returned in place of an error.
    pub fn render(&self, req: &RenderRequest) -> Result<Rendered> {
        if req.sources.is_empty() {
            return Err(Error::UnsupportedSource {
                detail: "the application has no source".into(),
            });
        }
        let mut commits = Vec::with_capacity(req.sources.len());
        let mut charts: Vec<Option<ChartCheckout>> = Vec::with_capacity(req.sources.len());
        for s in &req.sources {
            if s.is_helm_chart() {
                let chart = self.helm.chart(
                    &s.repo_url,
                    text(&s.chart),
                    text(&s.target_revision),
                    req.refresh == Refresh::Hard,
                )?;
                commits.push(chart.version.clone());
                charts.push(Some(chart));
            } else {
                commits.push(self.git.resolve(&s.repo_url, s.target_revision_or_head())?);
                charts.push(None);
            }
        }
        let mut refs = BTreeMap::new();
        let mut ref_commits = BTreeMap::new();
        for ((s, commit), chart) in req.sources.iter().zip(&commits).zip(&charts) {
            let name = text(&s.reference);
            if !name.is_empty() {
                let dir = match chart {
                    Some(c) => c.dir.clone(),
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
        let mut manifests = Vec::new();
        let mut outcomes = Vec::new();
        for ((s, commit), chart) in req.sources.iter().zip(&commits).zip(&charts) {
            let mut outcome = SourceOutcome {
                url: strip_url_credentials(&s.repo_url),
                revision: s.target_revision_or_head().to_owned(),
                commit: commit.clone(),
                source_type: None,
                cache_hit: false,
            };
            if !text(&s.reference).is_empty() && text(&s.path).is_empty() && !s.is_helm_chart() {
                outcomes.push(outcome);
                continue;
            }
            let (objects, kind, hit) =
                self.render_one(req, s, commit, chart.as_ref(), &refs, &ref_commits)?;
            outcome.source_type = Some(kind);
            outcome.cache_hit = hit;
            manifests.extend(objects.iter().cloned());
            outcomes.push(outcome);
        }
        Ok(Rendered {
            manifests,
            sources: outcomes,
        })
    }

    fn render_one(
        &self,
        req: &RenderRequest,
        source: &ApplicationSource,
        commit: &str,
        chart: Option<&ChartCheckout>,
        refs: &BTreeMap<String, PathBuf>,
        ref_commits: &BTreeMap<String, String>,
    ) -> Result<(Arc<Vec<Manifest>>, SourceType, bool)> {
        // A chart from a Helm repository is its own tree; `path` does not apply (as in Argo CD).
        let root = match chart {
            Some(c) => c.dir.clone(),
            None => {
                self.git
                    .checkout(&source.repo_url, source.target_revision_or_head(), commit)?
                    .dir
            }
        };
        let repo = RepoDir::open(&root)?;
        let app = match chart {
            Some(_) => PathBuf::new(),
            None => app_path(&repo, text(&source.path))?,
        };
        let kind = detect_in(source, &repo, &app)?;
        let limits = self.limits();
        let tool_version = self.tool_version(kind, &limits)?;
        let key = cache_key(
            self.git.salt(),
            req,
            source,
            commit,
            &app,
            kind,
            &tool_version,
            ref_commits,
        );
        if req.refresh == Refresh::Normal
            && let Some(hit) = self.cache.get(&key)
        {
            return Ok((hit, kind, true));
        }
        self.renders.fetch_add(1, Ordering::Relaxed);
        let redactor = self
            .redactor
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let ctx = Context {
            root: &root,
            repo: &repo,
            app: &app,
            app_name: &req.app_name,
            namespace: &req.namespace,
            kube_version: &req.kube_version,
            api_versions: &req.api_versions,
            refs,
            source_repos: req.source_repos.as_deref(),
            tools: &self.config.tools,
            limits: &limits,
            redactor: &redactor,
            helm_repos: &self.helm,
            hard_refresh: req.refresh == Refresh::Hard,
        };
        let manifests = Arc::new(render::render(&ctx, source, kind)?);
        self.cache.put(&key, Arc::clone(&manifests));
        Ok((manifests, kind, false))
    }

    fn tool_version(&self, kind: SourceType, limits: &Limits) -> Result<String> {
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

/// The source path, relative to the tree, refused when it leaves the repository (lexically, or
/// physically through links) or is missing.
fn app_path(repo: &RepoDir, path: &str) -> Result<PathBuf> {
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

#[allow(clippy::too_many_arguments)]
fn cache_key(
    salt: &str,
    req: &RenderRequest,
    source: &ApplicationSource,
    commit: &str,
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
        "commit": commit,
        "path": app.display().to_string(),
        "params": params,
        "app": req.app_name,
        "namespace": req.namespace,
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
