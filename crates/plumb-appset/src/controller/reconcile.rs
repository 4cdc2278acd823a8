//! One reconcile of one ApplicationSet (Argo's `ApplicationSetReconciler.Reconcile`), and the
//! workers that run them from the queue.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use kube::api::{Api, DynamicObject};
use serde_json::Value;
use tokio::sync::{Semaphore, mpsc};

use plumb_model::application::Application;
use plumb_model::applicationset::{ApplicationSet, condition, condition::reason};

use super::conditions::Cond;
use super::config::REQUEUE_ON_ERROR;
use super::desired::{self, Clusters};
use super::hooks::{self, DeletionInput};
use super::status::{self, REFRESH_ANNOTATION, Record};
use super::update::Rules;
use super::{Runtime, applicationset_resource, apps, rollout};

/// How long a set waits after a failed write before it is tried again.
const RETRY_AFTER_FAILURE: Duration = Duration::from_secs(30);
/// How often a replica that is not the leader looks again.
const NOT_LEADING_RECHECK: Duration = Duration::from_secs(10);
/// Plumb's annotation confirming held deletions (the brake).
pub const CONFIRM_DELETION_ANNOTATION: &str = "plumb.dev/confirm-deletion";

/// Takes keys off the queue and reconciles up to `config.workers` sets at once.
pub(crate) async fn work(rt: Arc<Runtime>, mut rx: mpsc::UnboundedReceiver<String>) {
    let slots = Arc::new(Semaphore::new(rt.config.workers.max(1)));
    while let Some(key) = rx.recv().await {
        let Ok(permit) = slots.clone().acquire_owned().await else {
            return;
        };
        if !rt.queue.start(&key) {
            drop(permit);
            continue;
        }
        let rt = rt.clone();
        tokio::spawn(async move {
            let again = if (rt.gate)() {
                one(&rt, &key).await
            } else {
                Some(NOT_LEADING_RECHECK)
            };
            rt.queue.done(&key);
            if let Some(after) = again {
                rt.queue.push_after(&key, after);
            }
            drop(permit);
        });
    }
}

/// Reconciles the set `namespace/name`; returns when to look again.
async fn one(rt: &Runtime, key: &str) -> Option<Duration> {
    let (namespace, name) = key.split_once('/')?;
    let api: Api<DynamicObject> =
        Api::namespaced_with(rt.ctx.client.clone(), namespace, &applicationset_resource());
    let set = match api.get_opt(name).await {
        Ok(Some(o)) => o,
        Ok(None) => {
            rt.metrics.forget(namespace, name);
            rt.queue.forget(key);
            return None;
        }
        Err(e) => {
            tracing::warn!(set = %key, "reading the ApplicationSet: {e}");
            return Some(RETRY_AFTER_FAILURE);
        }
    };
    let set: ApplicationSet = match serde_json::to_value(set).and_then(serde_json::from_value) {
        Ok(s) => s,
        Err(e) => {
            tracing::warn!(set = %key, "the ApplicationSet cannot be read: {e}");
            return None;
        }
    };
    let started = Instant::now();
    let again = match reconcile(rt, &set).await {
        Ok(again) => again,
        Err(e) => {
            tracing::warn!(set = %key, "reconcile failed: {e}");
            Some(RETRY_AFTER_FAILURE)
        }
    };
    rt.metrics
        .observe_reconcile(namespace, name, started.elapsed());
    again
}

/// Everything one reconcile does. `Err` only for API failures outside the Applications'
/// writes (those are recorded as conditions).
async fn reconcile(rt: &Runtime, set: &ApplicationSet) -> Result<Option<Duration>, kube::Error> {
    if set.metadata.other.contains_key("deletionTimestamp") {
        return deleting(rt, set).await;
    }
    rollout::ensure_finalizer(rt, set).await?;
    let current = apps::owned(rt, set).await?;
    let generated = desired::generate(set, &rt.ctx).await;
    if let Some(failure) = &generated.failure {
        // Nothing is created, updated or deleted on a generation failure (Argo stops here);
        // the brake is told what would have gone so its condition can name it.
        let decision = hooks::decide_deletions(&DeletionInput {
            set,
            candidates: candidates(&generated.applications, &current),
            generator_errors: generated.errors.clone(),
            previous_count: alive(&current),
            brake: &rt.config.brake,
        });
        let mut conds = vec![Cond::error(failure.reason, failure.message.clone())];
        conds.extend(decision.condition);
        record_error(rt, set, conds, false, &current).await?;
        if decision.clear_confirmation {
            status::clear_annotations(rt, set, &[CONFIRM_DELETION_ANNOTATION]).await?;
        }
        return Ok(Some(REQUEUE_ON_ERROR));
    }
    let mut invalid = desired::validate(set, &generated.applications, &rt.ctx).await?;
    invalid.extend(generated.duplicates.clone());
    let valid = valid_sorted(&generated.applications, &invalid);
    apply(rt, set, &generated.applications, valid, &invalid, current).await
}

