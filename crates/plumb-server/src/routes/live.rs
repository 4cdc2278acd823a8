//! Argo CD's live-resource calls on one object of an Application's resource tree (managed or
//! not: a Pod of a ReplicaSet of a managed Deployment counts): `GET .../resource` (the live
//! manifest, Secrets masked), `POST .../resource` (patch it), `DELETE .../resource`, `GET
//! .../resource/actions` and `POST .../resource/actions[/v2]` (Lua resource actions, run by the
//! engine `plumb app actions` uses). The object is named as Argo's `ApplicationResourceRequest`
//! names it (`namespace`, `resourceName`, `version`, `group`, `kind`; `appNamespace`, `project`)
//! and must be a node of the Application's resource tree: anything else is refused, so the
//! server's rights never reach objects the Application does not show.

use std::collections::BTreeMap;

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use kube::api::{Api, DynamicObject, Patch, PatchParams};
use plumb_app::ScopedProject;
use plumb_health::actions::Actions;
use plumb_kube::ApiKind;
use plumb_model::ResourceKey;
use plumb_model::application::Application;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::auth::Caller;
use crate::auth::middleware::Authenticated;
use crate::error::{Error, Result};
use crate::gateway::Query;
use crate::rbac::{Authz, app_object};
use crate::routes::resources::{app_tree, mask_secret, project_of};
use crate::state::{AppState, to_value};

/// The object a request names (Argo's `ApplicationResourceRequest`) and the Application.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ResourceRequest {
    #[serde(default)]
    pub(crate) namespace: String,
    #[serde(default)]
    pub(crate) resource_name: String,
    #[serde(default)]
    pub(crate) version: String,
    #[serde(default)]
    pub(crate) group: String,
    #[serde(default)]
    pub(crate) kind: String,
    #[serde(default)]
    pub(crate) app_namespace: Option<String>,
    #[serde(default)]
    pub(crate) project: Option<String>,
}

impl ResourceRequest {
    pub(crate) fn from_query(q: &Query) -> Self {
        let s = |k: &str| q.get(k).unwrap_or_default().to_string();
        Self {
            namespace: s("namespace"),
            resource_name: s("resourceName"),
            version: s("version"),
            group: s("group"),
            kind: s("kind"),
            app_namespace: q.get("appNamespace").map(str::to_string),
            project: q.get("project").map(str::to_string),
        }
    }
}

/// The object found in the tree, live.
pub(crate) struct Found {
    pub(crate) app: Application,
    /// The Application's key (`name` or `namespace/name`).
    pub(crate) app_key: String,
    pub(crate) key: ResourceKey,
    pub(crate) kind: ApiKind,
    pub(crate) api: Api<DynamicObject>,
    pub(crate) live: Value,
    pub(crate) cluster: std::sync::Arc<plumb_app::Cluster>,
    /// The Application's project, as the controller evaluates it.
    pub(crate) project: ScopedProject,
    /// What the object is read and written with ([`acting_client`]).
    pub(crate) client: kube::Client,
}

/// argocd-cm's switch for Argo 3's fine-grained rights on an Application's resources.
const FINE_GRAINED_INHERITANCE_DISABLED: &str =
    "server.rbac.disableApplicationFineGrainedRBACInheritance";

/// Authorizes `act` on the object `r` names as Argo's `getAppLiveResource` does: `update` and
/// `delete` become `update/<group>/<kind>/<namespace>/<name>` (so `delete/*/Secret/*/*` can be
/// denied). With `server.rbac.disableApplicationFineGrainedRBACInheritance` (Argo 3's default,
/// `true`) only that action counts; set to `false`, `update`/`delete` on the Application covers
/// its resources too, the fine-grained action being tried when it does not. A value that is not
/// a boolean is reported and read as `true`, the stricter reading.
async fn authorize_resource(
    s: &AppState,
    caller: &Caller,
    app_key: &str,
    r: &ResourceRequest,
    act: &str,
) -> Result<()> {
    if act != "update" && act != "delete" {
        return s.authorize_app(caller, app_key, act).await;
    }
    let fine = format!(
        "{act}/{}/{}/{}/{}",
        r.group, r.kind, r.namespace, r.resource_name
    );
    let settings = s.settings().await?;
    let inherit = match settings
        .get(FINE_GRAINED_INHERITANCE_DISABLED)
        .map(str::trim)
    {
        None | Some("") | Some("true") => false,
        Some("false") => true,
        Some(other) => {
            tracing::warn!(
                "argocd-cm {FINE_GRAINED_INHERITANCE_DISABLED}: expected true or false, got \
                 {other:?}; reading it as true"
            );
            false
        }
    };
    if inherit {
        match s.authorize_app(caller, app_key, act).await {
            Err(Error::PermissionDenied(_)) => {}
            other => return other,
        }
    }
    s.authorize_app(caller, app_key, &fine).await
}

