//! `goTemplate: true`: each string parsed and executed as a Go text/template with Argo's function
//! set (sprig without `env`, `expandenv`, `getHostByName`; plus `normalize`, `slugify`, `toYaml`,
//! `fromYaml`, `fromYamlArray`), by plumb-gotemplate, which bounds time and output.

use serde_json::Value;

use super::TemplateErrorKind;

pub(crate) use plumb_gotemplate::Options;

/// `goTemplateOptions` read (`missingkey=error`, ...).
pub(crate) fn options(options: &[String]) -> Result<Options, TemplateErrorKind> {
    Options::from_go_options(options).map_err(|e| TemplateErrorKind::Go(e.to_string()))
}

/// `text` executed over `data`, with Argo's messages (its templates are all named `base`, which
/// Go's messages repeat; the field is named by the caller).
pub(crate) fn execute(
    _field: &str,
    text: &str,
    data: &Value,
    options: &Options,
) -> Result<String, TemplateErrorKind> {
    let template = plumb_gotemplate::Template::parse("base", text)
        .map_err(|e| TemplateErrorKind::Go(format!("failed to parse template {text}: {e}")))?;
    template
        .execute(data, options)
        .map_err(|e| TemplateErrorKind::Go(format!("failed to execute go template {text}: {e}")))
}
