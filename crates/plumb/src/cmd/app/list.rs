//! `plumb app list`: `NAME CLUSTER NAMESPACE PROJECT STATUS HEALTH SYNCPOLICY CONDITIONS`, plus
//! `REPO PATH TARGET` in the default wide output (Argo's `printApplicationTable`).

use anyhow::Result;
use clap::{Args, ValueEnum};
use plumb_model::application::Application;

use super::client::AppClient;
use crate::exit::Outcome;
use crate::output::{json, wide, yaml};

/// `-o` of `app list`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ListFormat {
    /// The table with REPO, PATH and TARGET.
    Wide,
    /// `<namespace>/<name>` per line.
    Name,
    /// A JSON array of the Applications.
    Json,
    /// A YAML list of the Applications.
    Yaml,
}

/// `plumb app list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Output format.
    #[arg(short = 'o', long, value_enum, default_value_t = ListFormat::Wide)]
    pub output: ListFormat,
    /// Only Applications of these projects (repeatable).
    #[arg(short = 'p', long = "project", value_name = "PROJECT")]
    pub projects: Vec<String>,
    /// Label selector (`team=payments,tier!=web`).
    #[arg(short = 'l', long, value_name = "SELECTOR")]
    pub selector: Option<String>,
    /// Only Applications whose (first) source is this repository.
    #[arg(short = 'r', long, value_name = "URL")]
    pub repo: Option<String>,
    /// Only Applications deploying to this cluster (server URL or name).
    #[arg(short = 'c', long, value_name = "CLUSTER")]
    pub cluster: Option<String>,
    /// Only Applications whose (first) source has this path.
    #[arg(short = 'P', long, value_name = "PATH")]
    pub path: Option<String>,
}

/// The Applications the filters keep (Argo's client-side filters of `app list`).
pub fn filter(apps: Vec<Application>, args: &ListArgs) -> Vec<Application> {
    apps.into_iter()
        .filter(|a| args.projects.is_empty() || args.projects.contains(&a.spec.project))
        .filter(|a| {
            args.repo
                .as_ref()
                .is_none_or(|r| a.sources().first().is_some_and(|s| &s.repo_url == r))
        })
        .filter(|a| {
            args.path.as_ref().is_none_or(|p| {
                a.sources()
                    .first()
                    .is_some_and(|s| s.path.as_ref() == Some(p))
            })
        })
        .filter(|a| {
            args.cluster.as_ref().is_none_or(|c| {
                a.spec.destination.server.as_ref() == Some(c)
                    || a.spec.destination.name.as_ref() == Some(c)
            })
        })
        .collect()
}

/// The output text.
pub fn render(apps: &[Application], format: ListFormat) -> Result<String> {
    Ok(match format {
        ListFormat::Wide => wide::app_list(apps, true),
        ListFormat::Name => apps
            .iter()
            .map(|a| format!("{}\n", wide::qualified_name(a)))
            .collect(),
        ListFormat::Json => json::render(apps)?,
        ListFormat::Yaml => yaml::render(apps)?,
    })
}

/// Runs `plumb app list`.
pub async fn run(client: &AppClient, args: ListArgs) -> Result<Outcome> {
    let apps = filter(client.list(args.selector.as_deref()).await?, &args);
    print!("{}", render(&apps, args.output)?);
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
        let cli = Cli::try_parse_from(["list"]).unwrap();
        assert_eq!(cli.args.output, ListFormat::Wide);
        let cli = Cli::try_parse_from([
            "list",
            "-p",
            "default",
            "--project",
            "payments",
            "-l",
            "team=pay",
            "-o",
            "name",
            "-r",
            "https://x/y.git",
            "-c",
            "in-cluster",
            "-P",
            "k8s",
        ])
        .unwrap();
        assert_eq!(cli.args.projects, ["default", "payments"]);
        assert_eq!(cli.args.selector.as_deref(), Some("team=pay"));
        assert_eq!(cli.args.output, ListFormat::Name);
        assert_eq!(cli.args.cluster.as_deref(), Some("in-cluster"));
        assert!(Cli::try_parse_from(["list", "-o", "tree"]).is_err());
    }
}
