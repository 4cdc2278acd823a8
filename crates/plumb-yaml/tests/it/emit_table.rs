//! What go-yaml v2 (`sigs.k8s.io/yaml.Marshal`, v2.4 emitter) prints for tricky values, one row
//! per case. Each expected text was derived from go-yaml v2's source: `encoder.stringv` asks for
//! double quotes when `resolve("", s)` is not `!!str` (YAML 1.1 bools/nulls, ints incl. octal,
//! hex, binary and underscores, floats, timestamps) or `s` is a base-60 float; for a literal
//! block when `s` contains `\n`; plain otherwise. The emitter's `analyze_scalar` then demotes
//! plain to single quotes on indicators (`- `, `: `, ` #`, leading `*&!|>'"%@` and friends,
//! leading/trailing spaces), and single/literal to double quotes on non-printable characters
//! (tab, CR, characters above U+FFFD) or a space before a line break.

use serde_json::{Value, json};

fn one(value: Value) -> String {
    plumb_yaml::to_yaml_string(&json!({ "k": value }))
}

/// (value, what follows `k:` on its line(s), why)
const SCALARS: &[(&str, &str, &str)] = &[
    ("plain", " plain", "an ordinary string stays plain"),
    ("on", " \"on\"", "YAML 1.1 boolean"),
    ("yes", " \"yes\"", "YAML 1.1 boolean"),
    (
        "Off",
        " \"Off\"",
        "YAML 1.1 boolean, capitalised form in resolve.go's map",
    ),
    ("y", " \"y\"", "go-yaml v2 maps y/Y/n/N to booleans"),
    ("N", " \"N\"", "go-yaml v2 maps y/Y/n/N to booleans"),
    ("true", " \"true\"", "boolean"),
    ("null", " \"null\"", "null"),
    ("NULL", " \"NULL\"", "null"),
    ("~", " \"~\"", "null"),
    ("", " \"\"", "the empty string resolves to null"),
    ("1", " \"1\"", "int"),
    ("-1", " \"-1\"", "signed int"),
    ("+1", " \"+1\"", "signed int"),
    ("1.0", " \"1.0\"", "float"),
    (".5", " \".5\"", "float starting with a dot"),
    ("1e3", " \"1e3\"", "float with exponent"),
    ("1.", " \"1.\"", "yamlStyleFloat allows an empty fraction"),
    ("0755", " \"0755\"", "legacy octal int (ParseInt base 0)"),
    ("08", " \"08\"", "not octal, but yamlStyleFloat matches"),
    ("0x1F", " \"0x1F\"", "hex int"),
    ("0o17", " \"0o17\"", "Go's 0o octal prefix"),
    ("0b101", " \"0b101\"", "binary int"),
    (
        "1_000",
        " \"1_000\"",
        "underscores are dropped before parsing",
    ),
    (
        "12345678901234567890123",
        " \"12345678901234567890123\"",
        "too big for int, still a float",
    ),
    (
        "1:20",
        " \"1:20\"",
        "base-60 float, quoted for other parsers",
    ),
    (".inf", " \".inf\"", "infinity"),
    ("-.Inf", " \"-.Inf\"", "negative infinity"),
    (".nan", " \".nan\"", "NaN"),
    (
        "2026-07-20T10:12:03Z",
        " \"2026-07-20T10:12:03Z\"",
        "timestamp (creationTimestamp looks like this)",
    ),
    (
        "2026-7-2",
        " \"2026-7-2\"",
        "date: Go's layout 2006-1-2 takes one-digit month and day",
    ),
    (
        "2026-07-20 10:12:03",
        " \"2026-07-20 10:12:03\"",
        "space-separated timestamp",
    ),
    (
        "2026-02-30",
        " 2026-02-30",
        "not a valid date, so a plain string",
    ),
    (
        "8080:80",
        " 8080:80",
        "not base 60 (80 is not [0-5]?[0-9]); ':' not followed by space",
    ),
    ("12:60", " 12:60", "60 is not a base-60 digit pair"),
    ("1.2.3", " 1.2.3", "no number reading"),
    ("1e", " 1e", "exponent without digits"),
    ("inf", " inf", "only .inf is special"),
    ("NaN", " NaN", "only .nan/.NaN/.NAN are special"),
    ("ON2", " ON2", "not in the map"),
    (
        "<<",
        " <<",
        "'<' has no resolve hint, so the merge key is written plain",
    ),
    ("+", " +", "a lone sign is a string and not an indicator"),
    ("-", " '-'", "'-' followed by the end is a block indicator"),
    ("-item", " -item", "'-' not followed by a space"),
    ("- item", " '- item'", "sequence indicator"),
    ("a: b", " 'a: b'", "': ' is a block indicator"),
    (
        "key:",
        " 'key:'",
        "':' at the end counts as followed by whitespace",
    ),
    (
        "http://x:80/y",
        " http://x:80/y",
        "':' not followed by a space",
    ),
    ("#c", " '#c'", "comment indicator at the start"),
    ("a #b", " 'a #b'", "'#' after a space starts a comment"),
    ("a#b", " a#b", "'#' inside a word is fine"),
    ("*star", " '*star'", "alias indicator"),
    ("&a", " '&a'", "anchor indicator"),
    ("!tag", " '!tag'", "tag indicator"),
    ("|x", " '|x'", "literal indicator"),
    (">x", " '>x'", "folded indicator"),
    ("%x", " '%x'", "directive indicator"),
    ("@timestamp", " '@timestamp'", "reserved indicator"),
    ("`x", " '`x'", "reserved indicator"),
    ("[a]", " '[a]'", "flow sequence indicator"),
    ("{x}", " '{x}'", "flow mapping indicator"),
    ("a,b", " a,b", "',' only matters in flow context"),
    ("?x", " ?x", "'?' not followed by a space"),
    ("? x", " '? x'", "'? ' is a block indicator"),
    ("---", " '---'", "document marker"),
    ("...", " '...'", "document end marker"),
    ("it's", " it's", "an apostrophe inside is fine"),
    (
        "'q'",
        " '''q'''",
        "leading quote: single-quoted with doubled quotes",
    ),
    ("\"dq\"", " '\"dq\"'", "leading double quote: single-quoted"),
    (" lead", " ' lead'", "leading space forbids plain"),
    ("trail ", " 'trail '", "trailing space forbids plain"),
    (
        "tab\there",
        " \"tab\\there\"",
        "a tab is not printable for libyaml: double quotes, escaped",
    ),
    (
        "a\r\nb",
        " \"a\\r\\nb\"",
        "CR is not printable, so no literal block",
    ),
    (
        "bell\u{7}",
        " \"bell\\a\"",
        "control characters are escaped",
    ),
    (
        "h\u{e9}llo",
        " h\u{e9}llo",
        "printable non-ASCII stays plain (unicode is on)",
    ),
    ("a\u{a0}b", " a\u{a0}b", "NBSP is printable"),
    (
        "rocket \u{1F680}",
        " \"rocket \\U0001F680\"",
        "above U+FFFD is not printable: \\U escape",
    ),
    ("bom\u{feff}", " \"bom\\uFEFF\"", "BOM is not printable"),
    (
        "line1\nline2",
        " |-\n  line1\n  line2",
        "multi-line: literal, strip chomping",
    ),
    (
        "line1\n",
        " |\n  line1",
        "one trailing newline: clip chomping",
    ),
    (
        " lead\nx",
        " |2-\n   lead\n  x",
        "leading space: explicit indentation indicator",
    ),
    (
        "a\n b",
        " |-\n  a\n   b",
        "a space after a break forbids quotes but not a literal block",
    ),
    (
        "a \nb",
        " \"a \\nb\"",
        "a space before a break forbids the literal block",
    ),
    (
        "a\tb\nc",
        " \"a\\tb\\nc\"",
        "tab in a multi-line string: double quotes",
    ),
    (
        "a\n\nb\n",
        " |\n  a\n\n  b",
        "blank lines inside a literal carry no indentation",
    ),
];

