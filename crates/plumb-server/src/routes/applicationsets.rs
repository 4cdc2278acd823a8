//! `/api/v1/applicationsets[/{name}]`: Argo's `ApplicationSetService` (list, get, create with
//! `upsert` and `dryRun`, delete, resource-tree, generate) with its RBAC on the
//! `applicationsets` resource (object `<project>/<name>`, the project of the template), plus
//! Plumb's `confirm-deletion` for the deletion brake. The operations themselves are
//! `plumb_appset::api`'s, shared with `plumb appset` in core mode.

use axum::Json;
use axum::extract::{Path, RawQuery, State};
use kube::api::{Api, DynamicObject, ListParams};
use plumb_appset::api::{self, ApiError, Confirm};
use plumb_model::applicationset::ApplicationSet;
use serde_json::{Value, json};

use crate::auth::middleware::Authenticated;
use crate::auth::{Caller, CallerKind};
use crate::error::{Error, Result};
use crate::gateway::{self, Query};
use crate::rbac::Authz;
use crate::state::{AppState, check_name, to_value};

const RESOURCE: &str = "applicationsets";

impl From<ApiError> for Error {
    fn from(e: ApiError) -> Self {
        match e {
            ApiError::Invalid(m) => Self::InvalidArgument(m),
            ApiError::NotFound(m) => Self::NotFound(m),
            ApiError::Conflict(m) => Self::Internal(m),
            ApiError::Kube { context, source } => Self::kube(context, source),
        }
    }
}

/// The namespace of `requested` (Argo's `appsetNamespaceOrDefault`), refused when not served.
fn namespace(s: &AppState, requested: Option<&str>) -> Result<String> {
    let ns = requested
        .filter(|ns| !ns.is_empty())
        .unwrap_or(&s.namespace);
    check_name("namespace", ns)?;
    if !s.namespace_enabled(ns) {
        return Err(Error::PermissionDenied(format!(
            "namespace '{ns}' is not permitted"
        )));
    }
    Ok(ns.to_string())
}

fn sets(s: &AppState, ns: &str) -> Api<DynamicObject> {
    Api::namespaced_with(s.client.clone(), ns, &api::applicationset_resource())
}

fn with_type(set: &ApplicationSet) -> Result<Value> {
    let mut v = to_value(set)?;
    v["apiVersion"] = json!(plumb_model::application::API_VERSION);
    v["kind"] = json!(plumb_model::applicationset::KIND);
    Ok(v)
}

/// Argo's `getAppSetEnforceRBAC`: the set (NotFound when it does not exist, as Argo answers),
/// then `act` on its RBAC object.
async fn read_checked(
    s: &AppState,
    caller: &Caller,
    ns: &str,
    name: &str,
    act: &str,
) -> Result<ApplicationSet> {
    check_name("ApplicationSet", name)?;
    let set = api::get(&sets(s, ns), name).await?.ok_or_else(|| {
        Error::NotFound(format!(
            "error getting ApplicationSet: applicationsets.argoproj.io \"{name}\" not found"
        ))
    })?;
    Authz::new(s, caller)
        .await?
        .check(RESOURCE, act, &api::rbac_object(&set, &s.namespace))
        .await?;
    Ok(set)
}

/// `GET /api/v1/applicationsets`: `projects` (repeated), `selector`, `appsetNamespace`; only
/// what the caller may get, sorted by name.
pub(crate) async fn list(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    RawQuery(raw): RawQuery,
) -> Result<Json<Value>> {
    let q = Query::parse(raw.as_deref());
    let only_ns = match q.get("appsetNamespace") {
        Some(ns) => Some(namespace(&s, Some(ns))?),
        None => None,
    };
    let listed = match &only_ns {
        Some(ns) => sets(&s, ns),
        None if s.app_namespaces.is_empty() => sets(&s, &s.namespace),
        None => Api::all_with(s.client.clone(), &api::applicationset_resource()),
    }
    .list(&ListParams::default().labels(q.get("selector").unwrap_or_default()))
    .await
    .map_err(|e| Error::kube("listing ApplicationSets", e))?;
    let projects = q.all("projects");
    let mut authz = Authz::new(&s, &caller).await?;
    let mut items = Vec::new();
    for obj in &listed.items {
        let set = api::to_set(obj)?;
        if !s.namespace_enabled(set.namespace())
            || (!projects.is_empty() && !projects.iter().any(|p| p == api::project(&set)))
        {
            continue;
        }
        if authz
            .allows(RESOURCE, "get", &api::rbac_object(&set, &s.namespace))
            .await?
        {
            items.push(set);
        }
    }
    items.sort_by(|a, b| (a.name(), a.namespace()).cmp(&(b.name(), b.namespace())));
    let items = items.iter().map(with_type).collect::<Result<Vec<_>>>()?;
    Ok(Json(gateway::list(listed.metadata.resource_version, items)))
}

