//! `plumb app get/list/sync/diff/manifests` through `plumb server` (when a context is set or
//! `--server` is given): the server reads, renders and compares, so no kubeconfig and no local
//! helm or kustomize are needed, and the answer is the controller's.

use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use plumb_model::application::{AppProject, Application};
use serde_json::{Value, json};

use super::{OutputFormat, diff, get, list, manifests, sync};
use crate::cmd::diff::DiffFormatArg;
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

pub async fn get(c: &ServerClient, args: get::GetArgs) -> Result<Outcome> {
    if args.output == OutputFormat::Tree {
        bail!("-o tree is not available through the server yet; use -o wide or --core");
    }
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

pub async fn manifests(c: &ServerClient, args: manifests::ManifestsArgs) -> Result<Outcome> {
    let name = args.name.as_str();
    let mut out = String::new();
    match args.source {
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
            if args.revision.is_some() {
                bail!("--revision applies to --source git only");
            }
            for item in managed(c, name).await? {
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

async fn managed(c: &ServerClient, name: &str) -> Result<Vec<Value>> {
    let answer = c.get(&app_url(name, "/managed-resources", &[])).await?;
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

pub async fn diff(c: &ServerClient, args: diff::DiffArgs) -> Result<Outcome> {
    if args.revision.is_some() {
        bail!("--revision is not available through the server yet; use --core");
    }
    if args.diff_format == DiffFormatArg::Json {
        bail!("--diff-format json is not available through the server yet; use --core");
    }
    if args.refresh || args.hard_refresh {
        app(
            c,
            &args.name,
            Some(if args.hard_refresh { "hard" } else { "normal" }),
        )
        .await?;
    }
    let mut shown = 0;
    let mut out = String::new();
    for item in managed(c, &args.name).await? {
        if item.get("hook").and_then(Value::as_bool) == Some(true) {
            continue;
        }
        let live = state(&item, "normalizedLiveState");
        let predicted = state(&item, "predictedLiveState");
        // Modified, or tracked live object Git no longer declares (shown as removed).
        let modified = item.get("modified").and_then(Value::as_bool) == Some(true);
        let extra = predicted.is_none() && live.is_some();
        if !modified && !extra {
            continue;
        }
        shown += 1;
        let s = |f: &str| {
            item.get(f)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        out.push_str(&format!(
            "\n===== {}/{} {}/{} ======\n",
            s("group"),
            s("kind"),
            s("namespace"),
            s("name")
        ));
        let live = live
            .as_ref()
            .map(plumb_yaml::to_yaml_string)
            .unwrap_or_default();
        let desired = predicted
            .as_ref()
            .map(plumb_yaml::to_yaml_string)
            .unwrap_or_default();
        out.push_str(&match args.diff_format {
            DiffFormatArg::Unified => {
                let n = s("name");
                plumb_diff::unified_diff(&live, &desired, &format!("{n}-live.yaml"), &n)
            }
            _ => plumb_diff::normal_diff(&live, &desired),
        });
    }
    print!("{out}");
    Ok(if shown > 0 && args.exit_code {
        Outcome::Negative
    } else {
        Outcome::Success
    })
}

pub async fn sync(c: &ServerClient, args: sync::SyncArgs) -> Result<Outcome> {
    // The server's sync route does not take rendered manifests yet: never sync Git instead.
    if args.local.is_some() {
        bail!(
            "--local is not available through the server yet: add --core to sync the local manifests with your kubeconfig"
        );
    }
    if args.preview_changes {
        bail!(
            "--preview-changes is not available through the server yet; use plumb app diff, then sync"
        );
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
    // The namespace of a qualified name goes in the body (Argo's `appNamespace` field).
    let (path_name, app_namespace) = match args.name.split_once('/') {
        Some((ns, n)) if !ns.is_empty() => (n, Some(ns)),
        _ => (args.name.as_str(), None),
    };
    if let Some(ns) = app_namespace {
        body["name"] = json!(path_name);
        body["appNamespace"] = json!(ns);
    }
    let requested = c.post(&app_url(path_name, "/sync", &[]), &body).await?;
    let started = requested
        .pointer("/operation/sync")
        .is_some()
        .then(Instant::now);
    if args.async_ {
        return Ok(Outcome::Success);
    }
    // Follow it: the operation is done when the controller removed `.operation` and recorded
    // a finished state.
    let deadline = (args.timeout > 0).then(|| Instant::now() + Duration::from_secs(args.timeout));
    loop {
        let app = app(c, &args.name, None).await?;
        let state = app.status.as_ref().and_then(|s| s.operation_state.as_ref());
        let finished = app.operation.is_none()
            && state.is_some_and(|s| !matches!(s.phase.as_str(), "Running" | "Terminating"));
        if finished {
            let ctx = header(c, &app, false).await?;
            let clock = Clock::system();
            let text = match args.output {
                OutputFormat::Json => json_out::render(&app)?,
                OutputFormat::Yaml => yaml::render(&app)?,
                _ => get::wide_text(&app, &ctx, true, &clock),
            };
            print!("{text}");
            if args.dry_run {
                return Ok(Outcome::Success);
            }
            return sync::judge(&app, state, true);
        }
        if deadline.is_some_and(|d| Instant::now() > d) {
            eprintln!(
                "timed out ({}s) waiting for the sync of '{}'{}",
                args.timeout,
                args.name,
                if started.is_some() {
                    ""
                } else {
                    " (no operation was recorded)"
                }
            );
            return Ok(Outcome::Negative);
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
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
