//! Running one sync operation to its end, step by step as Argo CD's sync engine does:
//! check every task (and the namespace to create) against the project, create the namespace,
//! dry-run every task, then for each phase and wave in order
//! prune, (re)create hooks, apply, wait for CRDs to be served, and wait for the wave to work
//! (hooks completed, objects healthy) before the next starts. A failure runs the SyncFail hooks.
//! Progress is reported after every change; a terminate request stops the work between steps
//! and deletes running hooks.
//!
//! This file holds the request and result types and the step loop; the parts of a step live
//! beside it: `prepare` (namespace, validity, dry run), `prune`, `hooks`, `crd`.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;

use plumb_health::{Assessor, ClusterFacts};
use plumb_kube::{Applier, Deleted, PropagationPolicy};
use plumb_model::ResourceKey;
use plumb_model::application::{OperationPhase, ResourceResult, ResultCode, SyncPhase};
use serde_json::{Value, json};
use tokio::sync::watch;

use crate::gate::{HealthGate, Judge, Running, Verdict};
use crate::hook::{DeletePolicy, delete_policies};
use crate::options::SyncOptions;
use crate::plan::{PlanInput, PlannedTask, plan};
use crate::task::{SyncTask, TaskSelection};
use crate::write::{delete_and_wait, error_text, kubectl_name, write};

/// Applies one task (a hook is always created anew).
async fn write_task(
    applier: &Applier,
    task: &PlannedTask,
    desired: &Value,
) -> Result<crate::write::Written, String> {
    let live = if task.is_hook() {
        None
    } else {
        task.live.as_ref()
    };
    write(applier, desired, live, &task.options, false).await
}

/// Writes of one kind a step has in flight at once (Argo CD runs them all together).
const WRITES_IN_FLIGHT: usize = 16;
/// Dry runs in flight at once before a sync.
const DRY_RUNS_IN_FLIGHT: usize = 16;

mod crd;
mod hook_finalizer;
mod hooks;
mod prepare;
mod prune;

use hook_finalizer::{add_hook_finalizer, remove_hook_finalizer};

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
    /// The Application's name, for brake messages.
    pub app_name: String,
    /// `namespace/name`, as Argo CD names this Application in shared-resource messages.
    pub qualified_name: String,
    /// The brake on mass deletion (automated operations; none: no limit).
    pub prune_brake: Option<PruneBrake>,
}

/// The brake on mass deletion for one operation: the limits, and how many live objects the
/// Application has (the fraction's denominator).
#[derive(Debug, Clone, PartialEq)]
pub struct PruneBrake {
    /// The limits in force.
    pub brake: plumb_policy::brake::Brake,
    /// Live objects the Application manages (hooks not counted).
    pub live_objects: usize,
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

/// Called with each applied object's key, the desired object written and the stored answer.
pub type OnApplied<'a> = dyn Fn(&ResourceKey, &Value, &Value) + Send + Sync + 'a;

/// The world a sync runs in.
pub struct SyncContext<'a> {
    /// Writes to the destination cluster.
    pub applier: &'a Applier,
    /// Judges hooks and gated waves (owned, cheap to clone: the judgements run on the blocking
    /// pool).
    pub assessor: Assessor,
    /// What the assessor may know about the destination cluster (which kinds have a status
    /// subresource), so that a custom resource its controller has not given a status yet holds
    /// the next wave. `None`: no such knowledge, the rule stays silent.
    pub facts: Option<Arc<dyn ClusterFacts + Send + Sync>>,
    /// Receives progress.
    pub progress: &'a (dyn Fn(&Progress) + Send + Sync),
    /// Receives each object the sync applied (not hooks): its key, the desired object written
    /// and the object as the API server stored it (see `Written::stored`).
    pub applied: Option<&'a OnApplied<'a>>,
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
    /// Whether the brake on mass deletion stopped it before any write (never retried: the
    /// same comparison would stop it again).
    pub braked: bool,
}

impl SyncOutcome {
    /// An operation that ended in `Error` before touching anything (its comparison or
    /// preparation failed, or it was refused), with Argo's operation `message`.
    pub fn error(message: String) -> Self {
        Self {
            phase: OperationPhase::Error,
            message,
            results: Vec::new(),
            terminated: false,
            braked: false,
        }
    }
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
}

