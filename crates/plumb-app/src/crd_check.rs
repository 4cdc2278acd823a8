//! The start-up check of the installed Application, AppProject and ApplicationSet CRDs
//! ([`plumb_model::crd_check`]): `plumb controller` and `plumb server` read each once at start,
//! log each that needs applying at error level with the fix, and publish
//! `plumb_crd_outdated{crd}` (1: apply this binary's CRDs). An outdated CRD is not fatal: the
//! process keeps running (a crash loop would fix nothing), and what the CRD lacks shows where it
//! is used.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Api;
use plumb_model::crd_check::{CRD_NAMES, Verdict, assess};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

/// The label of `plumb_crd_outdated`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub struct CrdLabels {
    /// The CRD's name (`applications.argoproj.io`).
    pub crd: String,
}

/// `plumb_crd_outdated{crd}`.
pub type CrdGauge = Family<CrdLabels, Gauge>;

/// Registers `plumb_crd_outdated` in `registry`.
pub fn register_gauge(registry: &mut Registry) -> CrdGauge {
    let gauge = CrdGauge::default();
    registry.register(
        "plumb_crd_outdated",
        "1 when the installed CRD is not the one this binary ships and needs applying (older, missing, or Argo CD's lacking what Plumb needs), 0 when it will do; set once at start",
        gauge.clone(),
    );
    gauge
}

/// One CRD as found at start: its verdict, or why it could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The CRD's name.
    pub crd: String,
    /// What it is, or the API server's refusal (a namespace install may not read CRDs).
    pub outcome: Result<Verdict, String>,
}

/// Reads each CRD Plumb uses and judges it.
pub async fn check(client: &kube::Client) -> Vec<Finding> {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let mut findings = Vec::new();
    for name in CRD_NAMES {
        let outcome = match api.get_opt(name).await {
            Ok(Some(crd)) => serde_json::to_value(&crd)
                .map(|v| assess(&v))
                .map_err(|e| e.to_string()),
            Ok(None) => Ok(Verdict::Missing),
            Err(e) => Err(e.to_string()),
        };
        findings.push(Finding {
            crd: name.to_string(),
            outcome,
        });
    }
    findings
}

/// Logs each finding once (error when the CRD needs applying) and sets the gauge.
pub fn report(findings: &[Finding], gauge: &CrdGauge, component: &str) {
    for f in findings {
        match &f.outcome {
            Ok(verdict) => {
                let message = verdict.message(&f.crd);
                let outdated = verdict.needs_apply();
                if outdated {
                    tracing::error!(crd = %f.crd, "{component}: {message}");
                } else if matches!(verdict, Verdict::Newer { .. }) {
                    tracing::warn!(crd = %f.crd, "{component}: {message}");
                } else {
                    tracing::debug!(crd = %f.crd, "{component}: {message}");
                }
                gauge
                    .get_or_create(&CrdLabels { crd: f.crd.clone() })
                    .set(i64::from(outdated));
            }
            Err(e) => tracing::info!(
                crd = %f.crd,
                "{component}: cannot read CRD {} to check it is this binary's ({e}); not checked",
                f.crd
            ),
        }
    }
}

/// [`check`] then [`report`]: what `plumb controller` and `plumb server` run at start.
pub async fn check_and_report(client: kube::Client, gauge: CrdGauge, component: &'static str) {
    let findings = check(&client).await;
    report(&findings, &gauge, component);
}
