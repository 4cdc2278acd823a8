//! `plumb app logs`, `actions list|run`, `patch-resource` and `delete-resource` through `plumb
//! server`: the resources are picked from the Application's `status.resources` with Argo's
//! filter (as in core mode), then each is read, patched, deleted or acted on by the server's
//! live-resource routes (Argo's `.../resource`, `.../resource/actions/v2`, `.../logs`), so no
//! kubeconfig is needed and the server's RBAC decides.

use std::time::Duration;

use anyhow::{Context, Result, bail};
use plumb_model::ResourceKey;
use serde_json::{Value, json};

use super::routes::app_url;
use crate::cmd::app::actions::{
    self, ActionsArgs, ActionsCommand, DisplayedAction, ListArgs, RunArgs,
};
use crate::cmd::app::backend::objects::application;
use crate::cmd::app::cluster::managed::{self, LiveResource, ResourceFilterArgs};
use crate::cmd::app::delete_resource::DeleteResourceArgs;
use crate::cmd::app::logs::LogsArgs;
use crate::cmd::app::patch_resource::{PatchResourceArgs, parse_patch};
use crate::cmd::remote::ServerClient;
use crate::exit::Outcome;

/// A managed resource with the version `status.resources` records.
struct Picked {
    key: ResourceKey,
    version: String,
}

/// The Application's managed resources (hooks left out) matching the filter, as Argo's
/// `FilterResources` picks them.
async fn pick(
    c: &ServerClient,
    name: &str,
    filter: &ResourceFilterArgs,
    all: bool,
) -> Result<Vec<Picked>> {
    let app = application(c.get(&app_url(name, "", &[])).await?)?;
    let mut rows: Vec<(LiveResource, String)> = app
        .status
        .iter()
        .flat_map(|s| s.resources.iter().flatten())
        .filter(|r| r.hook != Some(true))
        .map(|r| {
            (
                LiveResource {
                    key: ResourceKey::new(
                        r.group.clone().unwrap_or_default(),
                        r.kind.clone().unwrap_or_default(),
                        r.namespace.clone().unwrap_or_default(),
                        r.name.clone().unwrap_or_default(),
                    ),
                    live: Value::Null,
                },
                r.version.clone().unwrap_or_default(),
            )
        })
        .collect();
    rows.sort_by(|a, b| a.0.key.cmp(&b.0.key));
    rows.dedup_by(|a, b| a.0.key == b.0.key);
    let versions: Vec<(ResourceKey, String)> = rows
        .iter()
        .map(|(r, v)| (r.key.clone(), v.clone()))
        .collect();
    let found = managed::filter(rows.into_iter().map(|(r, _)| r).collect(), filter, all)?;
    Ok(found
        .into_iter()
        .map(|r| {
            let version = versions
                .iter()
                .find(|(k, _)| *k == r.key)
                .map(|(_, v)| v.clone())
                .unwrap_or_default();
            Picked {
                key: r.key,
                version,
            }
        })
        .collect())
}

/// Argo's `ApplicationResourceRequest` fields of one resource, as query parameters.
fn resource_query(p: &Picked) -> Vec<(&str, &str)> {
    vec![
        ("namespace", p.key.namespace.as_str()),
        ("resourceName", p.key.name.as_str()),
        ("version", p.version.as_str()),
        ("group", p.key.group.as_str()),
        ("kind", p.key.kind.as_str()),
    ]
}

fn need_kind(filter: &ResourceFilterArgs) -> Result<()> {
    if filter.kind.as_deref().is_none_or(str::is_empty) {
        bail!("required flag(s) \"kind\" not set");
    }
    Ok(())
}

/// `plumb app patch-resource` through the server (`POST .../resource`).
pub async fn patch_resource(c: &ServerClient, args: PatchResourceArgs) -> Result<Outcome> {
    need_kind(&args.filter)?;
    // Refused here as in core mode, before anything is sent.
    parse_patch(&args.patch_type, &args.patch)?;
    for p in pick(c, &args.name, &args.filter, args.all).await? {
        let mut q = resource_query(&p);
        q.push(("patchType", args.patch_type.as_str()));
        c.post(&app_url(&args.name, "/resource", &q), &json!(args.patch))
            .await
            .with_context(|| format!("patching {}", p.key))?;
        eprintln!("Resource '{}' patched", p.key.name);
    }
    Ok(Outcome::Success)
}

/// `plumb app delete-resource` through the server (`DELETE .../resource`).
pub async fn delete_resource(c: &ServerClient, args: DeleteResourceArgs) -> Result<Outcome> {
    need_kind(&args.filter)?;
    let force = if args.force { "true" } else { "false" };
    let orphan = if args.orphan { "true" } else { "false" };
    for p in pick(c, &args.name, &args.filter, args.all).await? {
        let mut q = resource_query(&p);
        q.push(("force", force));
        q.push(("orphan", orphan));
        c.delete(&app_url(&args.name, "/resource", &q))
            .await
            .with_context(|| format!("deleting {}", p.key))?;
        eprintln!("Resource '{}' deleted", p.key.name);
    }
    Ok(Outcome::Success)
}

/// `plumb app actions list|run` through the server (`.../resource/actions[/v2]`).
pub async fn actions(c: &ServerClient, args: ActionsArgs) -> Result<Outcome> {
    match args.command {
        ActionsCommand::List(a) => list_actions(c, a).await,
        ActionsCommand::Run(a) => run_action(c, a).await,
    }
}

