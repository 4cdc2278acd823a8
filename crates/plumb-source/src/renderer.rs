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
use crate::detect::{SourceType, detect_in, is_explicit};
use crate::error::{Error, Result};
use crate::git::{GitCache, normalize_within};
use crate::helm_repo::{ChartCheckout, HelmRepos};
use crate::limits::Limits;
use crate::manifest::Manifest;
use crate::oci::OciRegistries;
use crate::plugin::{self, Plugin};
use crate::redact::{Redactor, strip_url_credentials};
use crate::render::{self, Context, Tools};
use crate::spec::s as text;

/// Version of the cache key layout and renderer behaviour; bump to invalidate old disk entries.
/// 2: keys salted per installation, reads beneath the checkout root.
/// 3: keyed by the content the render read (Git object ids), not the commit.
const CACHE_FORMAT: u32 = 3;

/// How many (commit, source) → content key results are remembered; past it they are forgotten
/// all at once (each is cheap to compute again).
const MAX_CONTENT_MEMO: usize = 16_384;

/// How the [`Renderer`] is set up.
#[derive(Debug, Clone)]
pub struct Config {
    /// Root of the Git cache, the commit trees and the manifest cache.
    pub cache_dir: PathBuf,
    /// Size and time limits.
    pub limits: Limits,
    /// The helm and kustomize binaries.
    pub tools: Tools,
    /// Memory the in-memory manifest cache may hold (default 64 MiB of manifests as compact
    /// JSON, which is how they are kept).
    pub memory_cache_bytes: usize,
    /// Keep rendered manifests on disk too (default true), so a restart renders nothing again.
    pub disk_cache: bool,
    /// Bytes the manifest files on disk may take (default 1 GiB); past it the least recently
    /// used are removed.
    pub disk_cache_bytes: u64,
    /// How long a repository's ref listing (`ls-remote`) is shared by every source on it
    /// (default 0: only a listing in flight is joined; the controller uses a few seconds).
    pub ref_cache_ttl: Duration,
    /// The directory of config management plugin files (`ConfigManagementPlugin` YAML); `None`:
    /// no plugins (a source that asks for one fails, and no discovery runs).
    pub plugins_dir: Option<PathBuf>,
}

impl Config {
    /// Defaults, with everything cached under `cache_dir`.
    pub fn new(cache_dir: impl Into<PathBuf>) -> Self {
        Self {
            cache_dir: cache_dir.into(),
            limits: Limits::default(),
            tools: Tools::default(),
            memory_cache_bytes: 64 << 20,
            disk_cache: true,
            disk_cache_bytes: 1 << 30,
            ref_cache_ttl: Duration::ZERO,
            plugins_dir: None,
        }
    }
    /// Sets the directory config management plugins are read from.
    pub fn plugins_dir(mut self, dir: Option<PathBuf>) -> Self {
        self.plugins_dir = dir;
        self
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
    /// Sets how long a ref listing is shared by the sources of one repository.
    pub fn ref_cache_ttl(mut self, ttl: Duration) -> Self {
        self.ref_cache_ttl = ttl;
        self
    }
    /// Sets the size bound of the on-disk manifest cache.
    pub fn disk_cache_bytes(mut self, n: u64) -> Self {
        self.disk_cache_bytes = n;
        self
    }
    /// Turns the on-disk manifest cache on or off.
    pub fn disk_cache(mut self, on: bool) -> Self {
        self.disk_cache = on;
        self
    }
}

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
}

