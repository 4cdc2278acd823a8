//! Repository and credential-template Secrets of the control namespace, read and written as
//! Argo CD's `secretsRepositoryBackend` does (`util/db/repository_secrets.go`): found by URL
//! (and project), created under Argo's generated name with the `secret-type` label and the
//! `managed-by: argocd.argoproj.io` annotation, updated in place keeping unknown keys, deleted
//! only when Argo manages them (otherwise only the label is removed).

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, ListParams, ObjectMeta, PostParams};

use super::error::Error;
use super::fields::{RepoSpec, Role, same_url, secret_name};

pub use crate::argo_secrets::{MANAGED_BY, MANAGED_BY_ARGOCD};

/// One stored Secret, read.
#[derive(Debug, Clone)]
pub struct Stored {
    /// The Secret's name.
    pub name: String,
    /// What it describes.
    pub spec: RepoSpec,
    /// A value Argo could not read (shown as a configuration error), never the value itself.
    pub problem: Option<String>,
    /// The Secret itself.
    pub secret: Secret,
}

/// The repository Secrets of one namespace.
#[derive(Clone)]
pub struct RepoSecrets {
    api: Api<Secret>,
}

fn data_of(secret: &Secret) -> (BTreeMap<String, String>, Option<String>) {
    let mut problem = None;
    let mut out = BTreeMap::new();
    for (k, v) in secret.data.iter().flatten() {
        match String::from_utf8(v.0.clone()) {
            Ok(s) => {
                out.insert(k.clone(), s);
            }
            Err(_) => {
                problem.get_or_insert_with(|| format!("data.{k} is not UTF-8"));
            }
        }
    }
    for (k, v) in secret.string_data.iter().flatten() {
        out.insert(k.clone(), v.clone());
    }
    (out, problem)
}

fn read(role: Role, secret: Secret) -> Stored {
    let (data, bad) = data_of(&secret);
    let (spec, problem) = RepoSpec::from_data(role, &data);
    Stored {
        name: secret.metadata.name.clone().unwrap_or_default(),
        spec,
        problem: bad.or(problem),
        secret,
    }
}

fn to_bytes(data: BTreeMap<String, String>) -> BTreeMap<String, ByteString> {
    data.into_iter()
        .map(|(k, v)| (k, ByteString(v.into_bytes())))
        .collect()
}

impl RepoSecrets {
    /// The Secrets of `namespace`.
    pub fn new(client: kube::Client, namespace: &str) -> Self {
        Self {
            api: Api::namespaced(client, namespace),
        }
    }

    fn kube(context: String) -> impl FnOnce(kube::Error) -> Error {
        move |source| Error::Kube { context, source }
    }

    /// Every Secret of `role`, by name.
    pub async fn list(&self, role: Role) -> Result<Vec<Stored>, Error> {
        let selector = format!("{}={}", plumb_source::SECRET_TYPE_LABEL, role.label());
        let list = self
            .api
            .list(&ListParams::default().labels(&selector))
            .await
            .map_err(Self::kube(format!("listing {} Secrets", role.label())))?;
        let mut out: Vec<Stored> = list.items.into_iter().map(|s| read(role, s)).collect();
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }

    /// The repository Secret of `url` in `project` (Argo's `getRepositorySecret`); with
    /// `fallback`, a global one when the project has none.
    pub async fn repository(
        &self,
        url: &str,
        project: &str,
        fallback: bool,
    ) -> Result<Option<Stored>, Error> {
        let all = self.list(Role::Repository).await?;
        let mut global = None;
        for s in all {
            if !same_url(&s.spec.url, url) {
                continue;
            }
            if s.spec.project() == project {
                return Ok(Some(s));
            }
            if fallback && s.spec.project().is_empty() {
                global = Some(s);
            }
        }
        Ok(global)
    }

    /// The credential template whose URL is `url` (the same URL, not a prefix match).
    pub async fn template(&self, url: &str) -> Result<Option<Stored>, Error> {
        Ok(self
            .list(Role::Template)
            .await?
            .into_iter()
            .find(|s| same_url(&s.spec.url, url)))
    }

    /// Creates the Secret of `spec` under Argo's name. An existing Secret of that name is
    /// `AlreadyExists` when it carries the label, refused with Argo's message when it does not.
    pub async fn create(&self, spec: &RepoSpec) -> Result<(), Error> {
        let name = secret_name(spec.role, &spec.url, spec.project());
        let secret = Secret {
            metadata: ObjectMeta {
                name: Some(name.clone()),
                labels: Some(BTreeMap::from([(
                    plumb_source::SECRET_TYPE_LABEL.to_owned(),
                    spec.role.label().to_owned(),
                )])),
                annotations: Some(BTreeMap::from([(
                    MANAGED_BY.to_owned(),
                    MANAGED_BY_ARGOCD.to_owned(),
                )])),
                ..Default::default()
            },
            data: Some(to_bytes(spec.secret_data(&BTreeMap::new()))),
            ..Default::default()
        };
        match self.api.create(&PostParams::default(), &secret).await {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(s)) if s.code == 409 => {
                let existing = self
                    .api
                    .get(&name)
                    .await
                    .map_err(Self::kube(format!("reading Secret {name}")))?;
                let labelled = existing
                    .metadata
                    .labels
                    .as_ref()
                    .is_some_and(|l| l.contains_key(plumb_source::SECRET_TYPE_LABEL));
                if labelled {
                    Err(Error::AlreadyExists(format!(
                        "{} {:?} already exists",
                        spec.role.noun(),
                        spec.url
                    )))
                } else {
                    Err(Error::InvalidRequest(format!(
                        "secret {name:?} doesn't have the proper {:?} label: please fix the secret or delete it",
                        plumb_source::SECRET_TYPE_LABEL
                    )))
                }
            }
            Err(e) => Err(Self::kube(format!("creating Secret {name}"))(e)),
        }
    }

    /// Writes `spec` over the Secret `existing` (Argo's `UpdateRepository`: keys not in the
    /// spec stay).
    pub async fn update(&self, existing: &Stored, spec: &RepoSpec) -> Result<(), Error> {
        let (old, _) = data_of(&existing.secret);
        let mut secret = existing.secret.clone();
        secret.string_data = None;
        secret.data = Some(to_bytes(spec.secret_data(&old)));
        secret
            .metadata
            .labels
            .get_or_insert_with(BTreeMap::new)
            .insert(
                plumb_source::SECRET_TYPE_LABEL.to_owned(),
                spec.role.label().to_owned(),
            );
        self.api
            .replace(&existing.name, &PostParams::default(), &secret)
            .await
            .map_err(Self::kube(format!("updating Secret {}", existing.name)))?;
        Ok(())
    }

    /// Deletes the Secret when Argo manages it; otherwise removes only its `secret-type` label
    /// (Argo's `deleteSecret`), so a Secret written by hand is not lost.
    pub async fn delete(&self, existing: &Stored) -> Result<(), Error> {
        crate::argo_secrets::delete_or_unlabel(&self.api, &existing.secret)
            .await
            .map_err(Self::kube(format!("deleting Secret {}", existing.name)))
    }
}
