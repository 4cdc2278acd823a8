//! The Git cache: one bare repository per repository URL, and one read-only tree per commit.
//!
//! Layout under the cache root:
//! - `salt`: 32 random bytes (hex) made once per installation; every `<key>` below is a hash of
//!   the salt and the normalised URL, so every Application on one repository shares its entries
//!   while nobody can tell from a URL alone where its files are on disk (an attacker who can make
//!   Plumb read a path, or who shares the machine, cannot aim at another tenant's checkout);
//! - `repos/<key>.git`: a bare mirror of the remote's branches and tags;
//! - `repos/<key>.lock`: held while fetching, so two fetches of one repository never interleave,
//!   while readers go on reading (Git writes packs and refs atomically);
//! - `trees/<key>/<commit>`: the commit's files, written once to a temporary directory and renamed
//!   into place, then never changed.
//!
//! Migration: a cache root without `salt` was written by an older Plumb, whose keys were the bare
//! URL hash and whose trees were checked only lexically for symlinks. On first use the salt is
//! made and those entries (`repos/`, `trees/`, `keys/`) are removed, so each repository is fetched
//! once more; nothing else changes.

mod error_text;
mod history;
mod http;
mod lfs;
mod lfs_batch;
mod metadata;
mod remote;
mod revision;
pub(crate) mod salt;
mod sharing;
mod ssh;
mod submodules;
pub(crate) use sharing::Gates;
mod signed;
mod strict;
mod tree;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

pub use history::{MAX_STRICT_COMMITS, MAX_WALK};
pub use metadata::CommitMetadata;
pub use revision::RemoteRef;
pub use signed::SignedObject;
pub(crate) use tree::normalize_within;

use crate::credentials::{KnownHosts, RepoCredentials, TlsCerts, TokenCache, normalize_url};
use crate::error::{Error, Result};
use crate::limits::Limits;
use crate::permissions::make_removable;
use crate::redact::strip_url_credentials;
use revision::Match;

/// A commit's files on disk, read-only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkout {
    /// Repository URL, without credentials.
    pub url: String,
    /// Commit SHA (hex).
    pub commit: String,
    /// Directory holding the commit's tree.
    pub dir: PathBuf,
}

/// Fetches repositories into a shared cache directory and hands out per-commit trees.
#[derive(Debug)]
pub struct GitCache {
    root: PathBuf,
    salt: String,
    limits: Limits,
    credentials: RwLock<Arc<Vec<RepoCredentials>>>,
    /// Fetch submodules (`reposerver.enable.git.submodule`, true by default as in Argo CD).
    submodules: std::sync::atomic::AtomicBool,
    /// CA certificates for Git over HTTPS (`argocd-tls-certs-cm`).
    certs: RwLock<TlsCerts>,
    /// The SSH host keys accepted (`argocd-ssh-known-hosts-cm`); none until set.
    known_hosts: RwLock<KnownHosts>,
    /// GitHub App installation tokens.
    tokens: Arc<TokenCache>,
    fetches: AtomicU64,
    listings: AtomicU64,
    /// Ref listings shared by every caller on one repository ([`sharing`]).
    shared_listings: sharing::Listings,
    /// One fetch per repository at a time; waiters find the commit there afterwards.
    fetch_gates: sharing::Gates,
    /// How old a shared listing may be for a normal resolve (0: only one in flight is joined).
    ref_ttl_ms: AtomicU64,
    /// When each commit tree was last handed out; trees idle for long are removed.
    tree_uses: std::sync::Mutex<std::collections::HashMap<PathBuf, Instant>>,
    /// Trees kept per repository whatever their age, and how long others may sit unused.
    tree_retention: std::sync::Mutex<(usize, Duration)>,
    /// Directories no local (`file://`) repository may lie in: this cache and the caches beside
    /// it ([`GitCache::protect`]), as found on disk (links resolved).
    protected: RwLock<Vec<PathBuf>>,
}

