//! The verbs `plumb server` answers whole: `plumb app get/list/sync/diff/manifests` (the server
//! reads, renders and compares, so no kubeconfig and no local helm or kustomize are needed, and
//! the answer is the controller's), and those of [`super::live`]. [`run`] picks them; every
//! other verb runs over the server backend of [`AppClient`].

use anyhow::{Context, Result, bail};
use plumb_model::application::{AppProject, Application};
use serde_json::{Value, json};

use super::apps::connect;
use super::diff::{managed, managed_local, print_diff, state};
use super::live;
use super::routes::{app_url, fetch_app};
use crate::cmd::app::backend::objects::application;
use crate::cmd::app::client::AppClient;
use crate::cmd::app::command::{self, AppCommand};
use crate::cmd::app::diff_view::DiffView;
use crate::cmd::app::flags::conn::ConnArgs;
use crate::cmd::app::output::output_format::OutputFormat;
use crate::cmd::app::output::{tree_live, windows};
use crate::cmd::app::{diff, get, list, manifests, sync};
use crate::cmd::remote::{ServerClient, enc};
use crate::exit::Outcome;
use crate::output::wide::HeaderContext;
use crate::output::{Clock, json as json_out, yaml};

/// Argo's header through a server: `URL:` is the server's address of the Application (Argo
/// CD's `appURL`), the sync windows come from the project the server returns.
async fn header(c: &ServerClient, app: &Application, with_windows: bool) -> Result<HeaderContext> {
    let url = Some(format!("{}/applications/{}", c.base(), app.name()));
    let windows = if with_windows {
        let project = match c
            .get(&format!("/api/v1/projects/{}", enc(&app.spec.project)))
            .await
        {
            Ok(p) => serde_json::from_value::<AppProject>(p).ok(),
            Err(e) => {
                tracing::debug!("reading the project through the server: {e:#}");
                None
            }
        };
        windows::window_summary(app, project.as_ref())
    } else {
        Default::default()
    };
    Ok(HeaderContext { url, windows })
}

async fn get(c: &ServerClient, client: &AppClient, args: get::GetArgs) -> Result<Outcome> {
    let refresh = if args.hard_refresh {
        Some("hard")
    } else if args.refresh {
        Some("normal")
    } else {
        None
    };
    let app = fetch_app(c, &args.name, refresh).await?;
    let text = match args.output {
        OutputFormat::Json => json_out::render(&app)?,
        OutputFormat::Yaml => yaml::render(&app)?,
        OutputFormat::Tree => {
            // Argo's tree: the header, then the nodes of the server's resource tree.
            let ctx = header(c, &app, true).await?;
            let mut out = get::header_text(&app, &ctx, args.show_operation, &Clock::system());
            if app
                .status
                .as_ref()
                .and_then(|s| s.resources.as_ref())
                .is_some_and(|r| !r.is_empty())
            {
                out.push('\n');
                out.push_str(&tree_live::render(client, &app).await?);
            }
            out
        }
        _ => {
            let ctx = header(c, &app, true).await?;
            get::wide_text(&app, &ctx, args.show_operation, &Clock::system())
        }
    };
    print!("{text}");
    Ok(Outcome::Success)
}

async fn list(c: &ServerClient, args: list::ListArgs) -> Result<Outcome> {
    let mut query: Vec<String> = args
        .projects
        .iter()
        .map(|p| format!("projects={}", enc(p)))
        .collect();
    if let Some(sel) = &args.selector {
        query.push(format!("selector={}", enc(sel)));
    }
    let q = if query.is_empty() {
        String::new()
    } else {
        format!("?{}", query.join("&"))
    };
    let answer = c.get(&format!("/api/v1/applications{q}")).await?;
    let apps = answer
        .get("items")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .map(application)
        .collect::<Result<Vec<_>>>()?;
    let apps = list::filter(apps, &args);
    print!("{}", list::render(&apps, args.output)?);
    Ok(Outcome::Success)
}

async fn manifests(
    c: &ServerClient,
    client: &AppClient,
    args: manifests::ManifestsArgs,
) -> Result<Outcome> {
    let name = args.name.as_str();
    let mut out = String::new();
    match args.source {
        manifests::SourceArg::Git if args.local.is_some() => {
            // What core mode prints: the desired objects of the comparison with the local
            // render (the server's, as for `app diff --local`).
            let local = plumb_source::LocalSource {
                dir: args.local.clone().unwrap_or_default(),
                repo_root: args.local_repo_root.clone(),
            };
            for item in managed_local(c, client, name, &local).await? {
                if let Some(target) = state(&item, "targetState") {
                    out.push_str("---\n");
                    out.push_str(&plumb_yaml::to_yaml_string(&manifests::strip_tracking(
                        target,
                    )));
                }
            }
        }
        manifests::SourceArg::Git => {
            let query: Vec<(&str, &str)> = args
                .revision
                .as_deref()
                .map(|r| ("revision", r))
                .into_iter()
                .collect();
            let answer = c.get(&app_url(name, "/manifests", &query)).await?;
            for m in answer
                .get("manifests")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
            {
                let obj: Value =
                    serde_json::from_str(m).context("reading a manifest from the server")?;
                out.push_str("---\n");
                out.push_str(&plumb_yaml::to_yaml_string(&manifests::strip_tracking(obj)));
            }
        }
        manifests::SourceArg::Live => {
            if args.local.is_some() {
                bail!(
                    "--local renders the desired objects: it cannot be combined with --source live"
                );
            }
            if args.revision.is_some() {
                bail!("--revision applies to --source git only");
            }
            for item in managed(c, name, &[]).await? {
                if let Some(live) = state(&item, "liveState") {
                    out.push_str("---\n");
                    out.push_str(&plumb_yaml::to_yaml_string(&live));
                }
            }
        }
    }
    print!("{out}");
    Ok(Outcome::Success)
}

