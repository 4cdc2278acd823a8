//! `plumb cert add-tls SERVERNAME [--from FILE]`: a PEM bundle for one server, duplicates
//! dropped, as argocd sends it.

use std::path::PathBuf;

use anyhow::Result;
use base64::Engine as _;
use clap::Args;
use plumb_app::repo_admin::certs::tls;
use serde_json::json;

use crate::cmd::repo::client::AdminClient;
use crate::exit::Outcome;

/// `plumb cert add-tls`.
#[derive(Debug, Args)]
pub struct AddTlsArgs {
    /// The repository server's host name.
    server_name: String,
    /// Read TLS certificate data from file (default is to read from stdin).
    #[arg(long, value_name = "FILE")]
    from: Option<PathBuf>,
    /// Replace existing TLS certificate if certificate is different in input.
    #[arg(long)]
    upsert: bool,
}

pub async fn run(client: &AdminClient, a: AddTlsArgs) -> Result<Outcome> {
    match &a.from {
        Some(p) => println!(
            "Reading TLS certificate data in PEM format from '{}'",
            p.display()
        ),
        None => println!("Enter TLS certificate data in PEM format. Press CTRL-D when finished."),
    }
    let text = super::input::read_input(a.from.as_deref())?;
    let mut unique: Vec<String> = Vec::new();
    for pem in tls::split(&text).map_err(anyhow::Error::msg)? {
        if !unique.contains(&pem) {
            unique.push(pem);
        }
    }
    if unique.is_empty() {
        println!("No valid certificates have been detected in the stream.");
        return Ok(Outcome::Success);
    }
    let data = base64::engine::general_purpose::STANDARD.encode(unique.join("\n"));
    let item = json!({"serverName": a.server_name, "certType": "https", "certData": data});
    client.add_certificates(vec![item], a.upsert).await?;
    println!(
        "Created/updated TLS certificate entry for repository server {} with {} unique PEM certificates",
        a.server_name,
        unique.len()
    );
    Ok(Outcome::Success)
}