/// Commit trees kept per repository, however long unused (the current ones of its branches).
const KEEP_TREES: usize = 4;
/// A tree beyond those unused this long is removed (far longer than any render may take).
const TREE_IDLE: Duration = Duration::from_secs(600);

impl std::fmt::Debug for sharing::Listings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Listings")
    }
}

impl std::fmt::Debug for sharing::Gates {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Gates")
    }
}

impl GitCache {
    /// A cache rooted at `root` (created if missing).
    pub fn new(root: impl Into<PathBuf>, limits: Limits) -> Result<Self> {
        let root = root.into();
        std::fs::create_dir_all(&root).map_err(Error::io("creating", &root))?;
        let (salt, fresh) = salt::load_or_create(&root)?;
        if fresh {
            salt::remove_legacy(&root, &["repos", "trees", "keys"]);
        }
        for sub in ["repos", "trees", "keys"] {
            let dir = root.join(sub);
            std::fs::create_dir_all(&dir).map_err(Error::io("creating", dir))?;
        }
        Ok(Self {
            salt,
            limits,
            credentials: RwLock::new(Arc::new(Vec::new())),
            submodules: std::sync::atomic::AtomicBool::new(true),
            certs: RwLock::new(TlsCerts::default()),
            known_hosts: RwLock::new(KnownHosts::default()),
            tokens: Arc::new(TokenCache::default()),
            fetches: AtomicU64::new(0),
            listings: AtomicU64::new(0),
            shared_listings: sharing::Listings::default(),
            fetch_gates: sharing::Gates::default(),
            ref_ttl_ms: AtomicU64::new(0),
            tree_uses: std::sync::Mutex::new(std::collections::HashMap::new()),
            tree_retention: std::sync::Mutex::new((KEEP_TREES, TREE_IDLE)),
            protected: RwLock::new(std::fs::canonicalize(&root).into_iter().collect()),
            root,
        })
    }

    /// Refuses local repositories in `dir` too (the cache directory holding this one: other
    /// tenants' charts and rendered manifests).
    pub fn protect(&self, dir: &Path) {
        if let Ok(dir) = std::fs::canonicalize(dir) {
            self.protected
                .write()
                .unwrap_or_else(|p| p.into_inner())
                .push(dir);
        }
    }

    /// A local repository (`file://`, `file:` or a plain path) may not lie in the cache: its
    /// mirrors are other tenants' private repositories, named by salted hashes that error text
    /// or a guess could reveal. Judged on the path as the file system resolves it, links and
    /// `..` included, so no spelling reaches them.
    fn check_local(&self, url: &str) -> Result<()> {
        let Some(path) = local_path(url) else {
            return Ok(());
        };
        // As written and percent-decoded (`%67it` is `git` to Git's URL parser).
        let decoded = percent_decoded(&path.to_string_lossy()).map(PathBuf::from);
        let protected = self.protected.read().unwrap_or_else(|p| p.into_inner());
        let inside = |p: &Path| {
            // A path that does not resolve has nothing to reach: the fetch fails on its own.
            std::fs::canonicalize(p).is_ok_and(|real| protected.iter().any(|d| real.starts_with(d)))
        };
        let reason = match decoded {
            None => "its percent-encoding is not valid",
            Some(d) if inside(&path) || inside(&d) => {
                "it lies in Plumb's cache directory, which holds other repositories' copies"
            }
            Some(_) => return Ok(()),
        };
        Err(Error::RepositoryRefused {
            url: strip_url_credentials(url),
            reason: reason.into(),
        })
    }

