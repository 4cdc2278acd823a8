//! `plumb app wait NAME`: block until the Application is synced, healthy and done with its
//! operation (or the conditions named by flags), printing a progress row whenever a resource's
//! state changes; the driver [`wait_for`] is shared with `app sync`.
//!
//! Exit codes: 0 conditions met; 1 timed out, or a resource turned Degraded under `--health`;
//! 2 errors (Application missing, cluster unreachable).

use std::time::Duration;

use anyhow::{Result, bail};
use clap::Args;
use futures::StreamExt;
use plumb_model::application::{Application, OperationState};

use super::client::AppClient;
use super::flags::resource_filter::ResourceSelector;
use super::follow::spinner::Spinner;
use super::follow::waiter::{Step, Tracker, WatchFor, operation_in_progress};
use super::output::header::header_context;
use super::output::output_format::OutputFormat;
use super::output::tree_live::render as render_tree;
use crate::exit::Outcome;
use crate::output::wide::HeaderContext;
use crate::output::{Clock, json, rows, timefmt, wide, yaml};

/// `plumb app wait`.
#[derive(Debug, Args)]
pub struct WaitArgs {
    /// Application name.
    pub name: String,
    /// Wait for sync status Synced.
    #[arg(long)]
    pub sync: bool,
    /// Wait for health Healthy; fail at once (exit 1) when a resource turns Degraded.
    #[arg(long)]
    pub health: bool,
    /// Wait for the pending operation to finish (and the Application to be compared again).
    #[arg(long)]
    pub operation: bool,
    /// Wait for health Suspended.
    #[arg(long)]
    pub suspended: bool,
    /// Wait for health Degraded.
    #[arg(long)]
    pub degraded: bool,
    /// Wait until the Application is deleted.
    #[arg(long)]
    pub delete: bool,
    /// Wait only on these resources (GROUP:KIND:[NAMESPACE/]NAME; repeatable).
    #[arg(long = "resource", value_name = "GROUP:KIND:[NAMESPACE/]NAME")]
    pub resources: Vec<ResourceSelector>,
    /// Give up after this many seconds (0: wait forever).
    #[arg(long, default_value_t = 0, value_name = "SECONDS")]
    pub timeout: u64,
    /// Output format of the final state.
    #[arg(short = 'o', long, value_enum, default_value_t = OutputFormat::Wide)]
    pub output: OutputFormat,
}

impl WaitArgs {
    fn watch_for(&self) -> WatchFor {
        WatchFor {
            sync: self.sync,
            health: self.health,
            operation: self.operation,
            suspended: self.suspended,
            degraded: self.degraded,
        }
    }
}

/// How a wait ended.
#[derive(Debug)]
pub enum WaitEnd {
    /// The conditions were met; the operation state as it was at that moment.
    Met {
        /// The Application.
        app: Box<Application>,
        /// Its operation state then.
        operation: Option<Box<OperationState>>,
    },
    /// The timeout passed; the Application as read then.
    TimedOut(Box<Application>),
    /// A resource turned Degraded while waiting for health.
    Degraded(Box<Application>, String),
    /// The Application was deleted (only when waiting for deletion).
    Deleted(String),
}

/// The spinner's line: the Application's state and, while an operation runs, its message
/// (`waiting for completion of hook batch/Job/migrate`). Argo prints no such line: the
/// operation message stays off stdout, whose rows keep Argo's layout.
fn state_text(app: &Application) -> String {
    let sync = app
        .status
        .as_ref()
        .and_then(|s| s.sync.as_ref())
        .map(|s| s.status.to_string())
        .unwrap_or_else(|| "Unknown".to_string());
    let health = wide::health_code(app);
    let state = app.status.as_ref().and_then(|s| s.operation_state.as_ref());
    let op = state.map(|o| o.phase.to_string());
    let op = if app.operation.is_some() && op.as_deref() != Some("Running") {
        "Requested".to_string()
    } else if operation_in_progress(app) {
        let phase = op.unwrap_or_else(|| "Running".to_string());
        match state
            .and_then(|o| o.message.as_deref())
            .filter(|m| !m.is_empty())
        {
            Some(message) if phase == "Running" => format!("{phase} ({message})"),
            _ => phase,
        }
    } else {
        "none".to_string()
    };
    format!(
        "{}: sync {sync}, health {}, operation {op}",
        wide::qualified_name(app),
        if health.is_empty() {
            "Unknown"
        } else {
            &health
        }
    )
}

