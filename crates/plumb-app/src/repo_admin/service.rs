//! What `RepositoryService` and `RepoCredsService` do, whoever asks: the API server (after its
//! RBAC checks) and the CLI in core mode (with the user's kubeconfig). Argo CD
//! `server/repository/repository.go` and `server/repocreds/repocreds.go`.

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::Api;
use plumb_source::{KNOWN_HOSTS_CM, KnownHosts, RepoCredentials, TlsCerts};
use serde_json::{Map, Value, json};

use super::connection::{self, Trust};
use super::error::Error;
use super::fields::{RepoSpec, Role, same_url};
use super::store::{RepoSecrets, Stored};

/// Argo CD's ConfigMap of repository CA certificates.
const TLS_CERTS_CM: &str = crate::repositories::TLS_CERTS_CM;

/// Repositories and credential templates of one control namespace.
#[derive(Clone)]
pub struct RepoAdmin {
    secrets: RepoSecrets,
    client: kube::Client,
    namespace: String,
}

/// A repository as answered: masked, with its connection state.
#[derive(Debug, Clone)]
pub struct Described {
    /// The project it is scoped to (empty: global).
    pub project: String,
    /// Its URL.
    pub url: String,
    /// Argo's sanitized `Repository` JSON.
    pub value: Value,
}

impl RepoAdmin {
    /// The repositories of `namespace`.
    pub fn new(client: kube::Client, namespace: &str) -> Self {
        Self {
            secrets: RepoSecrets::new(client.clone(), namespace),
            client,
            namespace: namespace.to_owned(),
        }
    }

    /// The Secrets themselves.
    pub fn secrets(&self) -> &RepoSecrets {
        &self.secrets
    }

    /// One ConfigMap of the control namespace as JSON (none when it does not exist).
    async fn config_map(&self, name: &str) -> Result<Option<Value>, Error> {
        let api: Api<ConfigMap> = Api::namespaced(self.client.clone(), &self.namespace);
        let cm = api.get_opt(name).await.map_err(|source| Error::Kube {
            context: format!("reading ConfigMap {}/{name}", self.namespace),
            source,
        })?;
        Ok(cm.and_then(|cm| serde_json::to_value(cm).ok()))
    }

    /// The CA certificates of `argocd-tls-certs-cm` (none when it does not exist).
    pub async fn tls_certs(&self) -> Result<TlsCerts, Error> {
        Ok(self
            .config_map(TLS_CERTS_CM)
            .await?
            .map(|v| TlsCerts::from_config_map(&v))
            .unwrap_or_default())
    }

    /// What a connection check trusts: the CA certificates and the SSH known hosts.
    pub async fn trust(&self) -> Result<Trust, Error> {
        Ok(Trust {
            certs: self.tls_certs().await?,
            known_hosts: self
                .config_map(KNOWN_HOSTS_CM)
                .await?
                .map(|v| KnownHosts::from_config_map(&v))
                .unwrap_or_default(),
        })
    }

    /// Checks the connection of `spec` as `repo add` does before storing it.
    pub async fn check(&self, spec: &RepoSpec) -> Result<(), Error> {
        let templates = self.template_specs().await?;
        connection::check(spec, &templates, self.trust().await?).await
    }

    async fn template_specs(&self) -> Result<Vec<RepoSpec>, Error> {
        Ok(self
            .secrets
            .list(Role::Template)
            .await?
            .into_iter()
            .map(|s| s.spec)
            .collect())
    }

    /// Argo's `CreateRepository`: a global repository's connection is checked first; an
    /// existing one with the same spec is fine, a different one is replaced with `upsert` and
    /// refused without. Answers `{repo, type, name}`.
    pub async fn create_repository(&self, spec: &RepoSpec, upsert: bool) -> Result<Value, Error> {
        if spec.project().is_empty() {
            self.check(spec).await?;
        }
        self.store(spec, upsert).await?;
        let mut out = Map::new();
        out.insert("repo".into(), json!(spec.url));
        for k in ["type", "name"] {
            if let Some(v) = spec.get(k) {
                out.insert(k.into(), json!(v));
            }
        }
        Ok(Value::Object(out))
    }

    /// Argo's `UpdateRepository` (and `UpdateRepositoryCredentials`): written over the stored
    /// one, created when there is none.
    pub async fn update(&self, spec: &RepoSpec) -> Result<(), Error> {
        match self.find_exact(spec).await? {
            Some(existing) => self.secrets.update(&existing, spec).await,
            None => self.secrets.create(spec).await,
        }
    }

