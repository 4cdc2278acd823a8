//! The rendered Application read and checked: what Argo's `validateGeneratedApplications` and the
//! API server would refuse, said before anything is written (the project's and the destination
//! cluster's existence are the controller's to check: they need the cluster).

use plumb_model::application::Application;
use serde_json::Value;

use super::{Failure, TemplateErrorKind};

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
}
