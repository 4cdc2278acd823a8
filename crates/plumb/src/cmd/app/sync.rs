//! `plumb app sync NAME`: writes `.operation.sync` on the Application (Argo's
//! `ApplicationSyncRequest` as the API server turns it into an `Operation`), then, unless
//! `--async`, follows it until the controller finished it and compared once more, printing
//! progress rows, the summary, the Operation block and the resources.
//!
//! With `--preview-changes` it first prints the diff as `app diff` does and asks whether to go on
//! (Argo's `NewApplicationSyncCommand`); no, or no difference at all, ends it with nothing
//! requested.
//!
//! With `--prune`, a sync that would delete more objects than the brake on mass deletion lets an
//! automated sync delete (`plumb.sync.prune.maxDeletions` and `maxFraction`, or the
//! Application's `PruneMaxDeletions`/`PruneMaxFraction` sync options) asks first, unless
//! `--assumeYes`; without a terminal it is refused.
//!
//! Exit codes: 0 the operation succeeded (or the preview or the brake's question was declined,
//! or the preview found nothing); 1 it did not (`Operation has completed with phase: <phase>`),
//! resources still need pruning, or `--timeout` passed; 2 errors (another operation is in
//! progress, bad flags, no answer to a question, a mass prune without a terminal or
//! `--assumeYes`, cluster unreachable).

use std::io::Write;

use anyhow::{Result, bail};
use clap::{Args, ValueEnum};
use plumb_app::request::{SyncRequest, refuse_sync, sync_operation};
use plumb_model::application::{
    Application, Backoff, Operation, ResultCode, RetryStrategy, SyncStatusCode, SyncStrategy,
    SyncStrategyForce,
};

use super::client::AppClient;
use super::confirm::prompt::ask_to_proceed;
use super::diff_view::DiffView;
use super::flags::resource_filter::{ResourceSelector, select};
use super::follow::spinner::Spinner;
use super::follow::waiter::{Tracker, WatchFor};
use super::go_duration::GoDuration;
use super::output::header::header_context;
use super::output::output_format::OutputFormat;
use super::wait::{WaitEnd, final_status, print_timeout, wait_for};
use crate::exit::Outcome;
use crate::output::Clock;

/// `--strategy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Strategy {
    /// Plain apply, no hooks.
    Apply,
    /// Hooks and waves (Argo's default).
    Hook,
}

