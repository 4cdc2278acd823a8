//! Annotation and label keys from Argo CD's API that Plumb reads or writes.

/// Default resource tracking annotation: `<app>:<group>/<kind>:<namespace>/<name>`.
pub const TRACKING_ID: &str = "argocd.argoproj.io/tracking-id";
/// Default label used by label tracking (`application.instanceLabelKey`).
pub const DEFAULT_INSTANCE_LABEL: &str = "app.kubernetes.io/instance";
/// Sync wave of an object (an integer, default 0).
pub const SYNC_WAVE: &str = "argocd.argoproj.io/sync-wave";
/// Hook phases of an object (comma list: PreSync, Sync, PostSync, SyncFail, Skip).
pub const HOOK: &str = "argocd.argoproj.io/hook";
/// Hook delete policies (comma list: HookSucceeded, HookFailed, BeforeHookCreation).
pub const HOOK_DELETE_POLICY: &str = "argocd.argoproj.io/hook-delete-policy";
/// Per-object sync options (comma list).
pub const SYNC_OPTIONS: &str = "argocd.argoproj.io/sync-options";
/// Per-object compare options (comma list).
pub const COMPARE_OPTIONS: &str = "argocd.argoproj.io/compare-options";
/// Refresh request on an Application: `normal` or `hard`.
pub const REFRESH: &str = "argocd.argoproj.io/refresh";
/// On an Application: `;`-separated paths (relative to the source path, or from the repository
/// root with a leading `/`) whose changes concern it; a commit touching none of them is not
/// rendered again.
pub const MANIFEST_GENERATE_PATHS: &str = "argocd.argoproj.io/manifest-generate-paths";
/// `"true"` excludes an object from application health aggregation.
pub const IGNORE_HEALTHCHECK: &str = "argocd.argoproj.io/ignore-healthcheck";
/// `"true"` makes a Never/OnFailure pod be judged like an Always pod.
pub const IGNORE_RESTART_POLICY: &str = "argocd.argoproj.io/ignore-restart-policy";
/// Finalizer Argo puts on hooks so their result is recorded before they vanish.
pub const HOOK_FINALIZER: &str = "argocd.argoproj.io/hook-finalizer";
/// Helm's hook annotation (mapped to Argo hook phases).
pub const HELM_HOOK: &str = "helm.sh/hook";
/// Helm's hook weight (used as the sync wave when no sync-wave annotation is set).
pub const HELM_HOOK_WEIGHT: &str = "helm.sh/hook-weight";
/// Helm's hook delete policy.
pub const HELM_HOOK_DELETE_POLICY: &str = "helm.sh/hook-delete-policy";
/// kubectl's client-side-apply record of the last applied object.
pub const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";
/// On an Application: an RFC 3339 time approving `Prune=confirm` deletions of operations that
/// started no later than it (`argocd app confirm-deletion`).
pub const DELETION_APPROVED: &str = "argocd.argoproj.io/deletion-approved";
