//! Renderers. They take [`MaskedDiff`]s only. Text output is Argo CD's `argocd app diff`
//! layout: for each differing object a blank line, `===== <group>/<Kind> <namespace>/<name>
//! ======`, then the diff of the two objects as YAML (go-yaml v2 text, [`plumb_yaml`]) from live
//! to desired, and, with attribution on, one `# <path>: last written by ...` line per changed
//! field. With attribution off the text is byte-identical to Argo's.

mod external;
mod gnu;
mod json;
mod normal;
mod options;
mod text;
mod unified;
mod wire;

use std::io::Write;

use crate::attribution::comment_line;
use crate::error::Result;
use crate::mask::MaskedDiff;

pub use external::ExternalDiff;
pub use json::{JsonAttribution, JsonChange, JsonDiff, render_json};
pub use normal::normal_diff;
pub use options::{DiffFormat, RenderOptions};
pub use unified::unified_diff;
pub use wire::render_wire;

use text::{io, text_block};

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
