//! TEMPORARY shim until plumb-gotemplate lands (branch gotmpl): Go templates refused.
use serde_json::Value;

use super::TemplateErrorKind;

#[derive(Debug)]
pub(crate) struct Options;

pub(crate) fn options(_options: &[String]) -> Result<Options, TemplateErrorKind> {
    Ok(Options)
}

pub(crate) fn execute(
    _name: &str,
    _text: &str,
    _data: &Value,
    _options: &Options,
) -> Result<String, TemplateErrorKind> {
    Err(TemplateErrorKind::Go(
        "Go templates need plumb-gotemplate (not merged yet)".to_string(),
    ))
}
