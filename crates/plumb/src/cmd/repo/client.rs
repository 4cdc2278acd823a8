//! What `plumb repo`, `plumb repocreds` and `plumb cert` call: the repository Secrets and
//! certificate ConfigMaps of the control namespace through `plumb_app::repo_admin` with the
//! user's kubeconfig (core mode, like `argocd --core`), or `plumb server`'s
//! `RepositoryService`, `RepoCredsService` and `CertificateService` routes. Both take and give
//! Argo's JSON objects, so a verb never asks which one it has.

use anyhow::{Context, Result};
use plumb_app::repo_admin::{CertAdmin, RepoAdmin, RepoSpec, Role, Selector};
use serde_json::{Value, json};

use crate::cmd::app::ConnArgs;
use crate::cmd::remote::{ServerClient, ServerFlags, enc};

/// The client of one invocation.
pub enum AdminClient {
    /// Core mode: the Secrets and ConfigMaps themselves.
    Kube {
        /// Repositories and templates.
        repos: Box<RepoAdmin>,
        /// Certificates.
        certs: Box<CertAdmin>,
    },
    /// Through `plumb server`.
    Server(ServerClient),
}

fn selector_query(sel: &Selector) -> String {
    format!(
        "hostNamePattern={}&certType={}&certSubType={}",
        enc(&sel.host_pattern),
        enc(&sel.cert_type),
        enc(&sel.cert_sub_type)
    )
}

fn items(v: Value) -> Vec<Value> {
    match v.get("items") {
        Some(Value::Array(items)) => items.clone(),
        _ => Vec::new(),
    }
}

impl AdminClient {
    /// Through the server when a context is set (or `--server` given), unless `--core`.
    pub async fn connect(conn: &ConnArgs, server: &ServerFlags) -> Result<Self> {
        if let Some(server) = ServerClient::from_flags(server)? {
            return Ok(Self::Server(server));
        }
        let source = plumb_kube::KubeconfigSource::from_option(conn.kubeconfig.as_deref());
        let client = plumb_kube::connect(&source)
            .await
            .context("connecting to the cluster")?;
        let ns = conn.control_namespace();
        Ok(Self::Kube {
            repos: Box::new(RepoAdmin::new(client.clone(), ns)),
            certs: Box::new(CertAdmin::new(client, ns)),
        })
    }

    /// `argocd repo add`: the connection check (Argo's `ValidateAccess`), then
    /// `CreateRepository`. Answers `{repo, type, name}`.
    pub async fn add_repository(&self, repo: &Value, upsert: bool) -> Result<Value> {
        match self {
            Self::Kube { repos, .. } => {
                let spec = RepoSpec::from_request(Role::Repository, repo)?;
                repos.check(&spec).await?;
                Ok(repos.create_repository(&spec, upsert).await?)
            }
            Self::Server(s) => {
                let url = repo["repo"].as_str().unwrap_or_default();
                let mut access = repo.clone();
                for (from, to) in [
                    ("enableOCI", "enableOci"),
                    ("insecureOCIForceHttp", "insecureOciForceHttp"),
                ] {
                    if let Some(v) = access.as_object_mut().and_then(|o| o.remove(from)) {
                        access[to] = v;
                    }
                }
                s.post(
                    &format!("/api/v1/repositories/{}/validate", enc(url)),
                    &access,
                )
                .await?;
                s.post(&format!("/api/v1/repositories?upsert={upsert}"), repo)
                    .await
            }
        }
    }

    /// `argocd repo list` (with `refresh`: connection states checked again).
    pub async fn list_repositories(&self, refresh: bool) -> Result<Vec<Value>> {
        match self {
            Self::Kube { repos, .. } => {
                let all = repos.repositories().await?;
                let described = repos.describe(&all, refresh).await?;
                Ok(described.into_iter().map(|d| d.value).collect())
            }
            Self::Server(s) => Ok(items(
                s.get(&format!("/api/v1/repositories?forceRefresh={refresh}"))
                    .await?,
            )),
        }
    }

