//! `plumb cert add-ssh --batch [--from FILE]`: known hosts lines, one certificate per host
//! name of each line, as argocd sends them.

use std::path::PathBuf;

use anyhow::{Result, bail};
use base64::Engine as _;
use clap::Args;
use plumb_app::repo_admin::certs::known_hosts;
use serde_json::json;

use crate::cmd::repo::client::AdminClient;
use crate::exit::Outcome;

/// `plumb cert add-ssh`.
#[derive(Debug, Args)]
pub struct AddSshArgs {
    /// Read SSH known hosts data from file (default is to read from stdin).
    #[arg(long, value_name = "FILE")]
    from: Option<PathBuf>,
    /// Perform batch processing by reading in SSH known hosts data (mandatory flag).
    #[arg(long)]
    batch: bool,
    /// Replace existing SSH server public host keys if key is different in input.
    #[arg(long)]
    upsert: bool,
}

pub async fn run(client: &AdminClient, a: AddSshArgs) -> Result<Outcome> {
    if !a.batch {
        bail!("you need to specify --batch or specify --help for usage instructions");
    }
    match &a.from {
        Some(p) => println!(
            "Reading SSH known hosts entries from file '{}'",
            p.display()
        ),
        None => {
            println!("Enter SSH known hosts entries, one per line. Press CTRL-D when finished.")
        }
    }
    let text = super::input::read_input(a.from.as_deref())?;
    let entries = known_hosts::parse(&text).map_err(anyhow::Error::msg)?;
    if entries.is_empty() {
        bail!("No valid SSH known hosts data found.");
    }
    let mut items = Vec::new();
    for e in &entries {
        let (hosts, _) = known_hosts::public_key(e).map_err(anyhow::Error::msg)?;
        for host in hosts {
            let data = base64::engine::general_purpose::STANDARD.encode(&e.data);
            items.push(json!({"serverName": host, "certType": "ssh",
                "certSubType": e.sub_type, "certData": data}));
        }
    }
    let created = client.add_certificates(items, a.upsert).await?;
    println!(
        "Successfully created {} SSH known host entries",
        created.len()
    );
    Ok(Outcome::Success)
}
