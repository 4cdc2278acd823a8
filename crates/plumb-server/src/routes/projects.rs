//! `GET /api/v1/projects[/{name}]`: AppProjects of the control namespace (Argo's
//! `ProjectService` List and Get).

use axum::Json;
use axum::extract::{Path, State};
use kube::api::ListParams;
use serde_json::Value;

use crate::auth::middleware::Authenticated;
use crate::error::{Error, Result};
use crate::gateway;
use crate::rbac::Authz;
use crate::state::{AppState, check_name, not_found_or, to_value};

/// `GET /api/v1/projects`: `{"metadata", "items"}`, by name.
pub(crate) async fn list(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
) -> Result<Json<Value>> {
    let mut authz = Authz::new(&s, &caller).await?;
    let list = s
        .projects()
        .list(&ListParams::default())
        .await
        .map_err(|e| {
            Error::kube(
                format!("listing AppProjects in namespace {}", s.namespace),
                e,
            )
        })?;
    let mut items = Vec::new();
    for obj in &list.items {
        let name = obj.metadata.name.clone().unwrap_or_default();
        if authz.allows("projects", "get", &name).await? {
            items.push(to_value(obj)?);
        }
    }
    items.sort_by_key(|p| {
        p.pointer("/metadata/name")
            .and_then(Value::as_str)
            .map(str::to_string)
    });
    Ok(Json(gateway::list(list.metadata.resource_version, items)))
}

/// `GET /api/v1/projects/{name}`.
pub(crate) async fn get(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(name): Path<String>,
) -> Result<Json<Value>> {
    check_name("AppProject", &name)?;
    Authz::new(&s, &caller)
        .await?
        .check("projects", "get", &name)
        .await?;
    let obj = s.projects().get(&name).await.map_err(|e| {
        not_found_or(
            e,
            &format!("appprojects.argoproj.io \"{name}\" not found"),
            || format!("reading AppProject {}/{name}", s.namespace),
        )
    })?;
    Ok(Json(to_value(&obj)?))
}

/// Argo's `ProjectTokenCreateRequest` (`expiresIn` seconds, `id`).
#[derive(serde::Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CreateToken {
    #[serde(default)]
    expires_in: Option<Value>,
    #[serde(default)]
    id: Option<String>,
}

/// Edits `spec.roles[role].jwtTokens` of the project, guarded by resourceVersion and retried on
/// conflicts.
async fn edit_role_tokens(
    s: &AppState,
    project: &str,
    role: &str,
    mut edit: impl FnMut(&mut Vec<Value>) -> Result<bool>,
) -> Result<()> {
    for _ in 0..10 {
        let obj = s.projects().get(project).await.map_err(|e| {
            not_found_or(
                e,
                &format!("appprojects.argoproj.io \"{project}\" not found"),
                || format!("reading AppProject {}/{project}", s.namespace),
            )
        })?;
        let mut value = to_value(&obj)?;
        let roles = value
            .pointer_mut("/spec/roles")
            .and_then(Value::as_array_mut)
            .ok_or_else(|| {
                Error::NotFound(format!("project '{project}' does not have role '{role}'"))
            })?;
        let r = roles
            .iter_mut()
            .find(|r| r.get("name").and_then(Value::as_str) == Some(role))
            .ok_or_else(|| {
                Error::NotFound(format!("project '{project}' does not have role '{role}'"))
            })?;
        let mut tokens = r
            .get("jwtTokens")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        if !edit(&mut tokens)? {
            return Ok(());
        }
        r["jwtTokens"] = Value::Array(tokens);
        let obj: kube::api::DynamicObject = serde_json::from_value(value)
            .map_err(|e| Error::Internal(format!("encoding AppProject {project}: {e}")))?;
        match s
            .projects()
            .replace(project, &kube::api::PostParams::default(), &obj)
            .await
        {
            Ok(_) => return Ok(()),
            Err(kube::Error::Api(st)) if st.code == 409 => {}
            Err(e) => {
                return Err(Error::kube(
                    format!("updating AppProject {}/{project}", s.namespace),
                    e,
                ));
            }
        }
    }
    Err(Error::FailedPrecondition(format!(
        "could not update project '{project}': it keeps changing"
    )))
}

