//! Whatever the writer prints, the reader reads back to the same value (quoting is only worth
//! something if it preserves the value under kubectl's YAML 1.1 reading).

use serde_json::json;

#[test]
fn tricky_values_survive_a_round_trip() {
    let long = "word ".repeat(40);
    let obj = json!({
        "strings": ["on", "yes", "y", "0755", "08", "1.0", "", "~", "2026-07-20T10:12:03Z", "1:20",
            "a: b", "- x", "#c", "'q'", "tab\there", "a\r\nb", "line1\nline2\n", " lead\nx", "a\n b",
            "a \nb", "x\n\n", "\u{1F680}", long.trim_end(), format!("\t{long}x"), format!("e: {long}x")],
        "numbers": [0, -1, 0.5, 1234567.5, 1e-5, 9223372036854775807i64],
        "nested": {"on": {"": [{}, []]}},
    });
    let text = plumb_yaml::to_yaml_string(&obj);
    let docs = plumb_yaml::read_documents(&text, "round-trip").unwrap();
    assert_eq!(docs.len(), 1);
    assert_eq!(docs[0].value, obj, "text was:\n{text}");
}
