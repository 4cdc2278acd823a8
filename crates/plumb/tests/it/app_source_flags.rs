//! `app create`/`app set` source-type flags, `-p` and `app unset` end to end: what lands in the
//! stored Application on the real control plane.

use serde_json::json;

use crate::app::{app_json, control_namespace, plumb, text};

const REPO: &str = "https://github.com/argoproj/argocd-example-apps.git";

#[test]
fn helm_flags_set_parameter_and_unset() {
    let ns = control_namespace("srcflags");
    let ns = ns.name();
    let out = plumb(
        ns,
        &[
            "create",
            "bluegreen",
            "--repo",
            REPO,
            "--path",
            "blue-green",
            "--dest-server",
            "https://kubernetes.default.svc",
            "--dest-namespace",
            "bluegreen",
            "--helm-set",
            "replicaCount=2",
            "--values",
            "values.yaml",
            "--release-name",
            "bg",
            "--label",
            "team=web",
            "--annotations",
            "owner=alice",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "application 'bluegreen' created\n");
    let app = app_json(ns, "bluegreen").unwrap();
    assert_eq!(
        app["spec"]["source"]["helm"],
        json!({"valueFiles": ["values.yaml"], "parameters": [{"name": "replicaCount", "value": "2"}], "releaseName": "bg"})
    );
    assert_eq!(app["metadata"]["annotations"]["owner"], json!("alice"));

    // The blue-green example's README step.
    let out = plumb(ns, &["set", "bluegreen", "-p", "image.tag=0.2"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let app = app_json(ns, "bluegreen").unwrap();
    assert_eq!(
        app["spec"]["source"]["helm"]["parameters"],
        json!([{"name": "replicaCount", "value": "2"}, {"name": "image.tag", "value": "0.2"}])
    );

    let out = plumb(
        ns,
        &[
            "unset",
            "bluegreen",
            "-p",
            "replicaCount",
            "--values",
            "values.yaml",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let app = app_json(ns, "bluegreen").unwrap();
    assert_eq!(
        app["spec"]["source"]["helm"],
        json!({"parameters": [{"name": "image.tag", "value": "0.2"}], "releaseName": "bg"})
    );
    // Kustomize flags do not apply to a Helm source: Argo's "nothing to unset", exit 1.
    let out = plumb(ns, &["unset", "bluegreen", "--nameprefix"]);
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn kustomize_and_directory_flags_through_set() {
    let ns = control_namespace("srcflags-k");
    let ns = ns.name();
    let out = plumb(
        ns,
        &[
            "create",
            "kguestbook",
            "--repo",
            REPO,
            "--path",
            "kustomize-guestbook",
            "--dest-server",
            "https://kubernetes.default.svc",
            "--dest-namespace",
            "kg",
            "--kustomize-image",
            "gcr.io/heptio-images/ks-guestbook-demo:0.1",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = plumb(
        ns,
        &[
            "set",
            "kguestbook",
            "--kustomize-image",
            "gcr.io/heptio-images/ks-guestbook-demo:0.2",
            "--nameprefix",
            "prod-",
            "--kustomize-common-label",
            "team=web",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let app = app_json(ns, "kguestbook").unwrap();
    assert_eq!(
        app["spec"]["source"]["kustomize"],
        json!({"namePrefix": "prod-", "images": ["gcr.io/heptio-images/ks-guestbook-demo:0.2"], "commonLabels": {"team": "web"}})
    );
    // -p on a Kustomize source is refused, as in Argo.
    let out = plumb(ns, &["set", "kguestbook", "-p", "image.tag=0.3"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        "plumb: Parameters can only be set against Helm applications\n"
    );
}
