//! Reading a multi-document YAML or JSON stream the way kubectl does.
//!
//! kubectl (`k8s.io/apimachinery/pkg/util/yaml`) splits a stream on lines that are exactly `---`
//! (trailing blanks allowed), skips empty documents, and reads each document with go-yaml v2, a
//! YAML 1.1 reader: `yes`/`no`/`on`/`off` are booleans, `0755` is octal, `<<` merges. A stream
//! whose first non-blank character is `{` is a sequence of JSON objects. Numbers are then
//! round-tripped through JSON by kubectl, so an integral float such as `1.0` becomes the
//! integer `1`; we do the same. Flattening `kind: List` objects is left to callers
//! ([`flatten_lists`]) because some of them (error messages, counts) want the raw documents.

use serde_json::{Number, Value};

use crate::duplicates::{DuplicateKey, Tracked};
use crate::error::{Error, Result};

/// One object read from a stream.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    /// The document's content.
    pub value: Value,
    /// Position of the document in the stream (0-based, counting `---`-separated documents,
    /// empty ones included, so it matches what a person counts in the file).
    pub index: usize,
    /// 1-based line of the document's first content line (not blank, not a comment, not `---`).
    pub line: usize,
}

/// Deepest nesting of mappings and sequences a document may have (the top-level mapping is
/// level 1), YAML and JSON alike. Real manifests stay well below (a CRD's OpenAPI schema nests
/// about 2 levels per schema level, so 64 allows some 28 levels of nested fields); the bound is
/// the YAML reader's own default, which keeps its recursive descent (over 10 KiB of stack per
/// level in a debug build) far from the end of a 2 MiB thread stack, and keeps recursive code
/// after the reader (diff, normalisation, masking) away from it too.
pub const MAX_DEPTH: usize = 64;

/// The YAML reader's structural bound: one level more than [`MAX_DEPTH`], so a document one level
/// too deep is read and refused by [`check_depth`], and anything deeper stops in the reader
/// (mapped to the same error). serde_json's own bound is fixed at 127.
const READER_DEPTH: usize = MAX_DEPTH + 1;

/// Limits against alias bombs ("billion laughs"): generous for real manifests, small enough
/// that an expansion attack stops in milliseconds.
fn options() -> serde_saphyr::Options {
    serde_saphyr::options! {
        budget: serde_saphyr::budget! {
            max_aliases: 10_000,
            max_anchors: 10_000,
            max_depth: READER_DEPTH,
        },
        alias_limits: serde_saphyr::alias_limits! {
            max_total_replayed_events: 200_000,
            max_replay_stack_depth: 32,
        },
        duplicate_keys: serde_saphyr::DuplicateKeyPolicy::PassThrough,
        legacy_octal_numbers: true,
    }
}

/// How many duplicate keys of one stream [`read_documents`] logs one by one.
const LOGGED_DUPLICATES: usize = 20;

/// Reads every non-empty document of a YAML or JSON stream. `source` names the input in errors.
/// A mapping with a duplicate key is read as kubectl and Argo CD read it (the last value wins)
/// and logged as a warning naming the source, line and key; [`read_documents_reporting`]
/// returns them instead.
pub fn read_documents(text: &str, source: &str) -> Result<Vec<Document>> {
    let (docs, duplicates) = read_documents_reporting(text, source)?;
    for d in duplicates.iter().take(LOGGED_DUPLICATES) {
        tracing::warn!(source = %d.source_name, line = d.line, key = %d.key, "{d}");
    }
    if duplicates.len() > LOGGED_DUPLICATES {
        // A generated file full of duplicates must not flood the log.
        tracing::warn!(
            source,
            "{source}: {} more duplicate keys not listed",
            duplicates.len() - LOGGED_DUPLICATES
        );
    }
    Ok(docs)
}

/// [`read_documents`], returning the duplicate keys it accepted instead of logging them.
pub fn read_documents_reporting(
    text: &str,
    source: &str,
) -> Result<(Vec<Document>, Vec<DuplicateKey>)> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.trim_start().starts_with('{') {
        return read_json_stream(text, source);
    }
    let mut docs = Vec::new();
    let mut duplicates = Vec::new();
    for (index, chunk) in split_documents(text).into_iter().enumerate() {
        let Some(line) = first_content_line(chunk.text, chunk.first_line) else {
            continue;
        };
        let values: Vec<Tracked> = serde_saphyr::from_multiple_with_options(chunk.text, options())
            .map_err(|e| yaml_error(&e, source, chunk.first_line, line))?;
        for tracked in values {
            duplicates.extend(
                tracked
                    .duplicates
                    .into_iter()
                    .map(|(key, at)| DuplicateKey {
                        source_name: source.to_string(),
                        line: if at == 0 {
                            line
                        } else {
                            chunk.first_line + at - 1
                        },
                        key,
                    }),
            );
            if tracked.value.is_null() {
                continue;
            }
            check_depth(&tracked.value, source, line)?;
            docs.push(Document {
                value: integral_floats_to_ints(tracked.value),
                index,
                line,
            });
        }
    }
    Ok((docs, duplicates))
}