#[test]
fn tricky_scalars_match_go_yaml_v2() {
    let mut failures = Vec::new();
    for (input, expected, why) in SCALARS {
        let want = format!("k:{expected}\n");
        let got = one(json!(input));
        if got != want {
            failures.push(format!(
                "{input:?} ({why}):\n  want {want:?}\n  got  {got:?}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn keep_chomping() {
    // Checked against sigs.k8s.io/yaml v1.6.0: no `...` document end marker follows.
    assert_eq!(one(json!("a\n\n")), "k: |+\n  a\n\n");
    let text = plumb_yaml::to_yaml_string(&json!({"a": "x\n\n", "b": 1}));
    assert_eq!(text, "a: |+\n  x\n\nb: 1\n");
}

#[test]
fn unicode_line_separator_in_single_quotes() {
    // U+2028 is a line break to libyaml: plain is refused, the single-quoted form keeps the
    // break raw and indents what follows (sigs.k8s.io/yaml v1.6.0 output).
    assert_eq!(one(json!("a\u{2028}b")), "k: 'a\u{2028}  b'\n");
}

#[test]
fn non_string_scalars() {
    let text = plumb_yaml::to_yaml_string(&json!({
        "int": 3, "neg": -42, "float": 0.5, "whole": 2.0, "million": 1_000_000.0,
        "bigfloat": 1234567.5, "tiny": 0.00001, "huge": 1e21, "u": 18446744073709551615u64,
        "t": true, "f": false, "n": null, "m": {}, "l": [],
    }));
    // go-yaml v2 sorts keys with its own order (sorter.go); these are all plain letters. The
    // key `n` is itself a YAML 1.1 boolean, so it is quoted like a value would be.
    let expected = "\
bigfloat: 1.2345675e+06
f: false
float: 0.5
huge: 1e+21
int: 3
l: []
m: {}
million: 1000000
\"n\": null
neg: -42
t: true
tiny: 1e-05
u: 1.8446744073709552e+19
whole: 2
";
    assert_eq!(text, expected);
}

#[test]
fn keys_are_quoted_like_values() {
    let text = plumb_yaml::to_yaml_string(&json!({
        "on": 1, "": 2, "a: b": 3, "1.0": 4, "plain": 5, "a\nb": 6,
    }));
    // Key order: go-yaml's keyList.Less ("" first, then non-letters before letters).
    // A multi-line key cannot be a simple key, so it is written as `? ` + literal block.
    let expected = "\
\"\": 2
\"1.0\": 4
? |-
  a
  b
: 6
'a: b': 3
\"on\": 1
plain: 5
";
    assert_eq!(text, expected);
}

#[test]
fn long_keys_become_complex_keys() {
    let key = "k".repeat(129);
    let text = plumb_yaml::to_yaml_string(&json!({ key.clone(): 1 }));
    assert_eq!(text, format!("? {key}\n: 1\n"));
    let key = "k".repeat(128);
    let text = plumb_yaml::to_yaml_string(&json!({ key.clone(): 1 }));
    assert_eq!(text, format!("{key}: 1\n"));
}

const W: &str = "abcdefghi";

fn words(n: usize) -> String {
    vec![W; n].join(" ")
}

#[test]
fn long_plain_strings_fold_at_80_columns() {
    // go-yaml v2.4 folds at a space once the column is past 80 (best_width), continuing at
    // the value's indentation + 2. "k: " + 8 words ends at column 82, so the break comes after
    // the 8th word; continuation lines start at column 2 and also break after 8 words (81).
    let got = one(json!(words(20)));
    let want = format!("k: {}\n  {}\n  {}\n", words(8), words(8), words(4));
    assert_eq!(got, want);
}

#[test]
fn long_single_quoted_strings_fold() {
    // "k: 'error: " is 11 columns; after 8 words the column is 90 > 80.
    let got = one(json!(format!("error: {}", words(10))));
    let want = format!("k: 'error: {}\n  {}'\n", words(8), words(2));
    assert_eq!(got, want);
}

#[test]
fn long_double_quoted_strings_fold() {
    // A leading tab forces double quotes; `\t` takes two columns, so word k ends at 5 + 10k
    // and the first break comes after word 8 (85).
    let got = one(json!(format!("\t{}", words(20))));
    let want = format!("k: \"\\t{}\n  {}\n  {}\"\n", words(8), words(8), words(4));
    assert_eq!(got, want);
}

#[test]
fn folding_is_relative_to_nesting() {
    // Under a sequence item in a nested mapping the continuation indent is the item's mapping
    // indent + 2 (libyaml's increase_indent for the scalar).
    let text =
        plumb_yaml::to_yaml_string(&json!({"status": {"conditions": [{"message": words(20)}]}}));
    // "  - message: " is 13 columns; word k ends at 12 + 10k: break after word 7 (82).
    // Continuation at column 6: word k ends at 5 + 10k: break after word 8 (85).
    let want = format!(
        "status:\n  conditions:\n  - message: {}\n      {}\n      {}\n",
        words(7),
        words(8),
        words(5)
    );
    assert_eq!(text, want);
}

#[test]
fn structure_like_kubectl_get_o_yaml() {
    let obj = json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "payments-api",
            "namespace": "payments",
            "labels": {"app": "payments-api", "app.kubernetes.io/version": "1.0"},
            "creationTimestamp": "2026-07-20T10:00:00Z",
            "annotations": {"deployment.kubernetes.io/revision": "3"},
        },
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "payments-api"}},
            "template": {
                "metadata": {"labels": {"app": "payments-api"}, "creationTimestamp": null},
                "spec": {
                    "containers": [{
                        "name": "payments-api",
                        "image": "registry.example.com/payments-api:1.4.2",
                        "args": ["--port", "8080", "--verbose"],
                        "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                        "env": [{"name": "MODE", "value": "on"}, {"name": "EMPTY", "value": ""}],
                        "resources": {},
                        "securityContext": {"runAsNonRoot": true, "capabilities": {"drop": ["ALL"]}},
                    }],
                    "tolerations": [],
                },
            },
        },
    });
    let expected = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  annotations:
    deployment.kubernetes.io/revision: "3"
  creationTimestamp: "2026-07-20T10:00:00Z"
  labels:
    app: payments-api
    app.kubernetes.io/version: "1.0"
  name: payments-api
  namespace: payments
