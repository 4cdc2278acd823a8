//! Running one sync operation to its end, step by step as Argo CD's sync engine does:
//! create the namespace, check and dry-run every task, then for each phase and wave in order
//! prune, (re)create hooks, apply, wait for CRDs to be served, and wait for the wave to work
//! (hooks completed, objects healthy) before the next starts. A failure runs the SyncFail hooks.
//! Progress is reported after every change; a terminate request stops the work between steps
//! and deletes running hooks.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use plumb_health::Assessor;
use plumb_kube::{Applier, Deleted, PropagationPolicy};
use plumb_model::ResourceKey;
use plumb_model::annotations::HOOK_FINALIZER;
use plumb_model::application::{OperationPhase, ResourceResult, ResultCode, SyncPhase};
use serde_json::{Value, json};
use tokio::sync::watch;

use crate::gate::{HealthGate, Verdict, judge_hook, judge_resource};
use crate::hook::{DeletePolicy, delete_policies};
use crate::options::SyncOptions;
use crate::plan::{PlanInput, PlannedTask, plan};
use crate::task::{SyncTask, TaskSelection};
use crate::write::{delete_and_wait, error_text, kubectl_name, write};

/// The destination namespace to create first (`CreateNamespace=true`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NamespaceToCreate {
    /// Namespace name.
    pub name: String,
    /// `managedNamespaceMetadata.labels`.
    pub labels: std::collections::BTreeMap<String, String>,
    /// `managedNamespaceMetadata.annotations`.
    pub annotations: std::collections::BTreeMap<String, String>,
}

/// A project's verdict on one object: `Err` with the message that names the rule.
pub type PermissionCheck =
    Arc<dyn Fn(&ResourceKey, Option<bool>) -> Result<(), String> + Send + Sync>;

/// Everything one sync needs to know.
#[derive(Clone, Default)]
pub struct SyncRequest {
    /// Every compared resource (ordinary objects, hooks, objects to prune).
    pub tasks: Vec<SyncTask>,
    /// `--resource` selection.
    pub selection: TaskSelection,
    /// Server-side dry run only; nothing changes and no hook runs.
    pub dry_run: bool,
    /// Prune tracked objects Git no longer declares.
    pub prune: bool,
    /// Application and operation sync options.
    pub options: SyncOptions,
    /// A namespace to create before anything else.
    pub create_namespace: Option<NamespaceToCreate>,
    /// Run hooks (`--strategy hook`, the default).
    pub hooks: bool,
    /// The sync strategy's `force`: every object as if it had `Force=true`.
    pub force: bool,
    /// The revision synced.
    pub revision: String,
    /// When the operation started (Unix seconds).
    pub started_unix: i64,
    /// Which objects hold the next wave.
    pub health_gate: HealthGate,
    /// The AppProject's check of each object (none: everything permitted).
    pub permitted: Option<PermissionCheck>,
    /// The Application's name, for shared-resource messages.
    pub app_name: String,
}

impl std::fmt::Debug for SyncRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SyncRequest")
            .field("tasks", &self.tasks.len())
            .field("dry_run", &self.dry_run)
            .field("prune", &self.prune)
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

/// What the controller tells a running sync.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Control {
    /// Stop (`plumb app terminate-op`).
    pub terminate: bool,
    /// The Application carries a deletion approval newer than the operation (`Prune=confirm`).
    pub prune_confirmed: bool,
}

/// The state of the operation, reported after every change.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    /// Argo's running message (`waiting for healthy state of apps/Deployment/x`).
    pub message: String,
    /// Results so far, in the order the work started.
    pub results: Vec<ResourceResult>,
}

/// The world a sync runs in.
pub struct SyncContext<'a> {
    /// Writes to the destination cluster.
    pub applier: &'a Applier,
    /// Judges hooks and gated waves.
    pub assessor: &'a Assessor,
    /// Receives progress.
    pub progress: &'a (dyn Fn(&Progress) + Send + Sync),
    /// Terminate requests and prune confirmations.
    pub control: watch::Receiver<Control>,
    /// How often running tasks are looked at.
    pub poll: Duration,
    /// Pause between waves (Argo CD: 2 s), so controllers see the last wave before it is judged.
    pub wave_delay: Duration,
}

