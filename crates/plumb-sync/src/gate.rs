//! Judging a running task from its live object: whether a hook finished, whether a wave's
//! objects are healthy enough for the next wave to start.

use std::sync::Arc;

use plumb_health::{Assessor, ClusterFacts, HealthCode};
use plumb_model::ResourceKey;
use serde_json::Value;

/// Which objects hold the next wave.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HealthGate {
    /// Every object with health, including custom resources judged by the generic rule,
    /// must be Healthy.
    #[default]
    Plumb,
    /// Argo CD's behaviour (`plumb.sync.healthGate: argo`): objects without a health rule of
    /// their own (built-in or Lua) pass at once.
    Argo,
}

impl HealthGate {
    /// Reads the `plumb.sync.healthGate` setting (`plumb` or `argo`; absent means `plumb`).
    pub fn from_setting(value: Option<&str>) -> Result<Self, String> {
        match value.map(str::trim) {
            None | Some("") | Some("plumb") => Ok(Self::Plumb),
            Some("argo") => Ok(Self::Argo),
            Some(other) => Err(format!(
                "plumb.sync.healthGate: {other:?} is not valid (expected plumb or argo)"
            )),
        }
    }
}

/// Where a running task stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Still running; the message says why.
    Running(String),
    /// Done.
    Succeeded(String),
    /// Done, unsuccessfully.
    Failed(String),
}

/// A hook's phase from its health, as Argo CD judges it: Healthy succeeded, Progressing or
/// Suspended still running, Degraded or Unknown failed, no health at all succeeded. The hook
/// finalizer keeps a finished Job alive after its TTL deleted it, so a deletion in progress is
/// not taken for progress.
pub fn judge_hook(assessor: &Assessor, name: &str, live: Option<&Value>) -> Verdict {
    let Some(live) = live else {
        return Verdict::Failed(format!("{name} was deleted before its result was recorded"));
    };
    let mut obj = live.clone();
    if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("deletionTimestamp");
    }
    match assessor.assess(&obj) {
        None => Verdict::Succeeded(format!("{name} created")),
        Some(h) => match h.code {
            HealthCode::Healthy => Verdict::Succeeded(h.message),
            HealthCode::Progressing | HealthCode::Suspended => Verdict::Running(h.message),
            _ => Verdict::Failed(h.message),
        },
    }
}

/// Whether an applied object of a wave that has more work after it may let that work start:
/// Healthy passes, Degraded fails the sync, anything else waits. With `facts` about the cluster
/// (which kinds have a status subresource), a custom resource whose controller has not given it
/// a status yet waits too (`plumb.health.missingStatus`), from the moment it exists.
pub fn judge_resource(
    assessor: &Assessor,
    gate: HealthGate,
    group: &str,
    kind: &str,
    live: Option<&Value>,
    facts: Option<&dyn ClusterFacts>,
) -> Verdict {
    let Some(live) = live else {
        return Verdict::Running("the object does not exist yet".into());
    };
    if gate == HealthGate::Argo && !assessor.has_own_rule(group, kind) {
        return Verdict::Succeeded(String::new());
    }
    let health = match facts {
        Some(facts) => assessor.assess_for_wave(live, facts),
        None => assessor.assess(live),
    };
    match health {
        None => Verdict::Succeeded(String::new()),
        Some(h) => match h.code {
            HealthCode::Healthy => Verdict::Succeeded(h.message),
            HealthCode::Degraded => Verdict::Failed(h.message),
            _ => Verdict::Running(h.message),
        },
    }
}

/// A running task to judge, with its live object as just read (`None`: it does not exist).
#[derive(Debug, Clone)]
pub struct Running {
    /// Whether the task is a hook ([`judge_hook`]) or an applied object ([`judge_resource`]).
    pub hook: bool,
    /// The object.
    pub key: ResourceKey,
    /// Its live state.
    pub live: Option<Value>,
}

