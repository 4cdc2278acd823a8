//! clusterDecisionResource on a real custom resource's status.

use plumb_appset::Limits;
use plumb_testenv::TestEnv;
use serde_json::json;

use crate::agen_support::{apply, appset, context, params};

const CRD: &str = r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: agendecisions.agen.plumb.test
spec:
  group: agen.plumb.test
  scope: Namespaced
  names: {plural: agendecisions, singular: agendecision, kind: AgenDecision}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
"#;

#[tokio::test]
async fn decisions_name_known_clusters() {
    let env = TestEnv::shared();
    apply(CRD);
    let ok = env
        .kubectl()
        .args([
            "wait",
            "--for=condition=Established",
            "--timeout=60s",
            "crd/agendecisions.agen.plumb.test",
        ])
        .status()
        .unwrap();
    assert!(ok.success());
    let ns = env.namespace("agen-duck");
    let ns = ns.name();
    apply(&format!(
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: c1\n  namespace: {ns}\n  labels: {{argocd.argoproj.io/secret-type: cluster}}\nstringData: {{name: cluster-a, server: 'https://10.1.0.1'}}\n"
    ));
    apply(&format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: agen-duck, namespace: {ns}}}\ndata:\n  apiVersion: agen.plumb.test/v1\n  kind: agendecisions\n  statusListKey: decisions\n  matchKey: clusterName\n"
    ));
    apply(&format!(
        "apiVersion: agen.plumb.test/v1\nkind: AgenDecision\nmetadata:\n  name: placement\n  namespace: {ns}\n  labels: {{app: guestbook}}\nstatus:\n  decisions:\n  - {{clusterName: cluster-a, reason: picked}}\n  - {{clusterName: unknown-cluster}}\n  - {{clusterName: in-cluster, weight: 3}}\n"
    ));
    let cache = tempfile::tempdir().unwrap();
    let ctx = context(ns, &cache, Limits::default()).await;
    let by_name = json!([{"clusterDecisionResource": {"configMapRef": "agen-duck", "name": "placement", "values": {"tier": "gold"}}}]);
    let out = params(&appset(ns, false, by_name), &ctx).await.unwrap();
    assert_eq!(out.len(), 2, "{out:?}");
    assert_eq!(out[0]["name"], "cluster-a");
    assert_eq!(out[0]["server"], "https://10.1.0.1");
    assert_eq!(out[0]["reason"], "picked");
    assert_eq!(out[0]["values.tier"], "gold");
    assert_eq!(out[1]["server"], "https://kubernetes.default.svc");
    assert_eq!(out[1]["weight"], "3");

    let by_label = json!([{"clusterDecisionResource": {"configMapRef": "agen-duck", "labelSelector": {"matchLabels": {"app": "guestbook"}}}}]);
    assert_eq!(
        params(&appset(ns, true, by_label), &ctx)
            .await
            .unwrap()
            .len(),
        2
    );

    let both = json!([{"clusterDecisionResource": {"configMapRef": "agen-duck", "name": "placement", "labelSelector": {"matchLabels": {"app": "x"}}}}]);
    let err = params(&appset(ns, false, both), &ctx).await.unwrap_err();
    assert!(err.contains("problem with the definition"), "{err}");
    let none =
        json!([{"clusterDecisionResource": {"configMapRef": "agen-duck", "name": "absent"}}]);
    let err = params(&appset(ns, false, none), &ctx).await.unwrap_err();
    assert!(err.contains("no clusterDecisionResources found"), "{err}");
    let no_cm =
        json!([{"clusterDecisionResource": {"configMapRef": "agen-missing", "name": "placement"}}]);
    let err = params(&appset(ns, false, no_cm), &ctx).await.unwrap_err();
    assert!(err.contains("agen-missing"), "{err}");
}