/// How the sync ended.
#[derive(Debug, Clone, PartialEq)]
pub struct SyncOutcome {
    /// `Succeeded`, `Failed` or `Error`.
    pub phase: OperationPhase,
    /// Argo's operation message.
    pub message: String,
    /// One result per touched resource, in the order the work started.
    pub results: Vec<ResourceResult>,
    /// Whether the operation was stopped by a terminate request (never retried).
    pub terminated: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Pending,
    Running,
    Succeeded,
    Failed,
}

struct Exec {
    task: PlannedTask,
    state: State,
    /// Index into the results, once started.
    result: Option<usize>,
    /// Waiting for deletion of the previous hook object.
    deleting: bool,
}

struct Run<'a, 'b> {
    ctx: &'b SyncContext<'a>,
    req: SyncRequest,
    results: Vec<ResourceResult>,
    message: String,
    /// kubectl verbs of the dry run, by task (a dry-run sync reports them).
    dry_verbs: Vec<(ResourceKey, &'static str)>,
}

fn now() -> String {
    jiff::Timestamp::now()
        .round(jiff::Unit::Millisecond)
        .unwrap_or_else(|_| jiff::Timestamp::now())
        .to_string()
}

fn group_kind_name(key: &ResourceKey) -> String {
    format!("{}/{}/{}", key.group, key.kind, key.name)
}

/// Runs a sync to its end.
pub async fn run(ctx: &SyncContext<'_>, req: SyncRequest) -> SyncOutcome {
    let mut r = Run {
        ctx,
        req,
        results: Vec::new(),
        message: "one or more tasks are running".into(),
        dry_verbs: Vec::new(),
    };
    r.report();
    r.execute().await
}

impl<'a, 'b> Run<'a, 'b> {
    fn report(&self) {
        (self.ctx.progress)(&Progress {
            message: self.message.clone(),
            results: self.results.clone(),
        });
    }

    fn set_message(&mut self, message: String) {
        if self.message != message {
            self.message = message;
            self.report();
        }
    }

    fn terminating(&self) -> bool {
        self.ctx.control.borrow().terminate
    }

    fn outcome(&self, phase: OperationPhase, message: &str) -> SyncOutcome {
        SyncOutcome {
            phase,
            message: message.to_string(),
            results: self.results.clone(),
            terminated: false,
        }
    }

    /// Sleeps, waking early for a terminate request.
    async fn pause(&mut self, d: Duration) {
        let mut control = self.ctx.control.clone();
        tokio::select! {
            _ = tokio::time::sleep(d) => {}
            _ = control.wait_for(|c| c.terminate) => {}
        }
    }

    fn record(&mut self, task: &PlannedTask, status: Option<ResultCode>, message: String) -> usize {
        self.results.push(ResourceResult {
            group: task.key.group.clone(),
            version: task.version.clone(),
            kind: task.key.kind.clone(),
            namespace: task.key.namespace.clone(),
            name: task.key.name.clone(),
            status,
            message: Some(message),
            hook_type: task.hook,
            hook_phase: None,
            sync_phase: Some(task.phase),
            images: None,
            started_at: Some(now()),
            finished_at: None,
        });
        self.results.len() - 1
    }

    async fn execute(&mut self) -> SyncOutcome {
        if let Some(failed) = self.create_namespace().await {
            return failed;
        }
        let tasks = plan(PlanInput {
            tasks: std::mem::take(&mut self.req.tasks),
            selection: self.req.selection.clone(),
            options: self.req.options.clone(),
            hooks: self.req.hooks,
            revision: self.req.revision.clone(),
            started_unix: self.req.started_unix,
        });
        let mut tasks: Vec<PlannedTask> = tasks
            .into_iter()
            .map(|mut t| {
                if self.req.force {
                    t.options = t.options.merged(&SyncOptions::parse(["Force=true"]));
                }
                t
            })
            .collect();
        if let Some(failed) = self.validate(&tasks) {
            return failed;
        }
        if let Some(failed) = self.dry_run_all(&mut tasks).await {
            return failed;
        }
        if self.req.dry_run {
            return self.finish_dry_run(&tasks);
        }
        if tasks.is_empty() {
            return self.outcome(
                OperationPhase::Succeeded,
                "successfully synced (no more tasks)",
            );
        }
        self.run_steps(tasks).await
    }

