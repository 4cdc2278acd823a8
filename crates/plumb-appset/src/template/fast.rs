//! `{{param}}` substitution exactly as Argo's `Render.Replace` does it with
//! `valyala/fasttemplate` (own code: its quirks are the compatibility surface).
//!
//! - a string without `{{…}}` on one line is returned as is (Argo's `.*{{.*}}.*` pre-check, whose
//!   `.` does not match a newline), even with an unclosed `{{`;
//! - otherwise every `{{` must have a `}}` after it, or the whole string is an error;
//! - the tag between them is trimmed of spaces (`{{ name }}`) and replaced by the parameter of
//!   that name when it is a string; an empty tag, an unknown name or a non-string value leaves
//!   `{{tag}}` as it was.

use super::TemplateErrorKind;
use crate::Params;

const START: &str = "{{";
const END: &str = "}}";

/// `text` with its `{{param}}` tags replaced; at most `max_bytes` of output.
pub(crate) fn replace(
    text: &str,
    params: &Params,
    max_bytes: usize,
) -> Result<String, TemplateErrorKind> {
    if !looks_templated(text) {
        return Ok(text.to_string());
    }
    let parts = split(text)?;
    let mut out = String::with_capacity(text.len());
    for (literal, tag) in parts {
        out.push_str(literal);
        if let Some(tag) = tag {
            let trimmed = tag.trim_matches(|c: char| c.is_whitespace());
            match params.get(trimmed).and_then(|v| v.as_str()) {
                Some(value) if !trimmed.is_empty() => out.push_str(value),
                _ => {
                    out.push_str(START);
                    out.push_str(tag);
                    out.push_str(END);
                }
            }
        }
        if out.len() > max_bytes {
            return Err(TemplateErrorKind::Fast(format!(
                "the rendered string exceeds {max_bytes} bytes"
            )));
        }
    }
    Ok(out)
}

/// Argo's `.*{{.*}}.*`: a `{{` and a later `}}` on the same line.
fn looks_templated(text: &str) -> bool {
    text.split('\n').any(|line| {
        line.find(START)
            .is_some_and(|start| line[start + START.len()..].contains(END))
    })
}

/// fasttemplate's parse: literal text, each followed by the tag after it (none after the last).
fn split(text: &str) -> Result<Vec<(&str, Option<&str>)>, TemplateErrorKind> {
    let mut parts = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find(START) {
        let literal = &rest[..start];
        let after = &rest[start + START.len()..];
        let Some(end) = after.find(END) else {
            return Err(TemplateErrorKind::Fast(format!(
                "Cannot find end tag={END:?} in the template={text:?} starting from {after:?}"
            )));
        };
        parts.push((literal, Some(&after[..end])));
        rest = &after[end + END.len()..];
    }
    parts.push((rest, None));
    Ok(parts)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn params(v: serde_json::Value) -> Params {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn replaces_trimmed_string_parameters_and_keeps_unknown_tags() {
        let p = params(json!({"cluster": "dev", "path.basename": "app", "n": 3}));
        let out = replace(
            "{{cluster}}-{{ path.basename }}-{{missing}}-{{n}}-{{}}-{{  }}",
            &p,
            1 << 20,
        );
        assert_eq!(out.unwrap(), "dev-app-{{missing}}-{{n}}-{{}}-{{  }}");
    }

    #[test]
    fn an_unclosed_tag_fails_only_when_another_tag_is_complete() {
        let p = params(json!({"a": "x"}));
        assert_eq!(replace("{{a", &p, 100).unwrap(), "{{a");
        assert_eq!(replace("{{a\n}}", &p, 100).unwrap(), "{{a\n}}");
        let err = replace("{{a}} {{b", &p, 100).unwrap_err().to_string();
        assert!(err.contains("Cannot find end tag"), "{err}");
    }

    #[test]
    fn a_tag_spans_to_the_first_closing_braces() {
        let p = params(json!({"a{{b": "y", "b": "z"}));
        assert_eq!(replace("{{a{{b}}}}", &p, 100).unwrap(), "y}}");
    }

    #[test]
    fn output_is_bounded() {
        let p = params(json!({"big": "x".repeat(1000)}));
        let text = "{{big}}".repeat(100);
        assert!(replace(&text, &p, 10_000).is_err());
    }
}