/// Fetches, renders and caches Application sources.
///
/// Safe to share between threads: the Git cache takes per-repository locks, the manifest cache
/// its own lock, and renders run without holding either.
pub struct Renderer {
    config: Config,
    git: GitCache,
    helm: HelmRepos,
    oci: OciRegistries,
    cache: ManifestCache,
    renders: AtomicU64,
    /// Sources served from the cache at the commit they were rendered at.
    cached: AtomicU64,
    /// Sources served from the cache rendered at an earlier commit (inputs unchanged).
    skipped: AtomicU64,
    /// One render per cache key at a time; the others wait and take its result.
    render_gates: crate::git::Gates,
    /// (repository, commit, source, annotation) → what the render reads, as a key part.
    content_memo: Mutex<HashMap<String, String>>,
    /// The cache keys each owner was last given, and how many owners point at each key.
    pins: Mutex<Pins>,
    tool_versions: Mutex<HashMap<SourceType, String>>,
    discovery: plugin::DiscoveryMemo,
    redactor: RwLock<Redactor>,
    /// The limits renders use; [`Renderer::set_limits`] changes them while running.
    limits: RwLock<Limits>,
    /// Where plugins are read from; [`Renderer::set_plugins_dir`] changes it while running.
    plugins_dir: RwLock<Option<PathBuf>>,
    /// A local directory rendered instead of the repository ([`Renderer::with_local`]).
    local: Option<LocalSource>,
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
        git.protect(&config.cache_dir);
        if fresh {
            // Entries of an older layout were keyed without the salt: unreachable now.
            crate::git::salt::remove_legacy(&config.cache_dir, &["manifests"]);
        }
        let dir = config
            .disk_cache
            .then(|| config.cache_dir.join("manifests"));
        git.set_ref_cache_ttl(config.ref_cache_ttl);
        let cache = ManifestCache::new(
            dir,
            git.salt(),
            config.memory_cache_bytes,
            config.disk_cache_bytes,
        );
        let helm = HelmRepos::new(
            config.cache_dir.join("helm"),
            git.salt(),
            config.limits.clone(),
        )?;
        let oci = OciRegistries::new(
            config.cache_dir.join("oci"),
            git.salt(),
            config.limits.clone(),
        )?;
        Ok(Self {
            limits: RwLock::new(config.limits.clone()),
            plugins_dir: RwLock::new(config.plugins_dir.clone()),
            local: None,
            config,
            git,
            helm,
            oci,
            cache,
            renders: AtomicU64::new(0),
            cached: AtomicU64::new(0),
            skipped: AtomicU64::new(0),
            render_gates: crate::git::Gates::default(),
            content_memo: Mutex::new(HashMap::new()),
            pins: Mutex::new(Pins::default()),
            tool_versions: Mutex::new(HashMap::new()),
            discovery: plugin::DiscoveryMemo::default(),
            redactor: RwLock::new(Redactor::default()),
        })
    }

    /// Renders every request's (single) source from `local` instead of its repository, without
    /// the manifest cache: what `plumb app diff --local` and `app manifests --local` use.
    pub fn with_local(mut self, local: LocalSource) -> Self {
        self.local = Some(local);
        self
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
        self.helm.set_access(credentials.clone(), certs.clone());
        self.oci.set_access(credentials.clone(), certs);
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

    /// The OCI registry cache, for its counters.
    pub fn oci_registries(&self) -> &OciRegistries {
        &self.oci
    }

    /// Uses `limits` for renders and chart/OCI downloads from now on (the controller calls this
    /// when the settings ConfigMap changes). The Git cache keeps the fetch and tree limits it was
    /// created with.
    pub fn set_limits(&self, limits: Limits) {
        self.helm.set_limits(&limits);
        self.oci.set_limits(&limits);
        *self.limits.write().unwrap_or_else(|p| p.into_inner()) = limits;
    }

    /// The limits renders use now.
    pub fn limits(&self) -> Limits {
        self.limits
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Reads config management plugins from `dir` from now on (`None`: no plugins). The files
    /// are read again for every render that needs them, so edits apply without a restart.
    pub fn set_plugins_dir(&self, dir: Option<PathBuf>) {
        *self.plugins_dir.write().unwrap_or_else(|p| p.into_inner()) = dir;
    }

    /// The directory plugins are read from now.
    pub fn plugins_dir(&self) -> Option<PathBuf> {
        self.plugins_dir
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The plugins of the configured directory (empty without one).
    pub fn plugins(&self) -> Result<plugin::PluginSet> {
        match self.plugins_dir() {
            Some(dir) => plugin::load(&dir),
            None => Ok(plugin::PluginSet::default()),
        }
    }

    /// How many sources were actually rendered (cache misses) since creation.
    pub fn render_count(&self) -> u64 {
        self.renders.load(Ordering::Relaxed)
    }

    /// How many sources came from the cache at the commit they were rendered at.
    pub fn cached_count(&self) -> u64 {
        self.cached.load(Ordering::Relaxed)
    }

    /// How many sources came from the cache at a new commit that changed nothing they read
    /// (renders skipped).
    pub fn skipped_count(&self) -> u64 {
        self.skipped.load(Ordering::Relaxed)
    }

    /// Bytes of manifests held in memory.
    pub fn memory_cache_bytes(&self) -> usize {
        self.cache.memory_bytes()
    }

    /// Forgets the ref listing kept for `url` (a refresh or webhook says it moved).
    pub fn invalidate_refs(&self, url: &str) {
        self.git.invalidate_refs(url);
    }

    /// `owner` is gone (its Application deleted): what only it pointed at leaves memory.
    pub fn release(&self, owner: &str) {
        self.pin(owner, Vec::new());
    }

    /// Records the cache keys `owner` now points at; keys nobody points at leave memory.
    fn pin(&self, owner: &str, keys: Vec<String>) {
        let Ok(mut pins) = self.pins.lock() else {
            return;
        };
        for k in &keys {
            *pins.count.entry(k.clone()).or_default() += 1;
        }
        let old = if keys.is_empty() {
            pins.by_owner.remove(owner).unwrap_or_default()
        } else {
            pins.by_owner
                .insert(owner.to_owned(), keys)
                .unwrap_or_default()
        };
        for k in old {
            let left = pins.count.get_mut(&k).map(|n| {
                *n = n.saturating_sub(1);
                *n
            });
            if left == Some(0) {
                pins.count.remove(&k);
                self.cache.forget(&k);
            }
        }
    }

    /// Renders every source of the request. Any failure fails the whole render: a partial or
    /// empty desired set is never returned in place of an error.
    pub fn render(&self, req: &RenderRequest) -> Result<Rendered> {
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
            let hard = req.refresh == Refresh::Hard;
            if s.is_helm_chart() {
                let chart = if self.oci.is_oci_chart_repo(&s.repo_url) {
                    self.oci
                        .chart(&s.repo_url, text(&s.chart), text(&s.target_revision), hard)?
                } else {
                    self.helm
                        .chart(&s.repo_url, text(&s.chart), text(&s.target_revision), hard)?
                };
                commits.push(chart.version.clone());
                charts.push(Some(Fetched::Chart(chart)));
            } else if s.repo_url.trim().starts_with("oci://") {
                // Argo CD 3.1's OCI artifact: a tree like a commit's, `path` inside it.
                let artifact = self
                    .oci
                    .artifact(&s.repo_url, text(&s.target_revision), hard)?;
                commits.push(artifact.digest.clone());
                charts.push(Some(Fetched::Artifact(artifact.dir)));
            } else if req.refresh.needs_fresh_refs() {
                let asked = req.refs_asked_at.unwrap_or_else(std::time::Instant::now);
                commits.push(self.git.resolve_since(
                    &s.repo_url,
                    s.target_revision_or_head(),
                    asked,
                )?);
                charts.push(None);
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
            manifests,
            sources: outcomes,
        })
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

    /// Renders `source` from the tree at `root` (its directory `app`), through the manifest
    /// cache when `cached` says so (keyed by what the render reads when the tree is a commit of
    /// `git_url`); one render per key at a time, the others waiting for its result.
    #[allow(clippy::too_many_arguments)]
    fn render_in(
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
        let tool_version = match &plugin {
            Some(p) => format!("{} {}", p.name, p.digest),
            None => self.tool_version(kind, &limits)?,
        };
        let content = match &cached {
            Some(Cached { git_url: Some(url) }) => {
                self.content_of(req, source, url, commit, repo, &app, kind, &limits)?
            }
            _ => format!("commit {commit}"),
        };
        let key = cache_key(
            self.git.salt(),
            req,
            source,
            &content,
            &app,
            kind,
            &tool_version,
            ref_commits,
        );
        if cached.is_none() {
            self.renders.fetch_add(1, Ordering::Relaxed);
            let manifests = match &plugin {
                Some(p) => {
                    let run =
                        self.plugin_run(req, source, commit, &root, repo, &app, &limits, &redactor);
                    plugin::generate(p, &run)?
                }
                None => self.render_tree(
                    req, source, &root, repo, &app, refs, &limits, &redactor, kind,
                )?,
            };
            return Ok(One {
                manifests: Arc::new(manifests),
                kind,
                hit: Served::Rendered,
                key,
            });
        }
        let lookup = || -> Option<One> {
            let hit = self.cache.get(&key)?;
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
                key: key.clone(),
            })
        };
        if req.refresh.uses_manifest_cache()
            && let Some(one) = lookup()
        {
            return Ok(one);
        }
        self.render_gates.with(&key, || {
            // Someone else may have rendered it while this one waited.
            if req.refresh.uses_manifest_cache()
                && let Some(one) = lookup()
            {
                return Ok(one);
            }
            self.renders.fetch_add(1, Ordering::Relaxed);
            let manifests = match &plugin {
                Some(p) => {
                    let run =
                        self.plugin_run(req, source, commit, &root, repo, &app, &limits, &redactor);
                    plugin::generate(p, &run)?
                }
                None => self.render_tree(
                    req, source, &root, repo, &app, refs, &limits, &redactor, kind,
                )?,
            };
            self.cache.put(&key, &manifests, commit);
            Ok(One {
                manifests: Arc::new(manifests),
                kind,
                hit: Served::Rendered,
                key: key.clone(),
            })
        })
    }

    /// What the render of `source` at `commit` reads, as a key part: the Git object ids of its
    /// input paths, the root tree's id, or the commit ([`crate::inputs`]). Remembered per
    /// (repository, commit, source, annotation): a commit never changes.
    #[allow(clippy::too_many_arguments)]
    fn content_of(
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

    /// Runs the renderer of `kind` (not a plugin) on the tree.
    #[allow(clippy::too_many_arguments)]
    fn render_tree(
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
        };
        render::render(&ctx, source, kind)
    }

    /// Renders the request's one source from [`Renderer::with_local`]'s directory instead of its
    /// repository: the directory is untrusted input like a checkout (links checked physically,
    /// sizes bounded) and is never cached.
    fn render_local(&self, req: &RenderRequest, local: &LocalSource) -> Result<Rendered> {
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

    /// The plugin that renders `source`: the one `plugin:` asks for, or, for a source whose type
    /// no option decides, the first whose discovery rules match (Argo's `AppType` tries plugins
    /// before the kustomization and Chart.yaml files). Sets `kind` to `Plugin` when one is used.
    #[allow(clippy::too_many_arguments)]
    fn choose_plugin(
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
    fn plugin_run<'a>(
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

/// How a source's manifests were served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Served {
    /// Rendered now.
    Rendered,
    /// From the cache, rendered at this commit.
    Cached,
    /// From the cache, rendered at another commit whose inputs were the same.
    Skipped,
}

/// One source rendered or served from the cache, with its cache key.
struct One {
    manifests: Arc<Vec<Manifest>>,
    kind: SourceType,
    hit: Served,
    key: String,
}

/// A render through the manifest cache; `git_url` when the tree is a commit of that repository
/// (the key then holds what the render read instead of the commit).
struct Cached<'a> {
    git_url: Option<&'a str>,
}

/// Which cache keys each owner points at.
#[derive(Default)]
struct Pins {
    by_owner: HashMap<String, Vec<String>>,
    count: HashMap<String, usize>,
}

/// A source that is not a Git commit: a chart (Helm repository or OCI registry) or an OCI
/// artifact, already verified and unpacked.
enum Fetched {
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

#[allow(clippy::too_many_arguments)]
fn cache_key(
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
