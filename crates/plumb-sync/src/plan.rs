//! Turning the compared resources into an ordered plan, as Argo CD's sync engine orders it:
//! phase (PreSync, Sync, PostSync, SyncFail), then wave, then kind, then name; Namespaces and
//! CRDs moved ahead of the objects that need them; prune tasks in reverse wave order, and after
//! everything else with `PruneLast=true`.

use plumb_model::ResourceKey;
use plumb_model::application::{HookType, SyncPhase};
use serde_json::Value;

use crate::hook::{hook_types, is_skipped, name_generated_hook, sync_wave};
use crate::options::SyncOptions;
use crate::order::kind_rank;
use crate::task::{SyncTask, TaskSelection};

/// One planned unit of work.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedTask {
    /// Identity (the generated name for `generateName` hooks).
    pub key: ResourceKey,
    /// API version.
    pub version: String,
    /// The object to apply; `None` to prune.
    pub desired: Option<Value>,
    /// The live object when the plan was made.
    pub live: Option<Value>,
    /// Phase the task runs in.
    pub phase: SyncPhase,
    /// Wave within the phase.
    pub wave: i64,
    /// The hook type, for hooks.
    pub hook: Option<HookType>,
    /// Sync options: the Application's and the operation's, overridden by the object's own.
    pub options: SyncOptions,
    /// Another Application tracking the live object.
    pub shared_with: Option<String>,
}

impl PlannedTask {
    /// Whether the task deletes a live object.
    pub fn is_prune(&self) -> bool {
        self.desired.is_none()
    }

    /// Whether the task is a hook.
    pub fn is_hook(&self) -> bool {
        self.hook.is_some()
    }

    /// `(phase, wave)`: the step the task belongs to.
    pub fn step(&self) -> (i32, i64) {
        (phase_order(self.phase), self.wave)
    }

    fn sort_key(&self) -> (i32, i64, bool, usize, &str, &str) {
        let rank = kind_rank(&self.key.kind);
        // Within a wave, deletions come first (Argo prunes before it applies), dependents
        // before what they depend on.
        let rank = if self.is_prune() {
            usize::MAX - rank
        } else {
            rank
        };
        (
            phase_order(self.phase),
            self.wave,
            !self.is_prune(),
            rank,
            &self.key.name,
            &self.key.namespace,
        )
    }
}

/// Argo CD's phase order.
pub fn phase_order(phase: SyncPhase) -> i32 {
    match phase {
        SyncPhase::PreSync => -1,
        SyncPhase::PostSync => 1,
        SyncPhase::SyncFail => 2,
        _ => 0,
    }
}

/// What to plan.
#[derive(Debug, Clone, Default)]
pub struct PlanInput {
    /// Every compared resource.
    pub tasks: Vec<SyncTask>,
    /// `--resource` selection (a selective sync runs no hooks).
    pub selection: TaskSelection,
    /// The Application's and the operation's sync options.
    pub options: SyncOptions,
    /// Run hooks (`--strategy hook`, the default); `--strategy apply` runs none.
    pub hooks: bool,
    /// The revision synced (names `generateName` hooks).
    pub revision: String,
    /// When the operation started, in Unix seconds (names `generateName` hooks).
    pub started_unix: i64,
}

/// Orders the work of one sync.
pub fn plan(input: PlanInput) -> Vec<PlannedTask> {
    let run_hooks = input.hooks && input.selection.is_all();
    let only_out_of_sync = input.options.is_true("ApplyOutOfSyncOnly");
    let mut out = Vec::new();
    for t in input.tasks {
        let obj = t.desired.as_ref().or(t.live.as_ref());
        let Some(obj) = obj else { continue };
        if is_skipped(obj) {
            continue;
        }
        let options = input.options.merged(&SyncOptions::of_object(obj));
        let wave = sync_wave(obj);
        let hooks = hook_types(obj);
        if !hooks.is_empty() {
            // A live hook Git no longer declares is not pruned: it belonged to an earlier run.
            let Some(desired) = &t.desired else { continue };
            if !run_hooks {
                continue;
            }
            for hook in hooks {
                let phase = match hook {
                    HookType::PreSync => SyncPhase::PreSync,
                    HookType::Sync => SyncPhase::Sync,
                    HookType::PostSync => SyncPhase::PostSync,
                    HookType::SyncFail => SyncPhase::SyncFail,
                    _ => continue,
                };
                let mut desired = desired.clone();
                name_generated_hook(
                    &mut desired,
                    &input.revision,
                    phase.as_str(),
                    input.started_unix,
                );
                let key = ResourceKey::of(&desired);
                out.push(PlannedTask {
                    key,
                    version: t.version.clone(),
                    desired: Some(desired),
                    live: None,
                    phase,
                    wave,
                    hook: Some(hook),
                    options: options.clone(),
                    shared_with: None,
                });
            }
            continue;
        }
        if !input.selection.selects(&t.key) {
            continue;
        }
        if t.desired.is_some() && only_out_of_sync && !t.out_of_sync {
            continue;
        }
        out.push(PlannedTask {
            key: t.key,
            version: t.version,
            desired: t.desired,
            live: t.live,
            phase: SyncPhase::Sync,
            wave,
            hook: None,
            options,
            shared_with: t.shared_with,
        });
    }
    adjust_dependencies(&mut out);
    order_prunes(&mut out);
    out.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
    out
}

