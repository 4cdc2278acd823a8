//! Running one sync: dry-run every task, then apply in kind order, then prune.

use std::collections::BTreeMap;

use plumb_kube::{Applier, Deleted, PropagationPolicy};
use plumb_model::ResourceKey;
use plumb_model::application::{OperationPhase, ResourceResult, ResultCode, SyncPhase};
use serde_json::{Value, json};

use crate::options::SyncOptions;
use crate::order::kind_rank;
use crate::task::{SyncTask, TaskSelection};

/// The destination namespace to create first (`CreateNamespace=true`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NamespaceToCreate {
    /// Namespace name.
    pub name: String,
    /// `managedNamespaceMetadata.labels`.
    pub labels: BTreeMap<String, String>,
    /// `managedNamespaceMetadata.annotations`.
    pub annotations: BTreeMap<String, String>,
}

/// Everything one sync needs to know.
#[derive(Debug, Clone, Default)]
pub struct SyncRequest {
    /// Candidate tasks (every compared resource that is not a hook).
    pub tasks: Vec<SyncTask>,
    /// `--resource` selection.
    pub selection: TaskSelection,
    /// Server-side dry run only; nothing changes.
    pub dry_run: bool,
    /// Prune tracked objects Git no longer declares.
    pub prune: bool,
    /// Application and operation sync options.
    pub options: SyncOptions,
    /// A namespace to create before anything else.
    pub create_namespace: Option<NamespaceToCreate>,
}

/// How the sync ended.
#[derive(Debug, Clone, PartialEq)]
pub struct SyncOutcome {
    /// `Succeeded` or `Failed`.
    pub phase: OperationPhase,
    /// Argo's operation message.
    pub message: String,
    /// One result per touched resource, in the order the work was done.
    pub results: Vec<ResourceResult>,
}

/// Runs a sync against the cluster behind `applier`.
pub async fn run(applier: &Applier, req: SyncRequest) -> SyncOutcome {
    let mut tasks: Vec<SyncTask> = req
        .tasks
        .into_iter()
        .filter(|t| req.selection.selects(&t.key))
        .filter(|t| t.is_prune() || !req.options.is_true("ApplyOutOfSyncOnly") || t.out_of_sync)
        .collect();
    tasks.sort_by(|a, b| {
        (kind_rank(&a.key.kind), &a.key.namespace, &a.key.name).cmp(&(
            kind_rank(&b.key.kind),
            &b.key.namespace,
            &b.key.name,
        ))
    });
    let (applies, prunes): (Vec<SyncTask>, Vec<SyncTask>) =
        tasks.into_iter().partition(|t| !t.is_prune());
    let mut results = Vec::new();

    // The namespace first, so that the dry run of objects inside it can succeed.
    let mut namespace_failed = false;
    if let Some(ns) = &req.create_namespace {
        let key = ResourceKey::new("", "Namespace", "", &ns.name);
        let live = applier.get(&key).await.ok().flatten();
        if live.is_none() || !ns.labels.is_empty() || !ns.annotations.is_empty() {
            let body = json!({
                "apiVersion": "v1", "kind": "Namespace",
                "metadata": {"name": ns.name, "labels": ns.labels, "annotations": ns.annotations},
            });
            let r = if req.dry_run {
                applier.dry_run_apply(&body).await.map(|_| ())
            } else {
                applier.apply(&body, live.as_ref()).await.map(|_| ())
            };
            let (status, message) = match r {
                Ok(()) => {
                    let verb = if live.is_none() {
                        "created"
                    } else {
                        "configured"
                    };
                    (
                        ResultCode::Synced,
                        with_dry_run(format!("namespace/{} {verb}", ns.name), req.dry_run),
                    )
                }
                Err(e) => {
                    namespace_failed = true;
                    (ResultCode::SyncFailed, error_text(&e))
                }
            };
            results.push(result(&key, "v1", status, message));
        }
    }
    if namespace_failed {
        return SyncOutcome {
            phase: OperationPhase::Failed,
            message: "one or more objects failed to apply".to_string(),
            results,
        };
    }

    // Dry run of every apply before anything changes; one failure fails the whole sync.
    let mut dry_failed = false;
    let mut dry_results = Vec::new();
    for t in &applies {
        let Some(desired) = &t.desired else { continue };
        match applier.dry_run_apply(desired).await {
            Ok(predicted) => dry_results.push((t, Ok(predicted))),
            Err(e) => {
                dry_failed = true;
                dry_results.push((t, Err(error_text(&e))));
            }
        }
    }
    if dry_failed {
        for (t, r) in dry_results {
            if let Err(msg) = r {
                results.push(result(&t.key, &t.version, ResultCode::SyncFailed, msg));
            }
        }
        return SyncOutcome {
            phase: OperationPhase::Failed,
            message: "one or more objects failed to apply (dry run)".to_string(),
            results,
        };
    }

    let mut failed = false;
    if req.dry_run {
        for (t, r) in dry_results {
            let verb = match (&t.live, &r) {
                (None, _) => "created",
                (Some(live), Ok(predicted)) if same_object(live, predicted) => "unchanged",
                _ => "configured",
            };
            let msg = format!("{} {verb} (dry run)", kubectl_name(&t.key));
            results.push(result(&t.key, &t.version, ResultCode::Synced, msg));
        }
    } else {
        for t in &applies {
            let Some(desired) = &t.desired else { continue };
            match applier.apply(desired, t.live.as_ref()).await {
                Ok(stored) => {
                    let verb = match &t.live {
                        None => "created",
                        Some(live) if resource_version(live) == resource_version(&stored) => {
                            "unchanged"
                        }
                        Some(_) => "configured",
                    };
                    let msg = format!("{} {verb}", kubectl_name(&t.key));
                    results.push(result(&t.key, &t.version, ResultCode::Synced, msg));
                }
                Err(e) => {
                    failed = true;
                    results.push(result(
                        &t.key,
                        &t.version,
                        ResultCode::SyncFailed,
                        error_text(&e),
                    ));
                }
            }
        }
    }

    // Prune last, in reverse order, and only what may be pruned.
    for t in prunes.iter().rev() {
        let live_opts = t
            .live
            .as_ref()
            .map(SyncOptions::of_object)
            .unwrap_or_default();
        let (status, message) = if live_opts
            .get("Prune")
            .is_some_and(|v| v.eq_ignore_ascii_case("false"))
        {
            (ResultCode::PruneSkipped, "ignored (no prune)".to_string())
        } else if !req.prune {
            (
                ResultCode::PruneSkipped,
                "ignored (requires pruning)".to_string(),
            )
        } else if req.dry_run {
            (ResultCode::Pruned, "pruned (dry run)".to_string())
        } else {
            let policy = propagation(&req.options.merged(&live_opts));
            match applier.delete(&t.key, policy).await {
                Ok(Deleted::Gone | Deleted::Pending(_) | Deleted::NotFound) => {
                    (ResultCode::Pruned, "pruned".to_string())
                }
                Err(e) => {
                    failed = true;
                    (ResultCode::SyncFailed, error_text(&e))
                }
            }
        };
        results.push(result(&t.key, &t.version, status, message));
    }

    if failed {
        SyncOutcome {
            phase: OperationPhase::Failed,
            message: "one or more objects failed to apply".to_string(),
            results,
        }
    } else {
        SyncOutcome {
            phase: OperationPhase::Succeeded,
            message: "successfully synced (all tasks run)".to_string(),
            results,
        }
    }
}