/// Authorizes `act` on the Application (Argo's `getAppLiveResource`), checks `project` when
/// given, finds the requested object among the nodes of the Application's tree and reads it.
pub(crate) async fn find(
    s: &AppState,
    caller: &Caller,
    name: &str,
    r: &ResourceRequest,
    act: &str,
) -> Result<Found> {
    let app_key = s.app_key(name, r.app_namespace.as_deref())?;
    authorize_resource(s, caller, &app_key, r, act).await?;
    let (_, app) = s.app(&app_key).await?;
    if let Some(p) = r.project.as_deref().filter(|p| !p.is_empty()) {
        let own = if app.spec.project.is_empty() {
            "default"
        } else {
            app.spec.project.as_str()
        };
        if p != own {
            return Err(Error::PermissionDenied(
                crate::rbac::PERMISSION_DENIED.into(),
            ));
        }
    }
    if r.kind.is_empty() || r.resource_name.is_empty() {
        return Err(Error::InvalidArgument(
            "kind and resourceName are required".into(),
        ));
    }
    let version = tree_node_version(s, &app_key, &app, r).await?;
    let key = ResourceKey::new(&r.group, &r.kind, &r.namespace, &r.resource_name);
    let cluster = s.cluster_of(&app.spec.destination).await?;
    let project = project_of(s, &app).await?;
    let client = acting_client(s, &project, &app, &cluster).await?;
    let (kind, api) =
        plumb_app::actions::api_for(&cluster.discovery, &client, &key, version.as_deref())
            .await
            .map_err(|e| Error::InvalidArgument(e.to_string()))?;
    let obj = api.get(&key.name).await.map_err(|e| {
        crate::state::not_found_or(e, &format!("{key} not found"), || format!("reading {key}"))
    })?;
    let mut live = to_value(&obj)?;
    live["apiVersion"] = json!(kind.resource.api_version);
    live["kind"] = json!(kind.resource.kind);
    Ok(Found {
        app,
        app_key,
        key,
        kind,
        api,
        live,
        cluster,
        project,
        client,
    })
}