fn valid_sorted(apps: &[Application], invalid: &BTreeMap<String, String>) -> Vec<Application> {
    let mut valid: Vec<Application> = apps
        .iter()
        .filter(|a| {
            let n = a.metadata.name.as_deref().unwrap_or_default();
            !n.is_empty() && !invalid.contains_key(n)
        })
        .cloned()
        .collect();
    valid.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    valid.dedup_by(|a, b| a.metadata.name == b.metadata.name);
    valid
}

/// Create/update, delete, status: the part after generation.
async fn apply(
    rt: &Runtime,
    set: &ApplicationSet,
    generated: &[Application],
    valid: Vec<Application>,
    invalid: &BTreeMap<String, String>,
    current: BTreeMap<String, Value>,
) -> Result<Option<Duration>, kube::Error> {
    let policy = rt.config.policy_for(set);
    let rules = match Rules::of(
        set,
        &rt.config.preserved_annotations,
        &rt.config.preserved_labels,
    ) {
        Ok(r) => r,
        Err(message) => {
            let cond = Cond::error(reason::UPDATE_APPLICATION_ERROR, message);
            record_error(rt, set, vec![cond], true, &current).await?;
            return Ok(Some(REQUEUE_ON_ERROR));
        }
    };
    let progress = match rollout::progressive_step(rt, set, &current, valid, &rules).await {
        Ok(p) => p,
        Err(stop) => {
            record_error(rt, set, vec![stop], true, &current).await?;
            return Ok(Some(REQUEUE_ON_ERROR));
        }
    };
    let (to_write, create_reason) = writable(policy, progress.generated, &current);
    let written = apps::create_or_update(rt, set, &to_write, &current, &rules).await;
    let mut conds = progress.conditions;
    if let Some(e) = written.first_error {
        conds.push(Cond::error(create_reason, e));
        record_as(
            rt,
            set,
            conds,
            &current,
            progress.application_status,
            Step::WriteFailed,
        )
        .await?;
        return Ok(Some(RETRY_AFTER_FAILURE));
    }
    let wrote = !written.created.is_empty() || !written.updated.is_empty();
    let after = AfterWrites {
        wrote,
        conds,
        application_status: progress.application_status,
        requeue_after: progress.requeue_after,
    };
    finish_apply(rt, set, generated, invalid, current, after).await
}

/// What create/update left for the rest of the reconcile.
struct AfterWrites {
    wrote: bool,
    conds: Vec<Cond>,
    application_status: Option<Vec<plumb_model::applicationset::ApplicationSetApplicationStatus>>,
    /// When the rollout wants the set looked at again.
    requeue_after: Option<Duration>,
}

/// Deletions (under the policy and the brake), annotations, conditions and status.
async fn finish_apply(
    rt: &Runtime,
    set: &ApplicationSet,
    generated: &[Application],
    invalid: &BTreeMap<String, String>,
    current: BTreeMap<String, Value>,
    after: AfterWrites,
) -> Result<Option<Duration>, kube::Error> {
    let AfterWrites {
        mut wrote,
        mut conds,
        application_status,
        requeue_after,
    } = after;
    let mut confirm_used = false;
    if rt.config.policy_for(set).allow_delete() {
        match deletions(rt, set, generated, &current).await? {
            Deletions::Done {
                any,
                cond,
                confirmed,
            } => {
                wrote |= any;
                confirm_used = confirmed;
                conds.extend(cond);
            }
            Deletions::Failed(e) => {
                conds.push(Cond::error(reason::DELETE_APPLICATION_ERROR, e));
                record_as(
                    rt,
                    set,
                    conds,
                    &current,
                    application_status,
                    Step::WriteFailed,
                )
                .await?;
                return Ok(Some(RETRY_AFTER_FAILURE));
            }
        }
    }
    let now_owned = if wrote {
        apps::owned(rt, set).await?
    } else {
        current
    };
    let mut clear = vec![REFRESH_ANNOTATION];
    if confirm_used {
        clear.push(CONFIRM_DELETION_ANNOTATION);
    }
    status::clear_annotations(rt, set, &clear).await?;
    let again = earliest(
        desired::requeue_after(set, rt.config.requeue_after),
        requeue_after,
    );
    match validation_condition(set, invalid) {
        Some(cond) => conds.push(cond),
        None => conds.push(Cond::up_to_date()),
    }
    record(rt, set, conds, &now_owned, application_status).await?;
    Ok(if invalid.is_empty() {
        again
    } else {
        Some(again.unwrap_or(REQUEUE_ON_ERROR))
    })
}

