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
//! Nothing is pruned when everything would be (`allowEmpty`), nor when the brake on mass
//! deletion holds (more than `PruneMaxDeletions` objects and more than `PruneMaxFraction` of the
//! Application, `plumb_policy::brake`), and a sync window that denies automated syncs holds the
//! attempt.

use std::time::Duration;

use plumb_model::application::{
    Application, Operation, OperationInitiator, OperationPhase, OperationState, RetryStrategy,
    SyncOperation, SyncOperationResource, SyncPolicy, SyncPolicyAutomated, SyncStatusCode,
    condition,
};

use plumb_app::compare::{ComparedResource, Comparison};

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
    /// When windows deny it: how long until a window opens or closes.
    pub windows_change_in: Option<Duration>,
    /// Failed automated attempts already started again for the current revision.
    pub failed_retries: u32,
    /// Seconds since the last operation finished (`None`: none finished).
    pub since_finished: Option<Duration>,
    /// The brake on mass deletion for this Application.
    pub prune_brake: plumb_policy::brake::Brake,
}

/// Live objects the Application manages (hooks not counted): the brake's denominator.
pub fn live_objects(cmp: &Comparison) -> usize {
    cmp.resources
        .iter()
        .filter(|r| !r.hook && r.live.is_some())
        .count()
}

/// Objects an automated prune of this comparison would delete: tracked, live, not in Git, and
/// not marked `Prune=false`.
pub fn would_prune(cmp: &Comparison) -> usize {
    cmp.resources
        .iter()
        .filter(|r| !r.hook && r.requires_pruning)
        .filter_map(|r| r.live.as_ref())
        .filter(|live| {
            !plumb_sync::SyncOptions::of_object(live)
                .get("Prune")
                .is_some_and(|v| v.eq_ignore_ascii_case("false"))
        })
        .count()
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
    let Some((policy, automated)) = automation_of(app) else {
        return Decision::default();
    };
    if ctx.operation_in_progress || cmp.sync != SyncStatusCode::OutOfSync {
        return Decision::default();
    }
    let prune = automated.prune.unwrap_or(false);
    let rev = revision_label(cmp);
    let out_of_sync = out_of_sync(cmp);
    if let Some(d) = skip_prune_only(&out_of_sync, prune) {
        return d;
    }
    if let Some(d) = refuse_wipe_out(cmp, automated, prune, &rev) {
        return d;
    }
    if let Some(d) = wait_for_window(&ctx, &rev) {
        return d;
    }
    let braked = prune_brake(app, cmp, &ctx, prune, &rev);
    let last = LastSync::of(app, cmp);
    let op = automated_operation(policy, cmp, prune);
    if let Some(text) = braked {
        return stopped_by_brake(text, &last, op, &rev);
    }
    if last.same_target && last.phase != Some(OperationPhase::Succeeded) {
        return retry_failed(&last, &ctx, op, &rev);
    }
    if last.same_target && !automated.self_heal.unwrap_or(false) {
        tracing::debug!(
            app = app.name(),
            "Skipping auto-sync: most recent sync already to {rev}"
        );
        return Decision::default();
    }
    if last.same_target {
        return self_heal(&last, &ctx, &out_of_sync, prune, op, &rev);
    }
    let mut d = Decision::default();
    start(&mut d, op, &rev);
    d
}

/// The sync policy and its automated part, when automated sync is on.
fn automation_of(app: &Application) -> Option<(&SyncPolicy, &SyncPolicyAutomated)> {
    let policy = app.spec.sync_policy.as_ref().filter(|p| p.is_automated())?;
    let automated = policy.automated.as_ref()?;
    Some((policy, automated))
}

/// The managed objects out of sync (hooks not counted).
fn out_of_sync(cmp: &Comparison) -> Vec<&ComparedResource> {
    cmp.resources
        .iter()
        .filter(|r| !r.hook && r.status == Some(SyncStatusCode::OutOfSync))
        .collect()
}

