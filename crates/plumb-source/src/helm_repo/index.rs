//! A chart repository's `index.yaml`: which versions of which charts exist, where their archives
//! are and their SHA-256 digests (Helm's `repo.IndexFile`; Argo CD `util/helm/index.go`).
//!
//! Only the fields Plumb uses are kept. The text is read by plumb-yaml (YAML 1.1 as Go reads
//! it, alias bombs refused, nesting bounded), after the download was already bounded in bytes.

use std::collections::BTreeMap;

use serde_json::Value;

use super::constraint::{Constraint, max_satisfying, parse_version, precedence};

/// One chart version of the index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct IndexEntry {
    /// The version as written (`1.2.3`, `v1.2.3`).
    pub version: String,
    /// Archive URLs, absolute or relative to the repository URL.
    pub urls: Vec<String>,
    /// SHA-256 of the archive (hex), when the index gives one.
    pub digest: Option<String>,
}

/// The charts of one repository.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Index {
    entries: BTreeMap<String, Vec<IndexEntry>>,
}

impl Index {
    /// Reads `index.yaml`; `source` names it in errors.
    pub(crate) fn parse(text: &str, source: &str) -> Result<Self, String> {
        let docs = plumb_yaml::read_documents(text, source).map_err(|e| e.to_string())?;
        let doc = docs
            .into_iter()
            .next()
            .ok_or_else(|| format!("{source} is empty"))?
            .value;
        let entries = match doc.get("entries") {
            Some(Value::Object(map)) => map,
            Some(Value::Null) | None => return Ok(Self::default()),
            Some(_) => return Err(format!("{source}: entries is not a mapping")),
        };
        let mut out = BTreeMap::new();
        for (name, versions) in entries {
            let Some(list) = versions.as_array() else {
                return Err(format!("{source}: entries.{name} is not a list"));
            };
            let mut parsed = Vec::with_capacity(list.len());
            for (i, v) in list.iter().enumerate() {
                let version = match v.get("version") {
                    Some(Value::String(s)) => s.clone(),
                    // `version: 1.10` unquoted is the number 1.1 to YAML, not a version string:
                    // Helm skips such an entry with a warning, and so does Plumb.
                    Some(Value::Number(_)) => {
                        tracing::debug!(source, chart = %name, "skipping an entry whose version is a number");
                        continue;
                    }
                    _ => return Err(format!("{source}: entries.{name}[{i}] has no version")),
                };
                let urls = v
                    .get("urls")
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(Value::as_str)
                            .map(str::to_owned)
                            .collect()
                    })
                    .unwrap_or_default();
                let digest = v
                    .get("digest")
                    .and_then(Value::as_str)
                    .filter(|d| !d.is_empty())
                    .map(str::to_ascii_lowercase);
                parsed.push(IndexEntry {
                    version,
                    urls,
                    digest,
                });
            }
            out.insert(name.clone(), parsed);
        }
        Ok(Self { entries: out })
    }

    /// The versions of `chart`, or `None` when the index does not list it.
    pub(crate) fn chart(&self, chart: &str) -> Option<&[IndexEntry]> {
        self.entries.get(chart).map(Vec::as_slice)
    }

    /// The entry `revision` selects for `chart`, as Argo CD resolves a chart's `targetRevision`:
    /// a version (Masterminds' `NewVersion` accepts it) names that version, the entry written
    /// exactly so first, else the one with equal precedence; anything else is a constraint whose
    /// highest satisfying version is taken. Empty and `HEAD` mean the latest release (`*`).
    pub(crate) fn select(&self, chart: &str, revision: &str) -> Result<&IndexEntry, Selection> {
        let versions = self.chart(chart).ok_or(Selection::NoChart)?;
        let revision = revision.trim();
        if let Some(wanted) = parse_version(revision) {
            return versions
                .iter()
                .find(|e| e.version == revision)
                .or_else(|| {
                    versions.iter().find(|e| {
                        parse_version(&e.version).is_some_and(|v| precedence(&v, &wanted).is_eq())
                    })
                })
                .ok_or(Selection::NoVersion);
        }
        let text = if revision.is_empty() || revision == "HEAD" {
            "*"
        } else {
            revision
        };
        let constraint = Constraint::parse(text).map_err(Selection::BadConstraint)?;
        let best = max_satisfying(&constraint, versions.iter().map(|e| e.version.as_str()))
            .ok_or(Selection::NoVersion)?;
        versions
            .iter()
            .find(|e| e.version == best)
            .ok_or(Selection::NoVersion)
    }
}