/// What the policy lets the controller write: everything, or only new Applications (with the
/// condition reason of a failure).
fn writable(
    policy: plumb_model::applicationset::ApplicationsSyncPolicy,
    generated: Vec<Application>,
    current: &BTreeMap<String, Value>,
) -> (Vec<Application>, &'static str) {
    if policy.allow_update() {
        return (generated, reason::UPDATE_APPLICATION_ERROR);
    }
    let new = generated
        .into_iter()
        .filter(|a| !current.contains_key(a.metadata.name.as_deref().unwrap_or_default()))
        .collect();
    (new, reason::CREATE_APPLICATION_ERROR)
}

fn earliest(a: Option<Duration>, b: Option<Duration>) -> Option<Duration> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// The owned Applications not generated (sorted by name), leaving out those already being
/// deleted: the brake weighs only deletions this reconcile would start.
fn candidates(generated: &[Application], current: &BTreeMap<String, Value>) -> Vec<String> {
    let wanted: std::collections::BTreeSet<&str> = generated
        .iter()
        .filter_map(|a| a.metadata.name.as_deref())
        .collect();
    current
        .iter()
        .filter(|(n, v)| !wanted.contains(n.as_str()) && !terminating(v))
        .map(|(n, _)| n.clone())
        .collect()
}

fn terminating(app: &Value) -> bool {
    app.pointer("/metadata/deletionTimestamp")
        .is_some_and(|t| !t.is_null())
}

/// The owned Applications not being deleted: what the brake's share is of.
fn alive(current: &BTreeMap<String, Value>) -> usize {
    current.values().filter(|v| !terminating(v)).count()
}

/// Argo's message for invalid Applications: the last one's, with how many more.
fn validation_condition(set: &ApplicationSet, invalid: &BTreeMap<String, String>) -> Option<Cond> {
    let (_, last) = invalid.iter().next_back()?;
    for (app, message) in invalid {
        tracing::warn!(set = %set.name(), application = %app, "validation error: {message}");
    }
    let message = if invalid.len() > 1 {
        format!("{last} (and {} more)", invalid.len() - 1)
    } else {
        last.clone()
    };
    Some(Cond::error(reason::APPLICATION_VALIDATION_ERROR, message))
}

enum Deletions {
    Done {
        any: bool,
        cond: Option<Cond>,
        confirmed: bool,
    },
    Failed(String),
}

/// The owned Applications no longer generated go, as far as the brake lets them. Invalid
/// generated Applications count as generated (Argo: deleting them would hide the error).
async fn deletions(
    rt: &Runtime,
    set: &ApplicationSet,
    generated: &[Application],
    current: &BTreeMap<String, Value>,
) -> Result<Deletions, kube::Error> {
    let decision = hooks::decide_deletions(&DeletionInput {
        set,
        candidates: candidates(generated, current),
        generator_errors: Vec::new(),
        previous_count: alive(current),
        brake: &rt.config.brake,
    });
    if decision.delete_now.is_empty() {
        return Ok(Deletions::Done {
            any: false,
            cond: decision.condition,
            confirmed: decision.clear_confirmation,
        });
    }
    let preserve = set
        .spec
        .sync_policy
        .as_ref()
        .and_then(|p| p.preserve_resources_on_deletion)
        .unwrap_or(false);
    let clusters = Clusters::list(&rt.ctx).await?;
    match apps::delete(rt, set, &decision.delete_now, current, preserve, &clusters).await {
        Ok(_) => Ok(Deletions::Done {
            any: true,
            cond: decision.condition,
            confirmed: decision.clear_confirmation,
        }),
        Err(e) => Ok(Deletions::Failed(e)),
    }
}

/// How far a reconcile got: what `status.resources` may say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    /// Writes done: the owned Applications are recorded.
    Complete,
    /// A create, update or delete failed: Argo returns before `updateResourcesStatus`, so
    /// `status.resources` keeps what the last complete reconcile recorded.
    WriteFailed,
}

/// The owned Applications `status.resources` is written from, if it is written.
fn recorded_resources(
    owned: &BTreeMap<String, Value>,
    step: Step,
) -> Option<&BTreeMap<String, Value>> {
    (step == Step::Complete).then_some(owned)
}

/// Records conditions (with `status.resources` of `owned`) and the metrics.
async fn record(
    rt: &Runtime,
    set: &ApplicationSet,
    conds: Vec<Cond>,
    owned: &BTreeMap<String, Value>,
    application_status: Option<Vec<plumb_model::applicationset::ApplicationSetApplicationStatus>>,
) -> Result<(), kube::Error> {
    record_as(rt, set, conds, owned, application_status, Step::Complete).await
}

