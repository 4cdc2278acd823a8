//! `/api/v1/applications[/{name}]`: list, get (with `refresh`), create (with `upsert`), update,
//! delete (with `cascade` and `propagationPolicy`), as Argo's `ApplicationService`. An
//! Application outside the control namespace is named by Argo's `appNamespace` (a query
//! parameter; `metadata.namespace` in the body of a create or update).

use std::time::Duration;

use axum::Json;
use axum::extract::{Path, RawQuery, State};
use futures::StreamExt;
use kube::ResourceExt;
use kube::api::{Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use plumb_app::application_resource;
use plumb_model::annotations::REFRESH;
use plumb_model::application::Application;
use serde_json::{Value, json};

use crate::app_cache::Cached;
use crate::auth::CallerKind;
use crate::auth::middleware::Authenticated;
use crate::error::{Error, Result};
use crate::fields::Fields;
use crate::gateway::{self, Query};
use crate::rbac::{Authz, PERMISSION_DENIED, app_object};
use crate::state::{AppState, check_name, to_application, to_value};

/// How long `GET ...?refresh=` waits for the controller to take the refresh request.
const REFRESH_WAIT: Duration = Duration::from_secs(45);

/// `GET /api/v1/applications`: `name`, `projects` (repeated; `project` too), `selector`,
/// `appNamespace`, `fields`. Applications of the control namespace and of every namespace
/// `--application-namespaces` permits (a cluster-wide list then, filtered).
pub(crate) async fn list(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    RawQuery(raw): RawQuery,
) -> Result<Json<Value>> {
    let mut authz = Authz::new(&s, &caller).await?;
    let q = Query::parse(raw.as_deref());
    let only_ns = q.get("appNamespace").filter(|ns| !ns.is_empty());
    if let Some(ns) = only_ns {
        s.app_key("x", Some(ns))?;
    }
    // From the server's cache (crate::app_cache); a label selector is left to the API server,
    // which evaluates Kubernetes' selector syntax exactly, and so is every list while the
    // cache's watch is interrupted (it may have missed changes).
    let (resource_version, listed) = match q.get("selector") {
        Some(sel) => list_from_api(&s, only_ns, sel).await?,
        None if s.app_cache.is_interrupted() => list_from_api(&s, only_ns, "").await?,
        None => s.app_cache.list().await?,
    };
    let name = q.get("name");
    let mut projects = q.all("projects");
    projects.extend(q.all("project"));
    let mut items = Vec::new();
    for value in listed {
        let ns = namespace_of(&value);
        if !s.namespace_enabled(ns) || only_ns.is_some_and(|only| only != ns) {
            continue;
        }
        if name.is_some_and(|n| name_of(&value) != n) {
            continue;
        }
        let project = value
            .pointer("/spec/project")
            .and_then(Value::as_str)
            .unwrap_or("default");
        if !projects.is_empty() && !projects.iter().any(|p| p == project) {
            continue;
        }
        // As Argo: the list holds only what the caller may get.
        if !authz
            .allows("applications", "get", &app_object(&value, &s.namespace))
            .await?
        {
            continue;
        }
        items.push(value);
    }
    items.sort_by(|a, b| {
        (namespace_of(a) != s.namespace, namespace_of(a), name_of(a)).cmp(&(
            namespace_of(b) != s.namespace,
            namespace_of(b),
            name_of(b),
        ))
    });
    let items: Vec<&Value> = items.iter().map(|v| v.as_ref()).collect();
    // Argo's `fields`: the answer cut down to the paths asked for (the web UI's tiles).
    Ok(Json(match Fields::from_query(&q) {
        Some(fields) => fields.apply_list(resource_version, &items),
        None => gateway::list(resource_version, items.into_iter().cloned().collect()),
    }))
}

/// The Applications matching the label selector `sel`, listed by the API server.
async fn list_from_api(
    s: &AppState,
    only_ns: Option<&str>,
    sel: &str,
) -> Result<(Option<String>, Vec<Cached>)> {
    let api = match only_ns {
        Some(ns) => Api::namespaced_with(s.client.clone(), ns, &application_resource()),
        None if s.app_namespaces.is_empty() => s.apps(),
        None => Api::all_with(s.client.clone(), &application_resource()),
    };
    let list = api
        .list(&ListParams::default().labels(sel))
        .await
        .map_err(|e| {
            Error::kube(
                format!(
                    "listing Applications in namespace {}",
                    only_ns.unwrap_or(&s.namespace)
                ),
                e,
            )
        })?;
    let items = list
        .items
        .iter()
        .map(|obj| Ok(std::sync::Arc::new(with_type(to_value(obj)?))))
        .collect::<Result<_>>()?;
    Ok((list.metadata.resource_version, items))
}

/// The Application of `key` from the server's cache, or from the API server when the cache
/// does not hold it (yet): one created a moment ago by someone else is found all the same.
async fn read_app(s: &AppState, key: &str) -> Result<Option<Cached>> {
    let (api, ns, name) = s.apps_for(key)?;
    if !s.app_cache.is_interrupted()
        && let Some(v) = s.app_cache.get(ns, name).await?
    {
        return Ok(Some(v));
    }
    let live = api
        .get_opt(name)
        .await
        .map_err(|e| Error::kube(format!("reading Application {ns}/{name}"), e))?;
    live.map(|obj| Ok(std::sync::Arc::new(with_type(to_value(&obj)?))))
        .transpose()
}

fn namespace_of(v: &Value) -> &str {
    v.pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn name_of(v: &Value) -> &str {
    v.pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// The object with its type, which list items from some API servers lack.
fn with_type(mut v: Value) -> Value {
    if let Some(map) = v.as_object_mut() {
        map.entry("apiVersion")
            .or_insert_with(|| json!(plumb_model::application::API_VERSION));
        map.entry("kind")
            .or_insert_with(|| json!(Application::KIND));
    }
    v
}

/// `GET /api/v1/applications/{name}`; `refresh=normal|hard` asks the controller to compare
/// again and waits until it took the request (Argo's `Get` with `refresh`).
pub(crate) async fn get(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(name): Path<String>,
    RawQuery(raw): RawQuery,
) -> Result<Json<Value>> {
    let q = Query::parse(raw.as_deref());
    let name = s.app_key(&name, q.get("appNamespace"))?;
    if let Some(kind) = q.get("refresh") {
        s.authorize_app(&caller, &name, "get").await?;
        if kind != "normal" && kind != "hard" {
            return Err(Error::InvalidArgument(format!(
                "refresh: expected normal or hard, got {kind:?}"
            )));
        }
        s.app_object(&name).await?;
        let patch = json!({"metadata": {"annotations": {REFRESH: kind}}});
        let (api, ns, n) = s.apps_for(&name)?;
        api.patch(n, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .map_err(|e| Error::kube(format!("requesting a refresh of Application {ns}/{n}"), e))?;
        let refreshed = wait_refreshed(&s, &name).await?;
        s.app_cache.written(&refreshed).await;
        return Ok(Json(with_type(to_value(&refreshed)?)));
    }
    let found = read_app(&s, &name).await?;
    // As Argo CD (and `authorize_app`): an Application that does not exist is "permission
    // denied" to a caller whose rights are checked, so names cannot be probed.
    if caller.kind != CallerKind::Unrestricted {
        let Some(value) = &found else {
            return Err(Error::PermissionDenied(PERMISSION_DENIED.into()));
        };
        Authz::new(&s, &caller)
            .await?
            .check_app("get", &app_object(value, &s.namespace))
            .await?;
    }
    match found {
        Some(value) => Ok(Json(Value::clone(&value))),
        None => {
            let (_, _, n) = s.apps_for(&name)?;
            Err(Error::NotFound(format!(
                "applications.argoproj.io \"{n}\" not found"
            )))
        }
    }
}

/// Waits until the controller removed the refresh annotation (or the wait ends), returning the
/// Application as it then is.
async fn wait_refreshed(s: &AppState, name: &str) -> Result<DynamicObject> {
    let (api, _, n) = s.apps_for(name)?;
    let mut events = kube::runtime::watcher::watch_object(api, n).boxed();
    let taken = tokio::time::timeout(REFRESH_WAIT, async {
        while let Some(event) = events.next().await {
            match event {
                Ok(Some(obj)) if !obj.annotations().contains_key(REFRESH) => return Some(obj),
                Ok(None) => return None,
                Ok(Some(_)) => {}
                Err(e) => tracing::debug!("watching Application {name}: {e}"),
            }
        }
        None
    })
    .await;
    match taken {
        Ok(Some(obj)) => Ok(obj),
        // Deleted meanwhile, or the controller did not answer in time: the object as it is.
        Ok(None) | Err(_) => s.app_object(name).await,
    }
}

/// `POST /api/v1/applications?upsert=&validate=`: creates the Application; an existing one with
/// the same spec is returned as is, a different one is refused unless `upsert` (then its spec,
/// labels, annotations and finalizers are replaced). Its repositories must answer unless
/// `validate=false` (Argo's `ValidateRepo`).
pub(crate) async fn create(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    RawQuery(raw): RawQuery,
    Json(body): Json<Value>,
) -> Result<Json<Value>> {
    let q = Query::parse(raw.as_deref());
    let upsert = q.bool("upsert", false).map_err(Error::InvalidArgument)?;
    let validate = q.bool("validate", true).map_err(Error::InvalidArgument)?;
    // Argo's gateway fills apiVersion and kind; a body without them is an Application too.
    let mut app: Application = serde_json::from_value(with_type(body))
        .map_err(|e| Error::InvalidArgument(format!("reading the Application: {e}")))?;
    // Its namespace: `metadata.namespace`, else the control namespace; one the server does not
    // serve is refused, and so is a project whose `sourceNamespaces` does not list it.
    let name = s.app_key(app.name(), app.metadata.namespace.as_deref())?;
    let (api, ns, n) = s.apps_for(&name)?;
    app.metadata.namespace = Some(ns.to_string());
    check_project_exists(&s, &app).await?;
    check_destination_and_sources(&app)?;
    check_source_namespace(&s, &app).await?;
    let mut authz = Authz::new(&s, &caller).await?;
    authz
        .check(
            "applications",
            "create",
            &app_object(&to_value(&app)?, &s.namespace),
        )
        .await?;
    // The sources' repositories must answer, then the project's rules; both once the caller
    // may create it (Argo checks RBAC first, then `ValidateRepo`, then the permissions).
    if validate {
        crate::repo_validation::check(&s, &app).await?;
    }
    crate::project_rules::check(&s, &app).await?;
    app.status = None;
    app.operation = None;
    match api
        .get_opt(n)
        .await
        .map_err(|e| Error::kube(format!("reading Application {ns}/{n}"), e))?
    {
        None => {
            let obj: DynamicObject = serde_json::from_value(to_value(&app)?)
                .map_err(|e| Error::Internal(format!("encoding Application {n}: {e}")))?;
            let created = api
                .create(&PostParams::default(), &obj)
                .await
                .map_err(|e| Error::kube(format!("creating Application {ns}/{n}"), e))?;
            s.app_cache.written(&created).await;
            Ok(Json(with_type(to_value(&created)?)))
        }
        Some(existing_obj) => {
            let existing = to_application(&existing_obj)?;
            let same = existing.spec == app.spec
                && (app.metadata.labels.is_none()
                    || existing.metadata.labels == app.metadata.labels);
            if same {
                return Ok(Json(with_type(to_value(&existing_obj)?)));
            }
            if !upsert {
                return Err(Error::InvalidArgument(
                    "existing application spec is different, use upsert flag to force update"
                        .into(),
                ));
            }
            // Upsert replaces the existing one: the caller must be allowed to update it.
            authz
                .check_app(
                    "update",
                    &app_object(&to_value(&existing_obj)?, &s.namespace),
                )
                .await?;
            Ok(Json(with_type(to_value(
                &replace_spec(&s, &name, &app).await?,
            )?)))
        }
    }
}

/// `PUT /api/v1/applications/{name}`: replaces spec, labels, annotations and finalizers (Argo's
/// `Update`), guarded by resourceVersion and retried when the controller wrote in between.
pub(crate) async fn update(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(name): Path<String>,
    Json(body): Json<Value>,
) -> Result<Json<Value>> {
    let mut app: Application = serde_json::from_value(with_type(body))
        .map_err(|e| Error::InvalidArgument(format!("reading the Application: {e}")))?;
    // The namespace is the body's (`metadata.namespace`), as Argo reads `appNamespace` from the
    // payload of a PUT.
    let key = s.app_key(&name, app.metadata.namespace.as_deref())?;
    s.authorize_app(&caller, &key, "update").await?;
    let (_, ns, _) = s.apps_for(&key)?;
    app.metadata.namespace = Some(ns.to_string());
    check_project_exists(&s, &app).await?;
    check_destination_and_sources(&app)?;
    check_source_namespace(&s, &app).await?;
    // Moving it to another project needs update rights there too (as Argo).
    Authz::new(&s, &caller)
        .await?
        .check(
            "applications",
            "update",
            &app_object(&to_value(&app)?, &s.namespace),
        )
        .await?;
    crate::project_rules::check(&s, &app).await?;
    if app.name() != name {
        return Err(Error::InvalidArgument(format!(
            "metadata.name {:?} does not match the path's {name:?}",
            app.name()
        )));
    }
    let name = key;
    Ok(Json(with_type(to_value(
        &replace_spec(&s, &name, &app).await?,
    )?)))
}

/// The project an Application names must exist (Argo's `validateAndNormalizeApp`, with its
/// error text); an empty project is refused as Argo's validation refuses it.
async fn check_project_exists(s: &AppState, app: &Application) -> Result<()> {
    let project = app.spec.project.as_str();
    if project.is_empty() {
        return Err(Error::InvalidArgument("spec.project is required".into()));
    }
    check_name("AppProject", project)?;
    let exists = s
        .projects()
        .get_opt(project)
        .await
        .map_err(|e| Error::kube(format!("reading AppProject {}/{project}", s.namespace), e))?;
    if exists.is_none() {
        return Err(Error::InvalidArgument(format!(
            "application references project {project} which does not exist"
        )));
    }
    Ok(())
}

/// The rest of what Argo's `validateAndNormalizeApp` refuses before writing, each message
/// naming its field (the web UI shows it next to that field): a destination with neither or
/// both of server and name, a source without a repository.
fn check_destination_and_sources(app: &Application) -> Result<()> {
    let dest = &app.spec.destination;
    let set = |v: &Option<String>| v.as_deref().is_some_and(|x| !x.is_empty());
    match (set(&dest.server), set(&dest.name)) {
        (true, true) => {
            return Err(Error::InvalidArgument(
                "application destination can't have both name and server defined".into(),
            ));
        }
        (false, false) => {
            return Err(Error::InvalidArgument(
                "spec.destination: a server or name is required".into(),
            ));
        }
        _ => {}
    }
    let multi = app.spec.sources.as_ref().is_some_and(|v| !v.is_empty());
    let sources = app.sources();
    if sources.is_empty() {
        return Err(Error::InvalidArgument(
            "spec.source: an application needs a source (or spec.sources)".into(),
        ));
    }
    if let Some(i) = sources
        .iter()
        .position(|src| src.repo_url.trim().is_empty())
    {
        return Err(Error::InvalidArgument(if multi {
            format!("spec.sources[{i}].repoURL is required")
        } else {
            "spec.source.repoURL is required".to_string()
        }));
    }
    Ok(())
}

/// An Application outside the control namespace may only use a project whose
/// `sourceNamespaces` lists its namespace (Argo's API enforces it whatever the RBAC says). A
/// project that does not exist is left to the controller's condition, as before.
async fn check_source_namespace(s: &AppState, app: &Application) -> Result<()> {
    let ns = app.namespace();
    if ns.is_empty() || ns == s.namespace {
        return Ok(());
    }
    let project = if app.spec.project.is_empty() {
        "default"
    } else {
        app.spec.project.as_str()
    };
    let Some(obj) = s
        .projects()
        .get_opt(project)
        .await
        .map_err(|e| Error::kube(format!("reading AppProject {}/{project}", s.namespace), e))?
    else {
        return Ok(());
    };
    let proj: plumb_model::application::AppProject = serde_json::from_value(to_value(&obj)?)
        .map_err(|e| Error::Internal(format!("reading AppProject {project}: {e}")))?;
    if plumb_policy::project::app_namespace_permitted(&proj, ns, &s.namespace) {
        return Ok(());
    }
    Err(Error::PermissionDenied(format!(
        "application '{}' in namespace '{ns}' is not allowed to use project {project}",
        app.name()
    )))
}

async fn replace_spec(s: &AppState, name: &str, app: &Application) -> Result<DynamicObject> {
    for _ in 0..10 {
        let current = s.app_object(name).await?;
        let mut value = to_value(&current)?;
        value["spec"] = to_value(&app.spec)?;
        let meta = &app.metadata;
        for (field, v) in [
            ("labels", to_value(&meta.labels)?),
            ("annotations", to_value(&meta.annotations)?),
            ("finalizers", to_value(&meta.finalizers)?),
        ] {
            match v {
                Value::Null => {
                    if let Some(m) = value["metadata"].as_object_mut() {
                        m.remove(field);
                    }
                }
                v => value["metadata"][field] = v,
            }
        }
        let obj: DynamicObject = serde_json::from_value(value)
            .map_err(|e| Error::Internal(format!("encoding Application {name}: {e}")))?;
        let (api, _, n) = s.apps_for(name)?;
        match api.replace(n, &PostParams::default(), &obj).await {
            Ok(updated) => {
                s.app_cache.written(&updated).await;
                return Ok(updated);
            }
            Err(kube::Error::Api(st)) if st.code == 409 => {
                tracing::debug!("Application {name} changed while updating; retrying");
            }
            Err(e) => {
                return Err(Error::kube(format!("updating Application {name}"), e));
            }
        }
    }
    Err(Error::FailedPrecondition(format!(
        "could not update application '{name}': it keeps changing"
    )))
}

/// `DELETE /api/v1/applications/{name}?cascade=&propagationPolicy=`: the finalizers decide
/// what happens to the resources (`plumb_app::request::delete_finalizers`, as `plumb app
/// delete`).
pub(crate) async fn delete(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(name): Path<String>,
    RawQuery(raw): RawQuery,
) -> Result<Json<Value>> {
    let q = Query::parse(raw.as_deref());
    let name = s.app_key(&name, q.get("appNamespace"))?;
    s.authorize_app(&caller, &name, "delete").await?;
    let cascade = q.bool("cascade", true).map_err(Error::InvalidArgument)?;
    let background = match q
        .get("propagationPolicy")
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        None | Some("foreground") => false,
        Some("background") => true,
        Some(other) => {
            return Err(Error::InvalidArgument(format!(
                "propagationPolicy: expected foreground or background, got {other:?}"
            )));
        }
    };
    let (_, app) = s.app(&name).await?;
    let current = app.metadata.finalizers.clone().unwrap_or_default();
    let wanted = plumb_app::request::delete_finalizers(&current, cascade, background);
    let (api, ns, n) = s.apps_for(&name)?;
    if wanted != current {
        api.patch(
            n,
            &PatchParams::default(),
            &Patch::Merge(&json!({"metadata": {"finalizers": wanted}})),
        )
        .await
        .map_err(|e| Error::kube(format!("setting the finalizers of Application {ns}/{n}"), e))?;
    }
    let deleted = api
        .delete(n, &DeleteParams::default())
        .await
        .map_err(|e| Error::kube(format!("deleting Application {ns}/{n}"), e))?;
    // Gone, or still there with its deletion under way (finalizers): either way a read after
    // this answer sees it.
    match deleted.left() {
        Some(terminating) => s.app_cache.written(&terminating).await,
        None => s.app_cache.deleted(ns, n).await,
    }
    Ok(Json(json!({})))
}

/// Argo's `ApplicationPatchRequest`: `patch` is the patch as JSON text.
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PatchRequest {
    #[serde(default)]
    patch: String,
    #[serde(default)]
    patch_type: String,
    /// Argo's `appNamespace`: the Application's namespace when it is not the control one.
    #[serde(default)]
    app_namespace: Option<String>,
}

/// `PATCH /api/v1/applications/{name}` with an `ApplicationPatchRequest` (`patchType`
/// `json`, Argo's default, or `merge`): the patch applies to the Application as stored, and the
/// result is written as `PUT` writes (spec, labels, annotations, finalizers; `update` on the
/// Application and, when the patch moves it, on its new project). A `metadata.resourceVersion`
/// in a merge patch guards the write: another one is a conflict (409, gRPC Aborted), so a
/// client can re-read and decide again.
pub(crate) async fn patch(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(name): Path<String>,
    Json(body): Json<PatchRequest>,
) -> Result<Json<Value>> {
    let key = s.app_key(&name, body.app_namespace.as_deref())?;
    s.authorize_app(&caller, &key, "update").await?;
    let current = s.app_object(&key).await?;
    let doc = patched(&name, &current, &body)?;
    let app: Application = serde_json::from_value(doc).map_err(|e| {
        Error::InvalidArgument(format!("the patched Application is not valid: {e}"))
    })?;
    if app.name() != name {
        return Err(Error::InvalidArgument(
            "the patch may not change metadata.name".into(),
        ));
    }
    if app.namespace() != current.metadata.namespace.as_deref().unwrap_or_default() {
        return Err(Error::InvalidArgument(
            "the patch may not change metadata.namespace".into(),
        ));
    }
    check_source_namespace(&s, &app).await?;
    check_patched_project(&s, &app).await?;
    Authz::new(&s, &caller)
        .await?
        .check(
            "applications",
            "update",
            &app_object(&to_value(&app)?, &s.namespace),
        )
        .await?;
    crate::project_rules::check(&s, &app).await?;
    Ok(Json(with_type(to_value(
        &replace_spec(&s, &key, &app).await?,
    )?)))
}

/// The Application `current` (named `name`) as the request's patch leaves it.
fn patched(name: &str, current: &DynamicObject, body: &PatchRequest) -> Result<Value> {
    let mut doc = with_type(to_value(current)?);
    let patch: Value = serde_json::from_str(&body.patch)
        .map_err(|e| Error::InvalidArgument(format!("patch: not JSON: {e}")))?;
    match body.patch_type.as_str() {
        "json" | "" => {
            let ops: json_patch::Patch = serde_json::from_value(patch)
                .map_err(|e| Error::InvalidArgument(format!("patch: not a JSON patch: {e}")))?;
            json_patch::patch(&mut doc, &ops)
                .map_err(|e| Error::InvalidArgument(format!("patch: {e}")))?;
        }
        "merge" => {
            if let Some(rv) = patch
                .pointer("/metadata/resourceVersion")
                .and_then(Value::as_str)
                && Some(rv) != current.metadata.resource_version.as_deref()
            {
                return Err(Error::Conflict(format!(
                    "application '{name}' changed since resourceVersion {rv}; read it again"
                )));
            }
            json_patch::merge(&mut doc, &patch);
        }
        other => {
            return Err(Error::InvalidArgument(format!(
                "Patch type '{other}' is not supported"
            )));
        }
    }
    Ok(doc)
}

/// A patch can write what no form would: the project it names must exist (Argo validates the
/// patched Application as an update). An empty project is `default`, as everywhere else in
/// Plumb.
async fn check_patched_project(s: &AppState, app: &Application) -> Result<()> {
    let project = match app.spec.project.as_str() {
        "" => "default",
        p => p,
    };
    check_name("AppProject", project)?;
    let exists = s
        .projects()
        .get_opt(project)
        .await
        .map_err(|e| Error::kube(format!("reading AppProject {}/{project}", s.namespace), e))?;
    if exists.is_none() {
        return Err(Error::InvalidArgument(format!(
            "application references project {project} which does not exist"
        )));
    }
    Ok(())
}
