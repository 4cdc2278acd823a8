//! Before any change: the validity of every task (project rules, the namespace to create
//! included; `FailOnSharedResource`), the namespace (`CreateNamespace=true`), and the dry run of
//! every task; a dry-run sync ends here.

use super::*;

impl Run<'_, '_> {
    pub(super) async fn create_namespace(&mut self) -> Option<SyncOutcome> {
        let ns = self.req.create_namespace.clone()?;
        let task = namespace_task(&ns);
        let key = task.key.clone();
        let live = self.ctx.applier.get(&key).await.ok().flatten();
        if live.is_some() && ns.labels.is_empty() && ns.annotations.is_empty() {
            return None;
        }
        let body = task.desired.clone().unwrap_or(Value::Null);
        let r = if self.req.dry_run {
            self.ctx.applier.dry_run_apply(&body).await.map(|_| ())
        } else {
            self.ctx
                .applier
                .apply(&body, live.as_ref())
                .await
                .map(|_| ())
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
        if self.req.dry_run && live.is_none() && !failed {
            self.namespace_not_created = Some(ns.name.clone());
        }
        let i = self.record(&task, Some(status), message);
        self.results[i].finished_at = Some(now());
        // Argo CD creates the namespace as a task of its own: `Running` once applied
        // (`Succeeded` in a dry run).
        self.results[i].hook_phase = Some(if failed {
            OperationPhase::Failed
        } else if self.req.dry_run {
            OperationPhase::Succeeded
        } else {
            OperationPhase::Running
        });
        self.report();
        failed.then(|| {
            self.outcome(
                OperationPhase::Failed,
                "one or more objects failed to apply",
            )
        })
    }

    /// Tasks that must not run at all: forbidden by the project (the namespace of
    /// `CreateNamespace=true` included, with its `managedNamespaceMetadata`), or shared with
    /// another Application under `FailOnSharedResource=true`.
    pub(super) fn validate(&mut self, tasks: &[PlannedTask]) -> Option<SyncOutcome> {
        let catalog = self.ctx.applier.discovery().catalog();
        let mut invalid = Vec::new();
        let namespace = self.req.create_namespace.as_ref().map(namespace_task);
        for t in namespace.iter().chain(tasks) {
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
                    t.key.kind, t.key.name, self.req.qualified_name
                );
                return Some(self.fail_tasks(vec![(t.clone(), msg.clone())], &msg, None));
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
        // Argo CD records tasks refused before the sync without a phase.
        Some(self.fail_tasks(
            invalid,
            &format!("one or more synchronization tasks are not valid: {summary}"),
            None,
        ))
    }

    pub(super) fn fail_tasks(
        &mut self,
        failed: Vec<(PlannedTask, String)>,
        message: &str,
        phase: Option<OperationPhase>,
    ) -> SyncOutcome {
        for (t, msg) in failed {
            let i = self.record(&t, Some(ResultCode::SyncFailed), msg);
            self.results[i].finished_at = Some(now());
            self.results[i].hook_phase = phase;
        }
        self.outcome(OperationPhase::Failed, message)
    }

    /// Every object is dry-run before anything changes; one failure fails the sync. Custom
    /// resources whose CRD is part of this sync (or `SkipDryRunOnMissingResource=true`) skip
    /// the dry run when their kind is not served yet. The dry runs change nothing, so they are
    /// asked together (at most [`DRY_RUNS_IN_FLIGHT`] at once) and read in the tasks' order.
    pub(super) async fn dry_run_all(&mut self, tasks: &[PlannedTask]) -> Option<SyncOutcome> {
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
        // A dry-run sync does not create the namespace, and the API server refuses a dry run
        // into a namespace that does not exist; Argo CD's dry-run sync (a client-side dry run)
        // passes such objects, and so does Plumb.
        let (checked, passed): (Vec<&PlannedTask>, Vec<&PlannedTask>) =
            tasks.iter().filter(|t| t.desired.is_some()).partition(|t| {
                self.namespace_not_created
                    .as_ref()
                    .is_none_or(|ns| *ns != t.key.namespace)
            });
        for t in passed {
            self.dry_verbs.push((t.key.clone(), "created"));
        }
        let futures: Vec<_> = checked.iter().map(|t| self.dry_run_task(t)).collect();
        let answers: Vec<Result<Option<&'static str>, String>> = futures::stream::iter(futures)
            .buffered(DRY_RUNS_IN_FLIGHT)
            .collect()
            .await;
        let mut failed = Vec::new();
        for (t, answer) in checked.into_iter().zip(answers) {
            match answer {
                Ok(Some(verb)) => self.dry_verbs.push((t.key.clone(), verb)),
                Ok(None) => {}
                Err(msg) => {
                    let missing_kind = msg.contains("kind not served by the API server");
                    let crd_here = crd_kinds.contains(&(t.key.group.clone(), t.key.kind.clone()));
                    if missing_kind
                        && (crd_here || t.options.is_true("SkipDryRunOnMissingResource"))
                    {
                        continue;
                    }
                    failed.push((t.clone(), msg));
                }
            }
        }
        if failed.is_empty() {
            None
        } else {
            Some(self.fail_tasks(
                failed,
                "one or more objects failed to apply (dry run)",
                Some(OperationPhase::Failed),
            ))
        }
    }

    /// One task's dry run: the verb it would take (none for a hook).
    async fn dry_run_task(&self, t: &PlannedTask) -> Result<Option<&'static str>, String> {
        let desired = t.desired.as_ref().unwrap_or(&Value::Null);
        if t.is_hook() {
            self.dry_run_hook(desired).await.map(|()| None)
        } else {
            write(self.ctx.applier, desired, t.live.as_ref(), &t.options, true)
                .await
                .map(|w| Some(w.verb))
        }
    }

    /// A hook is created anew each time; its dry run must not collide with the previous run's
    /// object, which is deleted before the hook is created.
    pub(super) async fn dry_run_hook(&self, desired: &Value) -> Result<(), String> {
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

    pub(super) fn finish_dry_run(&mut self, tasks: &[PlannedTask]) -> SyncOutcome {
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
            // Argo CD: in a dry run, whatever passed has done all a dry run does.
            self.results[i].hook_phase = Some(OperationPhase::Succeeded);
        }
        // Argo CD's dry run completes every task in its dry-run pass, so its wet pass finds
        // none left (checked against Argo CD 3.6 by the conformance harness).
        self.outcome(
            OperationPhase::Succeeded,
            "successfully synced (no more tasks)",
        )
    }
}

/// The Namespace `CreateNamespace=true` writes, with `managedNamespaceMetadata`, as a task (so
/// that the project judges it like any other object).
fn namespace_task(ns: &NamespaceToCreate) -> PlannedTask {
    let mut annotations = ns.annotations.clone();
    if !ns.labels.is_empty() || !ns.annotations.is_empty() {
        // Argo CD marks a namespace with managed metadata for server-side apply, so that its
        // later syncs keep the metadata exact; written too, so that either engine can take over.
        annotations.insert(
            "argocd.argoproj.io/sync-options".into(),
            "ServerSideApply=true".into(),
        );
    }
    let body = json!({
        "apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": ns.name, "labels": ns.labels, "annotations": annotations},
    });
    PlannedTask {
        key: ResourceKey::new("", "Namespace", "", &ns.name),
        version: "v1".into(),
        desired: Some(body),
        live: None,
        phase: SyncPhase::PreSync,
        wave: 0,
        hook: None,
        options: SyncOptions::default(),
        shared_with: None,
    }
}
