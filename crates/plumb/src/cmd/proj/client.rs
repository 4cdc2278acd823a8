//! The Kubernetes side of the `plumb proj` commands: AppProjects of the control namespace read,
//! listed, created and replaced with the user's kubeconfig, plus the repository and cluster
//! Secrets scoped to a project (what `argocd proj get` shows as scoped repositories and
//! clusters).

use anyhow::{Context, Result, anyhow};
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DynamicObject, ListParams, PostParams};
use plumb_model::application::AppProject;

use crate::cmd::app::{ConnArgs, is_not_found, resource};
use crate::cmd::remote::{ServerClient, enc};

/// The label naming an Argo CD Secret's role (`repository`, `cluster`, ...).
const SECRET_TYPE_LABEL: &str = "argocd.argoproj.io/secret-type";

/// Repositories and clusters whose Secrets name a project (`project` key).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scoped {
    /// Repository URLs (`url` of `repository` Secrets).
    pub repositories: Vec<String>,
    /// Cluster URLs (`server` of `cluster` Secrets).
    pub clusters: Vec<String>,
}

/// What a create request found.
#[derive(Debug)]
pub enum Created {
    /// The project was created.
    Created,
    /// A project of that name exists already (here it is).
    Exists(Box<AppProject>),
}

/// AppProjects of one control namespace.
pub struct ProjClient {
    pub(super) backend: Backend,
    namespace: String,
}

pub(super) struct KubeBackend {
    pub(super) client: kube::Client,
    pub(super) projects: Api<DynamicObject>,
}

pub(super) enum Backend {
    Kube(Box<KubeBackend>),
    /// `plumb server`: `GET/POST /api/v1/projects`, `GET/PUT /api/v1/projects/{name}`.
    Server(ServerClient),
}

impl std::fmt::Debug for ProjClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProjClient")
            .field("namespace", &self.namespace)
            .finish_non_exhaustive()
    }
}

fn to_project(obj: DynamicObject) -> Result<AppProject> {
    let name = obj.metadata.name.clone().unwrap_or_default();
    let namespace = obj.metadata.namespace.clone().unwrap_or_default();
    let value = serde_json::to_value(obj).context("encoding the AppProject")?;
    serde_json::from_value(value).with_context(|| format!("reading AppProject {namespace}/{name}"))
}

pub(super) fn status_is(err: &kube::Error, code: u16, reason: &str) -> bool {
    matches!(err, kube::Error::Api(s) if s.code == code && s.reason == reason)
}

fn secret_value(secret: &Secret, key: &str) -> Option<String> {
    if let Some(v) = secret.data.as_ref().and_then(|d| d.get(key)) {
        return String::from_utf8(v.0.clone()).ok();
    }
    secret
        .string_data
        .as_ref()
        .and_then(|d| d.get(key))
        .cloned()
}

impl ProjClient {
    /// Connects with the kubeconfig flags (no request is made yet).
    pub async fn connect(args: &ConnArgs) -> Result<Self> {
        let source = plumb_kube::KubeconfigSource::from_option(args.kubeconfig.as_deref());
        let client = plumb_kube::connect(&source)
            .await
            .context("connecting to the cluster")?;
        let projects = Api::namespaced_with(
            client.clone(),
            &args.app_namespace,
            &resource(AppProject::KIND, "appprojects"),
        );
        Ok(Self {
            backend: Backend::Kube(Box::new(KubeBackend { client, projects })),
            namespace: args.app_namespace.clone(),
        })
    }

    /// Projects through `plumb server` (its control namespace, from its settings).
    pub async fn through_server(server: ServerClient, fallback_namespace: &str) -> Result<Self> {
        let namespace = server
            .get("/api/v1/settings")
            .await?
            .get("controllerNamespace")
            .and_then(serde_json::Value::as_str)
            .unwrap_or(fallback_namespace)
            .to_string();
        Ok(Self {
            backend: Backend::Server(server),
            namespace,
        })
    }

    fn projects(&self) -> Option<&Api<DynamicObject>> {
        match &self.backend {
            Backend::Kube(k) => Some(&k.projects),
            Backend::Server(_) => None,
        }
    }

    async fn server_get(&self, s: &ServerClient, name: &str) -> Result<Option<AppProject>> {
        let (status, v) = s
            .call(
                reqwest::Method::GET,
                &format!("/api/v1/projects/{}", enc(name)),
                None,
            )
            .await?;
        match status {
            200 => serde_json::from_value(v)
                .with_context(|| format!("reading AppProject {name}"))
                .map(Some),
            404 => Ok(None),
            _ => Err(s.error(status, &v)),
        }
    }