/// Moves a Namespace ahead of the first task inside it and a CRD ahead of the first custom
/// resource of its kind (the dependency adopts the dependent's phase and wave).
fn adjust_dependencies(tasks: &mut [PlannedTask]) {
    for i in 0..tasks.len() {
        let t = &tasks[i];
        if t.is_prune() || t.is_hook() {
            continue;
        }
        let Some(desired) = &t.desired else { continue };
        let needed_by: Box<dyn Fn(&PlannedTask) -> bool> =
            match (t.key.group.as_str(), t.key.kind.as_str()) {
                ("", "Namespace") => {
                    let ns = t.key.name.clone();
                    Box::new(move |o: &PlannedTask| o.key.namespace == ns)
                }
                ("apiextensions.k8s.io", "CustomResourceDefinition") => {
                    let group = desired
                        .pointer("/spec/group")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string();
                    let kind = desired
                        .pointer("/spec/names/kind")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string();
                    Box::new(move |o: &PlannedTask| o.key.group == group && o.key.kind == kind)
                }
                _ => continue,
            };
        let earliest = tasks
            .iter()
            .filter(|o| !o.is_prune() && o.phase != SyncPhase::SyncFail && needed_by(o))
            .map(|o| (phase_order(o.phase), o.wave, o.phase))
            .min();
        if let Some((order, wave, phase)) = earliest
            && (order, wave) < (phase_order(tasks[i].phase), tasks[i].wave)
        {
            tasks[i].phase = phase;
            tasks[i].wave = wave;
        }
    }
}

