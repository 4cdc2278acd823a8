//! What an Application consists of: `resource-tree` (live objects with parent references and
//! health), `managed-resources` (live, target, normalized and predicted state per object) and
//! `manifests` (what Git renders to). Comparison and rendering are
//! `plumb_app::compare`, the function the controller and `plumb app diff` use.

use std::collections::BTreeSet;

use axum::Json;
use axum::extract::{Path, RawQuery, State};
use kube::api::{Api, DynamicObject, ListParams};
use plumb_app::ScopedProject;
use plumb_app::{CompareOptions, ComparedResource, Comparison, Refresh};
use plumb_model::ResourceKey;
use plumb_model::annotations::LAST_APPLIED;
use plumb_model::application::Application;
use serde_json::{Map, Value, json};

use crate::auth::middleware::Authenticated;
use crate::error::{Error, Result};
use crate::gateway::Query;
use crate::state::{AppState, to_value};

/// Compares the Application with its destination through plumb-app's comparison (the controller's own).
async fn compare_app(
    s: &AppState,
    app: &Application,
    revision: Option<String>,
) -> Result<Comparison> {
    compare_app_with(s, app, revision, None).await
}

/// [`compare_app`] with the desired objects taken from `local` (checked local manifests)
/// instead of rendered from the source: the controller's `compare_with`, as for a sync of
/// `operation.sync.manifests`.
async fn compare_app_with(
    s: &AppState,
    app: &Application,
    revision: Option<String>,
    local: Option<&[String]>,
) -> Result<Comparison> {
    let engines = s.engines().await?;
    // The controller's render settings (limits, plugins, kustomize.buildOptions), from the
    // same argocd-cm, set the way the controller sets them.
    plumb_app::render_settings::apply(&s.renderer, &engines.settings, &s.render_defaults);
    let cluster = s.cluster_of(&app.spec.destination).await?;
    let project = project_of(s, app).await?;
    let opts = CompareOptions {
        revision,
        fresh_reads: true,
        ..CompareOptions::for_project(&project.project, Refresh::Normal)
    };
    let mut cmp = plumb_app::compare_with(app, &engines, &cluster, &s.renderer, &opts, local)
        .await
        .map_err(|e| {
            Error::Compare(format!(
                "comparing Application {}: {}",
                app.name(),
                plumb_app::chain(&e)
            ))
        })?;
    for r in &mut cmp.resources {
        if !permitted(s, &project, app, &cluster, &r.key) {
            r.live = None;
            r.diff = None;
        }
    }
    Ok(cmp)
}

/// Whether the project permits the object (kind and destination), as the controller judges it.
/// One it forbids is still listed (the controller reports it), but its live state is never read
/// out: Git that names an object in a namespace or of a kind the project does not grant must not
/// turn `applications, get` into a read of it.
fn permitted(
    s: &AppState,
    project: &ScopedProject,
    app: &Application,
    cluster: &plumb_app::Cluster,
    key: &ResourceKey,
) -> bool {
    app_permitted(s, project, app, cluster)
        && plumb_app::object_refusal(&project.project, app, cluster, key).is_ok()
}

/// Whether the project permits the Application itself (sources, destination,
/// `permitOnlyProjectScopedClusters`): the controller neither compares nor syncs one it
/// refuses, so none of its objects are read out either.
fn app_permitted(
    s: &AppState,
    project: &ScopedProject,
    app: &Application,
    cluster: &plumb_app::Cluster,
) -> bool {
    plumb_app::guard::application_violations(
        &project.project,
        app,
        &s.namespace,
        cluster,
        &project.scope,
    )
    .is_empty()
}

/// The Application's AppProject as the controller evaluates it (Argo's `GetAppProjectByName`:
/// the repositories and clusters scoped to it added, [`plumb_app::project_scope`]): its
/// sourceRepos bound the Kustomize remote bases a render may fetch, its destinations what may be
/// read. A project that cannot be read refuses the request.
pub(crate) async fn project_of(s: &AppState, app: &Application) -> Result<ScopedProject> {
    let name = plumb_app::project_scope::project_name(app);
    s.scoped_project(name).await?.ok_or_else(|| {
        Error::FailedPrecondition(format!(
            "Application {} references AppProject {name}, which does not exist in namespace {}",
            app.name(),
            s.namespace
        ))
    })
}

/// The mask Argo shows for a Secret value.
const MASK: &str = "++++++++";

/// A core Secret with every value of `data`/`stringData` and its last-applied copy masked;
/// other objects unchanged.
pub(crate) fn mask_secret(mut obj: Value) -> Value {
    let is_secret = obj.get("kind").and_then(Value::as_str) == Some("Secret")
        && obj.get("apiVersion").and_then(Value::as_str) == Some("v1");
    if !is_secret {
        return obj;
    }
    for field in ["data", "stringData"] {
        if let Some(map) = obj.get_mut(field).and_then(Value::as_object_mut) {
            for v in map.values_mut() {
                *v = json!(MASK);
            }
        }
    }
    if let Some(ann) = obj
        .pointer_mut("/metadata/annotations")
        .and_then(Value::as_object_mut)
        && ann.contains_key(LAST_APPLIED)
    {
        ann.insert(LAST_APPLIED.into(), json!(MASK));
    }
    obj
}

