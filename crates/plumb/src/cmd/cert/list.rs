//! `plumb cert list`: Argo's table, `-o json|yaml|wide`, `--sort hostname|type`.

use anyhow::{Result, bail};
use clap::Args;
use plumb_app::repo_admin::Selector;
use serde_json::Value;

use crate::cmd::repo::client::AdminClient;
use crate::cmd::repo::output;
use crate::exit::Outcome;

/// `plumb cert list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Output format: json|yaml|wide.
    #[arg(short, long, default_value = "wide")]
    output: String,
    /// Sort order for the wide format: hostname|type.
    #[arg(long, default_value = "")]
    sort: String,
    /// Only list certificates of this type: ssh, https.
    #[arg(long, default_value = "")]
    cert_type: String,
    /// Only list certificates for hosts matching this glob.
    #[arg(long, default_value = "")]
    hostname_pattern: String,
}

pub async fn run(client: &AdminClient, a: ListArgs) -> Result<Outcome> {
    let sel = Selector {
        host_pattern: a.hostname_pattern,
        cert_type: a.cert_type,
        cert_sub_type: String::new(),
    };
    let certs = client.list_certificates(&sel).await?;
    if let Some(text) = output::structured(&Value::Array(certs.clone()), &a.output)? {
        print!("{text}");
        return Ok(Outcome::Success);
    }
    match a.output.as_str() {
        "wide" | "" => print!("{}", output::cert_table(&certs, &a.sort)),
        other => bail!("unknown output format: {other}"),
    }
    Ok(Outcome::Success)
}
