//! The requests the CLI writes itself in core mode, as Argo's API server writes them: deleting
//! an Application, terminating its operation, rolling it back. Each re-reads and retries when
//! the controller wrote the Application in between.

use anyhow::{Result, bail};
use plumb_model::application::Application;
use serde_json::{Value, json};

use crate::cmd::app::client::{AppClient, RollbackRequest};
use crate::cmd::app::delete::{Propagation, finalizers};
use crate::cmd::app::rollback::{find_revision_history, operation, refuse};
use crate::cmd::app::set::check_project;
use crate::cmd::app::terminate_op::ensure_operation_running;

/// Sets the finalizers for `cascade` ([`finalizers`]), then deletes the Application.
pub(crate) async fn delete_app(
    client: &AppClient,
    qualified: &str,
    app: &Application,
    cascade: bool,
    background: bool,
) -> Result<()> {
    let current = app.metadata.finalizers.clone().unwrap_or_default();
    let propagation = if background {
        Propagation::Background
    } else {
        Propagation::Foreground
    };
    let wanted = finalizers(&current, cascade, propagation);
    if wanted != current {
        client
            .merge_patch(qualified, &json!({"metadata": {"finalizers": wanted}}))
            .await?;
    }
    // Removing the last finalizer of an Application already being deleted deletes it.
    client.delete(qualified).await?;
    Ok(())
}

/// Sets `.status.operationState.phase` to `Terminating` through the status subresource, as
/// Argo's API server does (`TerminateOperation`).
pub(crate) async fn terminate_operation(client: &AppClient, name: &str) -> Result<()> {
    for _ in 0..10 {
        let app = client.get(name).await?;
        ensure_operation_running(&app)?;
        let rv = app
            .metadata
            .other
            .get("resourceVersion")
            .and_then(|v| v.as_str())
            .unwrap_or_default();
        let patch = json!({
            "metadata": {"resourceVersion": rv},
            "status": {"operationState": {"phase": "Terminating"}},
        });
        match client.patch_status(name, &patch).await {
            Ok(_) => return Ok(()),
            Err(e) if format!("{e:#}").contains("409") || format!("{e:#}").contains("modified") => {
                tracing::debug!("conflict terminating the operation of {name}; retrying");
                // The controller writes progress while an operation runs; let it land.
                tokio::time::sleep(std::time::Duration::from_millis(150)).await;
            }
            Err(e) => return Err(e),
        }
    }
    bail!("could not terminate the operation of application '{name}': it keeps changing")
}

/// Writes the rollback operation unless refused, retrying on write conflicts.
pub(crate) async fn request_rollback(
    client: &AppClient,
    req: &RollbackRequest<'_>,
) -> Result<Application> {
    let username = client.username();
    for _ in 0..10 {
        let app = client.get(req.name).await?;
        let entry = find_revision_history(&app, req.id)?;
        refuse(&app, &entry)?;
        let op = operation(req, &app, &entry, &username);
        // The history entry's source is rendered and applied: the project must still permit
        // it (the controller checks it again before the sync).
        let mut requested = app.clone();
        requested.operation = Some(op.clone());
        check_project(client, &requested).await?;
        let rv = app
            .metadata
            .other
            .get("resourceVersion")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let patch = json!({"operation": serde_json::to_value(&op)?});
        if let Some(updated) = client.merge_patch_at(req.name, &rv, patch).await? {
            return Ok(updated);
        }
        tracing::debug!(
            "Application {} changed while requesting the rollback; retrying",
            req.name
        );
    }
    bail!(
        "could not request the rollback of application '{}': it keeps changing",
        req.name
    )
}
