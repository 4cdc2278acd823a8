//! Rendering diffs received in their JSON form ([`super::JsonDiff`], what `plumb server` sends in
//! the `diff` field of a `ResourceDiff`): the same text and JSON [`super::render`] prints for
//! the diffs the JSON was made of, so `plumb app diff` reads the same through the server as in
//! core mode. The values were masked before they were sent.

use std::io::Write;

use plumb_model::ResourceKey;
use serde_json::Value;

use super::json::sorted;
use super::options::{DiffFormat, RenderOptions};
use super::text::{io, text_block};
use crate::attribution::comment_text;
use crate::error::Result;
use crate::result::Attribution;

fn text<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or_default()
}

fn present(v: &Value, key: &str) -> Option<Value> {
    v.get(key).filter(|x| !x.is_null()).cloned()
}

/// Renders `diffs` (each one object of the `-o json` form, already filtered to the ones to
/// show) to `out`; with `opts.attribution` off the JSON has no attribution, as when none was
/// computed.
pub fn render_wire(diffs: &[Value], opts: &RenderOptions, out: &mut dyn Write) -> Result<()> {
    if opts.format == DiffFormat::Json {
        let items: Vec<Value> = diffs
            .iter()
            .cloned()
            .map(|mut d| {
                if !opts.attribution
                    && let Some(changes) = d.get_mut("changes").and_then(Value::as_array_mut)
                {
                    for c in changes {
                        c["attribution"] = Value::Null;
                    }
                }
                d
            })
            .collect();
        let mut text =
            serde_json::to_string_pretty(&sorted(Value::Array(items))).unwrap_or_default();
        text.push('\n');
        return out.write_all(text.as_bytes()).map_err(io);
    }
    for d in diffs {
        let key = ResourceKey::new(
            text(d, "group"),
            text(d, "kind"),
            text(d, "namespace"),
            text(d, "name"),
        );
        let comments: Vec<String> = if opts.attribution {
            d.get("changes")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|c| {
                    let a = c.get("attribution").filter(|a| a.is_object())?;
                    let attribution = Attribution {
                        manager: text(a, "manager").to_string(),
                        operation: text(a, "operation").to_string(),
                        time: text(a, "time").to_string(),
                        exact: a.get("exact").and_then(Value::as_bool).unwrap_or(true),
                    };
                    Some(comment_text(text(c, "path"), &attribution))
                })
                .collect()
        } else {
            Vec::new()
        };
        text_block(
            &key,
            present(d, "normalizedLive").as_ref(),
            present(d, "predictedLive").as_ref(),
            &comments,
            opts,
            out,
        )?;
    }
    Ok(())
}
