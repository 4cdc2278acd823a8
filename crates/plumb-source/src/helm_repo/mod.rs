//! Charts from Helm chart repositories (`spec.source.chart` with an http(s) `repoURL`).
//!
//! Argo CD runs `helm pull`; Plumb reads the repository itself so that every byte that comes in
//! passes its limits and trust rules (and so project rules and repository Secrets apply to chart
//! dependencies too): fetch `index.yaml`, pick the version `targetRevision` selects
//! ([`constraint`]), download the archive, check its SHA-256 against the index, unpack it
//! ([`archive`]) into a read-only tree, and render that tree like a chart in Git.
//!
//! Layout under `<cache>/helm/charts/<key>/` (`<key>`: SHA-256 of the cache's salt, the
//! normalised repository URL, the chart name and the version, so no name from a repository or an
//! index ever becomes a path): `chart.tgz` (the verified archive) and `tree/` (its files, 0444).
//! Both are written to a staging directory and renamed into place, then never change: a chart
//! version is immutable, so it is downloaded once and used for good. Indexes are kept in memory
//! for [`Limits::revision_cache_expiration`] and fetched again after that, on a hard
//! refresh, and when a version is asked for that the kept index does not list.

pub(crate) mod archive;
pub(crate) mod constraint;
pub(crate) mod http;
mod index;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use reqwest::Url;
use sha2::{Digest, Sha256};

use crate::credentials::{RepoCredentials, TlsCerts, normalize_url};
use crate::error::{Error, Result};
use crate::limits::{Limits, human_bytes, millis};
use crate::permissions::{make_removable, read_only};
use crate::redact::{Redactor, strip_url_credentials};
use index::{Index, Selection};

/// A chart version on disk, verified and unpacked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChartCheckout {
    /// Repository URL, without credentials.
    pub url: String,
    /// Chart name.
    pub chart: String,
    /// The version: the revision as written when it names a version (as Argo CD records it),
    /// else the index's version that the constraint selected.
    pub version: String,
    /// The chart's files (the archive's top directory), read-only.
    pub dir: PathBuf,
    /// The verified archive, for placing into another chart's `charts/`.
    pub archive: PathBuf,
}

/// Repository access: credentials and CA certificates, swapped as a whole when they change.
#[derive(Debug, Default)]
struct Access {
    credentials: Vec<RepoCredentials>,
    certs: TlsCerts,
    redactor: Redactor,
}

/// Chart repository client and chart cache, shared by every render.
#[derive(Debug)]
pub struct HelmRepos {
    root: PathBuf,
    salt: String,
    limits: Limits,
    /// [`Limits::revision_cache_expiration`] in milliseconds, changed by [`Self::set_limits`].
    index_ttl_ms: AtomicU64,
    access: RwLock<Arc<Access>>,
    indexes: Mutex<HashMap<String, (Instant, Arc<Index>)>>,
    index_fetches: AtomicU64,
    downloads: AtomicU64,
    /// [`Limits::max_download_bytes`], changed while running by [`Self::set_limits`].
    max_download: AtomicU64,
}

impl HelmRepos {
    /// A chart cache under `root`, naming its entries with `salt`.
    pub(crate) fn new(root: PathBuf, salt: &str, limits: Limits) -> Result<Self> {
        let charts = root.join("charts");
        std::fs::create_dir_all(&charts).map_err(Error::io("creating", &charts))?;
        Ok(Self {
            root,
            salt: salt.to_owned(),
            max_download: AtomicU64::new(limits.max_download_bytes),
            index_ttl_ms: AtomicU64::new(millis(limits.revision_cache_expiration)),
            limits,
            access: RwLock::new(Arc::new(Access::default())),
            indexes: Mutex::new(HashMap::new()),
            index_fetches: AtomicU64::new(0),
            downloads: AtomicU64::new(0),
        })
    }

    /// Uses these download and index expiration limits from now on (the settings ConfigMap
    /// changed).
    pub(crate) fn set_limits(&self, limits: &Limits) {
        self.max_download
            .store(limits.max_download_bytes, Ordering::Relaxed);
        self.index_ttl_ms
            .store(millis(limits.revision_cache_expiration), Ordering::Relaxed);
    }

    /// Uses these credentials and CA certificates from now on.
    pub(crate) fn set_access(&self, credentials: Vec<RepoCredentials>, certs: TlsCerts) {
        let redactor = Redactor::new(credentials.iter().flat_map(RepoCredentials::secrets));
        *self.access.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(Access {
            credentials,
            certs,
            redactor,
        });
    }

