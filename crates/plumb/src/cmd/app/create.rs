//! `plumb app create NAME ...` or `-f app.yaml`: builds an Application from Argo's flags (or a
//! manifest, flags overriding it), checks it as Argo's API server would (project exists, one
//! destination form, automation flags only with automated sync), then creates it, or with
//! `--upsert` updates an existing one whose spec differs.

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::Args;
use plumb_model::application::{
    Application, ApplicationSource, ApplicationSpec, ObjectMeta, RESOURCES_FINALIZER, SyncPolicy,
    SyncPolicyAutomated,
};

use super::client::AppClient;
use super::flags::source::{SourceLocation, SourceTypeArgs};
use super::flags::sync_policy::SyncPolicyFlag;
use super::flags::sync_policy::retry_strategy;
use crate::exit::Outcome;

/// `plumb app create`.
#[derive(Debug, Args)]
pub struct CreateArgs {
    /// Application name (overrides the file's); `namespace/name` creates it in that namespace.
    pub name: Option<String>,
    /// Read the Application from this YAML or JSON file; flags override its fields.
    #[arg(short = 'f', long, value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// Repository URL.
    #[arg(long, value_name = "URL")]
    pub repo: Option<String>,
    /// Path in the repository.
    #[arg(long, value_name = "PATH")]
    pub path: Option<String>,
    /// Target revision (branch, tag or commit; default HEAD).
    #[arg(long, value_name = "REVISION")]
    pub revision: Option<String>,
    /// Destination cluster URL.
    #[arg(long, value_name = "URL")]
    pub dest_server: Option<String>,
    /// Destination cluster name.
    #[arg(long, value_name = "NAME")]
    pub dest_name: Option<String>,
    /// Destination namespace.
    #[arg(long, value_name = "NAMESPACE")]
    pub dest_namespace: Option<String>,
    /// Project (default: default).
    #[arg(long, value_name = "PROJECT")]
    pub project: Option<String>,
    /// Sync policy.
    #[arg(long, value_enum, value_name = "POLICY")]
    pub sync_policy: Option<SyncPolicyFlag>,
    /// With automated sync: sync again when live state drifts.
    #[arg(long)]
    pub self_heal: bool,
    /// With automated sync: delete what Git no longer declares.
    #[arg(long)]
    pub auto_prune: bool,
    /// With automated sync: allow syncing to no resources.
    #[arg(long)]
    pub allow_empty: bool,
    /// A sync option (`CreateNamespace=true`; repeatable).
    #[arg(long = "sync-option", value_name = "OPTION")]
    pub sync_options: Vec<String>,
    /// A label `key=value` (repeatable).
    #[arg(short = 'l', long = "label", value_name = "KEY=VALUE")]
    pub labels: Vec<String>,
    /// An annotation `key=value` (or `key` for an empty value; repeatable).
    #[arg(long = "annotations", value_name = "KEY=VALUE")]
    pub annotations: Vec<String>,
    #[command(flatten)]
    pub source_args: SourceTypeArgs,
    /// Max number of allowed sync retries (0 removes the retry policy).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub sync_retry_limit: Option<i64>,
    /// Sync retry backoff base duration (a Go duration: 2m, 1h).
    #[arg(long, default_value = "5s", value_parser = super::set::go_duration_arg, value_name = "DURATION")]
    pub sync_retry_backoff_duration: String,
    /// Factor multiplies the base duration after each failed sync retry.
    #[arg(long, default_value_t = 2, value_name = "N")]
    pub sync_retry_backoff_factor: i64,
    /// Max sync retry backoff duration (a Go duration).
    #[arg(long, default_value = "3m0s", value_parser = super::set::go_duration_arg, value_name = "DURATION")]
    pub sync_retry_backoff_max_duration: String,
    /// How many items to keep in revision history.
    #[arg(long, value_name = "N")]
    pub revision_history_limit: Option<i64>,
    /// Add the cascading-deletion finalizer.
    #[arg(long)]
    pub set_finalizer: bool,
    /// Update the Application when it exists with a different spec.
    #[arg(long)]
    pub upsert: bool,
    /// Validation of repo and cluster (Argo's flag): through a server, each source's repository
    /// must answer before the Application is created; `--validate=false` skips it.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, num_args = 0..=1,
          default_missing_value = "true", value_name = "BOOL")]
    pub validate: bool,
}

