//! `plumb gpg rm KEYID`: removes a key (Argo asks first only with prompts enabled, which
//! they are not by default; Plumb does not ask).

use anyhow::Result;
use clap::Args;

use super::client::GpgClient;
use crate::exit::Outcome;

/// `plumb gpg rm`.
#[derive(Debug, Args)]
pub struct RmArgs {
    /// The key ID.
    #[arg(value_name = "KEYID")]
    pub key_id: String,
}

/// Runs `plumb gpg rm`.
pub async fn run(client: &GpgClient, args: RmArgs) -> Result<Outcome> {
    client.remove(&args.key_id).await?;
    println!("Deleted key with key ID {}", args.key_id);
    Ok(Outcome::Success)
}