/// `plumb app sync`.
#[derive(Debug, Args)]
pub struct SyncArgs {
    /// Application name.
    pub name: String,
    /// Server-side dry run only; nothing changes.
    #[arg(long)]
    pub dry_run: bool,
    /// Delete tracked objects Git no longer declares.
    #[arg(long)]
    pub prune: bool,
    /// Sync only these resources (GROUP:KIND:[NAMESPACE/]NAME, `!` excludes, `*` globs; repeatable).
    #[arg(long = "resource", value_name = "GROUP:KIND:[NAMESPACE/]NAME")]
    pub resources: Vec<ResourceSelector>,
    /// Sync to this revision instead of the target revision.
    #[arg(long, value_name = "REVISION")]
    pub revision: Option<String>,
    /// Sync the objects rendered from this local directory with the Application's source
    /// settings instead of its repository (refused when automated sync is on, except with
    /// --dry-run, as in Argo CD).
    #[arg(long, value_name = "DIR", conflicts_with = "revision")]
    pub local: Option<std::path::PathBuf>,
    /// The repository root --local belongs to [default: --local itself].
    #[arg(long, value_name = "DIR", requires = "local")]
    pub local_repo_root: Option<std::path::PathBuf>,
    /// Return once the operation is requested.
    #[arg(long = "async")]
    pub async_: bool,
    /// Give up waiting after this many seconds (0: wait forever); the operation goes on.
    #[arg(long, default_value_t = 0, value_name = "SECONDS")]
    pub timeout: u64,
    /// Retry a failed sync up to N times.
    ///
    /// 0 or less writes no retry of its own, as argocd: the Application's
    /// spec.syncPolicy.retry applies then, if it has one.
    #[arg(
        long,
        default_value_t = 0,
        allow_negative_numbers = true,
        value_name = "N"
    )]
    pub retry_limit: i64,
    /// Refresh the target revision before each retry (with --retry-limit).
    #[arg(long)]
    pub retry_refresh: bool,
    /// First wait between retries, a Go duration (e.g. 2m, 1h).
    #[arg(long, default_value = "5s", value_name = "DURATION")]
    pub retry_backoff_duration: GoDuration,
    /// Longest wait between retries, a Go duration (e.g. 2m, 1h).
    #[arg(long, default_value = "3m0s", value_name = "DURATION")]
    pub retry_backoff_max_duration: GoDuration,
    /// Multiplier of the wait per retry.
    #[arg(long, default_value_t = 2, value_name = "N")]
    pub retry_backoff_factor: i64,
    /// Sync strategy.
    #[arg(long, value_enum, default_value_t = Strategy::Hook)]
    pub strategy: Strategy,
    /// Delete and recreate objects that cannot be patched.
    #[arg(long)]
    pub force: bool,
    /// Replace objects instead of applying them (`Replace=true`).
    #[arg(long)]
    pub replace: bool,
    /// Server-side apply (`ServerSideApply=true`).
    #[arg(long)]
    pub server_side: bool,
    /// Apply only the resources that are out of sync (`ApplyOutOfSyncOnly=true`).
    #[arg(long)]
    pub apply_out_of_sync_only: bool,
    /// Show the diff between Git and the cluster first and ask before syncing.
    ///
    /// Prints what `plumb app diff NAME` prints (against --revision when given), then asks
    /// whether to continue: answering no exits 0 without syncing, and so does finding no
    /// difference (`====== No Differences found ======`). A closed stdin is an error.
    #[arg(long)]
    pub preview_changes: bool,
    /// Answer yes to the question of --preview-changes, and to the mass-deletion brake's
    /// question (--prune deleting more objects than an automated sync may).
    #[arg(long = "assumeYes")]
    pub assume_yes: bool,
    /// Output format of the final state.
    #[arg(short = 'o', long, value_enum, default_value_t = OutputFormat::Wide)]
    pub output: OutputFormat,
}

