//! Operations: the request on `Application.operation`, its progress in
//! `status.operationState`, and finished syncs in `status.history` (Argo CD's `Operation`,
//! `OperationState`, `SyncOperationResult`, `ResourceResult`, `RevisionHistory`).

use serde::{Deserialize, Serialize};

use super::codes::{HookType, OperationPhase, ResultCode, SyncPhase};
use super::source::ApplicationSource;
use super::spec::{Info, ManagedNamespaceMetadata, RetryStrategy};

/// An operation requested on an Application (`.operation`); the controller runs it and clears it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct Operation {
    /// A sync.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync: Option<SyncOperation>,
    /// Who asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initiated_by: Option<OperationInitiator>,
    /// Free-form information.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub info: Option<Vec<Info>>,
    /// Retry of a failed operation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<RetryStrategy>,
}

/// Who started an operation.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct OperationInitiator {
    /// User name, for manual operations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
    /// True when started by automated sync.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub automated: Option<bool>,
}

/// `operation.sync`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct SyncOperation {
    /// Revision to sync to (absent: the source's target revision).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<String>,
    /// Delete tracked objects Git no longer declares.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prune: Option<bool>,
    /// Server-side dry run only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dry_run: Option<bool>,
    /// Apply or hook strategy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync_strategy: Option<SyncStrategy>,
    /// Only these resources (selective sync).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<Vec<SyncOperationResource>>,
    /// Source override for this sync.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<ApplicationSource>,
    /// Local manifests to sync instead of rendering (`argocd app sync --local`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manifests: Option<Vec<String>>,
    /// Sync options for this sync.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync_options: Option<Vec<String>>,
    /// Source overrides for a multi-source sync.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sources: Option<Vec<ApplicationSource>>,
    /// Revisions for a multi-source sync, one per source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revisions: Option<Vec<String>>,
    /// Self-heal attempts made so far.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto_heal_attempts_count: Option<i64>,
}

/// `syncStrategy`: `apply` (kubectl apply only) or `hook` (hooks and waves, the default).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SyncStrategy {
    /// Apply without hooks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub apply: Option<SyncStrategyForce>,
    /// Hooks and waves.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hook: Option<SyncStrategyForce>,
}

/// The options of a sync strategy.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SyncStrategyForce {
    /// Delete and recreate objects that cannot be patched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub force: Option<bool>,
}

/// One resource selected for a selective sync.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SyncOperationResource {
    /// API group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// Kind.
    pub kind: String,
    /// Name.
    pub name: String,
    /// Namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}

/// `status.operationState`: the progress and outcome of the current or last operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct OperationState {
    /// The operation being run.
    pub operation: Operation,
    /// Its phase.
    pub phase: OperationPhase,
    /// Human-readable progress or outcome.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// What the sync did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync_result: Option<SyncOperationResult>,
    /// Start time (RFC 3339).
    pub started_at: String,
    /// End time (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<String>,
    /// Retries made so far.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_count: Option<i64>,
}

/// `operationState.syncResult`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct SyncOperationResult {
    /// Per-resource results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<Vec<ResourceResult>>,
    /// The commit synced.
    pub revision: String,
    /// The source synced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<ApplicationSource>,
    /// The sources synced (multi-source).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sources: Option<Vec<ApplicationSource>>,
    /// The commits synced (multi-source).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revisions: Option<Vec<String>>,
    /// Namespace metadata applied by `CreateNamespace=true`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub managed_namespace_metadata: Option<ManagedNamespaceMetadata>,
}

/// The result of syncing one resource.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ResourceResult {
    /// API group.
    pub group: String,
    /// API version.
    pub version: String,
    /// Kind.
    pub kind: String,
    /// Namespace (empty for cluster-scoped objects).
    pub namespace: String,
    /// Name.
    pub name: String,
    /// Outcome.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ResultCode>,
    /// Message (`deployment.apps/x configured`, or the error).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Hook type, for hooks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hook_type: Option<HookType>,
    /// Hook progress, for hooks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hook_phase: Option<OperationPhase>,
    /// Sync phase the resource ran in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync_phase: Option<SyncPhase>,
    /// Container images of the object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub images: Option<Vec<String>>,
    /// When the task was applied (RFC 3339, milliseconds). Plumb's addition: Argo CD records
    /// no per-resource times, so waves and hooks could not be told apart in time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    /// When the task completed: applied (last wave), healthy (a gated wave), or the hook finished.
    /// Plumb's addition, like `startedAt`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<String>,
}

/// One finished sync in `status.history`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct RevisionHistory {
    /// The commit deployed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<String>,
    /// When the sync finished (RFC 3339).
    pub deployed_at: String,
    /// Entry id, increasing.
    pub id: i64,
    /// The source deployed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<ApplicationSource>,
    /// When the sync started (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deploy_started_at: Option<String>,
    /// The sources deployed (multi-source).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sources: Option<Vec<ApplicationSource>>,
    /// The commits deployed (multi-source).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revisions: Option<Vec<String>>,
    /// Who started the sync.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initiated_by: Option<OperationInitiator>,
}
