//! Argo CD's built-in health rules, one file per kind, and the one table that picks a rule.
//!
//! Ported from gitops-engine `pkg/health/health.go` (`GetHealthCheckFunc`) and its `health_*.go`
//! files; statuses and messages are byte-identical to Argo's. Rules read plain JSON: a missing
//! number counts as 0 and a missing string as empty, as Go's typed conversion would give.

mod apiservice;
mod crd;
mod cronjob;
mod daemonset;
mod deployment;
mod fields;
mod hpa;
mod ingress;
mod job;
mod pod;
mod pvc;
mod replicaset;
mod service;
mod statefulset;
mod version;
mod workflow;

use serde_json::Value;

use crate::status::HealthStatus;

pub(crate) use fields::{Condition, conditions, is_hook};

/// A built-in rule: the object in, its health out.
pub(crate) type Rule = fn(&Value) -> HealthStatus;

/// The built-in rule for a group and kind, if Argo has one (versions are checked inside each rule).
pub(crate) fn rule_for(group: &str, kind: &str) -> Option<Rule> {
    let rule: Rule = match (group, kind) {
        ("apps", "Deployment") => deployment::health,
        ("apps", "StatefulSet") => statefulset::health,
        ("apps", "ReplicaSet") => replicaset::health,
        ("apps", "DaemonSet") => daemonset::health,
        ("extensions" | "networking.k8s.io", "Ingress") => ingress::health,
        ("argoproj.io", "Workflow") => workflow::health,
        ("apiregistration.k8s.io", "APIService") => apiservice::health,
        ("", "Service") => service::health,
        ("", "PersistentVolumeClaim") => pvc::health,
        ("", "Pod") => pod::health,
        ("batch", "Job") => job::health,
        // A Lua script Argo CD ships (batch/CronJob), written here as a rule.
        ("batch", "CronJob") => cronjob::health,
        ("apiextensions.k8s.io", "CustomResourceDefinition") => crd::health,
        ("autoscaling", "HorizontalPodAutoscaler") => hpa::health,
        _ => return None,
    };
    Some(rule)
}