/// The request these flags make of `app` (resource filters resolved against its resources).
pub(crate) fn sync_request(args: &SyncArgs, app: &Application) -> Result<SyncRequest> {
    let mut options = Vec::new();
    if args.replace {
        options.push("Replace=true".to_string());
    }
    if args.server_side {
        options.push("ServerSideApply=true".to_string());
    }
    if args.apply_out_of_sync_only {
        options.push("ApplyOutOfSyncOnly=true".to_string());
    }
    let resources = if args.resources.is_empty() {
        None
    } else {
        let all = app
            .status
            .as_ref()
            .and_then(|s| s.resources.clone())
            .unwrap_or_default();
        let picked = select(&args.resources, &all);
        if picked.is_empty() {
            bail!(
                "No matching resources found for filter: {}",
                args.resources
                    .iter()
                    .map(|r| format!(
                        "{}{}:{}:{}{}",
                        if r.exclude { "!" } else { "" },
                        r.group,
                        r.kind,
                        r.namespace
                            .as_deref()
                            .map(|n| format!("{n}/"))
                            .unwrap_or_default(),
                        r.name
                    ))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        Some(picked)
    };
    let force = args.force.then_some(true);
    let strategy = match args.strategy {
        Strategy::Apply => SyncStrategy {
            apply: Some(SyncStrategyForce { force }),
            hook: None,
        },
        Strategy::Hook => SyncStrategy {
            apply: None,
            hook: Some(SyncStrategyForce { force }),
        },
    };
    // argocd sends a retry strategy only for a positive limit; the API server then falls back
    // to the Application's own (`server/application/application.go: Sync`).
    let retry = (args.retry_limit > 0).then(|| RetryStrategy {
        limit: Some(args.retry_limit),
        backoff: Some(Backoff {
            duration: Some(args.retry_backoff_duration.to_string()),
            factor: Some(args.retry_backoff_factor),
            max_duration: Some(args.retry_backoff_max_duration.to_string()),
        }),
        refresh: args.retry_refresh.then_some(true),
    });
    Ok(SyncRequest {
        revision: args.revision.clone(),
        prune: args.prune,
        dry_run: args.dry_run,
        strategy: Some(strategy),
        resources,
        sync_options: (!options.is_empty()).then_some(options),
        retry,
    })
}

/// The operation these flags request on `app` (written by the controller crate's
/// `sync_operation`, the same function `plumb server` uses).
pub fn operation(args: &SyncArgs, app: &Application, username: &str) -> Result<Operation> {
    Ok(sync_operation(&sync_request(args, app)?, app, username))
}

/// Argo's rule for `--local`: not on an automated Application unless only a dry run, and not on
/// a multi-source one.
fn refuse_local(args: &SyncArgs, app: &Application) -> Result<()> {
    if app.spec.sources.as_ref().is_some_and(|s| !s.is_empty()) {
        bail!("plumb cli does not work on multi-source app with --local flag");
    }
    let automated = app
        .spec
        .sync_policy
        .as_ref()
        .is_some_and(|p| p.is_automated());
    if automated && !args.dry_run {
        bail!("Cannot use local sync when Automatic Sync Policy is enabled except with --dry-run");
    }
    Ok(())
}

/// `--local` as a source for the previews and the render.
fn local_source(args: &SyncArgs) -> Option<plumb_source::LocalSource> {
    args.local.clone().map(|dir| plumb_source::LocalSource {
        dir,
        repo_root: args.local_repo_root.clone(),
    })
}

/// What `--local` renders to, one JSON document per object: Argo's `ApplicationSyncRequest`
/// `manifests`, which the controller syncs instead of rendering the source.
pub(crate) async fn local_manifests(
    client: &AppClient,
    args: &SyncArgs,
) -> Result<Option<Vec<String>>> {
    let Some(local) = local_source(args) else {
        return Ok(None);
    };
    let app = client.get(&args.name).await?;
    refuse_local(args, &app)?;
    let objects = client.render_local(&app, &local).await?;
    let manifests = objects
        .iter()
        .map(serde_json::to_string)
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Some(manifests))
}

fn refuse(args: &SyncArgs, app: &Application) -> Result<()> {
    refuse_sync(&sync_request_unresolved(args), app)?;
    Ok(())
}

/// The request's revision and dry-run flag, what the refusals look at (resource filters are
/// resolved later).
fn sync_request_unresolved(args: &SyncArgs) -> SyncRequest {
    SyncRequest {
        revision: args.revision.clone(),
        dry_run: args.dry_run,
        ..SyncRequest::default()
    }
}

/// Writes `.operation` unless one is already there, retrying on write conflicts; `manifests`
/// (from `--local`) go into `operation.sync.manifests`.
pub async fn request(
    client: &AppClient,
    args: &SyncArgs,
    manifests: Option<Vec<String>>,
) -> Result<Application> {
    let username = client.username();
    for _ in 0..10 {
        let app = client.get(&args.name).await?;
        refuse(args, &app)?;
        if manifests.is_some() {
            refuse_local(args, &app)?;
        }
        let mut op = operation(args, &app, &username)?;
        if let Some(sync) = op.sync.as_mut() {
            sync.manifests = manifests.clone();
        }
        let rv = app
            .metadata
            .other
            .get("resourceVersion")
            .and_then(|v| v.as_str())
            .unwrap_or_default()
            .to_string();
        let patch = serde_json::json!({"operation": serde_json::to_value(&op)?});
        if let Some(updated) = client.merge_patch_at(&args.name, &rv, patch).await? {
            return Ok(updated);
        }
        tracing::debug!(
            "Application {} changed while requesting the sync; retrying",
            args.name
        );
    }
    bail!(
        "could not request the sync of application '{}': it keeps changing",
        args.name
    )
}

/// The control namespace `plumb app` uses unless `-N` says otherwise.
const DEFAULT_APP_NAMESPACE: &str = "argocd";

/// The name Argo's preview messages give the Application: as typed, qualified with the
/// namespace when `-N` names one (here: when it is not the default control namespace).
fn preview_name(namespace: &str, name: &str) -> String {
    if namespace == DEFAULT_APP_NAMESPACE || name.contains('/') {
        name.to_string()
    } else {
        format!("{namespace}/{name}")
    }
}

/// Argo's `--preview-changes` (`NewApplicationSyncCommand`): the heading, the diff as `app
/// diff` prints it, then the question unless `--assumeYes`. Returns whether to sync: not when
/// nothing differs, nor when the answer is no.
pub(crate) async fn preview(client: &AppClient, args: &SyncArgs) -> Result<bool> {
    let app = client.get(&args.name).await?;
    // Everything that would refuse the request is checked before the diff, so that a yes is
    // never answered with a flag error.
    refuse(args, &app)?;
    operation(args, &app, "")?;
    let shown = preview_name(client.namespace(), &args.name);
    let mut out = std::io::stdout();
    writeln!(
        out,
        "====== Previewing differences between live and desired state of application {shown} ======"
    )?;
    let view = DiffView {
        revision: args.revision.clone(),
        local: local_source(args),
        ..DiffView::default()
    };
    if client.print_diff(&app, &view, &mut out).await? == 0 {
        writeln!(out, "====== No Differences found ======")?;
        return Ok(false);
    }
    if args.assume_yes {
        return Ok(true);
    }
    ask_to_proceed(
        &format!(
            "Please review changes to application {shown} shown above. Do you want to continue the sync process? (y/n): "
        ),
        &mut std::io::stdin().lock(),
        &mut out,
    )
}

/// The brake on mass deletion for `--prune` (not for a dry run): whether to go on, asked as
/// [`super::confirm::prune_brake::confirm`] asks; a no prints that nothing was requested. Core mode and
/// the server mode share it.
pub(crate) async fn prune_confirmed(client: &AppClient, args: &SyncArgs) -> Result<bool> {
    if !args.prune || args.dry_run {
        return Ok(true);
    }
    let app = client.get(&args.name).await?;
    refuse(args, &app)?;
    let op = operation(args, &app, "")?;
    let selected = op.sync.as_ref().and_then(|s| s.resources.as_deref());
    if !super::confirm::prune_brake::confirm(client, &app, selected, args.assume_yes).await? {
        println!(
            "Sync of application '{}' cancelled: nothing was requested.",
            args.name
        );
        return Ok(false);
    }
    Ok(true)
}

/// Runs `plumb app sync`.
pub async fn run(client: &AppClient, args: SyncArgs) -> Result<Outcome> {
    // Rendered before anything is asked or requested, so a render error requests nothing.
    let manifests = local_manifests(client, &args).await?;
    if args.preview_changes && !preview(client, &args).await? {
        return Ok(Outcome::Success);
    }
    if !prune_confirmed(client, &args).await? {
        return Ok(Outcome::Success);
    }
    request(client, &args, manifests).await?;
    if args.async_ {
        return Ok(Outcome::Success);
    }
    follow_operation(
        client,
        &args.name,
        args.resources.clone(),
        args.timeout,
        args.output,
        args.dry_run,
    )
    .await
}

/// Follows a requested operation to its end as `app sync` does (progress rows, the final
/// status, Argo's verdict and exit code); `app rollback` shares it.
pub(crate) async fn follow_operation(
    client: &AppClient,
    name: &str,
    selected: Vec<ResourceSelector>,
    timeout: u64,
    output: OutputFormat,
    dry_run: bool,
) -> Result<Outcome> {
    let app_wide = selected.is_empty();
    let clock = Clock::system();
    let watch = WatchFor {
        operation: true,
        ..Default::default()
    };
    let mut tracker = Tracker::new(watch, name, selected);
    let spinner = Spinner::start();
    let end = wait_for(client, name, &mut tracker, timeout, false, &clock, &spinner).await;
    spinner.stop();
    match end? {
        WaitEnd::Met { app, operation } => {
            let header = header_context(client, &app, false).await?;
            print!(
                "{}",
                final_status(client, &app, true, output, &header, &clock.tick()).await?
            );
            if dry_run {
                return Ok(Outcome::Success);
            }
            judge(&app, operation.as_deref(), app_wide)
        }
        WaitEnd::TimedOut(app) => {
            print_timeout(client, &app, true, output, &clock, timeout, name).await?;
            Ok(Outcome::Negative)
        }
        WaitEnd::Degraded(_, message) | WaitEnd::Deleted(message) => bail!(message),
    }
}

/// Argo's verdict after the wait: the phase must be Succeeded, and an app-wide sync that left
/// the Application out of sync must not have skipped prunes.
pub fn judge(
    app: &Application,
    operation: Option<&plumb_model::application::OperationState>,
    app_wide: bool,
) -> Result<Outcome> {
    let Some(state) = operation else {
        return Ok(Outcome::Success);
    };
    if state.phase.as_str() != "Succeeded" {
        eprintln!("Operation has completed with phase: {}", state.phase);
        return Ok(Outcome::Negative);
    }
    let synced = app
        .status
        .as_ref()
        .and_then(|s| s.sync.as_ref())
        .is_some_and(|s| s.status == SyncStatusCode::Synced);
    if app_wide && !synced {
        let pruning = state
            .sync_result
            .as_ref()
            .and_then(|r| r.resources.as_ref())
            .into_iter()
            .flatten()
            .filter(|r| r.status == Some(ResultCode::PruneSkipped))
            .count();
        if pruning > 0 {
            eprintln!("{pruning} resources require pruning");
            return Ok(Outcome::Negative);
        }
    }
    Ok(Outcome::Success)
}

#[cfg(test)]
mod tests {
    use clap::Parser;
    use plumb_app::request::OPERATION_IN_PROGRESS;
    use serde_json::{Value, json};

    use super::*;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        args: SyncArgs,
    }

    fn app() -> Application {
        serde_json::from_value(json!({
            "metadata": {"name": "payments-api", "namespace": "argocd", "resourceVersion": "812"},
            "spec": {"project": "default",
                     "destination": {"server": "https://kubernetes.default.svc", "namespace": "payments"},
                     "source": {"repoURL": "https://git.acme.internal/apps/payments.git", "targetRevision": "v1.4.0", "path": "k8s"},
                     "syncPolicy": {"syncOptions": ["CreateNamespace=true"]}},
            "status": {"resources": [
                {"group": "apps", "version": "v1", "kind": "Deployment", "namespace": "payments", "name": "payments-api", "status": "OutOfSync"},
                {"version": "v1", "kind": "Service", "namespace": "payments", "name": "payments-api", "status": "Synced"}
            ]}
        }))
        .unwrap()
    }

    #[test]
    fn flags_parse() {
        let cli = Cli::try_parse_from(["sync", "payments-api"]).unwrap();
        let a = &cli.args;
        assert!(!a.dry_run && !a.prune && !a.async_ && a.revision.is_none());
        assert_eq!(
            (a.timeout, a.retry_limit, a.retry_backoff_factor),
            (0, 0, 2)
        );
        assert_eq!(
            (
                a.retry_backoff_duration.to_string(),
                a.retry_backoff_max_duration.to_string()
            ),
            ("5s".to_string(), "3m0s".to_string())
        );
        assert_eq!(a.strategy, Strategy::Hook);
        assert!(!a.preview_changes && !a.assume_yes);
        let cli = Cli::try_parse_from([
            "sync",
            "payments-api",
            "--dry-run",
            "--prune",
            "--resource",
            "apps:Deployment:payments/payments-api",
            "--resource",
            ":Service:payments-api",
            "--revision",
            "v1.4.0",
            "--async",
            "--timeout",
            "60",
            "--retry-limit",
            "-1",
            "--retry-refresh",
            "--strategy",
            "apply",
            "--force",
            "--server-side",
            "--replace",
            "--apply-out-of-sync-only",
            "--preview-changes",
            "--assumeYes",
            "-o",
            "yaml",
        ])
        .unwrap();
        let a = &cli.args;
        assert!(a.preview_changes && a.assume_yes);
        assert!(
            a.dry_run
                && a.prune
                && a.async_
                && a.retry_refresh
                && a.force
                && a.server_side
                && a.replace
                && a.apply_out_of_sync_only
        );
        assert_eq!(a.resources.len(), 2);
        assert_eq!(
            (a.retry_limit, a.timeout, a.strategy, a.output),
            (-1, 60, Strategy::Apply, OutputFormat::Yaml)
        );
        assert!(Cli::try_parse_from(["sync", "x", "--strategy", "replace"]).is_err());
        assert!(Cli::try_parse_from(["sync", "x", "--resource", "web"]).is_err());
    }

    #[test]
    fn operation_carries_flags_and_falls_back_to_app_sync_options() {
        let cli = Cli::try_parse_from([
            "sync",
            "payments-api",
            "--prune",
            "--resource",
            "apps:Deployment:*",
        ])
        .unwrap();
        let op = operation(&cli.args, &app(), "alice").unwrap();
        assert_eq!(
            serde_json::to_value(&op).unwrap(),
            json!({"sync": {"prune": true, "dryRun": false, "syncStrategy": {"hook": {}},
                            "resources": [{"group": "apps", "kind": "Deployment", "name": "payments-api", "namespace": "payments"}],
                            "syncOptions": ["CreateNamespace=true"]},
                   "initiatedBy": {"username": "alice"}})
        );
        let cli = Cli::try_parse_from([
            "sync",
            "payments-api",
            "--server-side",
            "--retry-limit",
            "3",
            "--force",
            "--strategy",
            "apply",
        ])
        .unwrap();
        let op = serde_json::to_value(operation(&cli.args, &app(), "alice").unwrap()).unwrap();
        assert_eq!(op["sync"]["syncOptions"], json!(["ServerSideApply=true"]));
        assert_eq!(
            op["sync"]["syncStrategy"],
            json!({"apply": {"force": true}})
        );
        assert_eq!(
            op["retry"],
            json!({"limit": 3, "backoff": {"duration": "5s", "factor": 2, "maxDuration": "3m0s"}})
        );
        let cli =
            Cli::try_parse_from(["sync", "payments-api", "--resource", "batch:Job:*"]).unwrap();
        let err = operation(&cli.args, &app(), "alice").unwrap_err();
        assert_eq!(
            err.to_string(),
            "No matching resources found for filter: batch:Job:*"
        );
    }

    /// Argo declares the backoff flags with `DurationVar`: Go parses them when the command line
    /// is read and the request carries `Duration.String()`.
    #[test]
    fn retry_flags_write_argo_retry_strategy() {
        let retry = |flags: &[&str], app: &Application| {
            let mut argv = vec!["sync", "payments-api"];
            argv.extend_from_slice(flags);
            let cli = Cli::try_parse_from(argv).unwrap();
            serde_json::to_value(operation(&cli.args, app, "alice").unwrap()).unwrap()["retry"]
                .clone()
        };
        assert_eq!(
            retry(
                &[
                    "--retry-limit",
                    "4",
                    "--retry-backoff-duration",
                    "90s",
                    "--retry-backoff-factor",
                    "3",
                    "--retry-backoff-max-duration",
                    "1h",
                    "--retry-refresh",
                ],
                &app()
            ),
            json!({"limit": 4, "backoff": {"duration": "1m30s", "factor": 3, "maxDuration": "1h0m0s"}, "refresh": true})
        );
        assert_eq!(
            retry(
                &["--retry-limit", "1", "--retry-backoff-duration", "2m"],
                &app()
            ),
            json!({"limit": 1, "backoff": {"duration": "2m0s", "factor": 2, "maxDuration": "3m0s"}})
        );
        // 0 or a negative limit sends no retry strategy: the Application's own applies.
        for none in [&["--retry-limit", "0"][..], &["--retry-limit", "-1"], &[]] {
            assert_eq!(retry(none, &app()), Value::Null, "{none:?}");
        }
        let mut own = app();
        own.spec.sync_policy.as_mut().unwrap().retry = Some(
            serde_json::from_value(
                json!({"limit": -1, "backoff": {"duration": "10s", "factor": 2, "maxDuration": "5m"}}),
            )
            .unwrap(),
        );
        assert_eq!(
            retry(&["--retry-limit", "0"], &own),
            json!({"limit": -1, "backoff": {"duration": "10s", "factor": 2, "maxDuration": "5m"}})
        );
        assert_eq!(retry(&["--retry-limit", "2"], &own)["limit"], 2);

        let err = |flag: &str, value: &str| {
            Cli::try_parse_from(["sync", "payments-api", flag, value])
                .unwrap_err()
                .to_string()
        };
        assert!(
            err("--retry-backoff-duration", "soon")
                .contains("invalid value 'soon' for '--retry-backoff-duration <DURATION>': time: invalid duration \"soon\""),
            "{}",
            err("--retry-backoff-duration", "soon")
        );
        assert!(
            err("--retry-backoff-max-duration", "90")
                .contains("time: missing unit in duration \"90\"")
        );
        assert!(
            err("--retry-backoff-duration", "1d")
                .contains("time: unknown unit \"d\" in duration \"1d\"")
        );
        assert!(
            err("--retry-limit", "two").contains("invalid value 'two' for '--retry-limit <N>'")
        );
    }

    /// `--force` goes to the strategy's `force`; `--replace`, `--server-side` and
    /// `--apply-out-of-sync-only` become sync options in argocd's order and replace the
    /// Application's own.
    #[test]
    fn force_and_sync_option_flags() {
        let op = |flags: &[&str]| {
            let mut argv = vec!["sync", "payments-api"];
            argv.extend_from_slice(flags);
            let cli = Cli::try_parse_from(argv).unwrap();
            serde_json::to_value(operation(&cli.args, &app(), "alice").unwrap()).unwrap()["sync"]
                .clone()
        };
        assert_eq!(
            op(&["--force"])["syncStrategy"],
            json!({"hook": {"force": true}})
        );
        assert_eq!(
            op(&["--force", "--strategy", "apply"])["syncStrategy"],
            json!({"apply": {"force": true}})
        );
        assert_eq!(
            op(&["--strategy", "apply"])["syncStrategy"],
            json!({"apply": {}})
        );
        assert_eq!(op(&["--replace"])["syncOptions"], json!(["Replace=true"]));
        assert_eq!(
            op(&["--apply-out-of-sync-only"])["syncOptions"],
            json!(["ApplyOutOfSyncOnly=true"])
        );
        assert_eq!(
            op(&["--apply-out-of-sync-only", "--server-side", "--replace"])["syncOptions"],
            json!([
                "Replace=true",
                "ServerSideApply=true",
                "ApplyOutOfSyncOnly=true"
            ])
        );
        assert_eq!(op(&[])["syncOptions"], json!(["CreateNamespace=true"]));
    }

    #[test]
    fn preview_names_follow_argo() {
        assert_eq!(preview_name("argocd", "payments-api"), "payments-api");
        assert_eq!(
            preview_name("team-a", "payments-api"),
            "team-a/payments-api"
        );
    }

    #[test]
    fn refusals() {
        let cli = Cli::try_parse_from(["sync", "payments-api"]).unwrap();
        let mut busy = app();
        busy.operation = Some(Operation::default());
        assert_eq!(
            refuse(&cli.args, &busy).unwrap_err().to_string(),
            OPERATION_IN_PROGRESS
        );
        let mut auto = app();
        auto.spec.sync_policy.as_mut().unwrap().automated = Some(Default::default());
        let cli = Cli::try_parse_from(["sync", "payments-api", "--revision", "v1.3.2"]).unwrap();
        assert_eq!(
            refuse(&cli.args, &auto).unwrap_err().to_string(),
            "Cannot sync to v1.3.2: auto-sync currently set to v1.4.0"
        );
        assert!(refuse(&cli.args, &app()).is_ok());
    }

    #[test]
    fn verdicts() {
        let mut a = app();
        let state: plumb_model::application::OperationState = serde_json::from_value(json!({
            "operation": {"sync": {}}, "phase": "Failed", "startedAt": "2026-07-20T10:15:32Z",
            "syncResult": {"revision": "9f3c1ad", "resources": [
                {"group": "", "version": "v1", "kind": "Secret", "namespace": "payments", "name": "old", "status": "PruneSkipped"}]}
        }))
        .unwrap();
        assert_eq!(judge(&a, Some(&state), true).unwrap(), Outcome::Negative);
        let mut ok = state.clone();
        ok.phase = serde_json::from_value(json!("Succeeded")).unwrap();
        a.status.as_mut().unwrap().sync =
            Some(serde_json::from_value(json!({"status": "OutOfSync"})).unwrap());
        assert_eq!(judge(&a, Some(&ok), true).unwrap(), Outcome::Negative);
        assert_eq!(judge(&a, Some(&ok), false).unwrap(), Outcome::Success);
        a.status.as_mut().unwrap().sync =
            Some(serde_json::from_value(json!({"status": "Synced"})).unwrap());
        assert_eq!(judge(&a, Some(&ok), true).unwrap(), Outcome::Success);
    }
}
