//! `-o json`: the object(s) as Argo prints them (`json.MarshalIndent(obj, "", "  ")`), the
//! Application's own fields in its type's order.

use serde::Serialize;

/// One object, or a list of objects, indented by two spaces, with a final newline.
pub fn render<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    let mut text = serde_json::to_string_pretty(value)?;
    text.push('\n');
    Ok(text)
}
