//! `plumb repo add REPOURL`: Argo's `argocd repo add` flags and checks; the connection is
//! checked before the repository is stored.

use anyhow::{Result, bail};
use clap::Args;
use serde_json::{Value, json};

use super::client::AdminClient;
use super::flags::CredFlags;
use crate::exit::Outcome;

/// `plumb repo add`.
#[derive(Debug, Args)]
pub struct AddArgs {
    /// The repository URL.
    repo: String,
    #[command(flatten)]
    creds: CredFlags,
    /// Name of the repository, mandatory for repositories of type helm.
    #[arg(long)]
    name: Option<String>,
    /// Project of the repository.
    #[arg(long)]
    project: Option<String>,
    /// Disables SSH strict host key checking (deprecated: --insecure-skip-server-verification).
    #[arg(long)]
    insecure_ignore_host_key: bool,
    /// Disables server certificate and host key checks.
    #[arg(long)]
    insecure_skip_server_verification: bool,
    /// Enable git-lfs (Large File Support) on this repository.
    #[arg(long)]
    enable_lfs: bool,
    /// Use this proxy to access the repository.
    #[arg(long, value_name = "URL")]
    proxy: Option<String>,
    /// Don't access these targets via the proxy.
    #[arg(long, value_name = "HOSTS")]
    no_proxy: Option<String>,
    /// Depth of git clones (0: full).
    #[arg(long, default_value_t = 0)]
    depth: i64,
}

/// Argo's `Repository` object of these flags.
fn body(a: &AddArgs) -> Result<Value> {
    if a.creds.kind == "helm" && a.name.as_deref().unwrap_or_default().is_empty() {
        bail!("Must specify --name for repos of type 'helm'");
    }
    let mut o = a.creds.body("repo", &a.repo)?;
    let mut put = |k: &str, v: Value| {
        let set = match &v {
            Value::String(s) => !s.is_empty(),
            Value::Bool(b) => *b,
            Value::Number(n) => n.as_i64() != Some(0),
            _ => true,
        };
        if set {
            o.insert(k.into(), v);
        }
    };
    put("name", json!(a.name.clone().unwrap_or_default()));
    put("project", json!(a.project.clone().unwrap_or_default()));
    put("insecureIgnoreHostKey", json!(a.insecure_ignore_host_key));
    put("insecure", json!(a.insecure_skip_server_verification));
    put("enableLfs", json!(a.enable_lfs));
    put("proxy", json!(a.proxy.clone().unwrap_or_default()));
    put("noProxy", json!(a.no_proxy.clone().unwrap_or_default()));
    put("depth", json!(a.depth));
    Ok(Value::Object(o))
}

pub async fn run(client: &AdminClient, a: AddArgs) -> Result<Outcome> {
    let repo = body(&a)?;
    let created = client.add_repository(&repo, a.creds.upsert).await?;
    let url = created["repo"].as_str().unwrap_or(&a.repo);
    println!("Repository '{url}' added");
    Ok(Outcome::Success)
}
