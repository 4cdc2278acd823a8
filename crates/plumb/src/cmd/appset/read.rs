//! `plumb appset list` and `plumb appset get`.

use anyhow::Result;
use clap::{Args, ValueEnum};
use plumb_model::applicationset::ApplicationSet;

use super::client::Ctx;
use crate::exit::Outcome;
use crate::output::{Clock, appset, json, yaml};

/// `-o` of `appset list`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ListFormat {
    /// The table with REPO, PATH and TARGET.
    Wide,
    /// `<namespace>/<name>` per line.
    Name,
    /// A JSON array of the ApplicationSets.
    Json,
    /// A YAML list of the ApplicationSets.
    Yaml,
}

/// `plumb appset list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Output format.
    #[arg(short = 'o', long, value_enum, default_value_t = ListFormat::Wide)]
    pub output: ListFormat,
    /// Only ApplicationSets whose template names one of these projects (repeatable).
    #[arg(short = 'p', long = "project", value_name = "PROJECT")]
    pub projects: Vec<String>,
    /// Label selector.
    #[arg(short = 'l', long, value_name = "SELECTOR")]
    pub selector: Option<String>,
}

/// The text of `appset list`.
pub fn render_list(sets: &[ApplicationSet], format: ListFormat, clock: &Clock) -> Result<String> {
    Ok(match format {
        ListFormat::Wide => appset::appset_table(sets, &clock.tz),
        ListFormat::Name => sets
            .iter()
            .map(|s| format!("{}\n", appset::qualified_name(s)))
            .collect(),
        ListFormat::Json => json::render(sets)?,
        ListFormat::Yaml => yaml::render(sets)?,
    })
}

pub async fn list(ctx: &Ctx, args: ListArgs) -> Result<Outcome> {
    let ns = ctx.target("").0;
    let sets = ctx
        .client
        .list(ns, ctx.file_ns(), args.selector.as_deref(), &args.projects)
        .await?;
    print!("{}", render_list(&sets, args.output, &Clock::system())?);
    Ok(Outcome::Success)
}

/// `-o` of `appset get`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum GetFormat {
    /// The summary and conditions.
    Wide,
    /// The ApplicationSet as JSON.
    Json,
    /// The ApplicationSet as YAML.
    Yaml,
}

/// `plumb appset get`.
#[derive(Debug, Args)]
pub struct GetArgs {
    /// The ApplicationSet (`name` or `namespace/name`).
    pub name: String,
    /// Output format.
    #[arg(short = 'o', long, value_enum, default_value_t = GetFormat::Wide)]
    pub output: GetFormat,
}

/// The text of `appset get` (`pending`: the deletions the brake holds, Plumb's addition).
pub fn render_get(
    set: &ApplicationSet,
    pending: &[String],
    format: GetFormat,
    clock: &Clock,
) -> Result<String> {
    Ok(match format {
        GetFormat::Json => json::render(set)?,
        GetFormat::Yaml => yaml::render(set)?,
        GetFormat::Wide => {
            let mut out = appset::appset_summary(set);
            let conditions = appset::appset_conditions(set, &clock.tz);
            if !conditions.is_empty() {
                out.push('\n');
                out.push_str(&conditions);
                out.push('\n');
            }
            out.push_str(&appset::pending_deletions(set, pending));
            out
        }
    })
}

pub async fn get(ctx: &Ctx, args: GetArgs) -> Result<Outcome> {
    let (ns, name) = ctx.target(&args.name);
    let set = ctx.client.get(ns, ctx.file_ns(), name).await?;
    let pending = match args.output {
        GetFormat::Wide if plumb_appset::api::deletion_held(&set).is_some() => {
            ctx.client.owned(&set).await?.1
        }
        _ => Vec::new(),
    };
    print!(
        "{}",
        render_get(&set, &pending, args.output, &Clock::system())?
    );
    Ok(Outcome::Success)
}
