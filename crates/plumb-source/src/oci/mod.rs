//! Sources in OCI registries: Helm charts (`chart` with `repoURL: oci://host/path`, or with
//! `repoURL: host/path` and a repository Secret saying `enableOCI: "true"`) and Argo CD 3.1's
//! OCI artifacts (`repoURL: oci://host/path/name`, no `chart`: a layer of plain manifests, a
//! kustomization or a chart, with `path` inside it).
//!
//! `targetRevision` is a tag, a version constraint resolved over the repository's tags (tags
//! spell `+` as `_`), or a manifest digest ([`reference::Wanted`]). The manifest is fetched
//! (at most 4 MiB) and its sha256 checked against the digest asked for or announced; its one
//! content layer ([`manifest::content_layer`]) is downloaded (at most its declared size, which
//! must be under [`Limits::max_download_bytes`]), its sha256 checked, and it is unpacked by the
//! chart archive code (`helm_repo::archive`: no links, no escapes, the same size limits).
//!
//! Cache: `<cache>/oci/<key>/{tree/,layer}` with `<key>` = SHA-256 of the salt, the repository
//! and the manifest digest. A digest names immutable content, so an entry is used for good; what
//! a tag or a constraint resolves to is kept in memory for
//! [`Limits::revision_cache_expiration`] and asked again after that and on a hard refresh.

pub(crate) mod client;
pub(crate) mod manifest;
pub(crate) mod reference;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use crate::credentials::{RepoCredentials, TlsCerts};
use crate::error::{Error, Result};
use crate::helm_repo::ChartCheckout;
use crate::helm_repo::archive::{self, Layout};
use crate::helm_repo::constraint::{Constraint, max_satisfying};
use crate::helm_repo::http::Failure;
use crate::limits::{Limits, human_bytes, millis};
use crate::permissions::{make_removable, read_only};
use crate::redact::Redactor;
use client::{ReadError, Registry};
use reference::{Reference, Wanted, tag_to_version};

/// An OCI artifact on disk, verified and unpacked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OciArtifact {
    /// `oci://registry/repository`.
    pub url: String,
    /// The manifest digest (`sha256:…`), what Argo CD records as the revision.
    pub digest: String,
    /// The artifact's files (a chart's files at the top), read-only.
    pub dir: PathBuf,
}

#[derive(Debug, Default)]
struct Access {
    credentials: Vec<RepoCredentials>,
    certs: TlsCerts,
    redactor: Redactor,
}

/// OCI registry client and artifact cache, shared by every render.
#[derive(Debug)]
pub struct OciRegistries {
    root: PathBuf,
    salt: String,
    limits: Limits,
    /// [`Limits::revision_cache_expiration`] in milliseconds, changed by [`Self::set_limits`].
    ttl_ms: AtomicU64,
    access: RwLock<Arc<Access>>,
    tags: Mutex<HashMap<String, KeptTags>>,
    digests: Mutex<HashMap<String, (Instant, String)>>,
    manifest_fetches: AtomicU64,
    tag_listings: AtomicU64,
    downloads: AtomicU64,
    max_download: AtomicU64,
}

/// A repository's tag list and when it was fetched.
type KeptTags = (Instant, Arc<Vec<String>>);

/// What was fetched, before it is shaped as a chart or an artifact.
struct Fetched {
    repo_ref: String,
    digest: String,
    /// The tag chosen (for a constraint) or asked for.
    tag: Option<String>,
    dir: PathBuf,
    layer: PathBuf,
}

impl OciRegistries {
    /// A cache under `root`, naming its entries with `salt`.
    pub(crate) fn new(root: PathBuf, salt: &str, limits: Limits) -> Result<Self> {
        std::fs::create_dir_all(&root).map_err(Error::io("creating", &root))?;
        Ok(Self {
            root,
            salt: salt.to_owned(),
            max_download: AtomicU64::new(limits.max_download_bytes),
            ttl_ms: AtomicU64::new(millis(limits.revision_cache_expiration)),
            limits,
            access: RwLock::new(Arc::new(Access::default())),
            tags: Mutex::new(HashMap::new()),
            digests: Mutex::new(HashMap::new()),
            manifest_fetches: AtomicU64::new(0),
            tag_listings: AtomicU64::new(0),
            downloads: AtomicU64::new(0),
        })
    }

