//! The rendered Application read and checked: what Argo's `validateGeneratedApplications` and the
//! API server would refuse, said before anything is written (the project's and the destination
//! cluster's existence are the controller's to check: they need the cluster).

use plumb_model::application::Application;
use serde_json::Value;

use super::error::{Failure, TemplateErrorKind};

/// `app` as an Application, or the first field that makes it none.
pub(crate) fn application(app: Value) -> Result<Application, Failure> {
    let invalid =
        |field: &str, message: String| (field.to_string(), TemplateErrorKind::Invalid(message));
    let name = app["metadata"]["name"].as_str().unwrap_or_default();
    if name.is_empty() {
        return Err(invalid(
            "metadata.name",
            "no name; a name must be set in the template's metadata.name or via a templatePatch \
             (generateName is not supported)"
                .to_string(),
        ));
    }
    if let Some(why) = dns_subdomain_error(name) {
        return Err(invalid("metadata.name", format!("{name:?} {why}")));
    }
    check_labels(&app["metadata"])?;
    let text = |v: &Value| v.as_str().is_some_and(|s| !s.is_empty());
    if !text(&app["spec"]["project"]) {
        return Err(invalid("spec.project", "no project".to_string()));
    }
    let dest = &app["spec"]["destination"];
    if !text(&dest["server"]) && !text(&dest["name"]) {
        return Err(invalid(
            "spec.destination",
            "application destination spec is invalid: neither server nor name is set".to_string(),
        ));
    }
    serde_json::from_value(app)
        .map_err(|e| ("spec".to_string(), TemplateErrorKind::Shape(e.to_string())))
}

/// Label keys and values, annotation keys: what the API server would refuse, named here.
fn check_labels(meta: &Value) -> Result<(), Failure> {
    let invalid =
        |field: String, message: String| Err((field, TemplateErrorKind::Invalid(message)));
    for (kind, check_value) in [("labels", true), ("annotations", false)] {
        for (key, value) in meta[kind].as_object().into_iter().flatten() {
            let field = format!("metadata.{kind}[{key:?}]");
            if let Some(why) = qualified_name_error(key) {
                return invalid(field, format!("key {key:?} {why}"));
            }
            let value = value.as_str().unwrap_or_default();
            if check_value && !value.is_empty() && name_part_error(value).is_some() {
                return invalid(
                    field,
                    format!(
                        "value {value:?} is not a label value: at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit"
                    ),
                );
            }
        }
    }
    Ok(())
}

/// Why `key` is not a qualified name (`[prefix/]name`, Kubernetes' rule for label and
/// annotation keys), if it is not.
fn qualified_name_error(key: &str) -> Option<&'static str> {
    let (prefix, name) = match key.split_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, key),
    };
    if prefix.is_some_and(|p| p.is_empty() || dns_subdomain_error(p).is_some()) {
        return Some("has a prefix that is not a DNS subdomain");
    }
    name_part_error(name)
}

/// Why `name` is not a qualified name's name part (also the rule for label values).
fn name_part_error(name: &str) -> Option<&'static str> {
    let edge = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
    let inner = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    if name.is_empty() || name.len() > 63 {
        return Some("must be 1 to 63 characters");
    }
    (!(edge(name.chars().next()) && edge(name.chars().last()) && name.chars().all(inner)))
        .then_some(
            "must be letters, digits, '-', '_' or '.', starting and ending with a letter or digit",
        )
}

/// Why `name` is not a DNS-1123 subdomain (Kubernetes' rule for object names), if it is not.
fn dns_subdomain_error(name: &str) -> Option<&'static str> {
    if name.len() > 253 {
        return Some("is longer than 253 characters");
    }
    let allowed = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.';
    if !name.chars().all(allowed) {
        return Some(
            "is not a DNS subdomain: only lowercase letters, digits, '-' and '.' are allowed",
        );
    }
    let alnum = |c: Option<char>| c.is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    let labels_ok = name
        .split('.')
        .all(|l| alnum(l.chars().next()) && alnum(l.chars().last()));
    (!labels_ok).then_some(
        "is not a DNS subdomain: each '.'-separated part must start and end with a letter or digit",
    )
}

#[cfg(test)]
mod tests {
    use super::dns_subdomain_error;

    #[test]
    fn dns_subdomains() {
        for ok in ["a", "guestbook-dev", "a.b-c.d", "0abc"] {
            assert_eq!(dns_subdomain_error(ok), None, "{ok}");
        }
        for bad in [
            "Guestbook",
            "-a",
            "a-",
            "a..b",
            "a_b",
            "{{cluster}}-app",
            "a/b",
        ] {
            assert!(dns_subdomain_error(bad).is_some(), "{bad}");
        }
        assert!(dns_subdomain_error(&"a".repeat(254)).is_some());
    }

    #[test]
    fn label_keys_and_values() {
        use serde_json::json;
        let ok = json!({"labels": {"app.kubernetes.io/name": "guestbook", "env": "", "a_b": "A.b-c"},
                        "annotations": {"example.com/note": "{{anything}} goes here"}});
        assert!(super::check_labels(&ok).is_ok());
        for (bad, field) in [
            (
                json!({"labels": {"env": "x-{{nope}}"}}),
                "metadata.labels[\"env\"]",
            ),
            (
                json!({"labels": {"-env": "a"}}),
                "metadata.labels[\"-env\"]",
            ),
            (
                json!({"annotations": {"Example.com/a": "x"}}),
                "metadata.annotations[\"Example.com/a\"]",
            ),
            (
                json!({"labels": {"env": "a".repeat(64)}}),
                "metadata.labels[\"env\"]",
            ),
        ] {
            let (f, _) = super::check_labels(&bad).expect_err("invalid");
            assert_eq!(f, field);
        }
    }
}