/// Watches the Application until `tracker` is satisfied, the timeout passes, or health turns
/// Degraded; progress rows go to stdout through `spinner`.
pub async fn wait_for(
    client: &AppClient,
    name: &str,
    tracker: &mut Tracker,
    timeout: u64,
    delete: bool,
    clock: &Clock,
    spinner: &Spinner,
) -> Result<WaitEnd> {
    let mut stream = client.watch(name);
    let deadline =
        (timeout > 0).then(|| tokio::time::Instant::now() + Duration::from_secs(timeout));
    let mut pending = vec![wide::progress_header()];
    let mut seen = false;
    let mut errors = 0u32;
    loop {
        let next = match deadline {
            Some(d) => tokio::select! {
                ev = stream.next() => ev,
                _ = tokio::time::sleep_until(d) => {
                    return Ok(WaitEnd::TimedOut(Box::new(client.get(name).await?)));
                }
            },
            None => stream.next().await,
        };
        match next {
            None => {
                let (ns, n) = client.locate(name);
                bail!("the watch of Application {ns}/{n} ended")
            }
            Some(Err(e)) => {
                errors += 1;
                if errors >= 5 {
                    return Err(e);
                }
                tracing::warn!("{e:#}; retrying");
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
            Some(Ok(None)) => return gone(client, name, delete, seen),
            Some(Ok(Some(app))) => {
                errors = 0;
                seen = true;
                spinner.set(state_text(&app));
                if delete {
                    continue;
                }
                if let Some(end) = advance(app, tracker, clock, spinner, &mut pending) {
                    return Ok(end);
                }
            }
        }
    }
}

/// The Application is gone: the end of `--delete`, else an error.
fn gone(client: &AppClient, name: &str, delete: bool, seen: bool) -> Result<WaitEnd> {
    let (ns, n) = client.locate(name);
    if delete {
        return Ok(WaitEnd::Deleted(format!("{ns}/{n}")));
    }
    if seen {
        bail!("application '{name}' was deleted while waiting");
    }
    bail!("application '{n}' not found in namespace '{ns}'");
}

/// Feeds one version of the Application to `tracker`: the end when it is met or health turned
/// Degraded, else prints the rows that changed (after the header, the first time).
fn advance(
    app: Application,
    tracker: &mut Tracker,
    clock: &Clock,
    spinner: &Spinner,
    pending: &mut Vec<String>,
) -> Option<WaitEnd> {
    match tracker.step(&app) {
        Step::Done => {
            let operation = app
                .status
                .as_ref()
                .and_then(|s| s.operation_state.clone())
                .map(Box::new);
            Some(WaitEnd::Met {
                app: Box::new(app),
                operation,
            })
        }
        Step::Degraded(message) => Some(WaitEnd::Degraded(Box::new(app), message)),
        Step::Progress(changed) => {
            let now = clock.tick();
            let ts = timefmt::row_timestamp(now.now, &now.tz);
            pending.extend(changed.iter().map(|r| wide::progress_line(&ts, r)));
            spinner.print(&wide::progress_block(pending));
            pending.clear();
            None
        }
    }
}

/// The wide text of Argo's `printFinalStatus`: a blank line, the summary, a blank line, the
/// operation result when waiting for one, then the resource table.
pub fn final_wide(
    app: &Application,
    with_operation: bool,
    header: &HeaderContext,
    clock: &Clock,
) -> String {
    let mut out = final_header(app, with_operation, header, clock);
    if app
        .status
        .as_ref()
        .and_then(|s| s.resources.as_ref())
        .is_some_and(|r| !r.is_empty())
    {
        out.push('\n');
        out.push_str(&wide::resources(&rows::resource_rows(app)));
    }
    out
}

fn final_header(
    app: &Application,
    with_operation: bool,
    header: &HeaderContext,
    clock: &Clock,
) -> String {
    let mut out = String::from("\n");
    out.push_str(&wide::summary(app, header));
    out.push('\n');
    if with_operation
        && let Some(state) = app.status.as_ref().and_then(|s| s.operation_state.as_ref())
    {
        out.push_str(&wide::operation(state, &clock.tz, clock.now));
    }
    out
}

/// Argo's `printFinalStatus` in any output format.
pub async fn final_status(
    client: &AppClient,
    app: &Application,
    with_operation: bool,
    output: OutputFormat,
    header: &HeaderContext,
    clock: &Clock,
) -> Result<String> {
    Ok(match output {
        OutputFormat::Json => json::render(app)?,
        OutputFormat::Yaml => yaml::render(app)?,
        OutputFormat::Wide => final_wide(app, with_operation, header, clock),
        OutputFormat::Tree => {
            let mut out = final_header(app, with_operation, header, clock);
            out.push_str(&render_tree(client, app).await?);
            out
        }
    })
}

/// Runs `plumb app wait`.
pub async fn run(client: &AppClient, args: WaitArgs) -> Result<Outcome> {
    let clock = Clock::system();
    let mut tracker = Tracker::new(args.watch_for(), &args.name, args.resources.clone());
    let spinner = Spinner::start();
    let end = wait_for(
        client,
        &args.name,
        &mut tracker,
        args.timeout,
        args.delete,
        &clock,
        &spinner,
    )
    .await;
    spinner.stop();
    let with_operation = tracker.watch().operation;
    match end? {
        WaitEnd::Deleted(qualified) => {
            println!("Application '{qualified}' deleted");
            Ok(Outcome::Success)
        }
        WaitEnd::Met { app, .. } => {
            let header = header_context(client, &app, false).await?;
            print!(
                "{}",
                final_status(
                    client,
                    &app,
                    with_operation,
                    args.output,
                    &header,
                    &clock.tick()
                )
                .await?
            );
            Ok(Outcome::Success)
        }
        WaitEnd::Degraded(app, message) => {
            let header = header_context(client, &app, false).await?;
            print!(
                "{}",
                final_status(
                    client,
                    &app,
                    with_operation,
                    args.output,
                    &header,
                    &clock.tick()
                )
                .await?
            );
            eprintln!("{message}");
            Ok(Outcome::Negative)
        }
        WaitEnd::TimedOut(app) => {
            print_timeout(
                client,
                &app,
                with_operation,
                args.output,
                &clock,
                args.timeout,
                &args.name,
            )
            .await?;
            Ok(Outcome::Negative)
        }
    }
}

/// Argo's timeout report: the state, then the messages; the error goes to stderr.
pub async fn print_timeout(
    client: &AppClient,
    app: &Application,
    with_operation: bool,
    output: OutputFormat,
    clock: &Clock,
    timeout: u64,
    name: &str,
) -> Result<()> {
    let header = header_context(client, app, false).await?;
    print!(
        "\nThis is the state of the app after wait timed out:\n{}\nThe command timed out waiting for the conditions to be met.\n",
        final_status(client, app, with_operation, output, &header, &clock.tick()).await?
    );
    eprintln!("timed out ({timeout}s) waiting for app \"{name}\" match desired state");
    Ok(())
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        args: WaitArgs,
    }

    #[test]
    fn spinner_line_carries_the_operation_message() {
        let app = |phase: &str, finished: bool| -> Application {
            let mut state = serde_json::json!({"operation": {"sync": {}}, "phase": phase,
                "message": "waiting for completion of hook batch/Job/payments-db-migrate",
                "startedAt": "2026-07-20T10:15:32Z"});
            if finished {
                state["finishedAt"] = "2026-07-20T10:16:02Z".into();
            }
            let mut app = serde_json::json!({
                "metadata": {"name": "payments-api", "namespace": "argocd"},
                "spec": {"project": "default", "destination": {"namespace": "payments"},
                         "source": {"repoURL": "https://git.acme.internal/apps/payments.git"}},
                "status": {"sync": {"status": "OutOfSync"}, "health": {"status": "Healthy"},
                           "reconciledAt": "2026-07-20T10:15:20Z", "operationState": state}
            });
            // `.operation` stays set until the operation completes.
            if !finished {
                app["operation"] = serde_json::json!({"sync": {}});
            }
            serde_json::from_value(app).unwrap()
        };
        assert_eq!(
            state_text(&app("Running", false)),
            "argocd/payments-api: sync OutOfSync, health Healthy, operation Running (waiting for completion of hook batch/Job/payments-db-migrate)"
        );
        assert_eq!(
            state_text(&app("Failed", true)),
            "argocd/payments-api: sync OutOfSync, health Healthy, operation Failed"
        );
    }

    #[test]
    fn flags_parse() {
        let cli = Cli::try_parse_from(["wait", "payments-api"]).unwrap();
        assert_eq!(cli.args.watch_for(), WatchFor::default());
        assert_eq!(cli.args.timeout, 0);
        assert_eq!(cli.args.output, OutputFormat::Wide);
        let cli = Cli::try_parse_from([
            "wait",
            "payments-api",
            "--health",
            "--sync",
            "--operation",
            "--suspended",
            "--degraded",
            "--timeout",
            "300",
            "--resource",
            "apps:Deployment:payments/payments-api",
            "-o",
            "json",
        ])
        .unwrap();
        let w = cli.args.watch_for();
        assert!(w.health && w.sync && w.operation && w.suspended && w.degraded);
        assert_eq!(cli.args.timeout, 300);
        assert_eq!(cli.args.resources.len(), 1);
        assert_eq!(cli.args.output, OutputFormat::Json);
        assert!(Cli::try_parse_from(["wait", "x", "--timeout", "-1"]).is_err());
        assert!(Cli::try_parse_from(["wait", "x", "--resource", "Deployment"]).is_err());
        assert!(Cli::try_parse_from(["wait"]).is_err());
    }
}