/// [`record`] after a reconcile that got as far as `step`.
async fn record_as(
    rt: &Runtime,
    set: &ApplicationSet,
    conds: Vec<Cond>,
    owned: &BTreeMap<String, Value>,
    application_status: Option<Vec<plumb_model::applicationset::ApplicationSetApplicationStatus>>,
    step: Step,
) -> Result<(), kube::Error> {
    let new_error = conds
        .iter()
        .find(|c| c.kind == plumb_model::applicationset::condition::ERROR_OCCURRED)
        .cloned();
    let before = set
        .status
        .as_ref()
        .and_then(|s| s.conditions.clone())
        .unwrap_or_default();
    let recorded = status::write(
        rt,
        set,
        Record {
            conds,
            parameters_generated: true,
            owned: recorded_resources(owned, step),
            application_status,
        },
    )
    .await?;
    finish(rt, set, &before, &recorded, new_error, owned.len()).await;
    Ok(())
}

/// Records a generation or configuration error: conditions only, nothing else touched.
async fn record_error(
    rt: &Runtime,
    set: &ApplicationSet,
    conds: Vec<Cond>,
    parameters_generated: bool,
    current: &BTreeMap<String, Value>,
) -> Result<(), kube::Error> {
    let before = set
        .status
        .as_ref()
        .and_then(|s| s.conditions.clone())
        .unwrap_or_default();
    let recorded = status::write(
        rt,
        set,
        Record {
            conds: conds.clone(),
            parameters_generated,
            owned: None,
            application_status: None,
        },
    )
    .await?;
    let error = conds
        .into_iter()
        .find(|c| c.kind == condition::ERROR_OCCURRED);
    finish(rt, set, &before, &recorded, error, current.len()).await;
    Ok(())
}

/// Metrics, and a Warning event when an error condition appears or changes.
async fn finish(
    rt: &Runtime,
    set: &ApplicationSet,
    before: &[plumb_model::applicationset::ApplicationSetCondition],
    after: &[plumb_model::applicationset::ApplicationSetCondition],
    error: Option<Cond>,
    owned: usize,
) {
    rt.metrics.set_info(
        set.namespace(),
        set.name(),
        super::conditions::update_status(after),
        owned,
    );
    if let Some(e) = error.filter(|e| e.status == plumb_model::applicationset::condition::TRUE) {
        let seen = before
            .iter()
            .any(|c| c.r#type == e.kind && c.status == e.status && c.message == e.message);
        if !seen {
            rt.events.warning(set, &e.reason, e.message).await;
        }
    }
}

/// A set being deleted (Argo): under a policy that does not delete, its Applications lose
/// their owner reference so garbage collection leaves them; the resources finalizer (added for
/// `deletionOrder: Reverse`) is removed once the ordered deletion is done.
async fn deleting(rt: &Runtime, set: &ApplicationSet) -> Result<Option<Duration>, kube::Error> {
    if !rt.config.policy_for(set).allow_delete() {
        let current = apps::owned(rt, set).await?;
        if let Err(e) = apps::orphan(rt, set, &current).await {
            tracing::warn!(set = %set.name(), "{e}");
        }
    }
    if let Some(again) = rollout::reverse_deletion(rt, set).await? {
        return Ok(Some(again));
    }
    let finalizers = set.metadata.finalizers.clone().unwrap_or_default();
    if finalizers
        .iter()
        .any(|f| f == super::update::RESOURCES_FINALIZER)
    {
        let kept: Vec<&String> = finalizers
            .iter()
            .filter(|f| *f != super::update::RESOURCES_FINALIZER)
            .collect();
        let api: Api<DynamicObject> = Api::namespaced_with(
            rt.ctx.client.clone(),
            set.namespace(),
            &applicationset_resource(),
        );
        let body = serde_json::json!({"metadata": {"finalizers": kept}});
        api.patch(
            set.name(),
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(&body),
        )
        .await?;
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Argo's ownership-conflict case (conformance/appset/ownership-conflict): the set that
    /// cannot take over another set's Application still creates its own, but its
    /// `status.resources` stays as it was (empty), as Argo leaves it.
    #[test]
    fn a_failed_write_leaves_status_resources() {
        let owned: BTreeMap<String, Value> = [(
            "oc-own".to_string(),
            serde_json::json!({"metadata": {"name": "oc-own"}}),
        )]
        .into();
        assert!(recorded_resources(&owned, Step::WriteFailed).is_none());
        assert_eq!(recorded_resources(&owned, Step::Complete), Some(&owned));
    }
}