    /// `argocd repo get`.
    pub async fn get_repository(&self, url: &str, project: &str, refresh: bool) -> Result<Value> {
        match self {
            Self::Kube { repos, .. } => {
                let all = repos.repositories().await?;
                let found = RepoAdmin::pick(&all, url, project)
                    .with_context(|| format!("repo '{url}' not found"))?;
                let described = repos.describe(std::slice::from_ref(found), refresh).await?;
                Ok(described
                    .into_iter()
                    .next()
                    .map(|d| d.value)
                    .unwrap_or_default())
            }
            Self::Server(s) => {
                s.get(&format!(
                    "/api/v1/repositories/{}?appProject={}&forceRefresh={refresh}",
                    enc(url),
                    enc(project)
                ))
                .await
            }
        }
    }

    /// `argocd repo rm`.
    pub async fn remove_repository(&self, url: &str, project: &str) -> Result<()> {
        match self {
            Self::Kube { repos, .. } => {
                let all = repos.repositories().await?;
                let found = RepoAdmin::pick(&all, url, project).with_context(|| {
                    format!("repository not found for url {url:?} and project {project:?}")
                })?;
                Ok(repos.delete_repository(found).await?)
            }
            Self::Server(s) => {
                s.delete(&format!(
                    "/api/v1/repositories/{}?appProject={}",
                    enc(url),
                    enc(project)
                ))
                .await?;
                Ok(())
            }
        }
    }

    /// `argocd repocreds add`. Answers `{url}`.
    pub async fn add_template(&self, creds: &Value, upsert: bool) -> Result<Value> {
        match self {
            Self::Kube { repos, .. } => {
                let spec = RepoSpec::from_request(Role::Template, creds)?;
                Ok(repos.create_template(&spec, upsert).await?)
            }
            Self::Server(s) => {
                s.post(&format!("/api/v1/repocreds?upsert={upsert}"), creds)
                    .await
            }
        }
    }

    /// `argocd repocreds list`.
    pub async fn list_templates(&self) -> Result<Vec<Value>> {
        match self {
            Self::Kube { repos, .. } => Ok(repos
                .templates()
                .await?
                .iter()
                .map(|t| t.spec.sanitized(false))
                .collect()),
            Self::Server(s) => Ok(items(s.get("/api/v1/repocreds").await?)),
        }
    }

    /// `argocd repocreds rm`.
    pub async fn remove_template(&self, url: &str) -> Result<()> {
        match self {
            Self::Kube { repos, .. } => Ok(repos.delete_template(url).await?),
            Self::Server(s) => {
                s.delete(&format!("/api/v1/repocreds/{}", enc(url))).await?;
                Ok(())
            }
        }
    }

    /// `argocd cert add-ssh` / `add-tls`: the items created or changed.
    pub async fn add_certificates(&self, list: Vec<Value>, upsert: bool) -> Result<Vec<Value>> {
        match self {
            Self::Kube { certs, .. } => Ok(certs.create(&list, upsert).await?),
            Self::Server(s) => Ok(items(
                s.post(
                    &format!("/api/v1/certificates?upsert={upsert}"),
                    &json!({"items": list}),
                )
                .await?,
            )),
        }
    }

    /// `argocd cert list`.
    pub async fn list_certificates(&self, sel: &Selector) -> Result<Vec<Value>> {
        match self {
            Self::Kube { certs, .. } => Ok(certs.list(sel).await?),
            Self::Server(s) => Ok(items(
                s.get(&format!("/api/v1/certificates?{}", selector_query(sel)))
                    .await?,
            )),
        }
    }

    /// `argocd cert rm`: the items removed.
    pub async fn remove_certificates(&self, sel: &Selector) -> Result<Vec<Value>> {
        match self {
            Self::Kube { certs, .. } => Ok(certs.remove(sel).await?),
            Self::Server(s) => Ok(items(
                s.delete(&format!("/api/v1/certificates?{}", selector_query(sel)))
                    .await?,
            )),
        }
    }
}

/// A runtime for one command.
pub fn runtime() -> Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?)
}