/// What judges a sync's running tasks, owned so that a batch of judgements can leave the async
/// runtime.
#[derive(Clone)]
pub struct Judge {
    /// Health rules (built-in, Lua customizations, generic rule).
    pub assessor: Assessor,
    /// Which objects hold the next wave.
    pub gate: HealthGate,
    /// What the assessor may know about the destination cluster ([`judge_resource`]).
    pub facts: Option<Arc<dyn ClusterFacts + Send + Sync>>,
}

impl Judge {
    /// The verdict on one running task.
    pub fn judge(&self, task: &Running) -> Verdict {
        if task.hook {
            judge_hook(&self.assessor, &task.key.name, task.live.as_ref())
        } else {
            judge_resource(
                &self.assessor,
                self.gate,
                &task.key.group,
                &task.key.kind,
                task.live.as_ref(),
                self.facts.as_deref().map(|f| f as &dyn ClusterFacts),
            )
        }
    }

    /// Judges a batch of running tasks on tokio's blocking pool, in one hand-off: health scripts
    /// are user code (Lua, each bounded by its limits but up to a second of CPU), and the
    /// runtime's workers drive every other Application's watches, reconciles and syncs. The
    /// verdicts come in the tasks' order. A panic while judging is an `Err` naming it, for the
    /// caller to fail this sync with, never a crash of the controller.
    pub async fn judge_all(&self, batch: Vec<Running>) -> Result<Vec<Verdict>, String> {
        let judge = self.clone();
        off_runtime(move || batch.iter().map(|task| judge.judge(task)).collect()).await
    }
}

