//! `app diff` through `plumb server`: the server compares (`managed-resources`) and sends each
//! differing object's diff as JSON, printed here as core mode prints the same diffs.

use std::io::Write;

use anyhow::{Context, Result};
use serde_json::{Value, json};

use super::routes::{app_url, fetch_app};
use crate::cmd::app::client::AppClient;
use crate::cmd::app::diff_view::DiffView;
use crate::cmd::diff::render_options;
use crate::cmd::remote::ServerClient;

/// The `items` of `GET .../managed-resources` (Argo's `ResourceDiff`s).
pub(crate) async fn managed(
    c: &ServerClient,
    name: &str,
    query: &[(&str, &str)],
) -> Result<Vec<Value>> {
    let answer = c.get(&app_url(name, "/managed-resources", query)).await?;
    Ok(answer
        .get("items")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default())
}

/// `--local` through the server: the directory rendered here as core mode renders it
/// ([`AppClient::render_local`], with the server's settings and the destination's API
/// versions), then `POST .../managed-resources` with the manifests: the server compares them
/// with the live objects as the controller compares a sync of local manifests, so the answer is
/// what `--core` computes.
pub(crate) async fn managed_local(
    c: &ServerClient,
    client: &AppClient,
    name: &str,
    local: &plumb_source::LocalSource,
) -> Result<Vec<Value>> {
    let app = fetch_app(c, name, None).await?;
    let objects = client.render_local(&app, local).await?;
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
pub(crate) fn state(item: &Value, field: &str) -> Option<Value> {
    item.get(field)
        .and_then(Value::as_str)
        .and_then(|t| serde_json::from_str::<Value>(t).ok())
        .filter(|v| !v.is_null())
}

/// `app diff` through the server: the server compares (`managed-resources`, with `revision`
/// when asked) and sends each differing object's diff as JSON; it is printed as core mode prints
/// the same diffs (`plumb_diff::render_wire`). Returns how many objects differ.
pub(crate) async fn print_diff(
    c: &ServerClient,
    client: &AppClient,
    name: &str,
    view: &DiffView,
    out: &mut (dyn Write + Send),
) -> Result<usize> {
    let items = match &view.local {
        // `--local`: rendered here, compared by the server with the live objects.
        Some(local) => managed_local(c, client, name, local).await?,
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
