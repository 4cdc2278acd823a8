//! `plumb app set NAME ...`: changes an Application's spec with Argo's flags
//! (`cmd/util/app.go: SetAppSpecOptions`, applied in the same order), checks the result as
//! Argo's API server does (one destination form, the project exists and permits the source
//! repositories, the destination and the Application's namespace), then writes only what
//! changed as a JSON merge patch guarded by `resourceVersion` (removed fields as explicit
//! `null`s). Prints nothing on success, as Argo.

use anyhow::{Result, bail};
use clap::Args;
use plumb_model::application::{
    Application, ApplicationSource, ApplicationSpec, SyncPolicy, SyncPolicyAutomated,
};
use serde_json::Value;

use super::client::{AppClient, ProjectRead};
use super::cluster::destination;
use super::create::validate;
use super::flags::source::{SourceLocation, SourceTypeArgs};
use super::flags::sync_policy::{SyncPolicyFlag, retry_strategy};
use crate::exit::Outcome;

/// `plumb app set`.
#[derive(Debug, Args)]
pub struct SetArgs {
    /// Application name.
    pub name: String,
    /// Repository URL.
    #[arg(long, value_name = "URL")]
    pub repo: Option<String>,
    /// Path in the repository.
    #[arg(long, value_name = "PATH")]
    pub path: Option<String>,
    /// Target revision (branch, tag or commit).
    #[arg(long, value_name = "REVISION")]
    pub revision: Option<String>,
    /// Which source `--repo/--path/--revision` change (from 1; required for multi-source).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub source_position: Option<i64>,
    /// Destination cluster URL.
    #[arg(long, value_name = "URL")]
    pub dest_server: Option<String>,
    /// Destination cluster name.
    #[arg(long, value_name = "NAME")]
    pub dest_name: Option<String>,
    /// Destination namespace.
    #[arg(long, value_name = "NAMESPACE")]
    pub dest_namespace: Option<String>,
    /// Project.
    #[arg(long, value_name = "PROJECT")]
    pub project: Option<String>,
    /// Sync policy (`automated` resets prune/self-heal/allow-empty unless given too).
    #[arg(long, value_enum, value_name = "POLICY")]
    pub sync_policy: Option<SyncPolicyFlag>,
    /// With automated sync: sync again when live state drifts (`--self-heal=false` unsets).
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true", value_name = "BOOL")]
    pub self_heal: Option<bool>,
    /// With automated sync: delete what Git no longer declares (`--auto-prune=false` unsets).
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true", value_name = "BOOL")]
    pub auto_prune: Option<bool>,
    /// With automated sync: allow syncing to no resources (`--allow-empty=false` unsets).
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true", value_name = "BOOL")]
    pub allow_empty: Option<bool>,
    /// Add a sync option (`Prune=false`), or remove one with `!` (`!Prune=false`); repeatable.
    #[arg(long = "sync-option", value_name = "OPTION")]
    pub sync_options: Vec<String>,
    /// Retry failed syncs this many times (0 removes the retry policy).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub sync_retry_limit: Option<i64>,
    /// First wait between retries (with --sync-retry-limit).
    #[arg(long, default_value = "5s", value_parser = go_duration_arg, value_name = "DURATION")]
    pub sync_retry_backoff_duration: String,
    /// Multiplier of the wait per retry (with --sync-retry-limit).
    #[arg(long, default_value_t = 2, value_name = "N")]
    pub sync_retry_backoff_factor: i64,
    /// Longest wait between retries (with --sync-retry-limit).
    #[arg(long, default_value = "3m0s", value_parser = go_duration_arg, value_name = "DURATION")]
    pub sync_retry_backoff_max_duration: String,
    /// How many entries `status.history` keeps.
    #[arg(long, value_name = "N")]
    pub revision_history_limit: Option<i64>,
    #[command(flatten)]
    pub source_args: SourceTypeArgs,
}

impl SetArgs {
    fn location(&self) -> SourceLocation<'_> {
        SourceLocation {
            repo: self.repo.as_ref(),
            path: self.path.as_ref(),
            revision: self.revision.as_ref(),
        }
    }

    fn touches_source(&self) -> bool {
        self.location().touches_source(&self.source_args)
    }

    fn anything(&self) -> bool {
        self.touches_source()
            || self.source_position.is_some()
            || self.dest_server.is_some()
            || self.dest_name.is_some()
            || self.dest_namespace.is_some()
            || self.project.is_some()
            || self.sync_policy.is_some()
            || self.self_heal.is_some()
            || self.auto_prune.is_some()
            || self.allow_empty.is_some()
            || !self.sync_options.is_empty()
            || self.sync_retry_limit.is_some()
            || self.revision_history_limit.is_some()
    }
}

