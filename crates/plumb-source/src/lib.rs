//! Plumb's source side: fetch a Git repository, resolve a revision to a commit, render the
//! manifests at a path into desired objects, and cache the result.
//!
//! - [`Renderer`] is the front door: an Application's sources in ([`RenderRequest`]), the desired
//!   objects out ([`Rendered`], one [`Manifest`] per object with its file and document index).
//! - [`GitCache`] fetches with gix into a cache shared per repository URL, resolves revisions and
//!   writes read-only per-commit trees; [`RepoCredentials`] reads Argo CD repository Secrets.
//! - [`HelmRepos`] reads Helm chart repositories (`spec.source.chart`): index, version
//!   constraints, verified downloads, unpacked read-only charts cached for good.
//! - [`OciRegistries`] reads OCI registries: Helm charts (`oci://`) and Argo CD's OCI artifacts,
//!   tags, constraints over tags and digests, verified layers cached by digest.
//! - [`detect`] picks the renderer as Argo CD does; directories are read in-process, Jsonnet is
//!   evaluated and Kustomize and Helm (the real binaries, [`Tools`]) run in a render [`worker`]
//!   process under the render limits.
//! - [`Limits`] bounds sizes, times and render memory; [`Error`] says what failed, where.
//!
//! Layout: `renderer/` holds the [`Renderer`] (one render of an Application's sources, with its
//! manifest cache and fetches); `render/` holds the per-tool renderers it calls (directory,
//! Jsonnet, Helm, Kustomize), and `plugin/` the config management plugins.
//!
//! ```no_run
//! use plumb_source::{Config, Renderer, RenderRequest};
//! use plumb_model::application::ApplicationSource;
//!
//! let renderer = Renderer::new(Config::new("/var/cache/plumb"))?;
//! let source = ApplicationSource {
//!     repo_url: "https://git.example.com/team/app.git".into(),
//!     path: Some("deploy".into()),
//!     ..Default::default()
//! };
//! let rendered = renderer.render(&RenderRequest { sources: vec![source], ..Default::default() })?;
//! for m in &rendered.manifests {
//!     println!("{} from {}", m.key(), m.origin());
//! }
//! # Ok::<(), plumb_source::Error>(())
//! ```

mod beneath;
mod credentials;
mod detect;
mod error;
mod git;
mod gpg;
mod helm_repo;
mod http_client;
mod inputs;
mod limits;
mod manifest;
mod oci;
mod permissions;
pub mod plugin;
mod redact;
mod render;
mod renderer;
mod scope;
mod spec;
pub mod worker;

pub use beneath::{Kind as EntryKind, RepoDir};
pub use credentials::{
    GithubApp, KNOWN_HOSTS_CM, KNOWN_HOSTS_KEY, KnownHosts, RepoCredentials, SECRET_TYPE_LABEL,
    TlsCerts,
};
pub use detect::{KUSTOMIZATION_FILES, SourceType, detect};
pub use error::{Error, Result};
pub use git::{
    Checkout, CommitMetadata, GitCache, MAX_STRICT_COMMITS, MAX_WALK, RemoteRef, SignedObject,
};
pub use gpg::{
    GpgKeys, KeyInfo, MAX_KEY_BYTES, MAX_KEYS, MAX_PROBLEMS, inspect_keys, is_long_key_id,
    is_short_key_id, key_allowed, key_id, verify_revision,
};
pub use helm_repo::{ChartCheckout, HelmRepos};
pub use limits::{Limits, parse_duration, parse_quantity};
pub use manifest::{Manifest, local_manifests};
pub use oci::{OciArtifact, OciRegistries};
pub use plugin::{Plugin, PluginSet};
pub use redact::{Redactor, strip_url_credentials};
pub use render::Tools;
pub use renderer::{
    Config, LocalSource, Refresh, RenderRequest, Rendered, Renderer, SourceOutcome,
};
pub use scope::in_project;
pub use worker::Worker;

/// The version `kind`'s tool prints (`helm version --short`, `kustomize version`), asked through
/// the render worker as renders are, within 30 s; empty for Plumb's own renderers (directory,
/// plugin). [`Error::ToolMissing`] when the binary is not there.
pub fn tool_version(tools: &Tools, kind: SourceType) -> Result<String> {
    render::tool_version(tools, &Limits::default(), kind)
}

/// True when config management plugins run in their own network and mount namespaces on this
/// machine (the `unshare` tool works here); otherwise they run without them.
pub fn plugin_sandbox_available() -> bool {
    worker::sandbox::available()
}