    async fn find_exact(&self, spec: &RepoSpec) -> Result<Option<Stored>, Error> {
        match spec.role {
            Role::Repository => {
                self.secrets
                    .repository(&spec.url, spec.project(), false)
                    .await
            }
            Role::Template => self.secrets.template(&spec.url).await,
        }
    }

    async fn store(&self, spec: &RepoSpec, upsert: bool) -> Result<(), Error> {
        let Some(existing) = self.find_exact(spec).await? else {
            return self.secrets.create(spec).await;
        };
        let diff = existing.spec.differences(spec);
        if diff.is_empty() {
            return Ok(());
        }
        if upsert {
            return self.secrets.update(&existing, spec).await;
        }
        Err(Error::InvalidRequest(format!(
            "existing {} spec is different; use upsert flag to force update; difference in keys {:?}",
            spec.role.noun(),
            diff.join(",")
        )))
    }

    /// Argo's `CreateRepositoryCredentials`: no connection check. Answers `{url}`.
    pub async fn create_template(&self, spec: &RepoSpec, upsert: bool) -> Result<Value, Error> {
        self.store(spec, upsert).await?;
        Ok(json!({"url": spec.url}))
    }

    /// Every repository Secret, by name.
    pub async fn repositories(&self) -> Result<Vec<Stored>, Error> {
        self.secrets.list(Role::Repository).await
    }

    /// Every credential template Secret, by name.
    pub async fn templates(&self) -> Result<Vec<Stored>, Error> {
        self.secrets.list(Role::Template).await
    }

    /// Argo's `getRepository`: the repository of `url` among `items`; with several (scoped to
    /// different projects) the one of `project`.
    pub fn pick<'a>(items: &'a [Stored], url: &str, project: &str) -> Option<&'a Stored> {
        let found: Vec<&Stored> = items
            .iter()
            .filter(|s| same_url(&s.spec.url, url))
            .collect();
        if found.len() == 1 && project.is_empty() {
            return found.first().copied();
        }
        found.into_iter().find(|s| s.spec.project() == project)
    }

    /// The answers for `items`: masked, credentials inherited from templates marked, connection
    /// states checked (cached unless `refresh`), sorted by project then URL as Argo sorts.
    pub async fn describe(&self, items: &[Stored], refresh: bool) -> Result<Vec<Described>, Error> {
        let templates = self.template_specs().await?;
        let trust = self.trust().await?;
        let template_creds: Vec<(RepoCredentials, &RepoSpec)> = templates
            .iter()
            .filter_map(|t| Some((RepoCredentials::from_secret(&t.as_secret_json()).ok()?, t)))
            .collect();
        let just_creds: Vec<RepoCredentials> =
            template_creds.iter().map(|(c, _)| c.clone()).collect();
        let mut out = Vec::new();
        for s in items {
            let inherited = (!s.spec.has_credentials())
                .then(|| RepoCredentials::select(&just_creds, &s.spec.url))
                .flatten()
                .and_then(|c| {
                    template_creds
                        .iter()
                        .find(|(t, _)| t == c)
                        .map(|(_, spec)| *spec)
                });
            let mut value = s.spec.sanitized(inherited.is_some());
            if let Some(user) = inherited.and_then(|t| t.get("username")) {
                value["username"] = json!(user);
            }
            value["connectionState"] = match &s.problem {
                Some(p) => {
                    tracing::warn!(secret = %s.name, "repository Secret cannot be read: {p}");
                    json!({"status": "Failed",
                        "message": "Configuration error - please check the server logs",
                        "attemptedAt": jiff::Timestamp::now().to_string()})
                }
                None => {
                    let version = s
                        .secret
                        .metadata
                        .resource_version
                        .clone()
                        .unwrap_or_default();
                    let key = format!("{}/{}/{version}", self.namespace, s.name);
                    connection::state(&key, &s.spec, &templates, trust.clone(), refresh).await
                }
            };
            out.push(Described {
                project: s.spec.project().to_owned(),
                url: s.spec.url.clone(),
                value,
            });
        }
        out.sort_by(|a, b| {
            format!("{}/{}", a.project, a.url).cmp(&format!("{}/{}", b.project, b.url))
        });
        Ok(out)
    }

    /// Argo's `DeleteRepositoryCredentials`: the template of exactly `url`.
    pub async fn delete_template(&self, url: &str) -> Result<(), Error> {
        let Some(existing) = self.secrets.template(url).await? else {
            return Err(Error::NotFound(format!(
                "repository credentials {:?} not found",
                plumb_source::strip_url_credentials(url)
            )));
        };
        self.secrets.delete(&existing).await
    }

    /// Deletes a repository found with [`RepoAdmin::pick`].
    pub async fn delete_repository(&self, existing: &Stored) -> Result<(), Error> {
        self.secrets.delete(existing).await
    }
}
