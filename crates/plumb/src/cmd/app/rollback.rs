//! `plumb app rollback NAME [ID]`: syncs the Application back to a deployment recorded in
//! `status.history`, as Argo's `Rollback` does: a sync operation to that entry's commit and
//! source with the apply strategy (no hooks) and the Application's sync options. Without ID, the
//! previous deployment (the second to last entry). Then, unless `--async`, follows the
//! operation exactly like `plumb app sync`.
//!
//! Refused (exit 2) when the history has fewer than two entries (no ID) or lacks the ID, when
//! the project no longer permits the entry's source repository, when the Application is being
//! deleted, while automated sync is on (it would sync forward again at
//! once), and while another operation is in progress. Exit codes otherwise as `app sync`.

use anyhow::Result;
use clap::Args;
use plumb_app::request;
use plumb_model::application::{Application, Operation, RevisionHistory};

use super::client::{AppClient, RollbackRequest};
use super::output::output_format::OutputFormat;
use crate::exit::Outcome;

/// `plumb app rollback`.
#[derive(Debug, Args)]
pub struct RollbackArgs {
    /// Application name.
    pub name: String,
    /// History id to roll back to (default: the previous deployment).
    #[arg(allow_negative_numbers = true)]
    pub id: Option<i64>,
    /// Delete tracked objects the old revision does not declare.
    #[arg(long)]
    pub prune: bool,
    /// Server-side dry run only; nothing changes.
    #[arg(long)]
    pub dry_run: bool,
    /// Return once the operation is requested.
    #[arg(long = "async")]
    pub async_: bool,
    /// Give up waiting after this many seconds (0: wait forever); the operation goes on.
    #[arg(long, default_value_t = 0, value_name = "SECONDS")]
    pub timeout: u64,
    /// Output format of the final state.
    #[arg(short = 'o', long, value_enum, default_value_t = OutputFormat::Wide)]
    pub output: OutputFormat,
}

/// The history entry to roll back to (Argo's `findRevisionHistory`).
pub fn find_revision_history(app: &Application, id: Option<i64>) -> Result<RevisionHistory> {
    Ok(request::find_revision_history(app, id)?)
}

// What Argo's API server refuses before writing the operation.
pub(crate) fn refuse(app: &Application, entry: &RevisionHistory) -> Result<()> {
    Ok(request::refuse_rollback(app, entry)?)
}

impl RollbackArgs {
    /// The rollback these flags ask for.
    pub(crate) fn request(&self) -> RollbackRequest<'_> {
        RollbackRequest {
            name: &self.name,
            id: self.id,
            prune: self.prune,
            dry_run: self.dry_run,
        }
    }
}

/// The operation Argo's `Rollback` writes for this history entry (the controller crate's
/// `rollback_operation`, the same function `plumb server` uses).
pub fn operation(
    req: &RollbackRequest<'_>,
    app: &Application,
    entry: &RevisionHistory,
    username: &str,
) -> Operation {
    request::rollback_operation(req.prune, req.dry_run, app, entry, username)
}

/// Writes the rollback operation unless refused (through plumb server, the server finds the
/// entry, refuses and writes it, with the caller as its initiator).
pub async fn request(client: &AppClient, args: &RollbackArgs) -> Result<Application> {
    client.request_rollback(&args.request()).await
}

/// Runs `plumb app rollback`.
pub async fn run(client: &AppClient, args: RollbackArgs) -> Result<Outcome> {
    request(client, &args).await?;
    if args.async_ {
        return Ok(Outcome::Success);
    }
    // Followed as `app sync` follows its operation.
    super::sync::follow_operation(
        client,
        &args.name,
        Vec::new(),
        args.timeout,
        args.output,
        args.dry_run,
    )
    .await
}

#[cfg(test)]
mod tests {
    use clap::Parser;
    use plumb_app::request::OPERATION_IN_PROGRESS;
    use serde_json::json;

