//! The Applications a set wants, from the generators and templates, and Argo's validation of
//! them (`validateGeneratedApplications`): a name, no duplicate, an existing project, a
//! destination that names a known cluster.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, ApiResource, DynamicObject, ListParams};
use plumb_model::application::Application;
use plumb_model::applicationset::{ApplicationSet, condition::reason};

use crate::{Context, GenerateError};

/// What the generators and templates produced for one set.
#[derive(Debug, Default)]
pub struct Desired {
    /// The generated Applications, in generation order (partial when generation failed).
    pub applications: Vec<Application>,
    /// The first failure (Argo stops at it: nothing is created, updated or deleted).
    pub failure: Option<Failure>,
    /// Every generator and template error, for the deletion brake.
    pub errors: Vec<String>,
    /// Names generated more than once (Argo's validation error; none of them is written).
    pub duplicates: BTreeMap<String, String>,
}

/// Why generation failed: Argo's condition reason and the message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// `ApplicationGenerationFromParamsError` or `RenderTemplateParamsError`.
    pub reason: &'static str,
    /// What failed, naming the generator, template field or parameter.
    pub message: String,
}

/// Generates the set's Applications ([`crate::generate`]): the first generator or template
/// error is the failure, with Argo's reason; a repeated name is a validation error.
pub async fn generate(set: &ApplicationSet, ctx: &Context) -> Desired {
    let generated = crate::generate(set, ctx).await;
    let mut out = Desired {
        applications: generated.applications,
        ..Desired::default()
    };
    for e in &generated.errors {
        let reason = match e {
            GenerateError::Generator { .. } => GENERATOR_ERROR,
            GenerateError::Template { .. } => TEMPLATE_ERROR,
            GenerateError::DuplicateName { name, .. } => {
                out.duplicates.insert(name.clone(), e.to_string());
                continue;
            }
        };
        out.errors.push(e.to_string());
        if out.failure.is_none() {
            out.failure = Some(Failure {
                reason,
                message: e.to_string(),
            });
        }
    }
    out
}

/// How long until the set is reconciled again without a trigger (`requeueAfterSeconds` and
/// the generators' defaults, `default` for git, OCI and clusterDecisionResource); `None`: only
/// on changes.
pub fn requeue_after(
    set: &ApplicationSet,
    default: std::time::Duration,
) -> Option<std::time::Duration> {
    crate::requeue_after(set, default)
}

/// The validation errors of `apps`, by Application name (Argo keeps the valid ones going).
/// `Err`: the checks themselves could not run (the API failed).
pub async fn validate(
    set: &ApplicationSet,
    apps: &[Application],
    ctx: &Context,
) -> Result<BTreeMap<String, String>, kube::Error> {
    let mut errors = BTreeMap::new();
    let mut names = BTreeSet::new();
    let mut projects: BTreeMap<String, bool> = BTreeMap::new();
    let mut clusters: Option<Clusters> = None;
    for (i, app) in apps.iter().enumerate() {
        let name = app.metadata.name.clone().unwrap_or_default();
        if name.is_empty() {
            errors.insert(format!("#{i}"), format!("ApplicationSet {} contains an application with no name; a name must be set in the template's metadata.name or via a templatePatch (generateName is not supported)", set.name()));
            continue;
        }
        if !names.insert(name.clone()) {
            errors.insert(
                name.clone(),
                format!(
                    "ApplicationSet {} contains applications with duplicate name: {name}",
                    set.name()
                ),
            );
            continue;
        }
        let project = app.spec.project.clone();
        let exists = match projects.get(&project) {
            Some(e) => *e,
            None => {
                let e = project_exists(ctx, &project).await?;
                projects.insert(project.clone(), e);
                e
            }
        };
        if !exists {
            errors.insert(
                name,
                format!("application references project {project} which does not exist"),
            );
            continue;
        }
        if clusters.is_none() {
            clusters = Some(Clusters::list(ctx).await?);
        }
        if let Some(Err(e)) = clusters.as_ref().map(|c| c.check(app)) {
            errors.insert(
                name,
                format!("application destination spec is invalid: {e}"),
            );
        }
    }
    Ok(errors)
}

