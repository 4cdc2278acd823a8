//! Argo's `ProjectService` reads beyond List and Get: `GetDetailedProject`
//! (`GET /api/v1/projects/{name}/detailed`), `GetSyncWindowsState`
//! (`GET /api/v1/projects/{name}/syncwindows`) and `ListEvents`
//! (`GET /api/v1/projects/{name}/events`), each behind `projects, get, <name>`.

use axum::Json;
use axum::extract::{Path, State};
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DynamicObject, ListParams};
use plumb_model::application::{AppProject, SyncWindow};
use serde_json::{Value, json};

use crate::auth::middleware::Authenticated;
use crate::error::{Error, Result};
use crate::gateway;
use crate::rbac::Authz;
use crate::state::{AppState, check_name, not_found_or, to_value};

/// The label naming an Argo CD Secret's role (`repository`, `cluster`, ...).
const SECRET_TYPE_LABEL: &str = "argocd.argoproj.io/secret-type";

/// Reads the project after `projects, get, <name>`.
pub(crate) async fn readable(
    s: &AppState,
    caller: &crate::auth::Caller,
    name: &str,
) -> Result<DynamicObject> {
    check_name("AppProject", name)?;
    Authz::new(s, caller)
        .await?
        .check("projects", "get", name)
        .await?;
    s.projects().get(name).await.map_err(|e| {
        not_found_or(
            e,
            &format!("appprojects.argoproj.io \"{name}\" not found"),
            || format!("reading AppProject {}/{name}", s.namespace),
        )
    })
}

fn secret_text(secret: &Secret, key: &str) -> Option<String> {
    let v = secret.data.as_ref()?.get(key)?;
    String::from_utf8(v.0.clone()).ok()
}

/// A repository Secret as Argo's `Repository.Normalize().Sanitized()`: no password, key,
/// token or certificate leaves the server.
pub(crate) fn sanitized_repository(secret: &Secret) -> Value {
    let text = |k: &str| secret_text(secret, k).filter(|v| !v.is_empty());
    let repo = text("url").unwrap_or_default();
    let kind = text("type").unwrap_or_else(|| {
        if repo.starts_with("oci://") {
            "oci".into()
        } else {
            "git".into()
        }
    });
    let mut out = json!({"repo": repo, "type": kind});
    for (key, field) in [
        ("name", "name"),
        ("username", "username"),
        ("proxy", "proxy"),
        ("noProxy", "noProxy"),
        ("project", "project"),
        ("githubAppEnterpriseBaseUrl", "githubAppEnterpriseBaseUrl"),
    ] {
        if let Some(v) = text(key) {
            out[field] = json!(v);
        }
    }
    for key in ["insecure", "enableLfs", "enableOCI", "forceHttpBasicAuth"] {
        if text(key).as_deref() == Some("true") {
            out[key] = json!(true);
        }
    }
    if text("insecureIgnoreHostKey").as_deref() == Some("true") {
        out["insecure"] = json!(true);
    }
    out
}

/// A cluster Secret as Argo's `Cluster.Sanitized()`: server, name, project, namespaces, labels
/// and annotations, and from its config only `tlsClientConfig.insecure` and `serverName`.
pub(crate) fn sanitized_cluster(secret: &Secret) -> Value {
    let text = |k: &str| secret_text(secret, k).filter(|v| !v.is_empty());
    let mut out = json!({"server": text("server").unwrap_or_default()});
    for key in ["name", "project"] {
        if let Some(v) = text(key) {
            out[key] = json!(v);
        }
    }
    if let Some(ns) = text("namespaces") {
        let list: Vec<&str> = ns
            .split(',')
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .collect();
        out["namespaces"] = json!(list);
    }
    if text("clusterResources").as_deref() == Some("true") {
        out["clusterResources"] = json!(true);
    }
    let config: Value = text("config")
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or_default();
    let mut tls = json!({});
    for key in ["insecure", "serverName"] {
        if let Some(v) = config.pointer(&format!("/tlsClientConfig/{key}")) {
            tls[key] = v.clone();
        }
    }
    out["config"] = json!({"tlsClientConfig": tls});
    let labels = secret.metadata.labels.clone().unwrap_or_default();
    let labels: std::collections::BTreeMap<_, _> = labels
        .into_iter()
        .filter(|(k, _)| k != SECRET_TYPE_LABEL)
        .collect();
    if !labels.is_empty() {
        out["labels"] = json!(labels);
    }
    if let Some(a) = secret
        .metadata
        .annotations
        .clone()
        .filter(|a| !a.is_empty())
    {
        out["annotations"] = json!(a);
    }
    out
}

