//! `generate`: generators and templates together, as the controller and `plumb appset generate`
//! use them.

use plumb_appset::{GenerateError, Limits, generate};
use serde_json::json;

use crate::agen_support::context;

fn set(generators: serde_json::Value) -> plumb_model::applicationset::ApplicationSet {
    serde_json::from_value(json!({
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "ApplicationSet",
        "metadata": {"name": "guestbook", "namespace": "argocd"},
        "spec": {
            "generators": generators,
            "template": {
                "metadata": {"name": "{{cluster}}-guestbook"},
                "spec": {
                    "project": "default",
                    "source": {"repoURL": "https://github.com/argoproj/argo-cd.git", "targetRevision": "HEAD", "path": "applicationset/examples/list-generator/guestbook/{{cluster}}"},
                    "destination": {"server": "{{url}}", "namespace": "guestbook"}
                }
            }
        }
    }))
    .unwrap()
}

#[tokio::test]
async fn generator_order_then_param_order_and_duplicates_reported() {
    let cache = tempfile::tempdir().unwrap();
    let ctx = context("agen-unused", &cache, Limits::default()).await;
    let s = set(json!([
        {"list": {"elements": [{"cluster": "b", "url": "https://2.2.2.2"}, {"cluster": "a", "url": "https://1.1.1.1"}]}},
        {"list": {"elements": [{"cluster": "b", "url": "https://3.3.3.3"}, {"cluster": "c", "url": "https://4.4.4.4"}]}}
    ]));
    let out = generate(&s, &ctx).await;
    let names: Vec<_> = out
        .applications
        .iter()
        .map(|a| a.metadata.name.clone().unwrap_or_default())
        .collect();
    assert_eq!(names, ["b-guestbook", "a-guestbook", "c-guestbook"]);
    assert_eq!(out.errors.len(), 1, "{:?}", out.errors);
    assert_eq!(
        out.errors[0].to_string(),
        "ApplicationSet guestbook contains applications with duplicate name: b-guestbook"
    );
    assert!(!out.generator_failed());
}

#[tokio::test]
async fn a_failing_generator_contributes_nothing_and_is_reported() {
    let cache = tempfile::tempdir().unwrap();
    let ctx = context("agen-unused", &cache, Limits::default()).await;
    let s = set(json!([
        {"list": {"elements": [{"cluster": "a", "url": "https://1.1.1.1"}]}},
        {"matrix": {"generators": [{"list": {"elements": [{"cluster": "x"}]}}]}},
        {"oci": {"repoURL": "oci://example"}},
        {"list": {"elements": [{"cluster": "Bad_Name", "url": "https://1.1.1.2"}]}}
    ]));
    let out = generate(&s, &ctx).await;
    let names: Vec<_> = out
        .applications
        .iter()
        .map(|a| a.metadata.name.clone().unwrap_or_default())
        .collect();
    assert_eq!(names, ["a-guestbook"]);
    assert!(out.generator_failed());
    let messages: Vec<String> = out.errors.iter().map(ToString::to_string).collect();
    assert!(
        messages[0].contains("spec.generators[1]")
            && messages[0].contains("found less than two generators"),
        "{messages:?}"
    );
    assert!(
        messages[1].contains("spec.generators[2]") && messages[1].contains("not supported"),
        "{messages:?}"
    );
    assert!(
        matches!(
            out.errors[2],
            GenerateError::Template {
                index: 3,
                param_set: 0,
                ..
            }
        ),
        "{messages:?}"
    );
}