/// A state as Argo's `ResourceDiff` carries it: JSON text, `null` when absent.
fn state_text(v: Option<&Value>) -> String {
    v.map_or_else(|| "null".to_string(), Value::to_string)
}

/// One `ResourceDiff`.
fn resource_diff(r: &ComparedResource) -> Value {
    let masked = r.diff.as_ref().map(plumb_diff::mask);
    let mut d = Map::new();
    d.insert("group".into(), json!(r.key.group));
    d.insert("kind".into(), json!(r.key.kind));
    d.insert("namespace".into(), json!(r.key.namespace));
    d.insert("name".into(), json!(r.key.name));
    d.insert(
        "targetState".into(),
        json!(state_text(r.desired.clone().map(mask_secret).as_ref())),
    );
    d.insert(
        "liveState".into(),
        json!(state_text(r.live.clone().map(mask_secret).as_ref())),
    );
    if let Some(m) = &masked {
        d.insert("normalizedLiveState".into(), json!(state_text(m.live())));
        d.insert(
            "predictedLiveState".into(),
            json!(state_text(m.predicted())),
        );
        if m.modified() {
            d.insert("modified".into(), json!(true));
        }
        // What `plumb app diff` shows: a modified object, and a live one Git no longer declares.
        if m.modified() || m.action() == plumb_diff::Action::Extra {
            d.insert(
                "diff".into(),
                json!(plumb_diff::render_json(std::slice::from_ref(m))),
            );
        }
    }
    if r.hook {
        d.insert("hook".into(), json!(true));
    }
    if let Some(rv) = r
        .live
        .as_ref()
        .and_then(|l| l.pointer("/metadata/resourceVersion"))
    {
        d.insert("resourceVersion".into(), rv.clone());
    }
    Value::Object(d)
}

/// `GET /api/v1/applications/{name}/managed-resources`: `{"items": [ResourceDiff...]}`;
/// `revision=` compares another revision of the source (Plumb's addition, what `plumb app diff
/// --revision` asks for: Argo's CLI gets that revision's manifests and diffs them itself).
pub(crate) async fn managed(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(name): Path<String>,
    RawQuery(raw): RawQuery,
) -> Result<Json<Value>> {
    let q = Query::parse(raw.as_deref());
    let name = s.app_key(&name, q.get("appNamespace"))?;
    s.authorize_app(&caller, &name, "get").await?;
    let (_, app) = s.app(&name).await?;
    let revision = q
        .get("revision")
        .filter(|r| !r.is_empty())
        .map(str::to_string);
    let cmp = compare_app(&s, &app, revision).await?;
    let items: Vec<Value> = cmp.resources.iter().map(resource_diff).collect();
    Ok(Json(json!({"items": items})))
}

/// The body of `POST .../managed-resources`: the local manifests to compare instead of the
/// source (`plumb app diff --local` through the server).
#[derive(Debug, Default, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct LocalDiffBody {
    #[serde(default)]
    manifests: Vec<String>,
    #[serde(default)]
    app_namespace: Option<String>,
}

/// `POST /api/v1/applications/{name}/managed-resources` with `{"manifests": [...]}`: the
/// answer of the GET, with the desired objects taken from the manifests (what `plumb app diff
/// --local` rendered on the user's machine) instead of the source; Plumb's addition (Argo's
/// CLI diffs local manifests itself, without the server-side dry run; a list too long for a
/// query string travels in the body). The caller needs `get`, as for Argo's `ServerSideDiff`
/// (nothing is written), and every object passes the project's rules first
/// ([`crate::local_manifests`]), so the comparison never reads a namespace the project forbids.
pub(crate) async fn managed_local(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(name): Path<String>,
    bytes: axum::body::Bytes,
) -> Result<Json<Value>> {
    let body: LocalDiffBody = serde_json::from_slice(&bytes)
        .map_err(|e| Error::InvalidArgument(format!("reading the local manifests: {e}")))?;
    let name = s.app_key(&name, body.app_namespace.as_deref())?;
    s.authorize_app(&caller, &name, "get").await?;
    let (_, app) = s.app(&name).await?;
    let project = project_of(&s, &app).await?;
    let keys = crate::local_manifests::check(&s, &app, &project.project, &body.manifests).await?;
    crate::local_manifests::check_own_resources(&s, &caller, &name, &app, &keys).await?;
    let cmp = compare_app_with(&s, &app, None, Some(&body.manifests)).await?;
    let items: Vec<Value> = cmp.resources.iter().map(resource_diff).collect();
    Ok(Json(json!({"items": items})))
}