/// Parses a Go duration and returns it as Go prints it (`2m` → `2m0s`), which is what Argo
/// stores.
pub fn go_duration_arg(text: &str) -> Result<String, String> {
    text.parse::<super::go_duration::GoDuration>()
        .map(|d| d.to_string())
}

// Argo's `SyncPolicy.IsZero`.
fn policy_is_zero(p: &SyncPolicy) -> bool {
    p.automated.is_none()
        && p.sync_options.as_ref().is_none_or(Vec::is_empty)
        && p.retry.is_none()
        && p.managed_namespace_metadata.is_none()
}

fn drop_if_zero(policy: &mut Option<SyncPolicy>) {
    if policy.as_ref().is_some_and(policy_is_zero) {
        *policy = None;
    }
}

/// The Application with the flags applied, in Argo's order: the source flags, then the other
/// flags by name (dest-name, dest-namespace, dest-server, project, revision-history-limit,
/// sync-option, sync-policy, sync-retry-limit), then auto-prune, self-heal and allow-empty.
pub fn apply(args: &SetArgs, app: &Application) -> Result<Application> {
    if !args.anything() {
        bail!("Please set at least one option to update");
    }
    let mut app = app.clone();
    let detected_type = app.status.as_ref().and_then(|s| s.source_type.clone());
    let spec = &mut app.spec;
    let multi = spec.sources.as_ref().is_some_and(|s| !s.is_empty());
    if multi {
        check_source_position(spec, args.source_position)?;
    }
    if args.touches_source() {
        let source = source_to_edit(spec, multi, args.source_position)?;
        args.location()
            .edit(source, &args.source_args, detected_type.as_deref())?;
    }
    apply_destination(spec, args);
    if !args.sync_options.is_empty() {
        apply_sync_options(spec, &args.sync_options);
    }
    apply_sync_policy(spec, args.sync_policy);
    apply_retry(spec, args)?;
    apply_automation(spec, args)?;
    Ok(app)
}

/// A multi-source Application needs `--source-position` within its sources.
fn check_source_position(spec: &ApplicationSpec, position: Option<i64>) -> Result<()> {
    let count = spec.sources.as_ref().map_or(0, Vec::len);
    match position {
        Some(p) if p > 0 => {
            if usize::try_from(p).unwrap_or(usize::MAX) > count {
                bail!(
                    "Source position should be less than the number of sources in the application"
                );
            }
        }
        _ => bail!(
            "Source position should be specified and must be greater than 0 for applications with multiple sources"
        ),
    }
    Ok(())
}

/// The source the flags change: the one at `--source-position` (from 1) of a multi-source
/// Application, else `spec.source` (added when missing).
fn source_to_edit(
    spec: &mut ApplicationSpec,
    multi: bool,
    position: Option<i64>,
) -> Result<&mut ApplicationSource> {
    match (multi, position) {
        (true, Some(p)) => {
            let index = usize::try_from(p - 1).unwrap_or_default();
            match spec.sources.as_mut().and_then(|s| s.get_mut(index)) {
                Some(s) => Ok(s),
                None => bail!(
                    "Source position should be less than the number of sources in the application"
                ),
            }
        }
        _ => Ok(spec.source.get_or_insert_with(ApplicationSource::default)),
    }
}

/// `--dest-name`, `--dest-namespace`, `--dest-server`, `--project` and
/// `--revision-history-limit` (an empty destination value removes the field).
fn apply_destination(spec: &mut ApplicationSpec, args: &SetArgs) {
    if let Some(name) = &args.dest_name {
        spec.destination.name = Some(name.clone()).filter(|n| !n.is_empty());
    }
    if let Some(ns) = &args.dest_namespace {
        spec.destination.namespace = Some(ns.clone()).filter(|n| !n.is_empty());
    }
    if let Some(server) = &args.dest_server {
        spec.destination.server = Some(server.clone()).filter(|s| !s.is_empty());
    }
    if let Some(project) = &args.project {
        spec.project.clone_from(project);
    }
    if let Some(limit) = args.revision_history_limit {
        spec.revision_history_limit = Some(limit);
    }
}

