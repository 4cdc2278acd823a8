//! What a renderer is given besides the source options: the tree, the request's context, the
//! tools, limits and caches, and the sandbox and redaction that follow from them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::tool::Tools;
use crate::beneath::RepoDir;
use crate::error::Result;
use crate::git::GitCache;
use crate::helm_repo::HelmRepos;
use crate::limits::Limits;
use crate::oci::OciRegistries;
use crate::redact::Redactor;
use crate::worker::sandbox::View;

/// Everything a renderer needs besides the source options.
pub(crate) struct Context<'a> {
    /// The commit's tree.
    pub root: &'a Path,
    /// The same tree, opened for reads beneath its root.
    pub repo: &'a RepoDir,
    /// The source path, relative to `root` (already checked to stay inside it).
    pub app: &'a Path,
    /// Application name (Helm's default release name).
    pub app_name: &'a str,
    /// Destination namespace (Helm's default `--namespace`).
    pub namespace: &'a str,
    /// Cluster version for Helm's `.Capabilities`, or empty.
    pub kube_version: &'a str,
    /// Cluster API versions for Helm's `.Capabilities`.
    pub api_versions: &'a [String],
    /// Trees of the application's `ref` sources, by ref name, for `$ref/…` value files.
    pub refs: &'a BTreeMap<String, PathBuf>,
    /// The project's `sourceRepos`, which kustomize remote bases must match (`None`: no
    /// project known, any https/ssh Git URL).
    pub source_repos: Option<&'a [String]>,
    pub tools: &'a Tools,
    pub limits: &'a Limits,
    pub redactor: &'a Redactor,
    /// Chart repositories, for dependencies that are not vendored.
    pub helm_repos: &'a HelmRepos,
    /// OCI registries, for `oci://` dependencies that are not vendored.
    pub oci: &'a OciRegistries,
    /// A hard refresh: chart repository indexes are fetched again.
    pub hard_refresh: bool,
    /// The Git cache, through which kustomize remote bases are fetched (never by kustomize).
    pub git: &'a GitCache,
    /// The cache directory: hidden from every tool; render scratch space lives under it too.
    pub cache_dir: &'a Path,
    /// argocd-cm's `kustomize.buildOptions` as written ([`super::kustomize_options`]).
    pub kustomize_build_options: &'a str,
}

impl Context<'_> {
    /// A scratch directory for one render, under the cache directory (so hidden from every
    /// other render's sandbox), removed when dropped.
    pub(crate) fn scratch(&self, prefix: &str) -> Result<tempfile::TempDir> {
        let base = self.cache_dir.join("tmp");
        std::fs::create_dir_all(&base).map_err(crate::error::Error::io("creating", &base))?;
        tempfile::Builder::new()
            .prefix(prefix)
            .tempdir_in(&base)
            .map_err(crate::error::Error::io(
                "creating a temporary directory in",
                &base,
            ))
    }

    /// The sandbox of a tool rendering this source: the cache and credentials hidden, no
    /// network, the tree and the trees of `$ref` sources shown read-only.
    pub(crate) fn view(&self) -> View {
        let mut view = View::hiding(self.cache_dir).keeping(self.root);
        view.keep.extend(self.refs.values().cloned());
        view
    }

    /// The redactor for a tool's errors: credentials, and absolute paths (the tree's become
    /// repository-relative; `extra` roots are shown by their label; any other is `<path>`).
    pub(crate) fn path_redactor(&self, extra: Vec<(PathBuf, String)>) -> Redactor {
        let mut roots = vec![(self.root.to_path_buf(), String::new())];
        roots.extend(
            self.refs
                .iter()
                .map(|(name, dir)| (dir.clone(), format!("${name}"))),
        );
        roots.extend(extra);
        self.redactor.clone().with_paths(roots)
    }
}