/// `GET /api/v1/applications/{name}/manifests?revision=`: Argo's `ManifestResponse`, each
/// manifest a JSON text, Secrets masked.
pub(crate) async fn manifests(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(name): Path<String>,
    RawQuery(raw): RawQuery,
) -> Result<Json<Value>> {
    let q = Query::parse(raw.as_deref());
    let name = s.app_key(&name, q.get("appNamespace"))?;
    s.authorize_app(&caller, &name, "get").await?;
    let (_, app) = s.app(&name).await?;
    let cmp = compare_app(&s, &app, q.get("revision").map(str::to_string)).await?;
    let manifests: Vec<String> = cmp
        .resources
        .iter()
        .filter_map(|r| r.desired.clone())
        .map(|d| mask_secret(d).to_string())
        .collect();
    Ok(Json(json!({
        "manifests": manifests,
        "namespace": app.spec.destination.namespace.clone().unwrap_or_default(),
        "server": app.spec.destination.server.clone().unwrap_or_default(),
        "revision": cmp.revision,
        "sourceType": cmp.source_types.first().cloned().unwrap_or_default(),
    })))
}

/// `GET /api/v1/applications/{name}/resource-tree`: Argo's `ApplicationTree` (`nodes`), read
/// from the API server: the managed objects of `status.resources` and their descendants among
/// the ReplicaSets, Pods, Jobs, ControllerRevisions and EndpointSlices of their namespaces.
pub(crate) async fn tree(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(name): Path<String>,
    RawQuery(raw): RawQuery,
) -> Result<Json<Value>> {
    let q = Query::parse(raw.as_deref());
    let name = s.app_key(&name, q.get("appNamespace"))?;
    s.authorize_app(&caller, &name, "get").await?;
    Ok(Json(app_tree(&s, &name).await?))
}

/// The `ApplicationTree` of Application `name` (the caller is authorized already); the
/// resource-tree route and its stream both answer with it.
pub(crate) async fn app_tree(s: &AppState, name: &str) -> Result<Value> {
    let (_, app) = s.app(name).await?;
    // A destination no cluster Secret describes has no tree to show.
    let cluster = match s.cluster_of(&app.spec.destination).await {
        Ok(c) => c,
        Err(Error::FailedPrecondition(_)) => return Ok(json!({"nodes": []})),
        Err(e) => return Err(e),
    };
    // Without its project nothing of the Application is permitted (the controller refuses it).
    let project = match project_of(s, &app).await {
        Ok(p) => p,
        Err(Error::FailedPrecondition(_)) => return Ok(json!({"nodes": []})),
        Err(e) => return Err(e),
    };
    let engines = s.engines().await?;
    let resources = app
        .status
        .as_ref()
        .and_then(|st| st.resources.clone())
        .unwrap_or_default();
    let mut managed = Vec::new();
    let mut namespaces = BTreeSet::new();
    for r in &resources {
        let key = ResourceKey::new(
            r.group.as_deref().unwrap_or_default(),
            r.kind.as_deref().unwrap_or_default(),
            r.namespace.as_deref().unwrap_or_default(),
            r.name.as_deref().unwrap_or_default(),
        );
        // Neither shown nor a parent of what is shown: the project does not grant it.
        if !permitted(s, &project, &app, &cluster, &key) {
            continue;
        }
        match cluster.applier.get(&key).await {
            Ok(Some(obj)) => managed.push(obj),
            Ok(None) => {}
            // A kind the API server no longer serves has no live object to show.
            Err(e) => tracing::debug!("reading {key} for the tree of {name}: {e}"),
        }
        if !key.namespace.is_empty() {
            namespaces.insert(key.namespace.clone());
        }
    }
    let mut candidates = Vec::new();
    for ns in &namespaces {
        for ar in &crate::tree::child_kinds() {
            let api: Api<DynamicObject> = Api::namespaced_with(cluster.client().clone(), ns, ar);
            let list = api
                .list(&ListParams::default())
                .await
                .map_err(|e| Error::kube(format!("listing {} in namespace {ns}", ar.plural), e))?;
            for mut obj in list.items {
                obj.types = Some(kube::api::TypeMeta {
                    api_version: ar.api_version.clone(),
                    kind: ar.kind.clone(),
                });
                candidates.push(to_value(&obj)?);
            }
        }
    }
    // Health (user Lua scripts among the rules) is CPU work: on the blocking pool, never on a
    // runtime worker that serves other requests (the route and its stream).
    let assessor = engines.assessor.clone();
    tokio::task::spawn_blocking(move || crate::tree::build(&managed, &candidates, &assessor))
        .await
        .map_err(|e| Error::Internal(format!("building the resource tree of {name}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_masked_and_other_kinds_untouched() {
        let secret = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db",
            "annotations": {LAST_APPLIED: "{\"data\":{\"password\":\"aHVudGVyMg==\"}}"}},
            "data": {"password": "aHVudGVyMg=="}, "stringData": {"user": "app"}});
        let masked = mask_secret(secret);
        assert_eq!(masked["data"]["password"], MASK);
        assert_eq!(masked["stringData"]["user"], MASK);
        assert_eq!(masked["metadata"]["annotations"][LAST_APPLIED], MASK);
        assert!(!masked.to_string().contains("aHVudGVyMg"));
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "b"}});
        assert_eq!(mask_secret(cm.clone()), cm);
    }
}
