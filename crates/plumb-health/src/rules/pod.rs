//! Pod (v1): gitops-engine `health_pod.go`, including the ignore-restart-policy annotation.

use serde_json::Value;

use plumb_model::annotations;

use super::fields::{annotation, array_at, at, condition, go_quote, int_at, is_hook, str_at};
use super::version::check_version;
use crate::status::{HealthCode, HealthStatus};

pub(super) fn health(obj: &Value) -> HealthStatus {
    if let Some(unsupported) = check_version(obj, "Pod", &["v1"]) {
        return unsupported;
    }
    let restart_policy = str_at(obj, &["spec", "restartPolicy"]);
    // A finite pod (Never/OnFailure) is judged like a long-running one only when asked, and never
    // when it is a hook: a hook marked Degraded on ImagePullBackOff would fail the sync too early.
    let ignore_restart_policy =
        annotation(obj, annotations::IGNORE_RESTART_POLICY) == Some("true") && !is_hook(obj);
    let long_running = restart_policy == "Always" || ignore_restart_policy;
    let container_statuses = array_at(obj, &["status", "containerStatuses"]);
    let pod_message = str_at(obj, &["status", "message"]);

    if long_running {
        let messages: Vec<&str> = container_statuses
            .iter()
            .filter_map(|c| at(c, &["state", "waiting"]))
            .filter(|w| {
                let reason = str_at(w, &["reason"]);
                reason.starts_with("Err")
                    || reason.ends_with("Error")
                    || reason.ends_with("BackOff")
            })
            .map(|w| str_at(w, &["message"]))
            .collect();
        if !messages.is_empty() {
            return HealthStatus::new(HealthCode::Degraded, messages.join(", "));
        }
    }

    match str_at(obj, &["status", "phase"]) {
        "Pending" => HealthStatus::new(HealthCode::Progressing, pod_message),
        "Succeeded" => HealthStatus::new(HealthCode::Healthy, pod_message),
        "Failed" => {
            if !pod_message.is_empty() {
                return HealthStatus::new(HealthCode::Degraded, pod_message);
            }
            let init = array_at(obj, &["status", "initContainerStatuses"]);
            let message = init
                .iter()
                .chain(container_statuses)
                .map(fail_message)
                .find(|m| !m.is_empty())
                .unwrap_or_default();
            HealthStatus::new(HealthCode::Degraded, message)
        }
        "Running" if long_running => {
            let ready = condition(obj, "Ready").is_some_and(|c| c.status == "True");
            if ready {
                return HealthStatus::new(HealthCode::Healthy, pod_message);
            }
            let restarted = container_statuses
                .iter()
                .any(|c| at(c, &["lastState", "terminated"]).is_some_and(|t| !t.is_null()));
            let code = if restarted {
                HealthCode::Degraded
            } else {
                HealthCode::Progressing
            };
            HealthStatus::new(code, pod_message)
        }
        "Running" if matches!(restart_policy, "OnFailure" | "Never") => {
            HealthStatus::new(HealthCode::Progressing, pod_message)
        }
        _ => HealthStatus::new(HealthCode::Unknown, pod_message),
    }
}

/// Why a terminated container failed: its message, `OOMKilled`, or its exit code.
fn fail_message(container: &Value) -> String {
    let Some(terminated) = at(container, &["state", "terminated"]).filter(|t| !t.is_null()) else {
        return String::new();
    };
    let message = str_at(terminated, &["message"]);
    if !message.is_empty() {
        return message.to_string();
    }
    if str_at(terminated, &["reason"]) == "OOMKilled" {
        return "OOMKilled".to_string();
    }
    let exit_code = int_at(terminated, &["exitCode"]);
    if exit_code != 0 {
        let name = go_quote(str_at(container, &["name"]));
        return format!("container {name} failed with exit code {exit_code}");
    }
    String::new()
}
