//! Which renderer a source needs, decided as Argo CD decides it.
//!
//! Explicit options win (`helm`, `kustomize`, `directory`, `plugin`; more than one is an error,
//! Argo's `ApplicationSource.ExplicitType`). Otherwise the files at the source path decide
//! (`util/app/discovery`): a kustomization file means Kustomize, else a `Chart.yaml` means Helm,
//! else it is a plain Directory (YAML, JSON and Jsonnet).

use std::fmt;
use std::path::Path;

use plumb_model::application::ApplicationSource;
use serde::{Deserialize, Serialize};

use crate::beneath::RepoDir;
use crate::error::{Error, Result};

/// Kustomization file names kustomize accepts, in its own lookup order.
pub const KUSTOMIZATION_FILES: [&str; 3] =
    ["kustomization.yaml", "kustomization.yml", "Kustomization"];

/// The kind of source (Argo's `status.sourceType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum SourceType {
    /// A Helm chart, rendered with `helm template`.
    Helm,
    /// A kustomization, rendered with `kustomize build`.
    Kustomize,
    /// Plain YAML/JSON files and Jsonnet, rendered in-process.
    Directory,
    /// A config management plugin.
    Plugin,
}

impl fmt::Display for SourceType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SourceType::Helm => "Helm",
            SourceType::Kustomize => "Kustomize",
            SourceType::Directory => "Directory",
            SourceType::Plugin => "Plugin",
        })
    }
}

/// Decides the source type of `source` whose path is `dir` on disk.
pub fn detect(source: &ApplicationSource, dir: &Path) -> Result<SourceType> {
    detect_with(source, |name| dir.join(name).is_file())
}

/// [`detect`] for the source path `app` of a checkout, looking beneath its root only.
pub(crate) fn detect_in(
    source: &ApplicationSource,
    repo: &RepoDir,
    app: &Path,
) -> Result<SourceType> {
    detect_with(source, |name| repo.is_file(&app.join(name)))
}

/// True when the source's options decide its type (no plugin discovery then, as in Argo).
pub(crate) fn is_explicit(source: &ApplicationSource) -> bool {
    source.is_helm_chart()
        || source.helm.is_some()
        || source.kustomize.is_some()
        || source.directory.is_some()
        || source.plugin.is_some()
}

fn detect_with(source: &ApplicationSource, has_file: impl Fn(&str) -> bool) -> Result<SourceType> {
    let explicit: Vec<SourceType> = [
        source.helm.as_ref().map(|_| SourceType::Helm),
        source.kustomize.as_ref().map(|_| SourceType::Kustomize),
        source.directory.as_ref().map(|_| SourceType::Directory),
        source.plugin.as_ref().map(|_| SourceType::Plugin),
    ]
    .into_iter()
    .flatten()
    .collect();
    if source.is_helm_chart() {
        // A chart from a Helm repository is rendered by helm whatever else the source says.
        return Ok(SourceType::Helm);
    }
    match explicit.as_slice() {
        [one] => return Ok(*one),
        [] => {}
        _ => {
            return Err(Error::UnsupportedSource {
                detail: "multiple application sources defined (more than one of helm, kustomize, directory, plugin)".into(),
            });
        }
    }
    if KUSTOMIZATION_FILES.iter().any(|f| has_file(f)) {
        Ok(SourceType::Kustomize)
    } else if has_file("Chart.yaml") {
        Ok(SourceType::Helm)
    } else {
        Ok(SourceType::Directory)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use plumb_model::application::{HelmSource, KustomizeSource};

    #[test]
    fn files_decide_unless_options_do() {
        let tmp = tempfile::tempdir().unwrap();
        let src = ApplicationSource {
            repo_url: "file:///r".into(),
            ..Default::default()
        };
        assert_eq!(detect(&src, tmp.path()).unwrap(), SourceType::Directory);
        std::fs::write(tmp.path().join("Chart.yaml"), "name: x\n").unwrap();
        assert_eq!(detect(&src, tmp.path()).unwrap(), SourceType::Helm);
        std::fs::write(tmp.path().join("Kustomization"), "resources: []\n").unwrap();
        assert_eq!(detect(&src, tmp.path()).unwrap(), SourceType::Kustomize);

        let helm = ApplicationSource {
            helm: Some(HelmSource::default()),
            ..src.clone()
        };
        assert_eq!(detect(&helm, tmp.path()).unwrap(), SourceType::Helm);
        let both = ApplicationSource {
            kustomize: Some(KustomizeSource::default()),
            ..helm
        };
        assert!(
            detect(&both, tmp.path())
                .unwrap_err()
                .to_string()
                .contains("multiple application sources")
        );
    }
}