async fn project_exists(ctx: &Context, name: &str) -> Result<bool, kube::Error> {
    let resource = ApiResource {
        group: "argoproj.io".into(),
        version: "v1alpha1".into(),
        api_version: "argoproj.io/v1alpha1".into(),
        kind: "AppProject".into(),
        plural: "appprojects".into(),
    };
    let api: Api<DynamicObject> =
        Api::namespaced_with(ctx.client.clone(), &ctx.control_namespace, &resource);
    Ok(api.get_opt(name).await?.is_some())
}

/// The registered clusters: the in-cluster destination and the cluster Secrets.
pub struct Clusters {
    /// (server, name) of each.
    pub known: Vec<(String, String)>,
}

/// Argo's in-cluster destination.
pub const IN_CLUSTER_SERVER: &str = "https://kubernetes.default.svc";
/// Its name.
pub const IN_CLUSTER_NAME: &str = "in-cluster";
/// The label of cluster Secrets.
pub const CLUSTER_SECRET_SELECTOR: &str = "argocd.argoproj.io/secret-type=cluster";

impl Clusters {
    /// Lists the cluster Secrets of the control namespace.
    pub async fn list(ctx: &Context) -> Result<Self, kube::Error> {
        let api: Api<Secret> = Api::namespaced(ctx.client.clone(), &ctx.control_namespace);
        let secrets = api
            .list(&ListParams::default().labels(CLUSTER_SECRET_SELECTOR))
            .await?;
        let mut known = vec![(IN_CLUSTER_SERVER.to_string(), IN_CLUSTER_NAME.to_string())];
        for s in secrets.items {
            let field = |k: &str| {
                s.data
                    .as_ref()
                    .and_then(|d| d.get(k))
                    .and_then(|b| String::from_utf8(b.0.clone()).ok())
                    .unwrap_or_default()
            };
            known.push((field("server"), field("name")));
        }
        Ok(Self { known })
    }

    /// Whether `app`'s destination names a known cluster (Argo's `GetDestinationCluster`).
    pub fn check(&self, app: &Application) -> Result<(), String> {
        let d = &app.spec.destination;
        let server = d.server.as_deref().unwrap_or_default();
        let name = d.name.as_deref().unwrap_or_default();
        match (server.is_empty(), name.is_empty()) {
            (true, true) => Err("Destination server missing from app spec".to_string()),
            (false, false) => Err(
                "application destination can't have both name and server defined: {name} {server}"
                    .replace("{name}", name)
                    .replace("{server}", server),
            ),
            (false, true) => {
                if self.known.iter().any(|(s, _)| s == server) {
                    Ok(())
                } else {
                    Err(format!(
                        "error getting cluster by server {server:?}: rpc error: code = NotFound desc = cluster {server:?} not found"
                    ))
                }
            }
            (true, false) => {
                if self.known.iter().any(|(_, n)| n == name) {
                    Ok(())
                } else {
                    Err(format!("there are no clusters with this name: {name}"))
                }
            }
        }
    }

    /// Whether `server` or `name` is a known cluster (a deleted one's Applications lose the
    /// resources finalizer before deletion, as Argo does).
    pub fn knows(&self, server: &str, name: &str) -> bool {
        self.known
            .iter()
            .any(|(s, n)| (!server.is_empty() && s == server) || (!name.is_empty() && n == name))
    }
}

/// The condition reason of a generator failure.
pub const GENERATOR_ERROR: &str = reason::APPLICATION_PARAMS_GENERATION_ERROR;
/// The condition reason of a template failure.
pub const TEMPLATE_ERROR: &str = reason::RENDER_TEMPLATE_PARAMS_ERROR;