/// The version of the object `r` names as a node of the Application's resource tree (the
/// request's own `version` first); Argo's InvalidArgument for an object outside the tree.
async fn tree_node_version(
    s: &AppState,
    app_key: &str,
    app: &Application,
    r: &ResourceRequest,
) -> Result<Option<String>> {
    let tree = app_tree(s, app_key).await?;
    let field = |n: &Value, f: &str| {
        n.get(f)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let node = tree["nodes"].as_array().into_iter().flatten().find(|n| {
        field(n, "group") == r.group
            && field(n, "kind") == r.kind
            && field(n, "namespace") == r.namespace
            && field(n, "name") == r.resource_name
    });
    let Some(node) = node else {
        // Argo's message for an object outside the Application's tree.
        return Err(Error::InvalidArgument(format!(
            "{} {} {} not found as part of application {}",
            r.kind,
            r.group,
            r.resource_name,
            app.name()
        )));
    };
    Ok(Some(r.version.clone())
        .filter(|v| !v.is_empty())
        .or_else(|| {
            node.get("version")
                .and_then(Value::as_str)
                .map(str::to_string)
        }))
}

/// The client the server reads and writes the Application's objects with: its own, or the
/// project's ServiceAccount under argocd-cm's `application.sync.impersonation.enabled`
/// ([`plumb_app::impersonation::api_client`], Argo's `getApplicationClusterConfig`). A
/// refusal is Argo's error, as Argo's gateway answers it (Unknown).
async fn acting_client(
    s: &AppState,
    project: &ScopedProject,
    app: &Application,
    cluster: &plumb_app::Cluster,
) -> Result<kube::Client> {
    let settings = s.settings().await?;
    plumb_app::impersonation::api_client(&project.project, app, cluster, &settings)
        .map_err(|e| Error::Internal(format!("error getting application cluster config: {e}")))
}

fn manifest(obj: Value) -> Json<Value> {
    Json(json!({"manifest": mask_secret(obj).to_string()}))
}

/// `GET /api/v1/applications/{name}/resource`: Argo's `GetResource` (applications, get):
/// `{"manifest": "<the live object as JSON>"}`, a Secret's values masked.
pub(crate) async fn get(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(name): Path<String>,
    RawQuery(raw): RawQuery,
) -> Result<Json<Value>> {
    let r = ResourceRequest::from_query(&Query::parse(raw.as_deref()));
    let found = find(&s, &caller, &name, &r, "get").await?;
    Ok(manifest(found.live))
}

/// The patch types `PatchResource` takes (Kubernetes' content types; the short names too).
fn patch_of(patch_type: &str, text: &str) -> Result<Patch<Value>> {
    let value: Value = serde_json::from_str(text)
        .map_err(|e| Error::InvalidArgument(format!("patch: not JSON: {e}")))?;
    Ok(match patch_type {
        "" | "application/merge-patch+json" | "merge" => Patch::Merge(value),
        "application/strategic-merge-patch+json" | "strategic" => Patch::Strategic(value),
        "application/json-patch+json" | "json" => Patch::Json(
            serde_json::from_value::<json_patch::Patch>(value)
                .map_err(|e| Error::InvalidArgument(format!("patch: not a JSON patch: {e}")))?,
        ),
        other => {
            return Err(Error::InvalidArgument(format!(
                "patchType '{other}' is not supported: use application/merge-patch+json, application/json-patch+json or application/strategic-merge-patch+json"
            )));
        }
    })
}

/// `POST /api/v1/applications/{name}/resource`: Argo's `PatchResource` (applications, update).
/// The body is the patch (grpc-gateway's `body: "patch"`: a JSON string holding the patch; a
/// bare JSON object or list is taken as the patch too), `patchType` and the object's fields in
/// the query. Answers the patched object as `GetResource` does.
pub(crate) async fn patch(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(name): Path<String>,
    RawQuery(raw): RawQuery,
    body: Bytes,
) -> Result<Json<Value>> {
    let q = Query::parse(raw.as_deref());
    let r = ResourceRequest::from_query(&q);
    let body: Value = serde_json::from_slice(&body)
        .map_err(|e| Error::InvalidArgument(format!("reading the patch: {e}")))?;
    let text = match body {
        Value::String(t) => t,
        other => other.to_string(),
    };
    let patch = patch_of(q.get("patchType").unwrap_or_default(), &text)?;
    let found = find(&s, &caller, &name, &r, "update").await?;
    let patched = found
        .api
        .patch(&found.key.name, &PatchParams::default(), &patch)
        .await
        .map_err(|e| Error::kube(format!("patching {}", found.key), e))?;
    let mut live = to_value(&patched)?;
    live["apiVersion"] = json!(found.kind.resource.api_version);
    live["kind"] = json!(found.kind.resource.kind);
    tracing::info!(app = %found.app_key, resource = %found.key, by = %caller.subject, "resource patched");
    Ok(manifest(live))
}

/// `DELETE /api/v1/applications/{name}/resource`: Argo's `DeleteResource` (applications,
/// delete), `force` and `orphan` in the query.
pub(crate) async fn delete(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(name): Path<String>,
    RawQuery(raw): RawQuery,
) -> Result<Json<Value>> {
    let q = Query::parse(raw.as_deref());
    let r = ResourceRequest::from_query(&q);
    let force = q.bool("force", false).map_err(Error::InvalidArgument)?;
    let orphan = q.bool("orphan", false).map_err(Error::InvalidArgument)?;
    let found = find(&s, &caller, &name, &r, "delete").await?;
    found
        .api
        .delete(
            &found.key.name,
            &plumb_kube::resource_delete_params(force, orphan),
        )
        .await
        .map_err(|e| Error::kube(format!("deleting {}", found.key), e))?;
    tracing::info!(app = %found.app_key, resource = %found.key, by = %caller.subject, "resource deleted");
    Ok(Json(json!({})))
}

/// The actions engine of the current settings (argocd-cm's `resource.customizations.actions.*`,
/// then the `--customizations` directories, then Plumb's built-ins), with the controller's Lua
/// limits.
async fn engine(s: &AppState) -> Result<Actions> {
    let engines = s.engines().await?;
    Actions::from_settings(&engines.settings)
        .and_then(|a| a.with_directories(&s.customizations))
        .map_err(|e| Error::Internal(format!("reading the resource actions: {e}")))
}

/// `GET /api/v1/applications/{name}/resource/actions`: Argo's `ListResourceActions`
/// (applications, get): `{"actions": [{name, params, disabled, iconClass, displayName}]}`.
pub(crate) async fn list_actions(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(name): Path<String>,
    RawQuery(raw): RawQuery,
) -> Result<Json<Value>> {
    let r = ResourceRequest::from_query(&Query::parse(raw.as_deref()));
    let found = find(&s, &caller, &name, &r, "get").await?;
    let engine = engine(&s).await?;
    let live = found.live;
    let key = found.key.clone();
    // Lua runs on the blocking pool, never on a worker serving other requests.
    let actions = tokio::task::spawn_blocking(move || engine.discover(&live))
        .await
        .map_err(|e| Error::Internal(format!("listing the actions of {key}: {e}")))?
        .map_err(|e| {
            Error::InvalidArgument(format!("listing the actions of {}: {e}", found.key))
        })?;
    Ok(Json(json!({"actions": to_value(&actions)?})))
}

/// One of Argo 3.x's `resourceActionParameters`.
#[derive(Debug, Deserialize)]
pub(crate) struct ActionParameter {
    #[serde(default)]
    name: String,
    #[serde(default)]
    value: String,
}

/// Argo's `ResourceActionRunRequestV2` (the body of `.../resource/actions/v2`).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RunRequest {
    #[serde(flatten)]
    resource: ResourceRequest,
    #[serde(default)]
    action: String,
    #[serde(default)]
    resource_action_parameters: Vec<ActionParameter>,
}

