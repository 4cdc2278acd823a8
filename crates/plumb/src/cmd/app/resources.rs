//! `plumb app resources NAME`: `GROUP KIND NAMESPACE NAME ORPHANED`, the Application's
//! top-level resources (Argo's `printResources`).

use anyhow::{Result, bail};
use clap::Args;
use plumb_model::application::Application;

use super::client::AppClient;
use crate::exit::Outcome;
use crate::output::tabwriter::Table;

/// `plumb app resources`.
#[derive(Debug, Args)]
pub struct ResourcesArgs {
    /// Application name.
    pub name: String,
    /// Only resources in the destination namespace that no Application tracks.
    #[arg(long)]
    pub orphaned: bool,
}

/// The table of managed resources, sorted by group/kind/namespace/name.
pub fn table(app: &Application) -> String {
    let mut keys: Vec<[String; 4]> = app
        .status
        .iter()
        .flat_map(|s| s.resources.iter().flatten())
        .map(|r| {
            [
                r.group.clone().unwrap_or_default(),
                r.kind.clone().unwrap_or_default(),
                r.namespace.clone().unwrap_or_default(),
                r.name.clone().unwrap_or_default(),
            ]
        })
        .collect();
    keys.sort();
    let mut t = Table::new();
    t.line("GROUP\tKIND\tNAMESPACE\tNAME\tORPHANED");
    for [g, k, ns, n] in &keys {
        t.row(&[g.as_str(), k.as_str(), ns.as_str(), n.as_str(), "No"]);
    }
    t.render()
}

/// Runs `plumb app resources`.
pub async fn run(client: &AppClient, args: ResourcesArgs) -> Result<Outcome> {
    if args.orphaned {
        // Argo lists orphans from the controller's cache when the project enables
        // orphanedResources monitoring; Plumb's controller does not record them yet, and an
        // empty list would claim there are none.
        bail!("--orphaned: Plumb does not track orphaned resources yet");
    }
    let app = client.get(&args.name).await?;
    print!("{}", table(&app));
    Ok(Outcome::Success)
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        args: ResourcesArgs,
    }

    #[test]
    fn flags_parse() {
        assert!(
            !Cli::try_parse_from(["resources", "x"])
                .unwrap()
                .args
                .orphaned
        );
        assert!(
            Cli::try_parse_from(["resources", "x", "--orphaned"])
                .unwrap()
                .args
                .orphaned
        );
        assert!(Cli::try_parse_from(["resources"]).is_err());
    }
}
