//! `plumb cert rm REPOSERVER`: removes the certificates of hosts matching REPOSERVER.

use anyhow::{Result, bail};
use clap::Args;
use plumb_app::repo_admin::Selector;

use crate::cmd::repo::client::AdminClient;
use crate::exit::Outcome;

/// `plumb cert rm`.
#[derive(Debug, Args)]
pub struct RmArgs {
    /// Host name (or glob) of the repository server.
    #[arg(value_name = "REPOSERVER")]
    repo_server: String,
    /// Only remove certs of given type (ssh, https).
    #[arg(long, default_value = "")]
    cert_type: String,
    /// Only remove certs of given sub-type (only for ssh).
    #[arg(long, default_value = "")]
    cert_sub_type: String,
}

pub async fn run(client: &AdminClient, a: RmArgs) -> Result<Outcome> {
    if a.repo_server == "*" {
        bail!("A single wildcard is not allowed as REPOSERVER name.");
    }
    let sel = Selector {
        host_pattern: a.repo_server,
        cert_type: a.cert_type,
        cert_sub_type: a.cert_sub_type,
    };
    for c in client.remove_certificates(&sel).await? {
        let s = |k: &str| c[k].as_str().unwrap_or_default().to_owned();
        println!(
            "Removed cert for '{}' of type '{}' (subtype '{}')",
            s("serverName"),
            s("certType"),
            s("certSubType")
        );
    }
    Ok(Outcome::Success)
}
