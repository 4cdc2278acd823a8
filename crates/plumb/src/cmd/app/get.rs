//! `plumb app get NAME`: Argo's header (labels padded to 20 columns), the CONDITION table when
//! there are conditions, the operation block with `--show-operation`, then the resources.

use anyhow::Result;
use clap::Args;
use plumb_model::application::Application;

use super::client::AppClient;
use super::output::header::header_context;
use super::output::output_format::OutputFormat;
use super::output::tree_live::render as render_tree;
use super::refresh::{Refresh, refresh};
use crate::exit::Outcome;
use crate::output::wide::HeaderContext;
use crate::output::{Clock, json, rows, wide, yaml};

/// `plumb app get`.
#[derive(Debug, Args)]
pub struct GetArgs {
    /// Application name.
    pub name: String,
    /// Ask the controller to compare again with the latest commit first, and wait for it.
    #[arg(long, conflicts_with = "hard_refresh")]
    pub refresh: bool,
    /// Like --refresh, and drop cached manifests so they are rendered again.
    #[arg(long)]
    pub hard_refresh: bool,
    /// Show the current or last operation.
    #[arg(long)]
    pub show_operation: bool,
    /// Seconds to wait for a refresh (0: no limit).
    #[arg(long, default_value_t = 0, value_name = "SECONDS")]
    pub timeout: u64,
    /// Output format.
    #[arg(short = 'o', long, value_enum, default_value_t = OutputFormat::Wide)]
    pub output: OutputFormat,
}

/// The text of `app get` in the wide/tree layouts, up to the resources (Argo's `printHeader`).
pub fn header_text(
    app: &Application,
    ctx: &HeaderContext,
    show_operation: bool,
    clock: &Clock,
) -> String {
    let mut out = wide::summary(app, ctx);
    let conditions = wide::conditions(app, &clock.tz);
    if !conditions.is_empty() {
        out.push('\n');
        out.push_str(&conditions);
        out.push('\n');
    }
    if show_operation
        && let Some(state) = app.status.as_ref().and_then(|s| s.operation_state.as_ref())
    {
        out.push('\n');
        out.push_str(&wide::operation(state, &clock.tz, clock.now));
    }
    out
}

/// The whole `-o wide` text.
pub fn wide_text(
    app: &Application,
    ctx: &HeaderContext,
    show_operation: bool,
    clock: &Clock,
) -> String {
    let mut out = header_text(app, ctx, show_operation, clock);
    if app
        .status
        .as_ref()
        .and_then(|s| s.resources.as_ref())
        .is_some_and(|r| !r.is_empty())
    {
        out.push('\n');
        out.push_str(&wide::resources(&rows::resource_rows(app)));
    }
    out
}

/// Runs `plumb app get`.
pub async fn run(client: &AppClient, args: GetArgs) -> Result<Outcome> {
    let app = if args.refresh || args.hard_refresh {
        let kind = if args.hard_refresh {
            Refresh::Hard
        } else {
            Refresh::Normal
        };
        refresh(client, &args.name, kind, args.timeout).await?
    } else {
        client.get(&args.name).await?
    };
    let clock = Clock::system();
    let text = match args.output {
        OutputFormat::Json => json::render(&app)?,
        OutputFormat::Yaml => yaml::render(&app)?,
        OutputFormat::Wide => {
            let ctx = header_context(client, &app, true).await?;
            wide_text(&app, &ctx, args.show_operation, &clock)
        }
        OutputFormat::Tree => {
            let ctx = header_context(client, &app, true).await?;
            let mut out = header_text(&app, &ctx, args.show_operation, &clock);
            if app
                .status
                .as_ref()
                .and_then(|s| s.resources.as_ref())
                .is_some_and(|r| !r.is_empty())
            {
                out.push('\n');
                out.push_str(&render_tree(client, &app).await?);
            }
            out
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
        let cli = Cli::try_parse_from(["get", "payments-api"]).unwrap();
        assert!(!cli.args.refresh && !cli.args.hard_refresh && !cli.args.show_operation);
        assert_eq!(cli.args.output, OutputFormat::Wide);
        let cli = Cli::try_parse_from([
            "get",
            "payments-api",
            "--hard-refresh",
            "--show-operation",
            "-o",
            "tree",
            "--timeout",
            "30",
        ])
        .unwrap();
        assert!(cli.args.hard_refresh && cli.args.show_operation);
        assert_eq!(
            (cli.args.output, cli.args.timeout),
            (OutputFormat::Tree, 30)
        );
        for o in ["json", "yaml", "wide", "tree"] {
            assert!(Cli::try_parse_from(["get", "x", "-o", o]).is_ok(), "{o}");
        }
        assert!(Cli::try_parse_from(["get", "x", "-o", "name"]).is_err());
        assert!(Cli::try_parse_from(["get", "x", "--refresh", "--hard-refresh"]).is_err());
    }
}
