//! `plumb repo get REPO`: one repository, masked, with its connection state.

use anyhow::{Result, bail};
use clap::Args;

use super::client::AdminClient;
use super::output;
use crate::exit::Outcome;

/// `plumb repo get`.
#[derive(Debug, Args)]
pub struct GetArgs {
    /// The repository URL.
    repo: String,
    /// Project of the repository.
    #[arg(long, default_value = "")]
    project: String,
    /// Output format: json|yaml|wide|url.
    #[arg(short, long, default_value = "wide")]
    output: String,
    /// Force a refresh of the connection state: hard.
    #[arg(long, default_value = "")]
    refresh: String,
}

pub async fn run(client: &AdminClient, a: GetArgs) -> Result<Outcome> {
    let refresh = output::refresh(&a.refresh)?;
    let repo = client.get_repository(&a.repo, &a.project, refresh).await?;
    if let Some(text) = output::structured(&repo, &a.output)? {
        print!("{text}");
        return Ok(Outcome::Success);
    }
    match a.output.as_str() {
        "url" => println!("{}", repo["repo"].as_str().unwrap_or_default()),
        "wide" | "" => print!("{}", output::repo_table(std::slice::from_ref(&repo))),
        other => bail!("unknown output format: {other}. Supported formats: yaml|json|url|wide"),
    }
    Ok(Outcome::Success)
}
