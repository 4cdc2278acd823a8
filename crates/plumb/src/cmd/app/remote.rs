//! `plumb app get/list/sync/diff/manifests` through `plumb server` (when a context is set or
//! `--server` is given): the server reads, renders and compares, so no kubeconfig and no local
//! helm or kustomize are needed, and the answer is the controller's.

use std::io::Write;

use anyhow::{Context, Result, bail};
use plumb_model::application::{AppProject, Application};
use serde_json::{Value, json};

use super::{AppClient, OutputFormat, diff, get, list, manifests, sync};
use crate::cmd::diff::render_options;
use crate::cmd::remote::{ServerClient, enc};
use crate::exit::Outcome;
use crate::output::wide::HeaderContext;
use crate::output::{Clock, json as json_out, yaml};

pub(crate) fn application(v: Value) -> Result<Application> {
    let name = v
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    serde_json::from_value(v).with_context(|| format!("reading Application {name}"))
}

/// `/api/v1/applications/{name}{suffix}` for a possibly qualified name (`namespace/name`: Argo's
/// `appNamespace` query parameter), with `query`.
pub(crate) fn app_url(qualified: &str, suffix: &str, query: &[(&str, &str)]) -> String {
    let (ns, name) = match qualified.split_once('/') {
        Some((ns, n)) if !ns.is_empty() => (Some(ns), n),
        Some((_, n)) => (None, n),
        None => (None, qualified),
    };
    let params: Vec<String> = ns
        .map(|ns| ("appNamespace", ns))
        .into_iter()
        .chain(query.iter().copied())
        .map(|(k, v)| format!("{k}={}", enc(v)))
        .collect();
    let q = if params.is_empty() {
        String::new()
    } else {
        format!("?{}", params.join("&"))
    };
    format!("/api/v1/applications/{}{suffix}{q}", enc(name))
}

async fn app(c: &ServerClient, name: &str, refresh: Option<&str>) -> Result<Application> {
    let query: Vec<(&str, &str)> = refresh.map(|r| ("refresh", r)).into_iter().collect();
    application(c.get(&app_url(name, "", &query)).await?)
}

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
        super::windows::window_summary(app, project.as_ref())
    } else {
        Default::default()
    };
    Ok(HeaderContext { url, windows })
}

/// The server of a client made with `AppClient::through_server`.
fn server_of(client: &AppClient) -> Result<&ServerClient> {
    client
        .server()
        .context("this command goes through plumb server, but none is configured")
}

