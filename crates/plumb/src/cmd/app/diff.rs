//! `plumb app diff NAME`: what a sync would change, in `argocd app diff` format.

use anyhow::Result;
use clap::{ArgAction, Args};

use super::client::AppClient;
use super::diff_view::DiffView;
use crate::cmd::diff::DiffFormatArg;
use crate::exit::Outcome;

/// Show what differs between Git and the cluster for an Application.
///
/// The desired objects are rendered from the Application's source and compared with the live
/// objects by a server-side dry run (the same comparison the controller makes). After each
/// differing object, lines starting with `# ` name the field manager that last wrote each
/// differing field; --attribution=false prints exactly what Argo CD prints. Secret values are
/// masked. KUBECTL_EXTERNAL_DIFF selects another diff program, as for kubectl.
///
/// Exit codes: 0 no difference, 1 differences found (unless --exit-code=false), 2 an error.
#[derive(Debug, Args)]
pub struct DiffArgs {
    /// Application name.
    pub(crate) name: String,
    /// Ask the controller to refresh before comparing (accepted for Argo compatibility: the
    /// comparison here always reads the latest commit of the target revision).
    #[arg(long)]
    pub(crate) refresh: bool,
    /// Render again, bypassing the manifest cache.
    #[arg(long)]
    pub(crate) hard_refresh: bool,
    /// Compare against this revision instead of the Application's target (a branch not yet
    /// merged, a tag, a commit SHA, refs/pull/N/head).
    #[arg(long)]
    pub(crate) revision: Option<String>,
    /// Render this local directory with the Application's source settings instead of its
    /// repository (a pull request's working tree).
    #[arg(long, value_name = "DIR", conflicts_with = "revision")]
    pub(crate) local: Option<std::path::PathBuf>,
    /// The repository root --local belongs to (value files with a leading `/`, bases above
    /// --local resolve beneath it; nothing outside it is read) [default: --local itself].
    #[arg(long, value_name = "DIR", requires = "local")]
    pub(crate) local_repo_root: Option<std::path::PathBuf>,
    /// Exit with 1 when a difference is found.
    #[arg(long, value_name = "BOOL", default_value_t = true, action = ArgAction::Set)]
    pub(crate) exit_code: bool,
    /// Text format of each object's diff.
    #[arg(long, value_enum, default_value = "normal")]
    pub(crate) diff_format: DiffFormatArg,
    /// Print `# <field>: last written by <manager>` lines (false = Argo's output).
    #[arg(long, value_name = "BOOL", default_value_t = true, action = ArgAction::Set)]
    pub(crate) attribution: bool,
}

/// Runs `app diff`.
pub async fn run(client: &AppClient, args: DiffArgs) -> Result<Outcome> {
    let app = client.get(&args.name).await?;
    let shown = client
        .print_diff(
            &app,
            &DiffView {
                revision: args.revision.clone(),
                hard_refresh: args.hard_refresh,
                attribution: args.attribution,
                format: args.diff_format,
                local: args.local.clone().map(|dir| plumb_source::LocalSource {
                    dir,
                    repo_root: args.local_repo_root.clone(),
                }),
            },
            &mut std::io::stdout(),
        )
        .await?;
    Ok(if shown > 0 && args.exit_code {
        Outcome::Negative
    } else {
        Outcome::Success
    })
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        args: DiffArgs,
    }

    #[test]
    fn flags_parse() {
        let cli = Cli::try_parse_from(["diff", "payments-api"]).unwrap();
        assert!(cli.args.exit_code && cli.args.attribution && !cli.args.hard_refresh);
        assert_eq!(cli.args.diff_format, DiffFormatArg::Normal);
        let cli = Cli::try_parse_from([
            "diff",
            "payments-api",
            "--exit-code=false",
            "--attribution=false",
            "--diff-format",
            "unified",
            "--revision",
            "v1.4.0",
            "--hard-refresh",
        ])
        .unwrap();
        assert!(!cli.args.exit_code && !cli.args.attribution && cli.args.hard_refresh);
        assert_eq!(cli.args.diff_format, DiffFormatArg::Unified);
        assert_eq!(cli.args.revision.as_deref(), Some("v1.4.0"));
    }
}
