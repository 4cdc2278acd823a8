//! `plumb app actions list|run`: Argo CD's resource actions (`cmd/argocd/commands/app_actions.go`)
//! on an Application's managed resources, with the Lua engine of plumb-health. Running an action
//! does what Argo's API server does (`RunResourceActionV2`): every object the action returns is
//! checked against the project first (and creates are dry-run), then patched (a merge patch of
//! the difference; `status` through the status subresource when the kind has one) or created.
//! Plumb is stricter than Argo in two places: a patch may only touch the object the action ran on
//! (the engine refuses others), and a create must stay in that object's namespace.

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::{Context, Result, anyhow, bail};
use clap::{Args, Subcommand, ValueEnum};
use plumb_health::actions::Actions;
use serde::Serialize;

use super::client::AppClient;
use super::cluster::managed::{self, ResourceFilterArgs};
use crate::exit::Outcome;
use crate::output::tabwriter::Table;

/// `plumb app actions`.
#[derive(Debug, Args)]
pub struct ActionsArgs {
    #[command(subcommand)]
    pub(crate) command: ActionsCommand,
}

#[derive(Debug, Subcommand)]
pub(crate) enum ActionsCommand {
    /// Lists available actions on a resource.
    #[command(
        after_help = "Examples:\n  # List the actions of every resource of an application\n  plumb app actions list guestbook\n\n  # Only Deployments\n  plumb app actions list guestbook --kind Deployment"
    )]
    List(ListArgs),
    /// Runs an available action on resource(s).
    #[command(
        after_help = "Examples:\n  # Restart a Deployment\n  plumb app actions run guestbook restart --kind Deployment --resource-name guestbook-ui\n\n  # Scale a Deployment to 3 replicas (an action with a parameter)\n  plumb app actions run guestbook scale --kind Deployment --resource-name guestbook-ui --param replicas=3\n\n  # Suspend every CronJob of an application\n  plumb app actions run reports suspend --kind CronJob --all"
    )]
    Run(RunArgs),
}

/// `-o` of `actions list`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ListOutput {
    /// One object per action, as JSON.
    Json,
    /// One object per action, as YAML.
    Yaml,
}

/// `plumb app actions list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Application name.
    pub(crate) name: String,
    #[command(flatten)]
    pub(crate) filter: ResourceFilterArgs,
    /// Output format (default: a table).
    #[arg(short = 'o', long = "out", value_enum)]
    pub(crate) out: Option<ListOutput>,
    /// A directory laid out like Argo CD's resource_customizations whose actions come after
    /// argocd-cm's and before Plumb's own (repeatable; the controller's --customizations).
    #[arg(long = "customizations", value_name = "DIR")]
    pub(crate) customizations: Vec<PathBuf>,
}

/// `plumb app actions run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Application name.
    pub(crate) name: String,
    /// The action to run.
    pub(crate) action: String,
    #[command(flatten)]
    pub(crate) filter: ResourceFilterArgs,
    /// Run the action on every matching resource.
    #[arg(long)]
    pub(crate) all: bool,
    /// An action parameter, the script's actionParams[KEY] (repeatable).
    #[arg(long = "param", value_name = "KEY=VALUE")]
    pub(crate) params: Vec<String>,
    /// A directory laid out like Argo CD's resource_customizations whose actions come after
    /// argocd-cm's and before Plumb's own (repeatable; the controller's --customizations).
    #[arg(long = "customizations", value_name = "DIR")]
    pub(crate) customizations: Vec<PathBuf>,
}

/// `--param KEY=VALUE` flags as Argo parses them (the first `=` splits; a later one is the
/// value's).
pub fn parse_params(params: &[String]) -> Result<BTreeMap<String, String>> {
    params
        .iter()
        .map(|p| match p.split_once('=') {
            Some((k, v)) => Ok((k.to_string(), v.to_string())),
            None => bail!("Invalid parameter format: {p}"),
        })
        .collect()
}

/// One row of `actions list` (Argo's `DisplayedAction`: Go field names in JSON and YAML).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct DisplayedAction {
    /// API group.
    pub group: String,
    /// Kind.
    pub kind: String,
    /// Object name.
    pub name: String,
    /// Action name.
    pub action: String,
    /// Whether it is disabled now.
    pub disabled: bool,
}

/// The table, JSON or YAML of `actions list`, as Argo prints them.
pub fn render_list(actions: &[DisplayedAction], out: Option<ListOutput>) -> Result<String> {
    Ok(match out {
        None => {
            let mut t = Table::new();
            t.line("GROUP\tKIND\tNAME\tACTION\tDISABLED");
            for a in actions {
                t.row(&[
                    a.group.as_str(),
                    a.kind.as_str(),
                    a.name.as_str(),
                    a.action.as_str(),
                    if a.disabled { "true" } else { "false" },
                ]);
            }
            t.render()
        }
        // Go marshals an empty (nil) slice as null.
        Some(ListOutput::Json) if actions.is_empty() => "null\n".to_string(),
        Some(ListOutput::Json) => crate::output::json::render(actions)?,
        Some(ListOutput::Yaml) if actions.is_empty() => "null\n\n".to_string(),
        Some(ListOutput::Yaml) => format!("{}\n", crate::output::yaml::render(actions)?),
    })
}