    /// Uses these download and expiration limits from now on (the settings ConfigMap changed).
    pub(crate) fn set_limits(&self, limits: &Limits) {
        self.max_download
            .store(limits.max_download_bytes, Ordering::Relaxed);
        self.ttl_ms
            .store(millis(limits.revision_cache_expiration), Ordering::Relaxed);
    }

    /// Whether something kept since `at` may still be used.
    fn fresh(&self, at: Instant) -> bool {
        at.elapsed() < Duration::from_millis(self.ttl_ms.load(Ordering::Relaxed))
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

    fn access(&self) -> Arc<Access> {
        Arc::clone(&self.access.read().unwrap_or_else(|p| p.into_inner()))
    }

    /// Whether a chart source's `repoURL` is an OCI registry: `oci://…`, or a URL without a
    /// scheme whose repository Secret says `enableOCI: "true"` (or `type: oci`).
    pub fn is_oci_chart_repo(&self, repo_url: &str) -> bool {
        let url = repo_url.trim();
        if url.starts_with("oci://") {
            return true;
        }
        !url.contains("://")
            && select(&self.access().credentials, url)
                .is_some_and(|c| c.enable_oci || c.kind == "oci")
    }

    /// How many manifests were downloaded (for tests and metrics).
    pub fn manifest_fetch_count(&self) -> u64 {
        self.manifest_fetches.load(Ordering::Relaxed)
    }

    /// How many tag lists were downloaded (for tests and metrics).
    pub fn tag_list_count(&self) -> u64 {
        self.tag_listings.load(Ordering::Relaxed)
    }

    /// How many layers were downloaded (for tests and metrics).
    pub fn download_count(&self) -> u64 {
        self.downloads.load(Ordering::Relaxed)
    }

    /// Pings the registry of `url` (`GET /v2/`) with the credentials that apply to `url`: the
    /// connection check of `repo add` for OCI repositories (Argo's `TestRepository`, which
    /// pings the registry through oras).
    pub fn check_registry(&self, url: &str) -> Result<()> {
        let invalid = |detail: String| Error::UnsupportedSource {
            detail: format!("repoURL {}: {detail}", url.trim()),
        };
        let reference = Reference {
            registry: Reference::registry_of(url).map_err(invalid)?,
            repository: String::new(),
        };
        let access = self.access();
        let creds = select(&access.credentials, url.trim()).cloned();
        let shown = format!("oci://{}", reference.registry);
        Registry::new(
            &reference,
            creds.as_ref(),
            &access.certs,
            &access.redactor,
            self.limits.fetch_timeout,
        )
        .and_then(|registry| registry.ping())
        .map_err(|e| self.read_error(&shown, "ping", e))
    }

    /// The chart `chart` at `revision` from the OCI repository `url`. The version recorded is
    /// the revision as written when it is a version or a tag, the chosen tag (as a version, `_`
    /// back to `+`) for a constraint, the digest for a digest.
    pub fn chart(
        &self,
        url: &str,
        chart: &str,
        revision: &str,
        hard: bool,
    ) -> Result<ChartCheckout> {
        let f = self.fetch(url, Some(chart), revision, hard)?;
        let version = match (&f.tag, Wanted::parse(revision, true)) {
            (
                Some(_),
                Ok(Wanted::Tag {
                    constraint: None, ..
                }),
            ) => revision.trim().to_owned(),
            (Some(tag), _) => tag_to_version(tag),
            (None, _) => f.digest.clone(),
        };
        Ok(ChartCheckout {
            url: f.repo_ref,
            chart: chart.to_owned(),
            version,
            dir: f.dir,
            archive: f.layer,
        })
    }

    /// The OCI artifact `url` at `revision` (a tag, a constraint or a digest).
    pub fn artifact(&self, url: &str, revision: &str, hard: bool) -> Result<OciArtifact> {
        let f = self.fetch(url, None, revision, hard)?;
        Ok(OciArtifact {
            url: f.repo_ref,
            digest: f.digest,
            dir: f.dir,
        })
    }

    fn fetch(&self, url: &str, chart: Option<&str>, revision: &str, hard: bool) -> Result<Fetched> {
        let reference =
            Reference::parse(url, chart).map_err(|detail| Error::UnsupportedSource {
                detail: format!("repoURL {}: {detail}", url.trim()),
            })?;
        let repo_ref = reference.display();
        let not_found = |detail: String| Error::ChartNotFound {
            url: repo_ref.clone(),
            chart: chart.unwrap_or("").to_owned(),
            revision: revision.trim().to_owned(),
            detail,
        };
        let wanted = Wanted::parse(revision, chart.is_some()).map_err(not_found)?;
        let access = self.access();
        let creds = select(&access.credentials, url.trim()).cloned();
        let registry = Registry::new(
            &reference,
            creds.as_ref(),
            &access.certs,
            &access.redactor,
            self.limits.fetch_timeout,
        )
        .map_err(|e| self.read_error(&repo_ref, "registry", e))?;
        let at = Asked {
            registry: &registry,
            repo_ref: &repo_ref,
            wanted: &wanted,
            hard,
            not_found: &not_found,
        };
        let (tag, manifest) = match self.locate(&at)? {
            Located::Done(fetched) => return Ok(*fetched),
            Located::At { tag, manifest } => (tag, manifest),
        };
        let (tag, (body, announced)) = match self.manifest_of(&at, tag, manifest)? {
            Located::Done(fetched) => return Ok(*fetched),
            Located::At { tag, manifest } => (tag, manifest.unwrap_or_default()),
        };
        let digest = sha256(&body);
        let what = format!("{repo_ref}@{}", tag.as_deref().unwrap_or(&digest));
        check_manifest_digest(&wanted, announced, &digest, &what)?;
        self.remember_tag(&repo_ref, tag.as_deref(), &digest);
        if let Some(hit) = self.cached(&repo_ref, &digest) {
            return Ok(Fetched {
                repo_ref,
                digest,
                tag,
                dir: hit.0,
                layer: hit.1,
            });
        }
        let content = Content {
            body: &body,
            chart: chart.is_some(),
            digest: &digest,
            what: &what,
        };
        let (dir, layer_path) = self.download_layer(&registry, &repo_ref, &content, &access)?;
        Ok(Fetched {
            repo_ref,
            digest,
            tag,
            dir,
            layer: layer_path,
        })
    }

    /// Resolves the revision asked to a tag (or a digest), fetching the manifest on the way when
    /// a tag is asked; a digest or tag whose content is already on disk is done.
    fn locate(&self, at: &Asked<'_>) -> Result<Located> {
        let repo_ref = at.repo_ref;
        let located = match at.wanted {
            Wanted::Digest(d) => {
                if let Some(hit) = self.cached(repo_ref, d) {
                    return Ok(Located::Done(Box::new(Fetched {
                        repo_ref: repo_ref.to_owned(),
                        digest: d.clone(),
                        tag: None,
                        dir: hit.0,
                        layer: hit.1,
                    })));
                }
                Located::At {
                    tag: None,
                    manifest: None,
                }
            }
            Wanted::Tag { tag, constraint } => {
                if !at.hard
                    && let Some(hit) = self.remembered(repo_ref, tag)
                {
                    return Ok(Located::Done(Box::new(hit)));
                }
                match self.get_manifest(at.registry, repo_ref, tag) {
                    Ok(m) => Located::At {
                        tag: Some(tag.clone()),
                        manifest: Some(m),
                    },
                    Err(ReadError::Failed(Failure::Status(404))) => match constraint {
                        Some(c) => Located::At {
                            tag: Some(self.resolve_constraint(
                                at.registry,
                                repo_ref,
                                c,
                                at.hard,
                                at.not_found,
                            )?),
                            manifest: None,
                        },
                        None => {
                            return Err((at.not_found)(format!("the repository has no tag {tag}")));
                        }
                    },
                    Err(e) => return Err(self.read_error(repo_ref, "manifest", e)),
                }
            }
            Wanted::Constraint(c) => Located::At {
                tag: Some(self.resolve_constraint(
                    at.registry,
                    repo_ref,
                    c,
                    at.hard,
                    at.not_found,
                )?),
                manifest: None,
            },
        };
        Ok(located)
    }

    /// The manifest of what [`OciRegistries::locate`] found, fetched when it is not at hand yet
    /// (a tag's content already on disk is done).
    fn manifest_of(
        &self,
        at: &Asked<'_>,
        tag: Option<String>,
        manifest: Option<(Vec<u8>, Option<String>)>,
    ) -> Result<Located> {
        if manifest.is_some() {
            return Ok(Located::At { tag, manifest });
        }
        let repo_ref = at.repo_ref;
        let reference = match (at.wanted, &tag) {
            (Wanted::Digest(d), _) => d.clone(),
            (_, Some(t)) => {
                if !at.hard
                    && let Some(hit) = self.remembered(repo_ref, t)
                {
                    return Ok(Located::Done(Box::new(hit)));
                }
                t.clone()
            }
            (_, None) => return Err((at.not_found)("nothing to look up".into())),
        };
        let manifest = self
            .get_manifest(at.registry, repo_ref, &reference)
            .map_err(|e| match e {
                ReadError::Failed(Failure::Status(404)) => {
                    (at.not_found)(format!("the repository has no manifest {reference}"))
                }
                e => self.read_error(repo_ref, "manifest", e),
            })?;
        Ok(Located::At {
            tag,
            manifest: Some(manifest),
        })
    }

    /// Remembers the digest a tag named, for the TTL.
    fn remember_tag(&self, repo_ref: &str, tag: Option<&str>, digest: &str) {
        if let Some(t) = tag
            && let Ok(mut map) = self.digests.lock()
        {
            map.insert(
                format!("{repo_ref}:{t}"),
                (Instant::now(), digest.to_owned()),
            );
        }
    }

    /// Downloads the content layer of the manifest, checks its digest and stores it.
    fn download_layer(
        &self,
        registry: &Registry<'_>,
        repo_ref: &str,
        content: &Content<'_>,
        access: &Access,
    ) -> Result<(PathBuf, PathBuf)> {
        let what = content.what;
        let limit = self.max_download.load(Ordering::Relaxed);
        let layer =
            manifest::content_layer(content.body, content.chart, limit).map_err(|detail| {
                Error::ChartArchive {
                    chart: what.to_owned(),
                    detail: access.redactor.clean(&detail),
                }
            })?;
        self.downloads.fetch_add(1, Ordering::Relaxed);
        tracing::debug!(repository = %repo_ref, digest = %layer.digest, "downloading OCI layer");
        let blob = registry
            .blob(&layer.digest, layer.size)
            .map_err(|e| match e {
                ReadError::Failed(Failure::TooLarge) => Error::OciDigestMismatch {
                    what: format!(
                        "{what} (layer longer than the {} bytes its manifest declares)",
                        layer.size
                    ),
                    expected: layer.digest.clone(),
                    actual: "not computed".into(),
                },
                e => self.read_error(repo_ref, "layer", e),
            })?;
        let actual = sha256(&blob);
        if actual != layer.digest {
            return Err(Error::OciDigestMismatch {
                what: format!("{what} (layer)"),
                expected: layer.digest,
                actual,
            });
        }
        self.store(repo_ref, content.digest, &blob, &layer, what)
    }

    fn get_manifest(
        &self,
        registry: &Registry<'_>,
        repo_ref: &str,
        at: &str,
    ) -> std::result::Result<(Vec<u8>, Option<String>), ReadError> {
        self.manifest_fetches.fetch_add(1, Ordering::Relaxed);
        tracing::debug!(repository = %repo_ref, reference = at, "fetching OCI manifest");
        registry.manifest(at)
    }

    /// A tag whose digest was seen within the TTL and whose content is on disk.
    fn remembered(&self, repo_ref: &str, tag: &str) -> Option<Fetched> {
        let digest = {
            let map = self.digests.lock().ok()?;
            let (at, d) = map.get(&format!("{repo_ref}:{tag}"))?;
            self.fresh(*at).then(|| d.clone())?
        };
        let (dir, layer) = self.cached(repo_ref, &digest)?;
        Some(Fetched {
            repo_ref: repo_ref.to_owned(),
            digest,
            tag: Some(tag.to_owned()),
            dir,
            layer,
        })
    }

    /// The tag the constraint selects among the repository's tags (listed again once when the
    /// kept list has no match, as a Helm index is).
    fn resolve_constraint(
        &self,
        registry: &Registry<'_>,
        repo_ref: &str,
        text: &str,
        hard: bool,
        not_found: &dyn Fn(String) -> Error,
    ) -> Result<String> {
        let constraint = Constraint::parse(text).map_err(|e| {
            not_found(format!(
                "targetRevision is neither a tag, a digest nor a constraint: {e}"
            ))
        })?;
        let mut refetch = hard;
        loop {
            let tags = self.tag_list(registry, repo_ref, refetch)?;
            let versions: Vec<String> = tags.iter().map(|t| tag_to_version(t)).collect();
            if let Some(best) = max_satisfying(&constraint, versions.iter().map(String::as_str)) {
                let best = best.to_owned();
                if let Some(i) = versions.iter().position(|v| *v == best) {
                    return Ok(tags[i].clone());
                }
            }
            if refetch {
                return Err(not_found(format!(
                    "no tag of the repository satisfies the constraint ({} tags)",
                    tags.len()
                )));
            }
            refetch = true;
        }
    }

    fn tag_list(
        &self,
        registry: &Registry<'_>,
        repo_ref: &str,
        refetch: bool,
    ) -> Result<Arc<Vec<String>>> {
        if !refetch
            && let Ok(map) = self.tags.lock()
            && let Some((at, tags)) = map.get(repo_ref)
            && self.fresh(*at)
        {
            return Ok(Arc::clone(tags));
        }
        self.tag_listings.fetch_add(1, Ordering::Relaxed);
        tracing::debug!(repository = %repo_ref, "listing OCI tags");
        let tags = Arc::new(
            registry
                .tags()
                .map_err(|e| self.read_error(repo_ref, "tag list", e))?,
        );
        if let Ok(mut map) = self.tags.lock() {
            map.insert(repo_ref.to_owned(), (Instant::now(), Arc::clone(&tags)));
        }
        Ok(tags)
    }

    fn read_error(&self, repo_ref: &str, what: &'static str, e: ReadError) -> Error {
        let limit = match what {
            "manifest" => client::MAX_MANIFEST_BYTES,
            _ => self.max_download.load(Ordering::Relaxed),
        };
        match e {
            ReadError::Failed(Failure::TooLarge) => Error::TooLarge {
                what: match what {
                    "manifest" => "OCI manifest",
                    "tag list" => "OCI tag list",
                    _ => "OCI layer",
                },
                limit: human_bytes(limit),
                context: repo_ref.to_owned(),
            },
            ReadError::Failed(f) => Error::RepositoryUnreachable {
                url: repo_ref.to_owned(),
                detail: format!("{what}: {}", f.describe(limit)),
            },
            ReadError::Invalid(detail) => Error::RepositoryUnreachable {
                url: repo_ref.to_owned(),
                detail: format!("{what}: {detail}"),
            },
        }
    }

    fn key(&self, repo_ref: &str, digest: &str) -> String {
        let mut h = Sha256::new();
        let scope = RepoCredentials::cache_scope(&self.access().credentials);
        let mut parts = vec![self.salt.as_str(), "oci", repo_ref, digest];
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

    fn cached(&self, repo_ref: &str, digest: &str) -> Option<(PathBuf, PathBuf)> {
        let dir = self.root.join(self.key(repo_ref, digest));
        let (tree, layer) = (dir.join("tree"), dir.join("layer"));
        (tree.is_dir() && layer.is_file()).then_some((tree, layer))
    }

    fn store(
        &self,
        repo_ref: &str,
        digest: &str,
        blob: &[u8],
        layer: &manifest::Layer,
        what: &str,
    ) -> Result<(PathBuf, PathBuf)> {
        let dest = self.root.join(self.key(repo_ref, digest));
        let staging = tempfile::Builder::new()
            .prefix(".tmp-")
            .tempdir_in(&self.root)
            .map_err(Error::io("creating a temporary directory in", &self.root))?;
        let stage = staging.path().join("entry");
        let layout = if layer.is_chart() {
            Layout::Chart
        } else {
            Layout::Tree
        };
        let written = (|| -> Result<()> {
            archive::unpack_with(
                blob,
                layer.gzip(),
                layout,
                &stage.join("tree"),
                &self.limits,
                what,
            )?;
            let file = stage.join("layer");
            std::fs::write(&file, blob).map_err(Error::io("writing", &file))?;
            read_only(&stage)?;
            match std::fs::rename(&stage, &dest) {
                Ok(()) => Ok(()),
                // Another render won the race; its entry holds the same digest.
                Err(_) if dest.join("tree").is_dir() => Ok(()),
                Err(e) => Err(Error::io("renaming into", &dest)(e)),
            }
        })();
        make_removable(staging.path());
        written?;
        Ok((dest.join("tree"), dest.join("layer")))
    }
}

/// The repository Secret for `url`, compared without `oci://` (Argo CD's Secrets for OCI
/// registries are written either way): an exact repository first, then the longest template.
fn select<'a>(all: &'a [RepoCredentials], url: &str) -> Option<&'a RepoCredentials> {
    let norm = |u: &str| {
        let u = u.trim();
        u.strip_prefix("oci://")
            .unwrap_or(u)
            .trim_end_matches('/')
            .to_ascii_lowercase()
    };
    let want = norm(url);
    // Secrets scoped to another project are out; the project's own exact Secret comes first.
    let project = crate::scope::current();
    let usable = |c: &&RepoCredentials| c.usable_by(project.as_deref());
    let exact = |c: &&RepoCredentials| usable(c) && !c.is_template && norm(&c.url) == want;
    all.iter()
        .filter(exact)
        .find(|c| c.project.is_some())
        .or_else(|| all.iter().find(exact))
        .or_else(|| {
            all.iter()
                .filter(usable)
                .filter(|c| {
                    // Whole path segments only: `registry.corp` must not cover
                    // `registry.corp.evil.com/x`.
                    let prefix = norm(&c.url);
                    c.is_template
                        && want
                            .strip_prefix(&prefix)
                            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
                })
                .max_by_key(|c| c.url.len())
        })
}

