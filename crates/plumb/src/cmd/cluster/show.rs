//! `plumb cluster list`, `get` and `rm`, in `argocd cluster`'s layouts.

use anyhow::Result;
use clap::Args;
use kube::config::{KubeConfigOptions, Kubeconfig};
use serde_json::Value;

use super::client::ClusterClient;
use crate::cmd::app::ConnArgs;
use crate::exit::Outcome;
use crate::output::tabwriter::Table;

/// `plumb cluster list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Output format. One of: json|yaml|wide|server
    #[arg(short = 'o', long = "output", default_value = "wide")]
    output: String,
}

/// `plumb cluster get SERVER/NAME`.
#[derive(Debug, Args)]
pub struct GetArgs {
    /// The cluster's server URL or name.
    selector: String,
    /// Output format. One of: json|yaml|wide|server
    #[arg(short = 'o', long = "output", default_value = "yaml")]
    output: String,
}

/// `plumb cluster rm SERVER/NAME...`.
#[derive(Debug, Args)]
pub struct RmArgs {
    /// The clusters' server URLs or names.
    selectors: Vec<String>,
    /// Turn off prompting to confirm remove of cluster resources
    #[arg(short = 'y', long = "yes")]
    yes: bool,
}

fn s(v: &Value) -> &str {
    v.as_str().unwrap_or_default()
}

/// Argo's `printClusterTable`.
pub fn cluster_table(clusters: &[Value]) -> String {
    let mut t = Table::with(0, 2);
    t.line("SERVER\tNAME\tVERSION\tSTATUS\tMESSAGE\tPROJECT");
    for c in clusters {
        let namespaces = c["namespaces"].as_array().map_or(0, Vec::len);
        let server = match namespaces {
            0 => s(&c["server"]).to_string(),
            n => format!("{} ({n} namespaces)", s(&c["server"])),
        };
        let info = &c["info"];
        t.row(&[
            server.as_str(),
            s(&c["name"]),
            s(&info["serverVersion"]),
            s(&info["connectionState"]["status"]),
            s(&info["connectionState"]["message"]),
            s(&c["project"]),
        ]);
    }
    t.render()
}

fn print(value: &Value, output: &str) -> Result<()> {
    match output {
        "json" => println!("{}", serde_json::to_string_pretty(value)?),
        _ => print!("{}", plumb_yaml::to_yaml_string(value)),
    }
    Ok(())
}

/// Runs `plumb cluster list`.
pub async fn list(client: &ClusterClient, args: ListArgs) -> Result<Outcome> {
    let clusters = client.list().await?;
    match args.output.as_str() {
        "json" | "yaml" => print(&Value::Array(clusters), &args.output)?,
        "server" => clusters
            .iter()
            .for_each(|c| println!("{}", s(&c["server"]))),
        "wide" | "" => print!("{}", cluster_table(&clusters)),
        other => anyhow::bail!("unknown output format: {other}"),
    }
    Ok(Outcome::Success)
}

/// Runs `plumb cluster get`.
pub async fn get(client: &ClusterClient, args: GetArgs) -> Result<Outcome> {
    let c = client.get(&args.selector).await?;
    match args.output.as_str() {
        "json" | "yaml" => print(&c, &args.output)?,
        "server" => println!("{}", s(&c["server"])),
        "wide" => print!("{}", cluster_table(&[c])),
        other => anyhow::bail!("unknown output format: {other}"),
    }
    Ok(Outcome::Success)
}

/// Runs `plumb cluster rm`: the cluster Secret removed, then, as Argo does, `argocd-manager`
/// uninstalled from the cluster through the kubeconfig context named as the cluster (skipped
/// with a note when there is no such context).
pub async fn rm(client: &ClusterClient, conn: &ConnArgs, args: RmArgs) -> Result<Outcome> {
    if args.selectors.is_empty() {
        anyhow::bail!("name the cluster to remove: plumb cluster rm SERVER/NAME");
    }
    for selector in &args.selectors {
        if !args.yes {
            let question = format!(
                "Are you sure you want to remove '{selector}'? Any Apps deploying to this cluster will go to health status Unknown.[y/n] "
            );
            let mut input = std::io::stdin().lock();
            if !crate::cmd::app::ask_to_proceed(&question, &mut input, &mut std::io::stdout())? {
                println!("The command to remove '{selector}' was cancelled.");
                continue;
            }
        }
        let cluster = client.get(selector).await?;
        client.delete(selector).await?;
        println!("Cluster '{selector}' removed");
        uninstall_manager(conn, s(&cluster["name"])).await?;
    }
    Ok(Outcome::Success)
}

async fn uninstall_manager(conn: &ConnArgs, context: &str) -> Result<()> {
    let kubeconfig = match &conn.kubeconfig {
        Some(p) => Kubeconfig::read_from(p)?,
        None => Kubeconfig::read()?,
    };
    if !kubeconfig.contexts.iter().any(|c| c.name == context) {
        eprintln!(
            "no kubeconfig context named {context:?}: argocd-manager was not removed from the cluster"
        );
        return Ok(());
    }
    let options = KubeConfigOptions {
        context: Some(context.to_string()),
        ..Default::default()
    };
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &options).await?;
    let target = plumb_kube::client_from(config)?;
    plumb_app::clusters::manager::uninstall(&target).await?;
    Ok(())
}