    /// The control namespace.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// One project, or an error naming it when it does not exist.
    pub async fn get(&self, name: &str) -> Result<AppProject> {
        let projects = match &self.backend {
            Backend::Kube(k) => &k.projects,
            Backend::Server(s) => {
                return self.server_get(s, name).await?.ok_or_else(|| {
                    anyhow!(
                        "project '{name}' not found in namespace '{}'",
                        self.namespace
                    )
                });
            }
        };
        match projects.get(name).await {
            Ok(obj) => to_project(obj),
            Err(e) if is_not_found(&e) => Err(anyhow!(
                "project '{name}' not found in namespace '{}'",
                self.namespace
            )),
            Err(e) => {
                Err(e).with_context(|| format!("reading AppProject {}/{name}", self.namespace))
            }
        }
    }

    /// Every project of the control namespace, sorted by name.
    pub async fn list(&self) -> Result<Vec<AppProject>> {
        let projects = match &self.backend {
            Backend::Kube(k) => &k.projects,
            Backend::Server(s) => {
                let answer = s.get("/api/v1/projects").await?;
                let mut items = answer
                    .get("items")
                    .and_then(serde_json::Value::as_array)
                    .cloned()
                    .unwrap_or_default()
                    .into_iter()
                    .map(|v| serde_json::from_value(v).context("reading an AppProject"))
                    .collect::<Result<Vec<AppProject>>>()?;
                items.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
                return Ok(items);
            }
        };
        let list = projects
            .list(&ListParams::default())
            .await
            .with_context(|| format!("listing AppProjects in namespace '{}'", self.namespace))?;
        let mut projects = list
            .items
            .into_iter()
            .map(to_project)
            .collect::<Result<Vec<_>>>()?;
        projects.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
        Ok(projects)
    }

    /// Creates a project from its JSON; when one of that name exists, returns it instead.
    pub async fn create(&self, project: &serde_json::Value) -> Result<Created> {
        let name = project
            .pointer("/metadata/name")
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default();
        if let Backend::Server(s) = &self.backend {
            if let Some(existing) = self.server_get(s, name).await? {
                return Ok(Created::Exists(Box::new(existing)));
            }
            s.post("/api/v1/projects", &serde_json::json!({"project": project}))
                .await
                .with_context(|| format!("creating AppProject {name}"))?;
            return Ok(Created::Created);
        }
        let Some(projects) = self.projects() else {
            return Err(anyhow!("no Kubernetes client"));
        };
        let object: DynamicObject =
            serde_json::from_value(project.clone()).context("encoding the AppProject")?;
        match projects.create(&PostParams::default(), &object).await {
            Ok(_) => Ok(Created::Created),
            Err(e) if status_is(&e, 409, "AlreadyExists") => {
                Ok(Created::Exists(Box::new(self.get(name).await?)))
            }
            Err(e) => {
                Err(e).with_context(|| format!("creating AppProject {}/{name}", self.namespace))
            }
        }
    }

    /// The repositories and clusters whose Secrets are scoped to `project`, in the API server's
    /// order; `None` when the kubeconfig's user may not list Secrets.
    pub async fn scoped(&self, project: &str) -> Result<Option<Scoped>> {
        let client = match &self.backend {
            Backend::Kube(k) => &k.client,
            // The server does not serve repository and cluster Secrets: not shown.
            Backend::Server(_) => return Ok(None),
        };
        let secrets: Api<Secret> = Api::namespaced(client.clone(), &self.namespace);
        let params =
            ListParams::default().labels(&format!("{SECRET_TYPE_LABEL} in (repository,cluster)"));
        let list = match secrets.list(&params).await {
            Ok(list) => list,
            Err(e) if status_is(&e, 403, "Forbidden") => return Ok(None),
            Err(e) => {
                return Err(e).with_context(|| {
                    format!(
                        "listing repository and cluster Secrets in namespace '{}'",
                        self.namespace
                    )
                });
            }
        };
        let mut scoped = Scoped::default();
        for secret in &list.items {
            if secret_value(secret, "project").as_deref() != Some(project) {
                continue;
            }
            let kind = secret
                .metadata
                .labels
                .as_ref()
                .and_then(|l| l.get(SECRET_TYPE_LABEL))
                .map(String::as_str);
            match kind {
                Some("repository") => {
                    scoped.repositories.extend(secret_value(secret, "url"));
                }
                Some("cluster") => scoped.clusters.extend(secret_value(secret, "server")),
                _ => {}
            }
        }
        Ok(Some(scoped))
    }
}