    /// The URL of the repository whose Secret has `name` (a dependency's `@name`).
    pub(crate) fn url_of_named(&self, name: &str) -> Option<String> {
        self.access()
            .credentials
            .iter()
            .find(|c| !c.is_template && c.name.as_deref() == Some(name))
            .map(|c| c.url.clone())
    }

    /// How many times an `index.yaml` was downloaded (for tests and metrics).
    pub fn index_fetch_count(&self) -> u64 {
        self.index_fetches.load(Ordering::Relaxed)
    }

    /// How many chart archives were downloaded (for tests and metrics).
    pub fn download_count(&self) -> u64 {
        self.downloads.load(Ordering::Relaxed)
    }

    /// Fetches the repository's `index.yaml` afresh with its credentials: the connection check
    /// of `repo add` (Argo's `TestRepository` for Helm repositories).
    pub fn check_index(&self, url: &str) -> Result<()> {
        let clean = strip_url_credentials(url);
        let access = self.access();
        let base = repo_base(&clean)?;
        let creds = self.credentials_for(&access, url, &clean)?;
        self.index(&base, &clean, creds.as_ref(), &access, true)
            .map(drop)
    }

    /// The chart `chart` at `revision` (a version, a constraint, or empty for the latest
    /// release) from the repository `url`. `hard` (a hard refresh) fetches the index again; a
    /// version already on disk is used without asking the repository.
    pub fn chart(
        &self,
        url: &str,
        chart: &str,
        revision: &str,
        hard: bool,
    ) -> Result<ChartCheckout> {
        let clean = strip_url_credentials(url);
        let revision = revision.trim();
        let exact = constraint::parse_version(revision).is_some();
        if exact && let Some(hit) = self.cached(&clean, chart, revision) {
            return Ok(hit);
        }
        let access = self.access();
        let base = repo_base(&clean)?;
        let creds = self.credentials_for(&access, url, &clean)?;
        let mut fresh = false;
        let mut idx = self.index(&base, &clean, creds.as_ref(), &access, hard)?;
        let entry = loop {
            match idx.select(chart, revision) {
                Ok(e) => break e.clone(),
                // A version published since the index was kept: look once more.
                Err(Selection::NoChart | Selection::NoVersion) if !fresh && !hard => {
                    fresh = true;
                    idx = self.index(&base, &clean, creds.as_ref(), &access, true)?;
                }
                Err(why) => {
                    let detail = match why {
                        Selection::NoChart => {
                            "the repository's index.yaml has no such chart".into()
                        }
                        Selection::NoVersion if exact => "no such version in index.yaml".into(),
                        Selection::NoVersion => {
                            "no version in index.yaml satisfies the constraint".into()
                        }
                        Selection::BadConstraint(e) => {
                            format!("targetRevision is neither a version nor a constraint: {e}")
                        }
                    };
                    return Err(Error::ChartNotFound {
                        url: clean,
                        chart: chart.to_owned(),
                        revision: revision.to_owned(),
                        detail,
                    });
                }
            }
        };
        let version = if exact {
            revision.to_owned()
        } else {
            entry.version.clone()
        };
        if let Some(hit) = self.cached(&clean, chart, &version) {
            return Ok(hit);
        }
        self.download(
            &base,
            &clean,
            chart,
            &version,
            &entry,
            creds.as_ref(),
            &access,
        )
    }

    /// Downloads a Helm value file named by URL (`helm.valueFiles`), with the credentials of the
    /// repository Secret that matches it, at most `max_bytes` and within the fetch timeout.
    /// The caller has checked that the project permits the URL.
    pub(crate) fn value_file(&self, url: &str, max_bytes: u64) -> Result<Vec<u8>> {
        let clean = strip_url_credentials(url);
        let unreachable = |detail: String| Error::RepositoryUnreachable {
            url: clean.clone(),
            detail,
        };
        let parsed = Url::parse(url).map_err(|e| unreachable(format!("not a URL: {e}")))?;
        let access = self.access();
        let creds = self.credentials_for(&access, url, &clean)?;
        http::get(
            &parsed,
            &parsed,
            creds.as_ref(),
            &access.certs,
            self.limits.fetch_timeout,
            max_bytes,
            &access.redactor,
        )
        .map_err(|f| match f {
            http::Failure::TooLarge => Error::TooLarge {
                what: "value file",
                limit: human_bytes(max_bytes),
                context: clean.clone(),
            },
            other => unreachable(other.describe(max_bytes)),
        })
    }

    fn access(&self) -> Arc<Access> {
        Arc::clone(&self.access.read().unwrap_or_else(|p| p.into_inner()))
    }