spec:
  replicas: 3
  selector:
    matchLabels:
      app: payments-api
  template:
    metadata:
      creationTimestamp: null
      labels:
        app: payments-api
    spec:
      containers:
      - args:
        - --port
        - "8080"
        - --verbose
        env:
        - name: MODE
          value: "on"
        - name: EMPTY
          value: ""
        image: registry.example.com/payments-api:1.4.2
        name: payments-api
        ports:
        - containerPort: 8080
          protocol: TCP
        resources: {}
        securityContext:
          capabilities:
            drop:
            - ALL
          runAsNonRoot: true
      tolerations: []
"#;
    assert_eq!(plumb_yaml::to_yaml_string(&obj), expected);
}

#[test]
fn nested_sequences_and_empty_collections_in_sequences() {
    let text =
        plumb_yaml::to_yaml_string(&json!({"k": [[1, 2], [3], {}, [], [{"a": 1, "b": [ "x" ]}]]}));
    let expected = "k:\n- - 1\n  - 2\n- - 3\n- {}\n- []\n- - a: 1\n    b:\n    - x\n";
    assert_eq!(text, expected);
}

#[test]
fn top_level_values() {
    assert_eq!(plumb_yaml::to_yaml_string(&json!({})), "{}\n");
    assert_eq!(
        plumb_yaml::to_yaml_string(&json!([1, "on"])),
        "- 1\n- \"on\"\n"
    );
}

#[test]
fn last_applied_annotation_is_a_literal_block() {
    // kubectl writes the annotation as compact JSON plus a newline: a clip-chomped literal.
    let la = "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\"}}\n";
    let text = plumb_yaml::to_yaml_string(
        &json!({"metadata": {"annotations": {"kubectl.kubernetes.io/last-applied-configuration": la}}}),
    );
    let expected = format!(
        "metadata:\n  annotations:\n    kubectl.kubernetes.io/last-applied-configuration: |\n      {}\n",
        la.trim_end()
    );
    assert_eq!(text, expected);
}
