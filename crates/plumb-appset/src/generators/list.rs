//! `list`: literal elements and `elementsYaml` (Argo's `ListGenerator`).

use plumb_model::applicationset::ListGenerator;
use serde_json::Value;

use super::values::Mode;
use crate::error::GeneratorError;
use crate::params::Params;

/// The parameter sets of `spec`. With `{{param}}` substitution every element value must be a
/// string except `values`, a map of strings flattened to `values.KEY` (as Argo).
pub fn generate(
    spec: &ListGenerator,
    mode: Mode<'_>,
    max_params: usize,
) -> Result<Vec<Params>, GeneratorError> {
    let elements = spec.elements.as_deref().unwrap_or_default();
    check_count(elements.len(), max_params)?;
    let mut out = Vec::with_capacity(elements.len());
    for (i, element) in elements.iter().enumerate() {
        let Value::Object(element) = element else {
            return Err(GeneratorError::Invalid(format!(
                "error unmarshling list element: list.elements[{i}] is not an object"
            )));
        };
        out.push(if mode.go_template {
            element.clone()
        } else {
            flat_element(element, i)?
        });
    }
    if let Some(text) = spec.elements_yaml.as_deref().filter(|t| !t.is_empty()) {
        let parsed = parse_elements_yaml(text)?;
        check_count(out.len() + parsed.len(), max_params)?;
        out.extend(parsed);
    }
    Ok(out)
}

fn check_count(n: usize, max: usize) -> Result<(), GeneratorError> {
    if n > max {
        return Err(GeneratorError::Limit(format!(
            "list generator: {n} elements, more than the limit of {max}"
        )));
    }
    Ok(())
}

fn flat_element(element: &Params, i: usize) -> Result<Params, GeneratorError> {
    let mut params = Params::new();
    for (key, value) in element {
        if key == "values" {
            let Value::Object(values) = value else {
                return Err(GeneratorError::Invalid(format!(
                    "error parsing values map: list.elements[{i}].values is not a map"
                )));
            };
            for (k, v) in values {
                let Value::String(s) = v else {
                    return Err(not_string(i, &format!("values.{k}")));
                };
                params.insert(format!("values.{k}"), Value::String(s.clone()));
            }
        } else {
            let Value::String(s) = value else {
                return Err(not_string(i, key));
            };
            params.insert(key.clone(), Value::String(s.clone()));
        }
    }
    Ok(params)
}

fn not_string(i: usize, key: &str) -> GeneratorError {
    GeneratorError::Invalid(format!(
        "error parsing value as string: list.elements[{i}].{key} is not a string (use goTemplate: true for other values)"
    ))
}

/// `elementsYaml`: a YAML list of objects, kept as they are in both modes (as Argo).
fn parse_elements_yaml(text: &str) -> Result<Vec<Params>, GeneratorError> {
    let invalid = |detail: String| {
        GeneratorError::Invalid(format!("error unmarshling decoded ElementsYaml: {detail}"))
    };
    let docs =
        plumb_yaml::read_documents(text, "elementsYaml").map_err(|e| invalid(e.to_string()))?;
    let Some(first) = docs.into_iter().next() else {
        return Ok(Vec::new());
    };
    match first.value {
        Value::Null => Ok(Vec::new()),
        Value::Array(items) => items
            .into_iter()
            .enumerate()
            .map(|(i, item)| match item {
                Value::Object(map) => Ok(map),
                _ => Err(invalid(format!("element {i} is not an object"))),
            })
            .collect(),
        _ => Err(invalid("not a list".to_owned())),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const FLAT: Mode<'static> = Mode {
        go_template: false,
        go_options: &[],
    };
    const GO: Mode<'static> = Mode {
        go_template: true,
        go_options: &[],
    };

    fn spec(v: Value) -> ListGenerator {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn argo_docs_list_example() {
        let s = spec(json!({"elements": [
            {"cluster": "engineering-dev", "url": "https://1.2.3.4"},
            {"cluster": "engineering-prod", "url": "https://2.4.6.8", "values": {"project": "prod"}}
        ]}));
        let out = generate(&s, FLAT, 100).unwrap();
        assert_eq!(out.len(), 2);
        assert_eq!(out[0]["cluster"], "engineering-dev");
        assert_eq!(out[1]["values.project"], "prod");
        assert!(!out[1].contains_key("values"));
    }

    #[test]
    fn non_string_refused_in_flat_mode_kept_in_go_mode() {
        let s = spec(json!({"elements": [{"cluster": "a", "replicas": 3}]}));
        let err = generate(&s, FLAT, 100).unwrap_err().to_string();
        assert!(err.contains("list.elements[0].replicas"), "{err}");
        let out = generate(&s, GO, 100).unwrap();
        assert_eq!(out[0]["replicas"], 3);
    }

    #[test]
    fn elements_yaml_appends_after_elements() {
        let s = spec(json!({
            "elements": [{"cluster": "a"}],
            "elementsYaml": "- cluster: b\n  enabled: yes\n- cluster: c\n"
        }));
        let out = generate(&s, GO, 100).unwrap();
        let names: Vec<_> = out.iter().map(|p| p["cluster"].clone()).collect();
        assert_eq!(names, [json!("a"), json!("b"), json!("c")]);
        assert_eq!(out[1]["enabled"], true);
        let bad = spec(json!({"elementsYaml": "cluster: b"}));
        assert!(generate(&bad, GO, 100).is_err());
    }

    #[test]
    fn element_count_is_bounded() {
        let many: Vec<Value> = (0..100_000).map(|i| json!({"n": i.to_string()})).collect();
        let s = ListGenerator {
            elements: Some(many),
            ..Default::default()
        };
        let err = generate(&s, FLAT, 10_000).unwrap_err();
        assert!(matches!(err, GeneratorError::Limit(_)), "{err}");
        assert_eq!(generate(&s, FLAT, 100_000).unwrap().len(), 100_000);
    }
}
