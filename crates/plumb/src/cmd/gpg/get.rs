//! `plumb gpg get KEYID`: Argo's labelled lines and the key data, or JSON, YAML.

use anyhow::Result;
use clap::Args;
use serde_json::Value;

use super::client::GpgClient;
use super::format::Format;
use crate::exit::Outcome;
use crate::output::{json, yaml};

/// `plumb gpg get`.
#[derive(Debug, Args)]
pub struct GetArgs {
    /// The key ID (16 hex digits) or fingerprint.
    #[arg(value_name = "KEYID")]
    pub key_id: String,
    /// Output format. One of: json|yaml|wide.
    #[arg(short = 'o', long, value_enum, default_value_t = Format::Wide)]
    pub output: Format,
}

/// Argo's wide layout.
pub fn wide(k: &Value) -> String {
    let s = |f: &str| k[f].as_str().unwrap_or_default().to_string();
    format!(
        "Key ID:          {}\nKey fingerprint: {}\nKey subtype:     {}\nKey owner:       {}\n\
         Key data follows until EOF:\n{}\n",
        s("keyID"),
        s("fingerprint"),
        s("subType").to_uppercase(),
        s("owner"),
        s("keyData")
    )
}

/// Runs `plumb gpg get`.
pub async fn run(client: &GpgClient, args: GetArgs) -> Result<Outcome> {
    let key = client.get(&args.key_id).await?;
    print!(
        "{}",
        match args.output {
            Format::Wide => wide(&key),
            Format::Json => json::render(&key)?,
            Format::Yaml => yaml::render(&key)?,
        }
    );
    Ok(Outcome::Success)
}
