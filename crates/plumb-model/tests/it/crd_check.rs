//! The start-up CRD check (`plumb_model::crd_check::assess`) on CRDs as the API server returns
//! them (`tests/fixtures/crds`: `kubectl get crd -o yaml` of Argo CD's and of an older Plumb's)
//! and on the CRDs this build generates.

use plumb_model::crd::{app_project_crd, application_crd};
use plumb_model::crd_check::{self, Verdict, assess};
use serde_json::{Value, json};

use crate::read_yaml;

fn fixture(name: &str) -> Value {
    read_yaml(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/crds")
            .join(name),
    )
}

#[test]
fn this_builds_crds_are_current() {
    assert_eq!(assess(&application_crd()), Verdict::Current);
    assert_eq!(assess(&app_project_crd()), Verdict::Current);
}

#[test]
fn argo_cds_application_crd_lacks_the_status_subresource() {
    let argo = fixture("argocd-v3.6.1-applications.yaml");
    let verdict = assess(&argo);
    assert!(
        matches!(verdict, Verdict::Lacking { need } if need.contains("status subresource")),
        "{verdict:?}"
    );
    assert!(verdict.needs_apply());
    let message = verdict.message("applications.argoproj.io");
    assert!(
        message.starts_with(
            "CRD applications.argoproj.io is Argo CD's and lacks the status subresource"
        ) && message.contains("kubectl apply --server-side --force-conflicts -f deploy/crds/"),
        "{message}"
    );
}

#[test]
fn argo_cds_appproject_crd_is_enough() {
    let verdict = assess(&fixture("argocd-v3.6.1-appprojects.yaml"));
    assert_eq!(verdict, Verdict::Foreign);
    assert!(!verdict.needs_apply());
}

#[test]
fn plumbs_crd_from_before_the_annotations_is_older() {
    let old = fixture("plumb-unannotated-application.yaml");
    assert_eq!(
        old["metadata"]["labels"]["app.kubernetes.io/part-of"],
        "plumb"
    );
    assert_eq!(assess(&old), Verdict::Older { installed: None });
}

/// An annotated CRD of another release: older, newer, or (same release, other schema) differs.
#[test]
fn annotated_crds_are_ordered_by_release() {
    let with = |version: &str, schema: &str| {
        let mut crd = application_crd();
        crd["metadata"]["annotations"] =
            json!({crd_check::VERSION_KEY: version, crd_check::SCHEMA_KEY: schema});
        crd
    };
    let other = "sha256:00";
    assert_eq!(
        assess(&with("0.0.9", other)),
        Verdict::Older {
            installed: Some("0.0.9".into())
        }
    );
    assert_eq!(
        assess(&with("99.0.0", other)),
        Verdict::Newer {
            installed: "99.0.0".into()
        }
    );
    assert_eq!(
        assess(&with(crd_check::VERSION, other)),
        Verdict::Differs {
            installed: crd_check::VERSION.into()
        }
    );
    // Same schema, whatever the version says: current.
    assert_eq!(
        assess(&with("0.0.9", crd_check::APPLICATION_SCHEMA)),
        Verdict::Current
    );
    // A version that is not one: treated as older (apply this binary's).
    assert_eq!(
        assess(&with("garbage", other)),
        Verdict::Older {
            installed: Some("garbage".into())
        }
    );
}