/// `POST /api/v1/projects/{project}/roles/{role}/token`: a project role token
/// (`proj:<project>:<role>`), recorded in the role's `jwtTokens` so it can be revoked.
pub(crate) async fn create_token(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    Path((project, role)): Path<(String, String)>,
    body: axum::body::Bytes,
) -> Result<Json<Value>> {
    check_name("AppProject", &project)?;
    Authz::new(&s, &caller)
        .await?
        .check("projects", "update", &project)
        .await?;
    let body: CreateToken = if body.iter().all(u8::is_ascii_whitespace) {
        CreateToken::default()
    } else {
        serde_json::from_slice(&body)
            .map_err(|e| Error::InvalidArgument(format!("reading the token request: {e}")))?
    };
    let seconds = match &body.expires_in {
        None | Some(Value::Null) => 0,
        Some(v) => crate::gateway::json_i64(v)
            .filter(|s| *s >= 0)
            .ok_or_else(|| {
                Error::InvalidArgument("expiresIn: expected seconds (0: never)".into())
            })?,
    };
    let id = match body.id.filter(|i| !i.is_empty()) {
        Some(id) if id.len() <= 128 => id,
        Some(_) => return Err(Error::InvalidArgument("id: at most 128 characters".into())),
        None => crate::auth::new_token_id()?,
    };
    let claims =
        crate::auth::jwt::Claims::new(format!("proj:{project}:{role}"), seconds, id.clone());
    edit_role_tokens(&s, &project, &role, |tokens| {
        if tokens
            .iter()
            .any(|t| t.get("id").and_then(Value::as_str) == Some(id.as_str()))
        {
            return Err(Error::AlreadyExists(format!(
                "role '{role}' already has token with id '{id}'"
            )));
        }
        let mut t = serde_json::json!({"iat": claims.iat, "id": id});
        if let Some(exp) = claims.exp {
            t["exp"] = serde_json::json!(exp);
        }
        tokens.push(t);
        Ok(true)
    })
    .await?;
    Ok(Json(serde_json::json!({"token": s.sign(&claims).await?})))
}

/// `DELETE /api/v1/projects/{project}/roles/{role}/token/{iat}?id=`: removes the token (by id
/// when given, else by issue time); it stops working at once.
pub(crate) async fn delete_token(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    Path((project, role, iat)): Path<(String, String, String)>,
    axum::extract::RawQuery(raw): axum::extract::RawQuery,
) -> Result<Json<Value>> {
    check_name("AppProject", &project)?;
    Authz::new(&s, &caller)
        .await?
        .check("projects", "update", &project)
        .await?;
    let q = gateway::Query::parse(raw.as_deref());
    let id = q.get("id").map(str::to_string);
    let iat: i64 = iat
        .parse()
        .map_err(|_| Error::InvalidArgument(format!("iat: expected a number, got {iat:?}")))?;
    edit_role_tokens(&s, &project, &role, |tokens| {
        let before = tokens.len();
        tokens.retain(|t| match &id {
            Some(id) => t.get("id").and_then(Value::as_str) != Some(id.as_str()),
            None => t.get("iat").and_then(crate::gateway::json_i64) != Some(iat),
        });
        Ok(tokens.len() != before)
    })
    .await?;
    Ok(Json(serde_json::json!({})))
}

/// Argo's `ProjectCreateRequest`.
#[derive(serde::Deserialize)]
pub(crate) struct CreateProject {
    project: Value,
    #[serde(default)]
    upsert: bool,
}

/// Argo's `ProjectUpdateRequest`.
#[derive(serde::Deserialize)]
pub(crate) struct UpdateProject {
    project: Value,
}

/// The name of a project in a request body, checked.
fn project_name(project: &Value) -> Result<String> {
    let name = project
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    check_name("AppProject", &name)?;
    if project.get("spec").is_some_and(|s| !s.is_object()) {
        return Err(Error::InvalidArgument(format!(
            "AppProject {name}: spec is not an object"
        )));
    }
    Ok(name)
}

/// Argo's `validateProject` on the body: the project as Argo's API server checks it, with its
/// messages (`plumb_policy::project::validate_project`).
fn validate(project: &Value, name: &str) -> Result<()> {
    let typed: plumb_model::application::AppProject = serde_json::from_value(project.clone())
        .map_err(|e| Error::InvalidArgument(format!("AppProject {name}: {e}")))?;
    plumb_policy::project::validate_project(&typed).map_err(|e| match e.code {
        plumb_policy::project::InvalidCode::AlreadyExists => Error::AlreadyExists(e.message),
        _ => Error::InvalidArgument(e.message),
    })
}