/// `--sync-option`: adds each option, or removes it when prefixed with `!`.
fn apply_sync_options(spec: &mut ApplicationSpec, changes: &[String]) {
    let policy = spec.sync_policy.get_or_insert_with(SyncPolicy::default);
    let options = policy.sync_options.get_or_insert_with(Vec::new);
    for option in changes {
        match option.strip_prefix('!') {
            Some(removed) => {
                if let Some(i) = options.iter().position(|o| o == removed) {
                    options.remove(i);
                }
            }
            None => {
                if !options.contains(option) {
                    options.push(option.clone());
                }
            }
        }
    }
    if options.is_empty() {
        policy.sync_options = None;
    }
    drop_if_zero(&mut spec.sync_policy);
}

/// `--sync-policy`: `automated` replaces the automation block (resetting its switches).
fn apply_sync_policy(spec: &mut ApplicationSpec, flag: Option<SyncPolicyFlag>) {
    match flag {
        Some(SyncPolicyFlag::None) => {
            if let Some(policy) = spec.sync_policy.as_mut() {
                policy.automated = None;
            }
            drop_if_zero(&mut spec.sync_policy);
        }
        Some(SyncPolicyFlag::Automated) => {
            spec.sync_policy
                .get_or_insert_with(SyncPolicy::default)
                .automated = Some(SyncPolicyAutomated::default());
        }
        None => {}
    }
}

/// `--sync-retry-limit` with its backoff flags; 0 removes the retry policy.
fn apply_retry(spec: &mut ApplicationSpec, args: &SetArgs) -> Result<()> {
    match args.sync_retry_limit {
        Some(limit) if limit > 0 => {
            spec.sync_policy
                .get_or_insert_with(SyncPolicy::default)
                .retry = Some(retry_strategy(
                limit,
                &args.sync_retry_backoff_duration,
                args.sync_retry_backoff_factor,
                &args.sync_retry_backoff_max_duration,
            ));
        }
        Some(0) => {
            if let Some(policy) = spec.sync_policy.as_mut() {
                policy.retry = None;
            }
            drop_if_zero(&mut spec.sync_policy);
        }
        Some(limit) => bail!("Invalid sync-retry-limit [{limit}]"),
        None => {}
    }
    Ok(())
}

/// `--auto-prune`, `--self-heal` and `--allow-empty`: only with automated sync.
fn apply_automation(spec: &mut ApplicationSpec, args: &SetArgs) -> Result<()> {
    for (value, flag) in [
        (args.auto_prune, "--auto-prune"),
        (args.self_heal, "--self-heal"),
        (args.allow_empty, "--allow-empty"),
    ] {
        let Some(value) = value else { continue };
        let Some(automated) = spec.sync_policy.as_mut().and_then(|p| p.automated.as_mut()) else {
            bail!("Cannot set {flag}: application not configured with automatic sync");
        };
        // Argo's fields are `omitempty`: false is written as absent.
        let value = value.then_some(true);
        match flag {
            "--auto-prune" => automated.prune = value,
            "--self-heal" => automated.self_heal = value,
            _ => automated.allow_empty = value,
        }
    }
    Ok(())
}

use plumb_model::go::merge_patch::merge_patch;

/// What Argo's API server refuses before storing a spec: the project must exist and permit the
/// Application (`application spec for NAME is invalid: InvalidSpecError: ...`).
/// Refuses what the Application's project does not permit (`check_application`): its sources,
/// those of a requested operation, its destination and namespace.
pub(crate) async fn check_project(client: &AppClient, app: &Application) -> Result<()> {
    let invalid = |messages: Vec<String>| {
        anyhow::anyhow!(
            "application spec for {} is invalid: {}",
            app.name(),
            messages
                .iter()
                .map(|m| format!("InvalidSpecError: {m}"))
                .collect::<Vec<_>>()
                .join(";")
        )
    };
    let project = match client.project_for_check(&app.spec.project).await? {
        ProjectRead::Read(p) => p,
        // Through a server the caller may lack `projects, get`: the server checks the project
        // when it writes the Application.
        ProjectRead::LeftToServer => return Ok(()),
    };
    let Some(project) = project else {
        return Err(invalid(vec![format!(
            "Application referencing project {} which does not exist",
            app.spec.project
        )]));
    };
    let (server, name) = destination::resolve(client, &app.spec.destination).await?;
    let dest = plumb_policy::project::Destination {
        server: &server,
        name: &name,
        namespace: app
            .spec
            .destination
            .namespace
            .as_deref()
            .unwrap_or_default(),
    };
    let violations =
        plumb_policy::project::check_application(&project, app, client.namespace(), &dest);
    if violations.is_empty() {
        Ok(())
    } else {
        Err(invalid(violations.iter().map(|v| v.to_string()).collect()))
    }
}

