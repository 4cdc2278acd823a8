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

use std::io::Write;

use serde_json::Value;

use crate::attribution::comment_line;
use crate::error::{Error, Result};
use crate::mask::MaskedDiff;

pub use external::ExternalDiff;
pub use json::{JsonAttribution, JsonChange, JsonDiff, render_json};
pub use normal::normal_diff;
pub use unified::unified_diff;

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
    let io = |source| Error::ExternalDiff {
        program: "<output>".into(),
        source,
    };
    if opts.format == DiffFormat::Json {
        return out.write_all(render_json(diffs).as_bytes()).map_err(io);
    }
    for d in diffs {
        let k = d.key();
        write!(
            out,
            "\n===== {}/{} {}/{} ======\n",
            k.group, k.kind, k.namespace, k.name
        )
        .map_err(io)?;
        let live = d.live().map(plumb_yaml::to_yaml_string).unwrap_or_default();
        let desired = d
            .predicted()
            .map(plumb_yaml::to_yaml_string)
            .unwrap_or_default();
        if let Some(ext) = &opts.external {
            let version = d
                .predicted()
                .or(d.live())
                .map(api_version)
                .unwrap_or_default();
            ext.run(k, &version, &live, &desired, out)?;
        } else {
            let text = match opts.format {
                DiffFormat::Unified => {
                    unified_diff(&live, &desired, &format!("{}-live.yaml", k.name), &k.name)
                }
                _ => normal_diff(&live, &desired),
            };
            out.write_all(text.as_bytes()).map_err(io)?;
        }
        if opts.attribution {
            for line in d.changes().iter().filter_map(comment_line) {
                writeln!(out, "{line}").map_err(io)?;
            }
        }
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