/// Replaces every `kind: List` document (`v1/List`, or any `*List` kind with `items`, as kubectl's
/// resource builder does) by its items, which inherit the list's index and line.
pub fn flatten_lists(docs: Vec<Document>) -> Vec<Document> {
    let mut out = Vec::with_capacity(docs.len());
    for doc in docs {
        let is_list = doc
            .value
            .get("kind")
            .and_then(Value::as_str)
            .is_some_and(|k| k.ends_with("List"))
            && doc.value.get("items").is_some_and(Value::is_array);
        if !is_list {
            out.push(doc);
            continue;
        }
        let Document { value, index, line } = doc;
        if let Value::Object(mut map) = value
            && let Some(Value::Array(items)) = map.remove("items")
        {
            let nested: Vec<Document> = items
                .into_iter()
                .map(|value| Document { value, index, line })
                .collect();
            out.extend(flatten_lists(nested));
        }
    }
    out
}

struct Chunk<'a> {
    text: &'a str,
    first_line: usize,
}

/// Splits like kubectl's `YAMLReader`: a line starting with `---` followed only by whitespace
/// ends a document. (`--- # note` or `--- !tag` do not split there, as in kubectl; the YAML
/// reader then sees them as an explicit document start.)
fn split_documents(text: &str) -> Vec<Chunk<'_>> {
    let mut chunks = Vec::new();
    let mut start = 0;
    let mut start_line = 1;
    let mut offset = 0;
    for (line_no, line) in (1..).zip(text.split_inclusive('\n')) {
        let is_separator = line
            .strip_prefix("---")
            .is_some_and(|rest| rest.trim_end().is_empty());
        if is_separator {
            chunks.push(Chunk {
                text: &text[start..offset],
                first_line: start_line,
            });
            start = offset + line.len();
            start_line = line_no + 1;
        }
        offset += line.len();
    }
    chunks.push(Chunk {
        text: &text[start..],
        first_line: start_line,
    });
    chunks
}

fn first_content_line(chunk: &str, first_line: usize) -> Option<usize> {
    chunk
        .lines()
        .enumerate()
        .find(|(_, l)| {
            let t = l.trim();
            !t.is_empty() && !t.starts_with('#') && t != "---" && t != "..."
        })
        .map(|(i, _)| first_line + i)
}

fn yaml_error(
    err: &serde_saphyr::Error,
    source: &str,
    chunk_line: usize,
    doc_line: usize,
) -> Error {
    let line = match err.location() {
        Some(loc) if loc.line() > 0 => chunk_line + usize::try_from(loc.line()).unwrap_or(1) - 1,
        _ => doc_line,
    };
    let full = err.to_string();
    // The reader's depth budget (`budget breached: Depth { depth: 66 }`) or, for flow
    // collections, its parser's nesting bound (`recursion limit exceeded`): the same error as
    // check_depth gives one level earlier.
    if full.contains("budget breached: Depth") || full.contains("recursion limit exceeded") {
        return too_deep(source, doc_line);
    }
    // serde-saphyr appends its own position and a source snippet; keep only the first line of
    // the message and put the stream-relative line in front instead.
    let message = full.lines().next().unwrap_or_default();
    let message = match message.find(" at line ") {
        Some(i) => &message[..i],
        None => message,
    };
    Error::Yaml {
        source_name: source.to_string(),
        line,
        message: message.trim().to_string(),
    }
}

fn read_json_stream(text: &str, source: &str) -> Result<(Vec<Document>, Vec<DuplicateKey>)> {
    let mut docs = Vec::new();
    let mut duplicates = Vec::new();
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<Tracked>();
    let mut index = 0;
    loop {
        let before = stream.byte_offset();
        let next = stream.next();
        let Some(next) = next else { break };
        let skipped = text[before..].len() - text[before..].trim_start().len();
        let line = text[..before + skipped].matches('\n').count() + 1;
        let tracked = next.map_err(|e| {
            if e.to_string().starts_with("recursion limit exceeded") {
                too_deep(source, line)
            } else {
                Error::Json {
                    source_name: source.to_string(),
                    line: e.line(),
                    source: e,
                }
            }
        })?;
        check_depth(&tracked.value, source, line)?;
        duplicates.extend(tracked.duplicates.into_iter().map(|(key, _)| DuplicateKey {
            source_name: source.to_string(),
            line,
            key,
        }));
        if !tracked.value.is_null() {
            docs.push(Document {
                value: integral_floats_to_ints(tracked.value),
                index,
                line,
            });
        }
        index += 1;
    }
    Ok((docs, duplicates))
}

