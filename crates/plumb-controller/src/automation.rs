//! Automated sync and self-heal (`spec.syncPolicy.automated`), decided after every comparison,
//! as Argo CD's `autoSync` decides, with two of its known gaps closed:
//!
//! - one automated attempt per (revision, source); a failed one is reported as a `SyncError`
//!   condition and, unlike Argo CD (which never retries it), tried again a bounded number of
//!   times with growing pauses ([`FAILED_RETRIES`], [`failed_backoff`]);
//! - self-heal re-applies only the drifted objects, with Argo's backoff (2 s, ×3, at most 300 s)
//!   counted in `operation.sync.autoHealAttemptsCount`, and an Event names each reverted object
//!   and the field manager that changed it (from the diff's attribution).
//!
//! Nothing is pruned when everything would be (`allowEmpty`), and a sync window that denies
//! automated syncs holds the attempt.

use std::time::Duration;

use plumb_model::application::{
    Application, Operation, OperationInitiator, OperationPhase, RetryStrategy, SyncOperation,
    SyncOperationResource, SyncStatusCode, condition,
};

use crate::compare::Comparison;

/// How many times a failed automated sync of one revision is started again.
pub const FAILED_RETRIES: u32 = 3;

/// The pause before automated attempt `n + 1` after `n` failed ones: 10 s, 30 s, 90 s.
pub fn failed_backoff(n: u32) -> Duration {
    Duration::from_secs(10u64.saturating_mul(3u64.saturating_pow(n)).min(300))
}

/// Argo CD's self-heal backoff for attempt count `n`: 2 s × 3ⁿ, at most 300 s.
pub fn heal_backoff(n: i64) -> Duration {
    let n = u32::try_from(n.max(0)).unwrap_or(u32::MAX);
    Duration::from_secs(2u64.saturating_mul(3u64.saturating_pow(n)).min(300))
}

/// What automation wants after a comparison.
#[derive(Debug, Default)]
pub struct Decision {
    /// Conditions to show (`SyncError`).
    pub conditions: Vec<(String, String)>,
    /// An operation to request.
    pub operation: Option<Operation>,
    /// Events to record: (reason, message, warning?).
    pub events: Vec<(String, String, bool)>,
    /// Look again after this long (a backoff is running).
    pub recheck_after: Option<Duration>,
    /// Whether a failed attempt is being retried (the caller counts it).
    pub retrying_failure: bool,
}

/// Inputs beyond the Application and its comparison.
#[derive(Debug, Clone, Copy)]
pub struct Context {
    /// An operation is requested or running.
    pub operation_in_progress: bool,
    /// Sync windows allow an automated sync now.
    pub windows_allow: bool,
    /// Failed automated attempts already started again for the current revision.
    pub failed_retries: u32,
    /// Seconds since the last operation finished (`None`: none finished).
    pub since_finished: Option<Duration>,
}

fn revision_label(cmp: &Comparison) -> String {
    if cmp.revisions.len() > 1 {
        format!("[{}]", cmp.revisions.join(", "))
    } else {
        cmp.revision.clone()
    }
}

