//! `plumb repocreds add REPOURL`: Argo's flags (`--proxy-url`, not `--proxy`); no connection
//! check, as Argo does none for templates.

use anyhow::Result;
use clap::Args;
use serde_json::{Value, json};

use crate::cmd::repo::client::AdminClient;
use crate::cmd::repo::flags::CredFlags;
use crate::exit::Outcome;

/// `plumb repocreds add`.
#[derive(Debug, Args)]
pub struct AddArgs {
    /// The URL prefix the credentials apply to.
    url: String,
    #[command(flatten)]
    creds: CredFlags,
    /// Connect through this proxy.
    #[arg(long, value_name = "URL")]
    proxy_url: Option<String>,
}

pub async fn run(client: &AdminClient, a: AddArgs) -> Result<Outcome> {
    let mut o = a.creds.body("url", &a.url)?;
    if let Some(p) = a.proxy_url.filter(|p| !p.is_empty()) {
        o.insert("proxy".into(), json!(p));
    }
    let created = client
        .add_template(&Value::Object(o), a.creds.upsert)
        .await?;
    let url = created["url"].as_str().unwrap_or(&a.url);
    println!("Repository credentials for '{url}' added");
    Ok(Outcome::Success)
}