/// `GET /api/v1/applicationsets/{name}?appsetNamespace=`.
pub(crate) async fn get(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(name): Path<String>,
    RawQuery(raw): RawQuery,
) -> Result<Json<Value>> {
    let q = Query::parse(raw.as_deref());
    let ns = namespace(&s, q.get("appsetNamespace"))?;
    let set = read_checked(&s, &caller, &ns, &name, "get").await?;
    Ok(Json(with_type(&set)?))
}

/// `GET /api/v1/applicationsets/{name}/resource-tree`: the generated Applications.
pub(crate) async fn tree(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(name): Path<String>,
    RawQuery(raw): RawQuery,
) -> Result<Json<Value>> {
    let q = Query::parse(raw.as_deref());
    let ns = namespace(&s, q.get("appsetNamespace"))?;
    let set = read_checked(&s, &caller, &ns, &name, "get").await?;
    Ok(Json(api::resource_tree(&set)))
}

/// The ApplicationSet of a request body, checked as Argo's `validateAppSet` and
/// `checkCreatePermissions` check it: its namespace served, `create` on its RBAC object, its
/// project existing. Returns the set with its namespace filled in.
async fn checked_for_create(s: &AppState, authz: &mut Authz, raw: Value) -> Result<ApplicationSet> {
    if raw.is_null() {
        return Err(Error::InvalidArgument(
            "error creating ApplicationSets: ApplicationSets is nil in request".into(),
        ));
    }
    let mut set: ApplicationSet = serde_json::from_value(raw.clone())
        .map_err(|e| Error::InvalidArgument(format!("reading the ApplicationSet: {e}")))?;
    check_name("ApplicationSet", set.name())?;
    let project = api::validate(&set)
        .and_then(|p| api::validate_generators(&raw).map(|()| p))
        .map_err(|e| Error::InvalidArgument(format!("error validating ApplicationSets: {e}")))?;
    let ns = namespace(s, set.metadata.namespace.as_deref())?;
    set.metadata.namespace = Some(ns);
    authz
        .check(RESOURCE, "create", &api::rbac_object(&set, &s.namespace))
        .await?;
    let project = if project.is_empty() {
        "default"
    } else {
        &project
    };
    check_name("AppProject", project)?;
    let found = s
        .projects()
        .get_opt(project)
        .await
        .map_err(|e| Error::kube(format!("reading AppProject {project}"), e))?;
    if found.is_none() {
        return Err(Error::InvalidArgument(format!(
            "ApplicationSet references project {project} which does not exist"
        )));
    }
    Ok(set)
}

/// The generators' context of this server (built once).
async fn context(s: &AppState) -> Result<plumb_appset::Context> {
    s.appset_context
        .get_or_try_init(|| async {
            let dir = s
                .appset_cache
                .clone()
                .unwrap_or_else(|| std::env::temp_dir().join("plumb-server-applicationsets"));
            api::preview_context(s.client.clone(), &s.namespace, &dir)
                .await
                .map_err(Error::from)
        })
        .await
        .cloned()
}

/// The Applications `set` generates; any generator or template error fails the request (as
/// Argo's `Generate` fails), naming every error.
async fn generated(
    s: &AppState,
    set: &ApplicationSet,
) -> Result<Vec<plumb_model::application::Application>> {
    let ctx = context(s).await?;
    // The repository Secrets as they are now: a preview reads private repositories with the
    // server's credentials, never the caller's.
    api::load_repositories(&ctx).await?;
    let out = plumb_appset::generate(set, &ctx).await;
    if !out.errors.is_empty() {
        let errors: Vec<String> = out.errors.iter().map(ToString::to_string).collect();
        return Err(Error::InvalidArgument(format!(
            "unable to generate Applications of ApplicationSet: {}",
            errors.join("; ")
        )));
    }
    Ok(out.applications)
}

/// `POST /api/v1/applicationsets?upsert=&dryRun=` with the ApplicationSet as the body (Argo's
/// gateway maps the body to `applicationset`).
pub(crate) async fn create(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    RawQuery(raw): RawQuery,
    Json(body): Json<Value>,
) -> Result<Json<Value>> {
    let q = Query::parse(raw.as_deref());
    let upsert = q.bool("upsert", false).map_err(Error::InvalidArgument)?;
    let dry_run = q.bool("dryRun", false).map_err(Error::InvalidArgument)?;
    let mut authz = Authz::new(&s, &caller).await?;
    let mut set = checked_for_create(&s, &mut authz, body).await?;
    if dry_run {
        let apps = generated(&s, &set).await?;
        set.status.get_or_insert_with(Default::default).resources =
            Some(api::dry_run_resources(&apps));
        return Ok(Json(with_type(&set)?));
    }
    let api_ = sets(&s, set.namespace());
    let Some(existing) = api::get(&api_, set.name()).await? else {
        return Ok(Json(with_type(&api::create(&api_, &set).await?)?));
    };
    if api::same_spec(&existing, &set) {
        return Ok(Json(with_type(&existing)?));
    }
    if !upsert {
        return Err(Error::InvalidArgument(
            "existing ApplicationSet spec is different, use upsert flag to force update".into(),
        ));
    }
    let new_object = api::rbac_object(&set, &s.namespace);
    authz.check(RESOURCE, "update", &new_object).await?;
    if api::project(&existing) != api::project(&set) {
        // Moving to another project: create there, and update in the old one (as Argo).
        authz.check(RESOURCE, "create", &new_object).await?;
        authz
            .check(
                RESOURCE,
                "update",
                &api::rbac_object(&existing, &s.namespace),
            )
            .await?;
    }
    Ok(Json(with_type(
        &api::update(&api_, existing, &set, true).await?,
    )?))
}