    async fn create_namespace(&mut self) -> Option<SyncOutcome> {
        let ns = self.req.create_namespace.clone()?;
        let key = ResourceKey::new("", "Namespace", "", &ns.name);
        let live = self.ctx.applier.get(&key).await.ok().flatten();
        if live.is_some() && ns.labels.is_empty() && ns.annotations.is_empty() {
            return None;
        }
        let body = json!({
            "apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": ns.name, "labels": ns.labels, "annotations": ns.annotations},
        });
        let r = if self.req.dry_run {
            self.ctx.applier.dry_run_apply(&body).await.map(|_| ())
        } else {
            self.ctx
                .applier
                .apply(&body, live.as_ref())
                .await
                .map(|_| ())
        };
        let task = PlannedTask {
            key: key.clone(),
            version: "v1".into(),
            desired: Some(body),
            live: None,
            phase: SyncPhase::PreSync,
            wave: 0,
            hook: None,
            options: SyncOptions::default(),
            shared_with: None,
        };
        let (status, message, failed) = match r {
            Ok(()) => {
                let verb = if live.is_none() {
                    "created"
                } else {
                    "configured"
                };
                let dry = if self.req.dry_run { " (dry run)" } else { "" };
                (
                    ResultCode::Synced,
                    format!("namespace/{} {verb}{dry}", ns.name),
                    false,
                )
            }
            Err(e) => (ResultCode::SyncFailed, error_text(&e), true),
        };
        let i = self.record(&task, Some(status), message);
        self.results[i].finished_at = Some(now());
        self.report();
        failed.then(|| {
            self.outcome(
                OperationPhase::Failed,
                "one or more objects failed to apply",
            )
        })
    }

    /// Tasks that must not run at all: forbidden by the project, or shared with another
    /// Application under `FailOnSharedResource=true`.
    fn validate(&mut self, tasks: &[PlannedTask]) -> Option<SyncOutcome> {
        let catalog = self.ctx.applier.discovery().catalog();
        let mut invalid = Vec::new();
        for t in tasks {
            if let Some(check) = &self.req.permitted {
                let namespaced = catalog.is_namespaced(&t.key.group_kind());
                if let Err(msg) = check(&t.key, namespaced) {
                    invalid.push((t.clone(), msg));
                    continue;
                }
            }
            if let Some(other) = &t.shared_with
                && t.options.is_true("FailOnSharedResource")
            {
                let msg = format!(
                    "Shared resource found: {}/{} is part of applications {} and {other}",
                    t.key.kind, t.key.name, self.req.app_name
                );
                return Some(self.fail_tasks(vec![(t.clone(), msg.clone())], &msg));
            }
        }
        if invalid.is_empty() {
            return None;
        }
        let summary = invalid
            .iter()
            .map(|(_, m)| m.as_str())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect::<Vec<_>>()
            .join(", ");
        Some(self.fail_tasks(
            invalid,
            &format!("one or more synchronization tasks are not valid: {summary}"),
        ))
    }

    fn fail_tasks(&mut self, failed: Vec<(PlannedTask, String)>, message: &str) -> SyncOutcome {
        for (t, msg) in failed {
            let i = self.record(&t, Some(ResultCode::SyncFailed), msg);
            self.results[i].finished_at = Some(now());
        }
        self.outcome(OperationPhase::Failed, message)
    }

