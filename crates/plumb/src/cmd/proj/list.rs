//! `plumb proj list`: `NAME DESCRIPTION DESTINATIONS SOURCES CLUSTER-RESOURCE-WHITELIST
//! NAMESPACE-RESOURCE-BLACKLIST SIGNATURE-KEYS ORPHANED-RESOURCES DESTINATION-SERVICE-ACCOUNTS`
//! (Argo's `printProjectTable`), or names, JSON, YAML.

use anyhow::Result;
use clap::{Args, ValueEnum};
use plumb_model::application::AppProject;

use super::ProjClient;
use crate::exit::Outcome;
use crate::output::{json, project, yaml};

/// `-o` of `proj list`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ListFormat {
    /// The table.
    Wide,
    /// One name per line.
    Name,
    /// A JSON array of the AppProjects.
    Json,
    /// A YAML list of the AppProjects.
    Yaml,
}

/// `plumb proj list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Output format.
    #[arg(short = 'o', long, value_enum, default_value_t = ListFormat::Wide)]
    pub output: ListFormat,
}

/// The output text.
pub fn render(projects: &[AppProject], format: ListFormat) -> Result<String> {
    Ok(match format {
        ListFormat::Wide => project::project_table(projects),
        ListFormat::Name => projects
            .iter()
            .map(|p| format!("{}\n", p.metadata.name.as_deref().unwrap_or_default()))
            .collect(),
        ListFormat::Json => json::render(projects)?,
        ListFormat::Yaml => yaml::render(projects)?,
    })
}

/// Runs `plumb proj list`.
pub async fn run(client: &ProjClient, args: ListArgs) -> Result<Outcome> {
    print!("{}", render(&client.list().await?, args.output)?);
    Ok(Outcome::Success)
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        args: ListArgs,
    }

    #[test]
    fn flags_parse() {
        assert_eq!(
            Cli::try_parse_from(["list"]).unwrap().args.output,
            ListFormat::Wide
        );
        for (flag, want) in [
            ("wide", ListFormat::Wide),
            ("name", ListFormat::Name),
            ("json", ListFormat::Json),
            ("yaml", ListFormat::Yaml),
        ] {
            assert_eq!(
                Cli::try_parse_from(["list", "-o", flag])
                    .unwrap()
                    .args
                    .output,
                want
            );
        }
        assert!(Cli::try_parse_from(["list", "-o", "tree"]).is_err());
    }
}
