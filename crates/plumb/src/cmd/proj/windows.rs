//! `plumb proj windows list PROJECT`: Argo's `printSyncWindows` table, with STATUS computed by
//! [`plumb_policy::windows`] (the controller's evaluation), or the windows as JSON or YAML.
//!
//! A window that cannot be evaluated shows STATUS `Invalid` (Argo prints `Inactive`); the
//! problem goes to stderr and the exit code is 2, after the whole table.

use anyhow::Result;
use clap::{Args, Subcommand};
use jiff::Timestamp;
use plumb_model::application::SyncWindow;
use plumb_policy::windows::{evaluate, validate};

use super::ProjClient;
use super::detail_format::DetailFormat;
use super::windows_edit;
use crate::exit::Outcome;
use crate::output::{json, project, yaml};

/// `plumb proj windows ...`.
#[derive(Debug, Args)]
pub struct WindowsArgs {
    #[command(subcommand)]
    command: WindowsCommand,
}

#[derive(Debug, Subcommand)]
enum WindowsCommand {
    /// List a project's sync windows and whether each is open now.
    List(ListArgs),
    /// Add a sync window to a project.
    Add(Box<windows_edit::AddArgs>),
    /// Delete a sync window from a project (ID from `windows list`).
    Delete(windows_edit::IdArgs),
    /// Update a project sync window (ID from `windows list`).
    Update(Box<windows_edit::UpdateArgs>),
    /// Enable manual sync for a sync window.
    EnableManualSync(windows_edit::IdArgs),
    /// Disable manual sync for a sync window.
    DisableManualSync(windows_edit::IdArgs),
    /// Enable sync overrun for a sync window.
    EnableSyncOverrun(windows_edit::IdArgs),
    /// Disable sync overrun for a sync window.
    DisableSyncOverrun(windows_edit::IdArgs),
}

/// `plumb proj windows list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Project name.
    pub project: String,
    /// Output format.
    #[arg(short = 'o', long, value_enum, default_value_t = DetailFormat::Wide)]
    pub output: DetailFormat,
}

/// STATUS of each window at `now`, and the problems of the windows that cannot be evaluated.
pub fn statuses(windows: &[SyncWindow], now: Timestamp) -> (Vec<&'static str>, Vec<String>) {
    let mut statuses = Vec::new();
    let mut errors = Vec::new();
    for (i, w) in windows.iter().enumerate() {
        let state = validate(w, i).and_then(|()| evaluate(&[w], now));
        match state {
            Ok(s) if s.active().is_empty() => statuses.push("Inactive"),
            Ok(_) => statuses.push("Active"),
            Err(e) => {
                statuses.push("Invalid");
                errors.push(format!("{:#}", anyhow::Error::new(e)));
            }
        }
    }
    (statuses, errors)
}

/// The output text and the problems to report.
pub fn render(
    windows: Option<&Vec<SyncWindow>>,
    format: DetailFormat,
    now: Timestamp,
) -> Result<(String, Vec<String>)> {
    Ok(match format {
        DetailFormat::Json => (json::render(&windows)?, Vec::new()),
        DetailFormat::Yaml => (yaml::render(&windows)?, Vec::new()),
        DetailFormat::Wide => {
            let windows = windows.map(Vec::as_slice).unwrap_or_default();
            let (statuses, errors) = statuses(windows, now);
            (project::windows_table(windows, &statuses), errors)
        }
    })
}

async fn toggle(
    client: &ProjClient,
    a: windows_edit::IdArgs,
    field: &str,
    on: bool,
) -> Result<Outcome> {
    let id = windows_edit::window_id(&a.id)?;
    client
        .update(&a.project, |p| windows_edit::toggle(p, id, field, on))
        .await?;
    Ok(Outcome::Success)
}

/// Runs `plumb proj windows ...`.
pub async fn run(client: &ProjClient, args: WindowsArgs) -> Result<Outcome> {
    let args = match args.command {
        WindowsCommand::List(a) => a,
        WindowsCommand::Add(a) => {
            client
                .update(&a.project, |p| windows_edit::add(p, &a))
                .await?;
            return Ok(Outcome::Success);
        }
        WindowsCommand::Update(a) => {
            client
                .update(&a.project, |p| windows_edit::update(p, &a))
                .await?;
            return Ok(Outcome::Success);
        }
        WindowsCommand::Delete(a) => {
            let id = windows_edit::window_id(&a.id)?;
            client
                .update(&a.project, |p| windows_edit::delete(p, id))
                .await?;
            return Ok(Outcome::Success);
        }
        WindowsCommand::EnableManualSync(a) => return toggle(client, a, "manualSync", true).await,
        WindowsCommand::DisableManualSync(a) => {
            return toggle(client, a, "manualSync", false).await;
        }
        WindowsCommand::EnableSyncOverrun(a) => {
            return toggle(client, a, "syncOverrun", true).await;
        }
        WindowsCommand::DisableSyncOverrun(a) => {
            return toggle(client, a, "syncOverrun", false).await;
        }
    };
    let project = client.get(&args.project).await?;
    let (text, errors) = render(
        project.spec.sync_windows.as_ref(),
        args.output,
        Timestamp::now(),
    )?;
    print!("{text}");
    for e in &errors {
        eprintln!("plumb: {e}");
    }
    Ok(if errors.is_empty() {
        Outcome::Success
    } else {
        Outcome::Error
    })
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        args: WindowsArgs,
    }

    #[test]
    fn flags_parse() {
        let cli = Cli::try_parse_from(["windows", "list", "payments", "-o", "json"]).unwrap();
        let WindowsCommand::List(args) = cli.args.command else {
            panic!("list")
        };
        assert_eq!(args.project, "payments");
        assert_eq!(args.output, DetailFormat::Json);
        assert!(Cli::try_parse_from(["windows", "list"]).is_err());
        assert!(Cli::try_parse_from(["windows", "list", "p", "-o", "name"]).is_err());
    }
}
