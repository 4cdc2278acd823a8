//! The one error type of plumb-source.
//!
//! Every variant names what was being done and on what (repository URL with credentials stripped,
//! file path relative to the repository root, revision). The controller maps any of them to sync
//! status `Unknown` with a `ComparisonError` condition; none of them ever yields an empty desired set.

use std::path::PathBuf;
use std::time::Duration;

/// A failure of fetching, resolving, rendering or caching manifests.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The repository could not be reached, listed or fetched.
    #[error("repository {url} is unreachable: {detail}")]
    RepositoryUnreachable {
        /// Repository URL, without credentials.
        url: String,
        /// What the Git layer reported (credentials removed).
        detail: String,
    },
    /// Fetching or listing the repository took longer than the configured limit.
    #[error("fetching {url} took longer than {limit:?}")]
    FetchTimeout {
        /// Repository URL, without credentials.
        url: String,
        /// The limit that was hit.
        limit: Duration,
    },
    /// The revision names no branch, tag, ref or commit of the repository.
    #[error("revision {revision:?} not found in {url}")]
    RevisionNotFound {
        /// Repository URL, without credentials.
        url: String,
        /// The revision as given (`targetRevision`).
        revision: String,
    },
    /// A Helm chart repository has no chart of that name, or no version `targetRevision` selects.
    #[error("chart {chart} {revision:?} from {url}: {detail}")]
    ChartNotFound {
        /// Repository URL, without credentials.
        url: String,
        /// The chart name (`spec.source.chart` or a dependency's name).
        chart: String,
        /// The version or constraint asked for.
        revision: String,
        /// Why nothing matched.
        detail: String,
    },
    /// A chart repository's `index.yaml` cannot be read.
    #[error("index.yaml of {url} is invalid: {detail}")]
    InvalidIndex {
        /// Repository URL, without credentials.
        url: String,
        /// What is wrong with it.
        detail: String,
    },
    /// A downloaded chart archive does not have the SHA-256 digest the index gives for it.
    #[error(
        "{chart}: the archive's sha256 is {actual}, the repository index says {expected}; refusing it"
    )]
    ChartDigestMismatch {
        /// `chart <name> <version> from <url>`.
        chart: String,
        /// The digest in `index.yaml`.
        expected: String,
        /// The digest of what was downloaded.
        actual: String,
    },
    /// Something downloaded from an OCI registry does not have the digest it was asked by or
    /// announced with.
    #[error("{what}: the sha256 digest is {actual}, expected {expected}; refusing it")]
    OciDigestMismatch {
        /// `oci://registry/repository@tag (layer)`.
        what: String,
        /// The digest asked for or declared by the manifest.
        expected: String,
        /// The digest of what was downloaded.
        actual: String,
    },
    /// A chart archive is malformed or holds something a chart may not (a link, a path that
    /// leaves the chart, a device).
    #[error("{chart}: {detail}")]
    ChartArchive {
        /// `chart <name> <version> from <url>`.
        chart: String,
        /// What is wrong with the archive.
        detail: String,
    },
    /// A chart dependency that is not vendored could not be fetched.
    #[error("{file}: dependency {name}: {detail}")]
    ChartDependency {
        /// The file that declares it (`charts/api/Chart.yaml`).
        file: String,
        /// The dependency's name.
        name: String,
        /// Why it could not be fetched.
        detail: String,
    },
    /// A config management plugin could not be found, or one of its commands failed (its
    /// standard error included, bounded and with credentials removed).
    #[error("config management plugin {plugin}: {detail}")]
    Plugin {
        /// The plugin's name (`<name>-<version>`), or `(discovery)`.
        plugin: String,
        /// What went wrong.
        detail: String,
    },
    /// The local Git cache is damaged or could not be written.
    #[error("git cache for {url}: {detail}")]
    GitCache {
        /// Repository URL, without credentials.
        url: String,
        /// What went wrong (credentials removed).
        detail: String,
    },
    /// A repository Secret is not in Argo CD's repository-secret format.
    #[error("repository secret {name}: {detail}")]
    InvalidSecret {
        /// `namespace/name` of the Secret.
        name: String,
        /// What is wrong with it.
        detail: String,
    },
    /// A symbolic link in the repository points outside the repository.
    #[error("repository {url} at {commit} contains an out-of-bounds symlink: {path} -> {target}")]
    SymlinkOutOfBounds {
        /// Repository URL, without credentials.
        url: String,
        /// Commit SHA.
        commit: String,
        /// The link, relative to the repository root.
        path: String,
        /// Where it points.
        target: String,
    },
    /// Reading a path meant following a symbolic link that leaves the repository root (through
    /// any chain of links), or links that loop. Found when a file is opened beneath the root or
    /// when the tree is checked before an external tool reads it.
    #[error("{path}: symlink {link} -> {target} {problem}")]
    UnsafeSymlink {
        /// The path being read, relative to the repository root.
        path: String,
        /// The link that leads out (or loops), relative to the repository root.
        link: String,
        /// Where that link points, as written in the repository.
        target: String,
        /// `leads outside the repository root` or what else is wrong.
        problem: &'static str,
    },
    /// A path given by the source (path, value file, kustomize resource, Jsonnet lib or import)
    /// resolves outside the repository root.
    #[error("{field}: {path} resolves outside the repository root")]
    PathOutsideRepository {
        /// The source field or file that named the path (`spec.source.helm.valueFiles`,
        /// `overlays/prod/kustomization.yaml: resources`).
        field: String,
        /// The offending path as written.
        path: String,
    },
    /// A kustomization names a remote base or resource Plumb does not let kustomize fetch:
    /// `file://`, plain `http://`, another scheme, or a repository outside the project's
    /// `sourceRepos`.
    #[error("{field}: remote target {url} is refused: {reason}")]
    RemoteBaseRefused {
        /// The kustomization file and field that named it.
        field: String,
        /// The target as written (credentials removed).
        url: String,
        /// Why it is refused.
        reason: String,
    },
    /// A path the source needs does not exist in the repository.
    #[error("{field}: {path} does not exist in the repository")]
    PathNotFound {
        /// The source field that named the path.
        field: String,
        /// The path, relative to the repository root.
        path: String,
    },
    /// A size limit was hit (a huge file, a huge render, a repository that expands too far).
    #[error("{what} exceeds the limit of {limit} ({context})")]
    TooLarge {
        /// What grew too large (`file`, `rendered output`, `repository tree`).
        what: &'static str,
        /// The limit, with its unit.
        limit: String,
        /// Which file, tool or repository.
        context: String,
    },
    /// A manifest could not be read: bad YAML or JSON, a duplicate key, not a Kubernetes object.
    #[error("invalid manifest {file}:{line}: {detail}")]
    InvalidManifest {
        /// File, relative to the repository root.
        file: String,
        /// 1-based line of the document (or of the error, when known).
        line: usize,
        /// What is wrong.
        detail: String,
    },
    /// A YAML stream could not be read.
    #[error("invalid manifest {file}")]
    Yaml {
        /// File, relative to the repository root (or the tool that printed the stream).
        file: String,
        /// The reader's error, which names the line.
        #[source]
        source: plumb_yaml::Error,
    },
    /// Jsonnet evaluation failed.
    #[error("jsonnet {file}: {detail}")]
    Jsonnet {
        /// The `.jsonnet` file, relative to the repository root.
        file: String,
        /// The evaluator's message with the location of the failure.
        detail: String,
    },
    /// A rendering tool (helm, kustomize) is not installed where Plumb looks for it.
    #[error("{tool} binary not found at {path}; install it or configure its path")]
    ToolMissing {
        /// `helm` or `kustomize`.
        tool: &'static str,
        /// Where Plumb looked.
        path: PathBuf,
    },
    /// A rendering tool exited with an error.
    #[error("{tool} failed ({status}): {stderr}")]
    RenderFailed {
        /// `helm` or `kustomize`, with the subcommand.
        tool: String,
        /// Exit status.
        status: String,
        /// The tool's standard error (credentials removed, truncated).
        stderr: String,
    },
    /// A render (Jsonnet evaluation, helm, kustomize) did not finish in time; its processes were
    /// killed.
    #[error("{tool} did not finish within {limit:?} and was stopped (limit: plumb.render.timeout)")]
    RenderTimeout {
        /// What ran: `jsonnet app/main.jsonnet`, `helm template charts/api`.
        tool: String,
        /// The limit that was hit.
        limit: Duration,
    },
    /// A render ran into a resource limit other than time (memory, CPU time, stack) and stopped.
    #[error("{what} was stopped: it exceeded {limit}")]
    RenderLimit {
        /// What ran: `jsonnet app/main.jsonnet`, `helm template charts/api`.
        what: String,
        /// The limit, with its value and the setting that controls it.
        limit: String,
    },
    /// A render process died without finishing (killed by a signal it did not ask for).
    #[error("{what} crashed: {detail}")]
    RenderCrashed {
        /// What ran.
        what: String,
        /// How it ended, and the first lines it printed (credentials removed).
        detail: String,
    },
    /// The render worker (the program that runs renders under limits) cannot be used.
    #[error("render worker {program} cannot run renders: {detail}")]
    RenderWorker {
        /// The configured worker program ([`crate::Tools::worker`]).
        program: PathBuf,
        /// What went wrong.
        detail: String,
    },
    /// A value in the settings ConfigMap cannot be used.
    #[error("setting {key}: {value:?} is not {expected}")]
    InvalidSetting {
        /// The key (`plumb.render.timeout`).
        key: &'static str,
        /// The value as written.
        value: String,
        /// What the key takes.
        expected: &'static str,
    },
    /// A repository that may not be used as a source.
    #[error("repository {url} is refused: {reason}")]
    RepositoryRefused {
        /// The repository URL, without credentials.
        url: String,
        /// Why.
        reason: String,
    },
    /// A parameter of the source cannot be given to its renderer as written.
    #[error("{field}: {detail}")]
    InvalidParameter {
        /// The field of the Application (`spec.source.helm.releaseName`).
        field: &'static str,
        /// What is wrong, and what it takes.
        detail: String,
    },
    /// The source combines options of more than one renderer, or names none that Plumb runs.
    #[error("unsupported source: {detail}")]
    UnsupportedSource {
        /// What is unsupported.
        detail: String,
    },
    /// A revision's GnuPG signature could not be verified at all (the configured keys are
    /// broken, `gpg` failed or is missing): nothing from it is synced.
    #[error("verifying the GnuPG signature of {url}: {detail}")]
    SignatureVerification {
        /// Repository URL, without credentials.
        url: String,
        /// What failed.
        detail: String,
    },
    /// A local file operation failed.
    #[error("{action} {path}")]
    Io {
        /// What was being done (`reading`, `writing`, `creating`).
        action: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
}

/// Result with [`Error`] as the default error.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(std::io::Error) -> Error {
        let path = path.into();
        move |source| Error::Io {
            action,
            path,
            source,
        }
    }
}