/// Runs `plumb app actions ...`.
pub async fn run(client: &AppClient, args: ActionsArgs) -> Result<Outcome> {
    match args.command {
        ActionsCommand::List(a) => list(client, a).await,
        ActionsCommand::Run(a) => run_action(client, a).await,
    }
}

async fn engine(client: &AppClient, dirs: &[PathBuf]) -> Result<Actions> {
    let settings = client.settings().await?;
    Actions::from_settings(&settings)
        .and_then(|a| a.with_directories(dirs))
        .map_err(|e| anyhow!(e))
}

async fn list(client: &AppClient, args: ListArgs) -> Result<Outcome> {
    let app = client.get(&args.name).await?;
    let engine = engine(client, &args.customizations).await?;
    let dest = managed::destination(client, &app).await?;
    let found = managed::filter(
        managed::live_resources(&dest, &app).await?,
        &args.filter,
        true,
    )?;
    let mut rows = Vec::new();
    for r in &found {
        let offered = engine
            .discover(&r.live)
            .with_context(|| format!("listing the actions of {}", r.key))?;
        rows.extend(offered.into_iter().map(|a| DisplayedAction {
            group: r.key.group.clone(),
            kind: r.key.kind.clone(),
            name: r.key.name.clone(),
            action: a.name,
            disabled: a.disabled,
        }));
    }
    print!("{}", render_list(&rows, args.out)?);
    Ok(Outcome::Success)
}

async fn run_action(client: &AppClient, args: RunArgs) -> Result<Outcome> {
    if args.filter.kind.as_deref().is_none_or(str::is_empty) {
        bail!("required flag(s) \"kind\" not set");
    }
    let params = parse_params(&args.params)?;
    let app = client.get(&args.name).await?;
    let engine = engine(client, &args.customizations).await?;
    let dest = managed::destination(client, &app).await?;
    let found = managed::filter(
        managed::live_resources(&dest, &app).await?,
        &args.filter,
        args.all,
    )?;
    if found.iter().any(|r| r.key.group != found[0].key.group) {
        bail!("Ambiguous resource group. Use flag --group to specify resource group explicitly.");
    }
    let project = client.project(&app.spec.project).await?.with_context(|| {
        format!(
            "error getting app project: appproject.argoproj.io \"{}\" not found",
            app.spec.project
        )
    })?;
    for r in &found {
        let impacted = engine
            .run(&r.live, &args.action, &params)
            .with_context(|| format!("running action '{}' on {}", args.action, r.key))?;
        let target = plumb_policy::project::Destination {
            server: &dest.server,
            name: &dest.name,
            namespace: app
                .spec
                .destination
                .namespace
                .as_deref()
                .unwrap_or_default(),
        };
        plumb_app::actions::write_action_result(
            &dest.discovery,
            dest.discovery.client(),
            &project,
            &target,
            &r.key,
            &r.live,
            &impacted,
        )
        .await
        .with_context(|| format!("action '{}' on {}", args.action, r.key))?;
    }
    Ok(Outcome::Success)
}

#[cfg(test)]
mod tests {
    use plumb_model::ResourceKey;
    use serde_json::json;

    use super::*;
    use crate::snapshot::check;

    /// What `actions list` shows for a guestbook-like Application: the built-in actions of its
    /// Deployment and of a suspended CronJob, none for its Service.
    fn rows() -> Vec<DisplayedAction> {
        let engine = Actions::default();
        let objects = [
            json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "guestbook-ui", "namespace": "guestbook"}}),
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "guestbook-ui", "namespace": "guestbook"},
                "spec": {"template": {"spec": {"containers": [{"name": "ui", "image": "gcr.io/heptio-images/ks-guestbook-demo:0.2"}]}}}}),
            json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "guestbook-report", "namespace": "guestbook"},
                "spec": {"schedule": "0 3 * * *", "suspend": true}}),
        ];
        let mut rows = Vec::new();
        for obj in &objects {
            let key = ResourceKey::of(obj);
            for a in engine.discover(obj).unwrap() {
                rows.push(DisplayedAction {
                    group: key.group.clone(),
                    kind: key.kind.clone(),
                    name: key.name.clone(),
                    action: a.name,
                    disabled: a.disabled,
                });
            }
        }
        rows
    }

    #[test]
    fn list_layouts() {
        let rows = rows();
        check("actions-list.txt", &render_list(&rows, None).unwrap());
        check(
            "actions-list.json",
            &render_list(&rows, Some(ListOutput::Json)).unwrap(),
        );
        check(
            "actions-list.yaml",
            &render_list(&rows, Some(ListOutput::Yaml)).unwrap(),
        );
        assert_eq!(
            render_list(&[], None).unwrap(),
            "GROUP  KIND  NAME  ACTION  DISABLED\n"
        );
        assert_eq!(render_list(&[], Some(ListOutput::Json)).unwrap(), "null\n");
    }

    #[test]
    fn params_split_at_the_first_equals_sign() {
        let parsed =
            parse_params(&["replicas=3".into(), "expr=a=b".into(), "empty=".into()]).unwrap();
        assert_eq!(
            parsed,
            BTreeMap::from([
                ("empty".to_string(), String::new()),
                ("expr".to_string(), "a=b".to_string()),
                ("replicas".to_string(), "3".to_string()),
            ])
        );
        assert_eq!(
            parse_params(&["replicas".into()]).unwrap_err().to_string(),
            "Invalid parameter format: replicas"
        );
    }
}
