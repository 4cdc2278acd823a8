//! What a RollingSync does to the generated Applications: which steps are open
//! (`getAppsToSync`), automated sync switched off, and the sync operation it sets on Pending
//! Applications (`SyncDesiredApplications`, `syncApplication`).

use std::collections::BTreeSet;

use plumb_model::application::{
    Application, Info, Operation, OperationInitiator, RetryStrategy, SyncOperation,
};
use plumb_model::applicationset::ApplicationSetApplicationStatus;

use super::status::phase;
use super::steps::StepMap;

/// `operation.initiatedBy.username` of the syncs a RollingSync starts.
pub const INITIATOR: &str = "applicationset-controller";
/// `operation.info[Reason]` of the syncs a RollingSync starts.
pub const REASON: &str = "ApplicationSet RollingSync triggered a sync of this Application resource";

/// The Applications of every step up to and including the first one that is not complete: a
/// step is complete when each of its Applications exists and is Healthy in `statuses`.
pub(crate) fn open_steps(
    steps: &StepMap,
    live: &[Application],
    statuses: &[ApplicationSetApplicationStatus],
) -> BTreeSet<String> {
    let mut open = BTreeSet::new();
    for names in &steps.steps {
        open.extend(names.iter().cloned());
        let complete = names.iter().all(|name| {
            live.iter().any(|a| a.name() == name)
                && statuses
                    .iter()
                    .find(|s| &s.application == name)
                    .is_some_and(|s| s.status == phase::HEALTHY)
        });
        if !complete {
            break;
        }
    }
    open
}

/// Switches automated sync off (`automated.enabled: false`, as Argo v3 writes it: the block
/// stays so that `prune`/`selfHeal` survive the rollout). Returns whether it was on with prune.
pub fn disable_automated_sync(app: &mut Application) -> bool {
    let Some(policy) = app.spec.sync_policy.as_mut() else {
        return false;
    };
    let prune = policy.is_automated()
        && policy
            .automated
            .as_ref()
            .is_some_and(|a| a.prune == Some(true));
    if let Some(automated) = policy.automated.as_mut() {
        automated.enabled = Some(false);
    }
    prune
}

/// The sync operation a RollingSync sets on `app`, pinned to `revisions` (those recorded when
/// the Application became Pending, so a commit landing mid-rollout is not synced unvalidated).
pub fn sync_operation(app: &Application, prune: bool, revisions: &[String]) -> Operation {
    let mut sync = SyncOperation::default();
    if app.spec.sources.as_ref().is_some_and(|s| !s.is_empty()) {
        sync.revisions = (!revisions.is_empty()).then(|| revisions.to_vec());
    } else {
        sync.revision = revisions.first().cloned();
    }
    // Argo's own automated sync retries 5 times; the Application's retry wins when set.
    let mut retry = RetryStrategy {
        limit: Some(5),
        ..RetryStrategy::default()
    };
    if let Some(policy) = &app.spec.sync_policy {
        if let Some(r) = &policy.retry {
            retry = r.clone();
        }
        sync.sync_options.clone_from(&policy.sync_options);
        sync.prune = prune.then_some(true);
    }
    Operation {
        sync: Some(sync),
        initiated_by: Some(OperationInitiator {
            username: Some(INITIATOR.to_string()),
            automated: Some(true),
        }),
        info: Some(vec![Info {
            name: "Reason".to_string(),
            value: REASON.to_string(),
        }]),
        retry: Some(retry),
    }
}

/// Prepares the generated Applications for writing: automated sync off on all, and a sync
/// operation on those both open (`to_sync`) and Pending. Returns the names given an operation.
pub(crate) fn prepare(
    desired: &mut [Application],
    to_sync: &BTreeSet<String>,
    statuses: &[ApplicationSetApplicationStatus],
) -> Vec<String> {
    let mut synced = Vec::new();
    for app in desired.iter_mut() {
        let prune = disable_automated_sync(app);
        let pending = statuses
            .iter()
            .find(|s| s.application == app.name() && s.status == phase::PENDING);
        if let (true, Some(status)) = (to_sync.contains(app.name()), pending) {
            app.operation = Some(sync_operation(app, prune, &status.target_revisions));
            synced.push(app.name().to_string());
        }
    }
    synced
}