/// Refuses a document nested deeper than [`MAX_DEPTH`].
fn check_depth(value: &Value, source: &str, line: usize) -> Result<()> {
    if depth(value) > MAX_DEPTH {
        return Err(too_deep(source, line));
    }
    Ok(())
}

/// Levels of mappings and sequences (a scalar is 0). Recursion is bounded by the readers.
fn depth(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        Value::Object(map) => 1 + map.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

fn too_deep(source: &str, line: usize) -> Error {
    Error::TooDeep {
        source_name: source.to_string(),
        line,
        limit: MAX_DEPTH,
    }
}

/// kubectl turns YAML into JSON text before decoding, and Go writes an integral float as an
/// integer there (`1.0` → `1`), so the decoded object holds an integer.
fn integral_floats_to_ints(value: Value) -> Value {
    match value {
        Value::Number(n) if n.is_f64() => {
            let f = n.as_f64().unwrap_or(f64::NAN);
            if f.fract() == 0.0 && f.abs() < 9.2e18 {
                // The range check above makes the conversion exact.
                #[allow(clippy::cast_possible_truncation)]
                let i = f as i64;
                Value::Number(Number::from(i))
            } else {
                Value::Number(n)
            }
        }
        Value::Array(items) => {
            Value::Array(items.into_iter().map(integral_floats_to_ints).collect())
        }
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| (k, integral_floats_to_ints(v)))
                .collect(),
        ),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `{"a": {"a": … 1 …}}` nested `levels` deep, as JSON and as flow YAML and block YAML.
    fn nested(levels: usize) -> (String, String, String) {
        let json = format!("{}1{}", "{\"a\": ".repeat(levels), "}".repeat(levels));
        let flow = format!("x: {}1{}", "[".repeat(levels - 1), "]".repeat(levels - 1));
        let mut block = String::new();
        for i in 0..levels {
            block.push_str(&"  ".repeat(i));
            block.push_str(if i + 1 == levels { "a: 1\n" } else { "a:\n" });
        }
        (json, flow, block)
    }

    #[test]
    fn yaml_and_json_share_one_depth_bound() {
        let (json, flow, block) = nested(MAX_DEPTH);
        for text in [&json, &flow, &block] {
            read_documents(text, "ok.yaml").unwrap();
        }
        for levels in [MAX_DEPTH + 1, MAX_DEPTH + 2, 130, 2_000] {
            let (json, flow, block) = nested(levels);
            for (kind, text) in [("json", &json), ("flow", &flow), ("block", &block)] {
                let err = read_documents(text, "deep.yaml").unwrap_err();
                assert!(
                    matches!(err, Error::TooDeep { .. }),
                    "{levels} {kind}: {err}"
                );
                assert_eq!(
                    err.to_string(),
                    format!("deep.yaml:1: document nests deeper than {MAX_DEPTH} levels")
                );
            }
        }
    }
    use serde_json::json;

    fn values(text: &str) -> Vec<Value> {
        read_documents(text, "t.yaml")
            .unwrap()
            .into_iter()
            .map(|d| d.value)
            .collect()
    }

    #[test]
    fn yaml_1_1_booleans_like_kubectl() {
        let v = &values("a: yes\nb: no\nc: on\nd: off\ne: True\nf: y\n")[0];
        assert_eq!(v["a"], true);
        assert_eq!(v["b"], false);
        assert_eq!(v["c"], true);
        assert_eq!(v["d"], false);
        assert_eq!(v["e"], true);
        // go-yaml v2 resolves `y` as a boolean too.
        assert_eq!(v["f"], json!(true));
    }

    #[test]
    fn legacy_octal_and_other_numbers() {
        let v = &values("mode: 0755\nhex: 0x1F\nf: 0.5\ni: 1.0\nbig: 1e3\ns: \"0755\"\n")[0];
        assert_eq!(v["mode"], 493);
        assert_eq!(v["hex"], 31);
        assert_eq!(v["f"], 0.5);
        assert_eq!(v["i"], json!(1));
        assert!(v["i"].is_i64());
        assert_eq!(v["big"], json!(1000));
        assert_eq!(v["s"], "0755");
    }

    #[test]
    fn merge_keys_are_merged() {
        let text = "base: &b\n  cpu: 100m\n  memory: 1Gi\nlimits:\n  <<: *b\n  memory: 2Gi\n";
        let v = &values(text)[0];
        assert_eq!(v["limits"], json!({"cpu": "100m", "memory": "2Gi"}));
    }

    #[test]
    fn empty_documents_skipped_with_index_and_line() {
        let text = "# header\n---\n---\n\n# c\nkind: A\n---\nkind: B\n...\n---\n";
        let docs = read_documents(text, "t.yaml").unwrap();
        assert_eq!(docs.len(), 2);
        assert_eq!((docs[0].index, docs[0].line), (2, 6));
        assert_eq!((docs[1].index, docs[1].line), (3, 8));
        assert_eq!(docs[1].value["kind"], "B");
    }

    #[test]
    fn separator_with_comment_still_reads_both_documents() {
        let docs = read_documents("a: 1\n--- # next\nb: 2\n", "t.yaml").unwrap();
        assert_eq!(docs.len(), 2);
        assert_eq!(docs[1].value, json!({"b": 2}));
    }

    #[test]
    fn duplicate_key_last_value_wins_and_is_reported_with_line() {
        // sigs.k8s.io/yaml (go-yaml v2) and kubectl keep the last value.
        let text = "a: 1\n---\nkind: ConfigMap\ndata:\n  x: \"1\"\n  y: \"0\"\n  x: \"2\"\n";
        let (docs, dups) = read_documents_reporting(text, "apps/cm.yaml").unwrap();
        assert_eq!(docs[1].value["data"], json!({"x": "2", "y": "0"}));
        assert_eq!(
            dups,
            [DuplicateKey {
                source_name: "apps/cm.yaml".into(),
                line: 7,
                key: "x".into()
            }]
        );
        assert_eq!(
            dups[0].to_string(),
            "apps/cm.yaml:7: duplicate key \"x\": the last value is used (as kubectl and Argo CD do)"
        );
        // read_documents accepts it too (and logs the warning).
        assert_eq!(read_documents(text, "apps/cm.yaml").unwrap(), docs);
    }

    #[test]
    fn duplicates_inside_lists_and_at_top_level() {
        let text = "kind: A\nkind: B\nitems:\n- name: a\n  name: b\n";
        let (docs, dups) = read_documents_reporting(text, "t.yaml").unwrap();
        assert_eq!(
            docs[0].value,
            json!({"kind": "B", "items": [{"name": "b"}]})
        );
        let found: Vec<(usize, &str)> = dups.iter().map(|d| (d.line, d.key.as_str())).collect();
        assert_eq!(found, [(2, "kind"), (5, "name")]);
    }

    #[test]
    fn merge_keys_overridden_explicitly_are_not_duplicates() {
        let text = "base: &b\n  cpu: 100m\nlimits:\n  <<: *b\n  cpu: 2\n";
        let (docs, dups) = read_documents_reporting(text, "t.yaml").unwrap();
        assert_eq!(docs[0].value["limits"], json!({"cpu": 2}));
        assert!(dups.is_empty(), "{dups:?}");
    }

    #[test]
    fn syntax_error_line_is_relative_to_the_stream() {
        let text = "a: 1\n---\nb: 2\nc: [1, 2\n";
        let Error::Yaml { line, .. } = read_documents(text, "s.yaml").unwrap_err() else {
            panic!("expected a YAML error");
        };
        assert!((4..=5).contains(&line), "line {line}");
    }

    #[test]
    fn alias_bomb_is_refused() {
        let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..12 {
            let p = i - 1;
            text.push_str(&format!(
                "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
            ));
        }
        assert!(read_documents(&text, "bomb.yaml").is_err());
    }

    #[test]
    fn json_stream_and_duplicates() {
        let docs = read_documents(
            "{\"kind\": \"A\", \"n\": 1.0}\n\n{\"kind\": \"B\"}",
            "x.json",
        )
        .unwrap();
        assert_eq!(docs.len(), 2);
        assert_eq!(docs[0].value, json!({"kind": "A", "n": 1}));
        assert_eq!((docs[1].index, docs[1].line), (1, 3));
        // Go's encoding/json keeps the last value too.
        let (docs, dups) = read_documents_reporting("\n{\"a\": 1,\n \"a\": 2}", "x.json").unwrap();
        assert_eq!(docs[0].value, json!({"a": 2}));
        assert_eq!((dups[0].line, dups[0].key.as_str()), (2, "a"));
    }

    #[test]
    fn json_document_inside_yaml_stream() {
        let docs =
            read_documents("kind: A\n---\n{\"kind\": \"B\", \"on\": \"yes\"}\n", "t").unwrap();
        assert_eq!(docs[1].value, json!({"kind": "B", "on": "yes"}));
    }

    #[test]
    fn lists_are_kept_until_flattened() {
        let text = "apiVersion: v1\nkind: List\nitems:\n- kind: A\n- kind: ConfigMapList\n  items:\n  - kind: ConfigMap\n";
        let docs = read_documents(text, "t").unwrap();
        assert_eq!(docs.len(), 1);
        let flat = flatten_lists(docs);
        let kinds: Vec<_> = flat.iter().map(|d| d.value["kind"].clone()).collect();
        assert_eq!(kinds, [json!("A"), json!("ConfigMap")]);
    }
}
