//! `plumb app delete-resource NAME --kind K [--resource-name N] [--force] [--orphan] [--all]`:
//! Argo CD's `argocd app delete-resource`, with the deletion options of Argo's API server
//! (`DeleteResource`): foreground by default, `--orphan` leaves dependents, `--force` deletes
//! in the background with no grace period.

use anyhow::{Context, Result, bail};
use clap::Args;
use kube::api::{DeleteParams, PropagationPolicy};

use super::client::AppClient;
use super::managed::{self, ResourceFilterArgs};
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

/// The delete options Argo's API server uses.
pub fn delete_params(force: bool, orphan: bool) -> DeleteParams {
    if orphan {
        DeleteParams {
            propagation_policy: Some(PropagationPolicy::Orphan),
            ..Default::default()
        }
    } else if force {
        DeleteParams {
            propagation_policy: Some(PropagationPolicy::Background),
            grace_period_seconds: Some(0),
            ..Default::default()
        }
    } else {
        DeleteParams {
            propagation_policy: Some(PropagationPolicy::Foreground),
            ..Default::default()
        }
    }
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
    let params = delete_params(args.force, args.orphan);
    for r in &found {
        let (_, api) = dest.api(&r.key, None).await?;
        api.delete(&r.key.name, &params)
            .await
            .with_context(|| format!("deleting {}", r.key))?;
        eprintln!("Resource '{}' deleted", r.key.name);
    }
    Ok(Outcome::Success)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argo_delete_options() {
        let p = delete_params(false, false);
        assert!(matches!(
            p.propagation_policy,
            Some(PropagationPolicy::Foreground)
        ));
        assert_eq!(p.grace_period_seconds, None);
        let p = delete_params(true, false);
        assert!(matches!(
            p.propagation_policy,
            Some(PropagationPolicy::Background)
        ));
        assert_eq!(p.grace_period_seconds, Some(0));
        let p = delete_params(true, true);
        assert!(matches!(
            p.propagation_policy,
            Some(PropagationPolicy::Orphan)
        ));
    }
}
