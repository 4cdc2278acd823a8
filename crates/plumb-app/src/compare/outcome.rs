//! What one comparison found: every object compared, and the Application's sync and health.

use plumb_diff::{DiffResult, IgnoreRules};
use plumb_health::HealthStatus;
use plumb_model::ResourceKey;
use plumb_model::application::{ApplicationSource, SyncStatusCode};
use serde_json::Value;

/// One compared object.
#[derive(Debug, Clone)]
pub struct ComparedResource {
    /// Identity (namespace defaulted).
    pub key: ResourceKey,
    /// API version of the desired object, else of the live one.
    pub version: String,
    /// What Git declares, prepared for apply (namespace, tracking annotation).
    pub desired: Option<Value>,
    /// The file (and document) it came from.
    pub source: Option<String>,
    /// What the cluster holds.
    pub live: Option<Value>,
    /// The diff; `None` for hooks.
    pub diff: Option<DiffResult>,
    /// Sync status; `None` for hooks.
    pub status: Option<SyncStatusCode>,
    /// Health; `None` when the kind has none (or the object is a hook or ignored).
    pub health: Option<HealthStatus>,
    /// Live object tracked by this Application that Git no longer declares.
    pub requires_pruning: bool,
    /// `argocd.argoproj.io/sync-wave` (else `helm.sh/hook-weight`), default 0.
    pub sync_wave: i64,
    /// Whether the object is a sync hook.
    pub hook: bool,
    /// Another Application (its instance name, as Argo CD names it in messages) whose tracking
    /// annotation the live object carries.
    pub shared_with: Option<String>,
}

/// An object Git declares with `argocd.argoproj.io/hook: Skip`: never applied or compared, but
/// listed in `status.resources` (without status or health), as Argo CD lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedObject {
    /// Identity (namespace defaulted).
    pub key: ResourceKey,
    /// API version.
    pub version: String,
    /// `argocd.argoproj.io/sync-wave`, default 0.
    pub sync_wave: i64,
}

/// The result of comparing one Application.
#[derive(Debug, Clone)]
pub struct Comparison {
    /// The commit compared against (first source), and every source's commit.
    pub revision: String,
    /// Commits of all sources, in `spec.sources` order.
    pub revisions: Vec<String>,
    /// The sources compared (with the revision override applied).
    pub sources: Vec<ApplicationSource>,
    /// Detected source type of each source (`Helm`, `Kustomize`, `Directory`, ...).
    pub source_types: Vec<String>,
    /// Every compared object, ordered by key.
    pub resources: Vec<ComparedResource>,
    /// Objects Git marks `Skip`, ordered by key.
    pub skipped: Vec<SkippedObject>,
    /// Application sync status.
    pub sync: SyncStatusCode,
    /// Application health.
    pub health: HealthStatus,
    /// Warnings found while comparing (`SharedResourceWarning`, ...): (type, message).
    pub warnings: Vec<(String, String)>,
    /// Images of the live workloads.
    pub images: Vec<String>,
    /// The ignore rules compared with (a sync with `RespectIgnoreDifferences=true` uses them).
    pub ignore: IgnoreRules,
}
