//! Running the operation requested on `Application.operation` and recording it in
//! `status.operationState` and `status.history`.
//!
//! The operation is marked `Running` in the status before any change is made. A controller that
//! finds an operation `Running` that it did not start itself (it was restarted mid-way) fails it
//! cleanly instead of running it again: the user sees why and requests a new sync.

use std::sync::Arc;

use plumb_model::application::{
    Application, OperationPhase, RevisionHistory, SyncOperationResource,
};
use plumb_source::Renderer;
use plumb_sync::{NamespaceToCreate, SyncOptions, SyncRequest, SyncTask, TaskSelection};
use serde_json::{Value, json};

use crate::compare::{CompareOptions, Refresh, compare};
use crate::context::{Cluster, Engines};
use crate::status::now;

/// Message recorded for an operation interrupted by a controller restart.
pub const INTERRUPTED: &str = "Operation was interrupted by a controller restart before it finished; it was not run again. Request the sync again.";

/// The outcome of an operation, as written to `status.operationState`.
#[derive(Debug, Clone)]
pub struct Finished {
    /// The whole `operationState` object.
    pub state: Value,
    /// The history entry to append, when the sync deployed a revision.
    pub history: Option<RevisionHistory>,
    /// The final phase.
    pub phase: OperationPhase,
    /// The revision synced to.
    pub revision: String,
}

/// The `operationState` written when an operation starts.
pub fn started(app: &Application, now: &str) -> Value {
    // Written as a merge patch over the previous operation's state: clear what belonged to it.
    json!({
        "operation": app.operation,
        "phase": "Running",
        "message": "one or more tasks are running",
        "startedAt": now,
        "finishedAt": null,
        "syncResult": null,
        "retryCount": null,
    })
}

/// Runs the sync requested on `app.operation`.
pub async fn run_sync(
    app: &Application,
    engines: &Engines,
    cluster: &Cluster,
    renderer: &Arc<Renderer>,
    started_at: &str,
) -> Finished {
    let op = app.operation.clone().unwrap_or_default();
    let sync = op.sync.clone().unwrap_or_default();
    let dry_run = sync.dry_run.unwrap_or(false);
    let fail = |phase: OperationPhase, message: String, revision: String| Finished {
        state: json!({
            "operation": op, "phase": phase.as_str(), "message": message,
            "startedAt": started_at, "finishedAt": now(),
        }),
        history: None,
        phase,
        revision,
    };

    let cmp_opts = CompareOptions {
        revision: sync.revision.clone().filter(|r| !r.is_empty()),
        refresh: Refresh::Normal,
        attribution: false,
        fresh_reads: false,
    };
    let cmp = match compare(app, engines, cluster, renderer, &cmp_opts).await {
        Ok(c) => c,
        Err(e) => {
            return fail(
                OperationPhase::Error,
                format!("ComparisonError: {}", crate::error::chain(&e)),
                String::new(),
            );
        }
    };

    let mut options = SyncOptions::parse(
        app.spec
            .sync_policy
            .as_ref()
            .and_then(|p| p.sync_options.as_ref())
            .into_iter()
            .flatten()
            .map(String::as_str),
    );
    options = options.merged(&SyncOptions::parse(
        sync.sync_options.iter().flatten().map(String::as_str),
    ));
    let create_namespace = options
        .is_true("CreateNamespace")
        .then(|| {
            let meta = app
                .spec
                .sync_policy
                .as_ref()
                .and_then(|p| p.managed_namespace_metadata.clone());
            NamespaceToCreate {
                name: app.spec.destination.namespace.clone().unwrap_or_default(),
                labels: meta
                    .as_ref()
                    .and_then(|m| m.labels.clone())
                    .unwrap_or_default(),
                annotations: meta.and_then(|m| m.annotations).unwrap_or_default(),
            }
        })
        .filter(|ns| !ns.name.is_empty());

    let tasks: Vec<SyncTask> = cmp
        .resources
        .iter()
        .filter(|r| !r.hook)
        .filter(|r| r.desired.is_some() || r.requires_pruning)
        .map(|r| SyncTask {
            key: r.key.clone(),
            version: r.version.clone(),
            desired: r.desired.clone(),
            live: r.live.clone(),
            out_of_sync: r.status == Some(plumb_model::application::SyncStatusCode::OutOfSync),
        })
        .collect();
    let selection: Vec<SyncOperationResource> = sync.resources.clone().unwrap_or_default();
    let selective = !selection.is_empty();
    let request = SyncRequest {
        tasks,
        selection: TaskSelection::new(selection),
        dry_run,
        prune: sync.prune.unwrap_or(false),
        options,
        create_namespace,
    };
    let outcome = plumb_sync::run(&cluster.applier, request).await;

    let source = cmp.sources.first().cloned();
    let mut sync_result = json!({
        "resources": outcome.results,
        "revision": cmp.revision,
    });
    if cmp.sources.len() > 1 {
        sync_result["sources"] = json!(cmp.sources);
        sync_result["revisions"] = json!(cmp.revisions);
    } else if let Some(s) = &source {
        sync_result["source"] = json!(s);
    }
    let finished_at = now();
    let state = json!({
        "operation": op,
        "phase": outcome.phase.as_str(),
        "message": outcome.message,
        "syncResult": sync_result,
        "startedAt": started_at,
        "finishedAt": finished_at,
    });
    // Argo records a deployment in history only for a successful, full, real sync.
    let history =
        (outcome.phase == OperationPhase::Succeeded && !dry_run && !selective).then(|| {
            let next_id = app
                .status
                .as_ref()
                .and_then(|s| s.history.as_ref())
                .and_then(|h| h.iter().map(|e| e.id).max())
                .map_or(0, |m| m + 1);
            RevisionHistory {
                revision: Some(cmp.revision.clone()),
                deployed_at: finished_at.clone(),
                id: next_id,
                source: if cmp.sources.len() > 1 {
                    None
                } else {
                    source.clone()
                },
                deploy_started_at: Some(started_at.to_string()),
                sources: (cmp.sources.len() > 1).then(|| cmp.sources.clone()),
                revisions: (cmp.revisions.len() > 1).then(|| cmp.revisions.clone()),
                initiated_by: op.initiated_by.clone(),
            }
        });
    Finished {
        state,
        history,
        phase: outcome.phase,
        revision: cmp.revision,
    }
}

/// The history after appending `entry`, capped by `spec.revisionHistoryLimit` (default 10).
pub fn history_with(app: &Application, entry: RevisionHistory) -> Vec<RevisionHistory> {
    let mut h = app
        .status
        .as_ref()
        .and_then(|s| s.history.clone())
        .unwrap_or_default();
    h.push(entry);
    let limit = usize::try_from(app.spec.revision_history_limit.unwrap_or(10).max(1)).unwrap_or(10);
    if h.len() > limit {
        h.drain(..h.len() - limit);
    }
    h
}
