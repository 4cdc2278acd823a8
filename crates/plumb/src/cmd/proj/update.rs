//! Read, change, write: how every `plumb proj` verb that changes a project writes it. The change
//! is made on the project's JSON (fields Plumb does not model are kept), the result is checked
//! as Argo's API server checks it (`plumb_policy::project::validate_project`), and the write is
//! guarded by `metadata.resourceVersion`: on a conflict the project is read again and the change
//! made again, so two administrators editing at once both land.

use anyhow::{Context, Result, anyhow, bail};
use kube::api::{DynamicObject, PostParams};
use plumb_model::application::AppProject;
use serde_json::Value;

use super::client::{Backend, ProjClient, status_is};
use crate::cmd::app::is_not_found;
use crate::cmd::remote::enc;

/// How many times a conflicting write is tried again before giving up.
const ATTEMPTS: usize = 10;

/// What a change did to the project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// The project changed: write it.
    Write,
    /// Nothing to write (Argo prints something and stops).
    Keep,
}

/// The array `spec.<field>`, created empty when absent.
pub fn spec_list<'a>(project: &'a mut Value, field: &str) -> &'a mut Vec<Value> {
    let spec = &mut project["spec"];
    if !spec.is_object() {
        *spec = Value::Object(serde_json::Map::new());
    }
    let list = &mut spec[field];
    if !list.is_array() {
        *list = Value::Array(Vec::new());
    }
    match list {
        Value::Array(items) => items,
        _ => unreachable!("set to an array above"),
    }
}

/// A string field of a JSON object, `""` when absent (Go's zero value).
pub fn text<'a>(v: &'a Value, field: &str) -> &'a str {
    v.get(field).and_then(Value::as_str).unwrap_or_default()
}

/// Drops empty arrays and objects from the spec, as Go's `omitempty` does when Argo writes.
fn tidy(project: &mut Value) {
    if let Some(spec) = project.get_mut("spec").and_then(Value::as_object_mut) {
        spec.retain(|_, v| match v {
            Value::Array(a) => !a.is_empty(),
            _ => true,
        });
    }
}

fn checked(project: &Value) -> Result<AppProject> {
    let typed: AppProject =
        serde_json::from_value(project.clone()).context("reading the changed AppProject")?;
    plumb_policy::project::validate_project(&typed)?;
    Ok(typed)
}

impl ProjClient {
    /// Reads project `name`, applies `change`, and writes the result when it asks to; returns
    /// what the last attempt's change answered.
    pub async fn update(
        &self,
        name: &str,
        mut change: impl FnMut(&mut Value) -> Result<Change>,
    ) -> Result<Change> {
        for _ in 0..ATTEMPTS {
            let mut project = self.read_value(name).await?;
            let before = project.clone();
            if change(&mut project)? == Change::Keep {
                return Ok(Change::Keep);
            }
            tidy(&mut project);
            let after = checked(&project)?;
            self.check_applications(&before, &after).await?;
            if self.write_value(name, &project).await? {
                return Ok(Change::Write);
            }
        }
        bail!("could not update project '{name}': it kept changing while being updated")
    }

    /// The project as its JSON.
    pub async fn read_value(&self, name: &str) -> Result<Value> {
        match &self.backend {
            Backend::Server(s) => {
                let (status, v) = s
                    .call(
                        reqwest::Method::GET,
                        &format!("/api/v1/projects/{}", enc(name)),
                        None,
                    )
                    .await?;
                match status {
                    200 => Ok(v),
                    404 => Err(self.missing(name)),
                    _ => Err(s.error(status, &v)),
                }
            }
            Backend::Kube(k) => match k.projects.get(name).await {
                Ok(obj) => serde_json::to_value(obj).context("encoding the AppProject"),
                Err(e) if is_not_found(&e) => Err(self.missing(name)),
                Err(e) => Err(e)
                    .with_context(|| format!("reading AppProject {}/{name}", self.namespace())),
            },
        }
    }

    /// In core mode, Argo's API server's refusal of an update that would make Applications of
    /// the project invalid (through `plumb server`, the server checks it).
    async fn check_applications(&self, before: &Value, after: &AppProject) -> Result<()> {
        let Backend::Kube(k) = &self.backend else {
            return Ok(());
        };
        let old: AppProject =
            serde_json::from_value(before.clone()).context("reading the stored AppProject")?;
        let refusal =
            plumb_app::project_update::refusal(&k.client, self.namespace(), &old, after).await?;
        match refusal {
            Some(message) => bail!(message),
            None => Ok(()),
        }
    }

    fn missing(&self, name: &str) -> anyhow::Error {
        anyhow!(
            "project '{name}' not found in namespace '{}'",
            self.namespace()
        )
    }

    /// Writes the project; `false` when it changed since it was read (409).
    async fn write_value(&self, name: &str, project: &Value) -> Result<bool> {
        match &self.backend {
            Backend::Server(s) => {
                let (status, v) = s
                    .call(
                        reqwest::Method::PUT,
                        &format!("/api/v1/projects/{}", enc(name)),
                        Some(&serde_json::json!({"project": project})),
                    )
                    .await?;
                match status {
                    200 => Ok(true),
                    409 => Ok(false),
                    _ => Err(s.error(status, &v)),
                }
            }
            Backend::Kube(k) => {
                let obj: DynamicObject =
                    serde_json::from_value(project.clone()).context("encoding the AppProject")?;
                match k.projects.replace(name, &PostParams::default(), &obj).await {
                    Ok(_) => Ok(true),
                    Err(e) if status_is(&e, 409, "Conflict") => Ok(false),
                    Err(e) => Err(e).with_context(|| {
                        format!("updating AppProject {}/{name}", self.namespace())
                    }),
                }
            }
        }
    }
}

impl ProjClient {
    /// The `plumb server` client, when the commands go through one.
    pub fn server(&self) -> Option<&crate::cmd::remote::ServerClient> {
        match &self.backend {
            Backend::Server(s) => Some(s),
            Backend::Kube(_) => None,
        }
    }

    /// A project role token, signed by `plumb server` (`POST .../roles/{role}/token`).
    pub async fn create_token(
        &self,
        project: &str,
        role: &str,
        expires_in: i64,
        id: &str,
    ) -> Result<String> {
        let Some(s) = self.server() else {
            bail!(
                "create-token needs plumb server: tokens are signed with the server's key (run plumb login first)"
            );
        };
        let answer = s
            .post(
                &format!(
                    "/api/v1/projects/{}/roles/{}/token",
                    enc(project),
                    enc(role)
                ),
                &serde_json::json!({"expiresIn": expires_in, "id": id}),
            )
            .await?;
        answer
            .get("token")
            .and_then(Value::as_str)
            .map(str::to_string)
            .context("the server answered no token")
    }
}