fn from_file(path: &PathBuf) -> Result<Application> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let docs = plumb_yaml::read_documents(&text, &path.display().to_string())
        .with_context(|| format!("parsing {}", path.display()))?;
    let [doc] = docs.as_slice() else {
        bail!(
            "{}: expected one Application, found {} documents",
            path.display(),
            docs.len()
        );
    };
    serde_json::from_value(doc.value.clone())
        .with_context(|| format!("{}: not an Application", path.display()))
}

/// The Application the flags describe (on top of the file, when given). Its namespace: the one
/// a qualified name (`namespace/name`) gives, else the file's `metadata.namespace`, else
/// `namespace` (the `-N/--app-namespace` one).
pub fn build(args: &CreateArgs, namespace: &str) -> Result<Application> {
    let mut app = named(args, namespace)?;
    apply_metadata(&mut app, args)?;
    let spec = &mut app.spec;
    let location = SourceLocation {
        repo: args.repo.as_ref(),
        path: args.path.as_ref(),
        revision: args.revision.as_ref(),
    };
    if location.touches_source(&args.source_args) {
        if spec.sources.as_ref().is_some_and(|s| !s.is_empty()) {
            bail!("--repo/--path/--revision cannot change a multi-source application");
        }
        let source = spec.source.get_or_insert_with(ApplicationSource::default);
        location.edit(source, &args.source_args, None)?;
    }
    apply_destination(spec, args);
    apply_sync_policy(spec, args)?;
    validate(&app)?;
    Ok(app)
}

/// The file's Application (or an empty one) with the name, and namespace, the flags give.
fn named(args: &CreateArgs, namespace: &str) -> Result<Application> {
    let mut app = match &args.file {
        Some(path) => from_file(path)?,
        None => Application::new(ObjectMeta::default(), ApplicationSpec::default()),
    };
    if let Some(name) = &args.name {
        if let Some((ns, n)) = name.split_once('/') {
            app.metadata.namespace = Some(ns.to_string());
            app.metadata.name = Some(n.to_string());
        } else {
            app.metadata.name = Some(name.clone());
        }
    }
    if app.name().is_empty() {
        bail!("an application name is required");
    }
    if app.namespace().is_empty() {
        app.metadata.namespace = Some(namespace.to_string());
    }
    Ok(app)
}

/// `--label`, `--annotations` and `--set-finalizer`.
fn apply_metadata(app: &mut Application, args: &CreateArgs) -> Result<()> {
    for label in &args.labels {
        let Some((k, v)) = label.split_once('=') else {
            bail!("label '{label}' should be KEY=VALUE");
        };
        app.metadata
            .labels
            .get_or_insert_with(BTreeMap::new)
            .insert(k.to_string(), v.to_string());
    }
    for a in &args.annotations {
        let (k, v) = a.split_once('=').unwrap_or((a.as_str(), ""));
        app.metadata
            .annotations
            .get_or_insert_with(BTreeMap::new)
            .insert(k.to_string(), v.to_string());
    }
    if args.set_finalizer {
        let f = app.metadata.finalizers.get_or_insert_with(Vec::new);
        if !f.iter().any(|x| x == RESOURCES_FINALIZER) {
            f.push(RESOURCES_FINALIZER.to_string());
        }
    }
    Ok(())
}

/// `--dest-*` and `--project` (`default` when neither the file nor the flag names one).
fn apply_destination(spec: &mut ApplicationSpec, args: &CreateArgs) {
    let dest = &mut spec.destination;
    if let Some(s) = &args.dest_server {
        dest.server = Some(s.clone());
    }
    if let Some(n) = &args.dest_name {
        dest.name = Some(n.clone());
    }
    if let Some(ns) = &args.dest_namespace {
        dest.namespace = Some(ns.clone());
    }
    if let Some(p) = &args.project {
        spec.project.clone_from(p);
    }
    if spec.project.is_empty() {
        spec.project = "default".to_string();
    }
}

/// `--sync-policy`, the automation switches, `--sync-option`, `--revision-history-limit` and
/// `--sync-retry-*`.
fn apply_sync_policy(spec: &mut ApplicationSpec, args: &CreateArgs) -> Result<()> {
    match args.sync_policy {
        Some(SyncPolicyFlag::Automated) => {
            spec.sync_policy
                .get_or_insert_with(SyncPolicy::default)
                .automated
                .get_or_insert_with(SyncPolicyAutomated::default);
        }
        Some(SyncPolicyFlag::None) => {
            if let Some(p) = spec.sync_policy.as_mut() {
                p.automated = None;
            }
        }
        None => {}
    }
    apply_automation(spec, args)?;
    if !args.sync_options.is_empty() {
        let opts = spec
            .sync_policy
            .get_or_insert_with(SyncPolicy::default)
            .sync_options
            .get_or_insert_with(Vec::new);
        for o in &args.sync_options {
            if !opts.contains(o) {
                opts.push(o.clone());
            }
        }
    }
    if let Some(n) = args.revision_history_limit {
        spec.revision_history_limit = Some(n);
    }
    apply_retry(spec, args)
}

