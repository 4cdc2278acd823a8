//! The start-up CRD check against the real control plane: after `deploy/crds` is applied (as
//! every test that needs Applications does), the installed CRDs are found to be this binary's,
//! and `plumb_crd_outdated` reads 0 for each. The verdicts on older and Argo CD CRDs are tested
//! on `kubectl get crd -o yaml` fixtures in plumb-model (CRDs are cluster-wide: this shared
//! control plane's argoproj.io CRDs must stay Plumb's).

use plumb_app::crd_check::{CrdGauge, check, report};
use plumb_model::crd_check::Verdict;
use plumb_testenv::TestEnv;

#[tokio::test]
async fn the_installed_crds_are_this_binarys() {
    let env = TestEnv::shared();
    env.install_plumb_crds();
    let findings = check(&env.client().await).await;
    let names: Vec<&str> = findings.iter().map(|f| f.crd.as_str()).collect();
    assert_eq!(
        names,
        [
            "applications.argoproj.io",
            "appprojects.argoproj.io",
            "applicationsets.argoproj.io"
        ]
    );
    for f in &findings {
        assert_eq!(f.outcome, Ok(Verdict::Current), "{}", f.crd);
    }

    let mut registry = prometheus_client::registry::Registry::default();
    let gauge: CrdGauge = plumb_app::crd_check::register_gauge(&mut registry);
    report(&findings, &gauge, "test");
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, &registry).expect("encode");
    for name in names {
        assert!(
            text.contains(&format!("plumb_crd_outdated{{crd=\"{name}\"}} 0")),
            "{text}"
        );
    }
}
