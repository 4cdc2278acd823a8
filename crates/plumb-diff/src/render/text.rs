//! One object's text block: the heading, the YAML diff (built in or external), the attribution
//! comments.

use std::io::Write;

use serde_json::Value;

use super::normal::normal_diff;
use super::options::{DiffFormat, RenderOptions};
use super::unified::unified_diff;
use crate::error::{Error, Result};

pub(super) fn io(source: std::io::Error) -> Error {
    Error::ExternalDiff {
        program: "<output>".into(),
        source,
    }
}

/// One object's text: the heading, the diff of its YAML from live to desired (built in or
/// `KUBECTL_EXTERNAL_DIFF`), then the attribution `comments`.
pub(super) fn text_block(
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