fn propagation(options: &SyncOptions) -> PropagationPolicy {
    match options
        .get("PrunePropagationPolicy")
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("background") => PropagationPolicy::Background,
        Some("orphan") => PropagationPolicy::Orphan,
        _ => PropagationPolicy::Foreground,
    }
}

fn with_dry_run(msg: String, dry_run: bool) -> String {
    if dry_run {
        format!("{msg} (dry run)")
    } else {
        msg
    }
}

fn resource_version(obj: &Value) -> Option<&str> {
    obj.pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
}

/// Whether a dry-run result would store nothing new (same spec, labels, annotations, data).
fn same_object(live: &Value, predicted: &Value) -> bool {
    let strip = |v: &Value| {
        let mut v = v.clone();
        if let Some(meta) = v.get_mut("metadata").and_then(Value::as_object_mut) {
            for f in ["managedFields", "resourceVersion", "generation"] {
                meta.remove(f);
            }
        }
        v
    };
    strip(live) == strip(predicted)
}

/// kubectl's way of naming an object in apply messages: `deployment.apps/api`, `service/api`.
pub(crate) fn kubectl_name(key: &ResourceKey) -> String {
    let kind = key.kind.to_ascii_lowercase();
    if key.group.is_empty() {
        format!("{kind}/{}", key.name)
    } else {
        format!("{kind}.{}/{}", key.group, key.name)
    }
}

fn error_text(e: &plumb_kube::Error) -> String {
    // The full chain, one line: the API server's message is what users need to act on.
    let mut msg = e.to_string();
    let mut src = std::error::Error::source(e);
    while let Some(s) = src {
        msg.push_str(": ");
        msg.push_str(&s.to_string());
        src = s.source();
    }
    msg
}

fn result(key: &ResourceKey, version: &str, status: ResultCode, message: String) -> ResourceResult {
    ResourceResult {
        group: key.group.clone(),
        version: version.to_string(),
        kind: key.kind.clone(),
        namespace: key.namespace.clone(),
        name: key.name.clone(),
        status: Some(status),
        message: Some(message),
        hook_type: None,
        hook_phase: None,
        sync_phase: Some(SyncPhase::Sync),
        images: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubectl_names() {
        assert_eq!(
            kubectl_name(&ResourceKey::new("apps", "Deployment", "n", "api")),
            "deployment.apps/api"
        );
        assert_eq!(
            kubectl_name(&ResourceKey::new("", "Service", "n", "api")),
            "service/api"
        );
    }
}
