//! Argo's string rendering inside generators: `values` entries and, in a matrix, the second
//! generator's fields, rendered with the parameters produced so far.
//!
//! Own code because Argo's `{{param}}` substitution is fasttemplate's exact behaviour (unknown
//! tags kept verbatim, an unclosed `{{` an error) and its parameter flattening is
//! `jeremywohl/flatten` with Go's `%v`.

use serde_json::Value;

use crate::error::GeneratorError;
use crate::params::Params;

/// How one ApplicationSet renders strings: `{{param}}` substitution or Go templates.
#[derive(Debug, Clone, Copy)]
pub struct Mode<'a> {
    /// `spec.goTemplate`.
    pub go_template: bool,
    /// `spec.goTemplateOptions`.
    pub go_options: &'a [String],
}

impl<'a> Mode<'a> {
    /// The mode of `set`.
    pub fn of(set: &'a plumb_model::applicationset::ApplicationSet) -> Self {
        Self {
            go_template: set.spec.go_template(),
            go_options: set.spec.go_template_options.as_deref().unwrap_or_default(),
        }
    }
}

/// Argo's `appendTemplatedValues`: every entry of `values` rendered with `params` and added as
/// `values.KEY` (flat) or under `values` (Go templates). All are rendered against the params
/// without any of the new values, as Argo does.
pub fn append_values(
    values: Option<&std::collections::BTreeMap<String, String>>,
    params: &mut Params,
    mode: Mode<'_>,
) -> Result<(), GeneratorError> {
    let Some(values) = values.filter(|v| !v.is_empty()) else {
        return Ok(());
    };
    let mut rendered = Vec::with_capacity(values.len());
    for (key, text) in values {
        let out = render(text, params, mode).map_err(|e| {
            GeneratorError::Invalid(format!(
                "failed to append templated values: values.{key}: {e}"
            ))
        })?;
        rendered.push((key.clone(), out));
    }
    if mode.go_template {
        let map = rendered
            .into_iter()
            .map(|(k, v)| (k, Value::String(v)))
            .collect::<Params>();
        params.insert("values".to_owned(), Value::Object(map));
    } else {
        for (k, v) in rendered {
            params.insert(format!("values.{k}"), Value::String(v));
        }
    }
    Ok(())
}

/// Argo's `Render.Replace` on one string.
pub fn render(text: &str, params: &Params, mode: Mode<'_>) -> Result<String, String> {
    if mode.go_template {
        return render_go(text, params, mode.go_options);
    }
    fasttemplate(text, params)
}

/// A Go template over the parameters, with Argo's messages.
fn render_go(text: &str, params: &Params, options: &[String]) -> Result<String, String> {
    let options = plumb_gotemplate::Options::from_go_options(options).map_err(|e| e.to_string())?;
    let template = plumb_gotemplate::Template::parse("base", text)
        .map_err(|e| format!("failed to parse template {text}: {e}"))?;
    template
        .execute(&Value::Object(params.clone()), &options)
        .map_err(|e| format!("failed to execute go template {text}: {e}"))
}

/// fasttemplate with `{{`/`}}`: a tag whose trimmed name is a string parameter is replaced,
/// any other tag is kept as written; a `{{` without a closing `}}` is an error.
pub fn fasttemplate(text: &str, params: &Params) -> Result<String, String> {
    if !text.contains("{{") {
        return Ok(text.to_owned());
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else {
            return Err(format!(
                "invalid template {text:?}: cannot find end tag \"}}}}\""
            ));
        };
        let tag = &after[..end];
        match params.get(tag.trim()) {
            Some(Value::String(s)) if !tag.trim().is_empty() => out.push_str(s),
            _ => {
                out.push_str("{{");
                out.push_str(tag);
                out.push_str("}}");
            }
        }
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    Ok(out)
}

/// `jeremywohl/flatten` in dot style with Go's `%v` on the leaves: what Argo feeds to label
/// selectors and what the files and plugin generators produce in `{{param}}` mode.
pub fn flatten(value: &Params) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (k, v) in value {
        flatten_into(k.clone(), v, &mut out);
    }
    out
}