/// Runs `plumb app set`.
pub async fn run(client: &AppClient, args: SetArgs) -> Result<Outcome> {
    for _ in 0..10 {
        let app = client.get(&args.name).await?;
        let updated = apply(&args, &app)?;
        validate(&updated)?;
        check_project(client, &updated).await?;
        let Some(spec_patch) = merge_patch(
            &serde_json::to_value(&app.spec)?,
            &serde_json::to_value(&updated.spec)?,
        ) else {
            return Ok(Outcome::Success);
        };
        let rv = app
            .metadata
            .other
            .get("resourceVersion")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let patch = serde_json::json!({"spec": spec_patch});
        if client
            .merge_patch_at(&args.name, &rv, patch)
            .await?
            .is_some()
        {
            return Ok(Outcome::Success);
        }
        tracing::debug!(
            "Application {} changed while setting it; retrying",
            args.name
        );
    }
    bail!(
        "could not update application '{}': it keeps changing",
        args.name
    )
}

#[cfg(test)]
mod tests {
    use clap::Parser;
    use serde_json::json;

    use plumb_model::application::RetryStrategy;

    use super::*;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        args: SetArgs,
    }

    fn parse(args: &[&str]) -> SetArgs {
        Cli::try_parse_from(std::iter::once("set").chain(args.iter().copied()))
            .unwrap()
            .args
    }

    fn payments() -> Application {
        serde_json::from_value(json!({
            "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
            "metadata": {"name": "payments-api", "namespace": "argocd", "resourceVersion": "48213",
                         "uid": "a1c4e9f2-3b7d-4c5e-9f10-6d2e8b4a7c93", "generation": 12},
            "spec": {"project": "payments",
                     "source": {"repoURL": "https://git.acme.internal/apps/payments.git", "path": "k8s/overlays/prod", "targetRevision": "v1.4.0"},
                     "destination": {"server": "https://kubernetes.default.svc", "namespace": "payments"},
                     "syncPolicy": {"automated": {"prune": true, "selfHeal": true},
                                    "syncOptions": ["CreateNamespace=true"]}},
            "status": {"sync": {"status": "Synced", "revision": "9f3c1ad7e2b84c6a0d5f1e3b7c9a2d4e6f8b0c1d"}}
        }))
        .unwrap()
    }

    /// The patch `app set` would send for these flags.
    fn patch_for(app: &Application, args: &[&str]) -> Option<Value> {
        let updated = apply(&parse(args), app).unwrap();
        merge_patch(
            &serde_json::to_value(&app.spec).unwrap(),
            &serde_json::to_value(&updated.spec).unwrap(),
        )
    }

    #[test]
    fn flags_parse_like_pflag() {
        let a = parse(&["payments-api"]);
        assert_eq!(
            (a.self_heal, a.auto_prune, a.allow_empty, a.sync_retry_limit),
            (None, None, None, None)
        );
        assert_eq!(
            (
                a.sync_retry_backoff_duration.as_str(),
                a.sync_retry_backoff_max_duration.as_str(),
                a.sync_retry_backoff_factor
            ),
            ("5s", "3m0s", 2)
        );
        let a = parse(&[
            "payments-api",
            "--self-heal",
            "--auto-prune=false",
            "--allow-empty=true",
            "--sync-option",
            "Prune=false",
            "--sync-option",
            "!CreateNamespace=true",
            "--sync-retry-backoff-duration",
            "90s",
            "--sync-retry-backoff-max-duration",
            "1h",
            "--revision-history-limit",
            "3",
        ]);
        assert_eq!(
            (a.self_heal, a.auto_prune, a.allow_empty),
            (Some(true), Some(false), Some(true))
        );
        assert_eq!(a.sync_options, ["Prune=false", "!CreateNamespace=true"]);
        assert_eq!(
            (
                a.sync_retry_backoff_duration.as_str(),
                a.sync_retry_backoff_max_duration.as_str()
            ),
            ("1m30s", "1h0m0s")
        );
        assert_eq!(a.revision_history_limit, Some(3));
        // A separate value is an extra argument, as with pflag's booleans.
        assert!(Cli::try_parse_from(["set", "x", "--self-heal", "false"]).is_err());
        assert!(Cli::try_parse_from(["set", "x", "--self-heal=maybe"]).is_err());
        let err = Cli::try_parse_from(["set", "x", "--sync-retry-backoff-duration", "soon"])
            .unwrap_err()
            .to_string();
        assert!(err.contains("time: invalid duration \"soon\""), "{err}");
        for alias in ["none", "manual", "automated", "auto", "automatic"] {
            assert!(Cli::try_parse_from(["set", "x", "--sync-policy", alias]).is_ok());
        }
    }

    #[test]
    fn go_durations_print_as_go_prints_them() {
        for (input, printed) in [
            ("5s", "5s"),
            ("2m", "2m0s"),
            ("1h30m", "1h30m0s"),
            ("1.5s", "1.5s"),
            ("300ms", "300ms"),
            ("90m", "1h30m0s"),
            ("0", "0s"),
        ] {
            assert_eq!(go_duration_arg(input).as_deref(), Ok(printed), "{input}");
        }
        assert_eq!(
            go_duration_arg("5").unwrap_err(),
            "time: missing unit in duration \"5\""
        );
        assert!(go_duration_arg("").is_err() && go_duration_arg("m5").is_err());
    }

    #[test]
    fn source_and_destination_flags_patch_only_what_changes() {
        let app = payments();
        assert_eq!(
            patch_for(
                &app,
                &[
                    "payments-api",
                    "--revision",
                    "v1.5.0",
                    "--path",
                    "k8s/overlays/prod"
                ]
            ),
            Some(json!({"source": {"targetRevision": "v1.5.0"}}))
        );
        assert_eq!(
            patch_for(
                &app,
                &[
                    "payments-api",
                    "--dest-namespace",
                    "payments-canary",
                    "--project",
                    "default",
                    "--revision-history-limit",
                    "5"
                ]
            ),
            Some(
                json!({"destination": {"namespace": "payments-canary"}, "project": "default", "revisionHistoryLimit": 5})
            )
        );
        // Setting what is already there changes nothing.
        assert_eq!(
            patch_for(&app, &["payments-api", "--revision", "v1.4.0"]),
            None
        );
        // Switching to a named cluster needs the server cleared, as in Argo.
        assert_eq!(
            patch_for(
                &app,
                &[
                    "payments-api",
                    "--dest-name",
                    "prod-eu",
                    "--dest-server",
                    ""
                ]
            ),
            Some(json!({"destination": {"name": "prod-eu", "server": null}}))
        );
        let both = apply(&parse(&["payments-api", "--dest-name", "prod-eu"]), &app).unwrap();
        assert_eq!(
            validate(&both).unwrap_err().to_string(),
            "application destination can't have both name and server defined"
        );
    }

    #[test]
    fn sync_policy_none_clears_automation_with_nulls() {
        let app = payments();
        assert_eq!(
            patch_for(&app, &["payments-api", "--sync-policy", "none"]),
            Some(json!({"syncPolicy": {"automated": null}}))
        );
        // Without sync options left, the whole policy goes, as Argo drops a zero SyncPolicy.
        assert_eq!(
            patch_for(
                &app,
                &[
                    "payments-api",
                    "--sync-policy",
                    "none",
                    "--sync-option",
                    "!CreateNamespace=true"
                ]
            ),
            Some(json!({"syncPolicy": null}))
        );
    }

    #[test]
    fn automated_policy_and_its_switches() {
        let mut manual = payments();
        manual.spec.sync_policy = None;
        assert_eq!(
            patch_for(
                &manual,
                &[
                    "payments-api",
                    "--sync-policy",
                    "automated",
                    "--self-heal",
                    "--auto-prune"
                ]
            ),
            Some(json!({"syncPolicy": {"automated": {"prune": true, "selfHeal": true}}}))
        );
        let err = apply(&parse(&["payments-api", "--self-heal"]), &manual).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Cannot set --self-heal: application not configured with automatic sync"
        );
        let err = apply(&parse(&["payments-api", "--allow-empty=false"]), &manual).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Cannot set --allow-empty: application not configured with automatic sync"
        );
        let app = payments();
        assert_eq!(
            patch_for(
                &app,
                &["payments-api", "--self-heal=false", "--allow-empty"]
            ),
            Some(json!({"syncPolicy": {"automated": {"selfHeal": null, "allowEmpty": true}}}))
        );
        // Like Argo, `--sync-policy automated` starts from an empty automated block.
        assert_eq!(
            patch_for(&app, &["payments-api", "--sync-policy", "auto"]),
            Some(json!({"syncPolicy": {"automated": {"prune": null, "selfHeal": null}}}))
        );
    }

    #[test]
    fn sync_options_are_added_and_removed() {
        let app = payments();
        assert_eq!(
            patch_for(
                &app,
                &[
                    "payments-api",
                    "--sync-option",
                    "Prune=false",
                    "--sync-option",
                    "CreateNamespace=true"
                ]
            ),
            Some(json!({"syncPolicy": {"syncOptions": ["CreateNamespace=true", "Prune=false"]}}))
        );
        assert_eq!(
            patch_for(
                &app,
                &["payments-api", "--sync-option", "!CreateNamespace=true"]
            ),
            Some(json!({"syncPolicy": {"syncOptions": null}}))
        );
    }

    #[test]
    fn retry_policy_is_written_whole_and_removed_with_zero() {
        let app = payments();
        assert_eq!(
            patch_for(
                &app,
                &[
                    "payments-api",
                    "--sync-retry-limit",
                    "3",
                    "--sync-retry-backoff-duration",
                    "10s",
                    "--sync-retry-backoff-factor",
                    "3"
                ]
            ),
            Some(
                json!({"syncPolicy": {"retry": {"limit": 3, "backoff": {"duration": "10s", "factor": 3, "maxDuration": "3m0s"}}}})
            )
        );
        let mut with_retry = app.clone();
        with_retry.spec.sync_policy.as_mut().unwrap().retry = Some(RetryStrategy {
            limit: Some(5),
            ..Default::default()
        });
        assert_eq!(
            patch_for(&with_retry, &["payments-api", "--sync-retry-limit", "0"]),
            Some(json!({"syncPolicy": {"retry": null}}))
        );
        assert_eq!(
            apply(&parse(&["payments-api", "--sync-retry-limit", "-1"]), &app)
                .unwrap_err()
                .to_string(),
            "Invalid sync-retry-limit [-1]"
        );
    }

    #[test]
    fn multi_source_applications_need_a_source_position() {
        let mut app = payments();
        let first = app.spec.source.take().unwrap();
        let mut values = first.clone();
        values.repo_url = "https://git.acme.internal/apps/payments-values.git".into();
        values.path = None;
        values.reference = Some("values".into());
        app.spec.sources = Some(vec![first, values]);
        assert_eq!(
            apply(&parse(&["payments-api", "--revision", "main"]), &app)
                .unwrap_err()
                .to_string(),
            "Source position should be specified and must be greater than 0 for applications with multiple sources"
        );
        assert_eq!(
            apply(
                &parse(&[
                    "payments-api",
                    "--revision",
                    "main",
                    "--source-position",
                    "3"
                ]),
                &app
            )
            .unwrap_err()
            .to_string(),
            "Source position should be less than the number of sources in the application"
        );
        assert_eq!(
            patch_for(
                &app,
                &[
                    "payments-api",
                    "--revision",
                    "main",
                    "--source-position",
                    "2"
                ]
            ),
            Some(json!({"sources": [
                {"repoURL": "https://git.acme.internal/apps/payments.git", "path": "k8s/overlays/prod", "targetRevision": "v1.4.0"},
                {"repoURL": "https://git.acme.internal/apps/payments-values.git", "targetRevision": "main", "ref": "values"}
            ]}))
        );
    }

    #[test]
    fn nothing_to_set_is_refused() {
        assert_eq!(
            apply(&parse(&["payments-api"]), &payments())
                .unwrap_err()
                .to_string(),
            "Please set at least one option to update"
        );
    }
}
