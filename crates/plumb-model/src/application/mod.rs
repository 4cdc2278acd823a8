//! The `argoproj.io/v1alpha1` Application API types: [`Application`] and [`AppProject`], with the
//! field names, optionality and status vocabularies of Argo CD's
//! `pkg/apis/application/v1alpha1/types.go`.
//!
//! Optional fields are `Option` (lists and maps included) so that a manifest read and written back
//! keeps exactly the fields it had: an explicit `prune: false` or `ignoreDifferences: []` survives,
//! an absent one is not invented. What an absent field means is decided by the code that uses it.
//!
//! ```
//! use plumb_model::application::{Application, SyncStatusCode};
//! let app: Application = serde_json::from_value(serde_json::json!({
//!     "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
//!     "metadata": {"name": "guestbook", "namespace": "argocd"},
//!     "spec": {"project": "default",
//!              "source": {"repoURL": "https://example.com/apps.git", "path": "guestbook"},
//!              "destination": {"server": "https://kubernetes.default.svc", "namespace": "guestbook"}},
//!     "status": {"sync": {"status": "OutOfSync"}}
//! })).unwrap();
//! assert_eq!(app.status.unwrap().sync.unwrap().status, SyncStatusCode::OutOfSync);
//! ```

mod app;
mod codes;
mod meta;
pub mod operation;
mod project;
pub mod source;
mod source_integrity;
mod spec;
pub mod status;

pub use app::{API_VERSION, Application, GROUP, RESOURCES_FINALIZER, VERSION};
pub use codes::{HookType, OperationPhase, ResultCode, SyncPhase, SyncStatusCode};
pub use meta::ObjectMeta;
pub use operation::{
    Operation, OperationInitiator, OperationState, ResourceResult, RevisionHistory, SyncOperation,
    SyncOperationResource, SyncOperationResult, SyncStrategy, SyncStrategyForce,
};
pub use project::{
    AppProject, AppProjectSpec, AppProjectStatus, ClusterResourceRestrictionItem,
    DestinationServiceAccount, JwtToken, JwtTokens, OrphanedResourceKey,
    OrphanedResourcesMonitorSettings, ProjectRole, SignatureKey, SyncWindow,
};
pub use source::{
    ApplicationSource, DirectorySource, EnvEntry, HelmFileParameter, HelmParameter, HelmSource,
    JsonnetSource, JsonnetVar, KustomizePatch, KustomizeReplica, KustomizeSelector,
    KustomizeSource, PluginParameter, PluginSource,
};
pub use source_integrity::{
    GIT_GPG_CHECK, SourceIntegrity, SourceIntegrityGit, SourceIntegrityGitPolicy,
    SourceIntegrityGitPolicyGpg, SourceIntegrityGitPolicyRepo, gpg_mode,
};
pub use spec::{
    ApplicationDestination, ApplicationSpec, Backoff, DrySource, HydrateTo, Info,
    ManagedNamespaceMetadata, ResourceIgnoreDifferences, RetryStrategy, SourceHydrator, SyncPolicy,
    SyncPolicyAutomated, SyncSource,
};
pub use status::{
    ApplicationCondition, ApplicationStatus, ApplicationSummary, ComparedTo, HealthStatus,
    ResourceStatus, SyncStatus, condition,
};