/// `plumb app actions list` through the server (`GET .../resource/actions`).
async fn list_actions(c: &ServerClient, a: ListArgs) -> Result<Outcome> {
    if !a.customizations.is_empty() {
        bail!(
            "--customizations is read by the server, not the CLI, through plumb server: add --core to use a local directory"
        );
    }
    let mut rows = Vec::new();
    for p in pick(c, &a.name, &a.filter, true).await? {
        let answer = c
            .get(&app_url(&a.name, "/resource/actions", &resource_query(&p)))
            .await
            .with_context(|| format!("listing the actions of {}", p.key))?;
        for action in answer
            .get("actions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            rows.push(DisplayedAction {
                group: p.key.group.clone(),
                kind: p.key.kind.clone(),
                name: p.key.name.clone(),
                action: action
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                disabled: action.get("disabled").and_then(Value::as_bool) == Some(true),
            });
        }
    }
    print!("{}", actions::render_list(&rows, a.out)?);
    Ok(Outcome::Success)
}

/// `plumb app actions run` through the server (`POST .../resource/actions/v2`).
async fn run_action(c: &ServerClient, a: RunArgs) -> Result<Outcome> {
    need_kind(&a.filter)?;
    if !a.customizations.is_empty() {
        bail!(
            "--customizations is read by the server, not the CLI, through plumb server: add --core to use a local directory"
        );
    }
    let params = actions::parse_params(&a.params)?;
    let found = pick(c, &a.name, &a.filter, a.all).await?;
    if found.iter().any(|r| r.key.group != found[0].key.group) {
        bail!("Ambiguous resource group. Use flag --group to specify resource group explicitly.");
    }
    let (app_ns, app_name) = match a.name.split_once('/') {
        Some((ns, n)) if !ns.is_empty() => (Some(ns), n),
        _ => (None, a.name.as_str()),
    };
    let parameters: Vec<Value> = params
        .iter()
        .map(|(k, v)| json!({"name": k, "value": v}))
        .collect();
    for p in &found {
        let mut body = json!({
            "name": app_name, "namespace": p.key.namespace, "resourceName": p.key.name,
            "version": p.version, "group": p.key.group, "kind": p.key.kind,
            "action": a.action, "resourceActionParameters": parameters,
        });
        if let Some(ns) = app_ns {
            body["appNamespace"] = json!(ns);
        }
        c.post(
            &format!(
                "/api/v1/applications/{}/resource/actions/v2",
                crate::cmd::remote::enc(app_name)
            ),
            &body,
        )
        .await
        .with_context(|| format!("action '{}' on {}", a.action, p.key))?;
    }
    Ok(Outcome::Success)
}

/// The content of one frame of the logs stream; `None` for the closing frame.
fn frame_content(line: &str) -> Result<Option<String>> {
    let v: Value = serde_json::from_str(line)
        .with_context(|| format!("reading a line of the logs stream: {line}"))?;
    if let Some(e) = v.get("error") {
        bail!(
            "{}",
            e.get("message").and_then(Value::as_str).unwrap_or_default()
        );
    }
    let result = &v["result"];
    if result.get("last").and_then(Value::as_bool) == Some(true) {
        return Ok(None);
    }
    Ok(Some(
        result
            .get("content")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
    ))
}

/// `plumb app logs` through the server (`GET .../logs`), printed as the frames arrive.
pub async fn logs(c: &ServerClient, args: LogsArgs) -> Result<Outcome> {
    let tail = args.tail.map(|t| t.to_string());
    let since = args.since_seconds.map(|s| s.to_string());
    let mut q: Vec<(&str, &str)> = Vec::new();
    for (k, v) in [
        ("group", args.group.as_deref()),
        ("kind", args.kind.as_deref()),
        ("resourceName", args.resource_name.as_deref()),
        ("namespace", args.namespace.as_deref()),
        ("container", args.container.as_deref()),
        ("tailLines", tail.as_deref()),
        ("sinceSeconds", since.as_deref()),
        ("untilTime", args.until_time.as_deref()),
        ("filter", args.filter.as_deref()),
    ] {
        if let Some(v) = v.filter(|v| !v.is_empty()) {
            q.push((k, v));
        }
    }
    if args.follow {
        q.push(("follow", "true"));
    }
    if args.match_case {
        q.push(("matchCase", "true"));
    }
    if args.previous {
        q.push(("previous", "true"));
    }
    let mut resp = c.stream(&app_url(&args.name, "/logs", &q)).await?;
    let mut buf = Vec::new();
    let mut printed = 0usize;
    loop {
        let chunk = if args.follow {
            resp.chunk().await
        } else {
            match tokio::time::timeout(Duration::from_secs(300), resp.chunk()).await {
                Ok(c) => c,
                Err(_) => bail!("the server sent no logs for 300 s"),
            }
        };
        let Some(chunk) = chunk.context("reading the logs stream")? else {
            break;
        };
        buf.extend_from_slice(&chunk);
        while let Some(pos) = buf.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = buf.drain(..=pos).collect();
            let line = String::from_utf8_lossy(&line);
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            match frame_content(line)? {
                Some(text) => {
                    println!("{text}");
                    printed += 1;
                }
                None => {
                    if printed == 0 {
                        eprintln!("no Pods found for application '{}'", args.name);
                    }
                    return Ok(Outcome::Success);
                }
            }
        }
    }
    Ok(Outcome::Success)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_of_argos_gateway() {
        assert_eq!(
            frame_content(r#"{"result":{"content":"GET / 200","podName":"web-1","last":false}}"#)
                .unwrap()
                .as_deref(),
            Some("GET / 200")
        );
        assert_eq!(
            frame_content(r#"{"result":{"content":"","last":true}}"#).unwrap(),
            None
        );
        assert!(frame_content(r#"{"error":{"message":"boom","code":2}}"#).is_err());
        assert!(frame_content("not json").is_err());
    }
}
