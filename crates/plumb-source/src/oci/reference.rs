//! Where an OCI source lives and what its `targetRevision` asks for.
//!
//! Argo CD reads two spellings of an OCI Helm chart — `repoURL: oci://host/path` with `chart:
//! name`, and `repoURL: host/path` with `chart: name` and a repository Secret saying
//! `enableOCI: "true"` — and, since 3.1, OCI artifacts without `chart` (`repoURL:
//! oci://host/path/name`, `path: .`). All become a registry (`host[:port]`) and a repository
//! name, checked against the distribution spec's grammar so nothing odd reaches a URL path.

use crate::helm_repo::constraint::parse_version;

/// A registry and a repository in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Reference {
    /// `host[:port]` as written (lower case).
    pub(crate) registry: String,
    /// The repository name (`charts/api`).
    pub(crate) repository: String,
}

/// `host[:port]` checked and lower-cased; Docker Hub's name becomes its API host.
fn registry_host(host: &str) -> Result<String, String> {
    if host.is_empty()
        || !host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-.:[]".contains(&b))
    {
        return Err(format!("{host:?} is not a registry host"));
    }
    let registry = host.to_ascii_lowercase();
    // Docker Hub's API lives on another host than its name, as every OCI client knows.
    if registry == "docker.io" || registry == "index.docker.io" {
        return Ok("registry-1.docker.io".into());
    }
    Ok(registry)
}

impl Reference {
    /// Reads `repo_url` (with or without `oci://`) and, for a chart source, appends the chart's
    /// name to the repository path. `Err` says what is wrong.
    pub(crate) fn parse(repo_url: &str, chart: Option<&str>) -> Result<Self, String> {
        let rest = repo_url.trim();
        let rest = rest
            .strip_prefix("oci://")
            .unwrap_or(rest)
            .trim_end_matches('/');
        if rest.contains("://") {
            return Err("an OCI repository URL has no scheme other than oci://".into());
        }
        if rest.contains('@') || rest.contains('?') || rest.contains('#') {
            return Err("an OCI repository URL holds no credentials, query or fragment".into());
        }
        let (host, path) = match rest.split_once('/') {
            Some((h, p)) => (h, p),
            None => (rest, ""),
        };
        let registry = registry_host(host)?;
        let mut repository = path.to_owned();
        if let Some(c) = chart.filter(|c| !c.is_empty()) {
            if !repository.is_empty() {
                repository.push('/');
            }
            repository.push_str(c);
        }
        if repository.is_empty() {
            return Err("no repository name after the registry host".into());
        }
        if !valid_repository(&repository) {
            return Err(format!(
                "{repository:?} is not an OCI repository name (lower-case letters, digits and \
                 separators . _ - between them, components joined by /)"
            ));
        }
        Ok(Self {
            registry,
            repository,
        })
    }

    /// The registry of `repo_url` (with or without `oci://`, a repository path or none): what a
    /// connection check pings.
    pub(crate) fn registry_of(repo_url: &str) -> Result<String, String> {
        let rest = repo_url.trim();
        let rest = rest.strip_prefix("oci://").unwrap_or(rest);
        if rest.contains("://") {
            return Err("an OCI repository URL has no scheme other than oci://".into());
        }
        if rest.contains('@') || rest.contains('?') || rest.contains('#') {
            return Err("an OCI repository URL holds no credentials, query or fragment".into());
        }
        registry_host(rest.split('/').next().unwrap_or_default())
    }

    /// `oci://registry/repository`, for messages and cache keys.
    pub(crate) fn display(&self) -> String {
        format!("oci://{}/{}", self.registry, self.repository)
    }
}

/// The distribution spec's repository name: `[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*` components
/// joined by `/`, at most 255 characters in all.
fn valid_repository(name: &str) -> bool {
    name.len() <= 255 && name.split('/').all(valid_component)
}

fn valid_component(c: &str) -> bool {
    let b = c.as_bytes();
    if b.is_empty() || !alnum(b[0]) || !alnum(b[b.len() - 1]) {
        return false;
    }
    let mut i = 0;
    while i < b.len() {
        if alnum(b[i]) {
            i += 1;
            continue;
        }
        // A separator run: `.`, `_`, `__` or any number of `-`, between alphanumerics.
        let start = i;
        while i < b.len() && !alnum(b[i]) {
            i += 1;
        }
        let sep = &c[start..i];
        if !(sep == "." || sep == "_" || sep == "__" || sep.bytes().all(|x| x == b'-')) {
            return false;
        }
    }
    true
}

fn alnum(b: u8) -> bool {
    b.is_ascii_lowercase() || b.is_ascii_digit()
}

/// What a `targetRevision` asks of an OCI repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Wanted {
    /// A manifest digest (`sha256:<64 hex>`): content-addressed, never looked up by tag.
    Digest(String),
    /// A tag, looked up as written (with `+` spelled `_`, as Helm pushes it); when no such tag
    /// exists and `constraint` is set, the tags are listed and the constraint decides.
    Tag {
        /// The tag to ask the registry for.
        tag: String,
        /// The revision read as a constraint, when it is one.
        constraint: Option<String>,
    },
    /// A version constraint only (`1.2.*`, `>=1 <2`, `*`): resolved over the tag list.
    Constraint(String),
}

