//! `plumb app terminate-op NAME`: asks the controller to stop the running operation by setting
//! `.status.operationState.phase` to `Terminating` through the status subresource, as Argo's API
//! server does (`TerminateOperation`).

use anyhow::{Result, bail};
use clap::Args;
use serde_json::json;

use super::client::AppClient;
use crate::exit::Outcome;

/// `plumb app terminate-op`.
#[derive(Debug, Args)]
pub struct TerminateOpArgs {
    /// Application name.
    pub name: String,
}

/// Runs `plumb app terminate-op`.
pub async fn run(client: &AppClient, args: TerminateOpArgs) -> Result<Outcome> {
    if let Some(srv) = client.server() {
        // Argo's `TerminateOperation` (`DELETE .../operation`): the server refuses when no
        // operation runs.
        let app = client.get(&args.name).await?;
        let running = app.status.as_ref().and_then(|s| s.operation_state.as_ref());
        if app.operation.is_none() || running.is_none() {
            bail!("Unable to terminate operation. No operation is in progress");
        }
        srv.delete(&client.app_path(&args.name, "/operation", &[]))
            .await?;
        println!("Application '{}' operation terminating", args.name);
        return Ok(Outcome::Success);
    }
    for _ in 0..10 {
        let app = client.get(&args.name).await?;
        let running = app.status.as_ref().and_then(|s| s.operation_state.as_ref());
        if app.operation.is_none() || running.is_none() {
            bail!("Unable to terminate operation. No operation is in progress");
        }
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
        match client.patch_status(&args.name, &patch).await {
            Ok(_) => {
                println!("Application '{}' operation terminating", args.name);
                return Ok(Outcome::Success);
            }
            Err(e) if format!("{e:#}").contains("409") || format!("{e:#}").contains("modified") => {
                tracing::debug!(
                    "conflict terminating the operation of {}; retrying",
                    args.name
                );
                // The controller writes progress while an operation runs; let it land.
                tokio::time::sleep(std::time::Duration::from_millis(150)).await;
            }
            Err(e) => return Err(e),
        }
    }
    bail!(
        "could not terminate the operation of application '{}': it keeps changing",
        args.name
    )
}