    /// Lets a normal [`GitCache::resolve`] use a ref listing of the same repository made up to
    /// `ttl` ago (by anyone), instead of listing again. Zero (the default) shares only a listing
    /// still in flight that started after the caller asked.
    pub fn set_ref_cache_ttl(&self, ttl: Duration) {
        self.ref_ttl_ms.store(
            u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX),
            Ordering::Relaxed,
        );
    }

    /// Keeps at most `keep` commit trees per repository once others have been unused for `idle`
    /// (defaults: 4 and 10 minutes). Older trees are removed when a new one is written.
    pub fn set_tree_retention(&self, keep: usize, idle: Duration) {
        *self
            .tree_retention
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = (keep, idle);
    }

    /// How long a ref listing is shared ([`GitCache::set_ref_cache_ttl`]).
    pub fn ref_cache_ttl(&self) -> Duration {
        Duration::from_millis(self.ref_ttl_ms.load(Ordering::Relaxed))
    }

    /// Forgets the kept ref listing of `url`: the next resolve lists the remote again (a
    /// refresh or a webhook said the repository moved).
    pub fn invalidate_refs(&self, url: &str) {
        self.shared_listings.invalidate(&self.repo_key(url));
    }

    /// Uses these credentials (from Argo repository Secrets) for matching URLs.
    pub fn with_credentials(self, credentials: Vec<RepoCredentials>) -> Self {
        self.set_credentials(credentials);
        self
    }

    /// Uses these credentials from now on (repository Secrets changed).
    pub fn set_credentials(&self, credentials: Vec<RepoCredentials>) {
        *self.credentials.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(credentials);
    }

    /// Fetches submodules into commit trees (true by default, as Argo CD's
    /// `reposerver.enable.git.submodule`), or leaves their directories empty. Trees already
    /// written keep what they have.
    pub fn set_submodules(&self, enabled: bool) {
        self.submodules.store(enabled, Ordering::Relaxed);
    }

    /// Trusts these CA certificates for Git over HTTPS (`argocd-tls-certs-cm`).
    pub fn set_tls_certs(&self, certs: TlsCerts) {
        *self.certs.write().unwrap_or_else(|p| p.into_inner()) = certs;
    }

    /// Accepts these SSH host keys, and no others (`argocd-ssh-known-hosts-cm`).
    pub fn set_known_hosts(&self, known_hosts: KnownHosts) {
        *self.known_hosts.write().unwrap_or_else(|p| p.into_inner()) = known_hosts;
    }

    /// [`GitCache::set_known_hosts`] for a new cache.
    pub fn with_known_hosts(self, known_hosts: KnownHosts) -> Self {
        self.set_known_hosts(known_hosts);
        self
    }

    /// The per-installation salt of this cache's directory names (hex).
    pub(crate) fn salt(&self) -> &str {
        &self.salt
    }

    /// The limits in force.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// How many fetches this cache has run (for tests and metrics).
    pub fn fetch_count(&self) -> u64 {
        self.fetches.load(Ordering::Relaxed)
    }

    /// How many ref listings this cache has run (for tests and metrics).
    pub fn listing_count(&self) -> u64 {
        self.listings.load(Ordering::Relaxed)
    }

    /// Lists the remote's refs (`git ls-remote`): the cheap "has the ref moved?" check.
    pub fn ls_remote(&self, url: &str) -> Result<Vec<RemoteRef>> {
        self.check_local(url)?;
        self.listings.fetch_add(1, Ordering::Relaxed);
        let mut refs = remote::run(self.job(url, remote::Op::List)?)?;
        refs.sort();
        Ok(refs)
    }

    /// Resolves `revision` (`HEAD`, branch, tag, full or short SHA, `refs/…`) to a commit SHA.
    ///
    /// A ref costs one listing and no fetch; a SHA already in the cache costs nothing; a short
    /// SHA or a SHA not yet fetched costs a fetch.
    /// A ref is resolved from a listing of the repository shared with other callers within the
    /// ref cache TTL ([`GitCache::set_ref_cache_ttl`]).
    pub fn resolve(&self, url: &str, revision: &str) -> Result<String> {
        let now = Instant::now();
        let shared_since = now.checked_sub(self.ref_cache_ttl()).unwrap_or(now);
        // A listing shared within the TTL may predate a ref pushed moments ago (a new tag the
        // Application was just pointed at): a miss is only believed from a fresh listing.
        match self.resolve_since(url, revision, shared_since) {
            Err(Error::RevisionNotFound { .. })
                if shared_since < now
                    && !matches!(revision::match_revision(revision, &[]), Match::FullSha(_)) =>
            {
                self.resolve_since(url, revision, Instant::now())
            }
            other => other,
        }
    }

    /// [`GitCache::resolve`] from a listing that started after this call (a hard refresh): one
    /// already in flight that started before is not used, one started since is joined.
    pub fn resolve_fresh(&self, url: &str, revision: &str) -> Result<String> {
        self.resolve_since(url, revision, Instant::now())
    }

    /// [`GitCache::resolve`] from a listing that started at or after `asked`: the moment a
    /// refresh or sync was asked for. Every request asked before a listing began shares it, so
    /// a webhook refreshing a thousand Applications of one repository lists it a few times,
    /// not a thousand, and each still sees the push that preceded it.
    pub fn resolve_since(&self, url: &str, revision: &str, asked: Instant) -> Result<String> {
        self.check_local(url)?;
        let clean = strip_url_credentials(url);
        let not_found = || Error::RevisionNotFound {
            url: clean.clone(),
            revision: revision.to_owned(),
        };
        if let Match::FullSha(sha) = revision::match_revision(revision, &[]) {
            // A written tree proves the commit is here without opening the repository.
            if self.tree_dir(url, &sha).is_dir() || self.has_commit(url, &sha)? {
                return Ok(sha);
            }
            self.fetch_missing(url, &sha, Vec::new())?;
            return if self.has_commit(url, &sha)? {
                Ok(sha)
            } else {
                Err(not_found())
            };
        }
        let refs = self
            .shared_listings
            .get(&self.repo_key(url), &clean, asked, || self.ls_remote(url))?;
        match revision::match_revision(revision, &refs) {
            Match::Ref { commit, .. } => Ok(commit),
            Match::MaybeShortSha(short) => {
                self.fetch_gates
                    .with(&self.repo_key(url), || self.fetch(url, Vec::new()))?;
                self.expand_short_sha(url, &short)?.ok_or_else(not_found)
            }
            Match::FullSha(_) | Match::None => Err(not_found()),
        }
    }

    /// The files of `commit`, fetching it first if the cache lacks it. `revision` is the ref it
    /// was resolved from, fetched explicitly when it lies outside branches and tags.
    pub fn checkout(&self, url: &str, revision: &str, commit: &str) -> Result<Checkout> {
        self.check_local(url)?;
        let clean = strip_url_credentials(url);
        let dest = self.tree_dir(url, commit);
        self.used(&dest);
        if dest.is_dir() {
            return Ok(Checkout {
                url: clean,
                commit: commit.to_owned(),
                dir: dest,
            });
        }
        if !self.has_commit(url, commit)? {
            let extra = if revision.starts_with("refs/")
                && !revision.starts_with("refs/heads/")
                && !revision.starts_with("refs/tags/")
            {
                vec![revision.to_owned()]
            } else {
                Vec::new()
            };
            self.fetch_missing(url, commit, extra)?;
            if !self.has_commit(url, commit)? {
                return Err(Error::RevisionNotFound {
                    url: clean,
                    revision: commit.to_owned(),
                });
            }
        }
        let parent = dest.parent().map(Path::to_path_buf).unwrap_or_default();
        std::fs::create_dir_all(&parent).map_err(Error::io("creating", &parent))?;
        let tmp = tempfile::Builder::new()
            .prefix(&format!(".tmp-{commit}-"))
            .tempdir_in(&parent)
            .map_err(Error::io("creating a temporary directory in", &parent))?;
        let staging = tmp.path().join("tree");
        let repo = self.open_local(url)?;
        let oid = parse_oid(commit, &clean)?;
        let mut fill = |path: &Path, id: gix::ObjectId| {
            self.fill_submodule(&repo, oid, url, &staging, path, id)
        };
        let written = tree::materialize(&repo, oid, &staging, &self.limits, &clean, &mut fill)
            .and_then(|()| self.smudge_lfs(url, &staging))
            .and_then(|()| {
                match std::fs::rename(&staging, &dest) {
                    Ok(()) => Ok(()),
                    // Another worker won the race; its tree is identical.
                    Err(_) if dest.is_dir() => Ok(()),
                    Err(e) => Err(Error::io("renaming into", &dest)(e)),
                }
            });
        make_removable(tmp.path());
        written?;
        self.sweep_trees(&parent, &dest);
        Ok(Checkout {
            url: clean,
            commit: commit.to_owned(),
            dir: dest,
        })
    }

    /// Replaces the Git LFS pointer files of a fresh tree by their objects when the
    /// repository's Secret says `enableLfs` ([`lfs`]).
    fn smudge_lfs(&self, url: &str, staging: &Path) -> Result<()> {
        let (clean, creds) = self.split(url);
        if !creds.as_ref().is_some_and(|c| c.enable_lfs) {
            return Ok(());
        }
        let certs = self.certs.read().unwrap_or_else(|p| p.into_inner()).clone();
        let fetch = lfs::Fetch {
            repo_url: &clean,
            creds: creds.as_ref(),
            certs: &certs,
            limits: &self.limits,
        };
        let redactor =
            crate::redact::Redactor::new(creds.iter().flat_map(RepoCredentials::secrets));
        lfs::smudge(staging, &fetch).map_err(|reason| Error::RepositoryRefused {
            url: clean.clone(),
            reason: redactor.clean(&reason),
        })
    }

    /// What Argo's `RevisionMetadata` says about `revision` (a ref or SHA): resolved, fetched
    /// when the cache lacks the commit, then read with the tags pointing at it.
    pub fn commit_metadata(&self, url: &str, revision: &str) -> Result<CommitMetadata> {
        let clean = strip_url_credentials(url);
        let commit = self.resolve(url, revision)?;
        if !self.has_commit(url, &commit)? {
            self.fetch_missing(url, &commit, Vec::new())?;
        }
        let repo = self.open_local(url)?;
        metadata::read(&repo, parse_oid(&commit, &clean)?, &clean)
    }

    /// What `revision`, resolved to `commit` (already in the cache, as after
    /// [`GitCache::checkout`]), signs: the annotated tag it names, else the commit itself. When
    /// the cache's tags disagree with the resolution it fetches once; a tag that still does not
    /// name `commit` is an error (nothing else is verified in its place).
    pub fn signed_object(&self, url: &str, revision: &str, commit: &str) -> Result<SignedObject> {
        let clean = strip_url_credentials(url);
        let oid = parse_oid(commit, &clean)?;
        for attempt in 0..2 {
            let repo = self.open_local(url)?;
            match signed::read(&repo, &clean, revision, oid)? {
                signed::Named::Object(o) => return Ok(o),
                signed::Named::Stale if attempt == 0 => self.fetch(url, Vec::new())?,
                signed::Named::Stale => {}
            }
        }
        Err(Error::GitCache {
            url: clean,
            detail: format!(
                "{revision:?} does not name commit {commit} in the fetched refs; its signature \
                 cannot be verified"
            ),
        })
    }

    /// The Git object ids of `paths` (relative to the root; `""` is the root tree) in `commit`,
    /// `None` for a path the commit does not have: equal ids mean equal content, so a render
    /// that reads only those paths gives the same output.
    pub(crate) fn object_ids(
        &self,
        url: &str,
        commit: &str,
        paths: &[PathBuf],
    ) -> Result<Vec<Option<String>>> {
        let clean = strip_url_credentials(url);
        let err = |detail: String| Error::GitCache {
            url: clean.clone(),
            detail,
        };
        let repo = self.open_local(url)?;
        let tree = repo
            .find_object(parse_oid(commit, &clean)?)
            .map_err(|e| err(remote::chain(&e)))?
            .peel_to_commit()
            .map_err(|e| err(remote::chain(&e)))?
            .tree()
            .map_err(|e| err(remote::chain(&e)))?;
        paths
            .iter()
            .map(|p| {
                if p.as_os_str().is_empty() {
                    return Ok(Some(tree.id.to_string()));
                }
                tree.lookup_entry_by_path(p)
                    .map(|e| e.map(|e| e.object_id().to_string()))
                    .map_err(|e| err(remote::chain(&e)))
            })
            .collect()
    }

    fn used(&self, tree: &Path) {
        self.tree_uses
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(tree.to_path_buf(), Instant::now());
    }

    /// Removes the trees of one repository (`dir`) beyond the most recently used few that have
    /// not been handed out for the idle time; a tree seen for the first time (written before a
    /// restart) counts as used now. `keep` is never removed.
    fn sweep_trees(&self, dir: &Path, keep: &Path) {
        let (keep_n, idle) = *self
            .tree_retention
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        let mut uses = self.tree_uses.lock().unwrap_or_else(|p| p.into_inner());
        let mut trees: Vec<(PathBuf, Instant)> = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
            .map(|e| {
                let p = e.path();
                let t = *uses.entry(p.clone()).or_insert(now);
                (p, t)
            })
            .collect();
        trees.sort_by_key(|t| std::cmp::Reverse(t.1));
        for (p, t) in trees.into_iter().skip(keep_n) {
            if p != keep && now.duration_since(t) >= idle {
                make_removable(&p);
                match std::fs::remove_dir_all(&p) {
                    Ok(()) => {
                        uses.remove(&p);
                        tracing::debug!(tree = %p.display(), "removed an unused commit tree");
                    }
                    Err(e) => {
                        tracing::warn!(tree = %p.display(), error = %e, "could not remove an unused commit tree")
                    }
                }
            }
        }
    }

    /// Fetches unless `commit` arrived meanwhile: callers that need the same new commit queue
    /// on the repository's gate, and all but the first find it there.
    fn fetch_missing(&self, url: &str, commit: &str, extra: Vec<String>) -> Result<()> {
        self.fetch_gates.with(&self.repo_key(url), || {
            if self.has_commit(url, commit)? {
                return Ok(());
            }
            self.fetch(url, extra)
        })
    }

    fn fetch(&self, url: &str, extra: Vec<String>) -> Result<()> {
        self.fetches.fetch_add(1, Ordering::Relaxed);
        tracing::debug!(url = %strip_url_credentials(url), "fetching");
        remote::run(self.job(url, remote::Op::Fetch { extra })?).map(|_| ())
    }

    fn has_commit(&self, url: &str, sha: &str) -> Result<bool> {
        if !self.repo_dir(url).join("HEAD").exists() {
            return Ok(false);
        }
        let repo = self.open_local(url)?;
        let oid = parse_oid(sha, &strip_url_credentials(url))?;
        Ok(repo
            .find_object(oid)
            .ok()
            .is_some_and(|o| o.peel_to_commit().is_ok()))
    }

    fn expand_short_sha(&self, url: &str, short: &str) -> Result<Option<String>> {
        let repo = self.open_local(url)?;
        let Ok(id) = repo.rev_parse_single(short) else {
            return Ok(None);
        };
        Ok(id
            .object()
            .ok()
            .and_then(|o| o.peel_to_commit().ok())
            .map(|c| c.id.to_string()))
    }

    fn open_local(&self, url: &str) -> Result<gix::Repository> {
        remote::open(&self.repo_dir(url), None, self.limits.fetch_timeout).map_err(|detail| {
            Error::GitCache {
                url: strip_url_credentials(url),
                detail,
            }
        })
    }

    /// A repository fetched with a project-scoped Secret's credentials is kept (and its
    /// listings and fetches shared) apart from the unscoped copy, so an Application of another
    /// project never reads what only those credentials could fetch.
    fn repo_key(&self, url: &str) -> String {
        match self.split(url).1.and_then(|c| c.project) {
            Some(project) => repo_key(&format!("{}\nproject {project}", self.salt), url),
            None => repo_key(&self.salt, url),
        }
    }

    fn tree_dir(&self, url: &str, commit: &str) -> PathBuf {
        // A tree with LFS objects in place is not the same as one with the pointers.
        let lfs = self.split(url).1.is_some_and(|c| c.enable_lfs);
        self.root
            .join("trees")
            .join(self.repo_key(url))
            .join(if lfs {
                format!("{commit}-lfs")
            } else {
                commit.to_owned()
            })
    }

    fn repo_dir(&self, url: &str) -> PathBuf {
        self.root
            .join("repos")
            .join(format!("{}.git", self.repo_key(url)))
    }

    /// The URL without credentials, and the credentials to use for it: those in the URL itself,
    /// else the best matching repository Secret.
    fn split(&self, url: &str) -> (String, Option<RepoCredentials>) {
        let clean = strip_url_credentials(url);
        // In an ssh URL the user part is the login (`git@host`), not a credential: the key
        // comes from a repository Secret.
        let is_http = url.starts_with("http://") || url.starts_with("https://");
        let inline = url
            .split_once("://")
            .filter(|_| is_http)
            .and_then(|(_, rest)| rest.split(['/', '?']).next())
            .and_then(|authority| authority.rsplit_once('@'))
            .map(|(userinfo, _)| {
                let (user, pass) = userinfo.split_once(':').unwrap_or((userinfo, ""));
                RepoCredentials {
                    url: clean.clone(),
                    username: Some(user.to_owned()),
                    password: Some(pass.to_owned()).filter(|p| !p.is_empty()),
                    ..Default::default()
                }
            });
        let creds = inline.or_else(|| {
            let all = Arc::clone(&self.credentials.read().unwrap_or_else(|p| p.into_inner()));
            RepoCredentials::select(&all, &clean)
                .or_else(|| RepoCredentials::select(&all, url))
                .cloned()
        });
        (clean, creds)
    }

    fn job(&self, url: &str, op: remote::Op) -> Result<remote::Job> {
        self.check_local(url)?;
        let (clean, credentials) = self.split(url);
        if let Some(refusal) = credentials.as_ref().and_then(|c| c.unusable.clone()) {
            return Err(Error::RepositoryUnreachable {
                url: clean,
                detail: refusal,
            });
        }
        let key = self.repo_key(url);
        let is_http = clean.starts_with("http://") || clean.starts_with("https://");
        let ssh_key_path = match credentials
            .as_ref()
            .and_then(|c| c.ssh_private_key.as_ref())
        {
            Some(pem) => {
                if !is_http {
                    ssh::check_key(pem).map_err(|detail| Error::RepositoryUnreachable {
                        url: clean.clone(),
                        detail,
                    })?;
                }
                Some(self.write_key(&key, pem)?)
            }
            None => None,
        };
        let (ssh_command, ssh_log) = if is_http || local_path(url).is_some() {
            (None, None)
        } else {
            let insecure = credentials.as_ref().is_some_and(|c| c.insecure);
            static NEXT_LOG: AtomicU64 = AtomicU64::new(0);
            let n = NEXT_LOG.fetch_add(1, Ordering::Relaxed);
            let log = self.root.join("keys").join(format!("ssh-{key}-{n}.log"));
            let _ = std::fs::remove_file(&log);
            let cmd = ssh::command(
                ssh_key_path.as_deref(),
                &self.write_known_hosts()?,
                insecure,
                &log,
            );
            (Some(cmd), Some(log))
        };
        // gix needs the userinfo-free URL for https, but ssh URLs keep their user (git@host).
        let url_for_git = if clean.starts_with("http") {
            clean.clone()
        } else {
            url.to_owned()
        };
        Ok(remote::Job {
            repo_dir: self.repo_dir(url),
            lock_path: self.root.join("repos").join(format!("{key}.lock")),
            url: url_for_git,
            credentials,
            ssh_command,
            ssh_log,
            certs: self.certs.read().unwrap_or_else(|p| p.into_inner()).clone(),
            tokens: Arc::clone(&self.tokens),
            timeout: self.limits.fetch_timeout,
            op,
        })
    }

    /// The known hosts file `ssh` reads, named by its content so that a fetch under way keeps
    /// the list it started with.
    fn write_known_hosts(&self) -> Result<PathBuf> {
        let text = self
            .known_hosts
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .as_text()
            .to_owned();
        let hash: String = Sha256::digest(text.as_bytes())
            .iter()
            .take(8)
            .map(|b| format!("{b:02x}"))
            .collect();
        let path = self.root.join("keys").join(format!("known_hosts-{hash}"));
        if !path.is_file() {
            let tmp = self
                .root
                .join("keys")
                .join(format!(".known_hosts-{hash}.tmp"));
            std::fs::write(&tmp, text).map_err(Error::io("writing", &tmp))?;
            std::fs::rename(&tmp, &path).map_err(Error::io("renaming into", &path))?;
        }
        Ok(path)
    }

    fn write_key(&self, key: &str, pem: &str) -> Result<PathBuf> {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let path = self.root.join("keys").join(format!("{key}.key"));
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .mode(0o600)
            .open(&path)
            .map_err(Error::io("writing", &path))?;
        let mut pem = pem.to_owned();
        if !pem.ends_with('\n') {
            pem.push('\n');
        }
        file.write_all(pem.as_bytes())
            .map_err(Error::io("writing", &path))?;
        Ok(path)
    }
}