/// One fetch's question: the registry, the repository, the revision asked.
struct Asked<'a> {
    registry: &'a Registry<'a>,
    repo_ref: &'a str,
    wanted: &'a Wanted,
    hard: bool,
    not_found: &'a dyn Fn(String) -> Error,
}

/// Where a fetch stands: done (its content already on disk), or at a tag (none for a digest)
/// with its manifest once fetched.
enum Located {
    Done(Box<Fetched>),
    At {
        tag: Option<String>,
        manifest: Option<(Vec<u8>, Option<String>)>,
    },
}

/// A manifest read: its body, whether a chart is asked, its digest, and how it is named.
struct Content<'a> {
    body: &'a [u8],
    chart: bool,
    digest: &'a str,
    what: &'a str,
}

/// Refuses a manifest whose digest is not the one asked, or not the one the registry announced.
fn check_manifest_digest(
    wanted: &Wanted,
    announced: Option<String>,
    digest: &str,
    what: &str,
) -> Result<()> {
    for expected in [
        match wanted {
            Wanted::Digest(d) => Some(d.clone()),
            _ => None,
        },
        announced.filter(|a| a.starts_with("sha256:")),
    ]
    .into_iter()
    .flatten()
    {
        if expected != digest {
            return Err(Error::OciDigestMismatch {
                what: format!("{what} (manifest)"),
                expected,
                actual: digest.to_owned(),
            });
        }
    }
    Ok(())
}

