//! `plumb app sync NAME`: writes `.operation.sync` on the Application (Argo's
//! `ApplicationSyncRequest` as the API server turns it into an `Operation`), then, unless
//! `--async`, follows it until the controller finished it and compared once more, printing
//! progress rows, the summary, the Operation block and the resources.
//!
//! Exit codes: 0 the operation succeeded; 1 it did not (`Operation has completed with phase:
//! <phase>`), resources still need pruning, or `--timeout` passed; 2 errors (another operation is
//! in progress, bad flags, cluster unreachable).

use anyhow::{Result, bail};
use clap::{Args, ValueEnum};
use plumb_model::application::{
    Application, Backoff, Operation, OperationInitiator, ResultCode, RetryStrategy, SyncOperation,
    SyncStatusCode, SyncStrategy, SyncStrategyForce,
};

use super::client::AppClient;
use super::resource_filter::{ResourceSelector, select};
use super::spinner::Spinner;
use super::wait::{WaitEnd, final_status, print_timeout, wait_for};
use super::waiter::{Tracker, WatchFor};
use super::{OutputFormat, header_context};
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
    /// Return once the operation is requested.
    #[arg(long = "async")]
    pub async_: bool,
    /// Give up waiting after this many seconds (0: wait forever); the operation goes on.
    #[arg(long, default_value_t = 0, value_name = "SECONDS")]
    pub timeout: u64,
    /// Retry a failed sync this many times (0: no retry, negative: unlimited).
    #[arg(
        long,
        default_value_t = 0,
        allow_negative_numbers = true,
        value_name = "N"
    )]
    pub retry_limit: i64,
    /// Refresh the target revision before each retry.
    #[arg(long)]
    pub retry_refresh: bool,
    /// First wait between retries.
    #[arg(long, default_value = "5s", value_name = "DURATION")]
    pub retry_backoff_duration: String,
    /// Longest wait between retries.
    #[arg(long, default_value = "3m0s", value_name = "DURATION")]
    pub retry_backoff_max_duration: String,
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
    /// Output format of the final state.
    #[arg(short = 'o', long, value_enum, default_value_t = OutputFormat::Wide)]
    pub output: OutputFormat,
}

/// Argo's `another operation is already in progress`.
pub const OPERATION_IN_PROGRESS: &str = "another operation is already in progress";

fn duration_ok(text: &str) -> bool {
    // Go's ParseDuration forms Argo accepts (`5s`, `3m0s`, `1h30m`), or plain seconds.
    if text.parse::<u64>().is_ok() {
        return true;
    }
    let mut rest = text;
    let mut any = false;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit() && c != '.')
            .unwrap_or(rest.len());
        if digits == 0 {
            return false;
        }
        rest = &rest[digits..];
        let unit = ["ms", "h", "m", "s"]
            .into_iter()
            .find(|u| rest.starts_with(u));
        match unit {
            Some(u) => rest = &rest[u.len()..],
            None => return false,
        }
        any = true;
    }
    any
}

/// The operation these flags request on `app`.
pub fn operation(args: &SyncArgs, app: &Application, username: &str) -> Result<Operation> {
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
    // The API server takes the Application's own sync options unless the request names some.
    let sync_options = if options.is_empty() {
        app.spec
            .sync_policy
            .as_ref()
            .and_then(|p| p.sync_options.clone())
            .filter(|o| !o.is_empty())
    } else {
        Some(options)
    };
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
    let retry = if args.retry_limit != 0 {
        for d in [
            &args.retry_backoff_duration,
            &args.retry_backoff_max_duration,
        ] {
            if !duration_ok(d) {
                bail!("invalid duration {d:?} (examples: 5s, 3m0s, 1h)");
            }
        }
        Some(RetryStrategy {
            limit: Some(args.retry_limit),
            backoff: Some(Backoff {
                duration: Some(args.retry_backoff_duration.clone()),
                factor: Some(args.retry_backoff_factor),
                max_duration: Some(args.retry_backoff_max_duration.clone()),
            }),
            refresh: args.retry_refresh.then_some(true),
        })
    } else {
        None
    };
    Ok(Operation {
        sync: Some(SyncOperation {
            revision: args.revision.clone(),
            prune: Some(args.prune),
            dry_run: Some(args.dry_run),
            sync_strategy: Some(strategy),
            resources,
            sync_options,
            ..Default::default()
        }),
        initiated_by: Some(OperationInitiator {
            username: Some(username.to_string()),
            automated: None,
        }),
        info: None,
        retry,
    })
}

fn refuse(args: &SyncArgs, app: &Application) -> Result<()> {
    if app.operation.is_some() {
        bail!(OPERATION_IN_PROGRESS);
    }
    let automated = app
        .spec
        .sync_policy
        .as_ref()
        .is_some_and(|p| p.is_automated());
    let target = app
        .sources()
        .first()
        .and_then(|s| s.target_revision.clone())
        .unwrap_or_default();
    if let Some(rev) = &args.revision
        && automated
        && !args.dry_run
        && rev != &target
    {
        bail!("Cannot sync to {rev}: auto-sync currently set to {target}");
    }
    if args.revision.is_some() && app.spec.sources.as_ref().is_some_and(|s| !s.is_empty()) {
        bail!("--revision cannot be used with a multi-source application");
    }
    Ok(())
}

/// Writes `.operation` unless one is already there, retrying on write conflicts.
pub async fn request(client: &AppClient, args: &SyncArgs) -> Result<Application> {
    let username = client.username();
    for _ in 0..10 {
        let app = client.get(&args.name).await?;
        refuse(args, &app)?;
        let op = operation(args, &app, &username)?;
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

/// Runs `plumb app sync`.
pub async fn run(client: &AppClient, args: SyncArgs) -> Result<Outcome> {
    request(client, &args).await?;
    if args.async_ {
        return Ok(Outcome::Success);
    }
    let clock = Clock::system();
    let watch = WatchFor {
        operation: true,
        ..Default::default()
    };
    let mut tracker = Tracker::new(watch, &args.name, args.resources.clone());
    let spinner = Spinner::start();
    let end = wait_for(
        client,
        &args.name,
        &mut tracker,
        args.timeout,
        false,
        &clock,
        &spinner,
    )
    .await;
    spinner.stop();
    match end? {
        WaitEnd::Met { app, operation } => {
            let header = header_context(client, &app, false).await?;
            print!(
                "{}",
                final_status(client, &app, true, args.output, &header, &clock.tick()).await?
            );
            if args.dry_run {
                return Ok(Outcome::Success);
            }
            judge(&app, operation.as_deref(), args.resources.is_empty())
        }
        WaitEnd::TimedOut(app) => {
            print_timeout(
                client,
                &app,
                true,
                args.output,
                &clock,
                args.timeout,
                &args.name,
            )
            .await?;
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
    use serde_json::json;

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
                a.retry_backoff_duration.as_str(),
                a.retry_backoff_max_duration.as_str()
            ),
            ("5s", "3m0s")
        );
        assert_eq!(a.strategy, Strategy::Hook);
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
            "-o",
            "yaml",
        ])
        .unwrap();
        let a = &cli.args;
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
        let cli = Cli::try_parse_from([
            "sync",
            "payments-api",
            "--retry-limit",
            "2",
            "--retry-backoff-duration",
            "soon",
        ])
        .unwrap();
        assert!(operation(&cli.args, &app(), "alice").is_err());
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
        assert!(duration_ok("1h30m") && duration_ok("90") && !duration_ok("m5"));
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
