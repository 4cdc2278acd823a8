//! `plumb app delete-resource NAME --kind K [--resource-name N] [--force] [--orphan] [--all]`:
//! Argo CD's `argocd app delete-resource`, with the deletion options of Argo's API server
//! (`DeleteResource`): foreground by default, `--orphan` leaves dependents, `--force` deletes
//! in the background with no grace period.

use anyhow::{Context, Result, bail};
use clap::Args;
use plumb_kube::resource_delete_params;

use super::client::AppClient;
use super::cluster::managed::{self, ResourceFilterArgs};
use crate::exit::Outcome;

/// `plumb app delete-resource`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  # Delete a Pod-owning Deployment of an application (the next sync recreates it)\n  plumb app delete-resource guestbook --kind Deployment --resource-name guestbook-ui\n\n  # Delete a ConfigMap and leave what it owns\n  plumb app delete-resource guestbook --kind ConfigMap --resource-name settings --orphan"
)]
pub struct DeleteResourceArgs {
    /// Application name.
    pub(crate) name: String,
    #[command(flatten)]
    pub(crate) filter: ResourceFilterArgs,
    /// Delete at once, without a grace period, dependents in the background.
    #[arg(long)]
    pub(crate) force: bool,
    /// Orphan the dependents of the deleted resource.
    #[arg(long)]
    pub(crate) orphan: bool,
    /// Indicates whether to delete multiple matching resources.
    #[arg(long)]
    pub(crate) all: bool,
}

/// Runs `plumb app delete-resource`.
pub async fn run(client: &AppClient, args: DeleteResourceArgs) -> Result<Outcome> {
    if args.filter.kind.as_deref().is_none_or(str::is_empty) {
        bail!("required flag(s) \"kind\" not set");
    }
    let app = client.get(&args.name).await?;
    let dest = managed::destination(client, &app).await?;
    let found = managed::filter(
        managed::live_resources(&dest, &app).await?,
        &args.filter,
        args.all,
    )?;
    let params = resource_delete_params(args.force, args.orphan);
    for r in &found {
        let (_, api) = dest.api(&r.key, None).await?;
        api.delete(&r.key.name, &params)
            .await
            .with_context(|| format!("deleting {}", r.key))?;
        eprintln!("Resource '{}' deleted", r.key.name);
    }
    Ok(Outcome::Success)
}
