//! `plumb proj get NAME`: Argo's `printProject` (labels padded to 29 columns), or the object as
//! JSON or YAML.

use anyhow::Result;
use clap::Args;

use super::ProjClient;
use super::detail_format::DetailFormat;
use crate::exit::Outcome;
use crate::output::project::{ScopedView, project_detail};
use crate::output::{json, yaml};

/// `plumb proj get`.
#[derive(Debug, Args)]
pub struct GetArgs {
    /// Project name.
    pub name: String,
    /// Output format.
    #[arg(short = 'o', long, value_enum, default_value_t = DetailFormat::Wide)]
    pub output: DetailFormat,
}

/// Runs `plumb proj get`.
pub async fn run(client: &ProjClient, args: GetArgs) -> Result<Outcome> {
    let project = client.get(&args.name).await?;
    let text = match args.output {
        DetailFormat::Json => json::render(&project)?,
        DetailFormat::Yaml => yaml::render(&project)?,
        DetailFormat::Wide => {
            let scoped = client.scoped(&args.name).await?;
            if scoped.is_none() {
                eprintln!(
                    "plumb: may not list Secrets in namespace '{}': scoped repositories and clusters are unknown",
                    client.namespace()
                );
            }
            let view = ScopedView {
                repositories: scoped.as_ref().map(|s| s.repositories.clone()),
                clusters: scoped.map(|s| s.clusters),
            };
            project_detail(&project, &view)
        }
    };
    print!("{text}");
    Ok(Outcome::Success)
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        args: GetArgs,
    }

    #[test]
    fn flags_parse() {
        let cli = Cli::try_parse_from(["get", "payments"]).unwrap();
        assert_eq!(cli.args.name, "payments");
        assert_eq!(cli.args.output, DetailFormat::Wide);
        let cli = Cli::try_parse_from(["get", "payments", "-o", "yaml"]).unwrap();
        assert_eq!(cli.args.output, DetailFormat::Yaml);
        assert!(Cli::try_parse_from(["get"]).is_err());
        assert!(Cli::try_parse_from(["get", "payments", "-o", "name"]).is_err());
    }
}