async fn diff(c: &ServerClient, client: &AppClient, args: diff::DiffArgs) -> Result<Outcome> {
    if args.refresh || args.hard_refresh {
        fetch_app(
            c,
            &args.name,
            Some(if args.hard_refresh { "hard" } else { "normal" }),
        )
        .await?;
    }
    let view = DiffView {
        revision: args.revision.clone(),
        hard_refresh: args.hard_refresh,
        attribution: args.attribution,
        format: args.diff_format,
        local: args.local.clone().map(|dir| plumb_source::LocalSource {
            dir,
            repo_root: args.local_repo_root.clone(),
        }),
    };
    let shown = print_diff(c, client, &args.name, &view, &mut std::io::stdout()).await?;
    Ok(if shown > 0 && args.exit_code {
        Outcome::Negative
    } else {
        Outcome::Success
    })
}

async fn sync(c: &ServerClient, client: &AppClient, args: sync::SyncArgs) -> Result<Outcome> {
    // `--local`: rendered here (with the server's settings and the destination's API versions)
    // before anything is asked or requested, and sent as Argo's `manifests`.
    let manifests = sync::local_manifests(client, &args).await?;
    if args.preview_changes && !sync::preview(client, &args).await? {
        return Ok(Outcome::Success);
    }
    if !sync::prune_confirmed(client, &args).await? {
        return Ok(Outcome::Success);
    }
    // Every other flag becomes Argo's ApplicationSyncRequest, built as the core mode builds
    // its operation (resource filters resolved against the Application's resources).
    let current = fetch_app(c, &args.name, None).await?;
    let req = sync::sync_request(&args, &current)?;
    let mut body = json!({"name": args.name, "prune": req.prune, "dryRun": req.dry_run});
    if let Some(r) = &req.revision {
        body["revision"] = json!(r);
    }
    if let Some(st) = &req.strategy {
        body["strategy"] = serde_json::to_value(st)?;
    }
    if let Some(r) = &req.resources {
        body["resources"] = serde_json::to_value(r)?;
    }
    if let Some(o) = &req.sync_options {
        body["syncOptions"] = json!({"items": o});
    }
    if let Some(r) = &req.retry {
        body["retryStrategy"] = serde_json::to_value(r)?;
    }
    if let Some(m) = manifests {
        body["manifests"] = json!(m);
    }
    // The namespace of a qualified name goes in the body (Argo's `appNamespace` field).
    let (path_name, app_namespace) = match args.name.split_once('/') {
        Some((ns, n)) if !ns.is_empty() => (n, Some(ns)),
        _ => (args.name.as_str(), None),
    };
    if let Some(ns) = app_namespace {
        body["name"] = json!(path_name);
        body["appNamespace"] = json!(ns);
    }
    c.post(&app_url(path_name, "/sync", &[]), &body).await?;
    if args.async_ {
        return Ok(Outcome::Success);
    }
    // Followed as in core mode (progress rows, the final status, Argo's verdict), on the
    // server's watch stream.
    sync::follow_operation(
        client,
        &args.name,
        args.resources.clone(),
        args.timeout,
        args.output,
        args.dry_run,
    )
    .await
}

/// Runs `command` through `server`: the verbs the server answers whole here, every other one
/// as in core mode over the server's Application API.
pub(crate) async fn run(
    server: ServerClient,
    conn: &ConnArgs,
    command: AppCommand,
) -> Result<Outcome> {
    match command {
        AppCommand::List(a) => list(&server, a).await,
        AppCommand::Logs(a) => live::logs(&server, a).await,
        AppCommand::Actions(a) => live::actions(&server, a).await,
        AppCommand::PatchResource(a) => live::patch_resource(&server, a).await,
        AppCommand::DeleteResource(a) => live::delete_resource(&server, a).await,
        command => {
            let client = connect(server.clone(), conn).await?;
            match command {
                AppCommand::Get(a) => get(&server, &client, a).await,
                AppCommand::Sync(a) => sync(&server, &client, a).await,
                AppCommand::Diff(a) => diff(&server, &client, a).await,
                AppCommand::Manifests(a) => manifests(&server, &client, a).await,
                command => command::run(&client, command).await,
            }
        }
    }
}