/// The tasks as pending executions, and the indexes of each step's tasks in order (the tasks
/// come sorted by step from the plan).
fn schedule(tasks: Vec<PlannedTask>) -> (Vec<Exec>, Vec<Vec<usize>>) {
    let execs: Vec<Exec> = tasks
        .into_iter()
        .map(|task| Exec {
            task,
            state: State::Pending,
            result: None,
        })
        .collect();
    let mut steps: Vec<Vec<usize>> = Vec::new();
    for (i, e) in execs.iter().enumerate() {
        match steps.last_mut() {
            Some(step) if execs[step[0]].task.step() == e.task.step() => step.push(i),
            _ => steps.push(vec![i]),
        }
    }
    (execs, steps)
}

struct Run<'a, 'b> {
    ctx: &'b SyncContext<'a>,
    req: SyncRequest,
    results: Vec<ResourceResult>,
    message: String,
    /// kubectl verbs of the dry run, by task (a dry-run sync reports them).
    dry_verbs: Vec<(ResourceKey, &'static str)>,
    /// More than one phase or wave (Argo's `multiStep`): only then do applied objects that are
    /// not yet healthy hold the operation.
    multi_step: bool,
    /// A dry-run sync's namespace that `CreateNamespace=true` would create: it does not exist,
    /// so its objects cannot be dry-run on the API server.
    namespace_not_created: Option<String>,
}

fn now() -> String {
    jiff::Timestamp::now()
        .round(jiff::Unit::Millisecond)
        .unwrap_or_else(|_| jiff::Timestamp::now())
        .to_string()
}

fn is_crd(key: &ResourceKey) -> bool {
    key.group == "apiextensions.k8s.io" && key.kind == "CustomResourceDefinition"
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
        multi_step: false,
        namespace_not_created: None,
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
            braked: false,
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
        let tasks = plan(PlanInput {
            tasks: std::mem::take(&mut self.req.tasks),
            selection: self.req.selection.clone(),
            options: self.req.options.clone(),
            hooks: self.req.hooks,
            revision: self.req.revision.clone(),
            started_unix: self.req.started_unix,
        });
        let tasks: Vec<PlannedTask> = tasks
            .into_iter()
            .map(|mut t| {
                if self.req.force {
                    t.options = t.options.merged(&SyncOptions::parse(["Force=true"]));
                }
                t
            })
            .collect();
        // Every object the sync writes (the namespace it creates, hooks, objects to prune) is
        // checked against the project before the first write.
        if let Some(failed) = self.validate(&tasks) {
            return failed;
        }
        if let Some(stopped) = self.brake(&tasks) {
            return stopped;
        }
        if let Some(failed) = self.create_namespace().await {
            return failed;
        }
        if let Some(failed) = self.dry_run_all(&tasks).await {
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

    async fn run_steps(&mut self, tasks: Vec<PlannedTask>) -> SyncOutcome {
        let (fail_hooks, main): (Vec<PlannedTask>, Vec<PlannedTask>) = tasks
            .into_iter()
            .partition(|t| t.phase == SyncPhase::SyncFail);
        let (mut execs, steps) = schedule(main);
        // Argo counts the SyncFail phase too when it decides whether a sync has several steps.
        self.multi_step = steps.len() > 1 || !fail_hooks.is_empty();
        let mut failure: Option<&'static str> = None;
        for (n, in_step) in steps.iter().enumerate() {
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
            if let Some(f) = self.run_step(&mut execs, in_step, last).await {
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
        // Argo CD ends a sync whose last step holds no hook right after applying it ("all tasks
        // run"); otherwise a later look finds nothing left to do ("no more tasks").
        let last_has_hooks = steps
            .last()
            .is_some_and(|s| s.iter().any(|&i| execs[i].task.is_hook()));
        match failure {
            None if last_has_hooks => self.outcome(
                OperationPhase::Succeeded,
                "successfully synced (no more tasks)",
            ),
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
        // Argo CD ends the operation right after applying a last step of plain objects; a last
        // step with hooks goes on until they complete.
        let ends_when_applied = last && hooks.is_empty();
        for i in hooks {
            if let Err(msg) = self.remove_previous_hook(&execs[i]).await {
                let t = execs[i].task.clone();
                let idx = self.record(&t, Some(ResultCode::SyncFailed), msg);
                self.results[idx].hook_phase = Some(OperationPhase::Failed);
                self.results[idx].finished_at = Some(now());
                execs[i].result = Some(idx);
                execs[i].state = State::Failed;
                apply_failed = true;
            }
        }
        match self
            .apply_step(execs, in_step, last, ends_when_applied)
            .await
        {
            Err(message) => return Some(message),
            Ok(failed) => apply_failed |= failed,
        }
        if apply_failed {
            return Some("one or more objects failed to apply");
        }
        self.wait_for_step(execs, in_step).await
    }

    /// The step's applies, as Argo CD runs them: kind after kind in the planned order, the tasks
    /// of one kind together (at most [`WRITES_IN_FLIGHT`] at once), their results recorded in
    /// that order. `Ok(true)` when an apply failed; `Err` when a CRD never became established
    /// (nothing after it is applied).
    async fn apply_step(
        &mut self,
        execs: &mut [Exec],
        in_step: &[usize],
        last: bool,
        ends_when_applied: bool,
    ) -> Result<bool, &'static str> {
        let pending: Vec<usize> = in_step
            .iter()
            .copied()
            .filter(|&i| {
                let e = &execs[i];
                !e.task.is_prune() && e.state == State::Pending && e.task.desired.is_some()
            })
            .collect();
        let same_kind = |a: usize, b: usize| {
            let (a, b) = (&execs[a].task.key, &execs[b].task.key);
            a.group == b.group && a.kind == b.kind
        };
        let groups: Vec<Vec<usize>> = pending
            .chunk_by(|&a, &b| same_kind(a, b))
            .map(<[usize]>::to_vec)
            .collect();
        let mut failed = false;
        for group in groups {
            let writes: Vec<(PlannedTask, Value)> = group
                .iter()
                .map(|&i| {
                    let task = execs[i].task.clone();
                    let mut desired = task.desired.clone().unwrap_or(Value::Null);
                    if task.is_hook() {
                        add_hook_finalizer(&mut desired);
                    }
                    (task, desired)
                })
                .collect();
            let applier = self.ctx.applier;
            let futures: Vec<_> = writes
                .iter()
                .map(|(task, desired)| write_task(applier, task, desired))
                .collect();
            let answers: Vec<Result<crate::write::Written, String>> =
                futures::stream::iter(futures)
                    .buffered(WRITES_IN_FLIGHT)
                    .collect()
                    .await;
            for ((&i, (task, desired)), answer) in group.iter().zip(writes).zip(answers) {
                match answer {
                    Ok(w) => {
                        self.record_applied(&mut execs[i], &task, &desired, &w, ends_when_applied);
                        if is_crd(&task.key) {
                            self.await_crd(&mut execs[i], &task, last).await?;
                        }
                    }
                    Err(msg) => {
                        let idx = self.record(&task, Some(ResultCode::SyncFailed), msg);
                        self.results[idx].finished_at = Some(now());
                        self.results[idx].hook_phase = Some(OperationPhase::Failed);
                        execs[i].result = Some(idx);
                        execs[i].state = State::Failed;
                        failed = true;
                    }
                }
                self.report();
            }
        }
        Ok(failed)
    }

    /// Records a successful apply of `task`.
    fn record_applied(
        &mut self,
        e: &mut Exec,
        task: &PlannedTask,
        desired: &Value,
        w: &crate::write::Written,
        ends_when_applied: bool,
    ) {
        if let (Some(applied), Some(stored), false) =
            (self.ctx.applied, w.stored.as_ref(), task.is_hook())
        {
            applied(&task.key, desired, stored);
        }
        let msg = format!("{} {}", kubectl_name(&task.key), w.verb);
        let idx = self.record(task, Some(ResultCode::Synced), msg);
        e.result = Some(idx);
        // Argo CD: an applied object is `Running` until its health is looked at (before the
        // next step); the last step's objects stay `Running`.
        self.results[idx].hook_phase = Some(OperationPhase::Running);
        if !task.is_hook() && ends_when_applied {
            self.results[idx].finished_at = Some(now());
            e.state = State::Succeeded;
        } else {
            e.state = State::Running;
        }
    }

    /// Waits until an applied CRD is established: its custom resources may follow in this very
    /// step (a CRD adopts the wave of its first resource) and need the kind served first.
    async fn await_crd(
        &mut self,
        e: &mut Exec,
        task: &PlannedTask,
        last: bool,
    ) -> Result<(), &'static str> {
        let Some(idx) = e.result else {
            return Ok(());
        };
        self.report();
        if let Err(msg) = self.wait_established(&task.key).await {
            let r = &mut self.results[idx];
            r.status = Some(ResultCode::SyncFailed);
            r.hook_phase = Some(OperationPhase::Failed);
            r.message = Some(msg);
            r.finished_at = Some(now());
            e.state = State::Failed;
            self.report();
            return Err("one or more synchronization tasks completed unsuccessfully");
        }
        if last {
            self.results[idx].finished_at = Some(now());
        }
        Ok(())
    }

    /// Waits until every running task of the step finished; returns the failure message when
    /// one did not succeed.
    async fn wait_for_step(
        &mut self,
        execs: &mut [Exec],
        in_step: &[usize],
    ) -> Option<&'static str> {
        loop {
            self.refresh(execs, in_step).await;
            let running: Vec<usize> = in_step
                .iter()
                .copied()
                // In a single-step sync only hooks hold the operation (Argo CD); the objects
                // beside them are still looked at, and succeed once healthy.
                .filter(|&i| {
                    execs[i].state == State::Running && (self.multi_step || execs[i].task.is_hook())
                })
                .collect();
            if in_step.iter().any(|&i| execs[i].state == State::Failed) {
                // Other hooks of the step keep running; their results stay Running.
                return Some("one or more synchronization tasks completed unsuccessfully");
            }
            if running.is_empty() {
                for &i in in_step {
                    if execs[i].state == State::Running {
                        // Done waiting; the result stays `Running`, as Argo CD leaves it.
                        execs[i].state = State::Succeeded;
                    }
                }
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

    /// Looks at the step's running tasks' live objects and records where each stands. The
    /// reads are I/O and stay on this task; the judgements (health rules, user Lua scripts) go
    /// to the blocking pool in one batch.
    async fn refresh(&mut self, execs: &mut [Exec], in_step: &[usize]) {
        let mut batch = Vec::new();
        let mut indexes = Vec::new();
        for &i in in_step {
            let e = &execs[i];
            if e.state != State::Running {
                continue;
            }
            match self.ctx.applier.get(&e.task.key).await {
                Ok(live) => {
                    indexes.push((i, live.is_some()));
                    batch.push(Running {
                        hook: e.task.is_hook(),
                        key: e.task.key.clone(),
                        live,
                    });
                }
                Err(err) => {
                    tracing::debug!(key = %e.task.key, "reading a running task: {}", error_text(&err));
                }
            }
        }
        if batch.is_empty() {
            return;
        }
        let judge = Judge {
            assessor: self.ctx.assessor.clone(),
            gate: self.req.health_gate,
            facts: self.ctx.facts.clone(),
        };
        let verdicts: Vec<Verdict> = match judge.judge_all(batch).await {
            Ok(verdicts) => verdicts,
            // Nothing could be judged: this sync fails with the reason, the controller goes on.
            Err(msg) => {
                tracing::error!("{msg}");
                let failed = Verdict::Failed(msg);
                indexes.iter().map(|_| failed.clone()).collect()
            }
        };
        for ((i, exists), verdict) in indexes.into_iter().zip(verdicts) {
            let e = &mut execs[i];
            self.record_verdict(e, &verdict);
            if e.task.is_hook() && e.state != State::Running && exists {
                self.finish_hook(e).await;
            }
        }
    }

    /// Records a running task's verdict in its state and result.
    fn record_verdict(&mut self, e: &mut Exec, verdict: &Verdict) {
        let Some(idx) = e.result else { return };
        let before = self.results[idx].clone();
        let r = &mut self.results[idx];
        match verdict {
            Verdict::Running(msg) => {
                if e.task.is_hook() && !msg.is_empty() {
                    r.message = Some(msg.clone());
                }
            }
            Verdict::Succeeded(msg) => {
                e.state = State::Succeeded;
                r.finished_at = Some(now());
                r.hook_phase = Some(OperationPhase::Succeeded);
                if e.task.is_hook() && !msg.is_empty() {
                    r.message = Some(msg.clone());
                }
            }
            Verdict::Failed(msg) => {
                // An applied object that turned Degraded keeps its `Synced` result (the apply
                // worked); its phase says it failed, as in Argo CD.
                e.state = State::Failed;
                r.finished_at = Some(now());
                r.hook_phase = Some(OperationPhase::Failed);
                r.message = Some(msg.clone());
            }
        }
        if self.results[idx] != before {
            self.report();
        }
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
