//! `plumb repocreds rm CREDSURL...`.

use anyhow::Result;
use clap::Args;

use crate::cmd::repo::client::AdminClient;
use crate::exit::Outcome;

/// `plumb repocreds rm`.
#[derive(Debug, Args)]
pub struct RmArgs {
    /// Template URLs.
    #[arg(required = true)]
    urls: Vec<String>,
}

pub async fn run(client: &AdminClient, a: RmArgs) -> Result<Outcome> {
    for url in &a.urls {
        client.remove_template(url).await?;
        println!("Repository credentials for '{url}' removed");
    }
    Ok(Outcome::Success)
}
