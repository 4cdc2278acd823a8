//! `plumb repo rm REPO...`: removes repositories (argocd asks only with prompts enabled; so
//! does not Plumb).

use anyhow::Result;
use clap::Args;

use super::client::AdminClient;
use crate::exit::Outcome;

/// `plumb repo rm`.
#[derive(Debug, Args)]
pub struct RmArgs {
    /// Repository URLs.
    #[arg(required = true)]
    repos: Vec<String>,
    /// Project of the repository.
    #[arg(long, default_value = "")]
    project: String,
}

pub async fn run(client: &AdminClient, a: RmArgs) -> Result<Outcome> {
    for url in &a.repos {
        client.remove_repository(url, &a.project).await?;
        println!("Repository '{url}' removed");
    }
    Ok(Outcome::Success)
}