/// The project as written: its name, labels, annotations and spec, in the control namespace.
fn project_object(s: &AppState, project: &Value, name: &str) -> Result<kube::api::DynamicObject> {
    let mut metadata = serde_json::json!({"name": name, "namespace": s.namespace});
    for field in ["labels", "annotations", "finalizers"] {
        if let Some(v) = project.pointer(&format!("/metadata/{field}")) {
            metadata[field] = v.clone();
        }
    }
    serde_json::from_value(serde_json::json!({
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "AppProject",
        "metadata": metadata,
        "spec": project.get("spec").cloned().unwrap_or_else(|| serde_json::json!({})),
    }))
    .map_err(|e| Error::InvalidArgument(format!("AppProject {name}: {e}")))
}

/// Replaces the project's spec, labels and annotations, guarded by resourceVersion and retried.
async fn replace_project(s: &AppState, name: &str, project: &Value) -> Result<Value> {
    for _ in 0..10 {
        let current = s.projects().get(name).await.map_err(|e| {
            not_found_or(
                e,
                &format!("appprojects.argoproj.io \"{name}\" not found"),
                || format!("reading AppProject {}/{name}", s.namespace),
            )
        })?;
        let mut obj = project_object(s, project, name)?;
        // A body that names the version it was read at is written only over that version (the
        // CLI's read-change-write retries on the conflict); one that names none replaces.
        let wanted = project
            .pointer("/metadata/resourceVersion")
            .and_then(Value::as_str)
            .filter(|v| !v.is_empty());
        obj.metadata.resource_version = wanted
            .map(str::to_string)
            .or_else(|| current.metadata.resource_version.clone());
        match s
            .projects()
            .replace(name, &kube::api::PostParams::default(), &obj)
            .await
        {
            Ok(updated) => return to_value(&updated),
            Err(kube::Error::Api(st)) if st.code == 409 && wanted.is_some() => {
                return Err(Error::Conflict(format!(
                    "Operation cannot be fulfilled on appprojects.argoproj.io \"{name}\": the object has been modified; please apply your changes to the latest version and try again"
                )));
            }
            Err(kube::Error::Api(st)) if st.code == 409 => {}
            Err(e) => {
                return Err(Error::kube(
                    format!("updating AppProject {}/{name}", s.namespace),
                    e,
                ));
            }
        }
    }
    Err(Error::FailedPrecondition(format!(
        "could not update project '{name}': it keeps changing"
    )))
}

/// `POST /api/v1/projects` (`projects, create, <name>`): an existing project with the same spec
/// is returned as is; a different one is refused unless `upsert` (then `projects, update` too).
pub(crate) async fn create(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    axum::Json(body): axum::Json<CreateProject>,
) -> Result<Json<Value>> {
    let name = project_name(&body.project)?;
    let mut authz = Authz::new(&s, &caller).await?;
    authz.check("projects", "create", &name).await?;
    validate(&body.project, &name).map_err(|e| match e {
        Error::InvalidArgument(m) => {
            Error::InvalidArgument(format!("error validating project: {m}"))
        }
        Error::AlreadyExists(m) => Error::AlreadyExists(format!("error validating project: {m}")),
        other => other,
    })?;
    let existing = s
        .projects()
        .get_opt(&name)
        .await
        .map_err(|e| Error::kube(format!("reading AppProject {}/{name}", s.namespace), e))?;
    match existing {
        None => {
            check_role_policies(&body.project)?;
            let obj = project_object(&s, &body.project, &name)?;
            let created = s
                .projects()
                .create(&kube::api::PostParams::default(), &obj)
                .await
                .map_err(|e| {
                    Error::kube(format!("creating AppProject {}/{name}", s.namespace), e)
                })?;
            Ok(Json(to_value(&created)?))
        }
        Some(current) => {
            let current_value = to_value(&current)?;
            let wanted_spec = body.project.get("spec").cloned().unwrap_or_default();
            if current_value.get("spec").cloned().unwrap_or_default() == wanted_spec {
                return Ok(Json(current_value));
            }
            if !body.upsert {
                return Err(Error::InvalidArgument(
                    "existing project spec is different, use upsert flag to force update".into(),
                ));
            }
            authz.check("projects", "update", &name).await?;
            check_widening(&mut authz, &current_value, &body.project).await?;
            Ok(Json(replace_project(&s, &name, &body.project).await?))
        }
    }
}

