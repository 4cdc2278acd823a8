//! Every case of tests/corpus/*.json rendered here and compared with what real Go (Argo CD's
//! FuncMap, tools/gotemplate-oracle) wrote to tests/expected/*.json: the same output exactly, or
//! both failing. Regenerate the expected files with `scripts/gotemplate-oracle --update`.

use std::collections::BTreeMap;
use std::path::Path;

use plumb_gotemplate::{Options, Template};
use serde_json::Value;

/// Cases whose output depends on the clock or randomness and so cannot be compared exactly
/// are written by the corpus to print only lengths or booleans: nothing is skipped here.
fn render(case: &Value) -> Result<String, String> {
    let text = case["template"].as_str().ok_or("template is not a string")?;
    let opts: Vec<String> = case["options"]
        .as_array()
        .map(|a| a.iter().filter_map(|o| o.as_str().map(String::from)).collect())
        .unwrap_or_default();
    let options = Options::from_go_options(&opts).map_err(|e| e.to_string())?;
    let t = Template::parse("base", text).map_err(|e| e.to_string())?;
    t.execute(&case["data"], &options).map_err(|e| e.to_string())
}

#[test]
fn corpus_matches_go() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut total = 0;
    let mut failures = Vec::new();
    let mut known = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(dir.join("corpus")).expect("corpus dir").flatten().map(|e| e.path()).collect();
    files.sort();
    for path in files.iter().filter(|p| p.extension().is_some_and(|e| e == "json")) {
        let name = path.file_name().expect("file name");
        let corpus: Value = serde_json::from_str(&std::fs::read_to_string(path).expect("read corpus")).expect("corpus json");
        let expected_text = std::fs::read_to_string(dir.join("expected").join(name))
            .unwrap_or_else(|e| panic!("{}: no expected output ({e}); run scripts/gotemplate-oracle --update", path.display()));
        let expected: BTreeMap<String, Value> = serde_json::from_str(&expected_text).expect("expected json");
        for case in corpus["cases"].as_array().expect("cases") {
            total += 1;
            let cname = case["name"].as_str().expect("name");
            let want = expected.get(cname).unwrap_or_else(|| panic!("{cname}: not in expected output; run --update"));
            let got = render(case);
            if let Some(why) = case["known_difference"].as_str() {
                // Documented differences must still differ: a fix shows up as a failure to update.
                let same = matches!((want.get("output").and_then(Value::as_str), &got), (Some(w), Ok(g)) if w == g);
                assert!(!same, "{cname}: marked known_difference but now matches Go; remove the mark");
                known.push(format!("{cname}: {why}"));
                continue;
            }
            // Hostile cases marked `bounded` must fail here, whatever Go did (Go has no step or
            // output bound); outputs Go wrote beyond 1 MiB are over Plumb's output bound too.
            let bounded = case["bounded"].as_bool().unwrap_or(false) || want.get("output_bytes").is_some();
            match (want.get("output").and_then(Value::as_str), &got) {
                (_, Err(_)) if bounded => {}
                (_, Ok(_)) if bounded => failures.push(format!("{cname}: not bounded, Go: {want}")),
                (Some(w), Ok(g)) if w == g => {}
                (None, Err(_)) => {}
                (w, g) => failures.push(format!(
                    "{cname}\n  template: {:?}\n  go:   {}\n  rust: {:?}",
                    case["template"].as_str().unwrap_or_default(),
                    w.map_or_else(|| format!("error {}", want["error"]), |w| format!("{w:?}")),
                    g
                )),
            }
        }
    }
    eprintln!("{total} cases; known differences:\n  {}", known.join("\n  "));
    assert!(total >= 150, "only {total} cases");
    assert!(failures.is_empty(), "{} of {total} cases differ from Go:\n{}", failures.len(), failures.join("\n"));
}
