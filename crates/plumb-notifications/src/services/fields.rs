//! What the services share: their options read as Go's structs, and the template fields
//! notifications-engine keeps as text.

use serde_json::Value;

use crate::error::Error;

/// A service's options as its Go struct reads them (unknown keys ignored, as `yaml.Unmarshal`).
pub(crate) fn parse_options<T: serde::de::DeserializeOwned>(
    service: &str,
    options: &Value,
) -> Result<T, Error> {
    serde_json::from_value(options.clone()).map_err(|e| Error::Service {
        service: service.to_string(),
        message: format!("options: {e}"),
    })
}

/// A service's `apiURL` option: `default` when unset (`None`: the option is required), and
/// refused unless it is an absolute URL.
pub(crate) fn api_url(service: &str, given: &str, default: Option<&str>) -> Result<String, Error> {
    let url = match default {
        Some(d) if given.is_empty() => d,
        _ => given,
    };
    if url::Url::parse(url).is_err() {
        return Err(Error::Service {
            service: service.to_string(),
            message: "apiURL: not an absolute URL".to_string(),
        });
    }
    Ok(url.to_string())
}

/// A template field notifications-engine holds as a JSON string (`attachments`, `blocks`,
/// `facts`...): rendered as text, then parsed here. Empty means absent.
pub(crate) fn json_field(
    service: &str,
    section: Option<&Value>,
    field: &str,
) -> Result<Option<Value>, Error> {
    let text = match section.and_then(|s| s.get(field)) {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::String(s)) if s.trim().is_empty() => return Ok(None),
        Some(Value::String(s)) => s.clone(),
        // A YAML list written without `|` is what the user meant too.
        Some(other) => return Ok(Some(other.clone())),
    };
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| Error::Service {
            service: service.to_string(),
            message: format!("failed to unmarshal {field}: {e}"),
        })
}

/// A string field of a template section (`""` when absent).
pub(crate) fn text_field(section: Option<&Value>, field: &str) -> String {
    match section.and_then(|s| s.get(field)) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}
