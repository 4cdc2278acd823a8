//! `plumb repocreds list`: Argo's table, `-o json|yaml|url|wide`.

use anyhow::{Result, bail};
use clap::Args;
use serde_json::Value;

use crate::cmd::repo::client::AdminClient;
use crate::cmd::repo::output;
use crate::exit::Outcome;

/// `plumb repocreds list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Output format: json|yaml|wide|url.
    #[arg(short, long, default_value = "wide")]
    output: String,
}

pub async fn run(client: &AdminClient, a: ListArgs) -> Result<Outcome> {
    let creds = client.list_templates().await?;
    if let Some(text) = output::structured(&Value::Array(creds.clone()), &a.output)? {
        print!("{text}");
        return Ok(Outcome::Success);
    }
    match a.output.as_str() {
        "url" => creds
            .iter()
            .for_each(|c| println!("{}", c["url"].as_str().unwrap_or_default())),
        "wide" | "" => print!("{}", output::creds_table(&creds)),
        other => bail!("unknown output format: {other}"),
    }
    Ok(Outcome::Success)
}
