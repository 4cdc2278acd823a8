//! The one dispatch over the renderers: a source rendered as its type, and the version of the
//! tool each type runs.

use plumb_model::application::ApplicationSource;

use super::context::Context;
use super::tool::{self, Tools};
use super::{directory, helm, kustomize};
use crate::detect::SourceType;
use crate::error::Result;
use crate::limits::Limits;
use crate::manifest::Manifest;

/// Renders `source` as `kind`.
pub(crate) fn render(
    ctx: &Context<'_>,
    source: &ApplicationSource,
    kind: SourceType,
) -> Result<Vec<Manifest>> {
    match kind {
        SourceType::Directory => {
            let opts = source.directory.clone().unwrap_or_default();
            directory::render(
                ctx.repo,
                ctx.app,
                &opts,
                ctx.limits,
                &ctx.tools.worker,
                Some(&ctx.view()),
            )
        }
        SourceType::Helm => helm::render(ctx, &source.helm.clone().unwrap_or_default()),
        SourceType::Kustomize => kustomize::render(ctx, source.kustomize.as_ref()),
        // Plugins need the plugin chosen for the source: the renderer runs them.
        SourceType::Plugin => Err(crate::error::Error::UnsupportedSource {
            detail: "no config management plugin was selected for this source".into(),
        }),
    }
}

/// The version string of the tool `kind` runs (part of the cache key), or empty for Plumb's own.
pub(crate) fn tool_version(tools: &Tools, limits: &Limits, kind: SourceType) -> Result<String> {
    let w = &tools.worker;
    match kind {
        SourceType::Directory | SourceType::Plugin => Ok(String::new()),
        SourceType::Helm => tool::version("helm", &tools.helm, &["version", "--short"], w, limits),
        SourceType::Kustomize => {
            tool::version("kustomize", &tools.kustomize, &["version"], w, limits)
        }
    }
}