    /// Every object is dry-run before anything changes; one failure fails the sync. Custom
    /// resources whose CRD is part of this sync (or `SkipDryRunOnMissingResource=true`) skip
    /// the dry run when their kind is not served yet.
    async fn dry_run_all(&mut self, tasks: &mut [PlannedTask]) -> Option<SyncOutcome> {
        let crd_kinds: BTreeSet<(String, String)> = tasks
            .iter()
            .filter(|t| t.key.kind == "CustomResourceDefinition" && !t.is_prune())
            .filter_map(|t| t.desired.as_ref())
            .map(|d| {
                (
                    d.pointer("/spec/group")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                    d.pointer("/spec/names/kind")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                )
            })
            .collect();
        let mut failed = Vec::new();
        for t in tasks.iter_mut() {
            let Some(desired) = t.desired.clone() else {
                continue;
            };
            let r = if t.is_hook() {
                self.dry_run_hook(&desired).await
            } else {
                match write(
                    self.ctx.applier,
                    &desired,
                    t.live.as_ref(),
                    &t.options,
                    true,
                )
                .await
                {
                    Ok(w) => {
                        self.dry_verbs.push((t.key.clone(), w.verb));
                        Ok(())
                    }
                    Err(e) => Err(e),
                }
            };
            if let Err(msg) = r {
                let missing_kind = msg.contains("kind not served by the API server");
                let crd_here = crd_kinds.contains(&(t.key.group.clone(), t.key.kind.clone()));
                if missing_kind && (crd_here || t.options.is_true("SkipDryRunOnMissingResource")) {
                    continue;
                }
                failed.push((t.clone(), msg));
            }
        }
        if failed.is_empty() {
            None
        } else {
            Some(self.fail_tasks(failed, "one or more objects failed to apply (dry run)"))
        }
    }

    /// A hook is created anew each time; its dry run must not collide with the previous run's
    /// object, which is deleted before the hook is created.
    async fn dry_run_hook(&self, desired: &Value) -> Result<(), String> {
        let mut probe = desired.clone();
        if let Some(meta) = probe.get_mut("metadata").and_then(Value::as_object_mut)
            && let Some(name) = meta
                .remove("name")
                .and_then(|n| n.as_str().map(str::to_string))
        {
            let prefix: String = name.chars().take(50).collect();
            meta.insert("generateName".into(), Value::String(format!("{prefix}-")));
        }
        self.ctx
            .applier
            .create(&probe, true)
            .await
            .map(|_| ())
            .map_err(|e| error_text(&e))
    }

    fn finish_dry_run(&mut self, tasks: &[PlannedTask]) -> SyncOutcome {
        for t in tasks {
            if t.phase == SyncPhase::SyncFail {
                continue;
            }
            let (status, message) = if t.is_prune() {
                self.prune_verdict(t)
                    .unwrap_or((ResultCode::Pruned, "pruned (dry run)".into()))
            } else {
                let verb = self
                    .dry_verbs
                    .iter()
                    .find(|(k, _)| *k == t.key)
                    .map_or("created", |(_, v)| *v);
                (
                    ResultCode::Synced,
                    format!("{} {verb} (dry run)", kubectl_name(&t.key)),
                )
            };
            let i = self.record(t, Some(status), message);
            self.results[i].finished_at = Some(now());
            if t.is_hook() {
                // Argo CD: a hook that passed its dry run has done all a dry run does.
                self.results[i].hook_phase = Some(OperationPhase::Succeeded);
            }
        }
        self.outcome(
            OperationPhase::Succeeded,
            "successfully synced (all tasks run)",
        )
    }

    /// Whether a prune is skipped, and why (`None`: it may proceed).
    fn prune_verdict(&self, t: &PlannedTask) -> Option<(ResultCode, String)> {
        let own = t
            .live
            .as_ref()
            .map(SyncOptions::of_object)
            .unwrap_or_default();
        if own
            .get("Prune")
            .is_some_and(|v| v.eq_ignore_ascii_case("false"))
        {
            Some((ResultCode::PruneSkipped, "ignored (no prune)".into()))
        } else if !self.req.prune {
            Some((
                ResultCode::PruneSkipped,
                "ignored (requires pruning)".into(),
            ))
        } else {
            None
        }
    }