/// `POST /api/v1/applications/{name}/resource/actions` (Argo's `RunResourceAction`, kept by
/// Argo 3 as deprecated): the body is the action's name as a JSON string, the object in the
/// query. A JSON object body is read as the v2 request.
pub(crate) async fn run_action_v1(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(name): Path<String>,
    RawQuery(raw): RawQuery,
    body: Bytes,
) -> Result<Json<Value>> {
    let body: Value = serde_json::from_slice(&body)
        .map_err(|e| Error::InvalidArgument(format!("reading the request: {e}")))?;
    let req = match body {
        Value::String(action) => RunRequest {
            resource: ResourceRequest::from_query(&Query::parse(raw.as_deref())),
            action,
            resource_action_parameters: Vec::new(),
        },
        other => serde_json::from_value(other)
            .map_err(|e| Error::InvalidArgument(format!("reading the request: {e}")))?,
    };
    run_action(&s, &caller, &name, req).await
}

/// `POST /api/v1/applications/{name}/resource/actions/v2`: Argo's `RunResourceActionV2`, the
/// whole `ResourceActionRunRequestV2` in the body (`resourceActionParameters`: `[{name, value}]`,
/// the script's `actionParams`).
pub(crate) async fn run_action_v2(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(name): Path<String>,
    Json(req): Json<RunRequest>,
) -> Result<Json<Value>> {
    run_action(&s, &caller, &name, req).await
}

