//! Reading fields of a plain JSON object the way Go's typed conversion defaults them.

use serde_json::Value;

use plumb_model::annotations;

/// The value at a path of object keys.
pub(crate) fn at<'a>(obj: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(obj, |v, key| v.get(key))
}

/// A string field, empty when absent or not a string.
pub(crate) fn str_at<'a>(obj: &'a Value, path: &[&str]) -> &'a str {
    at(obj, path).and_then(Value::as_str).unwrap_or_default()
}

/// An integer field, 0 when absent (Go's zero value).
pub(crate) fn int_at(obj: &Value, path: &[&str]) -> i64 {
    opt_int_at(obj, path).unwrap_or(0)
}

/// An integer field, `None` when absent (a Go pointer field).
pub(crate) fn opt_int_at(obj: &Value, path: &[&str]) -> Option<i64> {
    at(obj, path).and_then(|v| v.as_i64().or_else(|| v.as_f64().map(|f| f as i64)))
}

/// A boolean field, false when absent.
pub(crate) fn bool_at(obj: &Value, path: &[&str]) -> bool {
    at(obj, path).and_then(Value::as_bool).unwrap_or(false)
}

/// An array field, empty when absent.
pub(crate) fn array_at<'a>(obj: &'a Value, path: &[&str]) -> &'a [Value] {
    at(obj, path)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// An annotation value.
pub(crate) fn annotation<'a>(obj: &'a Value, key: &str) -> Option<&'a str> {
    at(obj, &["metadata", "annotations", key]).and_then(Value::as_str)
}

/// One entry of `status.conditions`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Condition<'a> {
    pub(crate) type_: &'a str,
    pub(crate) status: &'a str,
    pub(crate) reason: &'a str,
    pub(crate) message: &'a str,
    pub(crate) observed_generation: Option<i64>,
}

impl<'a> Condition<'a> {
    fn of(v: &'a Value) -> Self {
        Condition {
            type_: str_at(v, &["type"]),
            status: str_at(v, &["status"]),
            reason: str_at(v, &["reason"]),
            message: str_at(v, &["message"]),
            observed_generation: opt_int_at(v, &["observedGeneration"]),
        }
    }
}

/// The object's `status.conditions`, in order.
pub(crate) fn conditions(obj: &Value) -> impl Iterator<Item = Condition<'_>> {
    array_at(obj, &["status", "conditions"])
        .iter()
        .map(Condition::of)
}

/// The first condition of a type.
pub(crate) fn condition<'a>(obj: &'a Value, type_: &str) -> Option<Condition<'a>> {
    conditions(obj).find(|c| c.type_ == type_)
}

/// Whether the object is a sync hook, as gitops-engine `hook.IsHook` decides: an Argo hook
/// annotation other than a lone `Skip`, or a Helm hook annotation other than `crd-install`.
pub(crate) fn is_hook(obj: &Value) -> bool {
    if let Some(hooks) = annotation(obj, annotations::HOOK) {
        let types: Vec<&str> = hooks
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect();
        return !(types.len() == 1 && types[0] == "Skip");
    }
    match annotation(obj, annotations::HELM_HOOK) {
        Some(hooks) => hooks.split(',').map(str::trim).any(|h| h != "crd-install"),
        None => false,
    }
}

/// Go's `%q` for the names Kubernetes allows (DNS labels need no escaping); other characters
/// are escaped the way `strconv.Quote` does for ASCII.
pub(crate) fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
