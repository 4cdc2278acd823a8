//! CronJob (batch/v1): Argo CD judges it with the Lua script `resource_customizations/batch/
//! CronJob/health.lua` that it ships; this rule gives the same statuses and messages, except that
//! a suspended CronJob is `Suspended` (Argo writes `Healthy` "until bug is resolved",
//! argo-cd#24428; docs/compatibility.md).

use serde_json::Value;

use super::fields::str_at;
use crate::status::{HealthCode, HealthStatus};

pub(super) fn health(obj: &Value) -> HealthStatus {
    if obj.pointer("/spec/suspend").and_then(Value::as_bool) == Some(true) {
        return HealthStatus::new(HealthCode::Suspended, "CronJob is Suspended");
    }
    let Some(status) = obj.get("status").filter(|s| !s.is_null()) else {
        return HealthStatus::new(HealthCode::Progressing, "Waiting for CronJob");
    };
    let scheduled = str_at(status, &["lastScheduleTime"]);
    if scheduled.is_empty() {
        // Nothing in status says whether a run was missed.
        return HealthStatus::new(HealthCode::Healthy, "CronJob has not been scheduled yet");
    }
    let succeeded = str_at(status, &["lastSuccessfulTime"]);
    if succeeded.is_empty() {
        return HealthStatus::new(
            HealthCode::Healthy,
            "The CronJob never completed successfully. It may not be healthy",
        );
    }
    if status
        .get("active")
        .and_then(Value::as_array)
        .is_some_and(|a| !a.is_empty())
    {
        return HealthStatus::new(
            HealthCode::Healthy,
            "The job is running. Its last execution may not have been successful",
        );
    }
    // RFC 3339 times in UTC compare as strings, as the Lua script compares them.
    if succeeded < scheduled {
        return HealthStatus::new(
            HealthCode::Degraded,
            "CronJob has not completed its last execution successfully",
        );
    }
    HealthStatus::new(
        HealthCode::Healthy,
        "CronJob has completed its last execution successfully",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cronjob(suspend: bool, status: Option<Value>) -> Value {
        let mut c = json!({"apiVersion": "batch/v1", "kind": "CronJob",
            "metadata": {"name": "nightly", "namespace": "shop"},
            "spec": {"schedule": "0 3 * * *", "suspend": suspend}});
        if let Some(s) = status {
            c["status"] = s;
        }
        c
    }

    fn judged(obj: &Value) -> (HealthCode, String) {
        let h = health(obj);
        (h.code, h.message)
    }

    #[test]
    fn cronjobs_are_judged_as_argo_cds_script_judges_them() {
        assert_eq!(
            judged(&cronjob(false, None)),
            (HealthCode::Progressing, "Waiting for CronJob".into())
        );
        // What the API server returns for a CronJob that never ran.
        assert_eq!(
            judged(&cronjob(false, Some(json!({})))).0,
            HealthCode::Healthy
        );
        let never = json!({"lastScheduleTime": "2026-12-01T03:00:00Z"});
        assert_eq!(
            judged(&cronjob(false, Some(never))).1,
            "The CronJob never completed successfully. It may not be healthy"
        );
        let running = json!({"lastScheduleTime": "2026-12-01T03:00:00Z",
            "lastSuccessfulTime": "2026-11-30T03:00:09Z", "active": [{"name": "nightly-1"}]});
        assert_eq!(
            judged(&cronjob(false, Some(running))).0,
            HealthCode::Healthy
        );
        let failed = json!({"lastScheduleTime": "2026-12-01T03:00:00Z",
            "lastSuccessfulTime": "2026-11-30T03:00:09Z"});
        assert_eq!(
            judged(&cronjob(false, Some(failed))),
            (
                HealthCode::Degraded,
                "CronJob has not completed its last execution successfully".into()
            )
        );
        let ok = json!({"lastScheduleTime": "2026-12-01T03:00:00Z",
            "lastSuccessfulTime": "2026-12-01T03:00:12Z"});
        assert_eq!(
            judged(&cronjob(false, Some(ok))),
            (
                HealthCode::Healthy,
                "CronJob has completed its last execution successfully".into()
            )
        );
    }

    #[test]
    fn a_suspended_cronjob_is_suspended_not_healthy() {
        assert_eq!(
            judged(&cronjob(true, Some(json!({})))),
            (HealthCode::Suspended, "CronJob is Suspended".into())
        );
    }
}