/// Nothing to do but prune, and automated prune is off.
fn skip_prune_only(out_of_sync: &[&ComparedResource], prune: bool) -> Option<Decision> {
    if prune || !out_of_sync.iter().all(|r| r.requires_pruning) {
        return None;
    }
    let mut d = Decision::default();
    d.events.push((
        "AutoSyncSkipped".into(),
        "Skipping auto-sync: need to prune extra resources only but automated prune is disabled"
            .into(),
        false,
    ));
    Some(d)
}

/// Every managed object would be pruned and `allowEmpty` is not set.
fn refuse_wipe_out(
    cmp: &Comparison,
    automated: &SyncPolicyAutomated,
    prune: bool,
    rev: &str,
) -> Option<Decision> {
    let managed: Vec<_> = cmp.resources.iter().filter(|r| !r.hook).collect();
    let wipes_out = prune
        && !automated.allow_empty.unwrap_or(false)
        && !managed.is_empty()
        && managed.iter().all(|r| r.requires_pruning);
    if !wipes_out {
        return None;
    }
    let mut d = Decision::default();
    d.conditions.push((
        condition::SYNC_ERROR.into(),
        format!("Skipping sync attempt to {rev}: auto-sync will wipe out all resources"),
    ));
    Some(d)
}

/// A sync window denies automated syncs now: look again when the windows change.
fn wait_for_window(ctx: &Context, rev: &str) -> Option<Decision> {
    if ctx.windows_allow {
        return None;
    }
    let mut d = Decision::default();
    d.events.push((
        "AutoSyncSkipped".into(),
        format!("Skipping auto-sync to {rev}: blocked by sync window"),
        false,
    ));
    d.recheck_after = ctx.windows_change_in;
    Some(d)
}

/// The brake on mass deletion, when automated prune is on and it holds: its message.
fn prune_brake(
    app: &Application,
    cmp: &Comparison,
    ctx: &Context,
    prune: bool,
    rev: &str,
) -> Option<String> {
    prune
        .then(|| {
            ctx.prune_brake
                .check(would_prune(cmp), live_objects(cmp))
                .err()
        })
        .flatten()
        .map(|stopped| {
            format!(
                "Skipping automated sync to {rev}: {}",
                stopped.message(app.name())
            )
        })
}

/// The last operation, as far as automation cares.
struct LastSync<'a> {
    state: Option<&'a OperationState>,
    /// It synced the revision and sources compared now.
    same_target: bool,
    phase: Option<OperationPhase>,
}

impl<'a> LastSync<'a> {
    fn of(app: &'a Application, cmp: &Comparison) -> Self {
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
        LastSync {
            state,
            same_target,
            phase: state.map(|s| s.phase),
        }
    }
}

/// The operation an automated sync requests: the compared revision(s), the policy's prune,
/// options and retry (5 attempts by default).
fn automated_operation(policy: &SyncPolicy, cmp: &Comparison, prune: bool) -> Operation {
    Operation {
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
    }
}

/// The brake holds. The first attempt at a target runs, and the engine stops it before any
/// write, so the operation records the count too; after that the condition stands until Git,
/// the limits or a manual sync change the picture.
fn stopped_by_brake(text: String, last: &LastSync, op: Operation, rev: &str) -> Decision {
    let mut d = Decision::default();
    d.conditions.push((condition::SYNC_ERROR.into(), text));
    if !last.same_target {
        start(&mut d, op, rev);
    }
    d
}

/// The last attempt at this target failed: reported, and started again after a backoff until
/// [`FAILED_RETRIES`] retries have failed too.
fn retry_failed(last: &LastSync, ctx: &Context, op: Operation, rev: &str) -> Decision {
    let mut d = Decision::default();
    let msg = last
        .state
        .and_then(|s| s.message.clone())
        .unwrap_or_default();
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
    d
}

/// Drift from a target already synced: once the self-heal backoff has passed, only the drifted
/// objects are applied again, and an Event names each.
fn self_heal(
    last: &LastSync,
    ctx: &Context,
    out_of_sync: &[&ComparedResource],
    prune: bool,
    mut op: Operation,
    rev: &str,
) -> Decision {
    let mut d = Decision::default();
    let attempts = last
        .state
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
        sync.resources = Some(drifted.iter().map(|r| sync_resource(r)).collect());
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
    d
}