/// Prune tasks run in the reverse order of the waves that created them (the waves of prune
/// tasks are swapped symmetrically, as Argo CD does), and with `PruneLast=true` after the last
/// wave of the Sync phase.
fn order_prunes(tasks: &mut [PlannedTask]) {
    let mut waves: Vec<i64> = tasks
        .iter()
        .filter(|t| t.is_prune())
        .map(|t| t.wave)
        .collect();
    waves.sort_unstable();
    waves.dedup();
    let n = waves.len();
    for t in tasks.iter_mut().filter(|t| t.is_prune()) {
        if let Ok(i) = waves.binary_search(&t.wave) {
            t.wave = waves[n - 1 - i];
        }
    }
    let last_wave = tasks
        .iter()
        .filter(|t| t.phase == SyncPhase::Sync && !t.is_hook())
        .map(|t| t.wave)
        .max()
        .unwrap_or(0);
    for t in tasks.iter_mut() {
        if t.is_prune() && t.options.is_true("PruneLast") {
            t.wave = last_wave + 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn task(kind: &str, name: &str, ns: &str, annotations: Value) -> SyncTask {
        let group = match kind {
            "Deployment" => "apps",
            "Job" => "batch",
            "CustomResourceDefinition" => "apiextensions.k8s.io",
            "Database" => "example.com",
            _ => "",
        };
        let api_version = if group.is_empty() {
            "v1".to_string()
        } else {
            format!("{group}/v1")
        };
        let mut desired = json!({"apiVersion": api_version, "kind": kind,
            "metadata": {"name": name, "annotations": annotations}});
        if !ns.is_empty() {
            desired["metadata"]["namespace"] = json!(ns);
        }
        if kind == "CustomResourceDefinition" {
            desired["spec"] = json!({"group": "example.com", "names": {"kind": "Database"}});
        }
        SyncTask {
            key: ResourceKey::new(group, kind, ns, name),
            version: "v1".into(),
            desired: Some(desired),
            ..SyncTask::default()
        }
    }

    fn prune(kind: &str, name: &str, wave: i64, extra: Value) -> SyncTask {
        let mut t = task(
            kind,
            name,
            "shop",
            json!({"argocd.argoproj.io/sync-wave": wave.to_string()}),
        );
        if let (Some(live), Some(extra)) = (t.desired.take(), extra.as_object()) {
            let mut live = live;
            for (k, v) in extra {
                live["metadata"]["annotations"][k] = v.clone();
            }
            t.live = Some(live);
        }
        t
    }

    fn order(tasks: &[PlannedTask]) -> Vec<String> {
        tasks
            .iter()
            .map(|t| {
                format!(
                    "{}/{}:{}/{}{}",
                    t.phase,
                    t.wave,
                    t.key.kind,
                    t.key.name,
                    if t.is_prune() { " (prune)" } else { "" }
                )
            })
            .collect()
    }

    fn input(tasks: Vec<SyncTask>) -> PlanInput {
        PlanInput {
            tasks,
            hooks: true,
            revision: "4f3c2a1b9e".into(),
            started_unix: 100,
            ..PlanInput::default()
        }
    }

    #[test]
    fn phases_then_waves_then_kinds_then_names() {
        let tasks = vec![
            task(
                "Deployment",
                "web",
                "shop",
                json!({"argocd.argoproj.io/sync-wave": "1"}),
            ),
            task("Service", "web", "shop", json!({})),
            task("Deployment", "api", "shop", json!({})),
            task(
                "ConfigMap",
                "conf",
                "shop",
                json!({"argocd.argoproj.io/sync-wave": "-1"}),
            ),
            task(
                "Job",
                "migrate",
                "shop",
                json!({"argocd.argoproj.io/hook": "PreSync"}),
            ),
            task(
                "Job",
                "smoke",
                "shop",
                json!({"argocd.argoproj.io/hook": "PostSync,SyncFail"}),
            ),
            task(
                "Pod",
                "skipped",
                "shop",
                json!({"argocd.argoproj.io/hook": "Skip"}),
            ),
        ];
        assert_eq!(
            order(&plan(input(tasks))),
            [
                "PreSync/0:Job/migrate",
                "Sync/-1:ConfigMap/conf",
                "Sync/0:Service/web",
                "Sync/0:Deployment/api",
                "Sync/1:Deployment/web",
                "PostSync/0:Job/smoke",
                "SyncFail/0:Job/smoke",
            ]
        );
    }

    #[test]
    fn namespaces_and_crds_move_ahead_of_their_dependents() {
        let tasks = vec![
            task(
                "Namespace",
                "shop",
                "",
                json!({"argocd.argoproj.io/sync-wave": "5"}),
            ),
            task(
                "ConfigMap",
                "conf",
                "shop",
                json!({"argocd.argoproj.io/sync-wave": "1"}),
            ),
            task(
                "CustomResourceDefinition",
                "databases.example.com",
                "",
                json!({"argocd.argoproj.io/sync-wave": "3"}),
            ),
            task(
                "Database",
                "orders",
                "shop",
                json!({"argocd.argoproj.io/sync-wave": "2"}),
            ),
            task(
                "Job",
                "migrate",
                "shop",
                json!({"argocd.argoproj.io/hook": "PreSync"}),
            ),
        ];
        assert_eq!(
            order(&plan(input(tasks))),
            [
                "PreSync/0:Namespace/shop",
                "PreSync/0:Job/migrate",
                "Sync/1:ConfigMap/conf",
                "Sync/2:CustomResourceDefinition/databases.example.com",
                "Sync/2:Database/orders",
            ]
        );
    }

    #[test]
    fn prunes_run_in_reverse_wave_order_and_prune_last_after_everything() {
        let tasks = vec![
            task(
                "Deployment",
                "api",
                "shop",
                json!({"argocd.argoproj.io/sync-wave": "2"}),
            ),
            prune("ConfigMap", "old-a", 0, json!({})),
            prune("ConfigMap", "old-b", 1, json!({})),
            prune("Deployment", "old-c", 4, json!({})),
            prune(
                "Service",
                "old-d",
                0,
                json!({"argocd.argoproj.io/sync-options": "PruneLast=true"}),
            ),
        ];
        assert_eq!(
            order(&plan(input(tasks))),
            [
                "Sync/0:Deployment/old-c (prune)",
                "Sync/1:ConfigMap/old-b (prune)",
                "Sync/2:Deployment/api",
                "Sync/4:ConfigMap/old-a (prune)",
                "Sync/5:Service/old-d (prune)",
            ]
        );
    }

    #[test]
    fn selective_syncs_and_the_apply_strategy_run_no_hooks() {
        let tasks = vec![
            task("Deployment", "api", "shop", json!({})),
            task("Service", "api", "shop", json!({})),
            task(
                "Job",
                "migrate",
                "shop",
                json!({"argocd.argoproj.io/hook": "PreSync"}),
            ),
        ];
        let mut selective = input(tasks.clone());
        selective.selection =
            TaskSelection::new(vec![plumb_model::application::SyncOperationResource {
                group: Some("apps".into()),
                kind: "Deployment".into(),
                name: "api".into(),
                namespace: None,
            }]);
        assert_eq!(order(&plan(selective)), ["Sync/0:Deployment/api"]);
        let mut apply = input(tasks);
        apply.hooks = false;
        assert_eq!(
            order(&plan(apply)),
            ["Sync/0:Service/api", "Sync/0:Deployment/api"]
        );
    }

    #[test]
    fn apply_out_of_sync_only_keeps_hooks_and_prunes() {
        let mut synced = task("Service", "api", "shop", json!({}));
        synced.out_of_sync = false;
        let mut drifted = task("Deployment", "api", "shop", json!({}));
        drifted.out_of_sync = true;
        let mut i = input(vec![
            synced,
            drifted,
            task(
                "Job",
                "migrate",
                "shop",
                json!({"argocd.argoproj.io/hook": "PreSync"}),
            ),
            prune("ConfigMap", "old", 0, json!({})),
        ]);
        i.options = SyncOptions::parse(["ApplyOutOfSyncOnly=true"]);
        assert_eq!(
            order(&plan(i)),
            [
                "PreSync/0:Job/migrate",
                "Sync/0:ConfigMap/old (prune)",
                "Sync/0:Deployment/api",
            ]
        );
    }
}
