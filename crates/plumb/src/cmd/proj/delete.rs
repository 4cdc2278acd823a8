//! `plumb proj delete PROJECT...`: Argo's `argocd proj delete`, with its API server's checks
//! (`ProjectService.Delete`): `default` is never deleted, nor a project Applications still use.
//! Argo's prompts are off by default; Plumb has none.

use anyhow::{Context, Result, bail};
use clap::Args;
use kube::api::{Api, DeleteParams, DynamicObject, ListParams};

use super::ProjClient;
use super::client::Backend;
use crate::cmd::app::{is_not_found, resource};
use crate::cmd::remote::enc;
use crate::exit::Outcome;

/// `plumb proj delete`.
#[derive(Debug, Args)]
pub struct DeleteArgs {
    /// Project names.
    #[arg(required = true)]
    pub projects: Vec<String>,
}

impl ProjClient {
    /// Deletes a project unless it is `default` or Applications of the control namespace use it.
    pub async fn delete(&self, name: &str) -> Result<()> {
        let k = match &self.backend {
            Backend::Server(s) => {
                s.delete(&format!("/api/v1/projects/{}", enc(name))).await?;
                return Ok(());
            }
            Backend::Kube(k) => k,
        };
        if name == "default" {
            bail!("name '{name}' is reserved and cannot be deleted");
        }
        self.get(name).await?;
        let apps: Api<DynamicObject> = Api::namespaced_with(
            k.client.clone(),
            self.namespace(),
            &resource("Application", "applications"),
        );
        let list = apps
            .list(&ListParams::default())
            .await
            .with_context(|| format!("listing Applications in namespace '{}'", self.namespace()))?;
        let using = list
            .items
            .iter()
            .filter(|a| {
                let project = a.data.pointer("/spec/project").and_then(|p| p.as_str());
                project.unwrap_or("default") == name
            })
            .count();
        if using > 0 {
            bail!("project is referenced by {using} applications");
        }
        match k.projects.delete(name, &DeleteParams::default()).await {
            Ok(_) => Ok(()),
            Err(e) if is_not_found(&e) => Ok(()),
            Err(e) => {
                Err(e).with_context(|| format!("deleting AppProject {}/{name}", self.namespace()))
            }
        }
    }
}

/// Runs `plumb proj delete`.
pub async fn run(client: &ProjClient, args: DeleteArgs) -> Result<Outcome> {
    for name in &args.projects {
        client.delete(name).await?;
    }
    Ok(Outcome::Success)
}
