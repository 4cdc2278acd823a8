//! The [`Renderer`]: the caches and settings it holds, how it is set up and changed while
//! running, and what it counts.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use super::config::Config;
use super::manifest_cache::ManifestCache;
use super::pins::Pins;
use super::request::LocalSource;
use crate::credentials::{RepoCredentials, TlsCerts};
use crate::detect::SourceType;
use crate::error::Result;
use crate::git::GitCache;
use crate::gpg::GpgKeys;
use crate::helm_repo::HelmRepos;
use crate::limits::Limits;
use crate::oci::OciRegistries;
use crate::plugin;
use crate::redact::Redactor;

/// Fetches, renders and caches Application sources.
///
/// Safe to share between threads: the Git cache takes per-repository locks, the manifest cache
/// its own lock, and renders run without holding either.
pub struct Renderer {
    pub(super) config: Config,
    pub(super) git: GitCache,
    pub(super) helm: HelmRepos,
    pub(super) oci: OciRegistries,
    pub(super) cache: ManifestCache,
    pub(super) renders: AtomicU64,
    /// Sources served from the cache at the commit they were rendered at.
    pub(super) cached: AtomicU64,
    /// Sources served from the cache rendered at an earlier commit (inputs unchanged).
    pub(super) skipped: AtomicU64,
    /// One render per cache key at a time; the others wait and take its result.
    pub(super) render_gates: crate::git::Gates,
    /// (repository, commit, source, annotation) → what the render reads, as a key part.
    pub(super) content_memo: Mutex<HashMap<String, String>>,
    /// The cache keys each owner was last given, and how many owners point at each key.
    pub(super) pins: Mutex<Pins>,
    pub(super) tool_versions: Mutex<HashMap<SourceType, String>>,
    pub(super) discovery: plugin::DiscoveryMemo,
    pub(super) redactor: RwLock<Redactor>,
    /// The limits renders use; [`Renderer::set_limits`] changes them while running.
    pub(super) limits: RwLock<Limits>,
    /// Where plugins are read from; [`Renderer::set_plugins_dir`] changes it while running.
    pub(super) plugins_dir: RwLock<Option<PathBuf>>,
    /// argocd-cm's `kustomize.buildOptions`; [`Renderer::set_kustomize_build_options`].
    pub(super) kustomize_build_options: RwLock<String>,
    /// A local directory rendered instead of the repository ([`Renderer::with_local`]).
    pub(super) local: Option<LocalSource>,
    /// `(project, url)` of each project-scoped repository Secret (not templates).
    pub(super) scoped_repositories: RwLock<Vec<(String, String)>>,
    /// The public keys of `argocd-gpg-keys-cm` ([`Renderer::set_gpg_keys`]).
    pub(super) gpg_keys: RwLock<Arc<GpgKeys>>,
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
            kustomize_build_options: RwLock::new(String::new()),
            local: None,
            scoped_repositories: RwLock::new(Vec::new()),
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
            gpg_keys: RwLock::new(Arc::new(GpgKeys::default())),
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
        *self
            .scoped_repositories
            .write()
            .unwrap_or_else(|p| p.into_inner()) = credentials
            .iter()
            .filter_map(RepoCredentials::scoped_repository)
            .map(|(p, url)| (p.to_string(), url.to_string()))
            .collect();
        *self.redactor.write().unwrap_or_else(|p| p.into_inner()) =
            Redactor::new(credentials.iter().flat_map(RepoCredentials::secrets));
        self.helm.set_access(credentials.clone(), certs.clone());
        self.git.set_tls_certs(certs.clone());
        self.oci.set_access(credentials.clone(), certs);
        self.git.set_credentials(credentials);
    }

    /// The URLs of the repository Secrets scoped to `project` (what Argo adds to the project's
    /// `sourceRepos`, `GetAppProjectByName`), in Secret order.
    pub fn scoped_repositories(&self, project: &str) -> Vec<String> {
        self.scoped_repositories
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .filter(|(p, _)| p == project)
            .map(|(_, url)| url.clone())
            .collect()
    }

    /// Verifies signatures against these public keys from now on (`argocd-gpg-keys-cm`'s data:
    /// key ID → armored key). Unchanged keys keep their prepared GnuPG home.
    pub fn set_gpg_keys(&self, entries: std::collections::BTreeMap<String, String>) {
        let mut keys = self.gpg_keys.write().unwrap_or_else(|p| p.into_inner());
        if keys.entries() != &entries {
            *keys = Arc::new(GpgKeys::new(entries));
        }
    }

    /// The public keys signatures are verified against.
    pub fn gpg_keys(&self) -> Arc<GpgKeys> {
        self.gpg_keys
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Accepts these SSH host keys for Git over SSH, and no others (`argocd-ssh-known-hosts-cm`).
    pub fn set_known_hosts(&self, known_hosts: crate::KnownHosts) {
        self.git.set_known_hosts(known_hosts);
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

    /// Applies argocd-cm's `kustomize.buildOptions` to every `kustomize build` from now on
    /// (`None`: none). Options Plumb does not take fail each Kustomize render, naming the key
    /// ([`crate::render::kustomize_options`]): never silently dropped.
    pub fn set_kustomize_build_options(&self, options: Option<&str>) {
        *self
            .kustomize_build_options
            .write()
            .unwrap_or_else(|p| p.into_inner()) = options.unwrap_or_default().to_owned();
    }

    /// argocd-cm's `kustomize.buildOptions` in force, as written.
    pub(super) fn kustomize_build_options(&self) -> String {
        self.kustomize_build_options
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
    pub(super) fn pin(&self, owner: &str, keys: Vec<String>) {
        let Ok(mut pins) = self.pins.lock() else {
            return;
        };
        for k in pins.repin(owner, keys) {
            self.cache.forget(&k);
        }
    }
}