/// `--self-heal`, `--auto-prune` and `--allow-empty`: only with automated sync.
fn apply_automation(spec: &mut ApplicationSpec, args: &CreateArgs) -> Result<()> {
    for (set, what) in [
        (args.self_heal, "--self-heal"),
        (args.auto_prune, "--auto-prune"),
        (args.allow_empty, "--allow-empty"),
    ] {
        if !set {
            continue;
        }
        let Some(auto) = spec.sync_policy.as_mut().and_then(|p| p.automated.as_mut()) else {
            bail!("Cannot set {what}: application not configured with automatic sync");
        };
        match what {
            "--self-heal" => auto.self_heal = Some(true),
            "--auto-prune" => auto.prune = Some(true),
            _ => auto.allow_empty = Some(true),
        }
    }
    Ok(())
}

/// `--sync-retry-limit` with its backoff flags; 0 removes the retry policy.
fn apply_retry(spec: &mut ApplicationSpec, args: &CreateArgs) -> Result<()> {
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
        }
        Some(limit) => bail!("Invalid sync-retry-limit [{limit}]"),
        None => {}
    }
    Ok(())
}

/// The checks Argo's API server makes before storing an Application that need no cluster.
pub fn validate(app: &Application) -> Result<()> {
    let sources = app.sources();
    if sources.is_empty() || sources.iter().any(|s| s.repo_url.is_empty()) {
        bail!(
            "application '{}': a source repository is required (--repo)",
            app.name()
        );
    }
    let d = &app.spec.destination;
    let server = d.server.as_deref().filter(|s| !s.is_empty());
    let name = d.name.as_deref().filter(|s| !s.is_empty());
    match (server, name) {
        (Some(_), Some(_)) => {
            bail!("application destination can't have both name and server defined")
        }
        (None, None) => bail!(
            "application '{}': a destination server or name is required (--dest-server or --dest-name)",
            app.name()
        ),
        _ => Ok(()),
    }
}