impl Wanted {
    /// Reads `revision` for a chart source (`chart = true`: empty means the highest release,
    /// as for a Helm repository) or an artifact (`latest`, as `docker pull` does).
    pub(crate) fn parse(revision: &str, chart: bool) -> Result<Self, String> {
        let revision = revision.trim();
        if let Some(hex) = revision.strip_prefix("sha256:") {
            return if hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                Ok(Self::Digest(format!("sha256:{}", hex.to_ascii_lowercase())))
            } else {
                Err(format!(
                    "{revision:?} is not a sha256 digest (64 hex digits)"
                ))
            };
        }
        if revision.contains(':') && !revision.contains(' ') && revision.split(':').count() == 2 {
            let algo = revision.split(':').next().unwrap_or_default();
            if algo.bytes().all(|b| b.is_ascii_alphanumeric()) && !algo.is_empty() {
                return Err(format!(
                    "{revision:?}: only sha256 digests are supported as a targetRevision"
                ));
            }
        }
        if revision.is_empty() || revision == "HEAD" {
            return Ok(if chart {
                Self::Constraint("*".into())
            } else {
                Self::Tag {
                    tag: "latest".into(),
                    constraint: None,
                }
            });
        }
        let tag = revision.replace('+', "_");
        if valid_tag(&tag) {
            let constraint = (parse_version(revision).is_none()).then(|| revision.to_owned());
            return Ok(Self::Tag { tag, constraint });
        }
        Ok(Self::Constraint(revision.to_owned()))
    }
}

/// The distribution spec's tag: `[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}`.
pub(crate) fn valid_tag(tag: &str) -> bool {
    let b = tag.as_bytes();
    !b.is_empty()
        && b.len() <= 128
        && (b[0].is_ascii_alphanumeric() || b[0] == b'_')
        && b.iter()
            .all(|&c| c.is_ascii_alphanumeric() || b"._-".contains(&c))
}

/// A tag as a version string: Helm pushes `1.2.3+build` as the tag `1.2.3_build`.
pub(crate) fn tag_to_version(tag: &str) -> String {
    tag.replace('_', "+")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chart_and_artifact_urls_become_a_registry_and_a_repository() {
        let r = Reference::parse("oci://127.0.0.1:5000/charts", Some("api")).unwrap();
        assert_eq!(r.registry, "127.0.0.1:5000");
        assert_eq!(r.repository, "charts/api");
        assert_eq!(r.display(), "oci://127.0.0.1:5000/charts/api");
        // Argo's enableOCI spelling: no scheme.
        let r = Reference::parse("registry.example.com/team/charts/", Some("api")).unwrap();
        assert_eq!(
            (r.registry.as_str(), r.repository.as_str()),
            ("registry.example.com", "team/charts/api")
        );
        // A chart at the registry's root, and an artifact without a chart.
        let r = Reference::parse("oci://Registry.Example.com", Some("api")).unwrap();
        assert_eq!(
            (r.registry.as_str(), r.repository.as_str()),
            ("registry.example.com", "api")
        );
        let r = Reference::parse("oci://docker.io/bitnamicharts/nginx", None).unwrap();
        assert_eq!(r.registry, "registry-1.docker.io");
        assert_eq!(r.repository, "bitnamicharts/nginx");
    }

    #[test]
    fn odd_urls_and_names_are_refused() {
        for (url, chart) in [
            ("oci://host", None),
            ("oci://host/../etc", None),
            ("oci://host/charts", Some("../x")),
            ("oci://host/Charts/api", None),
            ("oci://host/charts/a//b", None),
            ("oci://host/charts/-a", None),
            ("oci://user:pw@host/charts", Some("api")),
            ("https://host/charts", Some("api")),
            ("oci://host/charts?x=1", Some("api")),
            ("oci:///charts", Some("api")),
        ] {
            assert!(
                Reference::parse(url, chart).is_err(),
                "{url} {chart:?} was accepted"
            );
        }
        for ok in ["a", "a.b", "a_b", "a__b", "a---b", "a/b/c", "x9"] {
            assert!(valid_repository(ok), "{ok}");
        }
        for bad in ["a._b", "a___b", "_a", "a.", "A", "a b", ""] {
            assert!(!valid_repository(bad), "{bad}");
        }
    }

    #[test]
    fn revisions_are_digests_tags_or_constraints() {
        let d = format!("sha256:{}", "AB".repeat(32));
        assert_eq!(
            Wanted::parse(&d, true).unwrap(),
            Wanted::Digest(format!("sha256:{}", "ab".repeat(32)))
        );
        assert!(Wanted::parse("sha256:abc", true).is_err());
        assert!(
            Wanted::parse(&format!("sha512:{}", "a".repeat(128)), true)
                .unwrap_err()
                .contains("only sha256")
        );
        // An exact version is a tag; `+` is pushed as `_`.
        assert_eq!(
            Wanted::parse("1.2.3+build.7", true).unwrap(),
            Wanted::Tag {
                tag: "1.2.3_build.7".into(),
                constraint: None
            }
        );
        // A tag-shaped constraint is tried as a tag first, as Argo CD does.
        assert_eq!(
            Wanted::parse("1.2.x", true).unwrap(),
            Wanted::Tag {
                tag: "1.2.x".into(),
                constraint: Some("1.2.x".into())
            }
        );
        assert_eq!(
            Wanted::parse(">=1.0 <2", true).unwrap(),
            Wanted::Constraint(">=1.0 <2".into())
        );
        assert_eq!(
            Wanted::parse("1.2.*", true).unwrap(),
            Wanted::Constraint("1.2.*".into())
        );
        assert_eq!(
            Wanted::parse("", true).unwrap(),
            Wanted::Constraint("*".into())
        );
        assert_eq!(
            Wanted::parse("HEAD", false).unwrap(),
            Wanted::Tag {
                tag: "latest".into(),
                constraint: None
            }
        );
        assert_eq!(tag_to_version("1.0.0_rc.1"), "1.0.0+rc.1");
        assert!(valid_tag("v1.2.3") && valid_tag("_x") && !valid_tag(".x") && !valid_tag("a/b"));
        assert!(!valid_tag(&"a".repeat(129)));
    }
}
