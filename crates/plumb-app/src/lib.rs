//! The state of one Application, as everything that asks about it sees it.
//!
//! [`observe`] answers "what is the state of this Application": it compares the sources with
//! the destination cluster ([`compare`]: render, prepare, read live, diff, health), applies the
//! project's verdicts ([`guard`]) and builds the `status` to write ([`status::StatusPatch`]).
//! The controller (`plumb-controller`), the API server (`plumb-server`) and the CLI all use this
//! one crate, so they cannot disagree. Around it: access to clusters ([`clusters`],
//! [`Cluster`]), the engines configured by the settings ([`Engines`]), the server-side diff
//! cache ([`diff_cache`]), resource actions ([`actions`]), repositories' credentials
//! ([`repositories`]), onboarding repositories and certificates ([`repo_admin`]), the GnuPG keys
//! signatures are verified with ([`signatures`]) and the requests written on an Application
//! ([`request`]).
//!
//! Dependency direction inside the crate: `error` ← `diff_cache`/`written` ← `context` ←
//! `compare` ← `guard` ← `status` ← `observe`; nothing imports back.

pub mod actions;
pub mod argo_secrets;
pub mod clusters;
pub mod compare;
mod context;
pub mod crd_check;
pub mod diff_cache;
mod error;
pub mod gpg_keys;
pub mod guard;
pub mod impersonation;
pub mod k8s_requests;
pub mod observe;
pub mod orphans;
pub mod project_scope;
pub mod project_update;
pub mod render_settings;
pub mod repo_admin;
pub mod repositories;
pub mod request;
pub mod resources;
pub mod signatures;
pub mod status;
pub mod unenforced;
mod written;

pub use clusters::{CLUSTER_SECRET_LABEL, ClusterSecret};
pub use compare::{
    CompareOptions, ComparedResource, Comparison, Refresh, compare, compare_with, images,
};
pub use context::{
    Cluster, DEFAULT_CONTROL_NAMESPACE, Engines, HealthFacts, IN_CLUSTER_NAME, IN_CLUSTER_SERVER,
    LiveHealthFacts,
};
pub use diff_cache::{DiffCache, DiffKey, DiffScope, Hit, Probe};
pub use error::{Error, Result, chain};
pub use guard::object_refusal;
pub use observe::{Observation, Target, observe};
pub use project_scope::ScopedProject;
pub use repositories::{load as load_repositories, watch as watch_repositories};
pub use resources::{
    APPLICATION_NAMESPACES_KEY, CMD_PARAMS_CONFIGMAP, application_namespaces, application_resource,
    appproject_resource, parse_namespace_list,
};
pub use written::Written;