    async fn run_steps(&mut self, tasks: Vec<PlannedTask>) -> SyncOutcome {
        let (fail_hooks, main): (Vec<PlannedTask>, Vec<PlannedTask>) = tasks
            .into_iter()
            .partition(|t| t.phase == SyncPhase::SyncFail);
        let mut execs: Vec<Exec> = main
            .into_iter()
            .map(|task| Exec {
                task,
                state: State::Pending,
                result: None,
                deleting: false,
            })
            .collect();
        let steps: Vec<(i32, i64)> = {
            let mut s: Vec<(i32, i64)> = execs.iter().map(|e| e.task.step()).collect();
            s.dedup();
            s
        };
        let mut failure: Option<&'static str> = None;
        for (n, step) in steps.iter().enumerate() {
            if self.terminating() {
                return self.terminate(&mut execs).await;
            }
            if n > 0 && !self.ctx.wave_delay.is_zero() {
                self.pause(self.ctx.wave_delay).await;
                if self.terminating() {
                    return self.terminate(&mut execs).await;
                }
            }
            let last = n + 1 == steps.len();
            let in_step: Vec<usize> = (0..execs.len())
                .filter(|&i| execs[i].task.step() == *step)
                .collect();
            if let Some(f) = self.run_step(&mut execs, &in_step, last).await {
                if self.terminating() {
                    return self.terminate(&mut execs).await;
                }
                failure = Some(f);
                break;
            }
            if self.terminating() {
                return self.terminate(&mut execs).await;
            }
        }
        match failure {
            None => self.outcome(
                OperationPhase::Succeeded,
                "successfully synced (all tasks run)",
            ),
            Some(message) => self.run_fail_hooks(fail_hooks, message).await,
        }
    }

