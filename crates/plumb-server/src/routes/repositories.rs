//! `/api/v1/repositories`: Argo's `RepositoryService` (list, get, create with `upsert`, update,
//! delete, validate), over the repository Secrets of the control namespace
//! (`plumb_app::repo_admin`). RBAC resource `repositories`, object `<project>/<url>` for a
//! project-scoped repository and `<url>` for a global one (Argo's `createRBACObject`).
//! Answers are masked: never a password, token or key.

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use plumb_app::repo_admin::{RepoAdmin, RepoSpec, Role, Stored};
use serde_json::{Value, json};

use crate::auth::middleware::Authenticated;
use crate::error::{Error, Result};
use crate::gateway::{self, Query};
use crate::rbac::{Authz, PERMISSION_DENIED};
use crate::state::AppState;

/// Argo's `createRBACObject`.
pub(crate) fn rbac_object(project: &str, url: &str) -> String {
    if project.is_empty() {
        url.to_owned()
    } else {
        format!("{project}/{url}")
    }
}

pub(crate) fn admin(s: &AppState) -> RepoAdmin {
    RepoAdmin::new(s.client.clone(), &s.namespace)
}

/// The JSON body of a request.
pub(crate) fn body_json(body: &Bytes) -> Result<Value> {
    serde_json::from_slice(body)
        .map_err(|e| Error::InvalidArgument(format!("reading the request body: {e}")))
}

fn query_bool(q: &Query, key: &str) -> Result<bool> {
    q.bool(key, false).map_err(Error::InvalidArgument)
}

/// The repositories the caller may `get` (Argo's `prepareRepoList` filter).
async fn visible(authz: &mut Authz, all: Vec<Stored>) -> Result<Vec<Stored>> {
    let mut out = Vec::new();
    for r in all {
        let obj = rbac_object(r.spec.project(), &r.spec.url);
        if authz.allows("repositories", "get", &obj).await? {
            out.push(r);
        }
    }
    Ok(out)
}

/// `GET /api/v1/repositories`: the repositories the caller may `get`, with their connection
/// states (`forceRefresh=true` checks again).
pub(crate) async fn list(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    RawQuery(raw): RawQuery,
) -> Result<Json<Value>> {
    let q = Query::parse(raw.as_deref());
    let refresh = query_bool(&q, "forceRefresh")?;
    let mut authz = Authz::new(&s, &caller).await?;
    let admin = admin(&s);
    let allowed = visible(&mut authz, admin.repositories().await?).await?;
    let items = admin.describe(&allowed, refresh).await?;
    Ok(Json(gateway::list(
        None,
        items.into_iter().map(|d| d.value).collect(),
    )))
}

/// `GET /api/v1/repositories/{repo}?appProject=`: one repository (Argo's `Get`).
pub(crate) async fn get(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(repo): Path<String>,
    RawQuery(raw): RawQuery,
) -> Result<Json<Value>> {
    let q = Query::parse(raw.as_deref());
    let project = q.get("appProject").unwrap_or_default();
    let refresh = query_bool(&q, "forceRefresh")?;
    let admin = admin(&s);
    let mut authz = Authz::new(&s, &caller).await?;
    let visible = visible(&mut authz, admin.repositories().await?).await?;
    // As Argo: a repository the caller may not see is not told apart from a missing one.
    let Some(found) = RepoAdmin::pick(&visible, &repo, project) else {
        return Err(Error::PermissionDenied(PERMISSION_DENIED.into()));
    };
    let described = admin.describe(std::slice::from_ref(found), refresh).await?;
    described
        .into_iter()
        .next()
        .map(|d| Json(d.value))
        .ok_or_else(|| Error::NotFound(format!("repo '{repo}' not found")))
}

/// `POST /api/v1/repositories?upsert=`: Argo's `CreateRepository`. A global repository's
/// connection is checked first; its failure is Argo's "error testing repository
/// connectivity" message.
pub(crate) async fn create(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    RawQuery(raw): RawQuery,
    body: Bytes,
) -> Result<Json<Value>> {
    let q = Query::parse(raw.as_deref());
    let upsert = query_bool(&q, "upsert")?;
    let spec = RepoSpec::from_request(Role::Repository, &body_json(&body)?)?;
    Authz::new(&s, &caller)
        .await?
        .check(
            "repositories",
            "create",
            &rbac_object(spec.project(), &spec.url),
        )
        .await?;
    let answer = admin(&s).create_repository(&spec, upsert).await?;
    tracing::info!(repo = %plumb_source::strip_url_credentials(&spec.url), sub = %caller.subject, "repository added");
    Ok(Json(answer))
}