/// A stable directory name for a repository URL under `salt`: SHA-256 of the salt and the URL
/// (Argo's normalisation), so it cannot be computed from the URL alone.
/// `%XX` sequences decoded; `None` when one is malformed or the result is not UTF-8 (then the URL
/// is refused: Git would read it some other way).
fn percent_decoded(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            out.push(u8::from_str_radix(text.get(i + 1..i + 3)?, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The directory a local repository URL names (`file:///d`, `file:/d`, `/d`, `./d`), or `None`
/// for a remote one.
fn local_path(url: &str) -> Option<PathBuf> {
    let lower = url.get(..7).map(str::to_ascii_lowercase);
    if lower.as_deref() == Some("file://") {
        let rest = &url[7..];
        // `file://host/path`: only an empty host or localhost is this machine.
        let path = rest.strip_prefix("localhost").unwrap_or(rest);
        return Some(PathBuf::from(path));
    }
    if url
        .get(..5)
        .is_some_and(|p| p.eq_ignore_ascii_case("file:"))
    {
        return Some(PathBuf::from(&url[5..]));
    }
    (url.starts_with('/') || url.starts_with("./") || url.starts_with("../"))
        .then(|| PathBuf::from(url))
}

pub(crate) fn repo_key(salt: &str, url: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(salt.as_bytes());
    hasher.update(b"\n");
    hasher.update(normalize_url(url).as_bytes());
    hasher
        .finalize()
        .iter()
        .take(16)
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn parse_oid(sha: &str, url: &str) -> Result<gix::ObjectId> {
    gix::ObjectId::from_hex(sha.as_bytes()).map_err(|_| Error::RevisionNotFound {
        url: url.to_owned(),
        revision: sha.to_owned(),
    })
}