/// `PUT /api/v1/projects/{name}` (`projects, update, <name>`).
pub(crate) async fn update(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(name): Path<String>,
    axum::Json(body): axum::Json<UpdateProject>,
) -> Result<Json<Value>> {
    check_name("AppProject", &name)?;
    let mut authz = Authz::new(&s, &caller).await?;
    authz.check("projects", "update", &name).await?;
    if project_name(&body.project)? != name {
        return Err(Error::InvalidArgument(format!(
            "metadata.name of the body does not match the path's {name:?}"
        )));
    }
    validate(&body.project, &name)?;
    let current = s.projects().get(&name).await.map_err(|e| {
        not_found_or(
            e,
            &format!("appprojects.argoproj.io \"{name}\" not found"),
            || format!("reading AppProject {}/{name}", s.namespace),
        )
    })?;
    let current = to_value(&current)?;
    check_widening(&mut authz, &current, &body.project).await?;
    check_applications(&s, &current, &body.project).await?;
    Ok(Json(replace_project(&s, &name, &body.project).await?))
}

/// Argo refuses an update that would make some of the project's Applications invalid (their
/// source or destination permitted before, not after), with its message.
async fn check_applications(s: &AppState, current: &Value, wanted: &Value) -> Result<()> {
    let typed = |v: &Value| {
        serde_json::from_value::<plumb_model::application::AppProject>(v.clone())
            .map_err(|e| Error::InvalidArgument(format!("AppProject: {e}")))
    };
    let (old, new) = (typed(current)?, typed(wanted)?);
    let refusal = plumb_app::project_update::refusal(&s.client, &s.namespace, &old, &new)
        .await
        .map_err(|e| Error::Internal(plumb_app::chain(&e)))?;
    match refusal {
        Some(message) => Err(Error::InvalidArgument(message)),
        None => Ok(()),
    }
}

/// Argo's checks on a project update beyond `projects, update` (`ProjectService.Update`): a
/// destination cluster it did not have needs `clusters, update, <server>`, a source repository
/// it did not have `repositories, update, <url>`, and any change to the cluster or namespace
/// resource lists `clusters, update` on every destination cluster. So whoever may only update a
/// project (a project lead, or a project token) cannot widen it to every repository, cluster or
/// kind. Argo skips these on a create with `upsert`; Plumb checks both.
async fn check_widening(authz: &mut Authz, current: &Value, wanted: &Value) -> Result<()> {
    let old = current.get("spec").cloned().unwrap_or_default();
    let new = wanted.get("spec").cloned().unwrap_or_default();
    let old_clusters = destination_clusters(&old);
    let new_clusters = destination_clusters(&new);
    for cluster in new_clusters.iter().filter(|c| !old_clusters.contains(*c)) {
        authz.check("clusters", "update", cluster).await?;
    }
    let old_repos = strings(&old, "sourceRepos");
    for repo in strings(&new, "sourceRepos")
        .iter()
        .filter(|r| !old_repos.contains(*r))
    {
        authz.check("repositories", "update", repo).await?;
    }
    let lists = [
        "clusterResourceWhitelist",
        "clusterResourceBlacklist",
        "namespaceResourceWhitelist",
        "namespaceResourceBlacklist",
    ];
    let list = |spec: &Value, field: &str| spec.get(field).cloned().unwrap_or(Value::Array(vec![]));
    if lists.iter().any(|f| list(&old, f) != list(&new, f)) {
        for cluster in &new_clusters {
            authz.check("clusters", "update", cluster).await?;
        }
    }
    check_role_policies(wanted)
}

/// The cluster of each destination: its server URL, or its name when it gives none.
fn destination_clusters(spec: &Value) -> Vec<String> {
    spec.get("destinations")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|d| {
            let field = |f: &str| d.get(f).and_then(Value::as_str).filter(|v| !v.is_empty());
            field("server")
                .or_else(|| field("name"))
                .map(str::to_string)
        })
        .collect()
}

fn strings(spec: &Value, field: &str) -> Vec<String> {
    spec.get(field)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect()
}

/// Argo validates a project's role policies before saving it: a rule on a resource a project
/// role may not name (`projects`, `accounts`...) is refused, not stored to be ignored later.
fn check_role_policies(project: &Value) -> Result<()> {
    let mut problems = Vec::new();
    crate::rbac::policy::project_rules(project, &mut problems);
    let refused: Vec<&String> = problems
        .iter()
        .filter(|p| p.contains("project resource must be"))
        .collect();
    match refused.first() {
        None => Ok(()),
        Some(first) => Err(Error::InvalidArgument(format!(
            "invalid policy rule: {first}"
        ))),
    }
}
