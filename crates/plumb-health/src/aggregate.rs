//! Application health from the health of the resources it manages, as Argo CD computes it
//! (`controller/health.go: setApplicationHealth`): the worst child wins.
//!
//! Skipped: targets marked as `Skip` hooks, live hooks, objects annotated
//! `argocd.argoproj.io/ignore-healthcheck: "true"`, the application's own Application object, and
//! objects with no health. A missing live object is reported `Missing` for itself but does not
//! affect the application (OutOfSync already says it), unless nothing the application expects
//! is live at all, which makes the application `Missing`. A child Application that is `Missing` or
//! `Unknown` does not affect its parent.

use plumb_model::{ResourceKey, annotations};
use serde_json::Value;

use crate::assess::Assessor;
use crate::missing_status::ClusterFacts;
use crate::rules::is_hook;
use crate::status::{HealthCode, HealthStatus};

/// At most this many resources are named in the application's message.
const MAX_CAUSES: usize = 3;

/// One resource of an application: what Git wants and what the cluster has.
#[derive(Debug, Clone, Copy)]
pub struct AppResource<'a> {
    /// The resource's identity.
    pub key: &'a ResourceKey,
    /// The desired object, if Git has it.
    pub target: Option<&'a Value>,
    /// The live object, if the cluster has it.
    pub live: Option<&'a Value>,
}

/// An application's health and each resource's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppHealth {
    /// The application's status; the message names the resources that made it so
    /// (`Caused by apps/Deployment:shop/api, Service:shop/web and 2 more`).
    pub status: HealthStatus,
    /// Per resource, in input order: its health, or `None` when skipped or without health.
    pub resources: Vec<Option<HealthStatus>>,
}

impl Assessor {
    /// Aggregates the health of an application's resources. `app` is the application's own key,
    /// so an application that manages itself does not judge itself.
    pub fn app_health(&self, app: &ResourceKey, resources: &[AppResource<'_>]) -> AppHealth {
        self.app_health_with(app, resources, None)
    }

    /// [`Assessor::app_health`] for resources of a cluster described by `facts` (see
    /// [`Assessor::assess_in`]).
    pub fn app_health_in(
        &self,
        app: &ResourceKey,
        resources: &[AppResource<'_>],
        facts: &dyn ClusterFacts,
    ) -> AppHealth {
        self.app_health_with(app, resources, Some(facts))
    }

    fn app_health_with(
        &self,
        app: &ResourceKey,
        resources: &[AppResource<'_>],
        facts: Option<&dyn ClusterFacts>,
    ) -> AppHealth {
        let mut code = HealthCode::Healthy;
        let mut counted: Vec<(HealthCode, &ResourceKey)> = Vec::new();
        let mut missing: Vec<&ResourceKey> = Vec::new();
        let mut out = Vec::with_capacity(resources.len());
        let (mut has_resources, mut has_live) = (false, false);

        for res in resources {
            out.push(None);
            // A hook Git declares is not a managed object (gitops-engine's Reconcile splits
            // hooks off before health), so an absent one is not Missing.
            if res.target.is_some_and(|t| is_skip_hook(t) || is_hook(t))
                || res.live.is_some_and(is_hook)
            {
                continue;
            }
            has_resources = true;
            let Some(live) = res.live else {
                if let Some(slot) = out.last_mut() {
                    *slot = Some(HealthStatus::bare(HealthCode::Missing));
                }
                missing.push(res.key);
                continue;
            };
            has_live = true;
            if annotation(live, annotations::IGNORE_HEALTHCHECK) == Some("true") || res.key == app {
                continue;
            }
            let Some(health) = self.assess_with(live, facts) else {
                continue;
            };
            let child_app = res.key.group == "argoproj.io" && res.key.kind == "Application";
            let counts =
                !(child_app && matches!(health.code, HealthCode::Missing | HealthCode::Unknown));
            if counts {
                code = code.max(health.code);
                counted.push((health.code, res.key));
            }
            if let Some(slot) = out.last_mut() {
                *slot = Some(health);
            }
        }

        let mut causes: Vec<&ResourceKey> = counted
            .iter()
            .filter(|(c, _)| *c == code && code != HealthCode::Healthy)
            .map(|(_, key)| *key)
            .collect();
        if has_resources && !has_live && HealthCode::Missing > code {
            code = HealthCode::Missing;
            causes = missing;
        }
        causes.sort();
        AppHealth {
            status: HealthStatus::new(code, caused_by(&causes)),
            resources: out,
        }
    }
}

/// `Caused by <group/Kind>:<namespace>/<name>, ... and N more`; empty when nothing is named.
/// Core kinds are written without a group (`Service:shop/web`).
fn caused_by(causes: &[&ResourceKey]) -> String {
    if causes.is_empty() {
        return String::new();
    }
    let named: Vec<String> = causes
        .iter()
        .take(MAX_CAUSES)
        .map(|k| {
            let gk = if k.group.is_empty() {
                k.kind.clone()
            } else {
                format!("{}/{}", k.group, k.kind)
            };
            format!("{gk}:{}/{}", k.namespace, k.name)
        })
        .collect();
    let mut message = format!("Caused by {}", named.join(", "));
    if causes.len() > MAX_CAUSES {
        message.push_str(&format!(" and {} more", causes.len() - MAX_CAUSES));
    }
    message
}

fn annotation<'a>(obj: &'a Value, key: &str) -> Option<&'a str> {
    obj.get("metadata")?.get("annotations")?.get(key)?.as_str()
}

/// A target whose hook annotation names `Skip`: Argo neither applies nor judges it.
fn is_skip_hook(obj: &Value) -> bool {
    annotation(obj, annotations::HOOK)
        .is_some_and(|hooks| hooks.split(',').any(|h| h.trim() == "Skip"))
}