    /// Credentials written into the URL itself, else the best matching repository Secret; an
    /// error naming the field when that Secret cannot be used.
    fn credentials_for(
        &self,
        access: &Access,
        url: &str,
        clean: &str,
    ) -> Result<Option<RepoCredentials>> {
        let inline = Url::parse(url).ok().and_then(|u| {
            (!u.username().is_empty()).then(|| RepoCredentials {
                url: clean.to_owned(),
                username: Some(u.username().to_owned()),
                password: u.password().map(str::to_owned),
                kind: "helm".into(),
                ..Default::default()
            })
        });
        let creds = inline.or_else(|| RepoCredentials::select(&access.credentials, clean).cloned());
        match creds.as_ref().and_then(|c| c.unusable.clone()) {
            Some(refusal) => Err(Error::RepositoryUnreachable {
                url: clean.to_owned(),
                detail: refusal,
            }),
            None => Ok(creds),
        }
    }

    fn key(&self, url: &str, chart: &str, version: &str) -> String {
        let mut h = Sha256::new();
        let scope = RepoCredentials::cache_scope(&self.access().credentials);
        let url = normalize_url(url);
        let mut parts = vec![self.salt.as_str(), &url, chart, version];
        // Unscoped keys stay as they were, so existing entries remain valid.
        if !scope.is_empty() {
            parts.push(&scope);
        }
        for part in parts {
            h.update(part.as_bytes());
            h.update(b"\n");
        }
        h.finalize()
            .iter()
            .take(20)
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    fn cached(&self, url: &str, chart: &str, version: &str) -> Option<ChartCheckout> {
        let dir = self.root.join("charts").join(self.key(url, chart, version));
        let (tree, archive) = (dir.join("tree"), dir.join("chart.tgz"));
        (tree.is_dir() && archive.is_file()).then(|| ChartCheckout {
            url: url.to_owned(),
            chart: chart.to_owned(),
            version: version.to_owned(),
            dir: tree,
            archive,
        })
    }

    fn index(
        &self,
        base: &Url,
        clean: &str,
        creds: Option<&RepoCredentials>,
        access: &Access,
        refetch: bool,
    ) -> Result<Arc<Index>> {
        let key = normalize_url(clean) + &RepoCredentials::cache_scope(&access.credentials);
        if !refetch
            && let Ok(map) = self.indexes.lock()
            && let Some((at, idx)) = map.get(&key)
            && at.elapsed() < Duration::from_millis(self.index_ttl_ms.load(Ordering::Relaxed))
        {
            return Ok(Arc::clone(idx));
        }
        let index_url = base
            .join("index.yaml")
            .map_err(|e| Error::UnsupportedSource {
                detail: format!("repoURL {clean}: {e}"),
            })?;
        self.index_fetches.fetch_add(1, Ordering::Relaxed);
        tracing::debug!(url = %clean, "fetching index.yaml");
        let limit = self.max_download.load(Ordering::Relaxed);
        let body = http::get(
            &index_url,
            base,
            creds,
            &access.certs,
            self.limits.fetch_timeout,
            limit,
            &access.redactor,
        )
        .map_err(|f| match f {
            http::Failure::TooLarge => Error::TooLarge {
                what: "index.yaml",
                limit: human_bytes(limit),
                context: clean.to_owned(),
            },
            other => Error::RepositoryUnreachable {
                url: clean.to_owned(),
                detail: format!("index.yaml: {}", other.describe(limit)),
            },
        })?;
        let text = String::from_utf8(body).map_err(|_| Error::RepositoryUnreachable {
            url: clean.to_owned(),
            detail: "index.yaml is not UTF-8 text".into(),
        })?;
        let idx = Index::parse(&text, &format!("{clean}/index.yaml")).map_err(|detail| {
            Error::InvalidIndex {
                url: clean.to_owned(),
                detail: access.redactor.clean(&detail),
            }
        })?;
        let idx = Arc::new(idx);
        if let Ok(mut map) = self.indexes.lock() {
            map.insert(key, (Instant::now(), Arc::clone(&idx)));
        }
        Ok(idx)
    }

    #[allow(clippy::too_many_arguments)]
    fn download(
        &self,
        base: &Url,
        clean: &str,
        chart: &str,
        version: &str,
        entry: &index::IndexEntry,
        creds: Option<&RepoCredentials>,
        access: &Access,
    ) -> Result<ChartCheckout> {
        let what = format!("chart {chart} {version} from {clean}");
        let archive_url = archive_url(base, entry, &what)?;
        self.downloads.fetch_add(1, Ordering::Relaxed);
        tracing::debug!(chart, version, url = %clean, "downloading chart");
        let limit = self.max_download.load(Ordering::Relaxed);
        let bytes = http::get(
            &archive_url,
            base,
            creds,
            &access.certs,
            self.limits.fetch_timeout,
            limit,
            &access.redactor,
        )
        .map_err(|f| match f {
            http::Failure::TooLarge => Error::TooLarge {
                what: "chart archive",
                limit: human_bytes(limit),
                context: what.clone(),
            },
            other => Error::RepositoryUnreachable {
                url: clean.to_owned(),
                detail: format!(
                    "{chart} {version} ({}): {}",
                    strip_url_credentials(archive_url.as_str()),
                    other.describe(limit)
                ),
            },
        })?;
        check_digest(entry, &bytes, &what)?;
        let dest = self
            .root
            .join("charts")
            .join(self.key(clean, chart, version));
        self.store(&bytes, &dest, &what)?;
        Ok(ChartCheckout {
            url: clean.to_owned(),
            chart: chart.to_owned(),
            version: version.to_owned(),
            dir: dest.join("tree"),
            archive: dest.join("chart.tgz"),
        })
    }

    /// Unpacks the verified archive `bytes` into a staging directory, makes it read-only and
    /// moves it to `dest` (a chart another render stored first is the same chart).
    fn store(&self, bytes: &[u8], dest: &Path, what: &str) -> Result<()> {
        let staging = tempfile::Builder::new()
            .prefix(".tmp-")
            .tempdir_in(self.root.join("charts"))
            .map_err(Error::io(
                "creating a temporary directory in",
                self.root.join("charts"),
            ))?;
        let stage = staging.path().join("entry");
        let written = (|| -> Result<()> {
            archive::unpack(bytes, &stage.join("tree"), &self.limits, what)?;
            let tgz = stage.join("chart.tgz");
            std::fs::write(&tgz, bytes).map_err(Error::io("writing", &tgz))?;
            read_only(&stage)?;
            match std::fs::rename(&stage, dest) {
                Ok(()) => Ok(()),
                // Another render won the race; its entry is the same chart.
                Err(_) if dest.join("tree").is_dir() => Ok(()),
                Err(e) => Err(Error::io("renaming into", dest)(e)),
            }
        })();
        make_removable(staging.path());
        written
    }
}

/// The chart archive's URL: the index entry's first, resolved against the repository URL as
/// Helm does, and http(s) only.
fn archive_url(base: &Url, entry: &index::IndexEntry, what: &str) -> Result<Url> {
    let first = entry.urls.first().ok_or_else(|| Error::ChartArchive {
        chart: what.to_owned(),
        detail: "index.yaml lists no URL for it".into(),
    })?;
    // Helm resolves a relative chart URL against the repository URL.
    let archive_url = base.join(first).map_err(|e| Error::ChartArchive {
        chart: what.to_owned(),
        detail: format!("its URL {first:?} cannot be read: {e}"),
    })?;
    if !matches!(archive_url.scheme(), "http" | "https") {
        return Err(Error::ChartArchive {
            chart: what.to_owned(),
            detail: format!(
                "its URL {} is not http(s)",
                strip_url_credentials(archive_url.as_str())
            ),
        });
    }
    Ok(archive_url)
}

/// Refuses an archive whose SHA-256 is not the digest the index gives.
fn check_digest(entry: &index::IndexEntry, bytes: &[u8], what: &str) -> Result<()> {
    let actual: String = Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    if let Some(expected) = &entry.digest
        && *expected != actual
    {
        return Err(Error::ChartDigestMismatch {
            chart: what.to_owned(),
            expected: expected.clone(),
            actual,
        });
    }
    Ok(())
}

/// The repository URL as a base for `index.yaml` and relative chart URLs (a trailing `/`).
fn repo_base(clean: &str) -> Result<Url> {
    let with_slash = format!("{}/", clean.trim_end_matches('/'));
    let url = Url::parse(&with_slash).map_err(|e| Error::UnsupportedSource {
        detail: format!("repoURL {clean} is not a URL: {e}"),
    })?;
    match url.scheme() {
        "http" | "https" => Ok(url),
        "oci" => Err(Error::UnsupportedSource {
            detail: format!("repoURL {clean}: charts from OCI registries are not supported yet"),
        }),
        other => Err(Error::UnsupportedSource {
            detail: format!(
                "repoURL {clean}: a Helm chart repository must be http(s), not {other}"
            ),
        }),
    }
}