/// `GET /api/v1/projects/{name}/detailed`: `{"project", "globalProjects", "repositories",
/// "clusters"}`, the repositories and clusters being those whose Secrets name the project.
/// Plumb reads no `globalProjects` setting, so that list is always empty (left out, as Argo's
/// gateway leaves out an empty list).
pub(crate) async fn detailed(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(name): Path<String>,
) -> Result<Json<Value>> {
    let obj = readable(&s, &caller, &name).await?;
    let secrets: Api<Secret> = Api::namespaced(s.client.clone(), &s.namespace);
    let params =
        ListParams::default().labels(&format!("{SECRET_TYPE_LABEL} in (repository,cluster)"));
    let list = secrets.list(&params).await.map_err(|e| {
        Error::kube(
            format!(
                "listing repository and cluster Secrets in namespace {}",
                s.namespace
            ),
            e,
        )
    })?;
    let mut items: Vec<&Secret> = list
        .items
        .iter()
        .filter(|sec| secret_text(sec, "project").as_deref() == Some(name.as_str()))
        .collect();
    items.sort_by_key(|sec| sec.metadata.name.clone());
    let kind = |sec: &Secret| {
        sec.metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(SECRET_TYPE_LABEL))
            .cloned()
    };
    let repositories: Vec<Value> = items
        .iter()
        .filter(|sec| kind(sec).as_deref() == Some("repository"))
        .map(|sec| sanitized_repository(sec))
        .collect();
    let clusters: Vec<Value> = items
        .iter()
        .filter(|sec| kind(sec).as_deref() == Some("cluster"))
        .map(|sec| sanitized_cluster(sec))
        .collect();
    let mut out = json!({"project": to_value(&obj)?});
    if !repositories.is_empty() {
        out["repositories"] = json!(repositories);
    }
    if !clusters.is_empty() {
        out["clusters"] = json!(clusters);
    }
    Ok(Json(out))
}

/// The windows open at `now` (Argo's `SyncWindows.Active`), as written in the project.
pub(crate) fn active_windows(
    windows: &[SyncWindow],
    raw: &[Value],
    now: jiff::Timestamp,
) -> Result<Vec<Value>> {
    let mut active = Vec::new();
    for (i, w) in windows.iter().enumerate() {
        let state = plumb_policy::windows::evaluate(&[w], now)
            .map_err(|e| Error::InvalidArgument(format!("{:#}", DisplayChain(&e))))?;
        if !state.active().is_empty() {
            active.push(raw.get(i).cloned().unwrap_or_else(|| json!(w)));
        }
    }
    Ok(active)
}

/// An error with its causes, `: `-separated.
struct DisplayChain<'a>(&'a dyn std::error::Error);

impl std::fmt::Display for DisplayChain<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)?;
        let mut source = self.0.source();
        while let Some(s) = source {
            write!(f, ": {s}")?;
            source = s.source();
        }
        Ok(())
    }
}

/// `GET /api/v1/projects/{name}/syncwindows`: `{"windows": [...]}`, the windows open now.
pub(crate) async fn sync_windows(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(name): Path<String>,
) -> Result<Json<Value>> {
    let obj = readable(&s, &caller, &name).await?;
    let value = to_value(&obj)?;
    let project: AppProject = serde_json::from_value(value.clone())
        .map_err(|e| Error::Internal(format!("reading AppProject {name}: {e}")))?;
    let raw = value
        .pointer("/spec/syncWindows")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let windows = project.spec.sync_windows.unwrap_or_default();
    let active = active_windows(&windows, &raw, jiff::Timestamp::now())?;
    Ok(Json(if active.is_empty() {
        json!({})
    } else {
        json!({"windows": active})
    }))
}

/// `GET /api/v1/projects/{name}/events`: the project's Kubernetes Events (by name, namespace
/// and UID), oldest first.
pub(crate) async fn events(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(name): Path<String>,
) -> Result<Json<Value>> {
    let obj = readable(&s, &caller, &name).await?;
    let uid = obj.metadata.uid.clone().unwrap_or_default();
    let fields = format!(
        "involvedObject.name={name},involvedObject.namespace={},involvedObject.uid={uid}",
        s.namespace
    );
    let api: Api<k8s_openapi::api::core::v1::Event> =
        Api::namespaced(s.client.clone(), &s.namespace);
    let list = api
        .list(&ListParams::default().fields(&fields))
        .await
        .map_err(|e| {
            Error::kube(
                format!("listing Events of AppProject {}/{name}", s.namespace),
                e,
            )
        })?;
    let mut items = list
        .items
        .iter()
        .map(to_value)
        .collect::<Result<Vec<_>>>()?;
    let time = |v: &Value| {
        ["lastTimestamp", "eventTime", "firstTimestamp"]
            .iter()
            .find_map(|f| v.get(*f).and_then(Value::as_str).map(str::to_string))
            .unwrap_or_default()
    };
    items.sort_by_key(time);
    Ok(Json(gateway::list(list.metadata.resource_version, items)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::ByteString;

    fn secret(data: &[(&str, &str)]) -> Secret {
        Secret {
            data: Some(
                data.iter()
                    .map(|(k, v)| (k.to_string(), ByteString(v.as_bytes().to_vec())))
                    .collect(),
            ),
            ..Secret::default()
        }
    }

    #[test]
    fn credentials_never_leave() {
        let repo = sanitized_repository(&secret(&[
            ("url", "https://git.example/x.git"),
            ("password", "hunter2"),
            ("sshPrivateKey", "-----BEGIN"),
            ("username", "bot"),
            ("project", "p"),
        ]));
        assert_eq!(
            repo,
            json!({"repo": "https://git.example/x.git", "type": "git", "username": "bot", "project": "p"})
        );
        let cluster = sanitized_cluster(&secret(&[
            ("server", "https://k8s.example"),
            ("name", "prod"),
            (
                "config",
                r#"{"bearerToken": "secret-token", "tlsClientConfig": {"insecure": false, "keyData": "KEY", "caData": "CA"}}"#,
            ),
        ]));
        let text = cluster.to_string();
        assert!(
            !text.contains("secret-token") && !text.contains("KEY") && !text.contains("CA"),
            "{text}"
        );
        assert_eq!(
            cluster["config"],
            json!({"tlsClientConfig": {"insecure": false}})
        );
    }
}