    use super::*;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        args: RollbackArgs,
    }

    fn parse(args: &[&str]) -> RollbackArgs {
        Cli::try_parse_from(std::iter::once("rollback").chain(args.iter().copied()))
            .unwrap()
            .args
    }

    fn payments() -> Application {
        serde_json::from_value(json!({
            "metadata": {"name": "payments-api", "namespace": "argocd", "resourceVersion": "48213"},
            "spec": {"project": "default",
                     "source": {"repoURL": "https://git.acme.internal/apps/payments.git", "path": "k8s/overlays/prod", "targetRevision": "v1.5.0"},
                     "destination": {"server": "https://kubernetes.default.svc", "namespace": "payments"},
                     "syncPolicy": {"syncOptions": ["CreateNamespace=true"]}},
            "status": {"history": [
                {"id": 0, "revision": "2b7e4c1f9a0d3e5b6c8f7a1d2e3b4c5d6e7f8a9b", "deployedAt": "2026-07-18T09:12:40Z",
                 "deployStartedAt": "2026-07-18T09:12:31Z",
                 "source": {"repoURL": "https://git.acme.internal/apps/payments.git", "path": "k8s/overlays/prod", "targetRevision": "v1.3.2"},
                 "initiatedBy": {"username": "alice"}},
                {"id": 1, "revision": "5d8a3f6e1c2b4a7d9e0f1b3c5a7e9d2f4b6c8e0a", "deployedAt": "2026-07-19T14:03:05Z",
                 "source": {"repoURL": "https://git.acme.internal/apps/payments.git", "path": "k8s/overlays/prod", "targetRevision": "v1.4.0"},
                 "initiatedBy": {"automated": true}},
                {"id": 2, "revision": "9f3c1ad7e2b84c6a0d5f1e3b7c9a2d4e6f8b0c1d", "deployedAt": "2026-07-20T10:15:32Z",
                 "source": {"repoURL": "https://git.acme.internal/apps/payments.git", "path": "k8s/overlays/prod", "targetRevision": "v1.5.0"},
                 "initiatedBy": {"username": "bob"}}
            ]}
        }))
        .unwrap()
    }

    #[test]
    fn flags_parse() {
        let a = parse(&["payments-api"]);
        assert!(a.id.is_none() && !a.prune && !a.dry_run && !a.async_);
        assert_eq!((a.timeout, a.output), (0, OutputFormat::Wide));
        let a = parse(&[
            "payments-api",
            "1",
            "--prune",
            "--dry-run",
            "--async",
            "--timeout",
            "30",
            "-o",
            "json",
        ]);
        assert_eq!(a.id, Some(1));
        assert!(a.prune && a.dry_run && a.async_);
        assert_eq!((a.timeout, a.output), (30, OutputFormat::Json));
        assert!(Cli::try_parse_from(["rollback", "x", "one"]).is_err());
    }

    #[test]
    fn the_default_target_is_the_previous_deployment() {
        let app = payments();
        assert_eq!(find_revision_history(&app, None).unwrap().id, 1);
        assert_eq!(find_revision_history(&app, Some(0)).unwrap().id, 0);
        assert_eq!(
            find_revision_history(&app, Some(7))
                .unwrap_err()
                .to_string(),
            "Application 'payments-api' does not have deployment id '7' in history"
        );
        let mut once = app.clone();
        once.status
            .as_mut()
            .unwrap()
            .history
            .as_mut()
            .unwrap()
            .truncate(1);
        assert_eq!(
            find_revision_history(&once, None).unwrap_err().to_string(),
            "Application 'payments-api' should have at least two successful deployments"
        );
        // An explicit id needs only that entry.
        assert_eq!(find_revision_history(&once, Some(0)).unwrap().id, 0);
    }

    #[test]
    fn the_operation_syncs_to_the_recorded_commit_and_source() {
        let app = payments();
        let entry = find_revision_history(&app, None).unwrap();
        let op = operation(
            &parse(&["payments-api", "--prune"]).request(),
            &app,
            &entry,
            "carol",
        );
        assert_eq!(
            serde_json::to_value(&op).unwrap(),
            json!({"sync": {"revision": "5d8a3f6e1c2b4a7d9e0f1b3c5a7e9d2f4b6c8e0a",
                            "prune": true, "dryRun": false,
                            "syncStrategy": {"apply": {}},
                            "source": {"repoURL": "https://git.acme.internal/apps/payments.git", "path": "k8s/overlays/prod", "targetRevision": "v1.4.0"},
                            "syncOptions": ["CreateNamespace=true"]},
                   "initiatedBy": {"username": "carol"}})
        );
    }

    #[test]
    fn multi_source_entries_roll_back_every_source() {
        let app = payments();
        let entry: RevisionHistory = serde_json::from_value(json!({
            "id": 4, "deployedAt": "2026-07-20T10:15:32Z",
            "revisions": ["5d8a3f6e1c2b4a7d9e0f1b3c5a7e9d2f4b6c8e0a", "2.3.1"],
            "sources": [{"repoURL": "https://git.acme.internal/apps/payments-values.git", "targetRevision": "main", "ref": "values"},
                        {"repoURL": "https://charts.acme.internal", "chart": "payments", "targetRevision": "2.3.1"}]
        }))
        .unwrap();
        let op = serde_json::to_value(operation(
            &parse(&["payments-api"]).request(),
            &app,
            &entry,
            "carol",
        ))
        .unwrap();
        assert_eq!(
            op["sync"]["revisions"],
            json!(["5d8a3f6e1c2b4a7d9e0f1b3c5a7e9d2f4b6c8e0a", "2.3.1"])
        );
        assert_eq!(op["sync"]["sources"][1]["chart"], json!("payments"));
        assert!(op["sync"].get("revision").is_none() && op["sync"].get("source").is_none());
    }

    #[test]
    fn refusals() {
        let app = payments();
        let entry = find_revision_history(&app, None).unwrap();
        assert!(refuse(&app, &entry).is_ok());
        let mut auto = app.clone();
        auto.spec.sync_policy.as_mut().unwrap().automated = Some(Default::default());
        assert_eq!(
            refuse(&auto, &entry).unwrap_err().to_string(),
            "rollback cannot be initiated when auto-sync is enabled"
        );
        // Automation switched off with `enabled: false` does not block.
        auto.spec
            .sync_policy
            .as_mut()
            .unwrap()
            .automated
            .as_mut()
            .unwrap()
            .enabled = Some(false);
        assert!(refuse(&auto, &entry).is_ok());
        let mut busy = app.clone();
        busy.operation = Some(Operation::default());
        assert_eq!(
            refuse(&busy, &entry).unwrap_err().to_string(),
            OPERATION_IN_PROGRESS
        );
        let mut deleting = app.clone();
        deleting
            .metadata
            .other
            .insert("deletionTimestamp".into(), json!("2026-07-20T11:00:00Z"));
        assert_eq!(
            refuse(&deleting, &entry).unwrap_err().to_string(),
            "application is deleting"
        );
        let mut old = entry.clone();
        old.source = None;
        assert_eq!(
            refuse(&app, &old).unwrap_err().to_string(),
            "cannot rollback to revision deployed with Argo CD v0.11 or lower. sync to revision instead."
        );
    }
}
