//! What Argo's API refuses before writing an ApplicationSet (`validateAppSet`): a templated
//! project, and generators it does not recognise.

use plumb_model::applicationset::ApplicationSet;
use serde_json::Value;

use super::ApiError;

/// The generator keys Argo knows (`ApplicationSetGenerator`'s fields).
const GENERATORS: [&str; 10] = [
    "list",
    "clusters",
    "git",
    "scmProvider",
    "clusterDecisionResource",
    "pullRequest",
    "matrix",
    "merge",
    "selector",
    "plugin",
];

/// Argo's message for unrecognised generators (`CheckInvalidGenerators`).
pub const UNRECOGNIZED: &str = "contains unrecognized generators";

/// The project of the generated Applications, once `set` passes Argo's checks.
pub fn validate(set: &ApplicationSet) -> Result<String, ApiError> {
    let project = set
        .spec
        .template
        .spec
        .get("project")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if project.contains("{{") {
        return Err(ApiError::Invalid(
            "the Argo CD API does not currently support creating ApplicationSets with templated \
             `project` fields"
                .into(),
        ));
    }
    Ok(project.to_string())
}

/// Argo's `CheckInvalidGenerators` on the ApplicationSet as sent (the typed model drops keys it
/// does not know, so this reads the JSON): a generator with none of the known keys is refused,
/// naming the unknown keys (sorted) when it has any.
pub fn validate_generators(raw: &Value) -> Result<(), ApiError> {
    let name = raw
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let generators = raw
        .pointer("/spec/generators")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let mut unknown = std::collections::BTreeSet::new();
    let mut invalid = false;
    for g in generators {
        let Some(map) = g.as_object() else {
            invalid = true;
            continue;
        };
        let known = map
            .iter()
            .any(|(k, v)| GENERATORS.contains(&k.as_str()) && !v.is_null());
        if !known {
            invalid = true;
            unknown.extend(map.keys().cloned());
        }
    }
    match (invalid, unknown.is_empty()) {
        (false, _) => Ok(()),
        (true, true) => Err(ApiError::Invalid(format!(
            "ApplicationSet {name} {UNRECOGNIZED}"
        ))),
        (true, false) => Err(ApiError::Invalid(format!(
            "ApplicationSet {name} {UNRECOGNIZED}: {}",
            unknown.into_iter().collect::<Vec<_>>().join(", ")
        ))),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn templated_projects_are_refused_as_argo_refuses_them() {
        let set: ApplicationSet = serde_json::from_value(json!({
            "metadata": {"name": "s"},
            "spec": {"template": {"spec": {"project": "{{team}}"}}}
        }))
        .unwrap();
        let err = validate(&set).unwrap_err().to_string();
        assert!(err.contains("templated `project` fields"), "{err}");
    }

    #[test]
    fn unknown_generators_are_named() {
        let raw = json!({"metadata": {"name": "s"}, "spec": {"generators": [
            {"list": {"elements": []}}, {"bogus": {}, "other": 1}]}});
        assert_eq!(
            validate_generators(&raw).unwrap_err().to_string(),
            "ApplicationSet s contains unrecognized generators: bogus, other"
        );
        let empty = json!({"metadata": {"name": "s"}, "spec": {"generators": [{}]}});
        assert_eq!(
            validate_generators(&empty).unwrap_err().to_string(),
            "ApplicationSet s contains unrecognized generators"
        );
        let fine = json!({"spec": {"generators": [{"git": {}, "selector": {}}]}});
        assert!(validate_generators(&fine).is_ok());
    }
}