fn flatten_into(key: String, value: &Value, out: &mut Vec<(String, String)>) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (k, v) in map {
                flatten_into(format!("{key}.{k}"), v, out);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            for (i, v) in items.iter().enumerate() {
                flatten_into(format!("{key}.{i}"), v, out);
            }
        }
        other => out.push((key, go_format(other))),
    }
}

/// Go's `fmt.Sprintf("%v", v)` of a value decoded from JSON or YAML.
pub fn go_format(value: &Value) -> String {
    match value {
        Value::Null => "<nil>".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::String(s) => s.clone(),
        // Argo decodes JSON and YAML numbers into float64, integers included.
        Value::Number(n) => go_float(n.as_f64().unwrap_or_default()),
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(go_format).collect();
            format!("[{}]", parts.join(" "))
        }
        Value::Object(map) => {
            let parts: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{k}:{}", go_format(v)))
                .collect();
            format!("map[{}]", parts.join(" "))
        }
    }
}

/// Go's `%v` of a float64 (`%g`, shortest): exponent form below 1e-4 and from 1e6 on.
fn go_float(f: f64) -> String {
    if f == 0.0 {
        return "0".to_owned();
    }
    let exp = f.abs().log10().floor() as i32;
    if (-4..6).contains(&exp) {
        return format!("{f}");
    }
    let s = format!("{f:e}");
    match s.split_once('e') {
        Some((mantissa, e)) => {
            let n: i32 = e.parse().unwrap_or_default();
            let sign = if n < 0 { '-' } else { '+' };
            format!("{mantissa}e{sign}{:02}", n.abs())
        }
        None => s,
    }
}

/// Argo's `SanitizeName`: lower case, anything outside `[-a-z0-9.]` to `-`, at most 253
/// bytes, `-` and `.` trimmed from both ends.
pub fn sanitize_name(name: &str) -> String {
    let mut out: String = name
        .to_lowercase()
        .chars()
        .map(|c| match c {
            'a'..='z' | '0'..='9' | '-' | '.' => c,
            _ => '-',
        })
        .collect();
    out.truncate(253);
    out.trim_matches(|c| c == '-' || c == '.').to_owned()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn params(v: Value) -> Params {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn fasttemplate_keeps_unknown_tags_and_refuses_unclosed() {
        let p = params(json!({"name": "prod", "n": 3}));
        assert_eq!(
            fasttemplate("{{ name }}-{{missing}}-{{n}}", &p).as_deref(),
            Ok("prod-{{missing}}-{{n}}")
        );
        assert!(fasttemplate("a {{name", &p).is_err());
        assert_eq!(fasttemplate("{{}}", &p).as_deref(), Ok("{{}}"));
    }

    #[test]
    fn values_see_the_generator_params_not_each_other() {
        let mut p = params(json!({"name": "in-cluster"}));
        let values = [
            ("a".to_owned(), "{{name}}-x".to_owned()),
            ("b".to_owned(), "{{values.a}}".to_owned()),
        ]
        .into_iter()
        .collect();
        let mode = Mode {
            go_template: false,
            go_options: &[],
        };
        append_values(Some(&values), &mut p, mode).unwrap();
        assert_eq!(p["values.a"], "in-cluster-x");
        assert_eq!(p["values.b"], "{{values.a}}");
    }

    #[test]
    fn go_format_matches_go() {
        assert_eq!(go_format(&json!(1)), "1");
        assert_eq!(go_format(&json!(1.5)), "1.5");
        assert_eq!(go_format(&json!(1_000_000)), "1e+06");
        assert_eq!(go_format(&json!(123_456)), "123456");
        assert_eq!(go_format(&json!(true)), "true");
        assert_eq!(go_format(&json!(null)), "<nil>");
    }

    #[test]
    fn sanitize_like_argo() {
        assert_eq!(sanitize_name("My_App.Name-"), "my-app.name");
        assert_eq!(sanitize_name("-._x_"), "x");
    }
}