/// Runs `plumb app create`.
pub async fn run(client: &AppClient, args: CreateArgs) -> Result<Outcome> {
    let app = build(&args, client.app_namespace())?;
    if client.project(&app.spec.project).await?.is_none() {
        bail!(
            "application spec for {} is invalid: InvalidSpecError: Application referencing project {} which does not exist",
            app.name(),
            app.spec.project
        );
    }
    let qualified = format!("{}/{}", app.namespace(), app.name());
    let action = match client.get_opt(&qualified).await? {
        None => {
            client.create(&app, args.validate).await?;
            "created"
        }
        Some(existing) => {
            let same = existing.spec == app.spec
                && (app.metadata.labels.is_none()
                    || existing.metadata.labels == app.metadata.labels)
                && (app.metadata.annotations.is_none()
                    || existing.metadata.annotations == app.metadata.annotations);
            if same {
                "unchanged"
            } else if !args.upsert {
                bail!("existing application spec is different, use upsert flag to force update");
            } else {
                let mut updated = existing.clone();
                updated.spec = app.spec.clone();
                if app.metadata.labels.is_some() {
                    updated.metadata.labels.clone_from(&app.metadata.labels);
                }
                if let Some(a) = &app.metadata.annotations {
                    updated
                        .metadata
                        .annotations
                        .get_or_insert_with(BTreeMap::new)
                        .extend(a.clone());
                }
                if let Some(f) = &app.metadata.finalizers {
                    let list = updated.metadata.finalizers.get_or_insert_with(Vec::new);
                    for x in f {
                        if !list.contains(x) {
                            list.push(x.clone());
                        }
                    }
                }
                updated.status = None;
                client.replace(&updated).await?;
                "updated"
            }
        }
    };
    println!("application '{}' {action}", app.name());
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
        args: CreateArgs,
    }

    fn parse(args: &[&str]) -> CreateArgs {
        Cli::try_parse_from(std::iter::once("create").chain(args.iter().copied()))
            .unwrap()
            .args
    }

    #[test]
    fn flags_build_the_application() {
        let args = parse(&[
            "payments-api",
            "--repo",
            "https://git.acme.internal/apps/payments.git",
            "--path",
            "k8s/overlays/prod",
            "--revision",
            "v1.4.0",
            "--dest-server",
            "https://kubernetes.default.svc",
            "--dest-namespace",
            "payments",
            "--sync-policy",
            "automated",
            "--self-heal",
            "--auto-prune",
            "--sync-option",
            "CreateNamespace=true",
            "--label",
            "team=payments",
            "--set-finalizer",
            "--upsert",
            "--sync-retry-limit",
            "3",
            "--sync-retry-backoff-duration",
            "10s",
            "--revision-history-limit",
            "5",
        ]);
        assert!(args.upsert);
        let app = build(&args, "argocd").unwrap();
        assert_eq!(
            serde_json::to_value(&app).unwrap(),
            json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
                   "metadata": {"name": "payments-api", "namespace": "argocd", "labels": {"team": "payments"},
                                "finalizers": ["resources-finalizer.argocd.argoproj.io"]},
                   "spec": {"source": {"repoURL": "https://git.acme.internal/apps/payments.git", "path": "k8s/overlays/prod", "targetRevision": "v1.4.0"},
                            "destination": {"server": "https://kubernetes.default.svc", "namespace": "payments"},
                            "project": "default",
                            "revisionHistoryLimit": 5,
                            "syncPolicy": {"automated": {"prune": true, "selfHeal": true}, "syncOptions": ["CreateNamespace=true"],
                                           "retry": {"limit": 3, "backoff": {"duration": "10s", "factor": 2, "maxDuration": "3m0s"}}}}})
        );
    }

    #[test]
    fn invalid_combinations_are_refused() {
        let base = ["x", "--repo", "https://g/r.git", "--dest-namespace", "p"];
        let with = |extra: &[&str]| build(&parse(&[&base[..], extra].concat()), "argocd");
        assert_eq!(
            with(&["--dest-server", "https://a", "--dest-name", "b"])
                .unwrap_err()
                .to_string(),
            "application destination can't have both name and server defined"
        );
        assert!(
            with(&[])
                .unwrap_err()
                .to_string()
                .contains("destination server or name")
        );
        assert_eq!(
            with(&["--dest-name", "in-cluster", "--self-heal"])
                .unwrap_err()
                .to_string(),
            "Cannot set --self-heal: application not configured with automatic sync"
        );
        assert!(
            build(
                &parse(&["--repo", "https://g/r.git", "--dest-name", "in-cluster"]),
                "argocd"
            )
            .is_err()
        );
        assert!(build(&parse(&["x", "--dest-name", "in-cluster"]), "argocd").is_err());
        for alias in ["none", "manual", "automated", "auto", "automatic"] {
            assert!(
                Cli::try_parse_from(["create", "x", "--sync-policy", alias]).is_ok(),
                "{alias}"
            );
        }
        assert!(Cli::try_parse_from(["create", "x", "--sync-policy", "sometimes"]).is_err());
    }

    #[test]
    fn file_then_flags() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("app.yaml");
        std::fs::write(&path, "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: guestbook\n  namespace: argocd\nspec:\n  project: default\n  source:\n    repoURL: https://github.com/argoproj/argocd-example-apps.git\n    targetRevision: HEAD\n    path: guestbook\n  destination:\n    server: https://kubernetes.default.svc\n    namespace: guestbook\n").unwrap();
        let p = path.to_str().unwrap();
        let app = build(&parse(&["-f", p, "--revision", "v2"]), "argocd").unwrap();
        assert_eq!(app.name(), "guestbook");
        assert_eq!(
            app.spec.source.as_ref().unwrap().target_revision.as_deref(),
            Some("v2")
        );
        assert_eq!(
            app.spec.source.as_ref().unwrap().path.as_deref(),
            Some("guestbook")
        );
        // The file's namespace is kept; -N only fills in a missing one.
        let app = build(&parse(&["-f", p]), "other").unwrap();
        assert_eq!(app.namespace(), "argocd");
        // A qualified name (Argo's `namespace/name`) places it.
        let app = build(&parse(&["team-a/guestbook", "-f", p]), "argocd").unwrap();
        assert_eq!((app.namespace(), app.name()), ("team-a", "guestbook"));
        let app = build(
            &parse(&[
                "web",
                "--repo",
                "https://g/r.git",
                "--dest-server",
                "https://kubernetes.default.svc",
                "--dest-namespace",
                "p",
            ]),
            "team-b",
        )
        .unwrap();
        assert_eq!((app.namespace(), app.name()), ("team-b", "web"));
    }
}