/// An object as a sync operation names it.
fn sync_resource(r: &ComparedResource) -> SyncOperationResource {
    SyncOperationResource {
        group: Some(r.key.group.clone()),
        kind: r.key.kind.clone(),
        name: r.key.name.clone(),
        namespace: (!r.key.namespace.is_empty()).then(|| r.key.namespace.clone()),
    }
}

/// Requests `op` as an automated sync to `rev`.
fn start(d: &mut Decision, op: Operation, rev: &str) {
    d.events.push((
        "OperationStarted".into(),
        format!("Initiated automated sync to '{rev}'"),
        false,
    ));
    d.operation = Some(op);
}

/// `apps/Deployment payments/payments-api (spec.template.spec.securityContext.runAsNonRoot
/// changed by kubectl-patch (Update) at 2026-11-30T10:00:00Z)`.
fn describe_drift(r: &ComparedResource) -> String {
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

    use plumb_app::compare::ComparedResource;
    use plumb_health::{HealthCode, HealthStatus};
    use plumb_model::ResourceKey;
    use serde_json::{Value, json};

    const REV: &str = "4f3c2a1b9e8d7c6b5a4f3c2a1b9e8d7c6b5a4f3c";

    fn app(policy: Value, operation_state: Value) -> Application {
        serde_json::from_value(json!({
            "metadata": {"name": "payments-api", "namespace": "argocd"},
            "spec": {"project": "default",
                     "source": {"repoURL": "https://git.acme.internal/apps/payments.git", "path": "k8s", "targetRevision": "main"},
                     "destination": {"server": "https://kubernetes.default.svc", "namespace": "payments"},
                     "syncPolicy": policy},
            "status": {"operationState": operation_state}
        }))
        .unwrap()
    }

    fn last_op(phase: &str, message: &str, heal_attempts: i64) -> Value {
        json!({
            "operation": {"sync": {"revision": REV, "autoHealAttemptsCount": heal_attempts}, "initiatedBy": {"automated": true}},
            "phase": phase, "message": message,
            "startedAt": "2026-11-30T10:00:00Z", "finishedAt": "2026-11-30T10:00:05Z",
            "syncResult": {"revision": REV, "source": {"repoURL": "https://git.acme.internal/apps/payments.git", "path": "k8s", "targetRevision": "main"}}
        })
    }

    fn resource(kind: &str, name: &str, status: SyncStatusCode, prune: bool) -> ComparedResource {
        let obj = json!({"apiVersion": "v1", "kind": kind, "metadata": {"name": name, "namespace": "payments"}});
        ComparedResource {
            key: ResourceKey::new("", kind, "payments", name),
            version: "v1".into(),
            desired: (!prune).then(|| obj.clone()),
            source: None,
            live: Some(obj),
            diff: None,
            status: Some(status),
            health: None,
            requires_pruning: prune,
            sync_wave: 0,
            hook: false,
            shared_with: None,
        }
    }

    fn cmp(resources: Vec<ComparedResource>) -> Comparison {
        Comparison {
            skipped: Vec::new(),
            revision: REV.into(),
            revisions: vec![REV.into()],
            sources: vec![],
            source_types: vec!["Directory".into()],
            sync: plumb_app::compare::app_sync(&resources),
            resources,
            health: HealthStatus::new(HealthCode::Healthy, ""),
            warnings: vec![],
            images: vec![],
            ignore: Default::default(),
        }
    }

    fn ctx(failed_retries: u32, since: u64) -> Context {
        Context {
            operation_in_progress: false,
            windows_allow: true,
            windows_change_in: None,
            failed_retries,
            since_finished: Some(Duration::from_secs(since)),
            prune_brake: plumb_policy::brake::Brake::default(),
        }
    }

    fn mostly_gone(kept: usize, dropped: usize) -> Comparison {
        let mut rs: Vec<ComparedResource> = (0..kept)
            .map(|i| {
                resource(
                    "ConfigMap",
                    &format!("kept-{i}"),
                    SyncStatusCode::Synced,
                    false,
                )
            })
            .collect();
        rs.extend((0..dropped).map(|i| {
            resource(
                "ConfigMap",
                &format!("gone-{i:02}"),
                SyncStatusCode::OutOfSync,
                true,
            )
        }));
        cmp(rs)
    }

    #[test]
    fn the_brake_holds_an_automated_prune_of_most_of_the_application() {
        let policy = json!({"automated": {"prune": true}});
        // First attempt at the revision: requested (the engine stops it before any write and
        // records the count), with the condition.
        let d = decide(
            &app(policy.clone(), Value::Null),
            &mostly_gone(1, 12),
            ctx(0, 100),
        );
        assert!(d.operation.is_some());
        assert_eq!(d.conditions.len(), 1);
        assert_eq!(
            d.conditions[0].1,
            format!(
                "Skipping automated sync to {REV}: Mass-deletion brake: pruning 12 of 13 objects (92.3%) exceeds both limits: \
                 10 objects (default) and 50% (default). Nothing was applied or deleted. If Git is right, sync once by hand \
                 (plumb app sync payments-api --prune, which asks for confirmation) or raise the limits for this Application \
                 (sync options PruneMaxDeletions=N, PruneMaxFraction=F)"
            )
        );
        // Once tried at this target: the condition only, no retries.
        let braked = decide(
            &app(
                policy.clone(),
                last_op("Failed", "Mass-deletion brake: ...", 0),
            ),
            &mostly_gone(1, 12),
            ctx(0, 1000),
        );
        assert!(braked.operation.is_none());
        assert_eq!(braked.conditions, d.conditions);
        // Objects marked Prune=false are not counted; without prune nothing is deleted at all.
        let mut c = mostly_gone(1, 12);
        for r in c.resources.iter_mut().skip(1).take(3) {
            r.live.as_mut().unwrap()["metadata"]["annotations"] =
                json!({"argocd.argoproj.io/sync-options": "Prune=false"});
        }
        assert_eq!(would_prune(&c), 9);
        assert!(
            decide(&app(policy, Value::Null), &c, ctx(0, 100))
                .conditions
                .is_empty()
        );
        assert!(
            decide(
                &app(json!({"automated": {}}), Value::Null),
                &mostly_gone(2, 12),
                ctx(0, 100)
            )
            .conditions
            .is_empty()
        );
        // Raised limits let it through.
        let mut raised = ctx(0, 100);
        raised.prune_brake.max_fraction = 1.0;
        let d = decide(
            &app(json!({"automated": {"prune": true}}), Value::Null),
            &mostly_gone(1, 12),
            raised,
        );
        assert!(d.conditions.is_empty());
        assert!(d.operation.is_some());
    }

    fn drifted() -> Comparison {
        cmp(vec![
            resource("ConfigMap", "settings", SyncStatusCode::OutOfSync, false),
            resource("Service", "api", SyncStatusCode::Synced, false),
        ])
    }

    #[test]
    fn a_new_revision_is_synced_with_argos_default_retry() {
        let d = decide(
            &app(json!({"automated": {"prune": true}}), Value::Null),
            &drifted(),
            ctx(0, 100),
        );
        let op = d.operation.expect("operation");
        assert_eq!(op.initiated_by.and_then(|i| i.automated), Some(true));
        assert_eq!(op.retry.and_then(|r| r.limit), Some(5));
        let sync = op.sync.expect("sync");
        assert_eq!(sync.revision.as_deref(), Some(REV));
        assert_eq!(sync.prune, Some(true));
        assert_eq!(sync.resources, None, "a full sync");
        assert_eq!(
            d.events[0].1,
            format!("Initiated automated sync to '{REV}'")
        );
        assert!(d.conditions.is_empty());
    }

    #[test]
    fn a_failed_attempt_is_retried_after_a_pause_and_then_given_up() {
        let a = app(
            json!({"automated": {}}),
            last_op("Failed", "one or more objects failed to apply", 0),
        );
        let waiting = decide(&a, &drifted(), ctx(0, 4));
        assert!(waiting.operation.is_none());
        assert_eq!(waiting.recheck_after, Some(Duration::from_secs(6)));
        assert_eq!(
            waiting.conditions,
            [(
                "SyncError".to_string(),
                format!("Failed last sync attempt to {REV}: one or more objects failed to apply")
            )]
        );
        let again = decide(&a, &drifted(), ctx(1, 31));
        assert!(again.operation.is_some() && again.retrying_failure);
        let given_up = decide(&a, &drifted(), ctx(FAILED_RETRIES, 1000));
        assert!(given_up.operation.is_none() && given_up.recheck_after.is_none());
        assert!(
            given_up.conditions[0]
                .1
                .ends_with("(automated sync tried 4 times; push a new commit or sync manually)")
        );
    }

    #[test]
    fn drift_after_a_successful_sync_heals_only_with_self_heal_and_after_the_backoff() {
        let plain = app(
            json!({"automated": {}}),
            last_op("Succeeded", "successfully synced (all tasks run)", 0),
        );
        let d = decide(&plain, &drifted(), ctx(0, 100));
        assert!(d.operation.is_none() && d.events.is_empty() && d.conditions.is_empty());

        let healing = app(
            json!({"automated": {"selfHeal": true}}),
            last_op("Succeeded", "successfully synced (all tasks run)", 2),
        );
        let early = decide(&healing, &drifted(), ctx(0, 5));
        assert_eq!(
            early.recheck_after,
            Some(Duration::from_secs(13)),
            "2 s × 3² = 18 s after the last one"
        );
        let d = decide(&healing, &drifted(), ctx(0, 18));
        let sync = d.operation.expect("operation").sync.expect("sync");
        assert_eq!(sync.auto_heal_attempts_count, Some(3));
        let kinds: Vec<_> = sync
            .resources
            .unwrap_or_default()
            .into_iter()
            .map(|r| r.kind)
            .collect();
        assert_eq!(kinds, ["ConfigMap"], "only the drifted object");
        assert_eq!(d.events[0].0, "SelfHeal");
    }

    #[test]
    fn prune_only_drift_and_emptying_the_application_are_skipped() {
        let prune_only = cmp(vec![
            resource("ConfigMap", "old", SyncStatusCode::OutOfSync, true),
            resource("Service", "api", SyncStatusCode::Synced, false),
        ]);
        let d = decide(
            &app(json!({"automated": {}}), Value::Null),
            &prune_only,
            ctx(0, 100),
        );
        assert!(d.operation.is_none());
        assert_eq!(
            d.events[0].1,
            "Skipping auto-sync: need to prune extra resources only but automated prune is disabled"
        );
        let all_gone = cmp(vec![resource(
            "ConfigMap",
            "old",
            SyncStatusCode::OutOfSync,
            true,
        )]);
        let d = decide(
            &app(json!({"automated": {"prune": true}}), Value::Null),
            &all_gone,
            ctx(0, 100),
        );
        assert!(d.operation.is_none());
        assert_eq!(
            d.conditions[0].1,
            format!("Skipping sync attempt to {REV}: auto-sync will wipe out all resources")
        );
        let allowed = decide(
            &app(
                json!({"automated": {"prune": true, "allowEmpty": true}}),
                Value::Null,
            ),
            &all_gone,
            ctx(0, 100),
        );
        assert!(allowed.operation.is_some());
    }

    #[test]
    fn nothing_without_automation_during_an_operation_or_outside_windows() {
        assert!(
            decide(&app(json!({}), Value::Null), &drifted(), ctx(0, 100))
                .operation
                .is_none()
        );
        let off = app(json!({"automated": {"enabled": false}}), Value::Null);
        assert!(decide(&off, &drifted(), ctx(0, 100)).operation.is_none());
        let on = app(json!({"automated": {}}), Value::Null);
        let mut busy = ctx(0, 100);
        busy.operation_in_progress = true;
        assert!(decide(&on, &drifted(), busy).operation.is_none());
        let mut closed = ctx(0, 100);
        closed.windows_allow = false;
        let d = decide(&on, &drifted(), closed);
        assert!(d.operation.is_none());
        assert_eq!(
            d.events[0].1,
            format!("Skipping auto-sync to {REV}: blocked by sync window")
        );
    }
}