/// Argo's `ApplicationSetGenerateRequest`.
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct GenerateRequest {
    #[serde(default)]
    application_set: Value,
}

/// `POST /api/v1/applicationsets/generate`: the Applications a set would generate, with the
/// checks of a create (Argo's `Generate`).
pub(crate) async fn generate(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    Json(body): Json<GenerateRequest>,
) -> Result<Json<Value>> {
    let mut authz = Authz::new(&s, &caller).await?;
    let set = checked_for_create(&s, &mut authz, body.application_set).await?;
    let apps = generated(&s, &set).await?;
    let apps = apps
        .iter()
        .map(|app| {
            let mut v = to_value(app)?;
            v["apiVersion"] = json!(plumb_model::application::API_VERSION);
            v["kind"] = json!("Application");
            Ok(v)
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Json(json!({"applications": apps})))
}

/// `DELETE /api/v1/applicationsets/{name}?appsetNamespace=`.
pub(crate) async fn delete(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(name): Path<String>,
    RawQuery(raw): RawQuery,
) -> Result<Json<Value>> {
    let q = Query::parse(raw.as_deref());
    let ns = namespace(&s, q.get("appsetNamespace"))?;
    read_checked(&s, &caller, &ns, &name, "delete").await?;
    api::delete(&sets(&s, &ns), &name).await?;
    Ok(Json(json!({})))
}

/// Plumb's confirmation body: the Applications whose held deletion may go, or `all`.
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct ConfirmRequest {
    #[serde(default)]
    applications: Vec<String>,
    #[serde(default)]
    all: bool,
    #[serde(default)]
    appset_namespace: Option<String>,
}

/// `POST /api/v1/applicationsets/{name}/confirm-deletion` (Plumb's, beyond Argo): writes the
/// brake's confirmation annotation; `delete` on the set, since it lets Applications be deleted.
pub(crate) async fn confirm_deletion(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(name): Path<String>,
    Json(body): Json<ConfirmRequest>,
) -> Result<Json<Value>> {
    let ns = namespace(&s, body.appset_namespace.as_deref())?;
    let confirm = match (body.all, body.applications.is_empty()) {
        (true, true) => Confirm::All,
        (false, false) => Confirm::Apps(body.applications),
        (true, false) => {
            return Err(Error::InvalidArgument(
                "give either applications or all, not both".into(),
            ));
        }
        (false, true) => {
            return Err(Error::InvalidArgument(
                "name the Applications whose deletion to confirm, or all".into(),
            ));
        }
    };
    read_checked(&s, &caller, &ns, &name, "delete").await?;
    let set = api::confirm_deletion(&sets(&s, &ns), &name, &confirm).await?;
    Ok(Json(with_type(&set)?))
}

/// `GET /api/v1/applicationsets/{name}/applications` (Plumb's, for the web UI): the
/// Applications the set owns that the caller may get, and the deletions the brake holds.
pub(crate) async fn owned(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(name): Path<String>,
    RawQuery(raw): RawQuery,
) -> Result<Json<Value>> {
    let q = Query::parse(raw.as_deref());
    let ns = namespace(&s, q.get("appsetNamespace"))?;
    let set = read_checked(&s, &caller, &ns, &name, "get").await?;
    let owned = api::owned_applications(&s.client, &set).await?;
    let pending = api::pending_deletions(&set, &owned);
    let mut authz = Authz::new(&s, &caller).await?;
    let mut items = Vec::new();
    for app in owned {
        let visible = caller.kind == CallerKind::Unrestricted
            || authz
                .allows(
                    "applications",
                    "get",
                    &crate::rbac::app_object(&app, &s.namespace),
                )
                .await?;
        if visible {
            items.push(app);
        }
    }
    Ok(Json(json!({"items": items, "pendingDeletions": pending})))
}

/// `GET /api/v1/applicationsets/{name}/events?appsetNamespace=` (Argo's `ListResourceEvents`):
/// the Kubernetes Events of the set, in its namespace, by name, namespace and UID (so the Events
/// of an older set of the same name are not shown); `applicationsets, get`.
pub(crate) async fn events(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(name): Path<String>,
    RawQuery(raw): RawQuery,
) -> Result<Json<Value>> {
    let q = Query::parse(raw.as_deref());
    let ns = namespace(&s, q.get("appsetNamespace"))?;
    let set = read_checked(&s, &caller, &ns, &name, "get").await?;
    let uid = set
        .metadata
        .other
        .get("uid")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let fields = crate::routes::events::involving(set.name(), &ns, uid);
    let what = format!("ApplicationSet {ns}/{name}");
    Ok(Json(
        crate::routes::events::list_events(s.client.clone(), &ns, &fields, &what).await?,
    ))
}