fn sha256(data: &[u8]) -> String {
    let hex: String = Sha256::digest(data)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("sha256:{hex}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn creds(url: &str, template: bool) -> RepoCredentials {
        RepoCredentials {
            url: url.into(),
            is_template: template,
            kind: "helm".into(),
            enable_oci: true,
            ..Default::default()
        }
    }

    #[test]
    fn secrets_match_with_or_without_the_oci_scheme() {
        let all = vec![
            creds("registry.example.com/charts", false),
            creds("oci://registry.example.com/", true),
            creds("oci://registry.example.com/team", true),
        ];
        assert_eq!(
            select(&all, "oci://registry.example.com/charts").map(|c| c.url.as_str()),
            Some("registry.example.com/charts")
        );
        assert_eq!(
            select(&all, "oci://registry.example.com/team/x").map(|c| c.url.as_str()),
            Some("oci://registry.example.com/team")
        );
        assert_eq!(
            select(&all, "registry.example.com/other").map(|c| c.url.as_str()),
            Some("oci://registry.example.com/")
        );
        assert!(select(&all, "oci://elsewhere.example.com/charts").is_none());
    }

    #[test]
    fn a_scheme_less_chart_repo_is_oci_only_when_its_secret_says_so() {
        let tmp = tempfile::tempdir().unwrap();
        let oci = OciRegistries::new(tmp.path().join("oci"), "salt", Limits::default()).unwrap();
        assert!(oci.is_oci_chart_repo("oci://r.example.com/charts"));
        assert!(!oci.is_oci_chart_repo("r.example.com/charts"));
        assert!(!oci.is_oci_chart_repo("https://r.example.com/charts"));
        oci.set_access(
            vec![creds("r.example.com/charts", false)],
            TlsCerts::default(),
        );
        assert!(oci.is_oci_chart_repo("r.example.com/charts"));
        assert!(!oci.is_oci_chart_repo("https://r.example.com/charts"));
    }
}
