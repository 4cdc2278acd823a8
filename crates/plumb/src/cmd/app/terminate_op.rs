//! `plumb app terminate-op NAME`: asks the controller to stop the running operation (Argo's
//! `TerminateOperation`: in core mode by setting `.status.operationState.phase` to
//! `Terminating` through the status subresource, as Argo's API server does).

use anyhow::{Result, bail};
use clap::Args;
use plumb_model::application::Application;

use super::client::AppClient;
use crate::exit::Outcome;

/// `plumb app terminate-op`.
#[derive(Debug, Args)]
pub struct TerminateOpArgs {
    /// Application name.
    pub name: String,
}

/// Refuses when no operation is in progress (Argo's message).
pub(crate) fn ensure_operation_running(app: &Application) -> Result<()> {
    let running = app.status.as_ref().and_then(|s| s.operation_state.as_ref());
    if app.operation.is_none() || running.is_none() {
        bail!("Unable to terminate operation. No operation is in progress");
    }
    Ok(())
}

/// Runs `plumb app terminate-op`.
pub async fn run(client: &AppClient, args: TerminateOpArgs) -> Result<Outcome> {
    client.terminate_operation(&args.name).await?;
    println!("Application '{}' operation terminating", args.name);
    Ok(Outcome::Success)
}