pub async fn get(client: &AppClient, args: get::GetArgs) -> Result<Outcome> {
    let c = server_of(client)?;
    let refresh = if args.hard_refresh {
        Some("hard")
    } else if args.refresh {
        Some("normal")
    } else {
        None
    };
    let app = app(c, &args.name, refresh).await?;
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
                out.push_str(&super::render_tree(client, &app).await?);
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

pub async fn list(c: &ServerClient, args: list::ListArgs) -> Result<Outcome> {
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

pub async fn manifests(client: &AppClient, args: manifests::ManifestsArgs) -> Result<Outcome> {
    let c = server_of(client)?;
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
            for item in managed_local(client, name, &local).await? {
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

async fn managed(c: &ServerClient, name: &str, query: &[(&str, &str)]) -> Result<Vec<Value>> {
    let answer = c.get(&app_url(name, "/managed-resources", query)).await?;
    Ok(answer
        .get("items")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default())
}

/// `--local` through the server: the directory rendered here as core mode renders it
/// ([`super::compare::render_local`], with the server's settings and the destination's API
/// versions), then `POST .../managed-resources` with the manifests: the server compares them
/// with the live objects as the controller compares a sync of local manifests, so the answer is
/// what `--core` computes.
async fn managed_local(
    client: &AppClient,
    name: &str,
    local: &plumb_source::LocalSource,
) -> Result<Vec<Value>> {
    let c = server_of(client)?;
    let app = app(c, name, None).await?;
    let objects = super::compare::render_local(client, &app, local).await?;
    let manifests = objects
        .iter()
        .map(serde_json::to_string)
        .collect::<Result<Vec<_>, _>>()?;
    let mut body = json!({ "manifests": manifests });
    let (path_name, app_namespace) = match name.split_once('/') {
        Some((ns, n)) if !ns.is_empty() => (n, Some(ns)),
        _ => (name, None),
    };
    if let Some(ns) = app_namespace {
        body["appNamespace"] = json!(ns);
    }
    let answer = c
        .post(&app_url(path_name, "/managed-resources", &[]), &body)
        .await?;
    Ok(answer
        .get("items")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default())
}

/// A state of a `ResourceDiff` (JSON text; `null` when absent).
fn state(item: &Value, field: &str) -> Option<Value> {
    item.get(field)
        .and_then(Value::as_str)
        .and_then(|t| serde_json::from_str::<Value>(t).ok())
        .filter(|v| !v.is_null())
}

pub async fn diff(client: &AppClient, args: diff::DiffArgs) -> Result<Outcome> {
    let c = server_of(client)?;
    if args.refresh || args.hard_refresh {
        app(
            c,
            &args.name,
            Some(if args.hard_refresh { "hard" } else { "normal" }),
        )
        .await?;
    }
    let view = diff::DiffView {
        revision: args.revision.clone(),
        hard_refresh: args.hard_refresh,
        attribution: args.attribution,
        format: args.diff_format,
        local: args.local.clone().map(|dir| plumb_source::LocalSource {
            dir,
            repo_root: args.local_repo_root.clone(),
        }),
    };
    let shown = print_diff(client, &args.name, &view, &mut std::io::stdout()).await?;
    Ok(if shown > 0 && args.exit_code {
        Outcome::Negative
    } else {
        Outcome::Success
    })
}

/// `app diff` through the server: the server compares (`managed-resources`, with `revision`
/// when asked) and sends each differing object's diff as JSON; it is printed as core mode prints
/// the same diffs (`plumb_diff::render_wire`). Returns how many objects differ.
pub(crate) async fn print_diff(
    client: &AppClient,
    name: &str,
    view: &diff::DiffView,
    out: &mut impl Write,
) -> Result<usize> {
    let c = server_of(client)?;
    let items = match &view.local {
        // `--local`: rendered here, compared by the server with the live objects.
        Some(local) => managed_local(client, name, local).await?,
        None => {
            let query: Vec<(&str, &str)> = view
                .revision
                .as_deref()
                .map(|r| ("revision", r))
                .into_iter()
                .collect();
            managed(c, name, &query).await?
        }
    };
    let mut shown = Vec::new();
    for item in items {
        if item.get("hook").and_then(Value::as_bool) == Some(true) {
            continue;
        }
        let Some(text) = item.get("diff").and_then(Value::as_str) else {
            continue;
        };
        let doc: Value = serde_json::from_str(text).context("reading a diff from the server")?;
        shown.extend(doc.as_array().into_iter().flatten().cloned());
    }
    let opts = render_options(view.format.format(), view.attribution);
    plumb_diff::render_wire(&shown, &opts, out).context("writing the diff")?;
    out.flush().context("writing the diff")?;
    Ok(shown.len())
}

pub async fn sync(client: &AppClient, args: sync::SyncArgs) -> Result<Outcome> {
    let c = server_of(client)?;
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
    let current = app(c, &args.name, None).await?;
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

#[cfg(test)]
mod tests {
    use super::app_url;

    #[test]
    fn qualified_names_become_app_namespace() {
        assert_eq!(app_url("web", "", &[]), "/api/v1/applications/web");
        assert_eq!(
            app_url("team-a/web", "/manifests", &[("revision", "v1 2")]),
            "/api/v1/applications/web/manifests?appNamespace=team-a&revision=v1+2"
        );
        assert_eq!(
            app_url("web", "", &[("refresh", "hard")]),
            "/api/v1/applications/web?refresh=hard"
        );
    }
}