    /// Runs one phase/wave; returns the failure message when it failed.
    async fn run_step(
        &mut self,
        execs: &mut [Exec],
        in_step: &[usize],
        last: bool,
    ) -> Option<&'static str> {
        let mut apply_failed = false;
        // Prunes first, as Argo does within a wave.
        let prunes: Vec<usize> = in_step
            .iter()
            .copied()
            .filter(|&i| execs[i].task.is_prune())
            .collect();
        for i in prunes {
            if !self.prune(&mut execs[i]).await {
                apply_failed = true;
            }
            if self.terminating() {
                return None;
            }
        }
        // Hooks whose previous object must go first.
        let hooks: Vec<usize> = in_step
            .iter()
            .copied()
            .filter(|&i| execs[i].task.is_hook())
            .collect();
        for i in hooks {
            if let Err(msg) = self.remove_previous_hook(&mut execs[i]).await {
                let t = execs[i].task.clone();
                let idx = self.record(&t, Some(ResultCode::SyncFailed), msg);
                self.results[idx].hook_phase = Some(OperationPhase::Failed);
                self.results[idx].finished_at = Some(now());
                execs[i].result = Some(idx);
                execs[i].state = State::Failed;
                apply_failed = true;
            }
        }
        for &i in in_step {
            let e = &mut execs[i];
            if e.task.is_prune() || e.state != State::Pending {
                continue;
            }
            let Some(mut desired) = e.task.desired.clone() else {
                continue;
            };
            if e.task.is_hook() {
                add_hook_finalizer(&mut desired);
            }
            let live = if e.task.is_hook() {
                None
            } else {
                e.task.live.clone()
            };
            let task = e.task.clone();
            match write(
                self.ctx.applier,
                &desired,
                live.as_ref(),
                &task.options,
                false,
            )
            .await
            {
                Ok(w) => {
                    let msg = format!("{} {}", kubectl_name(&task.key), w.verb);
                    let idx = self.record(&task, Some(ResultCode::Synced), msg);
                    let e = &mut execs[i];
                    e.result = Some(idx);
                    if task.is_hook() {
                        self.results[idx].hook_phase = Some(OperationPhase::Running);
                        e.state = State::Running;
                    } else if last {
                        // Argo CD: the last wave of plain objects succeeds once applied.
                        self.results[idx].finished_at = Some(now());
                        e.state = State::Succeeded;
                    } else {
                        e.state = State::Running;
                    }
                    if is_crd(&task.key) {
                        // Its custom resources may follow in this very step (a CRD adopts
                        // the wave of its first resource): they need the kind served first.
                        self.report();
                        if let Err(msg) = self.wait_established(&task.key).await {
                            let r = &mut self.results[idx];
                            r.status = Some(ResultCode::SyncFailed);
                            r.message = Some(msg);
                            r.finished_at = Some(now());
                            execs[i].state = State::Failed;
                            self.report();
                            return Some(
                                "one or more synchronization tasks completed unsuccessfully",
                            );
                        }
                        if last {
                            self.results[idx].finished_at = Some(now());
                        }
                    }
                }
                Err(msg) => {
                    let idx = self.record(&task, Some(ResultCode::SyncFailed), msg);
                    self.results[idx].finished_at = Some(now());
                    if task.is_hook() {
                        self.results[idx].hook_phase = Some(OperationPhase::Failed);
                    }
                    let e = &mut execs[i];
                    e.result = Some(idx);
                    e.state = State::Failed;
                    apply_failed = true;
                }
            }
            self.report();
        }
        if apply_failed {
            return Some("one or more objects failed to apply");
        }
        self.wait_for_step(execs, in_step).await
    }

    /// Waits until every running task of the step finished; returns the failure message when
    /// one did not succeed.
    async fn wait_for_step(
        &mut self,
        execs: &mut [Exec],
        in_step: &[usize],
    ) -> Option<&'static str> {
        loop {
            let mut running = Vec::new();
            for &i in in_step {
                if execs[i].state != State::Running {
                    continue;
                }
                self.refresh(&mut execs[i]).await;
                if execs[i].state == State::Running {
                    running.push(i);
                }
            }
            if in_step.iter().any(|&i| execs[i].state == State::Failed) {
                // Other hooks of the step keep running; their results stay Running.
                return Some("one or more synchronization tasks completed unsuccessfully");
            }
            if running.is_empty() {
                return None;
            }
            let first = &execs[running[0]].task;
            let (what, more) = if first.is_hook() {
                ("completion of hook", "hooks")
            } else {
                ("healthy state of", "resources")
            };
            let mut msg = format!("waiting for {what} {}", group_kind_name(&first.key));
            if running.len() > 1 {
                msg.push_str(&format!(" and {} more {more}", running.len() - 1));
            }
            self.set_message(msg);
            self.pause(self.ctx.poll).await;
            if self.terminating() {
                return None;
            }
        }
    }

    /// Looks at a running task's live object and records where it stands.
    async fn refresh(&mut self, e: &mut Exec) {
        let live = match self.ctx.applier.get(&e.task.key).await {
            Ok(l) => l,
            Err(err) => {
                tracing::debug!(key = %e.task.key, "reading a running task: {}", error_text(&err));
                return;
            }
        };
        let key = e.task.key.clone();
        let verdict = if e.task.is_hook() {
            judge_hook(self.ctx.assessor, &key.name, live.as_ref())
        } else {
            judge_resource(
                self.ctx.assessor,
                self.req.health_gate,
                &key.group,
                &key.kind,
                live.as_ref(),
            )
        };
        let Some(idx) = e.result else { return };
        let before = self.results[idx].clone();
        let r = &mut self.results[idx];
        match &verdict {
            Verdict::Running(msg) => {
                if e.task.is_hook() && !msg.is_empty() {
                    r.message = Some(msg.clone());
                }
            }
            Verdict::Succeeded(msg) => {
                e.state = State::Succeeded;
                r.finished_at = Some(now());
                if e.task.is_hook() {
                    r.hook_phase = Some(OperationPhase::Succeeded);
                    if !msg.is_empty() {
                        r.message = Some(msg.clone());
                    }
                }
            }
            Verdict::Failed(msg) => {
                e.state = State::Failed;
                r.finished_at = Some(now());
                if e.task.is_hook() {
                    r.hook_phase = Some(OperationPhase::Failed);
                } else {
                    r.status = Some(ResultCode::SyncFailed);
                }
                r.message = Some(msg.clone());
            }
        }
        if self.results[idx] != before {
            self.report();
        }
        if e.task.is_hook() && e.state != State::Running && live.is_some() {
            self.finish_hook(e).await;
        }
    }

    /// A finished hook: its result is recorded, so the finalizer goes, and the hook is deleted
    /// when its policy says so.
    async fn finish_hook(&mut self, e: &Exec) {
        let Some(desired) = &e.task.desired else {
            return;
        };
        if let Err(msg) = remove_hook_finalizer(self.ctx.applier, &e.task.key).await {
            tracing::warn!(key = %e.task.key, "removing the hook finalizer: {msg}");
        }
        let policies = delete_policies(desired);
        let delete = (e.state == State::Succeeded
            && policies.contains(&DeletePolicy::HookSucceeded))
            || (e.state == State::Failed && policies.contains(&DeletePolicy::HookFailed));
        if delete
            && let Err(err) = self
                .ctx
                .applier
                .delete(&e.task.key, PropagationPolicy::Background)
                .await
        {
            tracing::warn!(key = %e.task.key, "deleting a finished hook: {}", error_text(&err));
        }
    }

    /// Deletes the object a hook left behind last time (`BeforeHookCreation`, the default)
    /// and waits until it is gone.
    async fn remove_previous_hook(&mut self, e: &mut Exec) -> Result<(), String> {
        let Some(desired) = &e.task.desired else {
            return Ok(());
        };
        if !delete_policies(desired).contains(&DeletePolicy::BeforeHookCreation) {
            return Ok(());
        }
        let live = self
            .ctx
            .applier
            .get(&e.task.key)
            .await
            .map_err(|err| error_text(&err))?;
        if live.is_none() {
            return Ok(());
        }
        e.deleting = true;
        self.set_message(format!(
            "waiting for deletion of hook {}",
            group_kind_name(&e.task.key)
        ));
        remove_hook_finalizer(self.ctx.applier, &e.task.key).await?;
        // A terminate request does not wait for the old hook to go.
        let mut control = self.ctx.control.clone();
        let r = tokio::select! {
            r = delete_and_wait(self.ctx.applier, &e.task.key, PropagationPolicy::Foreground) => r,
            _ = control.wait_for(|c| c.terminate) => Err("terminated while the previous hook was being deleted".to_string()),
        };
        e.deleting = false;
        r
    }

    /// Prunes one object; returns false when the deletion failed.
    async fn prune(&mut self, e: &mut Exec) -> bool {
        let task = e.task.clone();
        if let Some((status, message)) = self.prune_verdict(&task) {
            let i = self.record(&task, Some(status), message);
            self.results[i].finished_at = Some(now());
            e.result = Some(i);
            e.state = State::Succeeded;
            self.report();
            return true;
        }
        let confirm = task
            .options
            .get("Prune")
            .is_some_and(|v| v.eq_ignore_ascii_case("confirm"));
        if confirm && !self.ctx.control.borrow().prune_confirmed {
            self.set_message(format!(
                "waiting for pruning confirmation of {}",
                group_kind_name(&task.key)
            ));
            let mut control = self.ctx.control.clone();
            let _ = control.wait_for(|c| c.prune_confirmed || c.terminate).await;
            if self.terminating() {
                return true;
            }
        }
        let policy = propagation(&task.options);
        let (status, message, ok) = match self.ctx.applier.delete(&task.key, policy).await {
            Ok(Deleted::Gone | Deleted::Pending(_) | Deleted::NotFound) => {
                (ResultCode::Pruned, "pruned".to_string(), true)
            }
            Err(err) => (ResultCode::SyncFailed, error_text(&err), false),
        };
        let i = self.record(&task, Some(status), message);
        self.results[i].finished_at = Some(now());
        e.result = Some(i);
        e.state = if ok { State::Succeeded } else { State::Failed };
        self.report();
        ok
    }

    /// A CRD just applied is Established, and discovery knows its kind, before anything after
    /// it (its custom resources in the same wave, or later waves) is applied.
    async fn wait_established(&mut self, crd: &ResourceKey) -> Result<(), String> {
        self.set_message(format!(
            "waiting for {} to be established",
            group_kind_name(crd)
        ));
        let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
        loop {
            let live = self
                .ctx
                .applier
                .get(crd)
                .await
                .map_err(|e| error_text(&e))?;
            let established = live
                .as_ref()
                .and_then(|l| l.pointer("/status/conditions"))
                .and_then(Value::as_array)
                .is_some_and(|cs| {
                    cs.iter().any(|c| {
                        c.get("type").and_then(Value::as_str) == Some("Established")
                            && c.get("status").and_then(Value::as_str) == Some("True")
                    })
                });
            if established {
                self.ctx
                    .applier
                    .discovery()
                    .refresh()
                    .await
                    .map_err(|e| error_text(&e))?;
                return Ok(());
            }
            if tokio::time::Instant::now() >= deadline || self.terminating() {
                return Err(format!(
                    "{} was not established within 120s",
                    group_kind_name(crd)
                ));
            }
            self.pause(Duration::from_millis(250)).await;
        }
    }

    /// Runs the SyncFail hooks after a failure, then fails the operation with `message`.
    async fn run_fail_hooks(
        &mut self,
        hooks: Vec<PlannedTask>,
        message: &'static str,
    ) -> SyncOutcome {
        if !hooks.is_empty() && !self.terminating() {
            let mut execs: Vec<Exec> = hooks
                .into_iter()
                .map(|task| Exec {
                    task,
                    state: State::Pending,
                    result: None,
                    deleting: false,
                })
                .collect();
            let steps: Vec<(i32, i64)> = {
                let mut s: Vec<(i32, i64)> = execs.iter().map(|e| e.task.step()).collect();
                s.dedup();
                s
            };
            for step in steps {
                let in_step: Vec<usize> = (0..execs.len())
                    .filter(|&i| execs[i].task.step() == step)
                    .collect();
                if self.run_step(&mut execs, &in_step, false).await.is_some() || self.terminating()
                {
                    break;
                }
            }
        }
        self.outcome(OperationPhase::Failed, message)
    }

    /// Stops: running hooks are deleted (their finalizer removed), the operation fails with
    /// Argo CD's `Operation terminated`.
    async fn terminate(&mut self, execs: &mut [Exec]) -> SyncOutcome {
        let mut errors = false;
        // Running hooks are stopped; applied objects waiting to be healthy keep their result
        // (they were applied, and nothing stops them), as in Argo CD.
        for e in execs
            .iter_mut()
            .filter(|e| e.state == State::Running && e.task.is_hook())
        {
            if let Err(msg) = remove_hook_finalizer(self.ctx.applier, &e.task.key).await {
                tracing::warn!(key = %e.task.key, "terminating a hook: {msg}");
            }
            let message = match self
                .ctx
                .applier
                .delete(&e.task.key, PropagationPolicy::Background)
                .await
            {
                Ok(_) => "Terminated".to_string(),
                Err(err) => {
                    errors = true;
                    format!("Failed to delete: {}", error_text(&err))
                }
            };
            if let Some(idx) = e.result {
                let r = &mut self.results[idx];
                r.hook_phase = Some(OperationPhase::Failed);
                r.message = Some(message);
                r.finished_at = Some(now());
            }
            e.state = State::Failed;
        }
        let (phase, message) = if errors {
            (OperationPhase::Error, "Operation termination had errors")
        } else {
            (OperationPhase::Failed, "Operation terminated")
        };
        let mut out = self.outcome(phase, message);
        out.terminated = true;
        out
    }
}

