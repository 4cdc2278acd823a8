//! `plumb appset create`, `delete` and `confirm-deletion`.

use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::{Result, bail};
use clap::Args;
use plumb_appset::api::Confirm;

use plumb_model::applicationset::ApplicationSet;

use super::client::Ctx;
use super::read::{GetFormat, render_get};
use super::wait;
use crate::exit::Outcome;
use crate::output::Clock;

/// `plumb appset create`.
#[derive(Debug, Args)]
pub struct CreateArgs {
    /// The file with one or more ApplicationSets (`-`: stdin).
    pub file: PathBuf,
    /// Update an existing ApplicationSet whose spec differs.
    #[arg(long)]
    pub upsert: bool,
    /// Only generate: show the Applications it would manage (in `status.resources`).
    #[arg(long)]
    pub dry_run: bool,
    /// Wait until the ApplicationSet's resources are up to date (its ResourcesUpToDate
    /// condition is True; Argo's flag).
    #[arg(long)]
    pub wait: bool,
    /// With --wait: give up after this many seconds, 0 waits without a limit as Argo does
    /// (Plumb's, beyond Argo).
    #[arg(long, default_value_t = 300, requires = "wait")]
    pub timeout: u64,
    /// Output format.
    #[arg(short = 'o', long, value_enum, default_value_t = GetFormat::Wide)]
    pub output: GetFormat,
}

pub async fn create(ctx: &Ctx, args: CreateArgs) -> Result<Outcome> {
    let mut files = super::file::read_sets(&args.file)?;
    for file in &mut files {
        if file.set.namespace().is_empty() && !ctx.file_ns().is_empty() {
            file.set.metadata.namespace = Some(ctx.file_ns().to_string());
            file.raw["metadata"]["namespace"] = ctx.file_ns().into();
        }
        let (created, action) = ctx.client.create(file, args.upsert, args.dry_run).await?;
        let dry = if args.dry_run { " (dry-run)" } else { "" };
        eprintln!(
            "ApplicationSet '{}' {}{dry}",
            created.name(),
            action.as_str()
        );
        print!(
            "{}",
            render_get(&created, &[], args.output, &Clock::system())?
        );
        if args.wait && !args.dry_run {
            let ns = Some(created.namespace()).filter(|n| !n.is_empty());
            let deadline = wait::Deadline::after(args.timeout);
            wait::until_up_to_date(ctx, ns, created.name(), &deadline, args.timeout).await?;
            eprintln!(
                "ApplicationSet '{}' resources are up to date",
                created.name()
            );
        }
    }
    Ok(Outcome::Success)
}

/// `plumb appset delete`.
#[derive(Debug, Args)]
pub struct DeleteArgs {
    /// The ApplicationSets (`name` or `namespace/name`).
    #[arg(required = true)]
    pub names: Vec<String>,
    /// Do not ask for confirmation.
    #[arg(short = 'y', long)]
    pub yes: bool,
    /// Wait until the deletion completes (Argo's flag); Plumb also waits for the Applications
    /// the set owned to be deleted.
    #[arg(long)]
    pub wait: bool,
    /// With --wait: give up after this many seconds, 0 waits without a limit as Argo does
    /// (Plumb's, beyond Argo).
    #[arg(long, default_value_t = 300, requires = "wait")]
    pub timeout: u64,
}

pub async fn delete(ctx: &Ctx, args: DeleteArgs) -> Result<Outcome> {
    // As Argo: asked only on a terminal (a script deletes without asking).
    let ask = !args.yes && std::io::stdin().is_terminal() && std::io::stdout().is_terminal();
    for qualified in &args.names {
        let question = format!(
            "Are you sure you want to delete '{qualified}' and all its Applications? [y/n] "
        );
        let stdin = std::io::stdin();
        if ask
            && !crate::cmd::app::ask_to_proceed(
                &question,
                &mut stdin.lock(),
                &mut std::io::stderr(),
            )?
        {
            println!("The command to delete '{qualified}' was cancelled.");
            continue;
        }
        let (ns, name) = ctx.target(qualified);
        // What it owns now, to wait for (the garbage collector deletes them after the set). As
        // Argo: a set the caller cannot read first is deleted without waiting; the delete
        // answers for it.
        let owned = if args.wait {
            match ctx.client.get_opt(ns, ctx.file_ns(), name).await {
                Ok(Some(set)) => Some(owned_names(ctx, &set).await?),
                _ => None,
            }
        } else {
            None
        };
        ctx.client.delete(ns, ctx.file_ns(), name).await?;
        if let Some(owned) = owned {
            let deadline = wait::Deadline::after(args.timeout);
            wait::until_deleted(ctx, ns, name, &owned, &deadline, args.timeout).await?;
        }
        println!("applicationset '{qualified}' deleted");
    }
    Ok(Outcome::Success)
}

/// `namespace`, `name` of each Application `set` owns.
async fn owned_names(ctx: &Ctx, set: &ApplicationSet) -> Result<Vec<(String, String)>> {
    let (apps, _) = ctx.client.owned(set).await?;
    Ok(apps
        .iter()
        .map(|a| {
            let field = |f: &str| {
                a.pointer(&format!("/metadata/{f}"))
                    .and_then(serde_json::Value::as_str)
                    .unwrap_or_default()
                    .to_string()
            };
            let ns = Some(field("namespace"))
                .filter(|n| !n.is_empty())
                .unwrap_or_else(|| set.namespace().to_string());
            (ns, field("name"))
        })
        .collect())
}

/// `plumb appset confirm-deletion`.
#[derive(Debug, Args)]
pub struct ConfirmArgs {
    /// The ApplicationSet (`name` or `namespace/name`).
    pub name: String,
    /// The Applications whose held deletion may go.
    pub applications: Vec<String>,
    /// Every held deletion.
    #[arg(long, conflicts_with = "applications")]
    pub all: bool,
}

pub async fn confirm(ctx: &Ctx, args: ConfirmArgs) -> Result<Outcome> {
    let confirm = match (args.all, args.applications.is_empty()) {
        (true, _) => Confirm::All,
        (false, false) => Confirm::Apps(args.applications),
        (false, true) => bail!("name the Applications whose deletion to confirm, or pass --all"),
    };
    let (ns, name) = ctx.target(&args.name);
    let set = ctx
        .client
        .confirm(ns, ctx.file_ns(), name, &confirm)
        .await?;
    let value = set
        .metadata
        .annotation(plumb_appset::api::CONFIRM_DELETION)
        .unwrap_or_default();
    println!(
        "applicationset '{}': deletion confirmed for {value}; the controller lets them go on its next reconcile",
        args.name
    );
    Ok(Outcome::Success)
}
