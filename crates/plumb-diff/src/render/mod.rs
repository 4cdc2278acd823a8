//! Renderers. They take [`MaskedDiff`]s only. Text output is Argo CD's `argocd app diff`
//! layout: for each differing object a blank line, `===== <group>/<Kind> <namespace>/<name>
//! ======`, then the diff of the two objects as YAML (go-yaml v2 text, [`plumb_yaml`]) from live
//! to desired, and, with attribution on, one `# <path>: last written by ...` line per changed
//! field. With attribution off the text is byte-identical to Argo's.

mod external;
mod gnu;
mod json;
mod normal;
mod unified;
mod wire;

use std::io::Write;

use serde_json::Value;

use crate::attribution::comment_line;
use crate::error::{Error, Result};
use crate::mask::MaskedDiff;

pub use external::ExternalDiff;
pub use json::{JsonAttribution, JsonChange, JsonDiff, render_json};
pub use normal::normal_diff;
pub use unified::unified_diff;
pub use wire::render_wire;

/// Output format (`--diff-format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum DiffFormat {
    /// POSIX normal format, as Argo prints with `diff`.
    #[default]
    Normal,
    /// Unified format with three lines of context.
    Unified,
    /// JSON (see [`JsonDiff`]).
    Json,
}

/// How to render.
#[derive(Debug, Clone, Default)]
pub struct RenderOptions {
    /// Format.
    pub format: DiffFormat,
    /// Print attribution comment lines after each text block.
    pub attribution: bool,
    /// Run this program instead of the built-in text diff (`KUBECTL_EXTERNAL_DIFF`).
    pub external: Option<ExternalDiff>,
}

/// Renders `diffs` (already filtered to the ones to show) to `out`.
pub fn render(diffs: &[MaskedDiff], opts: &RenderOptions, out: &mut dyn Write) -> Result<()> {
    if opts.format == DiffFormat::Json {
        return out.write_all(render_json(diffs).as_bytes()).map_err(io);
    }
    for d in diffs {
        let comments: Vec<String> = if opts.attribution {
            d.changes().iter().filter_map(comment_line).collect()
        } else {
            Vec::new()
        };
        text_block(d.key(), d.live(), d.predicted(), &comments, opts, out)?;
    }
    Ok(())
}

fn io(source: std::io::Error) -> Error {
    Error::ExternalDiff {
        program: "<output>".into(),
        source,
    }
}

/// One object's text: the heading, the diff of its YAML from live to desired (built in or
/// `KUBECTL_EXTERNAL_DIFF`), then the attribution `comments`.
pub(crate) fn text_block(
    k: &plumb_model::ResourceKey,
    live: Option<&Value>,
    predicted: Option<&Value>,
    comments: &[String],
    opts: &RenderOptions,
    out: &mut dyn Write,
) -> Result<()> {
    write!(
        out,
        "\n===== {}/{} {}/{} ======\n",
        k.group, k.kind, k.namespace, k.name
    )
    .map_err(io)?;
    let live_text = live.map(plumb_yaml::to_yaml_string).unwrap_or_default();
    let desired = predicted
        .map(plumb_yaml::to_yaml_string)
        .unwrap_or_default();
    if let Some(ext) = &opts.external {
        let version = predicted.or(live).map(api_version).unwrap_or_default();
        ext.run(k, &version, &live_text, &desired, out)?;
    } else {
        let text = match opts.format {
            DiffFormat::Unified => unified_diff(
                &live_text,
                &desired,
                &format!("{}-live.yaml", k.name),
                &k.name,
            ),
            _ => normal_diff(&live_text, &desired),
        };
        out.write_all(text.as_bytes()).map_err(io)?;
    }
    for line in comments {
        writeln!(out, "{line}").map_err(io)?;
    }
    Ok(())
}

fn api_version(v: &Value) -> String {
    let av = v
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default();
    av.rsplit('/').next().unwrap_or(av).to_string()
}