fn is_crd(key: &ResourceKey) -> bool {
    key.group == "apiextensions.k8s.io" && key.kind == "CustomResourceDefinition"
}

fn propagation(options: &SyncOptions) -> PropagationPolicy {
    match options
        .get("PrunePropagationPolicy")
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("background") => PropagationPolicy::Background,
        Some("orphan") => PropagationPolicy::Orphan,
        _ => PropagationPolicy::Foreground,
    }
}

fn add_hook_finalizer(obj: &mut Value) {
    if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        let list = meta.entry("finalizers").or_insert_with(|| json!([]));
        if let Some(list) = list.as_array_mut()
            && !list.iter().any(|f| f == HOOK_FINALIZER)
        {
            list.push(Value::String(HOOK_FINALIZER.into()));
        }
    }
}

async fn remove_hook_finalizer(applier: &Applier, key: &ResourceKey) -> Result<(), String> {
    let Some(live) = applier.get(key).await.map_err(|e| error_text(&e))? else {
        return Ok(());
    };
    let finalizers: Vec<Value> = live
        .pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if !finalizers.iter().any(|f| f == HOOK_FINALIZER) {
        return Ok(());
    }
    let kept: Vec<Value> = finalizers
        .into_iter()
        .filter(|f| f != HOOK_FINALIZER)
        .collect();
    // The resourceVersion makes this a compare-and-swap: a finalizer another controller added
    // in between is never dropped.
    let patch = json!({"metadata": {"finalizers": kept, "resourceVersion": live.pointer("/metadata/resourceVersion")}});
    applier
        .merge_patch(key, &patch)
        .await
        .map(|_| ())
        .map_err(|e| error_text(&e))
}