/// Decides what automated sync does for `app` after comparison `cmp`.
pub fn decide(app: &Application, cmp: &Comparison, ctx: Context) -> Decision {
    let mut d = Decision::default();
    let Some(policy) = app.spec.sync_policy.as_ref().filter(|p| p.is_automated()) else {
        return d;
    };
    let Some(automated) = policy.automated.as_ref() else {
        return d;
    };
    if ctx.operation_in_progress || cmp.sync != SyncStatusCode::OutOfSync {
        return d;
    }
    let prune = automated.prune.unwrap_or(false);
    let rev = revision_label(cmp);
    let out_of_sync: Vec<_> = cmp
        .resources
        .iter()
        .filter(|r| !r.hook && r.status == Some(SyncStatusCode::OutOfSync))
        .collect();
    if !prune && out_of_sync.iter().all(|r| r.requires_pruning) {
        d.events.push((
            "AutoSyncSkipped".into(),
            "Skipping auto-sync: need to prune extra resources only but automated prune is disabled"
                .into(),
            false,
        ));
        return d;
    }
    let managed: Vec<_> = cmp.resources.iter().filter(|r| !r.hook).collect();
    if prune
        && !automated.allow_empty.unwrap_or(false)
        && !managed.is_empty()
        && managed.iter().all(|r| r.requires_pruning)
    {
        d.conditions.push((
            condition::SYNC_ERROR.into(),
            format!("Skipping sync attempt to {rev}: auto-sync will wipe out all resources"),
        ));
        return d;
    }
    if !ctx.windows_allow {
        d.events.push((
            "AutoSyncSkipped".into(),
            format!("Skipping auto-sync to {rev}: blocked by sync window"),
            false,
        ));
        return d;
    }

    let state = app.status.as_ref().and_then(|s| s.operation_state.as_ref());
    let last_sync = state.and_then(|s| s.sync_result.as_ref());
    let spec_sources: Vec<_> = app.sources().into_iter().cloned().collect();
    let same_target = last_sync.is_some_and(|r| {
        r.revision == cmp.revision
            && if spec_sources.len() > 1 {
                r.sources.as_deref() == Some(spec_sources.as_slice())
            } else {
                r.source.as_ref() == spec_sources.first()
            }
    });
    let last_phase = state.map(|s| s.phase);
    let self_heal = automated.self_heal.unwrap_or(false);
    let mut op = Operation {
        sync: Some(SyncOperation {
            revision: Some(cmp.revision.clone()),
            prune: Some(prune),
            sync_options: policy.sync_options.clone(),
            revisions: (cmp.revisions.len() > 1).then(|| cmp.revisions.clone()),
            ..SyncOperation::default()
        }),
        initiated_by: Some(OperationInitiator {
            username: None,
            automated: Some(true),
        }),
        retry: Some(policy.retry.clone().unwrap_or(RetryStrategy {
            limit: Some(5),
            ..RetryStrategy::default()
        })),
        ..Operation::default()
    };

    if same_target && last_phase != Some(OperationPhase::Succeeded) {
        let msg = state.and_then(|s| s.message.clone()).unwrap_or_default();
        let mut text = format!("Failed last sync attempt to {rev}: {msg}");
        if ctx.failed_retries >= FAILED_RETRIES {
            text.push_str(&format!(
                " (automated sync tried {} times; push a new commit or sync manually)",
                ctx.failed_retries + 1
            ));
            d.conditions.push((condition::SYNC_ERROR.into(), text));
            return d;
        }
        d.conditions.push((condition::SYNC_ERROR.into(), text));
        let wait = failed_backoff(ctx.failed_retries);
        match ctx.since_finished {
            Some(since) if since < wait => d.recheck_after = Some(wait - since),
            _ => {
                d.retrying_failure = true;
                d.events.push((
                    "OperationStarted".into(),
                    format!(
                        "Initiated automated sync to '{rev}' (attempt {} after a failure)",
                        ctx.failed_retries + 2
                    ),
                    false,
                ));
                d.operation = Some(op);
            }
        }
        return d;
    }
    if same_target && !self_heal {
        tracing::debug!(
            app = app.name(),
            "Skipping auto-sync: most recent sync already to {rev}"
        );
        return d;
    }
    if same_target {
        let attempts = state
            .and_then(|s| s.operation.sync.as_ref())
            .and_then(|s| s.auto_heal_attempts_count)
            .unwrap_or(0);
        let wait = heal_backoff(attempts);
        if let Some(since) = ctx.since_finished
            && since < wait
        {
            d.recheck_after = Some(wait - since);
            return d;
        }
        let drifted: Vec<_> = out_of_sync
            .iter()
            .filter(|r| prune || !r.requires_pruning)
            .collect();
        if let Some(sync) = op.sync.as_mut() {
            sync.auto_heal_attempts_count = Some(attempts + 1);
            sync.resources = Some(
                drifted
                    .iter()
                    .map(|r| SyncOperationResource {
                        group: Some(r.key.group.clone()),
                        kind: r.key.kind.clone(),
                        name: r.key.name.clone(),
                        namespace: (!r.key.namespace.is_empty()).then(|| r.key.namespace.clone()),
                    })
                    .collect(),
            );
        }
        let what: Vec<String> = drifted.iter().map(|r| describe_drift(r)).collect();
        d.events.push((
            "SelfHeal".into(),
            format!(
                "Self-healing drift from {rev}: reverting {}",
                what.join("; ")
            ),
            true,
        ));
        d.operation = Some(op);
        return d;
    }
    d.events.push((
        "OperationStarted".into(),
        format!("Initiated automated sync to '{rev}'"),
        false,
    ));
    d.operation = Some(op);
    d
}

/// `apps/Deployment payments/payments-api (spec.template.spec.securityContext.runAsNonRoot
/// changed by kubectl-patch (Update) at 2026-11-30T10:00:00Z)`.
fn describe_drift(r: &crate::compare::ComparedResource) -> String {
    let key = &r.key;
    let gk = if key.group.is_empty() {
        key.kind.clone()
    } else {
        format!("{}/{}", key.group, key.kind)
    };
    let name = if key.namespace.is_empty() {
        key.name.clone()
    } else {
        format!("{}/{}", key.namespace, key.name)
    };
    if r.live.is_none() {
        return format!("{gk} {name} (deleted from the cluster)");
    }
    if r.requires_pruning {
        return format!("{gk} {name} (not in Git)");
    }
    let changes: Vec<String> = r
        .diff
        .iter()
        .flat_map(|d| d.changes.iter())
        .take(3)
        .map(|c| {
            let what = match c.op {
                plumb_diff::ChangeOp::Added => "removed from the cluster",
                plumb_diff::ChangeOp::Removed => "added in the cluster",
                _ => "changed",
            };
            match &c.attribution {
                Some(a) if a.exact => format!(
                    "{} {what} by {} ({}) at {}",
                    c.path, a.manager, a.operation, a.time
                ),
                // The API server records no manager for a removal: say who last wrote the
                // parent, never claim they made this change.
                Some(a) => format!(
                    "{} {what}, not recorded by any field manager; parent last written by {} ({}) at {}",
                    c.path, a.manager, a.operation, a.time
                ),
                None => format!("{} {what}, not recorded by any field manager", c.path),
            }
        })
        .collect();
    if changes.is_empty() {
        format!("{gk} {name}")
    } else {
        format!("{gk} {name} ({})", changes.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoffs() {
        let heal: Vec<u64> = (0..7).map(|n| heal_backoff(n).as_secs()).collect();
        assert_eq!(heal, [2, 6, 18, 54, 162, 300, 300]);
        let failed: Vec<u64> = (0..4).map(|n| failed_backoff(n).as_secs()).collect();
        assert_eq!(failed, [10, 30, 90, 270]);
    }
}
