//! `plumb repo list`: Argo's table, `-o json|yaml|url|wide`, `--refresh hard`.

use anyhow::{Result, bail};
use clap::Args;
use serde_json::Value;

use super::client::AdminClient;
use super::output;
use crate::exit::Outcome;

/// `plumb repo list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Output format: yaml|json|url|wide.
    #[arg(short, long, default_value = "wide")]
    output: String,
    /// Force a refresh of the connection states: hard.
    #[arg(long, default_value = "")]
    refresh: String,
}

pub async fn run(client: &AdminClient, a: ListArgs) -> Result<Outcome> {
    let refresh = output::refresh(&a.refresh)?;
    let repos = client.list_repositories(refresh).await?;
    if let Some(text) = output::structured(&Value::Array(repos.clone()), &a.output)? {
        print!("{text}");
        return Ok(Outcome::Success);
    }
    match a.output.as_str() {
        "url" => repos
            .iter()
            .for_each(|r| println!("{}", r["repo"].as_str().unwrap_or_default())),
        "wide" | "" => print!("{}", output::repo_table(&repos)),
        other => bail!("unknown output format: {other}. Supported formats: yaml|json|url|wide"),
    }
    Ok(Outcome::Success)
}