/// Why [`Index::select`] found nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Selection {
    /// The index has no chart of that name.
    NoChart,
    /// No version of it matches.
    NoVersion,
    /// The revision is neither a version nor a constraint.
    BadConstraint(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    // As `helm repo index` writes it (trimmed), with relative and absolute URLs.
    const INDEX: &str = r#"apiVersion: v1
entries:
  api:
  - apiVersion: v2
    created: "2026-11-30T10:00:00Z"
    digest: 0A1B2C
    name: api
    type: application
    urls:
    - api-1.3.0.tgz
    version: 1.3.0
  - apiVersion: v2
    digest: ffee
    name: api
    urls:
    - https://charts.example.com/api-1.2.0.tgz
    version: 1.2.0
  - name: api
    urls: [api-2.0.0-rc.1.tgz]
    version: 2.0.0-rc.1
  legacy:
  - name: legacy
    urls: [legacy-1.10.tgz]
    version: 1.10
generated: "2026-11-30T10:00:00Z"
"#;

    #[test]
    fn reads_helm_repo_index_output() {
        let idx = Index::parse(INDEX, "index.yaml").unwrap();
        let api = idx.chart("api").unwrap();
        assert_eq!(api.len(), 3);
        assert_eq!(api[0].digest.as_deref(), Some("0a1b2c"));
        assert_eq!(api[0].urls, ["api-1.3.0.tgz"]);
        assert_eq!(api[2].digest, None);
        // Unquoted 1.10 is the float 1.1 to YAML: skipped rather than misread.
        assert!(idx.chart("legacy").unwrap().is_empty());
        assert!(idx.chart("nope").is_none());
    }

    #[test]
    fn selects_versions_and_constraints_as_argo() {
        let idx = Index::parse(INDEX, "index.yaml").unwrap();
        let v = |rev: &str| idx.select("api", rev).map(|e| e.version.clone());
        assert_eq!(v("1.2.0").unwrap(), "1.2.0");
        assert_eq!(v("v1.2").unwrap(), "1.2.0");
        assert_eq!(v("1.*").unwrap(), "1.3.0");
        assert_eq!(v("").unwrap(), "1.3.0");
        assert_eq!(v("HEAD").unwrap(), "1.3.0");
        assert_eq!(v(">=2.0.0-0").unwrap(), "2.0.0-rc.1");
        assert_eq!(v("2.0.0-rc.1").unwrap(), "2.0.0-rc.1");
        assert_eq!(v("1.4.0"), Err(Selection::NoVersion));
        assert_eq!(v("3.*"), Err(Selection::NoVersion));
        assert!(matches!(v("latest!"), Err(Selection::BadConstraint(_))));
        assert_eq!(
            idx.select("nope", "1.0.0").map(|e| e.version.clone()),
            Err(Selection::NoChart)
        );
    }

    #[test]
    fn malformed_indexes_are_errors() {
        assert!(Index::parse("entries: [1]\n", "index.yaml").is_err());
        assert!(Index::parse("entries:\n  a: 3\n", "index.yaml").is_err());
        assert!(Index::parse("entries:\n  a:\n  - urls: []\n", "index.yaml").is_err());
        assert_eq!(
            Index::parse("apiVersion: v1\n", "index.yaml").unwrap(),
            Index::default()
        );
    }
}