/// `PUT /api/v1/repositories/{repo}`: Argo's `UpdateRepository` (both the stored and the new
/// project must allow `update`).
pub(crate) async fn update(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(_repo): Path<String>,
    body: Bytes,
) -> Result<Json<Value>> {
    let spec = RepoSpec::from_request(Role::Repository, &body_json(&body)?)?;
    let admin = admin(&s);
    let mut authz = Authz::new(&s, &caller).await?;
    let stored = admin
        .secrets()
        .repository(&spec.url, spec.project(), true)
        .await?;
    if let Some(old) = &stored {
        let obj = rbac_object(old.spec.project(), &old.spec.url);
        authz.check("repositories", "update", &obj).await?;
    }
    authz
        .check(
            "repositories",
            "update",
            &rbac_object(spec.project(), &spec.url),
        )
        .await?;
    admin.update(&spec).await?;
    let mut out = json!({"repo": spec.url});
    for k in ["type", "name"] {
        if let Some(v) = spec.get(k) {
            out[k] = json!(v);
        }
    }
    Ok(Json(out))
}

/// `DELETE /api/v1/repositories/{repo}?appProject=`: Argo's `DeleteRepository`.
pub(crate) async fn delete(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(repo): Path<String>,
    RawQuery(raw): RawQuery,
) -> Result<Json<Value>> {
    let q = Query::parse(raw.as_deref());
    let project = q.get("appProject").unwrap_or_default();
    let admin = admin(&s);
    let mut authz = Authz::new(&s, &caller).await?;
    let visible = visible(&mut authz, admin.repositories().await?).await?;
    let Some(found) = RepoAdmin::pick(&visible, &repo, project) else {
        return Err(Error::PermissionDenied(PERMISSION_DENIED.into()));
    };
    let obj = rbac_object(found.spec.project(), &found.spec.url);
    authz.check("repositories", "delete", &obj).await?;
    admin.delete_repository(found).await?;
    Ok(Json(json!({})))
}

/// The keys of Argo's `RepoAccessQuery` that differ from the `Repository` object's.
const ACCESS_KEYS: &[(&str, &str)] = &[
    ("enableOci", "enableOCI"),
    ("insecureOciForceHttp", "insecureOCIForceHttp"),
];

/// `POST /api/v1/repositories/{repo}/validate`: Argo's `ValidateAccess`, the connection check
/// alone (what `argocd repo add` calls before creating).
pub(crate) async fn validate(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(repo): Path<String>,
    body: Bytes,
) -> Result<Json<Value>> {
    let mut value = body_json(&body)?;
    let obj = value
        .as_object_mut()
        .ok_or_else(|| Error::InvalidArgument("missing payload in request".into()))?;
    for (from, to) in ACCESS_KEYS {
        if let Some(v) = obj.remove(*from) {
            obj.insert((*to).into(), v);
        }
    }
    obj.entry("repo").or_insert_with(|| json!(repo));
    let spec = RepoSpec::from_request(Role::Repository, &value)?;
    Authz::new(&s, &caller)
        .await?
        .check(
            "repositories",
            "create",
            &rbac_object(spec.project(), &spec.url),
        )
        .await?;
    admin(&s).check(&spec).await?;
    Ok(Json(json!({})))
}

/// Argo's message-less refusal would be a 404; Plumb says why instead.
pub(crate) const WRITE_REFUSAL: &str = "write credentials (repository-write and \
    repo-write-creds Secrets) are used only by Argo CD's source hydrator, which Plumb does not \
    have: they are neither stored nor served";

/// `/api/v1/write-repositories[/{repo}]` and `/api/v1/write-repocreds[/{url}]`, each of Argo's methods:
/// Argo's write-credential services, refused loudly (see [`WRITE_REFUSAL`]).
pub(crate) async fn write_credentials(
    Authenticated(_caller): Authenticated,
) -> Result<Json<Value>> {
    Err(Error::FailedPrecondition(WRITE_REFUSAL.into()))
}