/// Runs `req.action` on the object: RBAC `applications, action/<group>/<kind>/<action>` on the
/// Application (Argo's), the action offered and enabled, its result checked against the
/// project and written as `plumb app actions run` writes it.
async fn run_action(
    s: &AppState,
    caller: &Caller,
    name: &str,
    req: RunRequest,
) -> Result<Json<Value>> {
    if req.action.is_empty() {
        return Err(Error::InvalidArgument("action is required".into()));
    }
    let r = &req.resource;
    let act = format!("action/{}/{}/{}", r.group, r.kind, req.action);
    let found = find(s, caller, name, r, &act).await?;
    let params: BTreeMap<String, String> = req
        .resource_action_parameters
        .into_iter()
        .map(|p| (p.name, p.value))
        .collect();
    let engine = engine(s).await?;
    let live = found.live.clone();
    let action = req.action.clone();
    let impacted = tokio::task::spawn_blocking(move || engine.run(&live, &action, &params))
        .await
        .map_err(|e| Error::Internal(format!("running action '{}': {e}", req.action)))?
        .map_err(|e| {
            Error::InvalidArgument(format!(
                "running action '{}' on {}: {e}",
                req.action, found.key
            ))
        })?;
    let target = plumb_policy::project::Destination {
        server: &found.cluster.server,
        name: &found.cluster.name,
        namespace: found
            .app
            .spec
            .destination
            .namespace
            .as_deref()
            .unwrap_or_default(),
    };
    plumb_app::actions::write_action_result(
        &found.cluster.discovery,
        &found.client,
        &found.project.project,
        &target,
        &found.key,
        &found.live,
        &impacted,
    )
    .await
    .map_err(|e| match e {
        plumb_app::actions::ActionWriteError::Kube { context, source } => {
            Error::kube(format!("action '{}': {context}", req.action), source)
        }
        other => {
            Error::InvalidArgument(format!("action '{}' on {}: {other}", req.action, found.key))
        }
    })?;
    tracing::info!(app = %found.app_key, resource = %found.key, action = %req.action, by = %caller.subject, "resource action run");
    Ok(Json(json!({})))
}

/// `logs, get` on the Application, after `applications, get` (Argo's `PodLogs`).
pub(crate) async fn authorize_logs(s: &AppState, caller: &Caller, app: &Application) -> Result<()> {
    Authz::new(s, caller)
        .await?
        .check("logs", "get", &app_object(&to_value(app)?, &s.namespace))
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_as_argo_sends_them() {
        let q = Query::parse(Some(
            "namespace=shop&resourceName=web-1&version=v1&group=&kind=Pod&appNamespace=team&project=p",
        ));
        let r = ResourceRequest::from_query(&q);
        assert_eq!(
            (
                r.namespace.as_str(),
                r.resource_name.as_str(),
                r.kind.as_str(),
                r.group.as_str()
            ),
            ("shop", "web-1", "Pod", "")
        );
        assert_eq!(r.app_namespace.as_deref(), Some("team"));
        let v2: RunRequest = serde_json::from_value(json!({
            "name": "shop", "namespace": "shop", "resourceName": "web", "group": "apps",
            "kind": "Deployment", "version": "v1", "action": "scale",
            "resourceActionParameters": [{"name": "replicas", "value": "3"}]
        }))
        .unwrap();
        assert_eq!(v2.action, "scale");
        assert_eq!(v2.resource.resource_name, "web");
        assert_eq!(v2.resource_action_parameters[0].value, "3");
    }

    #[test]
    fn patch_types() {
        assert!(matches!(
            patch_of("application/merge-patch+json", r#"{"spec":{}}"#),
            Ok(Patch::Merge(_))
        ));
        assert!(matches!(patch_of("", "{}"), Ok(Patch::Merge(_))));
        assert!(matches!(
            patch_of(
                "application/json-patch+json",
                r#"[{"op":"replace","path":"/spec/replicas","value":2}]"#
            ),
            Ok(Patch::Json(_))
        ));
        assert!(patch_of("application/json-patch+json", "{}").is_err());
        assert!(patch_of("application/yaml", "{}").is_err());
        assert!(patch_of("", "spec: 1").is_err());
    }
}
