//! `plumb appset generate` and `plumb appset diff`: a local ApplicationSet file's Applications,
//! alone or compared with those the set owns in the cluster.

use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, ValueEnum};
use plumb_model::application::Application;

use super::client::Ctx;
use crate::exit::Outcome;
use crate::output::{appset, json, wide, yaml};

/// `-o` of `appset generate`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum GenerateFormat {
    /// Argo's Application table.
    Wide,
    /// The Applications as JSON.
    Json,
    /// The Applications as YAML.
    Yaml,
}

/// `plumb appset generate`.
#[derive(Debug, Args)]
pub struct GenerateArgs {
    /// The file with one ApplicationSet (`-`: stdin).
    pub file: PathBuf,
    /// Output format.
    #[arg(short = 'o', long, value_enum, default_value_t = GenerateFormat::Wide)]
    pub output: GenerateFormat,
}

/// The Applications with their type (Argo backfills it before printing).
fn typed(apps: &[Application]) -> Vec<Application> {
    apps.iter()
        .cloned()
        .map(|mut a| {
            a.api_version = Some(plumb_model::application::API_VERSION.into());
            a.kind = Some("Application".into());
            a
        })
        .collect()
}

/// The text of `appset generate`: JSON and YAML as Argo's `PrintResources` (one object, or a
/// list of them), else the `app list` table.
pub fn render_generated(apps: &[Application], format: GenerateFormat) -> Result<String> {
    let apps = typed(apps);
    Ok(match (format, apps.as_slice()) {
        (GenerateFormat::Wide, _) => wide::app_list(&apps, true),
        (GenerateFormat::Json, [one]) => json::render(one)?,
        (GenerateFormat::Json, _) => json::render(&apps)?,
        (GenerateFormat::Yaml, [one]) => yaml::render(one)?,
        (GenerateFormat::Yaml, _) => apps
            .iter()
            .map(yaml::render)
            .collect::<serde_json::Result<Vec<_>>>()?
            .join("---\n"),
    })
}

pub async fn generate(ctx: &Ctx, args: GenerateArgs) -> Result<Outcome> {
    let file = super::file::read_one(&args.file, ctx.file_ns())?;
    let apps = ctx.client.generate(&file).await?;
    print!("{}", render_generated(&apps, args.output)?);
    Ok(Outcome::Success)
}

/// `plumb appset diff`.
#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The file with one ApplicationSet (`-`: stdin).
    pub file: PathBuf,
}

pub async fn diff(ctx: &Ctx, args: DiffArgs) -> Result<Outcome> {
    let file = super::file::read_one(&args.file, ctx.file_ns())?;
    let apps = ctx.client.generate(&file).await?;
    let (live, _) = ctx.client.owned(&file.set).await?;
    let diff = plumb_appset::api::fleet_diff(&file.set, &apps, &live);
    print!("{}", appset::fleet_diff(&diff, file.set.namespace()));
    Ok(if diff.is_empty() {
        Outcome::Success
    } else {
        Outcome::Negative
    })
}