/// Runs `work` on the blocking pool; a panic in it becomes an error message.
async fn off_runtime<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, String> {
    tokio::task::spawn_blocking(work).await.map_err(|e| {
        if e.is_panic() {
            let payload = e.into_panic();
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "no message".to_string());
            format!("judging the health of running tasks panicked: {what}")
        } else {
            format!("judging the health of running tasks did not finish: {e}")
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn job(conditions: Value, deleting: bool) -> Value {
        let mut j = json!({
            "apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": "migrate", "namespace": "shop", "finalizers": ["argocd.argoproj.io/hook-finalizer"]},
            "spec": {"completions": 1, "parallelism": 1, "backoffLimit": 6},
            "status": {"conditions": conditions}
        });
        if deleting {
            j["metadata"]["deletionTimestamp"] = json!("2026-11-30T10:00:00Z");
        }
        j
    }

    #[test]
    fn hooks_follow_their_health_even_while_a_ttl_deletes_them() {
        let a = Assessor::default();
        let complete = job(
            json!([{"type": "SuccessCriteriaMet", "status": "True"}, {"type": "Complete", "status": "True"}]),
            true,
        );
        assert!(matches!(
            judge_hook(&a, "migrate", Some(&complete)),
            Verdict::Succeeded(_)
        ));
        let failed = job(
            json!([{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded", "message": "Job has reached the specified backoff limit"}]),
            false,
        );
        assert_eq!(
            judge_hook(&a, "migrate", Some(&failed)),
            Verdict::Failed("Job has reached the specified backoff limit".into())
        );
        let running = job(json!([]), false);
        assert!(matches!(
            judge_hook(&a, "migrate", Some(&running)),
            Verdict::Running(_)
        ));
        assert!(matches!(
            judge_hook(&a, "migrate", None),
            Verdict::Failed(_)
        ));
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "marker"}});
        assert_eq!(
            judge_hook(&a, "marker", Some(&cm)),
            Verdict::Succeeded("marker created".into())
        );
    }

    #[test]
    fn custom_resources_gate_unless_argo_mode() {
        let a = Assessor::default();
        let db = json!({
            "apiVersion": "example.com/v1", "kind": "Database",
            "metadata": {"name": "orders", "namespace": "shop", "generation": 1},
            "status": {"conditions": [{"type": "Ready", "status": "False", "reason": "Provisioning", "message": "creating volume"}]}
        });
        assert!(matches!(
            judge_resource(
                &a,
                HealthGate::Plumb,
                "example.com",
                "Database",
                Some(&db),
                None
            ),
            Verdict::Running(_)
        ));
        assert!(matches!(
            judge_resource(
                &a,
                HealthGate::Argo,
                "example.com",
                "Database",
                Some(&db),
                None
            ),
            Verdict::Succeeded(_)
        ));
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}});
        assert!(matches!(
            judge_resource(&a, HealthGate::Plumb, "", "ConfigMap", Some(&cm), None),
            Verdict::Succeeded(_)
        ));
        assert_eq!(HealthGate::from_setting(Some("argo")), Ok(HealthGate::Argo));
        assert!(HealthGate::from_setting(Some("strict")).is_err());
    }

    struct WithStatusSubresource;

    impl ClusterFacts for WithStatusSubresource {
        fn status_subresource(&self, _: &str, _: &str) -> Option<bool> {
            Some(true)
        }
    }

    #[test]
    fn a_custom_resource_without_a_status_holds_the_wave_until_its_controller_reports() {
        let a = Assessor::default();
        // Just created (the grace period of the health shown is not over), no status yet.
        let created = jiff::Timestamp::now().to_string();
        let mut db = json!({
            "apiVersion": "example.com/v1", "kind": "Database",
            "metadata": {"name": "orders", "namespace": "shop", "generation": 1, "creationTimestamp": created},
            "spec": {"size": "10Gi"}
        });
        let facts: &dyn ClusterFacts = &WithStatusSubresource;
        assert_eq!(a.assess_in(&db, facts), None, "no health shown yet");
        assert_eq!(
            judge_resource(
                &a,
                HealthGate::Plumb,
                "example.com",
                "Database",
                Some(&db),
                Some(facts)
            ),
            Verdict::Running("generic: waiting for Database controller to report status".into())
        );
        // Argo's gate lets it through, as Argo CD does (no health, no gate).
        assert!(matches!(
            judge_resource(
                &a,
                HealthGate::Argo,
                "example.com",
                "Database",
                Some(&db),
                Some(facts)
            ),
            Verdict::Succeeded(_)
        ));
        // Once the controller reports Ready, the wave goes on.
        db["status"] = json!({"conditions": [{"type": "Ready", "status": "True"}]});
        assert!(matches!(
            judge_resource(
                &a,
                HealthGate::Plumb,
                "example.com",
                "Database",
                Some(&db),
                Some(facts)
            ),
            Verdict::Succeeded(_)
        ));
    }

    /// A child Application as an app of apps applies it: no status until its controller looks
    /// at it, then the health that controller writes.
    fn child_app(health: Option<&str>) -> Value {
        let mut app = json!({
            "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
            "metadata": {"name": "payments", "namespace": "argocd",
                         "creationTimestamp": jiff::Timestamp::now().to_string(),
                         "annotations": {"argocd.argoproj.io/sync-wave": "0"}},
            "spec": {"project": "default"}
        });
        if let Some(h) = health {
            app["status"] = json!({"health": {"status": h}, "sync": {"status": "Synced"}});
        }
        app
    }

    fn judge_child(a: &Assessor, gate: HealthGate, app: &Value) -> Verdict {
        let facts: &dyn ClusterFacts = &WithStatusSubresource;
        judge_resource(
            a,
            gate,
            "argoproj.io",
            "Application",
            Some(app),
            Some(facts),
        )
    }

    #[test]
    fn a_child_application_holds_a_wave_only_with_argo_cds_health_override() {
        // As in Argo CD since 1.8: no health of its own, so it holds nothing, whatever it says.
        let a = Assessor::default();
        for gate in [HealthGate::Plumb, HealthGate::Argo] {
            for app in [
                child_app(None),
                child_app(Some("Progressing")),
                child_app(Some("Degraded")),
            ] {
                assert_eq!(
                    judge_child(&a, gate, &app),
                    Verdict::Succeeded(String::new()),
                    "{gate:?} {app}"
                );
            }
        }
        // With the override Argo CD documents for app of apps, the child's own health decides.
        let override_script = r#"hs = {}
hs.status = "Progressing"
hs.message = ""
if obj.status ~= nil then
  if obj.status.health ~= nil then
    hs.status = obj.status.health.status
    if obj.status.health.message ~= nil then
      hs.message = obj.status.health.message
    end
  end
end
return hs"#;
        let settings = plumb_model::Settings::from_data(
            [(
                "resource.customizations.health.argoproj.io_Application".to_string(),
                override_script.to_string(),
            )]
            .into(),
        );
        let a = Assessor::new(plumb_health::Config::default().settings(settings)).unwrap();
        for gate in [HealthGate::Plumb, HealthGate::Argo] {
            assert!(matches!(
                judge_child(&a, gate, &child_app(None)),
                Verdict::Running(_)
            ));
            assert!(matches!(
                judge_child(&a, gate, &child_app(Some("Missing"))),
                Verdict::Running(_)
            ));
            assert!(matches!(
                judge_child(&a, gate, &child_app(Some("Progressing"))),
                Verdict::Running(_)
            ));
            assert!(matches!(
                judge_child(&a, gate, &child_app(Some("Degraded"))),
                Verdict::Failed(_)
            ));
            assert!(matches!(
                judge_child(&a, gate, &child_app(Some("Healthy"))),
                Verdict::Succeeded(_)
            ));
        }
    }

    /// Facts that note the thread asking for them: the missing-status rule asks while judging a
    /// status-less custom resource, so the note says where the judgement ran.
    struct ThreadNoting(std::sync::Mutex<Vec<std::thread::ThreadId>>);

    impl ClusterFacts for ThreadNoting {
        fn status_subresource(&self, _: &str, _: &str) -> Option<bool> {
            if let Ok(mut seen) = self.0.lock() {
                seen.push(std::thread::current().id());
            }
            Some(true)
        }
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_batch_is_judged_off_the_runtime_thread_in_order() {
        let facts = Arc::new(ThreadNoting(std::sync::Mutex::new(Vec::new())));
        let judge = Judge {
            assessor: Assessor::default(),
            gate: HealthGate::Plumb,
            facts: Some(facts.clone()),
        };
        let created = jiff::Timestamp::now().to_string();
        let db = json!({
            "apiVersion": "example.com/v1", "kind": "Database",
            "metadata": {"name": "orders", "namespace": "shop", "creationTimestamp": created}
        });
        let batch = vec![
            Running {
                hook: false,
                key: ResourceKey::new("example.com", "Database", "shop", "orders"),
                live: Some(db),
            },
            Running {
                hook: true,
                key: ResourceKey::new("", "ConfigMap", "shop", "marker"),
                live: Some(
                    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "marker"}}),
                ),
            },
            Running {
                hook: false,
                key: ResourceKey::new("", "ConfigMap", "shop", "later"),
                live: None,
            },
        ];
        let verdicts = judge.judge_all(batch).await.unwrap();
        assert_eq!(
            verdicts,
            vec![
                Verdict::Running(
                    "generic: waiting for Database controller to report status".into()
                ),
                Verdict::Succeeded("marker created".into()),
                Verdict::Running("the object does not exist yet".into()),
            ]
        );
        let seen = facts.0.lock().unwrap().clone();
        assert!(
            !seen.is_empty(),
            "the missing-status rule was not consulted"
        );
        let here = std::thread::current().id();
        assert!(
            seen.iter().all(|t| *t != here),
            "a judgement ran on the runtime's thread"
        );
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_panic_while_judging_is_an_error_for_the_sync_not_a_crash() {
        let err = off_runtime(|| -> Vec<Verdict> { panic!("a health rule fell over") })
            .await
            .unwrap_err();
        assert_eq!(
            err,
            "judging the health of running tasks panicked: a health rule fell over"
        );
        let err = off_runtime(|| -> Vec<Verdict> { panic!("{} rules fell over", 2) })
            .await
            .unwrap_err();
        assert!(err.ends_with("panicked: 2 rules fell over"), "{err}");
    }
}
