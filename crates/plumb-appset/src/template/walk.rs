//! Every string of a JSON tree rendered, map keys included (Argo's `deeplyReplace` walks the typed
//! Application the same way: struct field names are never templates, and a string without a
//! template renders to itself, so rendering every object key is equivalent).

use std::cell::Cell;

use plumb_model::applicationset::ApplicationSetSpec;
use serde_json::{Map, Value};

use super::{Failure, MAX_RENDERED_BYTES, TemplateErrorKind, fast, gotmpl};
use crate::Params;

/// How strings are rendered: `{{param}}` substitution or Go templates.
pub(crate) struct Renderer<'a> {
    mode: Mode<'a>,
    /// Bytes rendered so far (bounded by [`MAX_RENDERED_BYTES`]).
    rendered: Cell<usize>,
}

enum Mode<'a> {
    Fast(&'a Params),
    Go {
        data: Value,
        options: gotmpl::Options,
    },
}

impl<'a> Renderer<'a> {
    /// The renderer `spec` asks for, over `params`.
    pub(crate) fn new(spec: &ApplicationSetSpec, params: &'a Params) -> Result<Self, Failure> {
        let mode = if spec.go_template() {
            let options = gotmpl::options(spec.go_template_options.as_deref().unwrap_or_default())
                .map_err(|e| ("goTemplateOptions".to_string(), e))?;
            Mode::Go {
                data: Value::Object(params.clone()),
                options,
            }
        } else {
            Mode::Fast(params)
        };
        Ok(Self {
            mode,
            rendered: Cell::new(0),
        })
    }

    /// `text` rendered; `field` names it in errors.
    pub(crate) fn render(&self, text: &str, field: &str) -> Result<String, Failure> {
        let out = match &self.mode {
            Mode::Fast(params) => fast::replace(text, params, MAX_RENDERED_BYTES),
            Mode::Go { data, options } => gotmpl::execute(field, text, data, options),
        }
        .map_err(|kind| (field.to_string(), kind))?;
        let total = self.rendered.get().saturating_add(out.len());
        if total > MAX_RENDERED_BYTES {
            return Err((field.to_string(), TemplateErrorKind::TooLarge));
        }
        self.rendered.set(total);
        Ok(out)
    }

    /// A copy of `tree` with every string and object key rendered.
    pub(crate) fn render_tree(&self, tree: &Value) -> Result<Value, Failure> {
        let mut path = Vec::new();
        self.render_value(tree, &mut path)
    }

    fn render_value(&self, value: &Value, path: &mut Vec<String>) -> Result<Value, Failure> {
        Ok(match value {
            Value::String(s) => Value::String(self.render(s, &field_name(path))?),
            Value::Array(items) => {
                let mut out = Vec::with_capacity(items.len());
                for (i, item) in items.iter().enumerate() {
                    path.push(format!("[{i}]"));
                    let rendered = self.render_value(item, path);
                    path.pop();
                    out.push(rendered?);
                }
                Value::Array(out)
            }
            Value::Object(map) => Value::Object(self.render_object(map, path)?),
            other => other.clone(),
        })
    }

    fn render_object(
        &self,
        map: &Map<String, Value>,
        path: &mut Vec<String>,
    ) -> Result<Map<String, Value>, Failure> {
        let mut out = Map::new();
        for (key, value) in map {
            path.push(segment(key));
            let rendered = self.render_value(value, path).and_then(|v| {
                let key = self.render(key, &field_name(path))?;
                Ok((key, v))
            });
            path.pop();
            let (key, v) = rendered?;
            // Go's nil map values are skipped (`isNillable && IsNil`), but a JSON null in a typed
            // Application reads as absent anyway.
            out.insert(key, v);
        }
        Ok(out)
    }
}

/// A path segment: `.name`, or `["app.kubernetes.io/name"]` for keys that are not identifiers.
fn segment(key: &str) -> String {
    if !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        format!(".{key}")
    } else {
        format!("[{key:?}]")
    }
}

/// The dotted field name of `path` (`spec.source.path`, `metadata.labels["a/b"]`).
pub(crate) fn field_name(path: &[String]) -> String {
    let joined: String = path.concat();
    joined.strip_prefix('.').unwrap_or(&joined).to_string()
}
